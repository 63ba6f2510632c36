//! Webhook deliveries: one per (endpoint, event), made by the dispatcher
//! from the outbox, queued again by a redelivery, a replay or an endpoint
//! coming back, each with its `webhook.delivery` job (subject
//! `endpoint_id/event_id`) and every attempt's record.

use super::{Backend, Cursor, EventRow, ListQuery, Page, Store, WebhookEndpointRow, parse_ts, parse_uuid, placeholders, state_col, ts};
use crate::error::{Error, Result};
use crate::states::deliveries::DeliveryStatus;
use crate::store::{Job, JobKind};
use chrono::{DateTime, Utc};
use sqlx::any::AnyRow;
use sqlx::{AssertSqlSafe, Row};
use std::collections::HashMap;
use uuid::Uuid;

/// A delivery as the API lists it.
#[derive(Debug, Clone)]
pub struct DeliveryRow {
    pub endpoint: Uuid,
    pub event: Uuid,
    pub event_type: String,
    pub status: DeliveryStatus,
    pub attempts: i64,
    /// None while PENDING: held, its endpoint disabled
    pub next_attempt_at: Option<DateTime<Utc>>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    pub delivered_at: Option<DateTime<Utc>>,
}

/// One attempt, as recorded.
#[derive(Debug, Clone)]
pub struct AttemptRow {
    pub attempted_at: DateTime<Utc>,
    /// the receiver's answer, if it answered
    pub status_code: Option<i64>,
    pub latency_ms: i64,
    /// the first 1 KiB of the answer's body
    pub response_body: Option<String>,
    /// why there was no answer (a timeout, a refused connection)
    pub error: Option<String>,
}

/// What the sender needs to make an attempt of one delivery.
#[derive(Debug, Clone)]
pub struct DeliveryWork {
    pub endpoint: WebhookEndpointRow,
    pub event: EventRow,
    pub org: Uuid,
    pub status: DeliveryStatus,
    pub round_started_at: DateTime<Utc>,
    /// attempts of this round so far
    pub round_attempts: i64,
    /// attempts ever made
    pub attempts: i64,
}

/// How an attempt's delivery stands after it: its status (as the
/// delivery table moves it), and when it is tried again, if it is.
#[derive(Debug, Clone)]
pub struct After {
    pub status: DeliveryStatus,
    pub retry_at: Option<DateTime<Utc>>,
}

/// What one claimed delivery job came to, for `record_deliveries`.
#[derive(Debug)]
pub enum Recorded {
    /// an attempt was made
    Attempt { job: Job, endpoint: Uuid, event: Uuid, attempt: AttemptRow, after: After },
    /// its endpoint is disabled: the delivery waits, without a job, for
    /// the endpoint to be enabled
    Hold { job: Job, endpoint: Uuid, event: Uuid },
    /// nothing to do (delivered already, or its endpoint is gone)
    Nothing { job: Job },
}

/// The job subject of a delivery.
pub fn delivery_subject(endpoint: Uuid, event: Uuid) -> String {
    format!("{endpoint}/{event}")
}

/// The delivery a job subject names.
pub fn parse_delivery_subject(subject: &str) -> Result<(Uuid, Uuid)> {
    let bad = || Error::Internal(format!("webhook delivery job subject {subject:?}"));
    let (endpoint, event) = subject.split_once('/').ok_or_else(bad)?;
    Ok((Uuid::parse_str(endpoint).map_err(|_| bad())?, Uuid::parse_str(event).map_err(|_| bad())?))
}

fn ts_opt(r: &AnyRow, col: &str) -> Result<Option<DateTime<Utc>>> {
    r.try_get::<Option<String>, _>(col)?.as_deref().map(parse_ts).transpose()
}

fn delivery_from_row(r: &AnyRow) -> Result<(i64, DeliveryRow)> {
    Ok((
        r.try_get("seq")?,
        DeliveryRow {
            endpoint: parse_uuid(&r.try_get::<String, _>("endpoint_id")?)?,
            event: parse_uuid(&r.try_get::<String, _>("event_id")?)?,
            event_type: r.try_get("event_type")?,
            status: state_col(r, "status")?,
            attempts: r.try_get("attempts")?,
            next_attempt_at: ts_opt(r, "next_attempt_at")?,
            created_at: parse_ts(&r.try_get::<String, _>("created_at")?)?,
            updated_at: parse_ts(&r.try_get::<String, _>("updated_at")?)?,
            delivered_at: ts_opt(r, "delivered_at")?,
        },
    ))
}

