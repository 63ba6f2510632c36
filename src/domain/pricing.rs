//! Order pricing: what each line item and the whole order cost, in minor
//! units, for the initial invoice and for each recurring period.
//!
//! The rules, as the service states them:
//! - A discount is taken off every billing period while it runs, not once
//!   in total. Its duration (months) runs from the start; a period counts
//!   while it starts inside the duration. Without a duration it never ends,
//!   and on a one-time price it applies to the single charge.
//! - The standard discount always applies; the binding-contract discount
//!   only when the line chooses the binding period; the upfront discount
//!   only when the line pays upfront.
//! - Paying upfront puts `billingCycles` billing cycles (cycles, not months)
//!   on the initial invoice; otherwise it holds one cycle.
//! - The recurring cost is the first period billed after the initial
//!   invoice, with the discounts still running then.
//! - Discounts never take a period below zero (applied in the order
//!   standard, binding contract, upfront; the last ones shrink first).
//! - Taxes are per rate, on the discounted amount, rounded half up per line;
//!   the order's amounts are the sums of its lines'.
//! - In a currency option, discounts scale by option / net price (rounded
//!   half up).

use super::catalog::price::{BillingCycle, Discount, DiscountSource, Price, PriceType};
use serde::{Deserialize, Serialize};

/// A tax rate of the customer's country.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaxRate {
    pub description: String,
    pub rate_basis_points: u32,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiscountLine {
    pub source: DiscountSource,
    pub description: String,
    pub amount: i64,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaxLine {
    pub description: String,
    pub rate_basis_points: u32,
    pub amount: i64,
}

/// One charge: its subtotal, the discounts off it and the taxes on it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Amounts {
    pub subtotal: i64,
    pub discounts: Vec<DiscountLine>,
    pub taxes: Vec<TaxLine>,
}

impl Amounts {
    pub fn total_discounts(&self) -> i64 {
        self.discounts.iter().map(|d| d.amount).sum()
    }

    pub fn tax_amount(&self) -> i64 {
        self.taxes.iter().map(|t| t.amount).sum()
    }

    pub fn total(&self) -> i64 {
        self.subtotal - self.total_discounts() + self.tax_amount()
    }

    /// Adds `other` in: discounts merge by (source, description), taxes by
    /// (description, rate).
    fn add(&mut self, other: &Amounts) {
        self.subtotal += other.subtotal;
        for d in &other.discounts {
            match self.discounts.iter_mut().find(|e| e.source == d.source && e.description == d.description) {
                Some(e) => e.amount += d.amount,
                None => self.discounts.push(d.clone()),
            }
        }
        for t in &other.taxes {
            match self.taxes.iter_mut().find(|e| e.description == t.description && e.rate_basis_points == t.rate_basis_points) {
                Some(e) => e.amount += t.amount,
                None => self.taxes.push(t.clone()),
            }
        }
    }
}

