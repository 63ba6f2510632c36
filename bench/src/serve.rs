//! The baseline server: what a plain hand-written axum + sqlx service does
//! for the bench's work over Switchboard's own database and schema (SQLite
//! or PostgreSQL), so Switchboard's figures can be read as "how far from the
//! least this work costs on this machine". Keys are checked in memory, a
//! read is one query, a write one transaction. The operations are in
//! `customers.rs` and `orders.rs`.

use crate::{customers, orders};
use anyhow::{Context, Result};
use axum::Router;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::json;
use sha2::{Digest, Sha256};
use sqlx::any::AnyPoolOptions;
use sqlx::{AnyPool, Row};
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;

/// Connections in the pool: what a hand-written service on a small
/// machine would pick, not tuned to win.
const POOL_SIZE: u32 = 8;

pub struct App {
    pub pool: AnyPool,
    /// hex SHA-256 of a key's secret -> its organisation, loaded at start
    keys: HashMap<String, String>,
}

pub async fn run(url: &str, listen: SocketAddr) -> Result<()> {
    sqlx::any::install_default_drivers();
    let mut options = AnyPoolOptions::new().max_connections(POOL_SIZE);
    if url.starts_with("sqlite:") {
        // the file is in WAL mode already (Switchboard made it); these are
        // per connection, as a careful SQLite service sets them
        options = options.after_connect(|conn, _| {
            Box::pin(async move {
                for pragma in ["PRAGMA foreign_keys = ON", "PRAGMA synchronous = NORMAL", "PRAGMA busy_timeout = 5000"] {
                    sqlx::query(pragma).execute(&mut *conn).await?;
                }
                Ok(())
            })
        });
    }
    let pool = options.connect(url).await.with_context(|| format!("database {}", url.split('@').next_back().unwrap_or(url)))?;
    let keys = sqlx::query("SELECT key_hash, org_id FROM api_keys WHERE revoked_at IS NULL")
        .fetch_all(&pool)
        .await?
        .iter()
        .map(|r| Ok((r.try_get("key_hash")?, r.try_get("org_id")?)))
        .collect::<Result<_, sqlx::Error>>()?;
    let app = Arc::new(App { pool, keys });
    let router = Router::new()
        .route("/customers", get(customers::list).post(customers::create))
        .route("/customers/{id}", get(customers::view))
        .route("/orders", post(orders::create))
        .route("/orders/{id}/submit", post(orders::submit))
        .with_state(app);
    let listener = tokio::net::TcpListener::bind(listen).await?;
    println!("baseline listening on {}", listener.local_addr()?);
    axum::serve(listener, router).await?;
    Ok(())
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
