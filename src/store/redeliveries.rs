//! Webhook deliveries queued again, each with its `webhook.delivery` job:
//! an event sent again, a window of missed events replayed, and an
//! endpoint's pending deliveries held while it is disabled and started on
//! a new round when it is enabled.

use super::{Store, Tx, parse_ts, placeholders, ts};
use crate::error::Result;
use crate::store::JobKind;
use chrono::{DateTime, Utc};
use sqlx::{AssertSqlSafe, Row};
use uuid::Uuid;

/// Which events a queueing takes.
pub enum Which<'a> {
    /// this one
    Event(Uuid),
    /// those of these types (all for `*`) that occurred in [since, until)
    /// and were not delivered to the endpoint
    Missed { since: DateTime<Utc>, until: DateTime<Utc>, types: &'a [String] },
}

/// The events of [since, until) of `types` (`*`: all) that the endpoint
/// (bound second, as $2) has not acknowledged, as a filter on `events`
/// whose placeholders follow those `binds` holds.
fn missed(sql: &mut String, binds: &mut Vec<String>, since: DateTime<Utc>, until: DateTime<Utc>, types: &[String]) {
    let next = binds.len() + 1;
    sql.push_str(&format!(
        " AND occurred_at >= ${} AND occurred_at < ${} AND NOT EXISTS
         (SELECT 1 FROM webhook_deliveries d WHERE d.endpoint_id = $2 AND d.event_id = events.id AND d.status = 'SUCCEEDED')",
        next,
        next + 1
    ));
    binds.extend([ts(since), ts(until)]);
    if !types.iter().any(|t| t == "*") {
        sql.push_str(&format!(" AND event_type IN ({})", placeholders(next + 2, types.len())));
        binds.extend(types.iter().cloned());
    }
}

impl Store {
    /// Holds the pending deliveries of a disabled endpoint: no job, no
    /// next attempt, until it is enabled.
    pub(super) async fn hold_deliveries(tx: &mut Tx, endpoint: &str, now: DateTime<Utc>) -> Result<()> {
        tx.execute(
            sqlx::query(
                "DELETE FROM jobs WHERE kind = $1 AND subject IN
                    (SELECT endpoint_id || '/' || event_id FROM webhook_deliveries WHERE endpoint_id = $2 AND status = 'PENDING')",
            )
            .bind(JobKind::WebhookDelivery.as_str())
            .bind(endpoint.to_string()),
        )
        .await?;
        tx.execute(
            sqlx::query("UPDATE webhook_deliveries SET next_attempt_at = NULL, updated_at = $1 WHERE endpoint_id = $2 AND status = 'PENDING'")
                .bind(ts(now))
                .bind(endpoint.to_string()),
        )
        .await
    }

    /// An endpoint was enabled: its held deliveries start a new round now.
    /// An endpoint disabled holds them (`hold_deliveries`).
    pub async fn endpoint_status_changed(tx: &mut Tx, endpoint: Uuid, enabled: bool, now: DateTime<Utc>) -> Result<()> {
        let id = endpoint.to_string();
        if !enabled {
            return Store::hold_deliveries(tx, &id, now).await;
        }
        tx.execute(
            sqlx::query(
                // Every pending delivery without a job: those held, and one
                // whose attempt was in flight when the endpoint was disabled
                // (its retry time was recorded after the hold dropped its job).
                "UPDATE webhook_deliveries SET round_started_at = $1, round_attempts = 0, next_attempt_at = $1, updated_at = $1
                 WHERE endpoint_id = $2 AND status = 'PENDING' AND NOT EXISTS
                    (SELECT 1 FROM jobs WHERE jobs.kind = $3 AND jobs.subject = webhook_deliveries.endpoint_id || '/' || webhook_deliveries.event_id)",
            )
            .bind(ts(now))
            .bind(id.clone())
            .bind(JobKind::WebhookDelivery.as_str()),
        )
        .await?;
        tx.execute(sqlx::query("UPDATE webhook_endpoints SET failing_since = NULL WHERE id = $1").bind(id.clone())).await?;
        Store::schedule_round(tx, &id, now).await
    }

    /// Makes the deliveries of `endpoint` whose round starts `now` due now.
    async fn schedule_round(tx: &mut Tx, endpoint: &str, now: DateTime<Utc>) -> Result<()> {
        tx.webhooks_changed();
        tx.execute(
            sqlx::query(
                "INSERT INTO jobs (kind, subject, org_id, due_at, created_at)
                 SELECT $1, endpoint_id || '/' || event_id, org_id, $2, $2 FROM webhook_deliveries
                 WHERE endpoint_id = $3 AND status = 'PENDING' AND round_started_at = $2 AND round_attempts = 0
                 ON CONFLICT (kind, subject) DO UPDATE SET due_at = excluded.due_at",
            )
            .bind(JobKind::WebhookDelivery.as_str())
            .bind(ts(now))
            .bind(endpoint.to_string()),
        )
        .await
    }

    /// Where a replay of [since, until) to `endpoint` must stop to queue at
    /// most `max` events: the time of the first event past them, if the
    /// window holds more.
    pub async fn replay_cut(
        &self,
        org: Uuid,
        endpoint: Uuid,
        since: DateTime<Utc>,
        until: DateTime<Utc>,
        types: &[String],
        max: i64,
    ) -> Result<Option<DateTime<Utc>>> {
        let mut sql = String::from("SELECT occurred_at FROM events WHERE org_id = $1");
        let mut binds = vec![org.to_string(), endpoint.to_string()];
        missed(&mut sql, &mut binds, since, until, types);
        sql.push_str(&format!(" ORDER BY occurred_at LIMIT 1 OFFSET {max}"));
        let mut q = sqlx::query(AssertSqlSafe(sql));
        for b in binds {
            q = q.bind(b);
        }
        let row = q.fetch_optional(&self.pool).await?;
        row.map(|r| parse_ts(&r.try_get::<String, _>("occurred_at")?)).transpose()
    }

    /// Queues `which` events of `org` to `endpoint`, due now, as a new
    /// round (whatever their deliveries' state); the number queued.
    pub async fn queue_deliveries(tx: &mut Tx, org: Uuid, endpoint: Uuid, which: Which<'_>, now: DateTime<Utc>) -> Result<u64> {
        let mut sql = String::from(
            "INSERT INTO webhook_deliveries (org_id, endpoint_id, event_id, status, round_started_at, round_attempts, next_attempt_at, created_at, updated_at)
             SELECT org_id, $2, id, 'PENDING', $3, 0, $3, $3, $3 FROM events WHERE org_id = $1",
        );
        let mut binds = vec![org.to_string(), endpoint.to_string(), ts(now)];
        match which {
            Which::Event(id) => {
                sql.push_str(" AND id = $4");
                binds.push(id.to_string());
            }
            Which::Missed { since, until, types } => missed(&mut sql, &mut binds, since, until, types),
        }
        sql.push_str(
            " ON CONFLICT (endpoint_id, event_id) DO UPDATE SET status = 'PENDING', round_started_at = excluded.round_started_at,
              round_attempts = 0, next_attempt_at = excluded.next_attempt_at, updated_at = excluded.updated_at",
        );
        let mut q = sqlx::query(AssertSqlSafe(sql));
        for b in binds {
            q = q.bind(b);
        }
        let queued = q.execute(tx.conn().await?).await?.rows_affected();
        Store::schedule_round(tx, &endpoint.to_string(), now).await?;
        Ok(queued)
    }
}
