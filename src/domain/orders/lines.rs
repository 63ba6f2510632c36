//! An order's line items: as stored, and checked against the catalog, the
//! customer and their type (at creation, at every change, at submission).

use crate::domain::catalog::price::Price;
use crate::domain::pricing::{Choices, TaxRate};
use crate::domain::{Caller, catalog};
use crate::error::{Detail, Error, InternalCode, Result};
use crate::kinds::{ProductType, SimType};
use crate::states::orders::LineStatus;
use crate::store::{CustomerRow, IdOrRef, OrderRow, SubscriptionRow};
use crate::wire::latest as wire;
use serde::{Deserialize, Serialize};
use std::collections::HashSet;
use uuid::Uuid;

/// The offering a line buys, as named when the line was last changed.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OfferingRef {
    pub product_offering_id: Uuid,
    pub name: String,
}

/// A line item as stored: its wire fields (without pricing) and the price
/// it is priced at.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Line {
    pub line_item_id: Uuid,
    #[serde(rename = "type")]
    pub product_type: ProductType,
    pub status: LineStatus,
    pub product_offering: OfferingRef,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subscription: Option<crate::domain::subscriptions::NewSubscription>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subscription_id: Option<Uuid>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sim_type: Option<SimType>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub license: Option<wire::NewLicense>,
    pub binding_contract: bool,
    pub upfront_payment: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_subscription_id: Option<Uuid>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_subscription_addon_id: Option<Uuid>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_license_id: Option<Uuid>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<wire::Metadata>,
    pub price: Price,
}

impl Line {
    pub fn choices(&self) -> Choices {
        Choices { binding_contract: self.binding_contract, upfront_payment: self.upfront_payment }
    }

    /// The request that would create this line again (submission checks
    /// lines as they were asked for).
    pub fn as_request(&self) -> wire::OrderLineItemRequest {
        wire::OrderLineItemRequest {
            type_: self.product_type.into(),
            product_offering_id: self.product_offering.product_offering_id.to_string(),
            subscription: self.subscription.clone().map(Into::into),
            subscription_id: self.subscription_id.map(|s| s.to_string()),
            sim_type: self.sim_type.map(Into::into),
            license: self.license.clone(),
            binding_contract: Some(self.binding_contract),
            upfront_payment: Some(self.upfront_payment),
            metadata: self.metadata.clone(),
        }
    }
}

/// The stored document of an order: its lines and the tax rates they are
/// priced with (those of the customer's country at the last change).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OrderDoc {
    pub lines: Vec<Line>,
    pub tax_rates: Vec<TaxRate>,
}

impl OrderDoc {
    /// The document of a stored order; one that does not parse is a fault
    /// of the stored data.
    pub fn of(row: &OrderRow) -> Result<OrderDoc> {
        serde_json::from_value(row.doc.clone()).map_err(|e| Error::Internal(format!("stored order {}: {e}", row.id)))
    }

    /// As the store keeps it.
    pub fn to_stored(&self) -> serde_json::Value {
        crate::wire::to_json(self)
    }
}

// ------------------------------------------------------------------ checks

/// What checking lines needs to know about the customer and the catalog.
pub struct Context {
    pub customer: CustomerRow,
    catalog: HashSet<Uuid>,
    /// whether the organisation has a number pool to check numbers against
    pub pool: bool,
}

pub async fn context(caller: &Caller, customer: CustomerRow) -> Result<Context> {
    let catalog = match caller.store.customer_catalog(caller.org, customer.id).await? {
        Some((id, _)) => caller.store.catalog_offerings(id, None).await?.into_iter().map(|o| o.id).collect(),
        None => HashSet::new(),
    };
    let pool = caller.store.has_number_pool(caller.org).await?;
    Ok(Context { customer, catalog, pool })
}

/// The subscription a line names, if it is this customer's and not
/// cancelled.
async fn subscription_of(caller: &Caller, ctx: &Context, key: &str) -> Result<Option<SubscriptionRow>> {
    Ok(caller
        .store
        .subscription(caller.org, &IdOrRef::parse(key))
        .await?
        .filter(|s| s.customer_id == ctx.customer.id && s.status != crate::states::subscriptions::SubscriptionStatus::Cancelled))
}