/// A delivery as `delivery_from_row` reads it.
const DELIVERY_SELECT: &str = "SELECT d.seq, d.endpoint_id, d.event_id, e.event_type, d.status, d.attempts, d.next_attempt_at, \
                               d.created_at, d.updated_at, d.delivered_at FROM webhook_deliveries d JOIN events e ON e.id = d.event_id";

/// Rows of one multi-row INSERT; well under either database's limit of
/// bound values.
const INSERT_CHUNK: usize = 100;

impl Store {
    /// Whether an event waits for the dispatcher (a read: an idle
    /// dispatcher costs no write).
    pub async fn undispatched_events(&self) -> Result<bool> {
        Ok(sqlx::query("SELECT 1 FROM events WHERE dispatched_at IS NULL LIMIT 1").fetch_optional(&self.pool).await?.is_some())
    }

    /// Dispatches up to `limit` of the oldest events not yet dispatched, in
    /// one transaction: a delivery and its job, due now, for each enabled
    /// endpoint of the event's organisation that wants its type, and the
    /// events marked dispatched. On PostgreSQL the events are locked
    /// (`SKIP LOCKED`), so instances dispatch different ones. The number of
    /// events and of deliveries made.
    pub async fn dispatch_events(&self, now: DateTime<Utc>, limit: i64) -> Result<(usize, usize)> {
        let lock = match self.backend {
            Backend::Postgres => " FOR UPDATE SKIP LOCKED",
            Backend::Sqlite => "",
        };
        let mut tx = self.begin().await?;
        let events =
            sqlx::query(AssertSqlSafe(format!("SELECT seq, id, org_id, event_type FROM events WHERE dispatched_at IS NULL ORDER BY seq LIMIT $1{lock}")))
                .bind(limit)
                .fetch_all(tx.conn().await?)
                .await?;
        if events.is_empty() {
            return Ok((0, 0));
        }
        let events: Vec<(i64, String, String, String)> =
            events.iter().map(|r| Ok((r.try_get("seq")?, r.try_get("id")?, r.try_get("org_id")?, r.try_get("event_type")?))).collect::<Result<_>>()?;
        let mut orgs: Vec<&str> = events.iter().map(|e| e.2.as_str()).collect();
        orgs.sort_unstable();
        orgs.dedup();
        let mut q = sqlx::query(AssertSqlSafe(format!(
            "SELECT id, org_id, events FROM webhook_endpoints WHERE status = 'ENABLED' AND org_id IN ({})",
            placeholders(1, orgs.len())
        )));
        for o in &orgs {
            q = q.bind(o.to_string());
        }
        let mut endpoints: HashMap<String, Vec<(String, Vec<String>)>> = HashMap::new();
        for r in q.fetch_all(tx.conn().await?).await? {
            let types: Vec<String> = super::json_col(&r, "events")?.unwrap_or_default();
            endpoints.entry(r.try_get("org_id")?).or_default().push((r.try_get("id")?, types));
        }
        // (org, endpoint, event)
        let mut deliveries: Vec<(&str, &str, &str)> = vec![];
        for (_, id, org, event_type) in &events {
            for (endpoint, types) in endpoints.get(org).map(Vec::as_slice).unwrap_or_default() {
                if types.iter().any(|t| t == "*" || t == event_type) {
                    deliveries.push((org, endpoint, id));
                }
            }
        }
        for chunk in deliveries.chunks(INSERT_CHUNK) {
            let rows: Vec<String> = (0..chunk.len()).map(|i| format!("({}, 'PENDING', $1, $1, $1, $1)", placeholders(2 + 3 * i, 3))).collect();
            let mut q = sqlx::query(AssertSqlSafe(format!(
                "INSERT INTO webhook_deliveries (org_id, endpoint_id, event_id, status, round_started_at, next_attempt_at, created_at, updated_at)
                 VALUES {} ON CONFLICT (endpoint_id, event_id) DO NOTHING",
                rows.join(", ")
            )))
            .bind(ts(now));
            for (org, endpoint, event) in chunk {
                q = q.bind(org.to_string()).bind(endpoint.to_string()).bind(event.to_string());
            }
            tx.execute(q).await?;
            let rows: Vec<String> = (0..chunk.len()).map(|i| format!("($1, {}, $2, $2)", placeholders(3 + 2 * i, 2))).collect();
            let mut q = sqlx::query(AssertSqlSafe(format!(
                "INSERT INTO jobs (kind, subject, org_id, due_at, created_at) VALUES {} ON CONFLICT (kind, subject) DO NOTHING",
                rows.join(", ")
            )))
            .bind(JobKind::WebhookDelivery.as_str())
            .bind(ts(now));
            for (org, endpoint, event) in chunk {
                q = q.bind(format!("{endpoint}/{event}")).bind(org.to_string());
            }
            tx.execute(q).await?;
        }
        // this batch's number, in the order batches commit: the counter's
        // row stays held until this commit (one writer on SQLite), so a
        // follower of the log never sees a batch before one numbered below
        // it (`events_after`). Taken last, so that dispatchers on other
        // instances wait for it only while this one commits.
        let batch: i64 = sqlx::query("UPDATE event_log_batches SET batch = batch + 1 WHERE log = 'events' RETURNING batch")
            .fetch_one(tx.conn().await?)
            .await?
            .try_get("batch")?;
        let mut q =
            sqlx::query(AssertSqlSafe(format!("UPDATE events SET dispatched_at = $1, log_batch = $2 WHERE seq IN ({})", placeholders(3, events.len()))))
                .bind(ts(now))
                .bind(batch);
        for (seq, ..) in &events {
            q = q.bind(*seq);
        }
        tx.execute(q).await?;
        tx.commit().await?;
        Ok((events.len(), deliveries.len()))
    }

