//! The baseline's order of one mobile subscription, created and submitted
//! as a careful hand-written service would: the reads a create needs (the
//! customer with its catalog and tax country, the offering in that
//! catalog, the tax rates, whether the number is taken) and then one transaction
//! holding the order, its event and the key's stored answer; a submission
//! reads the order and the offering, and writes the subscription, the
//! order's new state, its four events and the stored answer in one
//! transaction. Rows go into Switchboard's own tables, answers and event
//! payloads have Switchboard's shapes, so both servers do the same work.

use crate::app::{App, error, json_text, record_event, replay, store_answer, stored_answer};
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use sqlx::any::AnyRow;
use sqlx::{Any, Row, Transaction};
use std::sync::Arc;

/// Why a request failed: its status and message.
type Refusal = (StatusCode, String);

fn refuse(status: StatusCode, message: impl std::fmt::Display) -> Refusal {
    (status, message.to_string())
}

fn internal(e: impl std::fmt::Display) -> Refusal {
    refuse(StatusCode::INTERNAL_SERVER_ERROR, e)
}

fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Micros, true)
}

fn new_id() -> String {
    uuid::Uuid::now_v7().to_string()
}

/// The caller's organisation and idempotency key, or the refusal.
fn caller<'h>(app: &'h App, headers: &'h HeaderMap) -> Result<(&'h str, &'h str), Refusal> {
    let org = app.organisation(headers).ok_or_else(|| refuse(StatusCode::UNAUTHORIZED, "unknown API key"))?;
    let key = headers.get("x-idempotency-key").and_then(|v| v.to_str().ok());
    Ok((org, key.ok_or_else(|| refuse(StatusCode::BAD_REQUEST, "X-Idempotency-Key is required"))?))
}

/// Runs an idempotent write: its answer, or the one stored for the key.
async fn idempotent(app: &App, org: &str, key: &str, work: Result<String, Refusal>) -> Response {
    match work {
        Ok(answer) => json_text(StatusCode::CREATED, answer),
        // a retry finds its work done (the key stored, the order moved on)
        Err((StatusCode::CONFLICT, message)) => match stored_answer(&app.pool, org, key).await {
            Ok(Some(stored)) => replay(stored),
            Ok(None) => error(StatusCode::CONFLICT, message),
            Err(e) => error(StatusCode::INTERNAL_SERVER_ERROR, e),
        },
        Err((status, message)) => error(status, message),
    }
}

/// The event and the key's answer, in the transaction that made them; a
/// key already used is a unique violation, answered as a conflict.
async fn record(tx: &mut Transaction<'static, Any>, org: &str, events: &[(&str, &Value)], key: (&str, &str, &str), now: &str) -> Result<(), Refusal> {
    for (event_type, data) in events {
        record_event(tx, org, event_type, &data.to_string(), now).await.map_err(internal)?;
    }
    match store_answer(tx, org, key, now).await {
        Err(sqlx::Error::Database(e)) if e.is_unique_violation() => Err(refuse(StatusCode::CONFLICT, "key used")),
        other => other.map_err(internal),
    }
}

pub async fn create(State(app): State<Arc<App>>, headers: HeaderMap, body: Bytes) -> Response {
    let (org, key) = match caller(&app, &headers) {
        Ok(c) => c,
        Err((status, message)) => return error(status, message),
    };
    let work = create_order(&app, org, key, &body).await;
    idempotent(&app, org, key, work).await
}

async fn one(app: &App, sql: &'static str, binds: &[&str]) -> Result<Option<AnyRow>, Refusal> {
    let mut q = sqlx::query(sql);
    for b in binds {
        q = q.bind(*b);
    }
    q.fetch_optional(&app.pool).await.map_err(internal)
}

fn text(row: &AnyRow, col: &str) -> Result<String, Refusal> {
    row.try_get::<String, _>(col).map_err(internal)
}

fn json_of(row: &AnyRow, col: &str) -> Result<Value, Refusal> {
    serde_json::from_str(&text(row, col)?).map_err(internal)
}

