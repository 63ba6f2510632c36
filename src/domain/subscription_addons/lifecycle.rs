//! The add-on lifecycle: its transition table, and what happens to an
//! add-on without being asked: it becomes ACTIVE with its subscription
//! (INSTANT) or at the first usage the network reports (FIRST_USE),
//! EXPIRED when its product's validityDays run out, CANCELLED when its
//! subscription ends or a cancellation at the end of its period falls due.
//! Each change is written in the transaction that causes it, with the job
//! of what it has due next.

use crate::domain::Caller;
use crate::error::{Error, Result};
use crate::events::Event;
use crate::kinds::ActivationType;
use crate::states::agreed;
use crate::states::subscription_addons::{ADDON, AddonOp, AddonStatus as Status};
use crate::states::subscriptions::SubscriptionStatus;
use crate::store::{AddonRow, JobKind, OfferingRow, Store, SubscriptionRow, Tx};
use chrono::{DateTime, Duration, Utc};
use uuid::Uuid;

/// How an add-on of `offering` becomes ACTIVE (INSTANT unless its product
/// says FIRST_USE).
pub fn activation(offering: &OfferingRow) -> ActivationType {
    offering.product.features.as_ref().and_then(|f| f.activation_type).unwrap_or(ActivationType::Instant)
}

/// How long an add-on of `offering` is valid from its activation.
fn validity(offering: &OfferingRow) -> Option<Duration> {
    offering.product.features.as_ref().and_then(|f| f.validity_days).map(|d| Duration::days(d.into()))
}

/// `a` on `offering` from `at` on: it keeps its state and activation; an
/// ACTIVE add-on's validity follows the new offering from its activation,
/// and ends at `at` when that has passed.
pub(super) fn change_to(a: &mut AddonRow, offering: &OfferingRow, at: DateTime<Utc>) {
    a.offering_id = offering.id;
    a.pending_offering = None;
    if a.status == Status::Active {
        a.expires_at = a.activated_at.zip(validity(offering)).map(|(from, days)| (from + days).max(at));
    }
}

/// `a` after `op` at `at`, or None where the table has no such move. (A
/// cancellation at period end and an offering change are written by
/// their requests.)
pub(super) fn moved(a: &AddonRow, offering: &OfferingRow, op: AddonOp, at: DateTime<Utc>) -> Option<AddonRow> {
    let mut after = a.clone();
    after.status = ADDON.target(op, a.status)?;
    after.updated_at = at.max(a.updated_at);
    if matches!(op, AddonOp::SubscriptionEnds | AddonOp::CancelNow) {
        after.cancelled_at = Some(at);
    }
    match after.status {
        Status::Active if a.status == Status::Active => {}
        Status::Active => {
            after.activated_at = Some(at);
            after.expires_at = validity(offering).map(|days| at + days);
        }
        Status::Cancelled | Status::Expired => {
            after.ended_at = Some(at);
            (after.pending, after.pending_offering) = (None, None);
        }
        Status::Pending => {}
    }
    Some(after)
}

/// Writes `after` over `before` in `tx`, with the job of what it has due
/// next; false when another writer moved it first.
pub(super) async fn write(store: &Store, tx: &mut Tx, org: Uuid, before: &AddonRow, after: &AddonRow, now: DateTime<Utc>) -> Result<bool> {
    if !Store::update_addon(tx, org, after, before).await? {
        return Ok(false);
    }
    if super::license::ends(before, after) {
        super::license::end_with(store, tx, org, after, now).await?;
    }
    if let Some(due) = after.due_at().filter(|d| before.due_at() != Some(*d)) {
        Store::schedule_job(tx, JobKind::AddonScheduled, &after.id.to_string(), Some(org), due, now).await?;
    }
    Ok(true)
}

pub(super) async fn offering_of(store: &Store, tx: Option<&mut Tx>, org: Uuid, a: &AddonRow) -> Result<OfferingRow> {
    store.offering_in(tx, org, a.offering_id).await?.ok_or_else(|| Error::Internal(format!("offering {} vanished", a.offering_id)))
}

