//! The organisation's SIMs: every SIM a subscription has had, and the
//! inventory an operator imports (AVAILABLE, no subscription, until a move
//! takes one). A SIM stays in the table for good; what the network is
//! addressed by is held in `network_holds` (`holds.rs`).

use super::{Store, Tx, opt_ts, opt_uuid, parse_ts, ts};
use crate::error::Result;
use crate::kinds::SimType;
use chrono::{DateTime, Utc};
use sqlx::{AssertSqlSafe, Row};
use uuid::Uuid;

/// A SIM as stored, with the subscription on it (its number and customer).
#[derive(Debug, Clone)]
pub struct SimRow {
    pub iccid: String,
    pub sim_type: SimType,
    /// AVAILABLE, ACTIVE, BLOCKED or RETIRED
    pub status: String,
    pub subscription_id: Option<Uuid>,
    pub msisdn: Option<String>,
    pub customer_id: Option<Uuid>,
    pub activation_code: Option<String>,
    pub created_at: DateTime<Utc>,
    pub updated_at: Option<DateTime<Utc>>,
}

/// An inventory SIM free to take: AVAILABLE, and held by no one at the
/// network (the network is one; whose it was is not said).
const FREE: &str = "s.status = 'AVAILABLE' AND NOT EXISTS (SELECT 1 FROM network_holds h WHERE h.kind = 'iccid' AND h.value = s.iccid)";

impl Store {
    /// Whether `org` has imported any SIM.
    pub async fn has_sim_inventory(&self, org: Uuid) -> Result<bool> {
        let row = sqlx::query("SELECT 1 AS one FROM sims WHERE org_id = $1 AND imported_at IS NOT NULL LIMIT 1").bind(org.to_string()).fetch_optional(&self.pool).await?;
        Ok(row.is_some())
    }

    /// `org`'s SIM `iccid`.
    pub async fn sim(&self, org: Uuid, iccid: &str) -> Result<Option<SimRow>> {
        let row = sqlx::query(
            "SELECT s.iccid, s.sim_type, s.status, s.subscription_id, s.activation_code, s.created_at, s.updated_at, sub.msisdn, sub.customer_id
             FROM sims s LEFT JOIN subscriptions sub ON sub.id = s.subscription_id WHERE s.org_id = $1 AND s.iccid = $2",
        )
        .bind(org.to_string())
        .bind(iccid)
        .fetch_optional(&self.pool)
        .await?;
        row.map(|r| {
            Ok(SimRow {
                iccid: r.try_get("iccid")?,
                sim_type: super::state_col(&r, "sim_type")?,
                status: r.try_get("status")?,
                subscription_id: opt_uuid(&r, "subscription_id")?,
                msisdn: r.try_get("msisdn")?,
                customer_id: opt_uuid(&r, "customer_id")?,
                activation_code: r.try_get("activation_code")?,
                created_at: parse_ts(&r.try_get::<String, _>("created_at")?)?,
                updated_at: opt_ts(&r, "updated_at")?,
            })
        })
        .transpose()
    }

    /// Whether `org`'s inventory SIM `iccid` of `kind` is free to take.
    pub async fn sim_free(&self, org: Uuid, iccid: &str) -> Result<bool> {
        let sql = format!("SELECT 1 AS one FROM sims s WHERE s.org_id = $1 AND s.iccid = $2 AND {FREE}");
        Ok(sqlx::query(AssertSqlSafe(sql)).bind(org.to_string()).bind(iccid).fetch_optional(&self.pool).await?.is_some())
    }

    /// The lowest free inventory SIM of `kind` of `org`.
    pub async fn free_sim_of(&self, org: Uuid, kind: SimType) -> Result<Option<String>> {
        let sql = format!("SELECT s.iccid FROM sims s WHERE s.org_id = $1 AND s.sim_type = $2 AND {FREE} ORDER BY s.iccid LIMIT 1");
        let row = sqlx::query(AssertSqlSafe(sql)).bind(org.to_string()).bind(kind.stored()).fetch_optional(&self.pool).await?;
        Ok(row.map(|r| r.try_get("iccid")).transpose()?)
    }

    /// Adds `sims` (iccid, type) to `org`'s inventory, AVAILABLE; a SIM
    /// the organisation has already, or that is held at the network, is
    /// left out. How many were added.
    pub async fn import_sims(&self, org: Uuid, sims: &[(String, SimType)], now: DateTime<Utc>) -> Result<u64> {
        let mut tx = self.begin().await?;
        let mut added = 0;
        for (iccid, kind) in sims {
            let done = sqlx::query(
                "INSERT INTO sims (org_id, iccid, sim_type, status, created_at, imported_at, updated_at)
                 SELECT $1, $2, $3, 'AVAILABLE', $4, $4, $4 WHERE NOT EXISTS (SELECT 1 FROM network_holds h WHERE h.kind = 'iccid' AND h.value = $2)
                 ON CONFLICT (org_id, iccid) DO NOTHING",
            )
            .bind(org.to_string())
            .bind(iccid.as_str())
            .bind(kind.stored())
            .bind(ts(now))
            .execute(tx.conn().await?)
            .await?;
            added += done.rows_affected();
        }
        tx.commit().await?;
        Ok(added)
    }

    /// `subscription` is now on SIM `iccid` (an inventory SIM it takes, or
    /// one named outside any inventory), which it holds for good; every SIM
    /// it had before is blocked for good.
    #[allow(clippy::too_many_arguments)]
    pub async fn put_on_sim(tx: &mut Tx, org: Uuid, subscription: Uuid, iccid: &str, sim_type: SimType, activation_code: Option<&str>, now: DateTime<Utc>) -> Result<()> {
        Store::end_sims(tx, subscription, "BLOCKED", now).await?;
        Store::hold(tx, super::Held::Iccid, iccid, org, subscription, now).await?;
        tx.execute(
            sqlx::query(
                "INSERT INTO sims (org_id, iccid, subscription_id, sim_type, status, activation_code, created_at, updated_at)
                 VALUES ($1, $2, $3, $4, 'ACTIVE', $5, $6, $6)
                 ON CONFLICT (org_id, iccid) DO UPDATE SET subscription_id = excluded.subscription_id, sim_type = excluded.sim_type,
                     status = 'ACTIVE', activation_code = excluded.activation_code, updated_at = excluded.updated_at",
            )
            .bind(org.to_string())
            .bind(iccid.to_string())
            .bind(subscription.to_string())
            .bind(sim_type.stored())
            .bind(activation_code.map(str::to_string))
            .bind(ts(now)),
        )
        .await
    }

    /// Every SIM of `subscription` still active ends as `status`: BLOCKED
    /// when it is replaced, RETIRED when the subscription ends.
    pub async fn end_sims(tx: &mut Tx, subscription: Uuid, status: &'static str, now: DateTime<Utc>) -> Result<()> {
        tx.execute(
            sqlx::query("UPDATE sims SET status = $3, blocked_at = $1, updated_at = $1 WHERE subscription_id = $2 AND status = 'ACTIVE'")
                .bind(ts(now))
                .bind(subscription.to_string())
                .bind(status),
        )
        .await
    }
}
