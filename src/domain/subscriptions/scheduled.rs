//! What falls due on a date: an activation the network completes later, a
//! cancellation taking effect, an offering change, a renewal. Done for
//! whoever reads the subscription once its time has passed, and by the
//! subscription.scheduled job for those nobody reads; either way in time
//! order, each dated at its own time.

use super::terms::{self, change_to, next_cycle};
use super::write::{Also, Events, Renewal, activation_events, begin_service, commit, end_service};
use crate::domain::Caller;
use crate::domain::cycles::midnight;
use crate::error::{Error, Result};
use crate::events::Event;
use crate::states::agreed;
use crate::states::subscriptions::{SUBSCRIPTION, SubscriptionOp as Op, SubscriptionStatus as Status};
use crate::store::{IdOrRef, Store, SubscriptionRow};
use chrono::{DateTime, Utc};
use uuid::Uuid;

/// What falls due next, and when. At the same time, a scheduled move comes
/// first (a cancellation ends the subscription before it would renew),
/// then an offering change (the new cycle begins on the new offering).
fn next_due(row: &SubscriptionRow) -> Option<(DateTime<Utc>, Op)> {
    let moved = row.life.pending.map(|(s, at)| (at, if s == Status::Activated { Op::ActivationCompletes } else { Op::CancellationDate }));
    let offering = row.life.pending_offering.as_ref().map(|p| (p.at, Op::OfferingChangeDate));
    let renewal = row.life.renews_on.map(|d| (midnight(d), Op::RenewalDay));
    // min_by_key keeps the first of equals
    [moved, offering, renewal].into_iter().flatten().min_by_key(|(at, _)| *at)
}

/// `row` after `op`, due at `at`, the events it records, and the renewal
/// its followers bill.
async fn after(caller: &Caller, row: &SubscriptionRow, op: Op, at: DateTime<Utc>) -> Result<(SubscriptionRow, Events, Option<Renewal>)> {
    let mut after = row.clone();
    after.updated_at = at.max(row.updated_at);
    // a state the table does not move (cancelled meanwhile) only forgets
    // what was due
    let Some(to) = SUBSCRIPTION.target(op, row.status) else {
        (after.life.pending, after.life.pending_offering, after.life.renews_on) = (None, None, None);
        return Ok((after, &[], None));
    };
    let mut renewal = None;
    after.status = to;
    let events: Events = match op {
        Op::ActivationCompletes => {
            after.life.pending = None;
            begin_service(&mut after, at)?;
            activation_events(row)
        }
        Op::CancellationDate => {
            after.life.pending = None;
            end_service(&mut after, at);
            &[Event::SubscriptionEnded]
        }
        Op::OfferingChangeDate => {
            let pending = agreed(after.life.pending_offering.take(), "a subscription's due offering change")?;
            let offering = caller.store.offering(caller.org, pending.offering_id).await?;
            let offering = offering.ok_or_else(|| Error::Internal(format!("offering {} vanished", pending.offering_id)))?;
            change_to(&mut after, &offering, at.date_naive())?;
            &[Event::SubscriptionUpdated]
        }
        Op::RenewalDay => {
            let renews = agreed(row.life.renews_on, "a subscription's due renewal")?;
            after.life.renews_on = next_cycle(row, renews)?;
            // a PAUSED or BLOCKED subscription is not billed: its cycle passes unrenewed
            if matches!(row.status, Status::Activated | Status::Suspended) {
                renewal = Some(Renewal { renews, price: terms::price(&row.terms)?, paid_through: terms::next_payment(row) });
                &[Event::SubscriptionRenewed]
            } else {
                &[]
            }
        }
        other => return Err(Error::Internal(format!("subscription {}: {other:?} does not fall due", row.id))),
    };
    Ok((after, events, renewal))
}

/// `row` with everything due by the caller's now done, in time order.
pub async fn apply_if_due(caller: &Caller, mut row: SubscriptionRow) -> Result<SubscriptionRow> {
    while let Some((at, op)) = next_due(&row).filter(|(at, _)| *at <= caller.now) {
        let (next, events, renewal) = after(caller, &row, op, at).await?;
        let also = renewal.as_ref().map_or(Also::Nothing, Also::Renewal);
        row = match commit(caller, &row, &next, also, op, events, at).await {
            Ok(_) => next,
            // another request or instance did it first: go on from what it left
            Err(Error::Conflict { .. }) => {
                let now = caller.store.subscription(caller.org, &IdOrRef::Id(row.id)).await?;
                let now = now.ok_or_else(|| Error::Internal(format!("subscription {} vanished", row.id)))?;
                if (now.status, now.updated_at, now.life.due_at()) == (row.status, row.updated_at, row.life.due_at()) {
                    return Err(Error::Internal(format!("subscription {}: what is due cannot be written", row.id)));
                }
                now
            }
            Err(e) => return Err(e),
        };
    }
    Ok(row)
}

/// Every subscription of the caller's organisation with something due
/// (before a list, which shows what a read of each would).
pub async fn apply_all_due(caller: &Caller) -> Result<()> {
    for id in caller.store.subscriptions_due(caller.org, caller.now).await? {
        if let Some(row) = caller.store.subscription(caller.org, &IdOrRef::Id(id)).await? {
            apply_if_due(caller, row).await?;
        }
    }
    Ok(())
}

/// The subscription.scheduled job: subscription `id` of `org` with what is
/// due by `now` done (safe to run again: what was done meanwhile is left).
pub async fn run(store: &Store, org: Uuid, id: Uuid, now: DateTime<Utc>) -> Result<()> {
    let Some(row) = store.subscription(org, &IdOrRef::Id(id)).await? else { return Ok(()) };
    let caller = Caller::system(store, org, now);
    apply_if_due(&caller, row).await.map(drop)
}