/// A line item's choices, as pricing needs them.
#[derive(Debug, Clone, Copy)]
pub struct Choices {
    pub binding_contract: bool,
    pub upfront_payment: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinePricing {
    pub initial: Amounts,
    pub recurring: Amounts,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OrderPricing {
    pub initial: Amounts,
    pub recurring: Amounts,
}

fn default_description(source: DiscountSource) -> &'static str {
    match source {
        DiscountSource::Standard => "Discount",
        DiscountSource::BindingContract => "Binding contract discount",
        DiscountSource::UpfrontPayment => "Upfront payment discount",
    }
}

/// `a * num / den`, rounded half up (all non-negative).
fn scale(a: i64, num: i64, den: i64) -> i64 {
    if den == 0 {
        return 0;
    }
    ((a as i128 * num as i128 * 2 + den as i128) / (den as i128 * 2)) as i64
}

/// The tax at `basis_points` on `base`, rounded half up.
pub fn tax(base: i64, basis_points: u32) -> i64 {
    scale(base, basis_points as i64, 10_000)
}

/// The discounts a line gets, in application order.
fn discounts_of(price: &Price, choices: Choices) -> Vec<(DiscountSource, &Discount)> {
    let mut out = vec![];
    if let Some(d) = &price.standard_discount {
        out.push((DiscountSource::Standard, d));
    }
    if choices.binding_contract
        && let Some(d) = price.binding_contract.as_ref().and_then(|b| b.discount.as_ref())
    {
        out.push((DiscountSource::BindingContract, d));
    }
    if choices.upfront_payment
        && let Some(d) = price.custom_upfront_payment.as_ref().and_then(|u| u.discount.as_ref())
    {
        out.push((DiscountSource::UpfrontPayment, d));
    }
    out
}

/// The charge of periods `periods` (each `net`), with every discount that
/// runs in each of them.
fn charge(net: i64, periods: std::ops::Range<u32>, months_per_period: u32, discounts: &[(DiscountSource, &Discount, i64)], taxes: &[TaxRate]) -> Amounts {
    let mut amounts = Amounts::default();
    for k in periods {
        let mut left = net;
        amounts.subtotal += net;
        let mut period = Amounts { subtotal: 0, discounts: vec![], taxes: vec![] };
        for (source, d, amount) in discounts {
            let runs = d.duration.as_ref().is_none_or(|dur| k * months_per_period < dur.value);
            if !runs {
                continue;
            }
            let take = (*amount).min(left);
            left -= take;
            let description = d.invoicing_description.clone().unwrap_or_else(|| default_description(*source).to_string());
            period.discounts.push(DiscountLine { source: *source, description, amount: take });
        }
        amounts.add(&period);
    }
    let base = amounts.subtotal - amounts.total_discounts();
    amounts.taxes = taxes
        .iter()
        .map(|t| TaxLine { description: t.description.clone(), rate_basis_points: t.rate_basis_points, amount: tax(base, t.rate_basis_points) })
        .collect();
    amounts
}

/// A line item's pricing in `currency`, or None when the price is not
/// offered in that currency.
pub fn price_line(price: &Price, currency: &str, choices: Choices, taxes: &[TaxRate]) -> Option<LinePricing> {
    let (net, discounts) = in_currency(price, currency, choices)?;
    Some(match price.price_type {
        PriceType::OneTime => LinePricing { initial: charge(net, 0..1, 0, &discounts, taxes), recurring: charge(0, 0..0, 0, &[], taxes) },
        PriceType::Recurring => {
            let months = price.billing_cycle.as_ref().map_or(1, |c: &BillingCycle| c.interval);
            let cycles = match (&price.custom_upfront_payment, choices.upfront_payment) {
                (Some(u), true) => u.billing_cycles,
                _ => 1,
            };
            LinePricing { initial: charge(net, 0..cycles, months, &discounts, taxes), recurring: charge(net, cycles..cycles + 1, months, &discounts, taxes) }
        }
    })
}

/// The net price in `currency` and the line's discounts with their
/// amounts in it (scaled for a currency option); None when the price is
/// not offered in that currency.
fn in_currency<'p>(price: &'p Price, currency: &str, choices: Choices) -> Option<(i64, Vec<(DiscountSource, &'p Discount, i64)>)> {
    let net = price.net_in(currency)?;
    let own = price.net_price_minor.unwrap_or(0);
    let discounts = discounts_of(price, choices)
        .into_iter()
        .map(|(s, d)| {
            let amount = if currency == price.currency { d.amount_minor } else { scale(d.amount_minor, net, own) };
            (s, d, amount)
        })
        .collect();
    Some((net, discounts))
}

/// What billing cycle `cycle` (0 the first) of a recurring price costs, with
/// the discounts still running then: what a renewal bills. None when the
/// price is one-time or not offered in `currency`.
pub fn price_cycle(price: &Price, currency: &str, choices: Choices, taxes: &[TaxRate], cycle: u32) -> Option<Amounts> {
    if price.price_type != PriceType::Recurring {
        return None;
    }
    let (net, discounts) = in_currency(price, currency, choices)?;
    let months = price.billing_cycle.as_ref().map_or(1, |c: &BillingCycle| c.interval);
    Some(charge(net, cycle..cycle + 1, months, &discounts, taxes))
}

/// The order's pricing: the sums of its lines.
pub fn price_order<'a>(lines: impl IntoIterator<Item = &'a LinePricing>) -> OrderPricing {
    let mut order = OrderPricing { initial: Amounts::default(), recurring: Amounts::default() };
    for l in lines {
        order.initial.add(&l.initial);
        order.recurring.add(&l.recurring);
    }
    order
}

#[cfg(test)]
mod tests {
    use super::*;

    fn price(json: serde_json::Value) -> Price {
        let mut p: Price = serde_json::from_value(json).unwrap();
        assert!(p.check().is_empty());
        p
    }

    fn vat() -> Vec<TaxRate> {
        vec![TaxRate { description: "VAT 25%".into(), rate_basis_points: 2500 }]
    }

