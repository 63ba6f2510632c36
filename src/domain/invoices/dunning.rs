//! Dunning, the invoice's side: an invoice still OPEN some days after its
//! due date (the organisation's setting when it was finalised, default 14)
//! is overdue, and the customer's ACTIVATED subscriptions follow
//! (`Change::InvoiceOverdue`: SUSPENDED); paying it restores those and
//! only those (`Change::InvoiceSettled`); some days more (default 60) and
//! it is UNCOLLECTIBLE, and the subscriptions it suspended are cancelled
//! (`Change::InvoiceUncollectible`). What the subscriptions do is theirs
//! (`subscriptions::dunning`), in the invoice's transaction; the network
//! follows in the invoice.due job (`follow_network`), which is scheduled
//! with every step and makes the service of those subscriptions match
//! their state.

use super::render;
use crate::domain::Caller;
use crate::domain::change::Change;
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
    caller.follow(&mut tx, Change::InvoiceOverdue { invoice: &after, at }).await?;
    super::row::schedule_next(&mut tx, caller, &after).await?;
    network_follows(&mut tx, caller, &after).await?;
    tx.commit().await?;
    Ok(after)
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
    caller.follow(&mut tx, Change::InvoiceUncollectible { invoice: &after, at }).await?;
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
