//! Numbers moving between operators (`portings`): a subscription's port-ins
//! and port-outs, newest last. A write is guarded by the state and time it
//! read, so a request and the porting job never both move one porting.

use super::{Store, Tx, opt_ts, parse_ts, parse_uuid, state_col, ts};
use crate::error::Result;
use crate::kinds::PortingDirection;
use crate::states::porting::PortingStatus;
use chrono::{DateTime, NaiveDate, Utc};
use sqlx::{AssertSqlSafe, Row};
use uuid::Uuid;

/// A porting as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct PortingRow {
    pub id: Uuid,
    pub org_id: Uuid,
    pub subscription_id: Uuid,
    pub msisdn: String,
    pub direction: PortingDirection,
    pub status: PortingStatus,
    /// what the losing carrier checks (INBOUND)
    pub details: Option<serde_json::Value>,
    /// how many times it was submitted to the losing carrier
    pub submissions: i64,
    pub submitted_at: Option<DateTime<Utc>>,
    pub scheduled_on: Option<NaiveDate>,
    pub failure_reason: Option<String>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

const COLUMNS: &str =
    "id, org_id, subscription_id, msisdn, direction, status, details, submissions, submitted_at, scheduled_on, failure_reason, created_at, updated_at";

fn porting_row(r: &sqlx::any::AnyRow) -> Result<PortingRow> {
    let details: Option<String> = r.try_get("details")?;
    let scheduled: Option<String> = r.try_get("scheduled_on")?;
    Ok(PortingRow {
        id: parse_uuid(&r.try_get::<String, _>("id")?)?,
        org_id: parse_uuid(&r.try_get::<String, _>("org_id")?)?,
        subscription_id: parse_uuid(&r.try_get::<String, _>("subscription_id")?)?,
        msisdn: r.try_get("msisdn")?,
        direction: state_col(r, "direction")?,
        status: state_col(r, "status")?,
        details: super::parse_json("details", details.as_deref())?,
        submissions: r.try_get("submissions")?,
        submitted_at: opt_ts(r, "submitted_at")?,
        scheduled_on: scheduled.map(|d| d.parse()).transpose().map_err(|e| crate::error::Error::Internal(format!("portings.scheduled_on: {e}")))?,
        failure_reason: r.try_get("failure_reason")?,
        created_at: parse_ts(&r.try_get::<String, _>("created_at")?)?,
        updated_at: parse_ts(&r.try_get::<String, _>("updated_at")?)?,
    })
}

impl Store {
    /// The porting `id` of `org`.
    pub async fn porting(&self, org: Uuid, id: Uuid) -> Result<Option<PortingRow>> {
        let sql = format!("SELECT {COLUMNS} FROM portings WHERE org_id = $1 AND id = $2");
        let row = sqlx::query(AssertSqlSafe(sql)).bind(org.to_string()).bind(id.to_string()).fetch_optional(&self.pool).await?;
        row.as_ref().map(porting_row).transpose()
    }

    /// The porting `id` of `org`, as `tx` sees it.
    pub async fn porting_in(tx: &mut Tx, org: Uuid, id: Uuid) -> Result<Option<PortingRow>> {
        let sql = format!("SELECT {COLUMNS} FROM portings WHERE org_id = $1 AND id = $2");
        let row = sqlx::query(AssertSqlSafe(sql)).bind(org.to_string()).bind(id.to_string()).fetch_optional(tx.conn().await?).await?;
        row.as_ref().map(porting_row).transpose()
    }

    /// Whether a porting not yet ended (neither COMPLETED nor FAILED) is
    /// moving `msisdn`, in any organisation (the number is one).
    pub async fn porting_open(&self, msisdn: &str) -> Result<bool> {
        let row = sqlx::query("SELECT 1 AS one FROM portings WHERE msisdn = $1 AND status NOT IN ('COMPLETED', 'FAILED') LIMIT 1")
            .bind(msisdn)
            .fetch_optional(&self.pool)
            .await?;
        Ok(row.is_some())
    }

