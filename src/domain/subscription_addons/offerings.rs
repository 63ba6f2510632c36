//! Changing an add-on's offering: the options it has now, each with the
//! earliest schedule it may change on, and the change, now or on a date
//! (`pendingProductOffering` until then).
//!
//! The rules: the options are the subscription's add-on options of the
//! same product category as the add-on's offering (another extra-data
//! package for an extra-data package), not its own. A PENDING add-on has
//! used nothing and changes INSTANT; an ACTIVE one changes INSTANT to a
//! pricier offering (an upgrade, before discounts, in the subscription's
//! currency), otherwise on the subscription's NEXT_RENEWAL_DAY, or
//! FIRST_OF_NEXT_MONTH when it has no renewals. A change may be asked for
//! on a later schedule than its earliest, never an earlier one.

use super::lifecycle::{addons_of, change_to, tell, write};
use super::{options, shown};
use crate::domain::access::Role;
use crate::domain::cycles::midnight;
use crate::domain::offering_change::{asked_date, earliest_for, is_upgrade, named, price_of};
use crate::domain::subscriptions::find;
use crate::domain::subscriptions::terms::date_of;
use crate::domain::{Caller, catalog};
use crate::error::{Error, InternalCode, Result};
use crate::states::subscription_addons::{ADDON, AddonOp, AddonStatus as Status};
use crate::store::{AddonRow, OfferingRow, PendingOffering, SubscriptionRow};
use crate::wire::latest::{self as wire, ChangeSchedule as Schedule};
use chrono::NaiveDate;

fn conflict(code: InternalCode, message: impl Into<String>, property: &'static str) -> Error {
    Error::Conflict { code, message: message.into(), property }
}

/// The add-on offerings `a` (on `current`) may change to, each with the
/// earliest schedule and its date.
async fn candidates(caller: &Caller, s: &SubscriptionRow, a: &AddonRow, current: &OfferingRow) -> Result<Vec<(OfferingRow, Schedule, NaiveDate)>> {
    let today = caller.now.date_naive();
    let current_price = price_of(current)?;
    let mut out = vec![];
    for o in options::of(caller, s).await? {
        if o.id == current.id || o.product.category != current.product.category {
            continue;
        }
        let upgrade = is_upgrade(&current_price, &price_of(&o)?, &s.terms.currency);
        let schedule = earliest_for(a.status == Status::Pending, upgrade, s.life.renews_on.is_some());
        let date = date_of(s, schedule, today).ok_or_else(|| Error::Internal(format!("subscription {}: no date for {schedule}", s.id)))?;
        out.push((o, schedule, date));
    }
    out.sort_by(|x, y| x.0.offering.name.cmp(&y.0.offering.name));
    Ok(out)
}

async fn offering(caller: &Caller, id: uuid::Uuid) -> Result<OfferingRow> {
    caller.store.offering(caller.org, id).await?.ok_or_else(|| Error::Internal(format!("offering {id} vanished")))
}

fn addon_not_found(property: &'static str) -> Error {
    Error::missing_reference(InternalCode::SubscriptionAddonNotFound, property, "names no add-on of this subscription")
}

pub async fn options(caller: &Caller, key: &str, current: &str) -> Result<wire::ProductOfferingOptionList> {
    let s = find(caller, key).await?;
    let live = |a: &&AddonRow| matches!(a.status, Status::Pending | Status::Active) && a.offering_id.to_string() == current;
    let all = addons_of(caller, &s).await?;
    let a = all.iter().find(live).ok_or_else(|| addon_not_found("currentProductOfferingId"))?;
    let mut items = vec![];
    for (o, schedule, date) in candidates(caller, &s, a, &offering(caller, a.offering_id).await?).await? {
        items.push(wire::ProductOfferingOption { product_offering: catalog::to_wire(&o)?, change_schedule: schedule, change_schedule_date: date });
    }
    Ok(wire::ProductOfferingOptionList { items })
}

pub async fn change(caller: &Caller, key: &str, req: wire::AddonOfferingChangeRequest) -> Result<wire::SubscriptionAddon> {
    let s = find(caller, key).await?;
    caller.require_role(s.customer_id, Role::Manager)?;
    let all = addons_of(caller, &s).await?;
    let before = all.into_iter().find(|a| a.id == req.subscription_addon_id).ok_or_else(|| addon_not_found("subscriptionAddonId"))?;
    ADDON.next(AddonOp::ChangeOffering, before.status)?;
    let new = named(caller, &req.product_offering_id).await?;
    let current = offering(caller, before.offering_id).await?;
    let mut after = before.clone();
    after.updated_at = caller.now;
    if new.id == before.offering_id {
        // its own offering: what is scheduled is withdrawn
        if before.pending_offering.is_none() {
            return Ok(shown(caller, &[before]).await?.remove(0));
        }
        after.pending_offering = None;
    } else {
        let Some((new, first, not_before)) = candidates(caller, &s, &before, &current).await?.into_iter().find(|(o, ..)| o.id == new.id) else {
            return Err(conflict(
                InternalCode::OfferingChangeNotAllowed,
                "The add-on cannot change to this offering: see its product-offering-options (an add-on option of the subscription, of the same category).",
                "productOfferingId",
            ));
        };
        let today = caller.now.date_naive();
        let (schedule, date) = asked_date(req.change_schedule, first, not_before, "subscription", |x| date_of(&s, x, today))?;
        if date <= today {
            change_to(&mut after, &new, caller.now);
            // a PENDING one now INSTANT, of an ACTIVATED subscription, is ACTIVE at once
            if after.status == Status::Pending {
                after = super::lifecycle::created(&s, &new, after, caller.now)?;
            }
        } else {
            let pending = PendingOffering { offering_id: new.id, schedule: schedule.to_string(), at: midnight(date) };
            if before.pending_offering.as_ref() == Some(&pending) {
                // asked again: already so
                return Ok(shown(caller, &[before]).await?.remove(0));
            }
            after.pending_offering = Some(pending);
        }
    }
    let mut tx = caller.store.begin().await?;
    if !write(&caller.store, &mut tx, caller.org, &before, &after, caller.now).await? {
        return Err(Error::concurrent_conflict());
    }
    tell(caller, &mut tx, &s, caller.now).await?;
    tx.commit().await?;
    Ok(shown(caller, &[after]).await?.remove(0))
}
