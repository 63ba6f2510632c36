//! The event log: an organisation's recorded events, each as a webhook
//! delivery carries it (the envelope, its payload in the organisation's
//! webhook revision, whatever revision the reader asks in).

use super::revision;
use crate::error::{Error, InternalCode, Result};
use crate::events::Event;
use crate::store::{Cursor, EventFilter, EventRow, LogPosition, Store, limit_or_default};
use crate::wire::latest as wire;
use crate::wire::latest::params::EventListQuery;
use crate::wire::revision::Revision;
use chrono::{DateTime, Utc};
use uuid::Uuid;

/// The envelope of `row` in `revision`.
pub fn envelope(row: EventRow, revision: &Revision) -> Result<wire::EventEnvelope> {
    let data = Event::parse(&row.event_type, row.data)?.render(revision.name)?;
    Ok(wire::EventEnvelope { event_id: row.id, type_: row.event_type, occurred_at: row.occurred_at, data, api_revision: revision.name.to_string() })
}

fn time(param: &str, value: Option<&str>) -> Result<Option<DateTime<Utc>>> {
    value
        .map(|v| {
            DateTime::parse_from_rfc3339(v)
                .map(|t| t.with_timezone(&Utc))
                .map_err(|_| Error::invalid(param, "invalid_format", "must be an RFC 3339 date-time, e.g. 2026-09-01T10:00:00Z"))
        })
        .transpose()
}

pub async fn list(store: &Store, org: Uuid, now: DateTime<Utc>, q: EventListQuery) -> Result<wire::EventList> {
    let filter =
        EventFilter { types: q.type_, after: time("createdAfter", q.created_after.as_deref())?, before: time("createdBefore", q.created_before.as_deref())? };
    let revision = revision::of(store, org, now.date_naive()).await?;
    let envelopes = |items: Vec<EventRow>| items.into_iter().map(|e| envelope(e, revision)).collect::<Result<Vec<_>>>();
    if let Some(after) = q.after.as_deref() {
        if q.cursor.is_some() {
            return Err(Error::invalid("after", "conflicts_with_cursor", "follows the log by itself: give after or cursor, not both"));
        }
        let page = store.events_after(org, &filter, position(after)?, limit_or_default(q.limit)).await?;
        let page = page.ok_or_else(|| Error::NotFound {
            code: InternalCode::EventNotFound,
            message: "No event of this organisation has the eventId of after.".into(),
            property: "after",
        })?;
        return Ok(wire::EventList { items: envelopes(page.items)?, pagination: wire::Pagination { next_cursor: Some(position_text(page.next)) } });
    }
    let after = q.cursor.as_deref().map(Cursor::decode).transpose()?;
    let page = store.events(org, &filter, after, limit_or_default(q.limit)).await?;
    Ok(wire::EventList { items: envelopes(page.items)?, pagination: wire::Pagination { next_cursor: page.next.map(Cursor::encode) } })
}

/// `after` as a position in the log. Public for the fuzz targets.
#[doc(hidden)]
pub fn position(after: &str) -> Result<LogPosition> {
    match after {
        "start" => Ok(LogPosition::Start),
        "end" => Ok(LogPosition::End),
        id => Uuid::parse_str(id).map(LogPosition::After).map_err(|_| Error::invalid("after", "invalid_format", "must be start, end or an eventId")),
    }
}

/// A position as `after` names it.
#[doc(hidden)]
pub fn position_text(p: LogPosition) -> String {
    match p {
        LogPosition::Start => "start".into(),
        LogPosition::End => "end".into(),
        LogPosition::After(id) => id.to_string(),
    }
}

pub async fn view(store: &Store, org: Uuid, now: DateTime<Utc>, id: &str) -> Result<wire::EventEnvelope> {
    let missing = || Error::not_found(InternalCode::EventNotFound, "event");
    let id = Uuid::parse_str(id).map_err(|_| missing())?;
    let row = store.event(org, id).await?.ok_or_else(missing)?;
    envelope(row, revision::of(store, org, now.date_naive()).await?)
}
