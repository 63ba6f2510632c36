//! Buying a subscription directly (POST /subscriptions): an order with one
//! SUBSCRIPTION line, created and submitted in one transaction, so pricing
//! and history stay with orders. Its refusals name the fields of this
//! request, not the order's line.

use super::own_fields;
use crate::domain::access::Role;
use crate::domain::{Caller, customers, orders};
use crate::error::{Error, Result};
use crate::events::Event;
use crate::wire::latest as wire;

pub async fn create(caller: &Caller, req: wire::CreateSubscriptionRequest, expiry: chrono::Duration) -> Result<wire::Subscription> {
    let customer = customers::find(caller, &req.customer_id).await?;
    // a MEMBER's order waits for approval: a MEMBER buys through /orders
    caller.require_role(customer.id, Role::Manager)?;
    let order = wire::CreateOrderRequest {
        customer_id: customer.id.to_string(),
        currency: req.currency,
        line_items: vec![wire::OrderLineItemRequest {
            type_: wire::ProductType::Subscription,
            product_offering_id: req.product_offering_id,
            subscription: Some(req.subscription),
            subscription_id: None,
            sim_type: None,
            license: None,
            binding_contract: req.binding_contract,
            upfront_payment: req.upfront_payment,
            metadata: req.metadata,
        }],
        reference_id: req.order_reference_id,
        metadata: None,
    };
    let rename = |field: &str| field.trim_start_matches("lineItems[0].").to_string();
    let (_, created) = orders::create_submitted(caller, order, expiry).await.map_err(|e| own_fields(e, rename))?;
    created
        .into_iter()
        .find_map(|e| match e {
            Event::SubscriptionCreated(s) => Some(s),
            _ => None,
        })
        .ok_or_else(|| Error::Internal("a submitted SUBSCRIPTION line created no subscription".into()))
}
