//! The porting job (`porting.step`, subject: a porting's id), on the
//! organisation's clock: it submits a PENDING port-in to the losing
//! carrier, asks for its answer a few minutes later, and completes a
//! SCHEDULED porting on its date (a port-in's subscription takes the
//! number brought; a port-out's subscription is cancelled).
//!
//! The carrier and the network are outside the database, so each is
//! asked before the transaction that records what it answered, with the
//! porting's id and submission as the carrier's idempotency key: after a
//! crash between the two, the job runs again and asks the same thing
//! again, which the carrier takes once.

use super::moves_at;
use crate::carrier::{Answer, Carrier, PortRequest};
use crate::domain::Caller;
use crate::domain::catalog::Offerings;
use crate::domain::subscriptions::render::shown_in;
use crate::error::{Error, Result};
use crate::events::{self, Event};
use crate::kinds::PortingDirection;
use crate::network::Network;
use crate::states::porting::{PORTING, PortingOp, PortingStatus as S};
use crate::states::subscriptions::SubscriptionStatus;
use crate::store::{IdOrRef, JobKind, PortingRow, Store, SubscriptionRow};
use crate::wire::latest as wire;
use chrono::{DateTime, Duration, Utc};
use uuid::Uuid;

/// What the losing carrier is sent: the details with their secrets (kept
/// apart from them, sealed: src/store/port_in_secrets.rs).
async fn request(store: &Store, p: &PortingRow, submission: i64) -> Result<PortRequest> {
    let secrets = store.port_in_secrets(p.org_id, &p.id.to_string()).await?;
    let details = crate::store::port_in_joined(&p.details.clone().unwrap_or_default(), secrets);
    Ok(PortRequest { id: p.id, submission, msisdn: p.msisdn.clone(), details })
}

/// Does what is due of porting `id` of `org` at `now`.
pub async fn run(store: &Store, carrier: &dyn Carrier, network: &dyn Network, org: Uuid, id: Uuid, now: DateTime<Utc>) -> Result<()> {
    let caller = Caller::system(store, org, now);
    let Some(p) = store.porting(org, id).await? else { return Ok(()) };
    let subscription =
        store.subscription(org, &IdOrRef::Id(p.subscription_id)).await?.ok_or_else(|| Error::Internal(format!("porting {id}: no subscription")))?;
    if subscription.status == SubscriptionStatus::Cancelled {
        if let Some(status) = PORTING.target(PortingOp::SubscriptionCancelled, p.status) {
            return write(&caller, &p, &subscription, |a| (a.status, a.failure_reason) = (status, Some("The subscription was cancelled.".into())), None).await;
        }
        return Ok(());
    }
    match p.status {
        S::Pending => {
            let submission = p.submissions + 1;
            carrier.submit(&request(store, &p, submission).await?, now).await.map_err(|u| Error::Internal(format!("the losing carrier: {}", u.0)))?;
            let status = PORTING.next(PortingOp::Submit, p.status)?;
            let set = |a: &mut PortingRow| (a.status, a.submissions, a.submitted_at, a.failure_reason) = (status, submission, Some(now), None);
            write(&caller, &p, &subscription, set, Some(now + Duration::minutes(crate::carrier::ANSWER_AFTER_MINUTES))).await
        }
        S::InProgress => {
            let submitted_at = p.submitted_at.unwrap_or(p.updated_at);
            let answer = carrier
                .answer(&request(store, &p, p.submissions).await?, submitted_at, now)
                .await
                .map_err(|u| Error::Internal(format!("the losing carrier: {}", u.0)))?;
            match answer {
                // not yet: asked again a little later
                None => reschedule(store, &p, now + Duration::minutes(1), now).await,
                Some(Answer::Accepted(day)) => {
                    let status = PORTING.next(PortingOp::Accept, p.status)?;
                    write(&caller, &p, &subscription, |a| (a.status, a.scheduled_on, a.failure_reason) = (status, Some(day), None), Some(moves_at(day))).await
                }
                // it waits for POST in-porting to update the details
                Some(Answer::Waiting(reason)) if p.failure_reason.as_deref() != Some(reason.as_str()) => {
                    let status = PORTING.next(PortingOp::Wait, p.status)?;
                    write(&caller, &p, &subscription, |a| (a.status, a.failure_reason) = (status, Some(reason)), None).await
                }
                Some(Answer::Waiting(_)) => Ok(()),
                Some(Answer::Rejected(reason)) => {
                    let status = PORTING.next(PortingOp::Reject, p.status)?;
                    write(&caller, &p, &subscription, |a| (a.status, a.failure_reason) = (status, Some(reason)), None).await
                }
            }
        }
        S::Scheduled => match p.scheduled_on.map(moves_at) {
            Some(at) if at <= now => complete(&caller, network, &p, &subscription, at).await,
            Some(at) => reschedule(store, &p, at, now).await,
            None => Err(Error::Internal(format!("porting {id} is SCHEDULED without a date"))),
        },
        S::Completed | S::Failed => Ok(()),
    }
}

