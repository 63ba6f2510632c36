//! Payments: collecting the money for an order. A payment link (`links`)
//! starts collection with a payment intent and a hosted page; the page's
//! attempts to charge (`charge`) are recorded before the provider is asked
//! and settled after (`settle`), and a payment that succeeds submits the
//! order in the same transaction as the link's completion (rule 1).
//! Refunds (`refunds`) go to the provider through a job; saved methods are
//! payment profiles (`profiles`), also saved without a payment by a
//! setup page (`profile_sessions`). One transition table per resource
//! (`states`); the wire forms in `render`.

pub mod charge;
pub mod closing;
pub mod collectable;
pub mod collection;
pub mod enabled;
pub mod links;
pub mod profile_sessions;
pub mod profiles;
pub mod refunds;
pub mod render;
pub mod sessions;
pub mod settle;

use super::{Caller, customers};
use crate::error::{Error, InternalCode, Result};
use crate::store::{ChargeRow, Cursor, IntentFilter, IntentRow, LinkFilter, LinkRow, RefundRow, limit_or_default};
use crate::wire::latest::{self as wire, params};
use uuid::Uuid;

/// Attempts a hosted page takes (a payment link's, a setup session's),
/// each a card or account tried: then it takes no new one, so the page
/// cannot serve to try stolen cards one after another ("card testing").
/// The seller makes a new link or session for a payer who needs more.
pub const ATTEMPTS_AT_MOST: i64 = 10;

/// What a page says once it has taken `ATTEMPTS_AT_MOST` attempts.
pub const TOO_MANY_ATTEMPTS: &str = "This page has taken as many attempts as it allows and takes no further one; ask the seller for a new one.";

/// Whether `org`'s page `id` took all its attempts: it then asks the
/// provider nothing more and no longer shows its form.
pub async fn attempts_spent(caller: &Caller, page: crate::store::HostedPage, id: Uuid) -> Result<bool> {
    Ok(caller.store.page_attempts(page, caller.org, id).await? >= ATTEMPTS_AT_MOST)
}

fn parse_id(key: &str, code: InternalCode, what: &str) -> Result<Uuid> {
    Uuid::parse_str(key).map_err(|_| Error::not_found(code, what))
}

/// The link named by `key`, if the caller sees its customer; expired if due.
pub async fn find_link(caller: &Caller, key: &str) -> Result<LinkRow> {
    let id = parse_id(key, InternalCode::PaymentLinkNotFound, "payment link")?;
    let row = caller.store.link(caller.org, id).await?.filter(|l| caller.sees_customer(l.customer_id));
    let row = row.ok_or_else(|| Error::not_found(InternalCode::PaymentLinkNotFound, "payment link"))?;
    links::expire_if_due(caller, row).await
}

/// The intent named by `key`, if the caller sees its customer.
pub async fn find_intent(caller: &Caller, key: &str) -> Result<IntentRow> {
    let id = parse_id(key, InternalCode::PaymentIntentNotFound, "payment intent")?;
    let row = caller.store.intent(caller.org, id).await?.filter(|i| caller.sees_customer(i.customer_id));
    row.ok_or_else(|| Error::not_found(InternalCode::PaymentIntentNotFound, "payment intent"))
}

pub async fn view_link(caller: &Caller, key: &str) -> Result<wire::PaymentLink> {
    Ok(render::link(&find_link(caller, key).await?))
}

pub async fn list_links(caller: &Caller, q: params::PaymentLinkListQuery) -> Result<wire::PaymentLinkList> {
    // a list shows what a read of each would: links past their expiry
    // are expired now, not when their job gets to them
    for id in caller.store.links_due_to_expire(caller.org, caller.now).await? {
        if let Some(row) = caller.store.link(caller.org, id).await? {
            links::expire_if_due(caller, row).await?;
        }
    }
    let customer = match &q.customer_id {
        Some(c) => Some(customers::find(caller, c).await?.id),
        None => None,
    };
    let order = q.order_id.as_deref().map(|o| Uuid::parse_str(o).map_err(|_| Error::invalid("orderId", "invalid_uuid", "must be a UUID"))).transpose()?;
    let after = q.cursor.as_deref().map(Cursor::decode).transpose()?;
    let filter = LinkFilter { customer, order, statuses: super::filter_of::<wire::PaymentLinkStatus, _>("status", &q.status)?, visible_to: caller.viewer() };
    let page = caller.store.links(caller.org, &filter, after, limit_or_default(q.limit)).await?;
    Ok(wire::PaymentLinkList {
        items: page.items.iter().map(render::link).collect(),
        pagination: wire::Pagination { next_cursor: page.next.map(Cursor::encode) },
    })
}

/// The intent in its full form.
pub async fn intent_of(store: &crate::store::Store, row: &IntentRow) -> Result<wire::PaymentIntent> {
    let charges = store.charges_of(row.org, row.id).await?;
    let refunds = store.refunds_of(row.org, row.id).await?;
    render::intent(row, &charges, &refunds)
}

/// The intent as a transaction that wrote `charge` and `refunds` leaves it,
/// before it commits (when the reader pool does not see them yet): each
/// in place of its stored self, or beside the stored ones.
pub async fn intent_as_written(store: &crate::store::Store, row: &IntentRow, charge: Option<&ChargeRow>, refunds: &[RefundRow]) -> Result<wire::PaymentIntent> {
    let mut charges = store.charges_of(row.org, row.id).await?;
    if let Some(c) = charge {
        match charges.iter_mut().find(|s| s.id == c.id) {
            Some(stored) => *stored = c.clone(),
            None => charges.push(c.clone()),
        }
    }
    let mut stored_refunds = store.refunds_of(row.org, row.id).await?;
    for r in refunds {
        match stored_refunds.iter_mut().find(|s| s.id == r.id) {
            Some(stored) => *stored = r.clone(),
            None => stored_refunds.push(r.clone()),
        }
    }
    render::intent(row, &charges, &stored_refunds)
}

pub async fn view_intent(caller: &Caller, key: &str) -> Result<wire::PaymentIntent> {
    intent_of(&caller.store, &find_intent(caller, key).await?).await
}

pub async fn list_intents(caller: &Caller, q: params::PaymentIntentListQuery) -> Result<wire::PaymentIntentList> {
    let after = q.cursor.as_deref().map(Cursor::decode).transpose()?;
    let filter = IntentFilter {
        customers: customers::find_all(caller, &q.customer_id).await?,
        statuses: super::filter_of::<wire::PaymentIntentStatus, _>("status", &q.status)?,
        visible_to: caller.viewer(),
        ..Default::default()
    };
    let page = caller.store.intents(caller.org, &filter, after, limit_or_default(q.limit)).await?;
    Ok(wire::PaymentIntentList {
        items: page.items.iter().map(render::intent_item).collect(),
        pagination: wire::Pagination { next_cursor: page.next.map(Cursor::encode) },
    })
}