/// Moves by `op` at `at` every add-on of `subscription` the table moves
/// (of those activating, only the add-ons activated `by`), in `tx`; how
/// many moved.
#[allow(clippy::too_many_arguments)]
async fn move_all(
    store: &Store,
    tx: &mut Tx,
    org: Uuid,
    subscription: Uuid,
    op: AddonOp,
    by: Option<ActivationType>,
    at: DateTime<Utc>,
    now: DateTime<Utc>,
) -> Result<usize> {
    let mut moved_count = 0;
    for mut a in store.subscription_addons(Some(tx), org, subscription).await? {
        // what it had due before this instant happens first: one whose
        // validity ran out before its subscription ended stays EXPIRED
        while let Some(due) = a.due_at().filter(|d| *d <= at) {
            let Some(after) = due_move(store, Some(&mut *tx), org, &a, due).await? else { break };
            if !write(store, tx, org, &a, &after, now).await? {
                return Err(Error::concurrent_conflict());
            }
            a = after;
        }
        if ADDON.target(op, a.status).is_none() {
            continue;
        }
        let offering = offering_of(store, Some(&mut *tx), org, &a).await?;
        if by.is_some_and(|by| activation(&offering) != by) {
            continue;
        }
        // (a late record of usage from before the add-on was bought does not date it)
        let at = if op == AddonOp::FirstUse { at.max(a.created_at) } else { at };
        let after = agreed(moved(&a, &offering, op, at), "an add-on's move with its subscription")?;
        if !write(store, tx, org, &a, &after, now).await? {
            return Err(Error::concurrent_conflict());
        }
        moved_count += 1;
    }
    Ok(moved_count)
}

/// Follows a subscription's move from `before` to `after` at `at`
/// (`Change::SubscriptionMoved`): its add-ons follow it.
pub(in crate::domain) async fn subscription_moved(
    tx: &mut Tx,
    caller: &Caller,
    before: &SubscriptionRow,
    after: &SubscriptionRow,
    at: DateTime<Utc>,
) -> Result<()> {
    let (store, org, id, now, before) = (&caller.store, caller.org, after.id, caller.now, before.status);
    match after.status {
        SubscriptionStatus::Activated if before != SubscriptionStatus::Activated => {
            move_all(store, tx, org, id, AddonOp::SubscriptionActive, Some(ActivationType::Instant), at, now).await?;
        }
        SubscriptionStatus::Cancelled if before != SubscriptionStatus::Cancelled => {
            move_all(store, tx, org, id, AddonOp::SubscriptionEnds, None, at, now).await?;
        }
        _ => {}
    }
    Ok(())
}

/// In the transaction recording usage of `subscription` at `at`: its
/// PENDING FIRST_USE add-ons become ACTIVE from then. Whether any did.
pub async fn first_use(store: &Store, tx: &mut Tx, org: Uuid, subscription: &SubscriptionRow, at: DateTime<Utc>, now: DateTime<Utc>) -> Result<bool> {
    if subscription.status != SubscriptionStatus::Activated {
        return Ok(false);
    }
    Ok(move_all(store, tx, org, subscription.id, AddonOp::FirstUse, Some(ActivationType::FirstUse), at, now).await? > 0)
}

/// What a submitted SUBSCRIPTION_ADDON line of order `bought` (id,
/// currency) creates: an add-on of `parent` on `offering`, PENDING, or
/// ACTIVE at once when it is INSTANT and `parent` is ACTIVATED (with the
/// job of its expiry), and the license it carries when its product names
/// a licenseType. Its id, and the events of the license.
pub async fn create(
    tx: &mut Tx,
    org: Uuid,
    parent: &SubscriptionRow,
    bought: (Uuid, &str),
    offering: &OfferingRow,
    now: DateTime<Utc>,
) -> Result<(Uuid, Vec<Event>)> {
    let (order_id, _) = bought;
    let (license_id, events) = super::license::carried(tx, org, parent, bought, offering, now).await?;
    let pending = AddonRow {
        id: crate::domain::new_id(),
        subscription_id: parent.id,
        order_id,
        offering_id: offering.id,
        status: Status::Pending,
        reference_id: None,
        created_at: now,
        updated_at: now,
        activated_at: None,
        expires_at: None,
        cancelled_at: None,
        ended_at: None,
        pending: None,
        pending_offering: None,
        license_id,
    };
    let row = created(parent, offering, pending, now)?;
    Store::insert_subscription_addon(tx, org, &row).await?;
    if let Some(due) = row.due_at() {
        Store::schedule_job(tx, JobKind::AddonScheduled, &row.id.to_string(), Some(org), due, now).await?;
    }
    Ok((row.id, events))
}

/// The state a new add-on of `offering` starts in on `parent`: ACTIVE
/// from `now` for an INSTANT add-on of an ACTIVATED subscription.
pub fn created(parent: &SubscriptionRow, offering: &OfferingRow, mut a: AddonRow, now: DateTime<Utc>) -> Result<AddonRow> {
    if parent.status == SubscriptionStatus::Activated && activation(offering) == ActivationType::Instant {
        a = agreed(moved(&a, offering, AddonOp::SubscriptionActive, now), "a new add-on's activation")?;
    }
    Ok(a)
}