    /// What the sender needs for the deliveries `keys` (endpoint, event);
    /// those that no longer exist are left out.
    pub async fn delivery_work(&self, keys: &[(Uuid, Uuid)]) -> Result<Vec<DeliveryWork>> {
        if keys.is_empty() {
            return Ok(vec![]);
        }
        let pairs: Vec<String> = (0..keys.len()).map(|i| format!("(d.endpoint_id = ${} AND d.event_id = ${})", 2 * i + 1, 2 * i + 2)).collect();
        let mut q = sqlx::query(AssertSqlSafe(format!(
            "SELECT d.endpoint_id, d.org_id, d.status, d.round_started_at, d.round_attempts, d.attempts,
                    e.seq, e.id, e.event_type, e.occurred_at, e.data
             FROM webhook_deliveries d JOIN events e ON e.id = d.event_id WHERE {}",
            pairs.join(" OR ")
        )));
        for (endpoint, event) in keys {
            q = q.bind(endpoint.to_string()).bind(event.to_string());
        }
        let rows = q.fetch_all(&self.pool).await?;
        let mut endpoint_ids: Vec<String> = rows.iter().map(|r| r.try_get("endpoint_id")).collect::<std::result::Result<_, _>>()?;
        endpoint_ids.sort_unstable();
        endpoint_ids.dedup();
        let endpoints: HashMap<Uuid, WebhookEndpointRow> = self.webhook_endpoints_by_id(&endpoint_ids).await?.into_iter().map(|e| (e.id, e)).collect();
        let mut work = vec![];
        for r in &rows {
            let Some(endpoint) = endpoints.get(&parse_uuid(&r.try_get::<String, _>("endpoint_id")?)?) else {
                continue;
            };
            work.push(DeliveryWork {
                endpoint: endpoint.clone(),
                event: super::events::from_row(r)?.1,
                org: parse_uuid(&r.try_get::<String, _>("org_id")?)?,
                status: state_col(r, "status")?,
                round_started_at: parse_ts(&r.try_get::<String, _>("round_started_at")?)?,
                round_attempts: r.try_get("round_attempts")?,
                attempts: r.try_get("attempts")?,
            });
        }
        Ok(work)
    }

