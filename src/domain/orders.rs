//! Orders: line items checked against the catalog, pricing recalculated at
//! every change, the order state machine, expiry by the server's clock, and
//! what submission creates (subscriptions, add-ons, licenses). Every change
//! records its order.* events in the same transaction.
//!
//! States: DRAFT -approve-> APPROVED; DRAFT (no approval needed) or
//! APPROVED -submit-> SUBMITTED; DRAFT or APPROVED -cancel-> CANCELLED, or
//! -expiresAt passes-> EXPIRED. Line items: PENDING, then SUBMITTED or
//! CANCELLED with their order.

use super::access::Role;
use super::catalog::price::Price;
use super::pricing::{self, Amounts, Choices, LinePricing, TaxRate};
use super::{Caller, catalog, customers, licenses, subscriptions};
use crate::wire::latest::params::OrderListQuery;
use crate::wire::latest as wire;
use crate::error::{Detail, Error, InternalCode, Result};
use crate::store::{AddonRow, Cursor, CustomerRow, IdOrRef, LicenseRow, OrderFilter, OrderRow, Store, SubscriptionRow, limit_or_default};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::collections::HashSet;
use uuid::Uuid;

const DRAFT: &str = "DRAFT";
const APPROVED: &str = "APPROVED";
const SUBMITTED: &str = "SUBMITTED";
const CANCELLED: &str = "CANCELLED";
const EXPIRED: &str = "EXPIRED";

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
    pub product_type: wire::ProductType,
    pub status: String,
    pub product_offering: OfferingRef,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subscription: Option<wire::NewSubscription>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subscription_id: Option<Uuid>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sim_type: Option<wire::SimCardType>,
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
    fn choices(&self) -> Choices {
        Choices { binding_contract: self.binding_contract, upfront_payment: self.upfront_payment }
    }

    /// The request that would create this line again (submission checks
    /// lines as they were asked for).
    fn as_request(&self) -> wire::OrderLineItemRequest {
        wire::OrderLineItemRequest {
            type_: self.product_type,
            product_offering_id: self.product_offering.product_offering_id.to_string(),
            subscription: self.subscription.clone(),
            subscription_id: self.subscription_id.map(|s| s.to_string()),
            sim_type: self.sim_type,
            binding_contract: self.binding_contract,
            upfront_payment: self.upfront_payment,
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

fn doc_of(row: &OrderRow) -> Result<OrderDoc> {
    serde_json::from_value(row.doc.clone()).map_err(|e| Error::Internal(format!("stored order {}: {e}", row.id)))
}

// ------------------------------------------------------------------ wire

fn amounts_json(a: &Amounts) -> Value {
    json!({
        "subtotalMinor": a.subtotal,
        "totalDiscountsMinor": a.total_discounts(),
        "taxAmountMinor": a.tax_amount(),
        "totalMinor": a.total(),
        "discounts": a.discounts.iter().map(|d| json!({"source": d.source, "description": d.description, "amountMinor": d.amount})).collect::<Vec<_>>(),
        "taxes": a.taxes.iter().map(|t| json!({"description": t.description, "rateBasisPoints": t.rate_basis_points, "amountMinor": t.amount})).collect::<Vec<_>>(),
    })
}

fn merge(mut into: Value, extra: Value) -> Value {
    if let (Value::Object(a), Value::Object(b)) = (&mut into, extra) {
        a.extend(b);
    }
    into
}

/// A line's pricing; None when its price is not offered in `currency` (a
/// line is only stored when it is, so this is a stored-data fault).
fn line_pricing(line: &Line, currency: &str, taxes: &[TaxRate]) -> Result<LinePricing> {
    pricing::price_line(&line.price, currency, line.choices(), taxes)
        .ok_or_else(|| Error::Internal(format!("line {} has no price in {currency}", line.line_item_id)))
}

fn line_pricing_json(p: &LinePricing, line: &Line, currency: &str) -> Value {
    let mut extra = json!({
        "currency": currency,
        "initialInvoiceAmountMinor": p.initial.total(),
        "recurringAmountMinor": p.recurring.total(),
        "recurringCosts": amounts_json(&p.recurring),
    });
    if let Some(c) = &line.price.billing_cycle {
        extra["billingCycle"] = json!(c);
    }
    merge(amounts_json(&p.initial), extra)
}

/// The order's pricing: every line priced, and the sums (line pricings,
/// summary), as the newest revision's JSON.
pub fn pricing_json(doc: &OrderDoc, currency: &str) -> Result<(Vec<Value>, Value)> {
    let lines: Vec<LinePricing> = doc.lines.iter().map(|l| line_pricing(l, currency, &doc.tax_rates)).collect::<Result<_>>()?;
    let order = pricing::price_order(&lines);
    let summary = merge(
        amounts_json(&order.initial),
        json!({"currency": currency, "initialInvoice": amounts_json(&order.initial), "recurringCosts": amounts_json(&order.recurring)}),
    );
    Ok((lines.iter().zip(&doc.lines).map(|(p, l)| line_pricing_json(p, l, currency)).collect(), summary))
}

fn wire_json<T: Serialize>(v: &T) -> Value {
    serde_json::to_value(v).expect("wire types serialize")
}

fn wire_of<T: serde::de::DeserializeOwned>(v: Value, what: &str) -> Result<T> {
    serde_json::from_value(v).map_err(|e| Error::Internal(format!("{what}: {e}")))
}

pub fn to_wire(row: &OrderRow) -> Result<wire::Order> {
    let doc = doc_of(row)?;
    let (line_prices, summary) = pricing_json(&doc, &row.currency)?;
    let lines: Vec<Value> = doc
        .lines
        .iter()
        .zip(line_prices)
        .map(|(l, p)| {
            let mut v = serde_json::to_value(l).expect("lines serialize");
            v.as_object_mut().map(|o| o.remove("price"));
            v["pricing"] = p;
            v
        })
        .collect();
    let open = row.status == DRAFT || row.status == APPROVED;
    let mut v = json!({
        "orderId": row.id,
        "status": row.status,
        "customer": {"customerId": row.customer_id, "name": row.customer_name},
        "currency": row.currency,
        "lineItems": lines,
        "pricing": summary,
        "createdAt": row.created_at,
        "updatedAt": row.updated_at,
    });
    let optional = [
        ("referenceId", row.reference_id.as_ref().map(|r| json!(r))),
        ("expiresAt", open.then(|| json!(row.expires_at))),
        ("approvedAt", row.approved_at.map(|t| json!(t))),
        ("submittedAt", row.submitted_at.map(|t| json!(t))),
        ("cancelledAt", row.cancelled_at.map(|t| json!(t))),
        ("metadata", row.metadata.as_ref().map(|m| json!(m))),
    ];
    for (k, val) in optional {
        if let Some(val) = val {
            v[k] = val;
        }
    }
    wire_of(v, "order")
}

fn list_item(row: &OrderRow) -> Result<wire::OrderListItem> {
    let doc = doc_of(row)?;
    let (_, summary) = pricing_json(&doc, &row.currency)?;
    let open = row.status == DRAFT || row.status == APPROVED;
    let mut v = json!({
        "orderId": row.id,
        "status": row.status,
        "customer": {"customerId": row.customer_id, "name": row.customer_name},
        "lineItemCount": doc.lines.len(),
        "pricing": {"currency": row.currency, "totalMinor": summary["totalMinor"]},
        "createdAt": row.created_at,
        "updatedAt": row.updated_at,
    });
    if let Some(r) = &row.reference_id {
        v["referenceId"] = json!(r);
    }
    if open {
        v["expiresAt"] = json!(row.expires_at);
    }
    wire_of(v, "order list item")
}

// ------------------------------------------------------------------ checks

/// What checking lines needs to know about the customer and the catalog.
struct Context {
    customer: CustomerRow,
    catalog: HashSet<Uuid>,
}

async fn context(caller: &Caller, customer: CustomerRow) -> Result<Context> {
    let catalog = match caller.store.customer_catalog(caller.org, customer.id).await? {
        Some((id, _)) => caller.store.catalog_offerings(id, None).await?.into_iter().map(|o| o.id).collect(),
        None => HashSet::new(),
    };
    Ok(Context { customer, catalog })
}

fn product_category(offering: &crate::store::OfferingRow) -> &str {
    offering.product["category"].as_str().unwrap_or_default()
}

/// The subscription a line names, if it is this customer's and not
/// cancelled.
async fn subscription_of(caller: &Caller, ctx: &Context, key: &str) -> Result<Option<SubscriptionRow>> {
    Ok(caller
        .store
        .subscription(caller.org, &IdOrRef::parse(key))
        .await?
        .filter(|s| s.customer_id == ctx.customer.id && s.status != CANCELLED))
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
    let price: Price = serde_json::from_value(offering.offering["price"].clone()).map_err(|e| Error::Internal(e.to_string()))?;
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
    if req.binding_contract && price.binding_contract.is_none() {
        bad.push(Detail::new(at("bindingContract"), "binding_contract_not_offered", "the offering has no binding period"));
    }
    if req.upfront_payment && price.custom_upfront_payment.is_none() {
        bad.push(Detail::new(at("upfrontPayment"), "upfront_payment_not_offered", "the offering has no upfront payment"));
    }
    use wire::ProductType as T;
    let wants_subscription = matches!(req.type_, T::SubscriptionAddon | T::SimCard);
    let may_name_subscription = wants_subscription || req.type_ == T::License;
    if req.type_ == T::Subscription {
        match &req.subscription {
            None => bad.push(Detail::new(at("subscription"), "required", "is required for a SUBSCRIPTION line")),
            Some(s) => {
                let valid = phonenumber::parse(None, s.msisdn.as_str()).map(|n| phonenumber::is_valid(&n)).unwrap_or(false);
                if !valid {
                    bad.push(Detail::new(at("subscription.msisdn"), "invalid_msisdn", "must be a valid E.164 phone number"));
                }
                if s.number_lease_token.is_some() {
                    // leases are made by POST /inventory/lease-numbers; a
                    // token no lease of this organisation has is refused
                    bad.push(Detail::new(at("subscription.numberLeaseToken"), "number_lease_not_found", "names no number lease of this organisation"));
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
    // the add-on options rule: the add-on's group has the category of the
    // subscription's offering (and the add-on is in the customer's catalog)
    if req.type_ == T::SubscriptionAddon {
        if let Some(s) = &subscription {
            let parent = caller.store.offering(caller.org, s.offering_id).await?;
            let fits = match (&offering.group, &parent) {
                (Some(g), Some(p)) => g["category"].as_str() == Some(product_category(p)),
                _ => false,
            };
            if !fits {
                bad.push(Detail::new(at("productOfferingId"), "addon_not_allowed", "is not among the subscription's add-on options"));
            }
        }
    }
    if !bad.is_empty() {
        return Ok(Err(bad));
    }
    Ok(Ok(Line {
        line_item_id: Uuid::new_v4(),
        product_type: req.type_,
        status: "PENDING".into(),
        product_offering: OfferingRef { product_offering_id: offering.id, name: wire_offering.name.clone() },
        subscription: req.subscription.clone(),
        subscription_id: subscription.map(|s| s.id),
        sim_type: req.sim_type,
        binding_contract: req.binding_contract,
        upfront_payment: req.upfront_payment,
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
fn refusal(details: Vec<Detail>) -> Error {
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
async fn check_lines(caller: &Caller, ctx: &Context, currency: &str, reqs: &[wire::OrderLineItemRequest]) -> Result<Result<Vec<Line>, Vec<Detail>>> {
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

/// Tax rates of the customer's billing country, else the organisation's
/// default tax country.
async fn tax_rates(store: &Store, org: Uuid, customer: &CustomerRow) -> Result<Vec<TaxRate>> {
    let billing_country = customer.billing.as_ref().and_then(|b| b["address"]["country"].as_str()).map(str::to_string);
    let country = match billing_country {
        Some(c) => Some(c),
        None => store.default_tax_country(org).await?,
    };
    let Some(country) = country else { return Ok(vec![]) };
    Ok(match store.tax_rates(org, &country).await? {
        Some(v) => serde_json::from_value(v).map_err(|e| Error::Internal(e.to_string()))?,
        None => vec![],
    })
}

fn billing_currency(customer: &CustomerRow) -> Option<String> {
    customer.billing.as_ref().and_then(|b| b["currency"].as_str()).map(str::to_string)
}

async fn check_reference_free(caller: &Caller, reference: &str, except: Option<Uuid>) -> Result<()> {
    if caller.store.order_reference_taken(caller.org, reference, except).await? {
        return Err(Error::Conflict { code: InternalCode::ReferenceIdTaken, message: "another order already has this referenceId".into(), property: "referenceId" });
    }
    Ok(())
}

// ------------------------------------------------------------------ events

fn order_json(row: &OrderRow) -> Result<Value> {
    Ok(wire_json(&to_wire(row)?))
}

/// Records order.statusChanged (and the event of the new status), plus
/// order.lineItemStatusChanged for each line whose status moved.
async fn record_transition(tx: &mut crate::store::Tx<'_>, before: &OrderRow, after: &OrderRow, at: DateTime<Utc>, event: Option<&str>) -> Result<()> {
    let order = order_json(after)?;
    Store::record_event(tx, after.org, "order.statusChanged", at, &json!({"orderId": after.id, "previousStatus": before.status, "status": after.status, "order": order})).await?;
    if let Some(e) = event {
        Store::record_event(tx, after.org, e, at, &order).await?;
    }
    let (old, new) = (doc_of(before)?, doc_of(after)?);
    for (i, (o, n)) in old.lines.iter().zip(&new.lines).enumerate() {
        if o.status != n.status {
            let data = json!({"orderId": after.id, "lineItemId": n.line_item_id, "previousStatus": o.status, "status": n.status, "lineItem": order["lineItems"][i]});
            Store::record_event(tx, after.org, "order.lineItemStatusChanged", at, &data).await?;
        }
    }
    Ok(())
}

// ------------------------------------------------------------------ operations

fn is_open(row: &OrderRow) -> bool {
    row.status == DRAFT || row.status == APPROVED
}

fn set_line_status(row: &mut OrderRow, status: &str) -> Result<()> {
    let mut doc = doc_of(row)?;
    for l in &mut doc.lines {
        l.status = status.to_string();
    }
    row.doc = serde_json::to_value(doc).expect("orders serialize");
    Ok(())
}

/// Moves an open order past its expiry to EXPIRED (with its events, dated
/// at the expiry). Returns the order as it now is.
async fn expire_if_due(caller: &Caller, row: OrderRow) -> Result<OrderRow> {
    if !is_open(&row) || row.expires_at > caller.now {
        return Ok(row);
    }
    let mut after = row.clone();
    after.status = EXPIRED.into();
    after.updated_at = row.expires_at;
    set_line_status(&mut after, CANCELLED)?;
    let mut tx = caller.store.begin().await?;
    if Store::update_order(&mut tx, &after, &row.status).await? {
        record_transition(&mut tx, &row, &after, row.expires_at, Some("order.expired")).await?;
        tx.commit().await?;
        return Ok(after);
    }
    drop(tx);
    // another request moved it first: read what it left
    find_row(caller, row.id).await
}

/// Expires every open order of every organisation whose `expiresAt` has
/// passed by `now`, recording each `order.expired` (dated at the expiry)
/// once, whoever gets there first; the number expired here.
pub async fn expire_due(store: &Store, now: DateTime<Utc>) -> Result<usize> {
    let mut expired = 0;
    for (org, id) in store.orders_due_to_expire(None, now).await? {
        let caller = Caller { store: store.clone(), org, api_key_id: Uuid::nil(), user: None, now };
        let Some(row) = store.order(org, id).await? else { continue };
        if row.status != EXPIRED && expire_if_due(&caller, row).await?.status == EXPIRED {
            expired += 1;
        }
    }
    Ok(expired)
}

/// Runs `expire_due` every `every`, so an order nobody reads still
/// expires (and tells so) close to its time.
pub async fn expiry_sweeper(store: Store, clock: std::sync::Arc<crate::clock::Clock>, every: std::time::Duration) {
    let mut tick = tokio::time::interval(every);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        match expire_due(&store, clock.now()).await {
            Ok(0) => {}
            Ok(n) => tracing::info!(expired = n, "orders expired"),
            Err(e) => tracing::warn!(error = %e, "order expiry sweep failed"),
        }
    }
}

async fn find_row(caller: &Caller, id: Uuid) -> Result<OrderRow> {
    caller
        .store
        .order(caller.org, id)
        .await?
        .filter(|o| caller.sees_customer(o.customer_id))
        .ok_or_else(|| Error::not_found(InternalCode::OrderNotFound, "order"))
}

/// The order named by `key`, visible to the caller, expired if due.
pub async fn find(caller: &Caller, key: &str) -> Result<OrderRow> {
    let id = Uuid::parse_str(key).map_err(|_| Error::not_found(InternalCode::OrderNotFound, "order"))?;
    let row = find_row(caller, id).await?;
    expire_if_due(caller, row).await
}

fn state_conflict(row: &OrderRow, action: &str) -> Error {
    if row.status == EXPIRED {
        return Error::Conflict { code: InternalCode::OrderExpired, message: "The order has expired.".into(), property: "status" };
    }
    Error::Conflict {
        code: InternalCode::OrderStateConflict,
        message: format!("An order in status {} cannot be {action}.", row.status),
        property: "status",
    }
}

pub async fn view(caller: &Caller, key: &str) -> Result<wire::Order> {
    to_wire(&find(caller, key).await?)
}

pub async fn pricing(caller: &Caller, key: &str) -> Result<wire::OrderPricingSummary> {
    Ok(view(caller, key).await?.pricing)
}

pub async fn list(caller: &Caller, q: OrderListQuery) -> Result<wire::OrderList> {
    for (_, id) in caller.store.orders_due_to_expire(Some(caller.org), caller.now).await? {
        if let Ok(row) = find_row(caller, id).await {
            expire_if_due(caller, row).await?;
        }
    }
    let after = q.cursor.as_deref().map(Cursor::decode).transpose()?;
    let filter = OrderFilter { customers: customers::find_all(caller, &q.customer_id).await?, statuses: q.status.clone(), visible_to: caller.viewer() };
    let page = caller.store.orders(caller.org, &filter, after, limit_or_default(q.limit)).await?;
    Ok(wire::OrderList {
        items: page.items.iter().map(list_item).collect::<Result<_>>()?,
        pagination: wire::Pagination { next_cursor: page.next.map(Cursor::encode) },
    })
}

/// A MEMBER's order needs approval by a MANAGER or ADMIN.
fn needs_approval(caller: &Caller, customer: Uuid) -> bool {
    caller.user.as_ref().is_some_and(|u| u.roles.get(&customer).is_some_and(|r| *r == Role::Member))
}

pub async fn create(caller: &Caller, req: wire::CreateOrderRequest, expiry: chrono::Duration) -> Result<wire::Order> {
    let customer = customers::find(caller, &req.customer_id).await?;
    caller.require_role(customer.id, Role::Member)?;
    let currency = match req.currency.clone().or_else(|| billing_currency(&customer)) {
        Some(c) => c,
        None => {
            return Err(Error::Conflict {
                code: InternalCode::CurrencyRequired,
                message: "The customer has no billing currency: the order needs a currency.".into(),
                property: "currency",
            });
        }
    };
    if crate::domain::money::exponent(&currency).is_none() {
        return Err(Error::invalid("currency", "invalid_currency", "must be an ISO 4217 currency code with minor units"));
    }
    let ctx = context(caller, customer).await?;
    let lines = check_lines(caller, &ctx, &currency, &req.line_items).await?.map_err(refusal)?;
    if let Some(r) = &req.reference_id {
        check_reference_free(caller, r, None).await?;
    }
    // as stored (microseconds), so this answer equals every later read
    let now = chrono::SubsecRound::trunc_subsecs(caller.now, 6);
    let row = OrderRow {
        id: Uuid::new_v4(),
        org: caller.org,
        customer_id: ctx.customer.id,
        customer_name: ctx.customer.name.clone(),
        status: DRAFT.into(),
        currency,
        reference_id: req.reference_id,
        approval_required: needs_approval(caller, ctx.customer.id),
        doc: serde_json::to_value(OrderDoc { lines, tax_rates: tax_rates(&caller.store, caller.org, &ctx.customer).await? }).expect("orders serialize"),
        metadata: req.metadata.map(|m| m.0),
        expires_at: now + expiry,
        approved_at: None,
        submitted_at: None,
        cancelled_at: None,
        created_at: now,
        updated_at: now,
    };
    let order = to_wire(&row)?;
    let mut tx = caller.store.begin().await?;
    Store::insert_order(&mut tx, &row).await?;
    Store::record_event(&mut tx, caller.org, "order.created", now, &wire_json(&order)).await?;
    tx.commit().await?;
    Ok(order)
}

pub async fn update(caller: &Caller, key: &str, req: wire::UpdateOrderRequest) -> Result<wire::Order> {
    let before = find(caller, key).await?;
    caller.require_role(before.customer_id, Role::Member)?;
    if before.status != DRAFT {
        return Err(state_conflict(&before, "changed"));
    }
    let mut row = before.clone();
    if !req.line_items.is_empty() {
        let items = &req.line_items;
        let customer = customers::find(caller, &row.customer_id.to_string()).await?;
        let taxes = tax_rates(&caller.store, caller.org, &customer).await?;
        let ctx = context(caller, customer).await?;
        let lines = check_lines(caller, &ctx, &row.currency, items).await?.map_err(refusal)?;
        row.doc = serde_json::to_value(OrderDoc { lines, tax_rates: taxes }).expect("orders serialize");
    }
    if let Some(r) = req.reference_id {
        check_reference_free(caller, &r, Some(row.id)).await?;
        row.reference_id = Some(r);
    }
    if let Some(m) = req.metadata {
        row.metadata = Some(m.0);
    }
    row.approval_required |= needs_approval(caller, row.customer_id);
    row.updated_at = caller.now;
    let order = to_wire(&row)?;
    let mut tx = caller.store.begin().await?;
    if !Store::update_order(&mut tx, &row, DRAFT).await? {
        return Err(state_conflict(&find_row(caller, row.id).await?, "changed"));
    }
    Store::record_event(&mut tx, caller.org, "order.updated", caller.now, &wire_json(&order)).await?;
    tx.commit().await?;
    Ok(order)
}

/// Writes a state move: the row if it is still in `before`'s status, and
/// its events, in one transaction.
async fn commit_transition(caller: &Caller, before: &OrderRow, after: &OrderRow, event: Option<&str>, action: &str) -> Result<wire::Order> {
    let mut tx = caller.store.begin().await?;
    if !Store::update_order(&mut tx, after, &before.status).await? {
        return Err(state_conflict(&find_row(caller, before.id).await?, action));
    }
    record_transition(&mut tx, before, after, caller.now, event).await?;
    tx.commit().await?;
    to_wire(after)
}

pub async fn approve(caller: &Caller, key: &str) -> Result<wire::Order> {
    let before = find(caller, key).await?;
    caller.require_role(before.customer_id, Role::Manager)?;
    if before.status != DRAFT {
        return Err(state_conflict(&before, "approved"));
    }
    let mut after = before.clone();
    after.status = APPROVED.into();
    after.approved_at = Some(caller.now);
    after.updated_at = caller.now;
    commit_transition(caller, &before, &after, None, "approved").await
}

pub async fn cancel(caller: &Caller, key: &str) -> Result<wire::Order> {
    let before = find(caller, key).await?;
    caller.require_role(before.customer_id, Role::Member)?;
    if !is_open(&before) {
        return Err(state_conflict(&before, "cancelled"));
    }
    let mut after = before.clone();
    after.status = CANCELLED.into();
    after.cancelled_at = Some(caller.now);
    after.updated_at = caller.now;
    set_line_status(&mut after, CANCELLED)?;
    commit_transition(caller, &before, &after, Some("order.cancelled"), "cancelled").await
}

pub async fn submit(caller: &Caller, key: &str) -> Result<wire::Order> {
    let before = find(caller, key).await?;
    caller.require_role(before.customer_id, Role::Member)?;
    if !is_open(&before) {
        return Err(state_conflict(&before, "submitted"));
    }
    if before.status == DRAFT && before.approval_required {
        return Err(Error::Conflict {
            code: InternalCode::OrderNotApproved,
            message: "The order was made by a MEMBER and needs approval by a MANAGER or ADMIN first.".into(),
            property: "status",
        });
    }
    let customer = customers::find(caller, &before.customer_id.to_string()).await?;
    let mut doc = doc_of(&before)?;
    let ctx = context(caller, customer).await?;
    let requests: Vec<wire::OrderLineItemRequest> = doc.lines.iter().map(Line::as_request).collect();
    let mut bad = match check_lines(caller, &ctx, &before.currency, &requests).await? {
        Ok(_) => vec![],
        Err(details) => details,
    };
    if ctx.customer.billing.is_none() {
        bad.push(Detail::new("customer.billing", "billing_required", "the customer has no billing details"));
    }
    // numbers and references the new subscriptions take must be free
    let mut numbers = HashSet::new();
    let mut references = HashSet::new();
    for (i, l) in doc.lines.iter().enumerate() {
        let Some(s) = &l.subscription else { continue };
        if !numbers.insert(s.msisdn.to_string()) || caller.store.msisdn_in_use(caller.org, &s.msisdn).await? {
            bad.push(Detail::new(format!("lineItems[{i}].subscription.msisdn"), "msisdn_in_use", "another subscription has this number"));
        }
        if let Some(r) = &s.reference_id {
            if !references.insert(r.to_string()) || caller.store.subscription_reference_taken(caller.org, r).await? {
                bad.push(Detail::new(format!("lineItems[{i}].subscription.referenceId"), "reference_id_taken", "another subscription has this referenceId"));
            }
        }
    }
    if !bad.is_empty() {
        return Err(Error::Refused {
            code: InternalCode::OrderValidationFailed,
            message: "The order cannot be submitted; see details for each failing line item.".into(),
            details: bad,
        });
    }

    // as stored (microseconds), so the events equal every later read
    let now = chrono::SubsecRound::trunc_subsecs(caller.now, 6);
    let org = caller.org;
    let mut tx = caller.store.begin().await?;
    let mut created_events: Vec<(&str, Value)> = vec![];
    for l in &mut doc.lines {
        let offering_id = l.product_offering.product_offering_id;
        let offering = caller.store.offering(org, offering_id).await?.ok_or_else(|| Error::Internal("offering vanished".into()))?;
        let offering_wire = catalog::to_wire(&offering)?;
        use wire::ProductType as T;
        match l.product_type {
            T::Subscription => {
                let s = l.subscription.as_ref().expect("checked");
                let row = SubscriptionRow {
                    id: Uuid::new_v4(),
                    customer_id: before.customer_id,
                    customer_name: before.customer_name.clone(),
                    order_id: before.id,
                    offering_id,
                    status: "PENDING".into(),
                    subscription_type: subscriptions::subscription_type(product_category(&offering)).into(),
                    msisdn: s.msisdn.to_string(),
                    display_name: s.display_name.as_ref().map(|d| d.to_string()),
                    sim_type: s.sim_type.to_string(),
                    reference_id: s.reference_id.as_ref().map(|r| r.to_string()),
                    created_at: now,
                    updated_at: now,
                };
                Store::insert_subscription(&mut tx, org, &row).await?;
                l.created_subscription_id = Some(row.id);
                created_events.push(("subscription.created", wire_json(&subscriptions::to_wire(&row, offering_wire)?)));
            }
            T::SubscriptionAddon => {
                let row = AddonRow {
                    id: Uuid::new_v4(),
                    subscription_id: l.subscription_id.expect("checked"),
                    order_id: before.id,
                    offering_id,
                    status: "PENDING".into(),
                    reference_id: None,
                    created_at: now,
                    updated_at: now,
                };
                Store::insert_subscription_addon(&mut tx, org, &row).await?;
                l.created_subscription_addon_id = Some(row.id);
            }
            T::License | T::ExternalProduct => {
                let assigned_to = match l.subscription_id {
                    Some(s) => {
                        let sub = caller.store.subscription(org, &IdOrRef::Id(s)).await?.expect("checked");
                        Some((s, sub.msisdn, sub.display_name))
                    }
                    None => None,
                };
                let row = LicenseRow {
                    id: Uuid::new_v4(),
                    customer_id: before.customer_id,
                    customer_name: before.customer_name.clone(),
                    order_id: before.id,
                    offering_id,
                    // the imported product names a LICENSE product's type
                    license_type: offering.product["licenseType"].as_str().unwrap_or("EXTERNAL_PRODUCT").to_string(),
                    status: "PENDING".into(),
                    assigned_to,
                    created_at: now,
                    updated_at: now,
                };
                Store::insert_license(&mut tx, org, &row).await?;
                l.created_license_id = Some(row.id);
                created_events.push(("license.created", wire_json(&licenses::to_wire(&row, offering_wire)?)));
            }
            T::SimCard => {
                let id = l.subscription_id.expect("checked");
                let mut sub = caller.store.subscription(org, &IdOrRef::Id(id)).await?.expect("checked");
                sub.sim_type = l.sim_type.expect("checked").to_string();
                sub.updated_at = now;
                Store::set_subscription_sim(&mut tx, id, &sub.sim_type, now).await?;
                let parent_offering = catalog::Offerings::default().get(caller, sub.offering_id).await?;
                created_events.push(("subscription.updated", wire_json(&subscriptions::to_wire(&sub, parent_offering)?)));
            }
        }
        l.status = SUBMITTED.into();
    }
    let mut after = before.clone();
    after.status = SUBMITTED.into();
    after.submitted_at = Some(now);
    after.updated_at = now;
    after.doc = serde_json::to_value(&doc).expect("orders serialize");
    if !Store::update_order(&mut tx, &after, &before.status).await? {
        drop(tx);
        return Err(state_conflict(&find_row(caller, before.id).await?, "submitted"));
    }
    record_transition(&mut tx, &before, &after, now, Some("order.submitted")).await?;
    for (event, data) in created_events {
        Store::record_event(&mut tx, org, event, now, &data).await?;
    }
    tx.commit().await?;
    to_wire(&after)
}