async fn create_order(app: &App, org: &str, key: &str, body: &[u8]) -> Result<String, Refusal> {
    let request: Value = serde_json::from_slice(body).map_err(|e| refuse(StatusCode::BAD_REQUEST, e))?;
    let bad = |what: &str| refuse(StatusCode::BAD_REQUEST, format!("{what} is required"));
    let customer_key = request["customerId"].as_str().ok_or_else(|| bad("customerId"))?;
    let line = &request["lineItems"][0];
    let offering_id = line["productOfferingId"].as_str().ok_or_else(|| bad("lineItems[0].productOfferingId"))?;
    let msisdn = line["subscription"]["msisdn"].as_str().ok_or_else(|| bad("lineItems[0].subscription.msisdn"))?;
    let reference = customer_key.strip_prefix("rid_").unwrap_or("");
    let customer = one(
        app,
        "SELECT c.id, c.name, c.billing, COALESCE(cc.catalog_id, s.default_catalog_id) AS catalog_id, s.default_tax_country
         FROM customers c LEFT JOIN customer_catalogs cc ON cc.customer_id = c.id LEFT JOIN catalog_settings s ON s.org_id = c.org_id
         WHERE c.org_id = $1 AND (c.id = $2 OR c.reference_id = $3)",
        &[org, customer_key, reference],
    )
    .await?
    .ok_or_else(|| refuse(StatusCode::NOT_FOUND, "no such customer"))?;
    let currency = json_of(&customer, "billing")?["currency"].as_str().unwrap_or("SEK").to_string();
    let offering = one(
        app,
        "SELECT o.doc FROM product_offerings o JOIN product_catalog_offerings c ON c.offering_id = o.id
         WHERE o.org_id = $1 AND o.id = $2 AND o.status = 'AVAILABLE' AND c.catalog_id = $3",
        &[org, offering_id, &text(&customer, "catalog_id")?],
    )
    .await?
    .ok_or_else(|| refuse(StatusCode::CONFLICT, "the offering is not AVAILABLE in the customer's catalog"))?;
    let taxes = one(app, "SELECT doc FROM tax_rates WHERE org_id = $1 AND country = $2", &[org, &text(&customer, "default_tax_country")?]).await?;
    let taxes = taxes.map(|t| json_of(&t, "doc")).transpose()?.unwrap_or_else(|| json!([]));
    if one(app, "SELECT 1 AS taken FROM subscriptions WHERE org_id = $1 AND msisdn = $2 AND status <> 'ENDED'", &[org, msisdn]).await?.is_some() {
        return Err(refuse(StatusCode::CONFLICT, "the number is taken"));
    }

    let offering = json_of(&offering, "doc")?;
    let pricing = pricing(&offering["price"], &taxes, &currency);
    let now = now();
    let order_id = new_id();
    let customer_id = text(&customer, "id")?;
    let order = json!({
        "orderId": order_id, "status": "DRAFT", "currency": currency,
        "customer": { "customerId": customer_id, "name": text(&customer, "name")? },
        "lineItems": [{
            "lineItemId": new_id(), "type": "SUBSCRIPTION", "status": "PENDING", "bindingContract": false, "upfrontPayment": false,
            "productOffering": { "productOfferingId": offering_id, "name": offering["name"] },
            "subscription": line["subscription"], "pricing": pricing,
        }],
        "pricing": pricing, "createdAt": now, "updatedAt": now,
    });
    let answer = order.to_string();
    let mut tx = app.pool.begin().await.map_err(internal)?;
    sqlx::query(
        "INSERT INTO orders (id, org_id, customer_id, status, currency, line_items, expires_at, created_at, updated_at)
         VALUES ($1, $2, $3, 'DRAFT', $4, $5, $6, $7, $8)",
    )
    .bind(&order_id)
    .bind(org)
    .bind(&customer_id)
    .bind(&currency)
    .bind(&answer)
    .bind(&now)
    .bind(&now)
    .bind(&now)
    .execute(&mut *tx)
    .await
    .map_err(internal)?;
    let fingerprint = hex::encode(Sha256::digest(body));
    record(&mut tx, org, &[("order.created", &order)], (key, &fingerprint, &answer), &now).await?;
    tx.commit().await.map_err(internal)?;
    Ok(answer)
}

/// A recurring price, less its standard discount, with each tax on the rest.
fn pricing(price: &Value, taxes: &Value, currency: &str) -> Value {
    let subtotal = price["netPriceMinor"].as_i64().unwrap_or(0);
    let discount = &price["standardDiscount"];
    let off = discount["amountMinor"].as_i64().unwrap_or(0);
    let discounts = json!([{ "amountMinor": off, "description": discount["invoicingDescription"], "source": "STANDARD" }]);
    let taxed = subtotal - off;
    let taxes: Vec<Value> = taxes
        .as_array()
        .into_iter()
        .flatten()
        .map(|t| {
            let rate = t["rateBasisPoints"].as_i64().unwrap_or(0);
            json!({ "amountMinor": taxed * rate / 10_000, "description": t["description"], "rateBasisPoints": rate })
        })
        .collect();
    let tax: i64 = taxes.iter().filter_map(|t| t["amountMinor"].as_i64()).sum();
    let amounts = json!({
        "discounts": discounts, "subtotalMinor": subtotal, "taxAmountMinor": tax, "taxes": taxes,
        "totalDiscountsMinor": off, "totalMinor": taxed + tax,
    });
    let mut all = amounts.clone();
    all["currency"] = currency.into();
    all["initialInvoice"] = amounts.clone();
    all["recurringCosts"] = amounts;
    all["billingCycle"] = price["billingCycle"].clone();
    all
}

