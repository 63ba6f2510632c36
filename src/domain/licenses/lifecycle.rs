//! The license lifecycle: its transition table; how a license follows the
//! subscription it is assigned to (ACTIVE when it is ACTIVATED, PAUSED
//! while it is PAUSED or SUSPENDED, BLOCKED while it is BLOCKED, CANCELLED
//! when it ends), each move with its events in the transaction of the
//! subscription's move; its cancellation, now or at a later date; its
//! billing cycles (renewals) and offering changes. What falls due on a
//! date is done in `scheduled`.

use crate::domain::Caller;
use crate::domain::catalog::Offerings;
use crate::domain::cycles::{cycle_end, cycle_months};
use crate::domain::offering_change::price_of;
use crate::error::Result;
use crate::events::{self, Event};
use crate::states::licenses::{LICENSE, LicenseOp, LicenseStatus as Status};
use crate::states::subscriptions::SubscriptionStatus;
use crate::store::{JobKind, LicenseRow, OfferingRow, Store, SubscriptionRow, Tx};
use chrono::{DateTime, Datelike, NaiveDate, Utc};

/// The events a move records, each carrying the license after it.
type Events = &'static [fn(crate::wire::latest::License) -> Event];

/// What its activation at `at` begins: billing cycles on its day (none
/// for a one-time price), the first ending a cycle on.
pub(super) fn begin_cycles(l: &mut LicenseRow, at: DateTime<Utc>) {
    l.activated_at = Some(at);
    l.billing_day = Some(at.day());
    l.renews_on = l.cycle_months.map(|months| cycle_end(at.date_naive(), months, at.day()));
}

/// `l` on `offering` from `today`: its cycles keep their day and follow
/// the new price's cycle from the next renewal; a live license whose new
/// price has cycles and the old none begins them today; one whose new
/// price has none stops renewing.
pub fn change_to(l: &mut LicenseRow, offering: &OfferingRow, today: NaiveDate) -> Result<()> {
    l.offering_id = offering.id;
    l.cycle_months = cycle_months(&price_of(offering)?);
    match (l.cycle_months, l.renews_on, l.activated_at) {
        (None, ..) => l.renews_on = None,
        (Some(months), None, Some(_)) if l.status != Status::Cancelled => {
            l.renews_on = Some(cycle_end(today, months, *l.billing_day.get_or_insert(today.day())));
        }
        _ => {}
    }
    Ok(())
}

/// `l` after `op` at `at` (for CancelLater: the date it ends), and the
/// events it records; None where the table has no such move. An offering
/// change's new offering is put on by `scheduled` and `offerings`.
pub(super) fn moved(l: &LicenseRow, op: LicenseOp, at: DateTime<Utc>) -> Option<(LicenseRow, Events)> {
    let mut after = l.clone();
    after.status = LICENSE.target(op, l.status)?;
    after.version = l.version + 1;
    after.updated_at = at.max(l.updated_at);
    after.paused_at = (after.status == Status::Paused).then(|| l.paused_at.unwrap_or(at));
    let events: Events = match (op, l.status, after.status) {
        (LicenseOp::CancelLater, ..) => {
            after.pending = Some((Status::Cancelled, at));
            &[Event::LicenseCancelled]
        }
        (_, Status::Pending, Status::Active) => {
            begin_cycles(&mut after, at);
            &[Event::LicenseActivated]
        }
        (LicenseOp::RenewalDay, ..) => {
            // (due only with a renewal date: without one, no move)
            let renews = l.renews_on?;
            after.renews_on = l.cycle_months.map(|m| cycle_end(renews, m, l.billing_day.unwrap_or(renews.day())));
            if l.status == Status::Active { &[Event::LicenseRenewed] } else { &[] }
        }
        // a scheduled cancellation was told when it was asked for
        (LicenseOp::CancellationDate, ..) => {
            (after.ended_at, after.pending) = (Some(at), None);
            (after.renews_on, after.pending_offering) = (None, None);
            &[Event::LicenseEnded]
        }
        (_, _, Status::Cancelled) => {
            // ending with its subscription or add-on keeps the day a cancellation was asked for
            let asked = if matches!(op, LicenseOp::SubscriptionEnds | LicenseOp::AddonEnds) { l.cancelled_at.unwrap_or(at) } else { at };
            (after.cancelled_at, after.ended_at, after.pending) = (Some(asked), Some(at), None);
            (after.renews_on, after.pending_offering) = (None, None);
            &[Event::LicenseCancelled, Event::LicenseEnded]
        }
        _ => &[Event::LicenseUpdated],
    };
    Some((after, events))
}

/// Writes `after` over `before` in `tx` with its `events` dated `at` and
/// the job of what it has due next; false when another writer moved it
/// first.
pub(super) async fn write(
    caller: &Caller,
    tx: &mut Tx,
    offerings: &mut Offerings,
    before: &LicenseRow,
    after: &LicenseRow,
    events: Events,
    at: DateTime<Utc>,
) -> Result<bool> {
    if !Store::update_license(tx, caller.org, after, before).await? {
        return Ok(false);
    }
    if let Some(due) = after.due_at().filter(|d| before.due_at() != Some(*d)) {
        Store::schedule_job(tx, JobKind::LicenseScheduled, &after.id.to_string(), Some(caller.org), due, caller.now).await?;
    }
    let shown = super::render::shown_in(caller, Some(&mut *tx), offerings, after).await?;
    for event in events {
        events::record(tx, caller.org, at, &event(shown.clone())).await?;
    }
    Ok(true)
}

/// In the transaction of the move that ended the add-on carrying license
/// `id`, at `at`: the license ends too (`license.cancelled`,
/// `license.ended`), unless it has already.
pub async fn end_with_addon(caller: &Caller, tx: &mut Tx, id: uuid::Uuid, at: DateTime<Utc>) -> Result<()> {
    let Some(l) = caller.store.license_in(tx, caller.org, id).await? else { return Ok(()) };
    let Some((after, told)) = moved(&l, LicenseOp::AddonEnds, at) else { return Ok(()) };
    if !write(caller, tx, &mut Offerings::default(), &l, &after, told, at).await? {
        return Err(crate::error::Error::concurrent_conflict());
    }
    Ok(())
}

/// Follows a subscription's move from `before` to `after` at `at`
/// (`Change::SubscriptionMoved`): the licenses assigned to it follow, each
/// with its events.
pub(in crate::domain) async fn subscription_moved(
    tx: &mut Tx,
    caller: &Caller,
    before: &SubscriptionRow,
    after: &SubscriptionRow,
    at: DateTime<Utc>,
) -> Result<()> {
    let op = match after.status {
        _ if after.status == before.status => return Ok(()),
        SubscriptionStatus::Activated => LicenseOp::SubscriptionActive,
        SubscriptionStatus::Paused | SubscriptionStatus::Suspended => LicenseOp::SubscriptionPaused,
        SubscriptionStatus::Blocked => LicenseOp::SubscriptionBlocked,
        SubscriptionStatus::Cancelled => LicenseOp::SubscriptionEnds,
        SubscriptionStatus::Pending => return Ok(()),
    };
    let mut offerings = Offerings::default();
    for l in caller.store.subscription_licenses(tx, caller.org, after.id).await? {
        let Some((moved, told)) = moved(&l, op, at) else { continue };
        if !write(caller, tx, &mut offerings, &l, &moved, told, at).await? {
            return Err(crate::error::Error::concurrent_conflict());
        }
    }
    Ok(())
}