async fn reschedule(store: &Store, p: &PortingRow, at: DateTime<Utc>, now: DateTime<Utc>) -> Result<()> {
    let mut tx = store.begin().await?;
    Store::schedule_job(&mut tx, JobKind::PortingStep, &p.id.to_string(), Some(p.org_id), at, now).await?;
    tx.commit().await
}

/// The event of a port-in's move to `status`.
fn event_of(status: S) -> fn(wire::Subscription) -> Event {
    match status {
        S::Completed => Event::SubscriptionPortInCompleted,
        S::Failed => Event::SubscriptionPortInFailed,
        _ => Event::SubscriptionPortInUpdated,
    }
}

/// Records `p` changed by `change`, with its event (a port-in's) and its
/// next step at `next`, unless a request moved it first (then its own
/// step is scheduled, and nothing is written here).
async fn write(
    caller: &Caller,
    p: &PortingRow,
    subscription: &SubscriptionRow,
    change: impl FnOnce(&mut PortingRow),
    next: Option<DateTime<Utc>>,
) -> Result<()> {
    let now = caller.now;
    let mut after = p.clone();
    change(&mut after);
    after.updated_at = now;
    let mut tx = caller.store.begin().await?;
    if !Store::update_porting(&mut tx, &after, p).await? {
        return Ok(());
    }
    if let Some(at) = next {
        Store::schedule_job(&mut tx, JobKind::PortingStep, &p.id.to_string(), Some(p.org_id), at, now).await?;
    }
    if p.direction == PortingDirection::Inbound {
        let shown = shown_in(caller, Some(&mut tx), &mut Offerings::default(), subscription).await?;
        events::record(&mut tx, caller.org, now, &event_of(after.status)(shown)).await?;
    }
    tx.commit().await
}

/// A SCHEDULED porting's date arrived at `at`: the number moves. A port-in's
/// subscription takes the number brought (its temporary one returns to the
/// pool); a port-out's subscription is cancelled and its number PORTED_OUT.
async fn complete(caller: &Caller, network: &dyn Network, p: &PortingRow, subscription: &SubscriptionRow, at: DateTime<Utc>) -> Result<()> {
    if p.direction == PortingDirection::Outbound {
        return super::outbound::complete(caller, network, p, subscription, at).await;
    }
    let refused = |r: crate::network::Refused| Error::Internal(format!("the network refused porting {}: {}", p.id, r.0));
    // a number someone at this operator took (or put in a pool) meanwhile
    // cannot be brought
    if subscription.msisdn != p.msisdn && caller.store.number_in_use(caller.org, &p.msisdn).await? {
        return write(caller, p, subscription, |a| (a.status, a.failure_reason) = (S::Failed, Some("The number is in use at this operator.".into())), None)
            .await;
    }
    // the network moves the line to the number brought first; asking again
    // after a crash finds it moved already
    if subscription.msisdn != p.msisdn {
        network.change_number(&subscription.msisdn, &p.msisdn).await.map_err(refused)?;
    }
    let status = PORTING.next(PortingOp::Complete, p.status)?;
    let mut after = p.clone();
    (after.status, after.updated_at) = (status, at);
    let mut tx = caller.store.begin().await?;
    if !Store::update_porting(&mut tx, &after, p).await? {
        return Ok(());
    }
    let kind = crate::domain::inventory::numbers::number_type_of_subscription(&subscription.subscription_type);
    let updated_at = at.max(subscription.updated_at);
    // guarded by what the job read: a cancellation meanwhile wins, and the
    // job's next run fails the port-in instead
    if !Store::renumber_subscription(&mut tx, caller.org, subscription, &p.msisdn, updated_at).await? {
        return Err(Error::Internal(format!("subscription {} moved while its port-in completed", subscription.id)));
    }
    // the temporary number an order line started on is free again; a
    // number the subscription had before it asked for the port rests
    let temporary = p.created_at == subscription.created_at;
    let rests = (!temporary).then(|| at + Duration::days(crate::domain::inventory::quarantine::QUARANTINE_DAYS));
    Store::let_number_go(&mut tx, caller.org, &subscription.msisdn, rests, at).await?;
    Store::adopt_number(&mut tx, caller.org, &p.msisdn, kind, subscription.id, at).await?;
    let mut renumbered = subscription.clone();
    (renumbered.msisdn, renumbered.updated_at) = (p.msisdn.clone(), updated_at);
    let shown = shown_in(caller, Some(&mut tx), &mut Offerings::default(), &renumbered).await?;
    events::record(&mut tx, caller.org, at, &Event::SubscriptionPortInCompleted(shown)).await?;
    tx.commit().await
}
