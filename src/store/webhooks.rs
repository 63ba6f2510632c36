//! Webhook endpoints and each organisation's webhook revision.

use super::sealed::{Column, ENDPOINT_PREVIOUS_SECRET, ENDPOINT_SECRET};
use super::{Cursor, ListQuery, Page, Store, Tx, json_col, parse_ts, parse_uuid, ts};
use crate::error::{Error, Result};
use crate::sealing::Sealing;
use chrono::{DateTime, Utc};
use sqlx::Row;
use sqlx::any::AnyRow;
use uuid::Uuid;

/// A webhook endpoint as stored. `status` and `disabled_reason` hold the
/// names the documents use (ENABLED, DISABLED; MANUAL, FAILING).
#[derive(Debug, Clone)]
pub struct WebhookEndpointRow {
    pub id: Uuid,
    pub org: Uuid,
    pub url: String,
    /// event types, or `*` for all
    pub events: Vec<String>,
    pub description: Option<String>,
    pub status: String,
    pub disabled_reason: Option<String>,
    pub secret: String,
    /// the secret before the last rotation, and until when it still signs
    pub previous_secret: Option<(String, DateTime<Utc>)>,
    /// since when every delivery attempt has failed (the delivery worker
    /// keeps it; no other write touches it)
    pub failing_since: Option<DateTime<Utc>>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

impl WebhookEndpointRow {
    /// Whether deliveries go to it now (status ENABLED).
    pub fn enabled(&self) -> bool {
        self.status == "ENABLED"
    }
}

const COLUMNS: &str = "seq, id, org_id, url, events, description, status, disabled_reason, secret, previous_secret, \
                       previous_secret_until, failing_since, created_at, updated_at";

/// A secret the row holds, opened; `UNREADABLE` (said in the log) when no
/// configured master key opens it. Reading the endpoint still works (its
/// secret is shown only by create and rotate), and each delivery to it is
/// recorded as not sent, "the endpoint's secret is unreadable", and tried
/// again on the schedule: one such row holds up no other endpoint.
fn open(sealing: &Sealing, column: &Column, id: &str, stored: &str) -> String {
    sealing.open(&column.place(id), stored).unwrap_or_else(|e| {
        tracing::error!(endpoint = id, "webhook endpoint's secret: {e}");
        UNREADABLE.to_string()
    })
}

/// The secret of an endpoint whose stored secret does not open.
pub const UNREADABLE: &str = "";

fn from_row(r: &AnyRow, sealing: &Sealing) -> Result<(i64, WebhookEndpointRow)> {
    let id: String = r.try_get("id")?;
    let previous: Option<String> = r.try_get("previous_secret")?;
    let until: Option<String> = r.try_get("previous_secret_until")?;
    let previous_secret = match (previous, until) {
        (Some(secret), Some(until)) => Some((open(sealing, &ENDPOINT_PREVIOUS_SECRET, &id, &secret), parse_ts(&until)?)),
        _ => None,
    };
    Ok((
        r.try_get("seq")?,
        WebhookEndpointRow {
            id: parse_uuid(&id)?,
            org: parse_uuid(&r.try_get::<String, _>("org_id")?)?,
            url: r.try_get("url")?,
            events: json_col(r, "events")?.unwrap_or_default(),
            description: r.try_get("description")?,
            status: r.try_get("status")?,
            disabled_reason: r.try_get("disabled_reason")?,
            secret: open(sealing, &ENDPOINT_SECRET, &id, &r.try_get::<String, _>("secret")?),
            previous_secret,
            failing_since: r.try_get::<Option<String>, _>("failing_since")?.as_deref().map(parse_ts).transpose()?,
            created_at: parse_ts(&r.try_get::<String, _>("created_at")?)?,
            updated_at: parse_ts(&r.try_get::<String, _>("updated_at")?)?,
        },
    ))
}

type Query<'q> = sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments>;

/// Binds what an insert and an update both write, as `$1` to `$9`: url,
/// events, description, status, disabled_reason, secret, previous_secret,
/// previous_secret_until, updated_at. The secrets are sealed.
fn bind_fields<'q>(q: Query<'q>, e: &WebhookEndpointRow, sealing: &Sealing) -> Query<'q> {
    let id = e.id.to_string();
    q.bind(e.url.clone())
        .bind(serde_json::to_string(&e.events).expect("a list of strings is JSON"))
        .bind(e.description.clone())
        .bind(e.status.clone())
        .bind(e.disabled_reason.clone())
        .bind(sealing.seal(&ENDPOINT_SECRET.place(&id), &e.secret))
        .bind(e.previous_secret.as_ref().map(|(s, _)| sealing.seal(&ENDPOINT_PREVIOUS_SECRET.place(&id), s)))
        .bind(e.previous_secret.as_ref().map(|(_, t)| ts(*t)))
        .bind(ts(e.updated_at))
}

