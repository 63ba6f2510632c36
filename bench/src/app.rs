//! What every baseline operation shares: the app (its pool and the API
//! keys, checked in memory), the answers it sends, and query parsing.

use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;
use sha2::{Digest, Sha256};
use sqlx::{Any, AnyPool, Row, Transaction};
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

/// A key's answer (201), stored in the transaction of the work it answers:
/// a key already used fails it as a unique violation.
pub async fn store_answer(tx: &mut Transaction<'static, Any>, org: &str, key: (&str, &str, &str), now: &str) -> sqlx::Result<()> {
    let (idempotency_key, fingerprint, answer) = key;
    sqlx::query(
        "INSERT INTO idempotency_keys (org_id, idempotency_key, fingerprint, status, headers, body, created_at)
         VALUES ($1, $2, $3, 201, '[]', $4, $5)",
    )
    .bind(org)
    .bind(idempotency_key)
    .bind(fingerprint)
    .bind(answer)
    .bind(now)
    .execute(&mut **tx)
    .await
    .map(drop)
}

/// A change's event in the outbox, in the transaction of the change, as
/// a service that sends webhooks records it.
pub async fn record_event(tx: &mut Transaction<'static, Any>, org: &str, event_type: &str, data: &str, now: &str) -> sqlx::Result<()> {
    sqlx::query("INSERT INTO events (id, org_id, event_type, occurred_at, data) VALUES ($1, $2, $3, $4, $5)")
        .bind(uuid::Uuid::now_v7().to_string())
        .bind(org)
        .bind(event_type)
        .bind(now)
        .bind(data)
        .execute(&mut **tx)
        .await
        .map(drop)
}

/// The answer stored for a key (status, body), if it was used.
pub async fn stored_answer(pool: &AnyPool, org: &str, key: &str) -> sqlx::Result<Option<(i64, String)>> {
    let row =
        sqlx::query("SELECT status, body FROM idempotency_keys WHERE org_id = $1 AND idempotency_key = $2").bind(org).bind(key).fetch_optional(pool).await?;
    row.map(|r| Ok((r.try_get("status")?, r.try_get("body")?))).transpose()
}
