//! Add-ons: the extras attached to a subscription (extra data, abroad and
//! travel packages), which add-ons a subscription may be given, and their
//! lifecycle.

pub mod add;
pub mod cancel;
pub mod lifecycle;
pub mod options;

use crate::domain::Caller;
use crate::domain::catalog::{self, Offerings};
use crate::error::Result;
use crate::store::AddonRow;
use crate::wire::latest as wire;

pub fn to_wire(row: &AddonRow, offering: wire::ProductOffering) -> Result<wire::SubscriptionAddon> {
    Ok(wire::SubscriptionAddon {
        subscription_addon_id: row.id,
        subscription_id: row.subscription_id,
        reference_id: row.reference_id.clone(),
        group: offering.group.clone(),
        product_offering: catalog::summary(offering),
        status: row.status,
        activated_at: row.activated_at,
        expires_at: row.expires_at,
        ended_at: row.ended_at,
        cancelled_at: row.cancelled_at,
        pending_status: row.pending.map(|(s, _)| s),
        pending_status_at: row.pending.map(|(_, at)| at),
        order_id: Some(row.order_id),
        created_at: row.created_at,
        updated_at: row.updated_at,
    })
}

/// The add-ons of the subscription `key`, oldest first, each with what was
/// due by now done (a read after its validity ran out shows it EXPIRED).
pub async fn list(caller: &Caller, key: &str) -> Result<wire::SubscriptionAddonList> {
    let subscription = crate::domain::subscriptions::find(caller, key).await?;
    let mut rows = vec![];
    for row in caller.store.subscription_addons(None, caller.org, subscription.id).await? {
        rows.push(lifecycle::apply_if_due(caller, row).await?);
    }
    Ok(wire::SubscriptionAddonList { items: Offerings::attach(caller, &rows, |a| a.offering_id, to_wire).await? })
}
