//! Closing a payment link: by its cancel, its expiry, or as a follower of
//! a move of its order (its lines changed, submitted without paying,
//! cancelled, expired) or of its invoice (closed otherwise).

use crate::error::{Error, Result};
use crate::states::payments::{CHARGE, ChargeOp, ChargeStatus, INTENT, IntentOp, LINK, LinkOp, PaymentLinkStatus};
use crate::store::{LinkRow, Store, Tx};
use chrono::{DateTime, Utc};
use uuid::Uuid;

/// The failure code of a charge whose link closed while it waited for the
/// payer's authentication.
pub const LINK_CLOSED: &str = "payment_link_closed";

/// Moves `link` by `op` (cancel, order changed, expiry) in `tx`, with its
/// intent (CANCELED unless a charge is PROCESSING: a payment that succeeds
/// then is refunded) and a charge waiting for authentication (FAILED).
/// None when another request moved the link first.
pub(super) async fn close(tx: &mut Tx, link: &LinkRow, op: LinkOp, now: DateTime<Utc>) -> Result<Option<LinkRow>> {
    let mut after = link.clone();
    after.status = LINK.next(op, link.status)?;
    after.updated_at = now;
    if !Store::move_link(tx, &after, link.status).await? {
        return Ok(None);
    }
    let Some(mut intent) = Store::intent_in(tx, link.org, link.intent_id).await? else {
        return Err(Error::Internal(format!("link {} has no intent", link.id)));
    };
    if let Some(closed) = INTENT.target(IntentOp::LinkClosed, intent.status) {
        let from = intent.status;
        intent.status = closed;
        intent.updated_at = now;
        if !Store::move_intent(tx, &intent, from).await? {
            return Err(Error::Internal(format!("intent {} moved while its link was claimed", intent.id)));
        }
        let failed = CHARGE.next(ChargeOp::LinkClosed, ChargeStatus::RequiresAction)?;
        Store::move_charges_of(tx, link.org, intent.id, ChargeStatus::RequiresAction, failed, LINK_CLOSED, now).await?;
    }
    Ok(Some(after))
}

/// Follows `Change::OrderMoved` of order `order`: its ACTIVE link is
/// cancelled (what it would collect no longer holds).
pub(in crate::domain) async fn order_moved(tx: &mut Tx, org: Uuid, order: Uuid, now: DateTime<Utc>) -> Result<()> {
    for link in Store::links_of_order_in(tx, org, order, PaymentLinkStatus::Active).await? {
        if close(tx, &link, LinkOp::OrderChanged, now).await?.is_none() {
            return Err(Error::Internal(format!("link {} moved in its order's transaction", link.id)));
        }
    }
    Ok(())
}

/// Follows `Change::InvoiceClosed` of invoice `invoice` (paid otherwise
/// than through it, voided or given up): its ACTIVE link, but `except`
/// (the one paying it), is cancelled.
pub(in crate::domain) async fn invoice_closed(tx: &mut Tx, org: Uuid, invoice: Uuid, except: Option<Uuid>, now: DateTime<Utc>) -> Result<()> {
    for link in Store::links_of_invoice_in(tx, org, invoice, PaymentLinkStatus::Active).await? {
        if Some(link.id) != except && close(tx, &link, LinkOp::InvoiceClosed, now).await?.is_none() {
            return Err(Error::Internal(format!("link {} moved in its invoice's transaction", link.id)));
        }
    }
    Ok(())
}
