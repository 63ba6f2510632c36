//! Which add-ons a subscription may be given: one rule, read by `GET
//! /subscriptions/{id}/addon-options` and by the check of an order's
//! SUBSCRIPTION_ADDON line, so an order refuses an add-on exactly when the
//! list leaves it out.

use crate::domain::Caller;
use crate::domain::catalog::{self, price::Price};
use crate::domain::subscriptions::find;
use crate::error::{Error, Result};
use crate::kinds::{OfferingStatus, ProductType};
use crate::states::subscriptions::SubscriptionStatus;
use crate::store::{OfferingRow, SubscriptionRow};
use crate::wire::latest as wire;

/// Whether `offering` is an add-on option of `subscription`, whose offering
/// is `parent`; `in_catalog` tells whether the customer's catalog has it.
/// An option is an AVAILABLE SUBSCRIPTION_ADDON whose group has the
/// category of the parent's product, priced in the subscription's
/// currency, for a subscription that is not CANCELLED.
pub fn fits(subscription: &SubscriptionRow, parent: &OfferingRow, in_catalog: bool, offering: &OfferingRow) -> bool {
    let priced = serde_json::from_value::<Price>(offering.offering.price.clone()).is_ok_and(|p| p.net_in(&subscription.terms.currency).is_some());
    subscription.status != SubscriptionStatus::Cancelled
        && in_catalog
        && offering.product.product_type == ProductType::SubscriptionAddon
        && offering.offering.status == OfferingStatus::Available
        && offering.group.as_ref().is_some_and(|g| g.category == parent.product.category)
        && priced
}

/// The offering a subscription is on (it stays in the catalog: offerings
/// are archived, never deleted).
pub async fn parent(caller: &Caller, subscription: &SubscriptionRow) -> Result<OfferingRow> {
    let parent = caller.store.offering(caller.org, subscription.offering_id).await?;
    parent.ok_or_else(|| Error::Internal(format!("offering {} vanished", subscription.offering_id)))
}

/// The add-on offerings `subscription` may be given now, in catalog order.
pub async fn of(caller: &Caller, subscription: &SubscriptionRow) -> Result<Vec<OfferingRow>> {
    let Some((catalog, _)) = caller.store.customer_catalog(caller.org, subscription.customer_id).await? else { return Ok(vec![]) };
    let parent = parent(caller, subscription).await?;
    let offerings = caller.store.catalog_offerings(catalog, Some(OfferingStatus::Available)).await?;
    Ok(offerings.into_iter().filter(|o| fits(subscription, &parent, true, o)).collect())
}

pub async fn list(caller: &Caller, key: &str) -> Result<wire::SubscriptionAddonOptionList> {
    let subscription = find(caller, key).await?;
    let items = of(caller, &subscription).await?.iter().map(catalog::to_wire).collect::<Result<_>>()?;
    Ok(wire::SubscriptionAddonOptionList { items })
}
