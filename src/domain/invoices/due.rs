//! What falls due of an invoice, by the organisation's clock: a DRAFT is
//! finalised at the end of its billing day (numbered, OPEN, or PAID when
//! it owes nothing). Done by the invoice.due job, and by whoever reads
//! the invoice once its time has passed; either way dated at its own time.

use super::row::{Step, customer_of, next_due, reread};
use super::{collect, dunning, lines, render};
use crate::domain::Caller;
use crate::error::{Error, Result};
use crate::events::{self, Event};
use crate::kinds::InvoicePaymentMethod;
use crate::network::Network;
use crate::states::invoices::{INVOICE, InvoiceOp, InvoiceStatus};
use crate::store::{InvoiceRow, JobKind, Store};
use chrono::{DateTime, Duration, Utc};
use uuid::Uuid;

/// An invoice is due this long after it is finalised.
pub const PAYMENT_TERMS_DAYS: i64 = 14;

/// The number an invoice is given from the organisation's counter.
fn number(n: i64) -> String {
    format!("INV-{n:06}")
}

/// `row` finalised if its billing day has ended by the caller's now: what
/// a read shows. Autopay's tries and dunning depend on what the payment
/// jobs record meanwhile, so only the invoice.due job does them (`run`),
/// in time order with those jobs.
pub async fn apply_if_due(caller: &Caller, row: InvoiceRow) -> Result<InvoiceRow> {
    match next_due(&row) {
        Some((at, Step::Finalize)) if at <= caller.now => finalize(caller, &row, at).await,
        _ => Ok(row),
    }
}

/// How long dunning waits for a charge of the invoice still with its
/// provider (its outcome may pay it).
const WAIT_FOR_CHARGE: chrono::Duration = chrono::Duration::minutes(1);

/// `row` with what is due by the caller's now done, in time order, up to
/// a step that must wait (a charge being settled): with when to look again.
async fn apply_all(caller: &Caller, network: &dyn Network, mut row: InvoiceRow) -> Result<(InvoiceRow, Option<DateTime<Utc>>)> {
    // bounded: each step moves the invoice on (a missed write re-reads what
    // another writer left); should it not, the job looks again
    for _ in 0..16 {
        let Some((at, step)) = next_due(&row).filter(|(at, _)| *at <= caller.now) else { return Ok((row, None)) };
        if step != Step::Finalize && charging(caller, &row).await? {
            return Ok((row, Some(caller.now + WAIT_FOR_CHARGE)));
        }
        row = match step {
            Step::Finalize => finalize(caller, &row, at).await?,
            Step::Suspend => dunning::suspend(caller, &row, at).await?,
            Step::GiveUp => dunning::give_up(caller, network, &row, at).await?,
            Step::Retry => collect::retry(caller, &row, at).await?,
        };
    }
    Ok((row, Some(caller.now + WAIT_FOR_CHARGE)))
}

/// Whether a charge of `row` (autopay's, or on one of its links' pages)
/// is with its provider.
async fn charging(caller: &Caller, row: &InvoiceRow) -> Result<bool> {
    caller.store.invoice_charging(caller.org, row.id).await
}

