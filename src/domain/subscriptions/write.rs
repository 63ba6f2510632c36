//! Writing a subscription's move: `after` over `before` unless another
//! writer moved it first, what else the move writes, the job of what falls
//! due next and its events, in one transaction, with what follows the move
//! (`Change::SubscriptionMoved`: its add-ons, licenses, SIMs and number). Used by the moves a request asks for and
//! by what falls due on a date.

use super::render::shown;
use super::terms;
use crate::domain::Caller;
use crate::domain::catalog::Offerings;
use crate::domain::catalog::price::Price;
use crate::domain::change::{Change, Renewed};
use crate::error::{Error, InternalCode, Result};
use crate::events::{self, Event};
use crate::network::Sim;
use crate::states::subscriptions::{SUBSCRIPTION, SubscriptionOp as Op};
use crate::store::{JobKind, Stateful, Store, SubscriptionRow, Tx};
use crate::wire::latest as wire;
use chrono::{DateTime, Months, NaiveDate, Utc};

/// The events a move records, each carrying the subscription after it.
pub type Events = &'static [fn(wire::Subscription) -> Event];

/// What service beginning at `at` sets the first time: the first
/// activation's time, the end of a binding contract and the billing cycles
/// counted from it.
pub fn begin_service(after: &mut SubscriptionRow, at: DateTime<Utc>) -> Result<()> {
    if after.life.activated_at.is_none() {
        after.life.activated_at = Some(at);
        after.life.binding_ends_on = after.life.binding_months.and_then(|m| at.date_naive().checked_add_months(Months::new(m.try_into().ok()?)));
        terms::begin_cycles(after, at)?;
    }
    Ok(())
}

/// What the end of service sets: no more renewals, no offering change.
pub fn end_service(after: &mut SubscriptionRow, at: DateTime<Utc>) {
    after.life.ended_at = Some(at);
    after.life.renews_on = None;
    after.life.pending_offering = None;
}

/// The activation events: `subscription.first_activated` too the first time.
pub fn activation_events(before: &SubscriptionRow) -> Events {
    if before.life.activated_at.is_none() { &[Event::SubscriptionActivated, Event::SubscriptionFirstActivated] } else { &[Event::SubscriptionActivated] }
}

/// The refusal of a move that another request beat to the row: the table's
/// answer for the state that request left, read in the transaction whose
/// write missed (on SQLite the two may share a batch not yet committed);
/// when the table allows the move from there too, a 409 `conflict` that
/// says to read it again and retry.
async fn moved_meanwhile(tx: &mut Tx, caller: &Caller, id: uuid::Uuid, op: Op) -> Error {
    match Store::status_in(tx, Stateful::Subscriptions, caller.org, id).await {
        Ok(Some(now)) => SUBSCRIPTION.next(op, now).err().unwrap_or_else(|| Error::changed_meanwhile("subscription")),
        Ok(None) => Error::not_found(InternalCode::SubscriptionNotFound, "subscription"),
        Err(e) => e,
    }
}

/// A renewal on `renews` at the contracted `price`, paid upfront until
/// `paid_through`.
pub struct Renewal {
    pub renews: NaiveDate,
    pub price: Price,
    pub paid_through: Option<NaiveDate>,
}

/// What a move writes besides the subscription.
pub enum Also<'a> {
    Nothing,
    /// the SIM it is now on
    Sim(&'a Sim),
    /// what its subscriber is set to
    Subscriber(&'a serde_json::Value),
    /// its renewal on a date, which its followers bill
    Renewal(&'a Renewal),
}

/// Writes a move: `after` over `before` if nobody moved it meanwhile, what
/// else it writes (`also`), the job of what falls due next, and `events`
/// dated `at`, in one transaction. The subscription as the events carry it.
pub async fn commit(
    caller: &Caller,
    before: &SubscriptionRow,
    after: &SubscriptionRow,
    also: Also<'_>,
    op: Op,
    events: Events,
    at: DateTime<Utc>,
) -> Result<wire::Subscription> {
    let mut tx = caller.store.begin().await?;
    let answer = commit_in(&mut tx, caller, before, after, also, op, events, at).await?;
    tx.commit().await?;
    Ok(answer)
}

/// `commit` in a transaction of the caller's, which also writes what moved
/// the subscription (an invoice's dunning).
#[allow(clippy::too_many_arguments)]
pub async fn commit_in(
    tx: &mut Tx,
    caller: &Caller,
    before: &SubscriptionRow,
    after: &SubscriptionRow,
    also: Also<'_>,
    op: Op,
    events: Events,
    at: DateTime<Utc>,
) -> Result<wire::Subscription> {
    let answer = shown(caller, &mut Offerings::default(), after).await?;
    let (org, id) = (caller.org, after.id);
    if !Store::update_subscription(tx, org, after, before).await? {
        return Err(moved_meanwhile(tx, caller, id, op).await);
    }
    match also {
        Also::Nothing => {}
        Also::Sim(sim) => Store::put_on_sim(tx, org, id, &sim.iccid, after.sim_type, sim.activation_code.as_deref(), at).await?,
        Also::Subscriber(doc) => Store::set_subscriber(tx, org, after.subscriber_id, id, doc, at).await?,
        Also::Renewal(r) => {
            let renewed = Renewed { subscription: before, renews: r.renews, next: after.life.renews_on, price: &r.price, paid_through: r.paid_through, at };
            caller.follow(tx, Change::SubscriptionRenewed(renewed)).await?;
        }
    }
    if let Some(due) = after.life.due_at().filter(|d| before.life.due_at() != Some(*d)) {
        Store::schedule_job(tx, JobKind::SubscriptionScheduled, &id.to_string(), Some(org), due, caller.now).await?;
    }
    for event in events {
        events::record(tx, org, at, &event(answer.clone())).await?;
    }
    caller.follow(tx, Change::SubscriptionMoved { before, after, at }).await?;
    Ok(answer)
}

/// Follows `Change::NumberPortedOut`: `subscription`, whose number another
/// operator took at `at`, CANCELLED (`subscription.cancelled`,
/// `subscription.ended`), with what follows its move.
pub(in crate::domain) async fn ported_out(tx: &mut Tx, caller: &Caller, subscription: &SubscriptionRow, at: DateTime<Utc>) -> Result<()> {
    let mut cancelled = subscription.clone();
    cancelled.status = SUBSCRIPTION.next(Op::PortedOut, subscription.status)?;
    cancelled.updated_at = at.max(subscription.updated_at);
    cancelled.life.cancelled_at = Some(at);
    cancelled.life.pending = None;
    cancelled.life.status_reason = Some("The number was ported out to another operator.".into());
    end_service(&mut cancelled, at);
    commit_in(tx, caller, subscription, &cancelled, Also::Nothing, Op::PortedOut, &[Event::SubscriptionCancelled, Event::SubscriptionEnded], at).await.map(drop)
}
