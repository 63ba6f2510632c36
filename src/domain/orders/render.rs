//! An order in its wire form: its lines, and the pricing recalculated from
//! them at every read.

use super::lines::{Line, OrderDoc};
use crate::domain::catalog::price::{self, BillingPeriod};
use crate::domain::pricing::{self, Amounts, LinePricing};
use crate::error::{Error, Result};
use crate::states::orders::is_open;
use crate::store::OrderRow;
use crate::wire::latest as wire;

fn discount_source(s: price::DiscountSource) -> wire::DiscountSource {
    match s {
        price::DiscountSource::Standard => wire::DiscountSource::Standard,
        price::DiscountSource::BindingContract => wire::DiscountSource::BindingContract,
        price::DiscountSource::UpfrontPayment => wire::DiscountSource::UpfrontPayment,
    }
}

fn billing_cycle(c: &price::BillingCycle) -> wire::BillingCycle {
    wire::BillingCycle {
        interval: i32::try_from(c.interval).unwrap_or(i32::MAX),
        period: match c.period {
            BillingPeriod::Monthly => wire::BillingPeriod::Monthly,
        },
    }
}

fn discounts(a: &Amounts) -> Vec<wire::OrderPricingDiscount> {
    a.discounts
        .iter()
        .map(|d| wire::OrderPricingDiscount { source: discount_source(d.source), description: d.description.clone(), amount_minor: d.amount })
        .collect()
}

fn taxes(a: &Amounts) -> Vec<wire::TaxBreakdownItem> {
    a.taxes
        .iter()
        .map(|t| wire::TaxBreakdownItem {
            description: t.description.clone(),
            rate_basis_points: i32::try_from(t.rate_basis_points).unwrap_or(i32::MAX),
            amount_minor: t.amount,
        })
        .collect()
}

fn amounts(a: &Amounts) -> wire::OrderPricingAmounts {
    wire::OrderPricingAmounts {
        subtotal_minor: a.subtotal,
        total_discounts_minor: a.total_discounts(),
        tax_amount_minor: a.tax_amount(),
        total_minor: a.total(),
        discounts: discounts(a),
        taxes: taxes(a),
    }
}

/// A line's pricing; a line is only stored when its price is offered in
/// the order's currency, so a missing one is a stored-data fault.
fn line_pricing(line: &Line, currency: &str, doc: &OrderDoc) -> Result<LinePricing> {
    pricing::price_line(&line.price, currency, line.choices(), &doc.tax_rates)
        .ok_or_else(|| Error::Internal(format!("line {} has no price in {currency}", line.line_item_id)))
}

fn line_pricing_wire(p: &LinePricing, line: &Line, currency: &str) -> wire::OrderLineItemPricing {
    let initial = amounts(&p.initial);
    wire::OrderLineItemPricing {
        currency: currency.to_string(),
        billing_cycle: line.price.billing_cycle.as_ref().map(billing_cycle),
        subtotal_minor: initial.subtotal_minor,
        total_discounts_minor: initial.total_discounts_minor,
        tax_amount_minor: initial.tax_amount_minor,
        total_minor: initial.total_minor,
        discounts: initial.discounts,
        taxes: initial.taxes,
        initial_invoice_amount_minor: p.initial.total(),
        recurring_amount_minor: p.recurring.total(),
        recurring_costs: amounts(&p.recurring),
    }
}

/// Every line's pricing and the order's summary.
pub fn priced(doc: &OrderDoc, currency: &str) -> Result<(Vec<wire::OrderLineItemPricing>, wire::OrderPricingSummary)> {
    let lines: Vec<LinePricing> = doc.lines.iter().map(|l| line_pricing(l, currency, doc)).collect::<Result<_>>()?;
    let order = pricing::price_order(&lines);
    let initial = amounts(&order.initial);
    let summary = wire::OrderPricingSummary {
        currency: currency.to_string(),
        subtotal_minor: initial.subtotal_minor,
        total_discounts_minor: initial.total_discounts_minor,
        tax_amount_minor: initial.tax_amount_minor,
        total_minor: initial.total_minor,
        discounts: initial.discounts.clone(),
        taxes: initial.taxes.clone(),
        initial_invoice: initial,
        recurring_costs: amounts(&order.recurring),
    };
    let line_prices = lines.iter().zip(&doc.lines).map(|(p, l)| line_pricing_wire(p, l, currency)).collect();
    Ok((line_prices, summary))
}

fn line_item(line: &Line, pricing: wire::OrderLineItemPricing) -> wire::OrderLineItem {
    wire::OrderLineItem {
        line_item_id: line.line_item_id,
        type_: line.product_type.into(),
        status: line.status.into(),
        product_offering: wire::OrderProductOffering {
            product_offering_id: line.product_offering.product_offering_id,
            name: line.product_offering.name.clone(),
        },
        subscription: line.subscription.clone().map(Into::into),
        subscription_id: line.subscription_id,
        sim_type: line.sim_type.map(Into::into),
        license: line.license.clone(),
        binding_contract: line.binding_contract,
        upfront_payment: line.upfront_payment,
        created_subscription_id: line.created_subscription_id,
        created_subscription_addon_id: line.created_subscription_addon_id,
        created_license_id: line.created_license_id,
        metadata: line.metadata.clone(),
        pricing,
    }
}

fn customer(row: &OrderRow) -> wire::OrderCustomer {
    wire::OrderCustomer { customer_id: row.customer_id, name: row.customer_name.clone() }
}

pub fn order(row: &OrderRow) -> Result<wire::Order> {
    let doc = OrderDoc::of(row)?;
    let (line_prices, pricing) = priced(&doc, &row.currency)?;
    Ok(wire::Order {
        order_id: row.id,
        reference_id: row.reference_id.clone(),
        status: row.status.into(),
        customer: customer(row),
        currency: row.currency.clone(),
        line_items: doc.lines.iter().zip(line_prices).map(|(l, p)| line_item(l, p)).collect(),
        pricing,
        metadata: row.metadata.clone().map(wire::Metadata),
        expires_at: is_open(row.status).then_some(row.expires_at),
        approved_at: row.approved_at,
        submitted_at: row.submitted_at,
        cancelled_at: row.cancelled_at,
        created_at: row.created_at,
        updated_at: row.updated_at,
    })
}

pub fn list_item(row: &OrderRow) -> Result<wire::OrderListItem> {
    let doc = OrderDoc::of(row)?;
    let (_, summary) = priced(&doc, &row.currency)?;
    Ok(wire::OrderListItem {
        order_id: row.id,
        reference_id: row.reference_id.clone(),
        status: row.status.into(),
        customer: customer(row),
        line_item_count: i32::try_from(doc.lines.len()).unwrap_or(i32::MAX),
        pricing: wire::OrderListItemPricing { currency: row.currency.clone(), total_minor: summary.total_minor },
        expires_at: is_open(row.status).then_some(row.expires_at),
        created_at: row.created_at,
        updated_at: row.updated_at,
    })
}