/// Checks one requested line against the catalog as it is now; the line
/// to store, or the details naming what fails (`lineItems[i].field`).
async fn check_line(caller: &Caller, ctx: &Context, currency: &str, i: usize, req: &wire::OrderLineItemRequest) -> Result<Result<Line, Vec<Detail>>> {
    let mut bad = vec![];
    let at = |field: &str| format!("lineItems[{i}].{field}");
    let offering = match Uuid::parse_str(&req.product_offering_id) {
        Ok(id) => caller.store.offering(caller.org, id).await?,
        Err(_) => None,
    };
    let Some(offering) = offering else {
        return Ok(Err(vec![Detail::new(at("productOfferingId"), "product_offering_not_found", "names no product offering")]));
    };
    let wire_offering = catalog::to_wire(&offering)?;
    let price: Price = serde_json::from_value(offering.offering.price.clone()).map_err(|e| Error::Internal(e.to_string()))?;
    if wire_offering.product.type_ != req.type_ {
        bad.push(Detail::new(at("type"), "line_item_type_mismatch", format!("must be {}, the type of the offering's product", wire_offering.product.type_)));
    }
    if wire_offering.status == wire::ProductOfferingStatus::Archived {
        bad.push(Detail::new(at("productOfferingId"), "product_offering_archived", "is ARCHIVED and cannot be newly ordered"));
    } else if !ctx.catalog.contains(&offering.id) {
        bad.push(Detail::new(at("productOfferingId"), "not_in_catalog", "is not in the customer's product catalog"));
    }
    if price.net_in(currency).is_none() {
        bad.push(Detail::new(at("productOfferingId"), "currency_not_offered", format!("has no price in {currency}")));
    }
    // both left out: false
    let (binding_contract, upfront_payment) = (req.binding_contract.unwrap_or(false), req.upfront_payment.unwrap_or(false));
    if binding_contract && price.binding_contract.is_none() {
        bad.push(Detail::new(at("bindingContract"), "binding_contract_not_offered", "the offering has no binding period"));
    }
    if upfront_payment && price.custom_upfront_payment.is_none() {
        bad.push(Detail::new(at("upfrontPayment"), "upfront_payment_not_offered", "the offering has no upfront payment"));
    }
    use wire::ProductType as T;
    let wants_subscription = matches!(req.type_, T::SubscriptionAddon | T::SimCard);
    let may_name_subscription = wants_subscription || req.type_ == T::License;
    if req.type_ == T::Subscription {
        match &req.subscription {
            None => bad.push(Detail::new(at("subscription"), "required", "is required for a SUBSCRIPTION line")),
            Some(s) => {
                let valid = s.msisdn.as_deref().is_none_or(|m| phonenumber::parse(None, m).map(|n| phonenumber::is_valid(&n)).unwrap_or(false));
                if !valid {
                    bad.push(Detail::new(at("subscription.msisdn"), "invalid_msisdn", "must be a valid E.164 phone number"));
                } else {
                    let new = crate::domain::subscriptions::NewSubscription::from(s.clone());
                    let field = |f: &str| at(&format!("subscription.{f}"));
                    // a number brought from another operator: details that do
                    // not fit its country are a 400, as for POST in-porting
                    if let (Some(port), Some(msisdn)) = (&new.port_in, &new.msisdn) {
                        crate::domain::porting::details::check(msisdn, &field("msisdn"), crate::wire::to_json(&port.details), &field("portIn.details"))?;
                    }
                    bad.extend(crate::domain::inventory::numbers::check_line(caller, ctx.pool, &offering, new.number_asked(), &field).await?);
                }
            }
        }
    } else if req.subscription.is_some() {
        bad.push(Detail::new(at("subscription"), "not_allowed", "is only for SUBSCRIPTION lines"));
    }
    let mut subscription = None;
    match (&req.subscription_id, wants_subscription, may_name_subscription) {
        (None, true, _) => bad.push(Detail::new(at("subscriptionId"), "required", format!("is required for a {} line", req.type_))),
        (Some(_), _, false) => bad.push(Detail::new(at("subscriptionId"), "not_allowed", format!("is not for a {} line", req.type_))),
        (Some(key), _, true) => match subscription_of(caller, ctx, key).await? {
            None => bad.push(Detail::new(at("subscriptionId"), "subscription_not_found", "names no active subscription of this customer")),
            Some(s) => subscription = Some(s),
        },
        (None, false, _) => {}
    }
    match (req.type_, req.sim_type) {
        (T::SimCard, None) => bad.push(Detail::new(at("simType"), "required", "is required for a SIM_CARD line")),
        (T::SimCard, Some(_)) | (_, None) => {}
        (_, Some(_)) => bad.push(Detail::new(at("simType"), "not_allowed", "is only for SIM_CARD lines")),
    }
    if req.license.is_some() && !matches!(req.type_, T::License | T::ExternalProduct) {
        bad.push(Detail::new(at("license"), "not_allowed", "is only for LICENSE and EXTERNAL_PRODUCT lines"));
    }
    // the add-on options rule, the one GET .../addon-options lists by
    if req.type_ == T::SubscriptionAddon
        && let Some(s) = &subscription
    {
        let parent = crate::domain::subscription_addons::options::parent(caller, s).await?;
        if !crate::domain::subscription_addons::options::fits(s, &parent, ctx.catalog.contains(&offering.id), &offering) {
            bad.push(Detail::new(at("productOfferingId"), "addon_not_allowed", "is not among the subscription's add-on options"));
        }
        if s.terms.currency != currency {
            let message = format!("is billed in {}, not the order's {currency}", s.terms.currency);
            bad.push(Detail::new(at("subscriptionId"), "currency_mismatch", message));
        }
    }
    if !bad.is_empty() {
        return Ok(Err(bad));
    }
    Ok(Ok(Line {
        line_item_id: crate::domain::new_id(),
        product_type: req.type_.into(),
        status: LineStatus::Pending,
        product_offering: OfferingRef { product_offering_id: offering.id, name: wire_offering.name.clone() },
        subscription: req.subscription.clone().map(Into::into),
        subscription_id: subscription.map(|s| s.id),
        sim_type: req.sim_type.map(Into::into),
        license: req.license.clone(),
        binding_contract,
        upfront_payment,
        created_subscription_id: None,
        created_subscription_addon_id: None,
        created_license_id: None,
        metadata: req.metadata.clone(),
        price,
    }))
}

