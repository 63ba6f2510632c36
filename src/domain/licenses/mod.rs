//! Licenses (business telephony features, external products): what order
//! submission creates, and the reads of them; their lifecycle in
//! `lifecycle`.

pub mod cancel;
pub mod lifecycle;

use super::catalog::{self, Offerings};
use super::{Caller, customers, subscriptions};
use crate::wire::latest::params::LicenseListQuery;
use crate::wire::latest as wire;
use crate::error::{Error, InternalCode, Result};
use crate::events::Event;
use crate::store::{Cursor, LicenseFilter, LicenseRow, OfferingRow, Store, SubscriptionRow, Tx, limit_or_default};
use chrono::{DateTime, Utc};
use uuid::Uuid;

pub fn to_wire(row: &LicenseRow, offering: wire::ProductOffering) -> Result<wire::License> {
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
        details: row.details.as_ref().and_then(|d| d.as_object().cloned()).unwrap_or_default(),
        metadata: row.metadata.as_ref().and_then(|m| serde_json::from_value(m.clone()).ok()),
        order_id: Some(row.order_id),
        created_at: row.created_at,
        updated_at: row.updated_at,
    })
}

/// The license `key`, if the caller sees its customer; else 404. A
/// cancellation due by now is done first: a read shows it done.
pub async fn find(caller: &Caller, key: &str) -> Result<LicenseRow> {
    let not_found = || Error::not_found(InternalCode::LicenseNotFound, "license");
    let id = Uuid::parse_str(key).map_err(|_| not_found())?;
    let row = caller.store.license(caller.org, id).await?.filter(|l| caller.sees_customer(l.customer_id)).ok_or_else(not_found)?;
    lifecycle::apply_if_due(caller, row).await
}

pub async fn view(caller: &Caller, key: &str) -> Result<wire::License> {
    let row = find(caller, key).await?;
    to_wire(&row, Offerings::default().get(caller, row.offering_id).await?)
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
    // (a cancellation due by now shows done; the page's rows are those
    // the filter found before it)
    let mut rows = Vec::with_capacity(page.items.len());
    for row in page.items {
        rows.push(lifecycle::apply_if_due(caller, row).await?);
    }
    let items = Offerings::attach(caller, &rows, |l| l.offering_id, to_wire).await?;
    Ok(wire::LicenseList { items, pagination: wire::Pagination { next_cursor: page.next.map(Cursor::encode) } })
}

/// What a submitted LICENSE or EXTERNAL_PRODUCT line creates: a license
/// of `customer` (id, name), assigned to `assigned` when the line names a
/// subscription: ACTIVE at once when it is assigned to none (provisioned
/// at once) or to an ACTIVATED subscription, else PENDING until its
/// subscription is activated. Its events: `license.created`, and
/// `license.activated` when it is ACTIVE.
#[allow(clippy::too_many_arguments)]
pub async fn create(
    tx: &mut Tx,
    org: Uuid,
    customer: (Uuid, &str),
    order_id: Uuid,
    offering: &OfferingRow,
    offering_wire: wire::ProductOffering,
    assigned: Option<&SubscriptionRow>,
    now: DateTime<Utc>,
) -> Result<Vec<Event>> {
    let active = assigned.is_none_or(|s| s.status == wire::SubscriptionStatus::Activated);
    let row = LicenseRow {
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
        activated_at: active.then_some(now),
        paused_at: None,
        cancelled_at: None,
        ended_at: None,
        pending: None,
        details: None,
        metadata: None,
    };
    Store::insert_license(tx, org, &row).await?;
    let license = to_wire(&row, offering_wire)?;
    Ok(if active { vec![Event::LicenseCreated(license.clone()), Event::LicenseActivated(license)] } else { vec![Event::LicenseCreated(license)] })
}