/// The add-on `a` with what was due by the caller's now done, in time
/// order: a cancellation at the end of its period (first, at the same
/// time), a scheduled offering change, its validity ending; each dated
/// then, with `subscription.updated` on the parent. Safe to run again
/// (the add-on.scheduled job, and reads).
pub async fn apply_if_due(caller: &Caller, mut a: AddonRow) -> Result<AddonRow> {
    while let Some(due) = a.due_at().filter(|d| *d <= caller.now) {
        let Some(after) = due_move(&caller.store, None, caller.org, &a, due).await? else { return Ok(a) };
        let parent = caller.store.subscription(caller.org, &crate::store::IdOrRef::Id(a.subscription_id)).await?;
        let parent = parent.ok_or_else(|| Error::Internal(format!("subscription {} vanished", a.subscription_id)))?;
        let mut tx = caller.store.begin().await?;
        if !write(&caller.store, &mut tx, caller.org, &a, &after, caller.now).await? {
            drop(tx);
            // another request or instance moved it first: go on from what it left
            let now = caller.store.addon(caller.org, a.id).await?.ok_or_else(|| Error::Internal(format!("add-on {} vanished", a.id)))?;
            if (now.status, now.updated_at, now.due_at()) == (a.status, a.updated_at, a.due_at()) {
                return Err(Error::Internal(format!("add-on {}: what is due cannot be written", a.id)));
            }
            a = now;
            continue;
        }
        tell(caller, &mut tx, &parent, due).await?;
        tx.commit().await?;
        a = after;
    }
    Ok(a)
}

/// `a` after what falls due at `due` (its `due_at`): a cancellation at
/// the end of its period (first, at the same time), a scheduled offering
/// change, or its validity ending; read in `tx` when given.
async fn due_move(store: &Store, tx: Option<&mut Tx>, org: Uuid, a: &AddonRow, due: DateTime<Utc>) -> Result<Option<AddonRow>> {
    Ok(match (a.pending, &a.pending_offering) {
        (Some((_, at)), _) if at == due => moved(a, &offering_of(store, tx, org, a).await?, AddonOp::CancellationDate, due),
        (_, Some(change)) if change.at == due => {
            let offering = store.offering_in(tx, org, change.offering_id).await?;
            let offering = offering.ok_or_else(|| Error::Internal(format!("offering {} vanished", change.offering_id)))?;
            let mut after = a.clone();
            change_to(&mut after, &offering, due);
            after.updated_at = due.max(a.updated_at);
            Some(after)
        }
        _ => moved(a, &offering_of(store, tx, org, a).await?, AddonOp::ValidityEnds, due),
    })
}

/// The add-ons of `s`, oldest first, each with what was due by the
/// caller's now done.
pub async fn addons_of(caller: &Caller, s: &SubscriptionRow) -> Result<Vec<AddonRow>> {
    let mut out = vec![];
    for a in caller.store.subscription_addons(None, caller.org, s.id).await? {
        out.push(apply_if_due(caller, a).await?);
    }
    Ok(out)
}

/// Records, in `tx`, that add-ons of `parent` changed at `at`:
/// `subscription.updated` carrying the subscription as read.
pub(crate) async fn tell(caller: &Caller, tx: &mut Tx, parent: &SubscriptionRow, at: DateTime<Utc>) -> Result<()> {
    let shown = crate::domain::subscriptions::render::shown_in(caller, Some(&mut *tx), &mut Default::default(), parent).await?;
    crate::events::record(tx, caller.org, at, &crate::events::Event::SubscriptionUpdated(shown)).await
}

/// The add-on.scheduled job: add-on `id` of `org` with what is due by
/// `now` done. (The job first does what its subscription had due, which
/// may end it: a subscription's moves reach down to its add-ons, never
/// the other way.)
pub async fn run(store: &Store, org: Uuid, id: Uuid, now: DateTime<Utc>) -> Result<()> {
    let Some(a) = store.addon(org, id).await? else { return Ok(()) };
    let caller = Caller::system(store, org, now);
    apply_if_due(&caller, a).await.map(drop)
}

#[cfg(test)]
mod tests {
    /// The Subscription Add-ons tag of every document publishes this table.
    #[test]
    fn the_documents_publish_the_table() {
        for document in crate::wire::DOCUMENTS {
            let tag = crate::states::tag_description(document, "Subscription Add-ons");
            assert!(tag.contains(&super::ADDON.markdown()), "the Subscription Add-ons tag lacks the table:\n{}", super::ADDON.markdown());
        }
    }
}