    /// Records what claimed delivery jobs came to, in one transaction:
    /// each attempt and its delivery's new state, each job finished or due
    /// again, and each endpoint's failing streak (`failing`: endpoint ->
    /// whether its last attempt here failed). Endpoints in `give_up` are
    /// disabled as FAILING, and their pending deliveries held.
    pub async fn record_deliveries(&self, recorded: &[Recorded], failing: &HashMap<Uuid, bool>, give_up: &[Uuid], now: DateTime<Utc>) -> Result<()> {
        let mut tx = self.begin().await?;
        for r in recorded {
            match r {
                Recorded::Attempt { job, endpoint, event, attempt, after } => {
                    let (endpoint, event) = (endpoint.to_string(), event.to_string());
                    tx.execute(
                        sqlx::query(
                            "INSERT INTO webhook_attempts (endpoint_id, event_id, number, attempted_at, status_code, latency_ms, response_body, error)
                             SELECT $1, $2, attempts + 1, $3, $4, $5, $6, $7 FROM webhook_deliveries WHERE endpoint_id = $1 AND event_id = $2",
                        )
                        .bind(endpoint.clone())
                        .bind(event.clone())
                        .bind(ts(attempt.attempted_at))
                        .bind(attempt.status_code)
                        .bind(attempt.latency_ms)
                        .bind(attempt.response_body.clone())
                        .bind(attempt.error.clone()),
                    )
                    .await?;
                    let delivered = (after.status == DeliveryStatus::Succeeded).then(|| ts(attempt.attempted_at));
                    let (status, next) = (after.status, after.retry_at.map(ts));
                    tx.execute(
                        sqlx::query(
                            "UPDATE webhook_deliveries SET status = $1, next_attempt_at = $2, delivered_at = COALESCE($3, delivered_at),
                                    attempts = attempts + 1, round_attempts = round_attempts + 1, updated_at = $4
                             WHERE endpoint_id = $5 AND event_id = $6",
                        )
                        .bind(status.stored())
                        .bind(next)
                        .bind(delivered)
                        .bind(ts(now))
                        .bind(endpoint)
                        .bind(event),
                    )
                    .await?;
                    match after.retry_at {
                        Some(at) => Store::retry_job_in(&mut tx, job, &attempt.summary(), at).await?,
                        None => Store::finish_job_in(&mut tx, job).await?,
                    }
                }
                Recorded::Hold { job, endpoint, event } => {
                    tx.execute(
                        sqlx::query("UPDATE webhook_deliveries SET next_attempt_at = NULL, updated_at = $1 WHERE endpoint_id = $2 AND event_id = $3 AND status = 'PENDING'")
                            .bind(ts(now))
                            .bind(endpoint.to_string())
                            .bind(event.to_string()),
                    )
                    .await?;
                    Store::finish_job_in(&mut tx, job).await?;
                }
                Recorded::Nothing { job } => Store::finish_job_in(&mut tx, job).await?,
            }
        }
        for (endpoint, failed) in failing {
            let q = if *failed {
                sqlx::query("UPDATE webhook_endpoints SET failing_since = COALESCE(failing_since, $1) WHERE id = $2").bind(ts(now))
            } else {
                sqlx::query("UPDATE webhook_endpoints SET failing_since = NULL WHERE id = $1 AND failing_since IS NOT NULL")
            };
            tx.execute(q.bind(endpoint.to_string())).await?;
        }
        for endpoint in give_up {
            let endpoint = endpoint.to_string();
            tx.execute(
                sqlx::query(
                    "UPDATE webhook_endpoints SET status = 'DISABLED', disabled_reason = 'FAILING', updated_at = $1
                     WHERE id = $2 AND status = 'ENABLED'",
                )
                .bind(ts(now))
                .bind(endpoint.clone()),
            )
            .await?;
            Store::hold_deliveries(&mut tx, &endpoint, now).await?;
        }
        tx.commit().await
    }

    /// One page of an endpoint's deliveries, oldest first, with each one's
    /// attempts.
    pub async fn webhook_deliveries(
        &self,
        org: Uuid,
        endpoint: Uuid,
        status: Option<DeliveryStatus>,
        after: Option<Cursor>,
        limit: usize,
    ) -> Result<Page<(DeliveryRow, Vec<AttemptRow>)>> {
        let mut q = ListQuery::new(format!("{DELIVERY_SELECT} WHERE d.org_id = $1 AND d.seq > $2"));
        q.eq("d.endpoint_id", endpoint.to_string());
        if let Some(s) = status {
            q.eq("d.status", s.stored().to_string());
        }
        let rows = q.fetch(&self.pool, org, after, "d.seq", limit).await?;
        let page = Page::from_rows(rows.iter().map(delivery_from_row).collect::<Result<_>>()?, limit);
        let mut attempts = self.webhook_attempts(endpoint, page.items.iter().map(|d| d.event)).await?;
        Ok(Page {
            items: page
                .items
                .into_iter()
                .map(|d| {
                    let a = attempts.remove(&d.event).unwrap_or_default();
                    (d, a)
                })
                .collect(),
            next: page.next,
        })
    }

