//! What creates a license: a submitted LICENSE or EXTERNAL_PRODUCT line,
//! and an add-on whose product names a licenseType.

use super::lifecycle::begin_cycles;
use super::render::to_wire;
use crate::domain::cycles::cycle_months;
use crate::domain::offering_change::price_of;
use crate::error::Result;
use crate::events::Event;
use crate::states::licenses::LicenseStatus;
use crate::states::subscriptions::SubscriptionStatus;
use crate::store::{JobKind, LicenseRow, OfferingRow, Store, SubscriptionRow, Tx};
use crate::wire::latest as wire;
use chrono::{DateTime, Utc};
use uuid::Uuid;

/// The license whose creation `events` tell (license.created), if any.
pub fn created_by(events: &[Event]) -> Option<Uuid> {
    events.iter().find_map(|e| match e {
        Event::LicenseCreated(license) => Some(license.license_id),
        _ => None,
    })
}

/// What a submitted LICENSE or EXTERNAL_PRODUCT line creates: a license
/// of `customer` (id, name) billed in `currency`, with the line's `given`
/// details and metadata, assigned to `assigned` when the line names a
/// subscription: ACTIVE at once (its billing cycles begin) when it is
/// assigned to none (provisioned at once) or to an ACTIVATED subscription,
/// else PENDING until its subscription is activated. Its events:
/// `license.created`, and `license.activated` when it is ACTIVE.
#[allow(clippy::too_many_arguments)]
pub async fn create(
    tx: &mut Tx,
    org: Uuid,
    customer: (Uuid, &str),
    (order_id, currency): (Uuid, &str),
    offering: &OfferingRow,
    given: Option<&wire::NewLicense>,
    offering_wire: wire::ProductOffering,
    assigned: Option<&SubscriptionRow>,
    now: DateTime<Utc>,
) -> Result<Vec<Event>> {
    let active = assigned.is_none_or(|s| s.status == SubscriptionStatus::Activated);
    let mut row = LicenseRow {
        id: crate::domain::new_id(),
        customer_id: customer.0,
        customer_name: customer.1.to_string(),
        order_id,
        offering_id: offering.id,
        // a LICENSE product names its licenses' type (the import requires
        // it); an EXTERNAL_PRODUCT's are of type EXTERNAL_PRODUCT
        license_type: offering.product.license_type.clone().unwrap_or_else(|| "EXTERNAL_PRODUCT".to_string()),
        status: if active { LicenseStatus::Active } else { LicenseStatus::Pending },
        assigned_to: assigned.map(|s| (s.id, s.msisdn.clone(), s.display_name.clone())),
        created_at: now,
        updated_at: now,
        activated_at: None,
        paused_at: None,
        cancelled_at: None,
        ended_at: None,
        pending: None,
        details: given.and_then(|g| g.details.as_ref()).map(|d| serde_json::Value::Object(d.0.clone())),
        metadata: given.and_then(|g| g.metadata.as_ref()).map(|m| serde_json::json!(m.0)),
        currency: Some(currency.to_string()),
        cycle_months: cycle_months(&price_of(offering)?),
        billing_day: None,
        renews_on: None,
        pending_offering: None,
        version: 0,
    };
    if active {
        begin_cycles(&mut row, now);
    }
    Store::insert_license(tx, org, &row).await?;
    if let Some(due) = row.due_at() {
        Store::schedule_job(tx, JobKind::LicenseScheduled, &row.id.to_string(), Some(org), due, now).await?;
    }
    let license = to_wire(&row, offering_wire, None)?;
    Ok(if active { vec![Event::LicenseCreated(license.clone()), Event::LicenseActivated(license)] } else { vec![Event::LicenseCreated(license)] })
}
