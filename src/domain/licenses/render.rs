//! A license as the API shows it, with the offerings it names.

use crate::domain::Caller;
use crate::domain::catalog::{self, Offerings};
use crate::domain::values::number_display;
use crate::error::{Error, Result};
use crate::store::{LicenseRow, Tx};
use crate::wire::latest as wire;

/// `row` on the wire, on `offering`, changing to `pending` (the offering
/// of its scheduled change).
pub fn to_wire(row: &LicenseRow, offering: wire::ProductOffering, pending: Option<wire::ProductOffering>) -> Result<wire::License> {
    Ok(wire::License {
        license_id: row.id,
        status: row.status.into(),
        type_: row.license_type.clone(),
        customer: wire::CustomerSummary { customer_id: row.customer_id, name: row.customer_name.clone() },
        group: offering.group.clone(),
        image_url: offering.image_url.clone(),
        product_offering: catalog::summary(offering),
        assigned_to: row.assigned_to.as_ref().map(|(id, msisdn, name)| wire::LicenseAssignment {
            type_: wire::LicenseAssignmentType::Subscription,
            subscription_id: *id,
            subscription_display: number_display(msisdn, name.as_deref()),
        }),
        activated_at: row.activated_at.map(|t| t.date_naive()),
        cancelled_at: row.cancelled_at.map(|t| t.date_naive()),
        paused_at: row.paused_at.map(|t| t.date_naive()),
        pending_status: row.pending.map(|(status, at)| wire::LicensePendingStatus { status: status.into(), scheduled_at: at.date_naive() }),
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
            None => None,
            Some(d) => {
                let map = d.as_object().cloned().ok_or_else(|| Error::Internal(format!("license {}: stored details are not an object", row.id)))?;
                // (none are shown as none: an empty object is left out)
                (!map.is_empty()).then_some(wire::LicenseDetails(map))
            }
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
pub async fn shown_in(caller: &Caller, mut tx: Option<&mut Tx>, offerings: &mut Offerings, row: &LicenseRow) -> Result<wire::License> {
    let pending = match &row.pending_offering {
        Some(p) => Some(offerings.get_in(caller, tx.as_deref_mut(), p.offering_id).await?),
        None => None,
    };
    to_wire(row, offerings.get_in(caller, tx, row.offering_id).await?, pending)
}