    /// The demo's mobile plan: 299.00 SEK a month; 100.00 off for 3 months;
    /// 50.00 off with the 24-month binding (no end); 20.00 off when paying 12
    /// cycles upfront (no end).
    fn mobile() -> Price {
        price(serde_json::json!({
            "netPriceMinor": 29900, "currency": "SEK", "priceType": "RECURRING",
            "billingCycle": {"period": "MONTHLY", "interval": 1},
            "standardDiscount": {"amountMinor": 10000, "duration": {"unit": "MONTHS", "value": 3}},
            "bindingContract": {"duration": {"unit": "MONTHS", "value": 24}, "discount": {"amountMinor": 5000}},
            "customUpfrontPayment": {"billingCycles": 12, "discount": {"amountMinor": 2000}},
            "currencyOptionsMinor": {"EUR": 2700}
        }))
    }

    #[test]
    fn a_plain_month() {
        let l = price_line(&mobile(), "SEK", Choices { binding_contract: false, upfront_payment: false }, &vat()).unwrap();
        // first month: 299.00 - 100.00 = 199.00, VAT 49.75
        assert_eq!((l.initial.subtotal, l.initial.total_discounts(), l.initial.tax_amount(), l.initial.total()), (29900, 10000, 4975, 24875));
        // month 2 is still inside the 3-month welcome offer
        assert_eq!(l.recurring.total(), 24875);
    }

    #[test]
    fn binding_and_upfront() {
        let l = price_line(&mobile(), "SEK", Choices { binding_contract: true, upfront_payment: true }, &vat()).unwrap();
        // 12 cycles upfront: 12 x 299.00 = 3588.00; standard 3 x 100.00;
        // binding 12 x 50.00; upfront 12 x 20.00: 1140.00 off, 2448.00 taxed
        // 612.00 VAT: 3060.00
        assert_eq!(l.initial.subtotal, 358800);
        assert_eq!(l.initial.discounts.iter().map(|d| d.amount).collect::<Vec<_>>(), [30000, 60000, 24000]);
        assert_eq!((l.initial.tax_amount(), l.initial.total()), (61200, 306000));
        // cycle 13: 299.00 - 50.00 - 20.00 = 229.00 + 57.25 VAT
        assert_eq!(l.recurring.total(), 28625);
    }

    #[test]
    fn a_cycle_is_billed_with_the_discounts_running_then() {
        let plain = Choices { binding_contract: false, upfront_payment: false };
        // cycle 2 (the third month) is inside the 3-month offer, cycle 3 is not
        assert_eq!(price_cycle(&mobile(), "SEK", plain, &vat(), 2).unwrap().total(), 24875);
        assert_eq!(price_cycle(&mobile(), "SEK", plain, &vat(), 3).unwrap().total(), 37375);
        // the same as the order's recurring cost after its first cycle
        let l = price_line(&mobile(), "SEK", plain, &vat()).unwrap();
        assert_eq!(price_cycle(&mobile(), "SEK", plain, &vat(), 1).unwrap(), l.recurring);
    }

    #[test]
    fn currency_options_scale_discounts() {
        let l = price_line(&mobile(), "EUR", Choices { binding_contract: true, upfront_payment: false }, &[]).unwrap();
        // 27.00 EUR; 100.00 SEK x 2700/29900 = 9.03; 50.00 SEK -> 4.52
        assert_eq!(l.initial.discounts.iter().map(|d| d.amount).collect::<Vec<_>>(), [903, 452]);
        assert!(price_line(&mobile(), "USD", Choices { binding_contract: false, upfront_payment: false }, &[]).is_none());
    }

    #[test]
    fn discounts_never_go_below_zero() {
        let p = price(serde_json::json!({
            "netPriceMinor": 9900, "currency": "SEK", "priceType": "ONE_TIME",
            "standardDiscount": {"amountMinor": 5000},
            "bindingContract": {"duration": {"unit": "MONTHS", "value": 24}, "discount": {"amountMinor": 9900}}
        }));
        let l = price_line(&p, "SEK", Choices { binding_contract: true, upfront_payment: false }, &vat()).unwrap();
        assert_eq!(l.initial.discounts.iter().map(|d| d.amount).collect::<Vec<_>>(), [5000, 4900]);
        assert_eq!(l.initial.total(), 0);
        assert_eq!(
            l.recurring,
            Amounts { subtotal: 0, discounts: vec![], taxes: vec![TaxLine { description: "VAT 25%".into(), rate_basis_points: 2500, amount: 0 }] }
        );
    }
}
