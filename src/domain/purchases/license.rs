//! Buying a license directly (POST /licenses): an order with one LICENSE
//! or EXTERNAL_PRODUCT line (by the offering's product), created and
//! submitted in one transaction, so pricing and history stay with orders.
//! Its refusals name the fields of this request, not the order's line.

use super::own_fields;
use crate::domain::access::Role;
use crate::domain::{Caller, customers, orders};
use crate::error::{Error, Result};
use crate::events::Event;
use crate::kinds::ProductType;
use crate::wire::latest as wire;

pub async fn create(caller: &Caller, req: wire::CreateLicenseRequest, expiry: chrono::Duration) -> Result<wire::License> {
    let customer = customers::find(caller, &req.customer_id).await?;
    // a MEMBER's order waits for approval: a MEMBER buys through /orders
    caller.require_role(customer.id, Role::Manager)?;
    // the line's type is the offering's product's when it makes a license;
    // any other is refused by the order's check of the type
    let product_type = match uuid::Uuid::parse_str(&req.product_offering_id) {
        Ok(id) => caller.store.offering(caller.org, id).await?.map(|o| o.product.product_type),
        Err(_) => None,
    };
    let type_ = if product_type == Some(ProductType::ExternalProduct) { wire::ProductType::ExternalProduct } else { wire::ProductType::License };
    let order = wire::CreateOrderRequest {
        customer_id: customer.id.to_string(),
        currency: req.currency,
        line_items: vec![wire::OrderLineItemRequest {
            type_,
            product_offering_id: req.product_offering_id,
            subscription: None,
            subscription_id: req.subscription_id,
            sim_type: None,
            license: Some(wire::NewLicense { details: req.details, metadata: req.metadata }),
            binding_contract: None,
            upfront_payment: None,
            metadata: None,
        }],
        reference_id: req.order_reference_id,
        metadata: None,
    };
    // (a type that makes no license is the offering's fault)
    let rename = |field: &str| match field.trim_start_matches("lineItems[0].") {
        "type" => "productOfferingId".to_string(),
        other => other.to_string(),
    };
    let (_, created) = orders::create_submitted(caller, order, expiry).await.map_err(|e| own_fields(e, rename))?;
    // the license as created: what license.created tells
    created
        .into_iter()
        .find_map(|e| match e {
            Event::LicenseCreated(l) => Some(l),
            _ => None,
        })
        .ok_or_else(|| Error::Internal("a submitted LICENSE line created no license".into()))
}
