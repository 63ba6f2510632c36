//! What every baseline operation shares: the app (its pool and the API
//! keys, checked in memory), the answers it sends, and query parsing.

use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;
use sha2::{Digest, Sha256};
use sqlx::AnyPool;
use std::collections::HashMap;

pub struct App {
    pub pool: AnyPool,
    /// hex SHA-256 of a key's secret -> its organisation, loaded at start
    pub keys: HashMap<String, String>,
}

impl App {
    /// The organisation of the request's `X-Api-Key`.
    pub fn organisation(&self, headers: &HeaderMap) -> Option<&str> {
        let secret = headers.get("x-api-key")?.to_str().ok()?;
        self.keys.get(&hex::encode(Sha256::digest(secret.as_bytes()))).map(String::as_str)
    }
}

pub fn error(status: StatusCode, message: impl std::fmt::Display) -> Response {
    (status, axum::Json(json!({ "message": message.to_string() }))).into_response()
}

pub fn json_text(status: StatusCode, body: String) -> Response {
    (status, [(header::CONTENT_TYPE, HeaderValue::from_static("application/json"))], body).into_response()
}

/// A stored answer to an idempotency key, sent again and marked so.
pub fn replay((status, body): (i64, String)) -> Response {
    let status = u16::try_from(status).ok().and_then(|s| StatusCode::from_u16(s).ok()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut response = json_text(status, body);
    response.headers_mut().insert("idempotent-replayed", HeaderValue::from_static("true"));
    response
}

/// `name`'s value in a query string (no percent-decoding: the bench's
/// cursors and limits need none).
pub fn query_value<'q>(query: Option<&'q str>, name: &str) -> Option<&'q str> {
    query?.split('&').find_map(|pair| pair.split_once('=').filter(|(k, _)| *k == name).map(|(_, v)| v))
}