    /// Writes `p`; its details' secrets (src/store/port_in_secrets.rs) are
    /// kept apart, sealed, until it ends.
    pub async fn insert_porting(tx: &mut Tx, p: &PortingRow) -> Result<()> {
        let details = Store::keep_secrets_of(tx, p).await?;
        tx.execute(
            sqlx::query(
                "INSERT INTO portings (id, org_id, subscription_id, msisdn, direction, status, details, submissions, submitted_at, scheduled_on,
                                       failure_reason, created_at, updated_at)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)",
            )
            .bind(p.id.to_string())
            .bind(p.org_id.to_string())
            .bind(p.subscription_id.to_string())
            .bind(p.msisdn.clone())
            .bind(p.direction.stored())
            .bind(p.status.stored())
            .bind(details)
            .bind(p.submissions)
            .bind(p.submitted_at.map(ts))
            .bind(p.scheduled_on.map(|d| d.to_string()))
            .bind(p.failure_reason.clone())
            .bind(ts(p.created_at))
            .bind(ts(p.updated_at)),
        )
        .await
    }

    /// The details of `p` as stored, its secrets kept apart (or forgotten:
    /// it ended, or none were given).
    async fn keep_secrets_of(tx: &mut Tx, p: &PortingRow) -> Result<Option<String>> {
        let Some(mut details) = p.details.clone() else { return Ok(None) };
        let secrets = super::port_in_secrets::split(&mut details);
        let ended = matches!(p.status, PortingStatus::Completed | PortingStatus::Failed);
        // details written without one keep that given before, unless it ended
        match secrets {
            _ if ended => Store::keep_port_in_secrets(tx, p.org_id, &p.id.to_string(), None).await?,
            Some(given) => Store::add_port_in_secrets(tx, p.org_id, &p.id.to_string(), given).await?,
            None => {}
        }
        Ok(Some(details.to_string()))
    }

    /// Writes `after` over `before`, if no one moved it since; whether it
    /// did. Its secrets go when it ends.
    pub async fn update_porting(tx: &mut Tx, after: &PortingRow, before: &PortingRow) -> Result<bool> {
        let details = Store::keep_secrets_of(tx, after).await?;
        let done = sqlx::query(
            "UPDATE portings SET status = $3, details = $4, submissions = $5, submitted_at = $6, scheduled_on = $7, failure_reason = $8, updated_at = $9,
                 msisdn = $13
             WHERE org_id = $1 AND id = $2 AND status = $10 AND updated_at = $11 AND submissions = $12",
        )
        .bind(after.org_id.to_string())
        .bind(after.id.to_string())
        .bind(after.status.stored())
        .bind(details)
        .bind(after.submissions)
        .bind(after.submitted_at.map(ts))
        .bind(after.scheduled_on.map(|d| d.to_string()))
        .bind(after.failure_reason.clone())
        .bind(ts(after.updated_at))
        .bind(before.status.stored())
        .bind(ts(before.updated_at))
        .bind(before.submissions)
        .bind(after.msisdn.clone())
        .execute(tx.conn().await?)
        .await?;
        Ok(done.rows_affected() == 1)
    }

    /// `subscription` of `org` is on the number `msisdn` from `now`: its row
    /// (unless it moved or was cancelled since it was read: false) and the
    /// network's hold (released from the number it had).
    pub async fn renumber_subscription(tx: &mut Tx, org: Uuid, subscription: &super::SubscriptionRow, msisdn: &str, now: DateTime<Utc>) -> Result<bool> {
        let done =
            sqlx::query("UPDATE subscriptions SET msisdn = $3, updated_at = $4 WHERE org_id = $1 AND id = $2 AND updated_at = $5 AND status <> 'CANCELLED'")
                .bind(org.to_string())
                .bind(subscription.id.to_string())
                .bind(msisdn.to_string())
                .bind(ts(now))
                .bind(ts(subscription.updated_at))
                .execute(tx.conn().await?)
                .await?;
        if done.rows_affected() != 1 {
            return Ok(false);
        }
        Store::release_number(tx, subscription.id).await?;
        Store::hold(tx, super::Held::Msisdn, msisdn, org, subscription.id, now).await?;
        Ok(true)
    }
}
