//! Changing a subscription's offering: the options it has now, each with
//! the earliest schedule it may change on, and the change, now or on a
//! date (`pendingProductOffering` until then).
//!
//! The rules: before the first activation nothing is billed, so every
//! change is INSTANT. After it, an upgrade (a higher price per month,
//! before discounts, in the subscription's currency) is INSTANT; a
//! downgrade (the same price or lower) waits for the end of what was paid:
//! NEXT_RENEWAL_DAY, or NEXT_PAYMENT_DAY while cycles paid upfront remain
//! (FIRST_OF_NEXT_MONTH for a one-time price, which has no cycles), and is
//! not offered while a binding contract runs. A change may be asked for on
//! a later schedule than its earliest, never an earlier one.

use super::states::{SUBSCRIPTION, SubscriptionOp as Op};
use super::terms::{self, cycle_end, cycle_months, midnight, next_payment};
use super::lifecycle::{Also, commit};
use super::{find, shown};
use crate::domain::Caller;
use crate::domain::access::Role;
use crate::domain::catalog::{self, Offerings, price::Price};
use crate::error::{Error, InternalCode, Result};
use crate::events::Event;
use crate::store::{OfferingRow, PendingOffering, SubscriptionRow};
use crate::wire::latest::{self as wire, ChangeSchedule as Schedule, ProductOfferingStatus, SubscriptionStatus as Status};
use chrono::{Datelike, Months, NaiveDate};

fn conflict(code: InternalCode, message: impl Into<String>, property: &'static str) -> Error {
    Error::Conflict { code, message: message.into(), property }
}

pub(crate) fn price_of(offering: &OfferingRow) -> Result<Price> {
    serde_json::from_value(offering.offering.price.clone()).map_err(|e| Error::Internal(format!("offering {}: price: {e}", offering.id)))
}

/// The date a change on `schedule` takes effect for `row`, today being
/// `today`; None when the subscription has no such day (no billing cycles).
pub(crate) fn date_of(row: &SubscriptionRow, schedule: Schedule, today: NaiveDate) -> Option<NaiveDate> {
    day_of(schedule, today, row.life.renews_on, next_payment(row))
}

/// The date `schedule` falls on, today being `today`, for something that
/// renews on `renews_on` and is next paid for on `pays_on` (None: it has
/// no such day).
pub(crate) fn day_of(schedule: Schedule, today: NaiveDate, renews_on: Option<NaiveDate>, pays_on: Option<NaiveDate>) -> Option<NaiveDate> {
    match schedule {
        Schedule::Instant => Some(today),
        Schedule::FirstOfNextMonth => Some(today.with_day(1)? + Months::new(1)),
        Schedule::NextRenewalDay => renews_on,
        Schedule::NextPaymentDay => pays_on,
    }
}

/// The earliest schedule of a change of an add-on or a license: INSTANT
/// while it is `pending` (nothing billed yet) or for an `upgrade`, else
/// its next renewal day, or the first of next month when it `renews` not.
pub(crate) fn earliest_for(pending: bool, upgrade: bool, renews: bool) -> Schedule {
    match (pending || upgrade, renews) {
        (true, _) => Schedule::Instant,
        (false, true) => Schedule::NextRenewalDay,
        (false, false) => Schedule::FirstOfNextMonth,
    }
}

/// The offering a change names (`productOfferingId`): 404 naming that
/// field when there is none.
pub(crate) async fn named(caller: &Caller, key: &str) -> Result<OfferingRow> {
    catalog::find(caller, key).await.map_err(|e| match e {
        Error::NotFound { code, message, .. } => Error::NotFound { code, message, property: "productOfferingId" },
        e => e,
    })
}

/// The schedule and date a change asked for on `asked` (the option's
/// `first` when none) takes effect: on or after `not_before`, the date of
/// `first`; `date_of` gives the day a schedule falls on for the `what`
/// changing (None: it has no such day). Else 409
/// change_schedule_not_allowed.
pub(crate) fn asked_date(
    asked: Option<Schedule>,
    first: Schedule,
    not_before: NaiveDate,
    what: &str,
    date_of: impl Fn(Schedule) -> Option<NaiveDate>,
) -> Result<(Schedule, NaiveDate)> {
    let schedule = asked.unwrap_or(first);
    match date_of(schedule).filter(|d| *d >= not_before) {
        Some(date) => Ok((schedule, date)),
        None => Err(conflict(
            InternalCode::ChangeScheduleNotAllowed,
            format!("This change takes effect {first} ({not_before}) at the earliest; {schedule} is earlier or not a day this {what} has."),
            "changeSchedule",
        )),
    }
}

/// Whether `new` costs more per month than `current` in `currency`.
pub(crate) fn is_upgrade(current: &Price, new: &Price, currency: &str) -> bool {
    let per_month = |p: &Price| (p.net_in(currency).unwrap_or(0) as i128, cycle_months(p).unwrap_or(1) as i128);
    let ((cur, cur_months), (new, new_months)) = (per_month(current), per_month(new));
    new * cur_months > cur * new_months
}

