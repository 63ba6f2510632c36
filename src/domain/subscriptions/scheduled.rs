//! Moves that fall due on a date: an activation the network completes
//! later, a cancellation taking effect. Done for whoever reads the
//! subscription once its time has passed, and by the subscription.scheduled
//! job for those nobody reads; either way dated at the scheduled time.

use super::lifecycle::{activation_events, begin_service, commit};
use super::states::{SUBSCRIPTION, SubscriptionOp as Op};
use crate::domain::Caller;
use crate::error::{Error, Result};
use crate::events::Event;
use crate::store::{IdOrRef, Store, SubscriptionRow};
use crate::wire::latest::SubscriptionStatus as Status;
use chrono::{DateTime, Utc};
use uuid::Uuid;

/// `row` with its scheduled move done if its time has passed by the
/// caller's now.
pub async fn apply_if_due(caller: &Caller, row: SubscriptionRow) -> Result<SubscriptionRow> {
    let Some((status, at)) = row.life.pending else { return Ok(row) };
    if at > caller.now {
        return Ok(row);
    }
    let op = match status {
        Status::Activated => Op::ActivationCompletes,
        Status::Cancelled => Op::CancellationDate,
        other => return Err(Error::Internal(format!("subscription {}: nothing schedules a move to {other}", row.id))),
    };
    let mut after = row.clone();
    after.life.pending = None;
    after.updated_at = at.max(row.updated_at);
    // a state the table does not move (cancelled now meanwhile) only
    // forgets what was scheduled
    let events: &'static [fn(_) -> Event] = match SUBSCRIPTION.target(op, row.status) {
        None => &[],
        Some(to) => {
            after.status = to;
            match op {
                Op::ActivationCompletes => {
                    begin_service(&mut after, at);
                    activation_events(&row)
                }
                _ => {
                    after.life.ended_at = Some(at);
                    &[Event::SubscriptionEnded]
                }
            }
        }
    };
    match commit(caller, &row, &after, None, op, events, at).await {
        Ok(_) => Ok(after),
        // another request or instance moved it first: what it left
        Err(Error::Conflict { .. }) => caller
            .store
            .subscription(caller.org, &IdOrRef::Id(row.id))
            .await?
            .ok_or_else(|| Error::Internal(format!("subscription {} vanished", row.id))),
        Err(e) => Err(e),
    }
}

/// Every subscription of the caller's organisation whose scheduled move is
/// due (before a list, which shows what a read of each would).
pub async fn apply_all_due(caller: &Caller) -> Result<()> {
    for id in caller.store.subscriptions_due(caller.org, caller.now).await? {
        if let Some(row) = caller.store.subscription(caller.org, &IdOrRef::Id(id)).await? {
            apply_if_due(caller, row).await?;
        }
    }
    Ok(())
}

/// The subscription.scheduled job: subscription `id` of `org` with its move
/// done if due by `now` (safe to run again: a move done meanwhile is left).
pub async fn run(store: &Store, org: Uuid, id: Uuid, now: DateTime<Utc>) -> Result<()> {
    let Some(row) = store.subscription(org, &IdOrRef::Id(id)).await? else { return Ok(()) };
    let caller = Caller { store: store.clone(), org, api_key_id: Uuid::nil(), user: None, now };
    apply_if_due(&caller, row).await.map(drop)
}
