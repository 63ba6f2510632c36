//! Licenses (business telephony features, external products): what order
//! submission creates, and the reads of them. Their lifecycle comes later.

use super::catalog::{self, Offerings};
use super::{Caller, customers, subscriptions};
use crate::wire::latest::params::LicenseListQuery;
use crate::wire::latest as wire;
use crate::error::{Error, InternalCode, Result};
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
        // a license is activated by provisioning, which comes later
        activated_at: None,
        order_id: Some(row.order_id),
        created_at: row.created_at,
        updated_at: row.updated_at,
    })
}

/// The license `key`, if the caller sees its customer; else 404.
pub async fn find(caller: &Caller, key: &str) -> Result<LicenseRow> {
    let not_found = || Error::not_found(InternalCode::LicenseNotFound, "license");
    let id = Uuid::parse_str(key).map_err(|_| not_found())?;
    caller.store.license(caller.org, id).await?.filter(|l| caller.sees_customer(l.customer_id)).ok_or_else(not_found)
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
    let items = Offerings::attach(caller, &page.items, |l| l.offering_id, to_wire).await?;
    Ok(wire::LicenseList { items, pagination: wire::Pagination { next_cursor: page.next.map(Cursor::encode) } })
}

/// What a submitted LICENSE or EXTERNAL_PRODUCT line creates: a PENDING
/// license of `customer` (id, name), assigned to `assigned` when the line
/// names a subscription. Its wire form, for the event.
#[allow(clippy::too_many_arguments)]
pub async fn create_pending(
    tx: &mut Tx,
    org: Uuid,
    customer: (Uuid, &str),
    order_id: Uuid,
    offering: &OfferingRow,
    offering_wire: wire::ProductOffering,
    assigned: Option<&SubscriptionRow>,
    now: DateTime<Utc>,
) -> Result<wire::License> {
    let row = LicenseRow {
        id: crate::domain::new_id(),
        customer_id: customer.0,
        customer_name: customer.1.to_string(),
        order_id,
        offering_id: offering.id,
        // a LICENSE product names its licenses' type (the import requires
        // it); an EXTERNAL_PRODUCT's are of type EXTERNAL_PRODUCT
        license_type: offering.product.license_type.clone().unwrap_or_else(|| "EXTERNAL_PRODUCT".to_string()),
        status: wire::LicenseStatus::Pending,
        assigned_to: assigned.map(|s| (s.id, s.msisdn.clone(), s.display_name.clone())),
        created_at: now,
        updated_at: now,
    };
    Store::insert_license(tx, org, &row).await?;
    to_wire(&row, offering_wire)
}
