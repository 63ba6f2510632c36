//! Webhook endpoints: registering, changing, disabling and deleting the
//! URLs that receive an organisation's events, and rotating their secrets.
//! The API (the organisation's key alone) and the operator's CLI share
//! these functions.

use super::{address, secret};
use crate::config::WebhookUrls;
use crate::error::{Error, InternalCode, Result};
use crate::states::{Operation, Table};
use crate::store::{Cursor, Store, WebhookEndpointRow, limit_or_default};
use crate::wire::latest as wire;
use chrono::{DateTime, Duration, Utc};
use uuid::Uuid;

/// At most this many endpoints per organisation.
pub const MAX_PER_ORGANISATION: i64 = 16;

/// How long the secret before a rotation keeps signing beside the new one.
pub fn previous_secret_lifetime() -> Duration {
    Duration::hours(24)
}

/// An endpoint's status: enabled, or disabled and why.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Enabled,
    Disabled(Reason),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reason {
    /// the integrator or the operator disabled it
    Manual,
    /// every delivery attempt failed for 5 days
    Failing,
}

impl std::fmt::Display for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Status::Enabled => "ENABLED",
            Status::Disabled(Reason::Manual) => "DISABLED (MANUAL)",
            Status::Disabled(Reason::Failing) => "DISABLED (FAILING)",
        })
    }
}

/// What moves an endpoint's status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Move {
    Enable,
    Disable,
    /// the delivery worker gave up on it
    GiveUp,
}

impl Operation for Move {
    fn name(self) -> &'static str {
        match self {
            Move::Enable => "update with status ENABLED",
            Move::Disable => "update with status DISABLED",
            Move::GiveUp => "every attempt failing for 5 days",
        }
    }

    fn done(self) -> &'static str {
        match self {
            Move::Enable => "enabled",
            Move::Disable => "disabled",
            Move::GiveUp => "given up on",
        }
    }

    fn requested(self) -> bool {
        self != Move::GiveUp
    }
}

const ALL: &[Status] = &[Status::Enabled, Status::Disabled(Reason::Manual), Status::Disabled(Reason::Failing)];

/// The one table of an endpoint's moves (the Webhooks tag of the documents
/// shows it). A request may move every status: enabling an enabled
/// endpoint or disabling a disabled one changes nothing, and a manual
/// disable keeps the reason an endpoint already had; only an enabled
/// endpoint is given up on.
pub const ENDPOINT: Table<Status, Move> = Table {
    resource: "webhook endpoint",
    states: ALL,
    moves: &[
        (Move::Enable, ALL, Status::Enabled),
        (Move::Disable, &[Status::Enabled, Status::Disabled(Reason::Manual)], Status::Disabled(Reason::Manual)),
        (Move::Disable, &[Status::Disabled(Reason::Failing)], Status::Disabled(Reason::Failing)),
        (Move::GiveUp, &[Status::Enabled], Status::Disabled(Reason::Failing)),
    ],
    // (every status has a move for every request)
    refused: |_| InternalCode::Conflict,
};

impl Status {
    /// The status after `m`, as `ENDPOINT` says (a move it has none for
    /// changes nothing).
    pub fn after(self, m: Move) -> Status {
        ENDPOINT.target(m, self).unwrap_or(self)
    }

    fn of(row: &WebhookEndpointRow) -> Result<Status> {
        match (row.status.as_str(), row.disabled_reason.as_deref()) {
            ("ENABLED", _) => Ok(Status::Enabled),
            ("DISABLED", Some("FAILING")) => Ok(Status::Disabled(Reason::Failing)),
            ("DISABLED", _) => Ok(Status::Disabled(Reason::Manual)),
            (other, _) => Err(Error::Internal(format!("webhook endpoint {}: unknown status {other:?}", row.id))),
        }
    }

    fn store(self, row: &mut WebhookEndpointRow) {
        let (status, reason) = match self {
            Status::Enabled => ("ENABLED", None),
            Status::Disabled(Reason::Manual) => ("DISABLED", Some("MANUAL")),
            Status::Disabled(Reason::Failing) => ("DISABLED", Some("FAILING")),
        };
        row.status = status.into();
        row.disabled_reason = reason.map(Into::into);
    }
}

/// The organisation an endpoint call acts for, when, and which URLs it
/// may register.
pub struct Owner<'a> {
    pub store: &'a Store,
    pub org: Uuid,
    pub now: DateTime<Utc>,
    pub urls: WebhookUrls,
}

/// The endpoint as the documents show it; its secret only when `secret`
/// (the answers of create and rotate-secret).
pub fn to_wire(row: WebhookEndpointRow, secret: bool) -> Result<wire::WebhookEndpoint> {
    let status = Status::of(&row)?;
    let events = row
        .events
        .iter()
        .map(|e| e.parse().map_err(|_| Error::Internal(format!("webhook endpoint {}: unknown event type {e:?}", row.id))))
        .collect::<Result<_>>()?;
    let (status, disabled_reason) = match status {
        Status::Enabled => (wire::WebhookEndpointStatus::Enabled, None),
        Status::Disabled(Reason::Manual) => (wire::WebhookEndpointStatus::Disabled, Some(wire::WebhookEndpointDisabledReason::Manual)),
        Status::Disabled(Reason::Failing) => (wire::WebhookEndpointStatus::Disabled, Some(wire::WebhookEndpointDisabledReason::Failing)),
    };
    Ok(wire::WebhookEndpoint {
        webhook_endpoint_id: row.id,
        url: row.url,
        events,
        description: row.description,
        status,
        disabled_reason,
        secret: secret.then_some(row.secret),
        previous_secret_expires_at: row.previous_secret.map(|(_, until)| until),
        created_at: row.created_at,
        updated_at: row.updated_at,
    })
}

