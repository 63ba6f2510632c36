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

/// A SIM no other move has claimed ($3 the claimant, $4 now): unclaimed,
/// the claimant's own, or a claim that lapsed.
const CLAIMABLE: &str = "(s.claimed_by IS NULL OR s.claimed_by = $3 OR s.claimed_until <= $4)";

/// How long a move's claim on a SIM holds: far longer than the network's
/// answer takes; a claim a failed or crashed move left lapses then.
pub const CLAIM_MINUTES: i64 = 10;

impl Store {
    /// Whether `org` has imported any SIM.
    pub async fn has_sim_inventory(&self, org: Uuid) -> Result<bool> {
        let row = sqlx::query("SELECT 1 AS one FROM sims WHERE org_id = $1 AND imported_at IS NOT NULL LIMIT 1")
            .bind(org.to_string())
            .fetch_optional(&self.pool)
            .await?;
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

    /// Claims for `claimant` (the subscription a move puts on it) a free
    /// inventory SIM of `org` of `kind`: the one the claimant claimed
    /// before and has not taken (its move is retried), else the lowest one
    /// no other move has claimed. Committed before the move asks the
    /// network, so moves at once each claim a SIM of their own: on
    /// PostgreSQL a SIM another claim has locked is passed over (`SKIP
    /// LOCKED`), on SQLite the single writer claims one at a time.
    pub async fn claim_free_sim(&self, org: Uuid, kind: SimType, claimant: Uuid, now: DateTime<Utc>) -> Result<Option<String>> {
        let own = format!("SELECT s.iccid FROM sims s WHERE s.claimed_by = $1 AND s.org_id = $2 AND s.sim_type = $3 AND {FREE} ORDER BY s.iccid LIMIT 1");
        let row = sqlx::query(AssertSqlSafe(own)).bind(claimant.to_string()).bind(org.to_string()).bind(kind.stored()).fetch_optional(&self.pool).await?;
        if let Some(row) = row {
            let iccid: String = row.try_get("iccid")?;
            if self.claim_sim(org, &iccid, claimant, now).await? {
                return Ok(Some(iccid));
            }
        }
        let mut tx = self.begin().await?;
        let lock = if tx.is_postgres() { " FOR UPDATE SKIP LOCKED" } else { "" };
        let sql = format!(
            "UPDATE sims SET claimed_by = $3, claimed_until = $5 WHERE org_id = $1 AND iccid = (
               SELECT s.iccid FROM sims s WHERE s.org_id = $1 AND s.sim_type = $2 AND {FREE} AND {CLAIMABLE} ORDER BY s.iccid LIMIT 1{lock})
             RETURNING iccid",
        );
        let row = sqlx::query(AssertSqlSafe(sql))
            .bind(org.to_string())
            .bind(kind.stored())
            .bind(claimant.to_string())
            .bind(ts(now))
            .bind(ts(now + chrono::Duration::minutes(CLAIM_MINUTES)))
            .fetch_optional(tx.conn().await?)
            .await?;
        let iccid = row.map(|r| r.try_get("iccid")).transpose()?;
        tx.commit().await?;
        Ok(iccid)
    }

    /// Claims `org`'s free inventory SIM `iccid` for `claimant` (see
    /// `claim_free_sim`): whether it could (no other move holds a claim).
    pub async fn claim_sim(&self, org: Uuid, iccid: &str, claimant: Uuid, now: DateTime<Utc>) -> Result<bool> {
        let sql = format!(
            // on the row itself, so that PostgreSQL checks a claim made
            // meanwhile again once it has the row
            "UPDATE sims AS s SET claimed_by = $3, claimed_until = $5 WHERE s.org_id = $1 AND s.iccid = $2 AND {FREE} AND {CLAIMABLE}"
        );
        let mut tx = self.begin().await?;
        let done = sqlx::query(AssertSqlSafe(sql))
            .bind(org.to_string())
            .bind(iccid)
            .bind(claimant.to_string())
            .bind(ts(now))
            .bind(ts(now + chrono::Duration::minutes(CLAIM_MINUTES)))
            .execute(tx.conn().await?)
            .await?;
        tx.commit().await?;
        Ok(done.rows_affected() == 1)
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
    pub async fn put_on_sim(
        tx: &mut Tx,
        org: Uuid,
        subscription: Uuid,
        iccid: &str,
        sim_type: SimType,
        activation_code: Option<&str>,
        now: DateTime<Utc>,
    ) -> Result<()> {
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