/// The earliest schedule `row` may change to an offering priced `new` on,
/// today being `today`, or why it may not (a binding contract).
fn earliest(row: &SubscriptionRow, new: &Price, today: NaiveDate) -> Result<Schedule> {
    if row.life.activated_at.is_none() || is_upgrade(&terms::price(&row.terms)?, new, &row.terms.currency) {
        return Ok(Schedule::Instant);
    }
    if let Some(binding) = row.life.binding_ends_on.filter(|b| *b > today) {
        return Err(conflict(
            InternalCode::BindingContractActive,
            format!("The binding contract runs until {binding}: until then the subscription changes only to a pricier offering."),
            "productOfferingId",
        ));
    }
    Ok(match (row.life.renews_on, next_payment(row)) {
        (Some(renews), Some(paid)) if paid > renews => Schedule::NextPaymentDay,
        (Some(_), _) => Schedule::NextRenewalDay,
        (None, _) => Schedule::FirstOfNextMonth,
    })
}

/// The offerings `row` may change to (of its category, AVAILABLE, in its
/// customer's catalog, priced in its currency, not its own), each with its
/// price.
async fn candidates(caller: &Caller, row: &SubscriptionRow) -> Result<Vec<(OfferingRow, Price)>> {
    let Some((catalog, _)) = caller.store.customer_catalog(caller.org, row.customer_id).await? else { return Ok(vec![]) };
    let current = caller.store.offering(caller.org, row.offering_id).await?;
    let current = current.ok_or_else(|| Error::Internal(format!("offering {} vanished", row.offering_id)))?;
    let mut out = vec![];
    for o in caller.store.catalog_offerings(catalog, Some(ProductOfferingStatus::Available)).await? {
        if o.id == row.offering_id || o.product.category != current.product.category {
            continue;
        }
        let price = price_of(&o)?;
        if price.net_in(&row.terms.currency).is_some() {
            out.push((o, price));
        }
    }
    out.sort_by(|a, b| a.0.offering.name.cmp(&b.0.offering.name));
    Ok(out)
}

pub async fn options(caller: &Caller, key: &str) -> Result<wire::ProductOfferingOptionList> {
    let row = find(caller, key).await?;
    if row.status == Status::Cancelled {
        return Ok(wire::ProductOfferingOptionList { items: vec![] });
    }
    let today = caller.now.date_naive();
    let mut items = vec![];
    for (o, price) in candidates(caller, &row).await? {
        let Ok(schedule) = earliest(&row, &price, today) else { continue };
        let date = date_of(&row, schedule, today).ok_or_else(|| Error::Internal(format!("subscription {}: no date for {schedule}", row.id)))?;
        items.push(wire::ProductOfferingOption { product_offering: catalog::to_wire(&o)?, change_schedule: schedule, change_schedule_date: date });
    }
    Ok(wire::ProductOfferingOptionList { items })
}

/// `row` on `offering` from now: its catalog price becomes the contracted
/// one; the binding contract's end, the billing day and what was paid
/// upfront stay. A subscription in service whose new price has billing
/// cycles and the old none begins them today; one whose new price has none
/// stops renewing.
pub fn change_to(row: &mut SubscriptionRow, offering: &OfferingRow, today: NaiveDate) -> Result<()> {
    let price = price_of(offering)?;
    row.offering_id = offering.id;
    row.terms.binding_contract &= price.binding_contract.is_some();
    row.terms.price = offering.offering.price.clone();
    match (cycle_months(&price), row.life.renews_on, row.life.activated_at) {
        (None, ..) => row.life.renews_on = None,
        (Some(months), None, Some(_)) if row.status != Status::Cancelled => {
            row.life.renews_on = Some(cycle_end(today, months, row.life.billing_day.unwrap_or(today.day())));
        }
        _ => {}
    }
    Ok(())
}

pub async fn change(caller: &Caller, key: &str, req: wire::ProductOfferingChangeRequest) -> Result<wire::Subscription> {
    let before = find(caller, key).await?;
    caller.require_role(before.customer_id, Role::Manager)?;
    let status = SUBSCRIPTION.next(Op::ChangeOffering, before.status)?;
    let offering = named(caller, &req.product_offering_id).await?;
    let mut after = before.clone();
    (after.status, after.updated_at) = (status, caller.now);
    if offering.id == before.offering_id {
        // its own offering: what is scheduled is withdrawn
        if before.life.pending_offering.is_none() {
            return shown(caller, &mut Offerings::default(), &before).await;
        }
        after.life.pending_offering = None;
        return commit(caller, &before, &after, Also::Nothing, Op::ChangeOffering, &[Event::SubscriptionUpdated], caller.now).await;
    }
    let Some((offering, price)) = candidates(caller, &before).await?.into_iter().find(|(o, _)| o.id == offering.id) else {
        return Err(conflict(
            InternalCode::OfferingChangeNotAllowed,
            "The subscription cannot change to this offering: see its product-offering-options (same category, AVAILABLE, in the customer's catalog, priced in its currency).",
            "productOfferingId",
        ));
    };
    let today = caller.now.date_naive();
    let first = earliest(&before, &price, today)?;
    let not_before = date_of(&before, first, today).unwrap_or(today);
    let (schedule, date) = asked_date(req.change_schedule, first, not_before, "subscription", |s| date_of(&before, s, today))?;
    if date <= today {
        change_to(&mut after, &offering, today)?;
        after.life.pending_offering = None;
    } else {
        let pending = PendingOffering { offering_id: offering.id, schedule: schedule.to_string(), at: midnight(date) };
        if before.life.pending_offering.as_ref() == Some(&pending) {
            // asked again: already so
            return shown(caller, &mut Offerings::default(), &before).await;
        }
        after.life.pending_offering = Some(pending);
    }
    commit(caller, &before, &after, Also::Nothing, Op::ChangeOffering, &[Event::SubscriptionUpdated], caller.now).await
}
