//! Licenses (business telephony features, external products): what order
//! submission creates, and the reads of them; buying one directly in
//! `create`, their lifecycle in `lifecycle`, what falls due in
//! `scheduled`, offering changes in `offerings`.

pub mod cancel;
pub mod lifecycle;
pub mod offerings;
pub mod scheduled;

use super::catalog::{self, Offerings};
use super::{Caller, customers, subscriptions};
use crate::wire::latest::params::LicenseListQuery;
use crate::wire::latest as wire;
use crate::error::{Error, InternalCode, Result};
use crate::events::Event;
use crate::store::{Cursor, JobKind, LicenseFilter, LicenseRow, OfferingRow, Store, SubscriptionRow, Tx, limit_or_default};
use chrono::{DateTime, Utc};
use uuid::Uuid;

/// `row` on the wire, on `offering`, changing to `pending` (the offering
/// of its scheduled change).
pub fn to_wire(row: &LicenseRow, offering: wire::ProductOffering, pending: Option<wire::ProductOffering>) -> Result<wire::License> {
    Ok(wire::License {
        license_id: row.id,
        status: row.status,
        type_: row.license_type.clone(),
        customer: wire::CustomerSummary { customer_id: row.customer_id, name: row.customer_name.clone() },
        group: offering.group.clone(),
        image_url: offering.image_url.clone(),
        product_offering: catalog::summary(offering),
        assigned_to: row.assigned_to.as_ref().map(|(id, msisdn, name)| wire::LicenseAssignment {
            type_: wire::LicenseAssignmentType::Subscription,
            subscription_id: *id,
            subscription_display: subscriptions::display(msisdn, name.as_deref()),
        }),
        activated_at: row.activated_at.map(|t| t.date_naive()),
        cancelled_at: row.cancelled_at.map(|t| t.date_naive()),
        paused_at: row.paused_at.map(|t| t.date_naive()),
        pending_status: row.pending.map(|(status, at)| wire::LicensePendingStatus { status, scheduled_at: at.date_naive() }),
        pending_product_offering: match (&row.pending_offering, pending) {
            (Some(p), Some(o)) => Some(wire::LicensePendingProductOffering {
                scheduled_at: p.at.date_naive(),
                product: catalog::summary(o),
                change_schedule: p.schedule.parse().map_err(|_| Error::Internal(format!("license {}: schedule {:?}", row.id, p.schedule)))?,
            }),
            _ => None,
        },
        renews_on: row.renews_on,
        // a stored document that no longer reads is the server's fault, said
        // as one: never shown as empty
        details: match &row.details {
            None => Default::default(),
            Some(d) => d.as_object().cloned().ok_or_else(|| Error::Internal(format!("license {}: stored details are not an object", row.id)))?,
        },
        metadata: match &row.metadata {
            None => None,
            Some(m) => Some(serde_json::from_value(m.clone()).map_err(|e| Error::Internal(format!("license {}: stored metadata: {e}", row.id)))?),
        },
        order_id: Some(row.order_id),
        created_at: row.created_at,
        updated_at: row.updated_at,
    })
}

/// `row` on the wire, its offerings read through `offerings`.
pub async fn shown(caller: &Caller, offerings: &mut Offerings, row: &LicenseRow) -> Result<wire::License> {
    shown_in(caller, None, offerings, row).await
}

/// `shown`, read in `tx` when given (by a move inside its transaction).
pub async fn shown_in(caller: &Caller, mut tx: Option<&mut crate::store::Tx>, offerings: &mut Offerings, row: &LicenseRow) -> Result<wire::License> {
    let pending = match &row.pending_offering {
        Some(p) => Some(offerings.get_in(caller, tx.as_deref_mut(), p.offering_id).await?),
        None => None,
    };
    to_wire(row, offerings.get_in(caller, tx, row.offering_id).await?, pending)
}

/// The license `key`, if the caller sees its customer; else 404. What is
/// due by now is done first: a read shows it done.
pub async fn find(caller: &Caller, key: &str) -> Result<LicenseRow> {
    let not_found = || Error::not_found(InternalCode::LicenseNotFound, "license");
    let id = Uuid::parse_str(key).map_err(|_| not_found())?;
    let row = caller.store.license(caller.org, id).await?.filter(|l| caller.sees_customer(l.customer_id)).ok_or_else(not_found)?;
    scheduled::apply_if_due(caller, row).await
}

pub async fn view(caller: &Caller, key: &str) -> Result<wire::License> {
    shown(caller, &mut Offerings::default(), &find(caller, key).await?).await
}

pub async fn list(caller: &Caller, q: LicenseListQuery) -> Result<wire::LicenseList> {
    let after = q.cursor.as_deref().map(Cursor::decode).transpose()?;
    let filter = LicenseFilter {
        customers: customers::find_all(caller, &q.customer_id).await?,
        statuses: q.status,
        subscriptions: subscriptions::find_all(caller, &q.subscription_id).await?,
        visible_to: caller.viewer(),
    };
    let page = caller.store.licenses(caller.org, &filter, after, limit_or_default(q.limit)).await?;
    // (what is due by now shows done; the page's rows are those the filter
    // found before it)
    let (mut items, mut offerings) = (Vec::with_capacity(page.items.len()), Offerings::default());
    for row in page.items {
        items.push(shown(caller, &mut offerings, &scheduled::apply_if_due(caller, row).await?).await?);
    }
    Ok(wire::LicenseList { items, pagination: wire::Pagination { next_cursor: page.next.map(Cursor::encode) } })
}

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
    let active = assigned.is_none_or(|s| s.status == wire::SubscriptionStatus::Activated);
    let mut row = LicenseRow {
        id: crate::domain::new_id(),
        customer_id: customer.0,
        customer_name: customer.1.to_string(),
        order_id,
        offering_id: offering.id,
        // a LICENSE product names its licenses' type (the import requires
        // it); an EXTERNAL_PRODUCT's are of type EXTERNAL_PRODUCT
        license_type: offering.product.license_type.clone().unwrap_or_else(|| "EXTERNAL_PRODUCT".to_string()),
        status: if active { wire::LicenseStatus::Active } else { wire::LicenseStatus::Pending },
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
        cycle_months: subscriptions::terms::cycle_months(&subscriptions::offerings::price_of(offering)?),
        billing_day: None,
        renews_on: None,
        pending_offering: None,
        version: 0,
    };
    if active {
        lifecycle::begin_cycles(&mut row, now);
    }
    Store::insert_license(tx, org, &row).await?;
    if let Some(due) = row.due_at() {
        Store::schedule_job(tx, JobKind::LicenseScheduled, &row.id.to_string(), Some(org), due, now).await?;
    }
    let license = to_wire(&row, offering_wire, None)?;
    Ok(if active { vec![Event::LicenseCreated(license.clone()), Event::LicenseActivated(license)] } else { vec![Event::LicenseCreated(license)] })
}