/// The refusal of line items that fail: 404 when one names an offering or
/// subscription that does not exist (the code says which), else 409
/// `order_validation_failed`; every failing field is a detail either way.
pub fn refusal(details: Vec<Detail>) -> Error {
    let missing = details.iter().find_map(|d| match d.code {
        "product_offering_not_found" => Some(InternalCode::ProductOfferingNotFound),
        "subscription_not_found" => Some(InternalCode::SubscriptionNotFound),
        _ => None,
    });
    match missing {
        Some(code) => Error::Missing { code, message: "A line item names an object that does not exist; see details.".into(), details },
        None => Error::Refused {
            code: InternalCode::OrderValidationFailed,
            message: "The line items do not fit the catalog, the customer or their type; see details for each.".into(),
            details,
        },
    }
}

/// Checks every line; all the details at once.
pub async fn check_lines(caller: &Caller, ctx: &Context, currency: &str, reqs: &[wire::OrderLineItemRequest]) -> Result<Result<Vec<Line>, Vec<Detail>>> {
    let mut lines = vec![];
    let mut bad = vec![];
    for (i, req) in reqs.iter().enumerate() {
        match check_line(caller, ctx, currency, i, req).await? {
            Ok(l) => lines.push(l),
            Err(d) => bad.extend(d),
        }
    }
    Ok(if bad.is_empty() { Ok(lines) } else { Err(bad) })
}

pub fn billing_currency(customer: &CustomerRow) -> Option<String> {
    customer.billing.as_ref().map(|b| b.currency.clone())
}
