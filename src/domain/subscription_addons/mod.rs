//! Add-ons: the extras attached to a subscription (extra data, abroad and
//! travel packages), which add-ons a subscription may be given, and their
//! lifecycle.

pub mod cancel;
pub mod license;
pub mod lifecycle;
pub mod offerings;
pub mod options;

use crate::domain::Caller;
use crate::domain::catalog::{self, Offerings};
use crate::error::{Error, Result};
use crate::store::{AddonRow, LicenseRow};
use crate::wire::latest as wire;

/// The wire form of `row`, on `offering`, with the offering of its
/// scheduled change (`pending`) and the license it carries.
pub fn to_wire(
    row: &AddonRow,
    offering: wire::ProductOffering,
    pending: Option<wire::ProductOffering>,
    license: Option<(&LicenseRow, wire::ProductOffering)>,
) -> Result<wire::SubscriptionAddon> {
    let license = license.map(|(l, its)| wire::SubscriptionAddonLicense {
        license_id: l.id,
        status: l.status.into(),
        type_: l.license_type.clone(),
        product_offering: catalog::summary(its),
    });
    Ok(wire::SubscriptionAddon {
        license,
        subscription_addon_id: row.id,
        subscription_id: row.subscription_id,
        reference_id: row.reference_id.clone(),
        group: offering.group.clone(),
        product_offering: Some(catalog::summary(offering)),
        status: row.status.into(),
        activated_at: row.activated_at,
        expires_at: row.expires_at,
        ended_at: row.ended_at,
        cancelled_at: row.cancelled_at,
        pending_status: row.pending.map(|(s, _)| s.into()),
        pending_status_at: row.pending.map(|(_, at)| at),
        pending_product_offering: match (&row.pending_offering, pending) {
            (Some(p), Some(o)) => Some(wire::PendingProductOffering {
                product_offering: catalog::summary(o),
                change_schedule: p.schedule.parse().map_err(|_| Error::Internal(format!("add-on {}: schedule {:?}", row.id, p.schedule)))?,
                scheduled_at: p.at,
            }),
            _ => None,
        },
        order_id: Some(row.order_id),
        created_at: row.created_at,
        updated_at: row.updated_at,
    })
}

/// The wire forms of `rows`, each offering read once.
pub async fn shown(caller: &Caller, rows: &[AddonRow]) -> Result<Vec<wire::SubscriptionAddon>> {
    let mut offerings = Offerings::default();
    let licenses = license::of(caller, rows).await?;
    let mut out = Vec::with_capacity(rows.len());
    for row in rows {
        let offering = offerings.get(caller, row.offering_id).await?;
        let pending = match &row.pending_offering {
            Some(p) => Some(offerings.get(caller, p.offering_id).await?),
            None => None,
        };
        let license = match row.license_id.and_then(|id| licenses.get(&id)) {
            Some(l) => Some((l, offerings.get(caller, l.offering_id).await?)),
            None => None,
        };
        out.push(to_wire(row, offering, pending, license)?);
    }
    Ok(out)
}

/// The add-ons of the subscription `key`, oldest first, each with what was
/// due by now done (a read after its validity ran out shows it EXPIRED).
pub async fn list(caller: &Caller, key: &str) -> Result<wire::SubscriptionAddonList> {
    let subscription = crate::domain::subscriptions::find(caller, key).await?;
    let rows = lifecycle::addons_of(caller, &subscription).await?;
    Ok(wire::SubscriptionAddonList { items: shown(caller, &rows).await? })
}
