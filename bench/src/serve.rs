//! The baseline server: what a plain hand-written axum + sqlx service does
//! for one read and one idempotent write over Switchboard's SQLite file and
//! schema, so Switchboard's figures can be read as "how far from the least
//! this work costs on this machine". Keys are checked in memory, a read is
//! one query, a write one transaction.

use anyhow::{Context, Result};
use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use sqlx::Row;
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteRow, SqliteSynchronous};
use std::collections::HashMap;
use std::net::SocketAddr;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

/// Connections in the pool: what a hand-written service on a small
/// machine would pick, not tuned to win.
const POOL_SIZE: u32 = 8;

struct App {
    pool: SqlitePool,
    /// hex SHA-256 of a key's secret -> its organisation, loaded at start
    keys: HashMap<String, String>,
}

pub async fn run(url: &str, listen: SocketAddr) -> Result<()> {
    let options = SqliteConnectOptions::from_str(url)
        .with_context(|| format!("database URL {url}"))?
        .journal_mode(SqliteJournalMode::Wal)
        .synchronous(SqliteSynchronous::Normal)
        .busy_timeout(Duration::from_secs(5))
        .foreign_keys(true);
    let pool = SqlitePoolOptions::new().max_connections(POOL_SIZE).connect_with(options).await?;
    let keys = sqlx::query("SELECT key_hash, org_id FROM api_keys WHERE revoked_at IS NULL")
        .fetch_all(&pool)
        .await?
        .iter()
        .map(|r| Ok((r.try_get("key_hash")?, r.try_get("org_id")?)))
        .collect::<Result<_, sqlx::Error>>()?;
    let app = Arc::new(App { pool, keys });
    let router = Router::new()
        .route("/customers", post(customer_create))
        .route("/customers/{id}", get(customer_view))
        .with_state(app);
    let listener = tokio::net::TcpListener::bind(listen).await?;
    println!("baseline listening on {}", listener.local_addr()?);
    axum::serve(listener, router).await?;
    Ok(())
}

impl App {
    fn organisation(&self, headers: &HeaderMap) -> Option<&str> {
        let secret = headers.get("x-api-key")?.to_str().ok()?;
        self.keys.get(&hex::encode(Sha256::digest(secret.as_bytes()))).map(String::as_str)
    }
}

fn error(status: StatusCode, message: impl std::fmt::Display) -> Response {
    (status, axum::Json(json!({ "message": message.to_string() }))).into_response()
}

fn json_text(status: StatusCode, body: String) -> Response {
    (status, [(header::CONTENT_TYPE, HeaderValue::from_static("application/json"))], body).into_response()
}

async fn customer_view(State(app): State<Arc<App>>, headers: HeaderMap, Path(id): Path<String>) -> Response {
    let Some(org) = app.organisation(&headers) else {
        return error(StatusCode::UNAUTHORIZED, "unknown API key");
    };
    let row = sqlx::query(
        "SELECT id, customer_type, name, preferred_locale, human_readable_id, reference_id, contact, metadata, created_at, updated_at
         FROM customers WHERE org_id = ? AND id = ?",
    )
    .bind(org)
    .bind(&id)
    .fetch_optional(&app.pool)
    .await;
    match row {
        Ok(Some(row)) => match customer_json(&row) {
            Ok(body) => json_text(StatusCode::OK, body.to_string()),
            Err(e) => error(StatusCode::INTERNAL_SERVER_ERROR, e),
        },
        Ok(None) => error(StatusCode::NOT_FOUND, "no such customer"),
        Err(e) => error(StatusCode::INTERNAL_SERVER_ERROR, e),
    }
}