/// Finalises DRAFT `row` at `at` (the end of its billing day): numbered
/// from the organisation's counter in the same transaction, so a number
/// is used exactly when its invoice commits; OPEN and due in
/// `PAYMENT_TERMS_DAYS`, collected from the default profile when the
/// customer pays by autopay; PAID at once when it owes nothing. Nothing
/// when another writer finalised it first.
async fn finalize(caller: &Caller, row: &InvoiceRow, at: DateTime<Utc>) -> Result<InvoiceRow> {
    let customer = customer_of(caller, row).await?;
    let billing = customer.billing.as_ref();
    let autopay = billing.is_some_and(|b| b.auto_pay);
    let profile = if autopay { collect::usable_default(caller, &customer).await? } else { None };
    let days = dunning::days(caller).await?;
    let mut tx = caller.store.begin().await?;
    // claimed first: lines being written to it finish before (on
    // PostgreSQL they hold it shared), later ones go on the next day's
    let mut claimed = row.clone();
    claimed.version += 1;
    if !Store::update_invoice(&mut tx, &claimed).await? {
        drop(tx);
        return reread(caller, row).await;
    }
    let mut after = Store::invoice_in(&mut tx, caller.org, row.id).await?.ok_or_else(|| Error::Internal(format!("invoice {} vanished", row.id)))?;
    let lines = lines::parse(&after.lines)?;
    (after.subtotal_minor, after.discount_minor, after.tax_minor, after.total_minor) = lines::totals(&lines);
    let owed = after.total_minor > 0;
    after.status = INVOICE.next(if owed { InvoiceOp::Finalize } else { InvoiceOp::FinalizeNothingOwed }, row.status)?;
    after.version += 1;
    after.finalized_at = Some(at);
    after.due_at = Some(at + Duration::days(PAYMENT_TERMS_DAYS));
    after.billing_method = billing.map(|b| b.method);
    after.auto_pay = Some(autopay);
    after.updated_at = at.max(after.updated_at);
    if !owed {
        (after.paid_at, after.paid_method) = (Some(at), Some(InvoicePaymentMethod::Other));
    }
    dunning::plan(&mut after, days);
    let autopay = match (&profile, owed && autopay) {
        (Some(p), true) => Some(collect::started(caller, &after, p, caller.now)?),
        _ => None,
    };
    after.number = Some(number(Store::next_invoice_number(&mut tx, caller.org).await?));
    match &autopay {
        Some(a) => after.intent_id = Some(a.intent.id),
        // no usable default profile: autopay's first try failed
        None if owed && after.auto_pay == Some(true) => collect::failed_now(&mut after, at),
        None => {}
    }
    after.wake_at = next_due(&after).map(|(at, _)| at);
    if !Store::update_invoice(&mut tx, &after).await? {
        return Err(Error::Internal(format!("invoice {} moved while claimed", row.id)));
    }
    if let Some(a) = &autopay {
        a.start(&mut tx, caller, &after).await?;
    }
    events::record(&mut tx, caller.org, at, &Event::InvoiceFinalized(render::invoice(&after)?)).await?;
    if after.attempts > 0 {
        events::record(&mut tx, caller.org, at, &Event::InvoicePaymentFailed(render::invoice(&after)?)).await?;
    }
    if after.status == InvoiceStatus::Paid {
        events::record(&mut tx, caller.org, at, &Event::InvoicePaid(render::invoice(&after)?)).await?;
    }
    // its job at once: it delivers the invoice, then waits for what is next
    Store::schedule_job(&mut tx, JobKind::InvoiceDue, &after.id.to_string(), Some(caller.org), caller.now, caller.now).await?;
    tx.commit().await?;
    // (what this transaction wrote, which a read in the same idempotent
    // request may not see yet)
    Ok(after)
}

/// Every invoice of the caller's organisation whose billing day has ended
/// finalised (before a list, which shows what a read of each would).
pub async fn apply_all_due(caller: &Caller) -> Result<()> {
    for id in caller.store.drafts_due(caller.org, caller.now).await? {
        if let Some(row) = caller.store.invoice(caller.org, id).await? {
            apply_if_due(caller, row).await?;
        }
    }
    Ok(())
}

/// The invoice.due job: invoice `id` of `org` with what is due by `now`
/// done, and the network following what its dunning moved (safe to run
/// again: what was done meanwhile is left, the network told what should
/// be); then due again when something of it next falls due.
pub async fn run(store: &Store, network: &dyn Network, public_url: &str, org: Uuid, id: Uuid, now: DateTime<Utc>) -> Result<()> {
    let Some(row) = store.invoice(org, id).await? else { return Ok(()) };
    let caller = Caller::system(store, org, now);
    let (row, wait) = apply_all(&caller, network, row).await?;
    if row.suspended_at.is_some() {
        dunning::follow_network(store, network, &row).await?;
    }
    let row = super::delivery::deliver(&caller, public_url, row).await?;
    if let Some(at) = wait.or(row.wake_at).filter(|at| *at > now) {
        let mut tx = store.begin().await?;
        Store::schedule_job(&mut tx, JobKind::InvoiceDue, &row.id.to_string(), Some(org), at, now).await?;
        tx.commit().await?;
    }
    Ok(())
}
