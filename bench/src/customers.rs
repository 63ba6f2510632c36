//! The baseline's customer operations, written as a careful hand-written
//! service would: a read by id is one query, a list page one keyset query
//! (`seq > cursor`, 100 rows by default), an idempotent create one
//! transaction holding the customer, its `customer.created` event and the
//! key's stored answer. Answers carry the fields Switchboard serves for
//! the same rows, nulls left out.

use crate::app::{App, error, json_text, query_value, record_event, replay, store_answer, stored_answer};
use axum::body::Bytes;
use axum::extract::{Path, RawQuery, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};
use sqlx::any::AnyRow;
use sqlx::{AnyPool, Row};
use std::sync::Arc;

const COLUMNS: &str = "seq, id, customer_type, name, identity, preferred_locale, human_readable_id, reference_id, \
contact, billing, shipping, metadata, created_at, updated_at";

pub async fn view(State(app): State<Arc<App>>, headers: HeaderMap, Path(id): Path<String>) -> Response {
    let Some(org) = app.organisation(&headers) else {
        return error(StatusCode::UNAUTHORIZED, "unknown API key");
    };
    let sql = format!("SELECT {COLUMNS} FROM customers WHERE org_id = $1 AND id = $2");
    let row = sqlx::query(sqlx::AssertSqlSafe(sql)).bind(org).bind(&id).fetch_optional(&app.pool).await;
    match row {
        Ok(Some(row)) => match customer_json(&row) {
            Ok(body) => json_text(StatusCode::OK, body.to_string()),
            Err(e) => error(StatusCode::INTERNAL_SERVER_ERROR, e),
        },
        Ok(None) => error(StatusCode::NOT_FOUND, "no such customer"),
        Err(e) => error(StatusCode::INTERNAL_SERVER_ERROR, e),
    }
}

/// `GET /customers?limit=N&cursor=C`: the cursor is the last row's `seq`
/// in decimal; one more row than asked tells whether another page follows.
pub async fn list(State(app): State<Arc<App>>, headers: HeaderMap, RawQuery(query): RawQuery) -> Response {
    let Some(org) = app.organisation(&headers) else {
        return error(StatusCode::UNAUTHORIZED, "unknown API key");
    };
    let query = query.as_deref();
    let limit = match query_value(query, "limit").map(str::parse::<i64>) {
        None => 100,
        Some(Ok(n)) if (1..=1000).contains(&n) => n,
        Some(_) => return error(StatusCode::BAD_REQUEST, "limit is 1 to 1000"),
    };
    let after = match query_value(query, "cursor").map(str::parse::<i64>) {
        None => 0,
        Some(Ok(seq)) if seq >= 0 => seq,
        Some(_) => return error(StatusCode::BAD_REQUEST, "not a cursor this API returned"),
    };
    let sql = format!("SELECT {COLUMNS} FROM customers WHERE org_id = $1 AND seq > $2 ORDER BY seq LIMIT $3");
    let rows = sqlx::query(sqlx::AssertSqlSafe(sql)).bind(org).bind(after).bind(limit + 1).fetch_all(&app.pool).await;
    let rows = match rows {
        Ok(rows) => rows,
        Err(e) => return error(StatusCode::INTERNAL_SERVER_ERROR, e),
    };
    let shown = &rows[..rows.len().min(limit as usize)];
    let next = if rows.len() > shown.len() { shown.last().map(|r| r.try_get::<i64, _>("seq")).transpose() } else { Ok(None) };
    let items: Result<Vec<Value>, _> = shown.iter().map(customer_json).collect();
    match (items, next) {
        (Ok(items), Ok(next)) => {
            let mut pagination = Map::new();
            if let Some(seq) = next {
                pagination.insert("nextCursor".into(), seq.to_string().into());
            }
            json_text(StatusCode::OK, json!({ "items": items, "pagination": pagination }).to_string())
        }
        (Err(e), _) => error(StatusCode::INTERNAL_SERVER_ERROR, e),
        (_, Err(e)) => error(StatusCode::INTERNAL_SERVER_ERROR, e),
    }
}

/// A customer row as Switchboard serves it (stored documents are JSON text).
fn customer_json(r: &AnyRow) -> anyhow::Result<Value> {
    let mut c = Map::new();
    let text = |col: &str| r.try_get::<Option<String>, _>(col);
    for (field, col) in [
        ("customerId", "id"),
        ("customerType", "customer_type"),
        ("name", "name"),
        ("identity", "identity"),
        ("preferredLocale", "preferred_locale"),
        ("humanReadableId", "human_readable_id"),
        ("referenceId", "reference_id"),
        ("createdAt", "created_at"),
        ("updatedAt", "updated_at"),
    ] {
        if let Some(v) = text(col)? {
            c.insert(field.into(), v.into());
        }
    }
    for (field, col) in [("contact", "contact"), ("billing", "billing"), ("shipping", "shipping"), ("metadata", "metadata")] {
        if let Some(v) = text(col)? {
            c.insert(field.into(), serde_json::from_str(&v)?);
        }
    }
    Ok(Value::Object(c))
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NewCustomer {
    customer_type: String,
    name: String,
    #[serde(default)]
    contact: Value,
    metadata: Option<Value>,
}

/// Inserts the customer and the key's answer in one transaction; a key
/// already answered makes the second insert fail, and its answer is replayed.
pub async fn create(State(app): State<Arc<App>>, headers: HeaderMap, body: Bytes) -> Response {
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
        let mut answer = json!({
            "customerId": id, "customerType": new.customer_type, "name": new.name, "preferredLocale": "en-US",
            "humanReadableId": human_readable_id, "contact": new.contact, "createdAt": now, "updatedAt": now,
        });
        if let Some(m) = &new.metadata {
            answer["metadata"] = m.clone();
        }
        let answer = answer.to_string();
        let id_text = id.to_string();
        let values = (id_text.as_str(), &new, human_readable_id.as_str(), email.clone(), metadata.clone(), now.as_str());
        match insert(&app.pool, org, key, &fingerprint, &answer, values).await {
            Ok(()) => return json_text(StatusCode::CREATED, answer),
            Err(sqlx::Error::Database(e)) if e.is_unique_violation() => match stored_answer(&app.pool, org, key).await {
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

async fn insert(pool: &AnyPool, org: &str, key: &str, fingerprint: &str, answer: &str, c: CustomerValues<'_>) -> sqlx::Result<()> {
    let (id, new, human_readable_id, email, metadata, now) = c;
    let mut tx = pool.begin().await?;
    sqlx::query(
        "INSERT INTO customers (id, org_id, customer_type, name, preferred_locale, human_readable_id, contact, contact_email,
           metadata, created_at, updated_at)
         VALUES ($1, $2, $3, $4, 'en-US', $5, $6, $7, $8, $9, $10)",
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
    record_event(&mut tx, org, "customer.created", answer, now).await?;
    store_answer(&mut tx, org, (key, fingerprint, answer), now).await?;
    tx.commit().await
}
