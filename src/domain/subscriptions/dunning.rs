//! A subscription's side of dunning (the invoice's is
//! `invoices::dunning`): it follows its customer's invoices. Overdue
//! (`Change::InvoiceOverdue`), an invoice SUSPENDS the customer's
//! ACTIVATED subscriptions; paid or voided (`Change::InvoiceSettled`), it
//! restores those it suspended and nobody moved since, unless another
//! overdue invoice keeps them; uncollectible
//! (`Change::InvoiceUncollectible`), it cancels them, a binding contract
//! notwithstanding. Each step is a row of the subscription's transition
//! table, written with its events in the invoice's transaction; the
//! network follows in the invoice.due job.

use super::write::{Also, Events, commit_in, end_service};
use crate::domain::Caller;
use crate::error::Result;
use crate::events::Event;
use crate::states::subscriptions::{SUBSCRIPTION, SubscriptionOp as Op};
use crate::store::{InvoiceRow, JobKind, Store, SubscriptionRow, Tx};
use chrono::{DateTime, Utc};

/// How a reason names an invoice: its number, else its id.
fn name(row: &InvoiceRow) -> String {
    row.number.clone().unwrap_or_else(|| row.id.to_string())
}

/// Moves `s` by `op` at `at` in `tx`, with `events`.
async fn moved(
    tx: &mut Tx,
    caller: &Caller,
    s: &SubscriptionRow,
    op: Op,
    at: DateTime<Utc>,
    change: impl FnOnce(&mut SubscriptionRow),
    events: Events,
) -> Result<()> {
    let mut after = s.clone();
    after.status = SUBSCRIPTION.next(op, s.status)?;
    after.updated_at = at.max(s.updated_at);
    change(&mut after);
    commit_in(tx, caller, s, &after, Also::Nothing, op, events, at).await.map(drop)
}

/// Follows `Change::InvoiceOverdue` of `invoice` at `at`: the customer's
/// ACTIVATED subscriptions SUSPENDED for it (those another overdue invoice
/// suspended stay its).
pub(in crate::domain) async fn invoice_overdue(tx: &mut Tx, caller: &Caller, invoice: &InvoiceRow, at: DateTime<Utc>) -> Result<()> {
    let reason = format!("Invoice {} is overdue.", name(invoice));
    for s in Store::customer_subscriptions_in(tx, caller.org, invoice.customer_id).await? {
        if SUBSCRIPTION.target(Op::DunningSuspend, s.status).is_none() {
            continue;
        }
        let change = |a: &mut SubscriptionRow| {
            a.life.suspended_at = Some(at);
            a.life.status_reason = Some(reason.clone());
            a.life.suspended_for_invoice = Some(invoice.id);
        };
        moved(tx, caller, &s, Op::DunningSuspend, at, change, &[Event::SubscriptionSuspended]).await?;
    }
    Ok(())
}

/// Follows `Change::InvoiceSettled` of `invoice` (`why`: "paid", "void"):
/// the subscriptions its dunning suspended, and nobody moved since,
/// ACTIVATED again, and the network told in the invoice.due job; unless
/// another invoice of the customer is overdue past its own suspension,
/// which they then stay SUSPENDED for.
pub(in crate::domain) async fn invoice_settled(tx: &mut Tx, caller: &Caller, invoice: &InvoiceRow, why: &str) -> Result<()> {
    let mut any = false;
    let other = Store::overdue_invoice_in(tx, caller.org, invoice.customer_id, invoice.id).await?;
    for s in Store::subscriptions_dunned_in(tx, caller.org, invoice.id).await? {
        if SUBSCRIPTION.target(Op::DunningRestore, s.status).is_none() {
            continue;
        }
        match &other {
            Some(overdue) => {
                let change = |a: &mut SubscriptionRow| {
                    a.life.status_reason = Some(format!("Invoice {} is overdue.", name(overdue)));
                    a.life.suspended_for_invoice = Some(overdue.id);
                };
                moved(tx, caller, &s, Op::DunningTransfer, caller.now, change, &[Event::SubscriptionUpdated]).await?;
            }
            None => {
                let change = |a: &mut SubscriptionRow| {
                    a.life.suspended_at = None;
                    a.life.status_reason = Some(format!("Invoice {} is {why}.", name(invoice)));
                };
                moved(tx, caller, &s, Op::DunningRestore, caller.now, change, &[Event::SubscriptionRestored]).await?;
                any = true;
            }
        }
    }
    if any {
        // the network follows what was restored (`invoices::dunning::follow_network`)
        Store::schedule_job(tx, JobKind::InvoiceDue, &invoice.id.to_string(), Some(caller.org), caller.now, caller.now).await?;
    }
    Ok(())
}

/// Follows `Change::InvoiceUncollectible` of `invoice` at `at`: the
/// subscriptions it suspended CANCELLED (their service was ended at the
/// network before, while they still held their numbers).
pub(in crate::domain) async fn invoice_uncollectible(tx: &mut Tx, caller: &Caller, invoice: &InvoiceRow, at: DateTime<Utc>) -> Result<()> {
    let reason = format!("Invoice {} is uncollectible.", name(invoice));
    for s in Store::subscriptions_dunned_in(tx, caller.org, invoice.id).await? {
        if SUBSCRIPTION.target(Op::DunningCancel, s.status).is_none() {
            continue;
        }
        let change = |a: &mut SubscriptionRow| {
            a.life.cancelled_at = Some(at);
            a.life.pending = None;
            a.life.status_reason = Some(reason.clone());
            end_service(a, at);
        };
        moved(tx, caller, &s, Op::DunningCancel, at, change, &[Event::SubscriptionCancelled, Event::SubscriptionEnded]).await?;
    }
    Ok(())
}