impl Store {
    /// Inserts `e` unless its organisation already has `max` endpoints;
    /// false if it has. The organisation's row is locked first (a no-op
    /// update), so concurrent creates count one after the other.
    pub async fn insert_webhook_endpoint(tx: &mut Tx, e: &WebhookEndpointRow, max: i64) -> Result<bool> {
        let org = e.org.to_string();
        sqlx::query("UPDATE organisations SET id = id WHERE id = $1").bind(&org).execute(tx.conn().await?).await?;
        let count: i64 =
            sqlx::query("SELECT COUNT(*) AS n FROM webhook_endpoints WHERE org_id = $1").bind(&org).fetch_one(tx.conn().await?).await?.try_get("n")?;
        if count >= max {
            return Ok(false);
        }
        let insert = sqlx::query(
            "INSERT INTO webhook_endpoints (url, events, description, status, disabled_reason, secret, previous_secret,
                                            previous_secret_until, updated_at, id, org_id, created_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)",
        );
        let insert = bind_fields(insert, e, tx.sealing());
        tx.execute(insert.bind(e.id.to_string()).bind(org).bind(ts(e.created_at))).await?;
        Ok(true)
    }

    /// Writes every field of `e` but its id, organisation and creation.
    pub async fn update_webhook_endpoint(tx: &mut Tx, e: &WebhookEndpointRow) -> Result<()> {
        let update = sqlx::query(
            "UPDATE webhook_endpoints SET url = $1, events = $2, description = $3, status = $4, disabled_reason = $5,
                    secret = $6, previous_secret = $7, previous_secret_until = $8, updated_at = $9
             WHERE id = $10 AND org_id = $11",
        );
        let update = bind_fields(update, e, tx.sealing());
        tx.execute(update.bind(e.id.to_string()).bind(e.org.to_string())).await
    }

    /// Deletes an endpoint of `org`; false if there was none.
    pub async fn delete_webhook_endpoint(tx: &mut Tx, org: Uuid, id: Uuid) -> Result<bool> {
        let gone = sqlx::query("DELETE FROM webhook_endpoints WHERE id = $1 AND org_id = $2")
            .bind(id.to_string())
            .bind(org.to_string())
            .execute(tx.conn().await?)
            .await?
            .rows_affected();
        Ok(gone > 0)
    }

    pub async fn webhook_endpoint(&self, org: Uuid, id: Uuid) -> Result<Option<WebhookEndpointRow>> {
        let row = sqlx::query(sqlx::AssertSqlSafe(format!("SELECT {COLUMNS} FROM webhook_endpoints WHERE org_id = $1 AND id = $2")))
            .bind(org.to_string())
            .bind(id.to_string())
            .fetch_optional(&self.pool)
            .await?;
        Ok(row.as_ref().map(|r| from_row(r, &self.sealing)).transpose()?.map(|(_, e)| e))
    }

    /// The endpoints `ids`, whatever their organisation (the delivery
    /// worker's; the API reads through `webhook_endpoint`).
    pub async fn webhook_endpoints_by_id(&self, ids: &[String]) -> Result<Vec<WebhookEndpointRow>> {
        if ids.is_empty() {
            return Ok(vec![]);
        }
        let mut q = sqlx::query(sqlx::AssertSqlSafe(format!("SELECT {COLUMNS} FROM webhook_endpoints WHERE id IN ({})", super::placeholders(1, ids.len()))));
        for id in ids {
            q = q.bind(id.clone());
        }
        q.fetch_all(&self.pool).await?.iter().map(|r| from_row(r, &self.sealing).map(|(_, e)| e)).collect()
    }

    /// One page of `org`'s endpoints, oldest first.
    pub async fn webhook_endpoints(&self, org: Uuid, after: Option<Cursor>, limit: usize) -> Result<Page<WebhookEndpointRow>> {
        let rows = ListQuery::new(format!("SELECT {COLUMNS} FROM webhook_endpoints WHERE org_id = $1 AND seq > $2"))
            .fetch(&self.pool, org, after, "seq", limit)
            .await?;
        Ok(Page::from_rows(rows.iter().map(|r| from_row(r, &self.sealing)).collect::<Result<_>>()?, limit))
    }

    /// The organisation's webhook revision as set (None: never set), or
    /// an error if there is no such organisation.
    pub async fn webhook_revision(&self, org: Uuid) -> Result<Option<String>> {
        let row = sqlx::query("SELECT webhook_revision FROM organisations WHERE id = $1")
            .bind(org.to_string())
            .fetch_optional(&self.pool)
            .await?
            .ok_or_else(|| Error::Internal(format!("no organisation {org}")))?;
        Ok(row.try_get("webhook_revision")?)
    }

    /// Sets the organisation's webhook revision; false if there is no such
    /// organisation.
    pub async fn set_webhook_revision(&self, org: Uuid, revision: &str) -> Result<bool> {
        let mut tx = self.begin().await?;
        let changed = sqlx::query("UPDATE organisations SET webhook_revision = $1 WHERE id = $2")
            .bind(revision)
            .bind(org.to_string())
            .execute(tx.conn().await?)
            .await?
            .rows_affected();
        tx.commit().await?;
        Ok(changed > 0)
    }
}
