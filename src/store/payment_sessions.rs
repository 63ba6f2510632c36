//! Payment sessions: rows, moves guarded by the status they were read in.

use super::orders::metadata_text;
use super::payments::provider_col;
use super::subscriptions::uuid_col;
use super::{Store, Tx, json_col, opt_ts, parse_ts, state_col, ts};
use crate::error::Result;
use crate::payment_providers::ProviderName;
use crate::states::payments::PaymentSessionStatus;
use chrono::{DateTime, Utc};
use sqlx::any::AnyRow;
use sqlx::{AssertSqlSafe, Row};
use std::collections::BTreeMap;
use uuid::Uuid;

/// A payment session as stored.
#[derive(Debug, Clone)]
pub struct SessionRow {
    pub id: Uuid,
    pub org: Uuid,
    pub customer_id: Uuid,
    pub order_id: Uuid,
    pub profile_id: Uuid,
    pub intent_id: Uuid,
    pub provider: ProviderName,
    pub status: PaymentSessionStatus,
    pub amount_minor: i64,
    pub currency: String,
    pub failure_code: Option<String>,
    pub failure_reason: Option<String>,
    pub metadata: Option<BTreeMap<String, String>>,
    pub completed_at: Option<DateTime<Utc>>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

const COLUMNS: &str = "id, org_id, customer_id, order_id, profile_id, intent_id, provider, status, amount_minor, currency, failure_code, \
     failure_reason, metadata, completed_at, created_at, updated_at";

fn session_row(r: &AnyRow) -> Result<SessionRow> {
    Ok(SessionRow {
        id: uuid_col(r, "id")?,
        org: uuid_col(r, "org_id")?,
        customer_id: uuid_col(r, "customer_id")?,
        order_id: uuid_col(r, "order_id")?,
        profile_id: uuid_col(r, "profile_id")?,
        intent_id: uuid_col(r, "intent_id")?,
        provider: provider_col(r, "provider")?,
        status: state_col(r, "status")?,
        amount_minor: r.try_get("amount_minor")?,
        currency: r.try_get("currency")?,
        failure_code: r.try_get("failure_code")?,
        failure_reason: r.try_get("failure_reason")?,
        metadata: json_col(r, "metadata")?,
        completed_at: opt_ts(r, "completed_at")?,
        created_at: parse_ts(&r.try_get::<String, _>("created_at")?)?,
        updated_at: parse_ts(&r.try_get::<String, _>("updated_at")?)?,
    })
}

impl Store {
    pub async fn insert_session(tx: &mut Tx, s: &SessionRow) -> Result<()> {
        tx.execute(
            sqlx::query(
                "INSERT INTO payment_sessions (id, org_id, customer_id, order_id, profile_id, intent_id, provider, status, amount_minor, currency,
                   failure_code, failure_reason, metadata, completed_at, created_at, updated_at)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)",
            )
            .bind(s.id.to_string())
            .bind(s.org.to_string())
            .bind(s.customer_id.to_string())
            .bind(s.order_id.to_string())
            .bind(s.profile_id.to_string())
            .bind(s.intent_id.to_string())
            .bind(s.provider.as_str())
            .bind(s.status.stored())
            .bind(s.amount_minor)
            .bind(&s.currency)
            .bind(&s.failure_code)
            .bind(&s.failure_reason)
            .bind(metadata_text(&s.metadata))
            .bind(s.completed_at.map(ts))
            .bind(ts(s.created_at))
            .bind(ts(s.updated_at)),
        )
        .await?;
        Ok(())
    }

    /// Writes `s`'s status and outcome over the stored session if it is
    /// still in `from`.
    pub async fn move_session(tx: &mut Tx, s: &SessionRow, from: PaymentSessionStatus) -> Result<bool> {
        let done = sqlx::query(
            "UPDATE payment_sessions SET status = $1, failure_code = $2, failure_reason = $3, completed_at = $4, updated_at = $5
             WHERE id = $6 AND org_id = $7 AND status = $8",
        )
        .bind(s.status.stored())
        .bind(&s.failure_code)
        .bind(&s.failure_reason)
        .bind(s.completed_at.map(ts))
        .bind(ts(s.updated_at))
        .bind(s.id.to_string())
        .bind(s.org.to_string())
        .bind(from.stored())
        .execute(tx.conn().await?)
        .await?;
        Ok(done.rows_affected() == 1)
    }

    pub async fn session(&self, org: Uuid, id: Uuid) -> Result<Option<SessionRow>> {
        let sql = format!("SELECT {COLUMNS} FROM payment_sessions WHERE org_id = $1 AND id = $2");
        let row = sqlx::query(AssertSqlSafe(sql)).bind(org.to_string()).bind(id.to_string()).fetch_optional(&self.pool).await?;
        row.as_ref().map(session_row).transpose()
    }

    /// Whether the order has a session in `status`, as `tx` sees it.
    pub async fn order_has_session_in(tx: &mut Tx, org: Uuid, order: Uuid, status: PaymentSessionStatus) -> Result<bool> {
        let row = sqlx::query("SELECT id FROM payment_sessions WHERE org_id = $1 AND order_id = $2 AND status = $3")
            .bind(org.to_string())
            .bind(order.to_string())
            .bind(status.stored())
            .fetch_optional(tx.conn().await?)
            .await?;
        Ok(row.is_some())
    }
}
