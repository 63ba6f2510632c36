//! Changing a license's offering: the options it has now, each with the
//! earliest schedule it may change on, and the change, now or on a date
//! (`pendingProductOffering` until then, SERVICE rule 7).
//!
//! The rules: the options are the offerings of the same product type,
//! license type and product category (another PBX user tier for a PBX
//! user), AVAILABLE, in the customer's catalog, priced in the license's
//! currency, not its own. A PENDING license has been billed nothing and
//! changes INSTANT; a live one changes INSTANT to a pricier offering (an
//! upgrade, per month before discounts), otherwise on its NEXT_RENEWAL_DAY,
//! or FIRST_OF_NEXT_MONTH when it has no renewals. A change may be asked
//! for on a later schedule than its earliest, never an earlier one.

use super::find;
use super::lifecycle::{change_to, moved, write};
use super::render::shown;
use crate::domain::Caller;
use crate::domain::access::Role;
use crate::domain::catalog::{self, Offerings};
use crate::domain::cycles::midnight;
use crate::domain::offering_change::{asked_date, day_of, earliest_for, is_upgrade, named, price_of};
use crate::error::{Error, InternalCode, Result};
use crate::kinds::OfferingStatus;
use crate::states::agreed;
use crate::states::licenses::{LICENSE, LicenseOp, LicenseStatus as Status};
use crate::store::{LicenseRow, OfferingRow, PendingOffering};
use crate::wire::latest::{self as wire, ChangeSchedule as Schedule};
use chrono::NaiveDate;

fn conflict(code: InternalCode, message: impl Into<String>, property: &'static str) -> Error {
    Error::Conflict { code, message: message.into(), property }
}

async fn offering(caller: &Caller, id: uuid::Uuid) -> Result<OfferingRow> {
    caller.store.offering(caller.org, id).await?.ok_or_else(|| Error::Internal(format!("offering {id} vanished")))
}

/// The currency `l` is billed in: the one it was bought in, else (bought
/// before licenses kept it) its offering's own.
fn currency_of(l: &LicenseRow, current: &OfferingRow) -> Result<String> {
    Ok(match &l.currency {
        Some(c) => c.clone(),
        None => price_of(current)?.currency,
    })
}

/// The date a change on `schedule` takes effect for `l`, today being
/// `today` (a license pays cycle by cycle: its next payment is its
/// renewal); None when it has no such day.
fn date_of(l: &LicenseRow, schedule: Schedule, today: NaiveDate) -> Option<NaiveDate> {
    day_of(schedule, today, l.renews_on, l.renews_on)
}

/// The offerings `l` (on `current`) may change to, each with the earliest
/// schedule and its date.
async fn candidates(caller: &Caller, l: &LicenseRow, current: &OfferingRow) -> Result<Vec<(OfferingRow, Schedule, NaiveDate)>> {
    let Some((catalog, _)) = caller.store.customer_catalog(caller.org, l.customer_id).await? else { return Ok(vec![]) };
    let today = caller.now.date_naive();
    let currency = currency_of(l, current)?;
    let current_price = price_of(current)?;
    let same_kind = |o: &OfferingRow| {
        o.product.product_type == current.product.product_type
            && o.product.license_type == current.product.license_type
            && o.product.category == current.product.category
    };
    let mut out = vec![];
    for o in caller.store.catalog_offerings(catalog, Some(OfferingStatus::Available)).await? {
        if o.id == current.id || !same_kind(&o) {
            continue;
        }
        let price = price_of(&o)?;
        if price.net_in(&currency).is_none() {
            continue;
        }
        let upgrade = is_upgrade(&current_price, &price, &currency);
        let schedule = earliest_for(l.status == Status::Pending, upgrade, l.renews_on.is_some());
        let date = date_of(l, schedule, today).ok_or_else(|| Error::Internal(format!("license {}: no date for {schedule}", l.id)))?;
        out.push((o, schedule, date));
    }
    out.sort_by(|x, y| x.0.offering.name.cmp(&y.0.offering.name));
    Ok(out)
}

pub async fn options(caller: &Caller, key: &str) -> Result<wire::ProductOfferingOptionList> {
    let l = find(caller, key).await?;
    if l.status == Status::Cancelled {
        return Ok(wire::ProductOfferingOptionList { items: vec![] });
    }
    let mut items = vec![];
    for (o, schedule, date) in candidates(caller, &l, &offering(caller, l.offering_id).await?).await? {
        items.push(wire::ProductOfferingOption { product_offering: catalog::to_wire(&o)?, change_schedule: schedule, change_schedule_date: date });
    }
    Ok(wire::ProductOfferingOptionList { items })
}

pub async fn change(caller: &Caller, key: &str, req: wire::ProductOfferingChangeRequest) -> Result<wire::License> {
    let before = find(caller, key).await?;
    caller.require_role(before.customer_id, Role::Manager)?;
    LICENSE.next(LicenseOp::ChangeOffering, before.status)?;
    let new = named(caller, &req.product_offering_id).await?;
    let mut offerings = Offerings::default();
    let now = caller.now;
    let (mut after, told) = agreed(moved(&before, LicenseOp::ChangeOffering, now), "a license's offering change")?;
    after.updated_at = now;
    if new.id == before.offering_id {
        // its own offering: what is scheduled is withdrawn
        if before.pending_offering.is_none() {
            return shown(caller, &mut offerings, &before).await;
        }
        after.pending_offering = None;
    } else {
        let current = offering(caller, before.offering_id).await?;
        let Some((new, first, not_before)) = candidates(caller, &before, &current).await?.into_iter().find(|(o, ..)| o.id == new.id) else {
            return Err(conflict(
                InternalCode::OfferingChangeNotAllowed,
                "The license cannot change to this offering: see its product-offering-options (same product and license type, AVAILABLE, in the customer's catalog, priced in its currency).",
                "productOfferingId",
            ));
        };
        let today = now.date_naive();
        let (schedule, date) = asked_date(req.change_schedule, first, not_before, "license", |x| date_of(&before, x, today))?;
        if date <= today {
            change_to(&mut after, &new, today)?;
            after.pending_offering = None;
        } else {
            let pending = PendingOffering { offering_id: new.id, schedule: schedule.to_string(), at: midnight(date) };
            if before.pending_offering.as_ref() == Some(&pending) {
                // asked again: already so
                return shown(caller, &mut offerings, &before).await;
            }
            after.pending_offering = Some(pending);
        }
    }
    let mut tx = caller.store.begin().await?;
    if !write(caller, &mut tx, &mut offerings, &before, &after, told, now).await? {
        return Err(Error::concurrent_conflict());
    }
    tx.commit().await?;
    shown(caller, &mut offerings, &after).await
}
