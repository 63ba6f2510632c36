//! Dunning: an invoice still OPEN some days after its due date (the
//! organisation's setting when it was finalised, default 14) suspends the
//! customer's ACTIVATED subscriptions; paying it restores those and only
//! those; some days more (default 60) and it is UNCOLLECTIBLE, and the
//! subscriptions it suspended are cancelled, a binding contract
//! notwithstanding. Each step is a row of the subscription's transition
//! table, written in the invoice's transaction; the network follows in
//! the invoice.due job (`follow_network`), which is scheduled with every
//! step and makes the service of those subscriptions match their state.

use super::render;
use crate::domain::Caller;
use crate::domain::subscriptions::write::{Also, Events, commit_in, end_service};
use crate::error::Result;
use crate::events::{self, Event};
use crate::network::Network;
use crate::states::invoices::{INVOICE, InvoiceOp, InvoiceStatus};
use crate::states::subscriptions::{SUBSCRIPTION, SubscriptionOp as Op, SubscriptionStatus as Status};
use crate::store::{InvoiceRow, JobKind, Store, SubscriptionRow, Tx};
use chrono::{DateTime, Duration, Utc};

/// Dunning's days as the organisation set them: (suspend, give up).
pub async fn days(caller: &Caller) -> Result<(i64, i64)> {
    caller.store.dunning_days(caller.org).await
}

/// `row`, being finalised, with dunning's steps dated from its due date
/// (0 days: never).
pub fn plan(row: &mut InvoiceRow, (suspend, give_up): (i64, i64)) {
    if let (Some(due), InvoiceStatus::Open) = (row.due_at, row.status) {
        row.suspend_at = (suspend > 0).then(|| due + Duration::days(suspend));
        row.give_up_at = (give_up > 0).then(|| due + Duration::days(give_up.max(suspend)));
    }
}

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

/// In `tx`: the invoice.due job of `row` due now, so the network follows
/// what dunning moved.
async fn network_follows(tx: &mut Tx, caller: &Caller, row: &InvoiceRow) -> Result<()> {
    Store::schedule_job(tx, JobKind::InvoiceDue, &row.id.to_string(), Some(caller.org), caller.now, caller.now).await
}

/// Dunning's first step of OPEN `row`, due at `at`: the customer's
/// ACTIVATED subscriptions SUSPENDED for it (those another overdue invoice
/// suspended stay its). The invoice as it is after.
pub async fn suspend(caller: &Caller, row: &InvoiceRow, at: DateTime<Utc>) -> Result<InvoiceRow> {
    INVOICE.next(InvoiceOp::Suspend, row.status)?;
    let mut after = row.clone();
    after.suspended_at = Some(at);
    let after = super::row::written(after, at);
    let mut tx = caller.store.begin().await?;
    if !Store::update_invoice(&mut tx, &after).await? {
        drop(tx);
        return super::row::reread(caller, row).await;
    }
    let reason = format!("Invoice {} is overdue.", name(row));
    for s in Store::customer_subscriptions_in(&mut tx, caller.org, row.customer_id).await? {
        if SUBSCRIPTION.target(Op::DunningSuspend, s.status).is_none() {
            continue;
        }
        let change = |a: &mut SubscriptionRow| {
            a.life.suspended_at = Some(at);
            a.life.status_reason = Some(reason.clone());
            a.life.suspended_for_invoice = Some(row.id);
        };
        moved(&mut tx, caller, &s, Op::DunningSuspend, at, change, &[Event::SubscriptionSuspended]).await?;
    }
    super::row::schedule_next(&mut tx, caller, &after).await?;
    network_follows(&mut tx, caller, &after).await?;
    tx.commit().await?;
    Ok(after)
}

/// In the transaction that pays or voids `row` (`why`: "paid", "void"):
/// the subscriptions its dunning suspended, and nobody moved since,
/// ACTIVATED again; unless another invoice of the customer is overdue
/// past its own suspension, which they then stay SUSPENDED for.
pub async fn restore(tx: &mut Tx, caller: &Caller, row: &InvoiceRow, why: &str) -> Result<()> {
    let mut any = false;
    let other = Store::overdue_invoice_in(tx, caller.org, row.customer_id, row.id).await?;
    for s in Store::subscriptions_dunned_in(tx, caller.org, row.id).await? {
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
                    a.life.status_reason = Some(format!("Invoice {} is {why}.", name(row)));
                };
                moved(tx, caller, &s, Op::DunningRestore, caller.now, change, &[Event::SubscriptionRestored]).await?;
                any = true;
            }
        }
    }
    if any {
        network_follows(tx, caller, row).await?;
    }
    Ok(())
}

/// Dunning's last step of OPEN `row`, due at `at`: UNCOLLECTIBLE
/// (`invoice.uncollectible`), autopay's intent cancelled, and the
/// subscriptions it suspended cancelled. Their service is ended at the
/// network first, while they still hold their numbers (as a cancellation
/// asked for is): the cancellation releases them. The invoice as it is
/// after.
pub async fn give_up(caller: &Caller, network: &dyn Network, row: &InvoiceRow, at: DateTime<Utc>) -> Result<InvoiceRow> {
    let mut after = row.clone();
    after.status = INVOICE.next(InvoiceOp::Uncollectible, row.status)?;
    (after.closed_at, after.next_attempt_at) = (Some(at), None);
    let after = super::row::written(after, at);
    for s in caller.store.subscriptions_dunned(caller.org, row.id).await? {
        if SUBSCRIPTION.target(Op::DunningCancel, s.status).is_some() {
            network.end_service(&s.msisdn, at).await.map_err(|r| refused(&s, r))?;
        }
    }
    let mut tx = caller.store.begin().await?;
    if !Store::update_invoice(&mut tx, &after).await? {
        drop(tx);
        return super::row::reread(caller, row).await;
    }
    events::record(&mut tx, caller.org, at, &Event::InvoiceUncollectible(render::invoice(&after)?)).await?;
    super::closing::close_others(&mut tx, caller, row, None, at).await?;
    let reason = format!("Invoice {} is uncollectible.", name(row));
    for s in Store::subscriptions_dunned_in(&mut tx, caller.org, row.id).await? {
        if SUBSCRIPTION.target(Op::DunningCancel, s.status).is_none() {
            continue;
        }
        let change = |a: &mut SubscriptionRow| {
            a.life.cancelled_at = Some(at);
            a.life.pending = None;
            a.life.status_reason = Some(reason.clone());
            end_service(a, at);
        };
        moved(&mut tx, caller, &s, Op::DunningCancel, at, change, &[Event::SubscriptionCancelled, Event::SubscriptionEnded]).await?;
    }
    tx.commit().await?;
    Ok(after)
}

fn refused(s: &SubscriptionRow, r: crate::network::Refused) -> crate::error::Error {
    crate::error::Error::Internal(format!("the network refused subscription {}: {}", s.id, r.0))
}

/// The network made to match what dunning of `row` left: service off for
/// a subscription still SUSPENDED for it, on for one it restored (a
/// cancelled one's service was ended before it let its number go). Each
/// call says what should be, so running it again (the job after a crash)
/// changes nothing more.
pub async fn follow_network(store: &Store, network: &dyn Network, row: &InvoiceRow) -> Result<()> {
    for s in store.subscriptions_dunned(row.org, row.id).await? {
        let done = match s.status {
            Status::Suspended => network.set_service(&s.msisdn, false).await,
            Status::Activated => network.set_service(&s.msisdn, true).await,
            _ => Ok(()),
        };
        done.map_err(|r| refused(&s, r))?;
    }
    Ok(())
}
