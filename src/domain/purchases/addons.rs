//! Giving a subscription add-ons directly (POST /subscriptions/{id}/addons):
//! an order with a SUBSCRIPTION_ADDON line per add-on, in the
//! subscription's currency, created and submitted in one transaction, so
//! the checks, pricing and history are an order's. Its refusals name the
//! fields of this request (`addons[i].productOfferingId`).

use super::own_fields;
use crate::domain::access::Role;
use crate::domain::subscription_addons::shown;
use crate::domain::subscriptions::find;
use crate::domain::{Caller, orders};
use crate::error::{Error, InternalCode, Result};
use crate::states::subscriptions::SubscriptionStatus;
use crate::wire::latest as wire;

pub async fn add(caller: &Caller, key: &str, req: wire::CreateSubscriptionAddonsRequest, expiry: chrono::Duration) -> Result<wire::SubscriptionAddonList> {
    let s = find(caller, key).await?;
    caller.require_role(s.customer_id, Role::Manager)?;
    if s.status == SubscriptionStatus::Cancelled {
        let message = "A CANCELLED subscription takes no add-ons.".to_string();
        return Err(Error::Conflict { code: InternalCode::SubscriptionCancelled, message, property: "status" });
    }
    let line = |a: &wire::NewSubscriptionAddon| wire::OrderLineItemRequest {
        type_: wire::ProductType::SubscriptionAddon,
        product_offering_id: a.product_offering_id.to_string(),
        subscription: None,
        subscription_id: Some(s.id.to_string()),
        sim_type: None,
        license: None,
        binding_contract: None,
        upfront_payment: None,
        metadata: None,
    };
    let order = wire::CreateOrderRequest {
        customer_id: s.customer_id.to_string(),
        currency: Some(s.terms.currency.clone()),
        line_items: req.addons.iter().map(line).collect(),
        reference_id: None,
        metadata: None,
    };
    // (a line's `subscriptionId` is this request's path)
    let rename = |field: &str| match field.split_once("].subscriptionId") {
        Some(_) => "subscriptionId".to_string(),
        None => field.replacen("lineItems[", "addons[", 1),
    };
    let (order, _) = orders::create_submitted(caller, order, expiry).await.map_err(|e| own_fields(e, rename))?;
    let created: Vec<uuid::Uuid> = order.line_items.iter().filter_map(|l| l.created_subscription_addon_id).collect();
    // read in the request's transaction: an idempotent request's work is
    // not committed until its answer joins it
    let mut tx = caller.store.begin().await?;
    let rows = caller.store.subscription_addons(Some(&mut tx), caller.org, s.id).await?;
    tx.commit().await?;
    let rows: Vec<_> = created.iter().filter_map(|id| rows.iter().find(|r| r.id == *id).cloned()).collect();
    Ok(wire::SubscriptionAddonList { items: shown(caller, &rows).await? })
}