fn customer_json(r: &SqliteRow) -> Result<Value> {
    let document = |col: &str| -> Result<Value> {
        let text: Option<String> = r.try_get(col)?;
        Ok(text.map(|t| serde_json::from_str(&t)).transpose()?.unwrap_or(Value::Null))
    };
    Ok(json!({
        "customerId": r.try_get::<String, _>("id")?,
        "customerType": r.try_get::<String, _>("customer_type")?,
        "name": r.try_get::<String, _>("name")?,
        "preferredLocale": r.try_get::<String, _>("preferred_locale")?,
        "humanReadableId": r.try_get::<String, _>("human_readable_id")?,
        "referenceId": r.try_get::<Option<String>, _>("reference_id")?,
        "contact": document("contact")?,
        "metadata": document("metadata")?,
        "createdAt": r.try_get::<String, _>("created_at")?,
        "updatedAt": r.try_get::<String, _>("updated_at")?,
    }))
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct NewCustomer {
    customer_type: String,
    name: String,
    #[serde(default)]
    contact: Value,
    metadata: Option<Value>,
}

/// Inserts the customer and the key's answer in one transaction; a key
/// already answered makes the second insert fail, and its answer is replayed.
async fn customer_create(State(app): State<Arc<App>>, headers: HeaderMap, body: Bytes) -> Response {
    let Some(org) = app.organisation(&headers) else {
        return error(StatusCode::UNAUTHORIZED, "unknown API key");
    };
    let Some(key) = headers.get("x-idempotency-key").and_then(|v| v.to_str().ok()) else {
        return error(StatusCode::BAD_REQUEST, "X-Idempotency-Key is required");
    };
    let new: NewCustomer = match serde_json::from_slice(&body) {
        Ok(new) => new,
        Err(e) => return error(StatusCode::BAD_REQUEST, e),
    };
    let fingerprint = hex::encode(Sha256::digest(&body));
    let email = new.contact.get("email").and_then(Value::as_str).map(str::to_lowercase);
    let metadata = new.metadata.as_ref().map(Value::to_string);
    // a unique violation is either the key (replay it) or, rarely, a
    // human-readable id already taken (try another)
    for _ in 0..3 {
        let id = uuid::Uuid::new_v4();
        let now = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Micros, true);
        let human_readable_id = human_readable_id(&id);
        let answer = json!({
            "customerId": id, "customerType": new.customer_type, "name": new.name, "preferredLocale": "en-US",
            "humanReadableId": human_readable_id, "contact": new.contact, "metadata": new.metadata,
            "createdAt": now, "updatedAt": now,
        })
        .to_string();
        let id_text = id.to_string();
        let values = (id_text.as_str(), &new, human_readable_id.as_str(), email.clone(), metadata.clone(), now.as_str());
        match insert(&app.pool, org, key, &fingerprint, &answer, values).await {
            Ok(()) => return json_text(StatusCode::CREATED, answer),
            Err(sqlx::Error::Database(e)) if e.is_unique_violation() => match stored(&app.pool, org, key).await {
                Ok(Some(answer)) => return replay(answer),
                Ok(None) => continue,
                Err(e) => return error(StatusCode::INTERNAL_SERVER_ERROR, e),
            },
            Err(e) => return error(StatusCode::INTERNAL_SERVER_ERROR, e),
        }
    }
    error(StatusCode::INTERNAL_SERVER_ERROR, "no free human-readable id")
}

/// `CU-` and eight Crockford base-32 digits taken from the id's random bits.
fn human_readable_id(id: &uuid::Uuid) -> String {
    const ALPHABET: &[u8] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";
    let bits = id.as_u128();
    let tail: String = (0..8).map(|i| ALPHABET[((bits >> (i * 5)) & 31) as usize] as char).collect();
    format!("CU-{tail}")
}

type CustomerValues<'a> = (&'a str, &'a NewCustomer, &'a str, Option<String>, Option<String>, &'a str);

async fn insert(pool: &SqlitePool, org: &str, key: &str, fingerprint: &str, answer: &str, c: CustomerValues<'_>) -> sqlx::Result<()> {
    let (id, new, human_readable_id, email, metadata, now) = c;
    let mut tx = pool.begin().await?;
    sqlx::query(
        "INSERT INTO customers (id, org_id, customer_type, name, preferred_locale, human_readable_id, contact, contact_email,
           metadata, created_at, updated_at)
         VALUES (?, ?, ?, ?, 'en-US', ?, ?, ?, ?, ?, ?)",
    )
    .bind(id)
    .bind(org)
    .bind(&new.customer_type)
    .bind(&new.name)
    .bind(human_readable_id)
    .bind(new.contact.to_string())
    .bind(email)
    .bind(metadata)
    .bind(now)
    .bind(now)
    .execute(&mut *tx)
    .await?;
    sqlx::query(
        "INSERT INTO idempotency_keys (org_id, idempotency_key, fingerprint, status, headers, body, created_at)
         VALUES (?, ?, ?, 201, '[]', ?, ?)",
    )
    .bind(org)
    .bind(key)
    .bind(fingerprint)
    .bind(answer)
    .bind(now)
    .execute(&mut *tx)
    .await?;
    tx.commit().await
}

async fn stored(pool: &SqlitePool, org: &str, key: &str) -> sqlx::Result<Option<(i64, String)>> {
    let row = sqlx::query("SELECT status, body FROM idempotency_keys WHERE org_id = ? AND idempotency_key = ?")
        .bind(org)
        .bind(key)
        .fetch_optional(pool)
        .await?;
    row.map(|r| Ok((r.try_get("status")?, r.try_get("body")?))).transpose()
}

fn replay((status, body): (i64, String)) -> Response {
    let status = u16::try_from(status).ok().and_then(|s| StatusCode::from_u16(s).ok()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut response = json_text(status, body);
    response.headers_mut().insert("idempotent-replayed", HeaderValue::from_static("true"));
    response
}
