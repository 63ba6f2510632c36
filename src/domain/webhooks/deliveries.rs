//! Deliveries: their transition table (the sender's outcomes and a
//! delivery sent again), and what the API shows and does with them: an
//! endpoint's deliveries with their attempts, an event sent again (to one
//! endpoint or all), and a window of events replayed to an endpoint that
//! missed them.

use super::endpoints::{Owner, find};
use crate::error::{Error, InternalCode, Result};
use crate::states::agreed;
use crate::states::deliveries::{DELIVERY, DeliveryStatus as Status, Move};
use crate::store::{AttemptRow, Cursor, DeliveryRow, Store, Which, limit_or_default};
use crate::wire::latest as wire;
use crate::wire::latest::params::WebhookDeliveryListQuery;
use uuid::Uuid;

/// Whether a delivery in `status` is attempted (claimed by the sender).
pub fn attempted(status: Status) -> bool {
    DELIVERY.target(Move::Acknowledged, status).is_some()
}

/// The status a PENDING delivery's attempt leaves it in.
pub fn after_attempt(m: Move) -> Result<Status> {
    agreed(DELIVERY.target(m, Status::Pending), "a webhook delivery's attempt")
}

fn to_wire(d: DeliveryRow, attempts: Vec<AttemptRow>) -> Result<wire::WebhookDelivery> {
    Ok(wire::WebhookDelivery {
        webhook_endpoint_id: d.endpoint,
        event_id: d.event,
        event_type: d.event_type,
        status: d.status.into(),
        attempt_count: d.attempts,
        next_attempt_at: d.next_attempt_at,
        delivered_at: d.delivered_at,
        attempts: attempts
            .into_iter()
            .map(|a| wire::WebhookDeliveryAttempt {
                attempted_at: a.attempted_at,
                status_code: a.status_code,
                latency_ms: a.latency_ms,
                response_body: a.response_body,
                error: a.error,
            })
            .collect(),
        created_at: d.created_at,
        updated_at: d.updated_at,
    })
}

pub async fn list(o: &Owner<'_>, endpoint: &str, q: WebhookDeliveryListQuery) -> Result<wire::WebhookDeliveryList> {
    let endpoint = find(o, endpoint).await?;
    let after = q.cursor.as_deref().map(Cursor::decode).transpose()?;
    let wanted = match q.status.as_deref() {
        None => None,
        Some(s) => match s.parse::<wire::WebhookDeliveryStatus>() {
            Ok(d) => Some(Status::from(d)),
            // no delivery is in a status of another name
            Err(_) => return Ok(wire::WebhookDeliveryList { items: vec![], pagination: wire::Pagination { next_cursor: None } }),
        },
    };
    let page = o.store.webhook_deliveries(o.org, endpoint.id, wanted, after, limit_or_default(q.limit)).await?;
    Ok(wire::WebhookDeliveryList {
        items: page.items.into_iter().map(|(d, a)| to_wire(d, a)).collect::<Result<_>>()?,
        pagination: wire::Pagination { next_cursor: page.next.map(Cursor::encode) },
    })
}

fn disabled() -> Error {
    Error::Conflict {
        code: InternalCode::WebhookEndpointDisabled,
        message: "the webhook endpoint is DISABLED: enable it first".into(),
        property: "webhookEndpointId",
    }
}

/// Sends event `id` again: to `req`'s endpoint, or to every enabled
/// endpoint that selects its type.
pub async fn redeliver(o: &Owner<'_>, id: &str, req: wire::RedeliverEventRequest) -> Result<wire::EventRedelivery> {
    let missing = || Error::not_found(InternalCode::EventNotFound, "event");
    let event = o.store.event(o.org, Uuid::parse_str(id).map_err(|_| missing())?).await?.ok_or_else(missing)?;
    let endpoints = match req.webhook_endpoint_id {
        Some(e) => {
            let endpoint = find(o, &e.to_string()).await?;
            if !endpoint.enabled() {
                return Err(disabled());
            }
            vec![endpoint.id]
        }
        None => o.store.webhook_endpoints_for(o.org, &event.event_type).await?,
    };
    // The answer is built from what was there before the write plus what
    // the write does: an idempotent request's write is not visible to
    // another connection until its stored answer commits with it.
    let mut items = vec![];
    for endpoint in &endpoints {
        let before = o.store.webhook_delivery(o.org, *endpoint, event.id).await?;
        let (delivery, attempts) = before.unwrap_or_else(|| {
            let d = DeliveryRow {
                endpoint: *endpoint,
                event: event.id,
                event_type: event.event_type.clone(),
                status: Status::Pending,
                attempts: 0,
                next_attempt_at: None,
                created_at: o.now,
                updated_at: o.now,
                delivered_at: None,
            };
            (d, vec![])
        });
        let status = agreed(DELIVERY.target(Move::SentAgain, delivery.status), "a webhook delivery sent again")?;
        let queued = DeliveryRow { status, next_attempt_at: Some(o.now), updated_at: o.now, ..delivery };
        items.push(to_wire(queued, attempts)?);
    }
    let mut tx = o.store.begin().await?;
    for endpoint in &endpoints {
        Store::queue_deliveries(&mut tx, o.org, *endpoint, Which::Event(event.id), o.now).await?;
    }
    tx.commit().await?;
    Ok(wire::EventRedelivery { event_id: event.id, items })
}

/// The longest window one replay takes: a longer one is cut after it,
/// and the rest replayed from there.
const REPLAY_MAX_DAYS: i64 = 31;
/// The most events one replay queues: past them it stops, and says where.
pub const REPLAY_MAX_EVENTS: i64 = 10_000;

/// Queues to an endpoint the events of [since, until) of the types it
/// selects that it has not acknowledged: at most `REPLAY_MAX_DAYS` of them
/// and at most `REPLAY_MAX_EVENTS`, the window cut where either ends (the
/// answer's `until`).
pub async fn replay(o: &Owner<'_>, endpoint: &str, req: wire::ReplayWebhookEndpointRequest) -> Result<wire::WebhookReplay> {
    let endpoint = find(o, endpoint).await?;
    // an empty window (until not after since) queues nothing, as a list
    // filtered by such a window shows nothing
    let until = req.until.unwrap_or(o.now);
    if !endpoint.enabled() {
        return Err(disabled());
    }
    if until <= req.since {
        return Ok(wire::WebhookReplay { webhook_endpoint_id: endpoint.id, since: req.since, until, queued: 0 });
    }
    // a longer window is cut as a full one is: the answer's `until` says
    // where to go on from
    let until = until.min(req.since + chrono::Duration::days(REPLAY_MAX_DAYS));
    let until = o.store.replay_cut(o.org, endpoint.id, req.since, until, &endpoint.events, REPLAY_MAX_EVENTS).await?.unwrap_or(until);
    let mut tx = o.store.begin().await?;
    let which = Which::Missed { since: req.since, until, types: &endpoint.events };
    let queued = Store::queue_deliveries(&mut tx, o.org, endpoint.id, which, o.now).await?;
    tx.commit().await?;
    Ok(wire::WebhookReplay { webhook_endpoint_id: endpoint.id, since: req.since, until, queued: queued.try_into().unwrap_or(i64::MAX) })
}

#[cfg(test)]
mod tests {
    /// The Webhooks tag of every document publishes this table.
    #[test]
    fn the_documents_publish_the_table() {
        for document in crate::wire::DOCUMENTS {
            let tag = crate::states::tag_description(document, "Webhooks");
            assert!(tag.contains(&super::DELIVERY.markdown()), "the Webhooks tag lacks the table:\n{}", super::DELIVERY.markdown());
        }
    }
}
