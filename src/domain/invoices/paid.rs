//! An invoice paid: by money received outside (mark-paid), or by a charge
//! that succeeded (autopay, an invoice's payment link) in the transaction
//! that settles it. Either way PAID with `invoice.paid`, and the
//! subscriptions its dunning suspended restored.

use super::row::written;
use super::{find, render};
use crate::domain::Caller;
use crate::domain::change::Change;
use crate::error::{Error, Result};
use crate::events::{self, Event};
use crate::kinds::InvoicePaymentMethod;
use crate::states::invoices::{INVOICE, InvoiceOp, InvoiceStatus};
use crate::store::{InvoiceRow, Stateful, Store, Tx};
use crate::wire::latest as wire;
use chrono::{DateTime, Utc};
use uuid::Uuid;

/// How an invoice is being paid.
struct Paying {
    op: InvoiceOp,
    at: DateTime<Utc>,
    method: InvoicePaymentMethod,
    reference: Option<String>,
    /// the intent of a charge that pays it, and the link it was paid on
    intent: Option<Uuid>,
    link: Option<Uuid>,
}

/// `row` (as `tx` read it) PAID, its event, what paying it restores, and
/// its other ways of being paid closed, in `tx`. None when another writer
/// moved it first.
async fn pay(tx: &mut Tx, caller: &Caller, row: &InvoiceRow, paying: Paying) -> Result<Option<InvoiceRow>> {
    let Paying { op, at, method, reference, intent, link } = paying;
    let mut after = row.clone();
    after.status = INVOICE.next(op, row.status)?;
    (after.paid_at, after.paid_method, after.paid_reference) = (Some(at), Some(method), reference);
    after.next_attempt_at = None;
    after.intent_id = intent.or(row.intent_id);
    let after = written(after, caller.now);
    if !Store::update_invoice(tx, &after).await? {
        return Ok(None);
    }
    events::record(tx, caller.org, caller.now, &Event::InvoicePaid(render::invoice(&after)?)).await?;
    caller.follow(tx, Change::InvoiceSettled { invoice: &after, why: "paid" }).await?;
    // autopay's intent, when a link (or money outside) paid it
    if row.intent_id != intent {
        super::closing::close_intent(tx, caller, row, caller.now).await?;
    }
    caller.follow(tx, Change::InvoiceClosed { invoice: row.id, except: link, at: caller.now }).await?;
    Ok(Some(after))
}

/// Follows `Change::InvoiceChargeSucceeded`, in the transaction settling
/// a successful charge of `intent` (autopay's, or that of `link`): invoice
/// `invoice` PAID. False when it is no longer OPEN (marked paid, voided or
/// given up meanwhile): the payment is given back.
pub(in crate::domain) async fn by_charge(tx: &mut Tx, caller: &Caller, invoice: Uuid, intent: Uuid, link: Option<Uuid>) -> Result<bool> {
    let method = if link.is_some() { InvoicePaymentMethod::PaymentLink } else { InvoicePaymentMethod::Autopay };
    // another write of the invoice (its delivery, a link's claim) may
    // commit between the read and the guarded write: read it again, and
    // give the money back only when it is really no longer OPEN
    for _ in 0..TRIES {
        let Some(now) = Store::invoice_in(tx, caller.org, invoice).await? else { return Ok(false) };
        if INVOICE.target(InvoiceOp::Paid, now.status).is_none() {
            return Ok(false);
        }
        let paying = Paying { op: InvoiceOp::Paid, at: caller.now, method, reference: None, intent: Some(intent), link };
        if pay(tx, caller, &now, paying).await?.is_some() {
            return Ok(true);
        }
    }
    // the charge stays recorded as it was: its job settles it again
    Err(Error::changed_meanwhile("invoice"))
}

/// How often paying by a charge reads the invoice again.
const TRIES: usize = 5;

/// POST /invoices/{id}/mark-paid: money for an OPEN invoice received
/// outside. Autopay's intent, unless a charge of it is with the provider
/// (then 409 payment_in_progress: its outcome may pay it), is cancelled.
pub async fn mark_paid(caller: &Caller, key: &str, req: wire::MarkInvoicePaidRequest) -> Result<wire::Invoice> {
    let row = find(caller, key).await?;
    // money received outside is the operator's to vouch for, never the payer's
    caller.require_organisation("mark an invoice paid")?;
    let at = req.paid_at.unwrap_or(caller.now);
    if at > caller.now {
        return Err(Error::invalid("paidAt", "in_the_future", "must not be in the future"));
    }
    INVOICE.next(InvoiceOp::MarkPaid, row.status)?;
    let intent = match row.intent_id {
        Some(id) => caller.store.intent(caller.org, id).await?,
        None => None,
    };
    if intent.as_ref().is_some_and(|i| i.status == crate::states::payments::PaymentIntentStatus::Processing) {
        return Err(Error::Conflict {
            code: crate::error::InternalCode::PaymentInProgress,
            message: "A charge of the invoice is being processed; try again once it has settled.".into(),
            property: "status",
        });
    }
    let method = req.method.map_or(InvoicePaymentMethod::BankTransfer, |m| match m {
        wire::MarkInvoicePaidRequestMethod::BankTransfer => InvoicePaymentMethod::BankTransfer,
        wire::MarkInvoicePaidRequestMethod::Cash => InvoicePaymentMethod::Cash,
        wire::MarkInvoicePaidRequestMethod::Other => InvoicePaymentMethod::Other,
    });
    let mut tx = caller.store.begin().await?;
    let paying = Paying { op: InvoiceOp::MarkPaid, at, method, reference: req.reference, intent: None, link: None };
    let Some(after) = pay(&mut tx, caller, &row, paying).await? else {
        let now: Option<InvoiceStatus> = Store::status_in(&mut tx, Stateful::Invoices, caller.org, row.id).await?;
        return Err(now.and_then(|s| INVOICE.next(InvoiceOp::MarkPaid, s).err()).unwrap_or_else(|| Error::changed_meanwhile("invoice")));
    };
    tx.commit().await?;
    render::invoice(&after)
}
