//! The license an add-on carries: an add-on whose product names a
//! licenseType (a softphone add-on and its PBX seat) creates a license of
//! that type with it, assigned to its subscription (so it follows the
//! subscription's moves), and ends it when the add-on ends; the add-on
//! shows it in `license`.

use crate::domain::licenses::create::{create, created_by};
use crate::domain::licenses::lifecycle::end_with_addon;
use crate::domain::{Caller, catalog};
use crate::error::Result;
use crate::events::Event;
use crate::states::subscription_addons::AddonStatus as Status;
use crate::store::{AddonRow, LicenseRow, OfferingRow, Store, SubscriptionRow, Tx};
use chrono::{DateTime, Utc};
use std::collections::HashMap;
use uuid::Uuid;

/// In the transaction creating an add-on of `parent` on `offering`, for
/// order `bought` (id, currency): the license it carries, when its product
/// names a licenseType, with its events.
pub async fn carried(
    tx: &mut Tx,
    org: Uuid,
    parent: &SubscriptionRow,
    bought: (Uuid, &str),
    offering: &OfferingRow,
    now: DateTime<Utc>,
) -> Result<(Option<Uuid>, Vec<Event>)> {
    if offering.product.license_type.is_none() {
        return Ok((None, vec![]));
    }
    let customer = (parent.customer_id, parent.customer_name.as_str());
    let events = create(tx, org, customer, bought, offering, None, catalog::to_wire(offering)?, Some(parent), now).await?;
    Ok((created_by(&events), events))
}

/// Whether the add-on's move from `before` to `after` ends it (CANCELLED
/// or EXPIRED), and with it the license it carries.
pub fn ends(before: &AddonRow, after: &AddonRow) -> bool {
    let ended = |a: &AddonRow| matches!(a.status, Status::Cancelled | Status::Expired);
    after.license_id.is_some() && ended(after) && !ended(before)
}

/// In the transaction of the move that ended add-on `a`: its license ends
/// too, dated when the add-on ended.
pub async fn end_with(store: &Store, tx: &mut Tx, org: Uuid, a: &AddonRow, now: DateTime<Utc>) -> Result<()> {
    let Some(id) = a.license_id else { return Ok(()) };
    let caller = Caller::system(store, org, now);
    end_with_addon(&caller, tx, id, a.ended_at.unwrap_or(now)).await
}

/// The licenses `rows` carry, by id, read in a transaction (an idempotent
/// request's own writes are not committed until its answer is).
pub async fn of(caller: &Caller, rows: &[AddonRow]) -> Result<HashMap<Uuid, LicenseRow>> {
    let mut out = HashMap::new();
    if rows.iter().all(|a| a.license_id.is_none()) {
        return Ok(out);
    }
    let mut tx = caller.store.begin().await?;
    for id in rows.iter().filter_map(|a| a.license_id) {
        if let Some(l) = caller.store.license_in(&mut tx, caller.org, id).await? {
            out.insert(id, l);
        }
    }
    tx.commit().await?;
    Ok(out)
}