pub async fn submit(State(app): State<Arc<App>>, headers: HeaderMap, Path(id): Path<String>) -> Response {
    let (org, key) = match caller(&app, &headers) {
        Ok(c) => c,
        Err((status, message)) => return error(status, message),
    };
    let work = submit_order(&app, org, key, &id).await;
    idempotent(&app, org, key, work).await
}

async fn submit_order(app: &App, org: &str, key: &str, id: &str) -> Result<String, Refusal> {
    let row = one(app, "SELECT customer_id, status, line_items FROM orders WHERE org_id = $1 AND id = $2", &[org, id])
        .await?
        .ok_or_else(|| refuse(StatusCode::NOT_FOUND, "no such order"))?;
    if text(&row, "status")? != "DRAFT" {
        return Err(refuse(StatusCode::CONFLICT, "the order is not a DRAFT"));
    }
    let mut order = json_of(&row, "line_items")?;
    let offering_id = order["lineItems"][0]["productOffering"]["productOfferingId"].as_str().unwrap_or_default().to_string();
    let offering = one(app, "SELECT doc FROM product_offerings WHERE org_id = $1 AND id = $2 AND status = 'AVAILABLE'", &[org, &offering_id])
        .await?
        .ok_or_else(|| refuse(StatusCode::CONFLICT, "the offering cannot be ordered"))?;
    let price = json_of(&offering, "doc")?["price"].clone();
    let now = now();
    let (subscription_id, subscriber_id) = (new_id(), new_id());
    let line = &mut order["lineItems"][0];
    let (msisdn, sim_type) = (line["subscription"]["msisdn"].clone(), line["subscription"]["simType"].clone());
    line["status"] = "SUBMITTED".into();
    line["createdSubscriptionId"] = subscription_id.clone().into();
    let line = line.clone();
    let terms = json!({ "currency": order["currency"], "price": price, "bindingContract": false, "upfrontCycles": 0 });
    let subscription = json!({
        "subscriptionId": subscription_id, "status": "PENDING", "type": "CELL", "display": msisdn, "msisdn": msisdn,
        "customer": order["customer"], "productOffering": line["productOffering"], "simType": sim_type, "orderId": id,
        "subscriberId": subscriber_id, "currency": order["currency"], "contractedPrice": price, "bindingContract": false,
        "upfrontPaidCycles": 0, "createdAt": now, "updatedAt": now,
    });
    order["status"] = "SUBMITTED".into();
    order["submittedAt"] = now.clone().into();
    order["updatedAt"] = now.clone().into();
    let answer = order.to_string();

    let mut tx = app.pool.begin().await.map_err(internal)?;
    sqlx::query(
        "INSERT INTO subscriptions (id, org_id, customer_id, order_id, offering_id, status, subscription_type, msisdn, sim_type,
           created_at, updated_at, terms, subscriber_id)
         VALUES ($1, $2, $3, $4, $5, 'PENDING', 'CELL', $6, $7, $8, $9, $10, $11)",
    )
    .bind(&subscription_id)
    .bind(org)
    .bind(text(&row, "customer_id")?)
    .bind(id)
    .bind(&offering_id)
    .bind(msisdn.as_str().unwrap_or_default())
    .bind(sim_type.as_str().unwrap_or_default())
    .bind(&now)
    .bind(&now)
    .bind(terms.to_string())
    .bind(&subscriber_id)
    .execute(&mut *tx)
    .await
    .map_err(internal)?;
    // the state it was read in, or someone else's submission won
    let moved = sqlx::query("UPDATE orders SET status = 'SUBMITTED', line_items = $1, submitted_at = $2, updated_at = $3 WHERE id = $4 AND status = 'DRAFT'")
        .bind(&answer)
        .bind(&now)
        .bind(&now)
        .bind(id)
        .execute(&mut *tx)
        .await
        .map_err(internal)?;
    if moved.rows_affected() != 1 {
        return Err(refuse(StatusCode::CONFLICT, "the order is not a DRAFT"));
    }
    let changed = json!({ "orderId": id, "lineItem": line, "previousStatus": "PENDING" });
    let status = json!({ "order": order, "previousStatus": "DRAFT" });
    let events =
        [("order.submitted", &order), ("order.statusChanged", &status), ("order.lineItemStatusChanged", &changed), ("subscription.created", &subscription)];
    let fingerprint = hex::encode(Sha256::digest(id.as_bytes()));
    record(&mut tx, org, &events, (key, &fingerprint, &answer), &now).await?;
    tx.commit().await.map_err(internal)?;
    Ok(answer)
}
