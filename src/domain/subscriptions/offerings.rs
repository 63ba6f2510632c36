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

use super::find;
use super::render::shown;
use super::terms::{self, change_to, date_of, next_payment};
use super::write::{Also, commit};
use crate::domain::Caller;
use crate::domain::access::Role;
use crate::domain::catalog::{self, Offerings, price::Price};
use crate::domain::cycles::midnight;
use crate::domain::offering_change::{asked_date, is_upgrade, named, price_of};
use crate::error::{Error, InternalCode, Result};
use crate::events::Event;
use crate::kinds::OfferingStatus;
use crate::states::subscriptions::{SUBSCRIPTION, SubscriptionOp as Op, SubscriptionStatus as Status};
use crate::store::{OfferingRow, PendingOffering, SubscriptionRow};
use crate::wire::latest::{self as wire, ChangeSchedule as Schedule};
use chrono::NaiveDate;

fn conflict(code: InternalCode, message: impl Into<String>, property: &'static str) -> Error {
    Error::Conflict { code, message: message.into(), property }
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
    for o in caller.store.catalog_offerings(catalog, Some(OfferingStatus::Available)).await? {
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