    /// `org`'s enabled endpoints that select `event_type`.
    pub async fn webhook_endpoints_for(&self, org: Uuid, event_type: &str) -> Result<Vec<Uuid>> {
        let rows = sqlx::query("SELECT id, events FROM webhook_endpoints WHERE org_id = $1 AND status = 'ENABLED' ORDER BY seq")
            .bind(org.to_string())
            .fetch_all(&self.pool)
            .await?;
        let mut ids = vec![];
        for r in &rows {
            let types: Vec<String> = super::json_col(r, "events")?.unwrap_or_default();
            if types.iter().any(|t| t == "*" || t == event_type) {
                ids.push(parse_uuid(&r.try_get::<String, _>("id")?)?);
            }
        }
        Ok(ids)
    }

    /// One delivery of `org`, with its attempts.
    pub async fn webhook_delivery(&self, org: Uuid, endpoint: Uuid, event: Uuid) -> Result<Option<(DeliveryRow, Vec<AttemptRow>)>> {
        let row = sqlx::query(AssertSqlSafe(format!("{DELIVERY_SELECT} WHERE d.org_id = $1 AND d.endpoint_id = $2 AND d.event_id = $3")))
            .bind(org.to_string())
            .bind(endpoint.to_string())
            .bind(event.to_string())
            .fetch_optional(&self.pool)
            .await?;
        let Some(delivery) = row.as_ref().map(delivery_from_row).transpose()?.map(|(_, d)| d) else { return Ok(None) };
        let attempts = self.webhook_attempts(endpoint, std::iter::once(event)).await?.remove(&event).unwrap_or_default();
        Ok(Some((delivery, attempts)))
    }

    /// The attempts of `endpoint`'s deliveries of `events`, in order.
    async fn webhook_attempts(&self, endpoint: Uuid, events: impl Iterator<Item = Uuid>) -> Result<HashMap<Uuid, Vec<AttemptRow>>> {
        let events: Vec<String> = events.map(|e| e.to_string()).collect();
        if events.is_empty() {
            return Ok(HashMap::new());
        }
        let mut q = sqlx::query(AssertSqlSafe(format!(
            "SELECT event_id, attempted_at, status_code, latency_ms, response_body, error FROM webhook_attempts
             WHERE endpoint_id = $1 AND event_id IN ({}) ORDER BY number",
            placeholders(2, events.len())
        )))
        .bind(endpoint.to_string());
        for e in events {
            q = q.bind(e);
        }
        let mut out: HashMap<Uuid, Vec<AttemptRow>> = HashMap::new();
        for r in q.fetch_all(&self.pool).await? {
            out.entry(parse_uuid(&r.try_get::<String, _>("event_id")?)?).or_default().push(AttemptRow {
                attempted_at: parse_ts(&r.try_get::<String, _>("attempted_at")?)?,
                status_code: r.try_get("status_code")?,
                latency_ms: r.try_get("latency_ms")?,
                response_body: r.try_get("response_body")?,
                error: r.try_get("error")?,
            });
        }
        Ok(out)
    }

    /// Deliveries not yet acknowledged or given up, all organisations
    /// (the bench's backlog).
    pub async fn pending_deliveries(&self) -> Result<i64> {
        Ok(sqlx::query("SELECT COUNT(*) AS n FROM webhook_deliveries WHERE status = 'PENDING'").fetch_one(&self.pool).await?.try_get("n")?)
    }
}

impl AttemptRow {
    /// One line for the job's last error.
    pub fn summary(&self) -> String {
        match (&self.error, self.status_code) {
            (Some(e), _) => e.clone(),
            (None, Some(code)) => format!("answered {code}"),
            (None, None) => "no answer".into(),
        }
    }
}
