//! Revision 2026-08-21.auk: what it adds to bullfinch's shapes. Its prices
//! also carry the major-unit twins (`netPrice`, `currencyOptions`) and
//! `boundMonths`; `discount` and `discountMinor` are documented and never
//! sent. Its order pricing carries each amount twice: the minor-unit field
//! and its major-unit twin (the name without `Minor`), in the order's
//! currency. Every other field is copied by the generated `copy` functions.

use crate::money::major;
use crate::wire::auk::{self, copy};
use crate::wire::bullfinch;

impl From<bullfinch::Price> for auk::Price {
    fn from(p: bullfinch::Price) -> Self {
        auk::Price {
            net_price: p.net_price_minor.map(|m| major(m, &p.currency)),
            currency_options: p.currency_options_minor.iter().map(|(c, m)| (c.clone(), major(*m, c))).collect(),
            bound_months: p.binding_contract.as_ref().map(|b| b.duration.value),
            discount: None,
            discount_minor: None,
            ..copy::price(p)
        }
    }
}

// ------------------------------------------------------------------ orders
//
// Discounts, taxes and the amounts that hold them name no currency: their
// twins are filled in by the shape that does (`Twins`), right after the
// copy.

/// Fills the major-unit twins of a pricing part, in its owner's currency.
trait Twins {
    fn twins(&mut self, currency: &str);
}

impl Twins for auk::OrderPricingDiscount {
    fn twins(&mut self, currency: &str) {
        self.amount = major(self.amount_minor, currency);
    }
}

impl Twins for auk::TaxBreakdownItem {
    fn twins(&mut self, currency: &str) {
        self.amount = major(self.amount_minor, currency);
    }
}

impl<T: Twins> Twins for Vec<T> {
    fn twins(&mut self, currency: &str) {
        self.iter_mut().for_each(|t| t.twins(currency));
    }
}

impl Twins for auk::OrderPricingAmounts {
    fn twins(&mut self, currency: &str) {
        self.subtotal = major(self.subtotal_minor, currency);
        self.tax_amount = major(self.tax_amount_minor, currency);
        self.total = major(self.total_minor, currency);
        self.discounts.twins(currency);
        self.taxes.twins(currency);
    }
}

/// Copied; the owner fills the twin (`Twins`).
impl From<bullfinch::OrderPricingDiscount> for auk::OrderPricingDiscount {
    fn from(d: bullfinch::OrderPricingDiscount) -> Self {
        copy::order_pricing_discount(d)
    }
}

/// Copied; the owner fills the twin (`Twins`).
impl From<bullfinch::TaxBreakdownItem> for auk::TaxBreakdownItem {
    fn from(t: bullfinch::TaxBreakdownItem) -> Self {
        copy::tax_breakdown_item(t)
    }
}

/// Copied; the owner fills the twins (`Twins`).
impl From<bullfinch::OrderPricingAmounts> for auk::OrderPricingAmounts {
    fn from(a: bullfinch::OrderPricingAmounts) -> Self {
        copy::order_pricing_amounts(a)
    }
}

impl From<bullfinch::OrderPricingSummary> for auk::OrderPricingSummary {
    fn from(p: bullfinch::OrderPricingSummary) -> Self {
        let mut a = copy::order_pricing_summary(p);
        let currency = a.currency.clone();
        a.subtotal = major(a.subtotal_minor, &currency);
        a.tax_amount = major(a.tax_amount_minor, &currency);
        a.total = major(a.total_minor, &currency);
        a.discounts.twins(&currency);
        a.taxes.twins(&currency);
        a.initial_invoice.twins(&currency);
        a.recurring_costs.twins(&currency);
        a
    }
}

impl From<bullfinch::OrderLineItemPricing> for auk::OrderLineItemPricing {
    fn from(p: bullfinch::OrderLineItemPricing) -> Self {
        let mut a = copy::order_line_item_pricing(p);
        let currency = a.currency.clone();
        let twin = |minor| major(minor, &currency);
        a.subtotal = twin(a.subtotal_minor);
        a.tax_amount = twin(a.tax_amount_minor);
        a.total = twin(a.total_minor);
        a.total_discounts = twin(a.total_discounts_minor);
        a.initial_invoice_amount = twin(a.initial_invoice_amount_minor);
        a.recurring_amount = twin(a.recurring_amount_minor);
        a.discounts.twins(&currency);
        a.taxes.twins(&currency);
        a.recurring_costs.twins(&currency);
        a
    }
}

impl From<bullfinch::OrderListItemPricing> for auk::OrderListItemPricing {
    fn from(p: bullfinch::OrderListItemPricing) -> Self {
        auk::OrderListItemPricing { total: major(p.total_minor, &p.currency), ..copy::order_list_item_pricing(p) }
    }
}

// ------------------------------------------------------------------- usage

impl From<bullfinch::UsageVoiceIldPackage> for auk::UsageVoiceIldPackage {
    fn from(p: bullfinch::UsageVoiceIldPackage) -> Self {
        auk::UsageVoiceIldPackage { balance: major(p.balance_minor, &p.currency), ..copy::usage_voice_ild_package(p) }
    }
}
