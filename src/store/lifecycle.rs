//! The writes of a subscription's lifecycle: a move (optimistic, like an
//! order's), and the subscriptions with something due (its SIMs are in
//! `sims.rs`).

use super::{Store, SubscriptionRow, Tx, ts};
use crate::error::Result;
use chrono::{DateTime, Utc};
use sqlx::Row;
use uuid::Uuid;

impl Store {
    /// Writes `s` over the stored subscription if it is still as `before`
    /// was read (same status, same `updatedAt`, the same thing due next):
    /// false when another request changed it first, so no move overwrites
    /// one it did not see and nothing due is done twice.
    pub async fn update_subscription(tx: &mut Tx, org: Uuid, s: &SubscriptionRow, before: &SubscriptionRow) -> Result<bool> {
        let l = &s.life;
        let done = sqlx::query(
            "UPDATE subscriptions SET status = $1, sim_type = $2, iccid = $3, esim_activation_code = $4, status_reason = $5,
               pending_status = $6, pending_status_at = $7, activated_at = $8, paused_at = $9, suspended_at = $10,
               blocked_at = $11, cancelled_at = $12, ended_at = $13, binding_ends_on = $14, updated_at = $15,
               offering_id = $20, terms = $21, billing_day = $22, renews_on = $23, paid_through = $24,
               pending_offering_id = $25, pending_offering_schedule = $26, pending_offering_at = $27, due_at = $28,
               suspended_for_invoice = $30
             WHERE id = $16 AND org_id = $17 AND status = $18 AND updated_at = $19 AND due_at IS NOT DISTINCT FROM $29",
        )
        .bind(s.status.stored())
        .bind(s.sim_type.stored())
        .bind(&l.iccid)
        .bind(&l.esim_activation_code)
        .bind(&l.status_reason)
        .bind(l.pending.map(|(p, _)| p.stored()))
        .bind(l.pending.map(|(_, at)| ts(at)))
        .bind(l.activated_at.map(ts))
        .bind(l.paused_at.map(ts))
        .bind(l.suspended_at.map(ts))
        .bind(l.blocked_at.map(ts))
        .bind(l.cancelled_at.map(ts))
        .bind(l.ended_at.map(ts))
        .bind(l.binding_ends_on.map(|d| d.to_string()))
        .bind(ts(s.updated_at))
        .bind(s.id.to_string())
        .bind(org.to_string())
        .bind(before.status.stored())
        .bind(ts(before.updated_at))
        .bind(s.offering_id.to_string())
        .bind(serde_json::to_string(&s.terms).expect("terms are plain data"))
        .bind(l.billing_day.map(i64::from))
        .bind(l.renews_on.map(|d| d.to_string()))
        .bind(l.paid_through.map(|d| d.to_string()))
        .bind(l.pending_offering.as_ref().map(|p| p.offering_id.to_string()))
        .bind(l.pending_offering.as_ref().map(|p| p.schedule.clone()))
        .bind(l.pending_offering.as_ref().map(|p| ts(p.at)))
        .bind(l.due_at().map(ts))
        .bind(before.life.due_at().map(ts))
        .bind(l.suspended_for_invoice.map(|u| u.to_string()))
        .execute(tx.conn().await?)
        .await?;
        Ok(done.rows_affected() == 1)
    }

    /// The subscriptions of `org` with something due by `now` (a scheduled
    /// move, an offering change, a renewal).
    pub async fn subscriptions_due(&self, org: Uuid, now: DateTime<Utc>) -> Result<Vec<Uuid>> {
        let rows = sqlx::query("SELECT id FROM subscriptions WHERE org_id = $1 AND due_at <= $2 ORDER BY due_at")
            .bind(org.to_string())
            .bind(ts(now))
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(|r| super::parse_uuid(&r.try_get::<String, _>("id")?)).collect()
    }
}
