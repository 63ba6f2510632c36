//! The event outbox: each change's event, appended in the change's
//! transaction, and the organisation's event log read back from it.

use super::{Cursor, ListQuery, Page, Store, Tx, parse_ts, parse_uuid, ts};
use crate::error::{Error, Result};
use chrono::{DateTime, Utc};
use sqlx::Row;
use sqlx::any::AnyRow;
use uuid::Uuid;

/// An event as recorded: its payload as the newest revision shows it.
#[derive(Debug, Clone)]
pub struct EventRow {
    pub id: Uuid,
    pub event_type: String,
    pub occurred_at: DateTime<Utc>,
    pub data: serde_json::Value,
}

/// Which events of the log to list.
#[derive(Debug, Default)]
pub struct EventFilter {
    /// only these types (all when empty)
    pub types: Vec<String>,
    /// only events that occurred after this
    pub after: Option<DateTime<Utc>>,
    /// only events that occurred before this
    pub before: Option<DateTime<Utc>>,
}

const COLUMNS: &str = "seq, id, event_type, occurred_at, data";

/// Where a follower of the log stands (`Store::events_after`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogPosition {
    /// before every event
    Start,
    /// after every event listed so far
    End,
    /// after this event
    After(Uuid),
}

/// A follower's page: the events after its position, and where it stands
/// after them.
#[derive(Debug)]
pub struct LogPage {
    pub items: Vec<EventRow>,
    pub next: LogPosition,
}

pub(super) fn from_row(r: &AnyRow) -> Result<(i64, EventRow)> {
    let data: String = r.try_get("data")?;
    Ok((
        r.try_get("seq")?,
        EventRow {
            id: parse_uuid(&r.try_get::<String, _>("id")?)?,
            event_type: r.try_get("event_type")?,
            occurred_at: parse_ts(&r.try_get::<String, _>("occurred_at")?)?,
            data: serde_json::from_str(&data).map_err(|e| Error::Internal(format!("stored event data: {e}")))?,
        },
    ))
}

impl Store {
    /// Appends an event to the outbox, inside the transaction of the change
    /// it tells of. Only `events::record` calls this (with a typed event).
    pub(crate) async fn record_event(tx: &mut Tx, org: uuid::Uuid, event_type: &str, occurred_at: DateTime<Utc>, data: &serde_json::Value) -> Result<()> {
        tx.execute(
            sqlx::query(super::prepared::INSERT_EVENT)
                .bind(super::new_id().to_string())
                .bind(org.to_string())
                .bind(event_type)
                .bind(ts(occurred_at))
                .bind(data.to_string()),
        )
        .await?;
        tx.webhooks_changed();
        Ok(())
    }

    /// Event types recorded for an organisation, oldest first (operator and
    /// test inspection until webhook delivery reads the outbox).
    pub async fn event_types(&self, org: uuid::Uuid) -> Result<Vec<(String, serde_json::Value)>> {
        let rows = sqlx::query("SELECT event_type, data FROM events WHERE org_id = $1 ORDER BY seq").bind(org.to_string()).fetch_all(&self.pool).await?;
        rows.iter()
            .map(|r| {
                let data: String = r.try_get("data")?;
                Ok((r.try_get("event_type")?, serde_json::from_str(&data).map_err(|e| Error::Internal(e.to_string()))?))
            })
            .collect()
    }

    /// One page of `org`'s events, oldest first.
    pub async fn events(&self, org: Uuid, filter: &EventFilter, after: Option<Cursor>, limit: usize) -> Result<Page<EventRow>> {
        let mut q = ListQuery::new(format!("SELECT {COLUMNS} FROM events WHERE org_id = $1 AND seq > $2"));
        if !filter.types.is_empty() {
            q.any_of("event_type", filter.types.iter().cloned());
        }
        if let Some(t) = filter.after {
            q.condition(ts(t), |p| format!("occurred_at > {p}"));
        }
        if let Some(t) = filter.before {
            q.condition(ts(t), |p| format!("occurred_at < {p}"));
        }
        let rows = q.fetch(&self.pool, org, after, "seq", limit).await?;
        Ok(Page::from_rows(rows.iter().map(from_row).collect::<Result<_>>()?, limit))
    }

    /// Up to `limit` of `org`'s events after `from` in the order they were
    /// recorded (the dispatcher's batches, then seq: see migration 0025),
    /// matching `filter`. An event appears here once the dispatcher has
    /// taken it, a moment after its commit. None when `from` names no event
    /// of `org`.
    pub async fn events_after(&self, org: Uuid, filter: &EventFilter, from: LogPosition, limit: usize) -> Result<Option<LogPage>> {
        let (batch, seq) = match from {
            LogPosition::Start => (-1, 0),
            LogPosition::End => {
                let newest = sqlx::query("SELECT id FROM events WHERE org_id = $1 AND log_batch IS NOT NULL ORDER BY log_batch DESC, seq DESC LIMIT 1")
                    .bind(org.to_string())
                    .fetch_optional(&self.pool)
                    .await?;
                let next = match newest {
                    Some(r) => LogPosition::After(parse_uuid(&r.try_get::<String, _>("id")?)?),
                    None => LogPosition::Start,
                };
                return Ok(Some(LogPage { items: vec![], next }));
            }
            LogPosition::After(id) => {
                let at = sqlx::query("SELECT log_batch, seq FROM events WHERE org_id = $1 AND id = $2")
                    .bind(org.to_string())
                    .bind(id.to_string())
                    .fetch_optional(&self.pool)
                    .await?;
                let Some(at) = at else { return Ok(None) };
                match at.try_get::<Option<i64>, _>("log_batch")? {
                    Some(batch) => (batch, at.try_get::<i64, _>("seq")?),
                    // not in the log's order yet: nothing is after it yet
                    None => return Ok(Some(LogPage { items: vec![], next: from })),
                }
            }
        };
        let mut sql = format!("SELECT {COLUMNS} FROM events WHERE org_id = $1 AND log_batch IS NOT NULL AND (log_batch > $2 OR (log_batch = $2 AND seq > $3))");
        let mut texts: Vec<String> = vec![];
        if !filter.types.is_empty() {
            sql += &format!(" AND event_type IN ({})", super::placeholders(4, filter.types.len()));
            texts.extend(filter.types.iter().cloned());
        }
        for (bound, op) in [(filter.after, ">"), (filter.before, "<")] {
            if let Some(t) = bound {
                texts.push(ts(t));
                sql += &format!(" AND occurred_at {op} ${}", 3 + texts.len());
            }
        }
        sql += &format!(" ORDER BY log_batch, seq LIMIT ${}", 4 + texts.len());
        let mut q = sqlx::query(sqlx::AssertSqlSafe(sql)).bind(org.to_string()).bind(batch).bind(seq);
        for t in texts {
            q = q.bind(t);
        }
        let rows = q.bind(limit as i64).fetch_all(&self.pool).await?;
        let items: Vec<EventRow> = rows.iter().map(|r| Ok(from_row(r)?.1)).collect::<Result<_>>()?;
        let next = items.last().map_or(from, |e| LogPosition::After(e.id));
        Ok(Some(LogPage { items, next }))
    }

    pub async fn event(&self, org: Uuid, id: Uuid) -> Result<Option<EventRow>> {
        let row = sqlx::query(sqlx::AssertSqlSafe(format!("SELECT {COLUMNS} FROM events WHERE org_id = $1 AND id = $2")))
            .bind(org.to_string())
            .bind(id.to_string())
            .fetch_optional(&self.pool)
            .await?;
        Ok(row.as_ref().map(from_row).transpose()?.map(|(_, e)| e))
    }
}