fn event_names(events: Vec<wire::WebhookEventSelector>) -> Vec<String> {
    events.iter().map(ToString::to_string).collect()
}

pub async fn create(o: &Owner<'_>, req: wire::CreateWebhookEndpointRequest) -> Result<wire::WebhookEndpoint> {
    // kept as sent: the parsed form may be longer (percent-encoding,
    // punycode) than the documents allow
    address::check("url", &req.url, &o.urls).await?;
    let mut row = WebhookEndpointRow {
        id: crate::domain::new_id(),
        org: o.org,
        url: req.url,
        events: event_names(req.events.unwrap_or_else(|| vec![wire::WebhookEventSelector::X])),
        description: req.description,
        status: String::new(),
        disabled_reason: None,
        secret: secret::mint(),
        previous_secret: None,
        failing_since: None,
        created_at: o.now,
        updated_at: o.now,
    };
    Status::Enabled.store(&mut row);
    let mut tx = o.store.begin().await?;
    if !Store::insert_webhook_endpoint(&mut tx, &row, MAX_PER_ORGANISATION).await? {
        return Err(Error::Conflict {
            code: InternalCode::WebhookEndpointLimitReached,
            message: format!("the organisation has {MAX_PER_ORGANISATION} webhook endpoints already; delete one first"),
            property: "",
        });
    }
    tx.commit().await?;
    to_wire(row, true)
}

/// The endpoint `id` of the organisation, or 404.
pub async fn find(o: &Owner<'_>, id: &str) -> Result<WebhookEndpointRow> {
    let missing = || Error::not_found(InternalCode::WebhookEndpointNotFound, "webhook endpoint");
    let id = Uuid::parse_str(id).map_err(|_| missing())?;
    o.store.webhook_endpoint(o.org, id).await?.ok_or_else(missing)
}

pub async fn view(o: &Owner<'_>, id: &str) -> Result<wire::WebhookEndpoint> {
    to_wire(find(o, id).await?, false)
}

pub async fn list(o: &Owner<'_>, cursor: Option<&str>, limit: Option<i64>) -> Result<wire::WebhookEndpointList> {
    let after = cursor.map(Cursor::decode).transpose()?;
    let page = o.store.webhook_endpoints(o.org, after, limit_or_default(limit)).await?;
    Ok(wire::WebhookEndpointList {
        items: page.items.into_iter().map(|e| to_wire(e, false)).collect::<Result<_>>()?,
        pagination: wire::Pagination { next_cursor: page.next.map(Cursor::encode) },
    })
}

pub async fn update(o: &Owner<'_>, id: &str, req: wire::UpdateWebhookEndpointRequest) -> Result<wire::WebhookEndpoint> {
    let mut row = find(o, id).await?;
    if let Some(url) = req.url {
        address::check("url", &url, &o.urls).await?;
        row.url = url;
    }
    if let Some(events) = req.events {
        row.events = event_names(events);
    }
    if let Some(d) = req.description {
        row.description = Some(d);
    }
    let status = req.status.map(|s| match s {
        wire::WebhookEndpointStatus::Enabled => Move::Enable,
        wire::WebhookEndpointStatus::Disabled => Move::Disable,
    });
    save(o, row, status, false).await
}

/// Enables or disables an endpoint (the CLI's enable and disable).
pub async fn set_status(o: &Owner<'_>, id: &str, m: Move) -> Result<wire::WebhookEndpoint> {
    save(o, find(o, id).await?, Some(m), false).await
}

/// Writes a changed endpoint, its status moved by `m`; the answer shows
/// the secret if `secret`. An endpoint disabled holds its pending
/// deliveries; enabled again, it gets them in a new round.
async fn save(o: &Owner<'_>, mut row: WebhookEndpointRow, m: Option<Move>, secret: bool) -> Result<wire::WebhookEndpoint> {
    let was = Status::of(&row)?;
    let now = m.map_or(was, |m| was.after(m));
    now.store(&mut row);
    row.updated_at = o.now;
    let mut tx = o.store.begin().await?;
    Store::update_webhook_endpoint(&mut tx, &row).await?;
    if (was == Status::Enabled) != (now == Status::Enabled) {
        Store::endpoint_status_changed(&mut tx, row.id, now == Status::Enabled, o.now).await?;
    }
    tx.commit().await?;
    to_wire(row, secret)
}

pub async fn delete(o: &Owner<'_>, id: &str) -> Result<()> {
    let row = find(o, id).await?;
    let mut tx = o.store.begin().await?;
    if !Store::delete_webhook_endpoint(&mut tx, o.org, row.id).await? {
        return Err(Error::not_found(InternalCode::WebhookEndpointNotFound, "webhook endpoint"));
    }
    tx.commit().await
}

/// A new secret for the endpoint, shown in this answer only; the one
/// before it keeps signing for `previous_secret_lifetime`.
pub async fn rotate_secret(o: &Owner<'_>, id: &str) -> Result<wire::WebhookEndpoint> {
    let mut row = find(o, id).await?;
    let previous = std::mem::replace(&mut row.secret, secret::mint());
    // (a secret no master key opened signs nothing: it is not kept)
    row.previous_secret = (previous != crate::store::UNREADABLE_SECRET).then(|| (previous, o.now + previous_secret_lifetime()));
    save(o, row, None, true).await
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_webhooks_tag_shows_the_table() {
        for document in crate::wire::DOCUMENTS {
            let tag = crate::states::tag_description(document, "Webhooks");
            assert!(tag.contains(&super::ENDPOINT.markdown()), "the Webhooks tag lacks the table:\n{}", super::ENDPOINT.markdown());
        }
    }
}
