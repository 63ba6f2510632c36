//! Revision 2026-08-21.auk: the `From` conversions from the newest shapes,
//! only where the auk document differs. auk's price also carries the
//! major-unit twins (`netPrice`, `currencyOptions`) and `boundMonths`;
//! `discount` and `discountMinor` are documented there and never sent.

use super::generated::{auk, bullfinch};
use crate::domain::money::major;
use serde::Serialize;
use serde::de::DeserializeOwned;

/// The same JSON read as the older type: every field the revisions share
/// carries over unchanged; the caller then fills in what auk adds.
fn json_of<T: Serialize>(v: &T) -> serde_json::Value {
    serde_json::to_value(v).expect("wire types serialize")
}

/// An auk shape holds every field of the bullfinch shape it comes from,
/// and the twins added to it.
fn from_json<T: DeserializeOwned>(v: serde_json::Value) -> T {
    serde_json::from_value(v).expect("an auk shape holds the bullfinch shape and its twins")
}

fn reshape<A: Serialize, B: DeserializeOwned>(newer: &A) -> B {
    from_json(json_of(newer))
}

impl From<bullfinch::types::Price> for auk::types::Price {
    fn from(p: bullfinch::types::Price) -> Self {
        let mut a: auk::types::Price = reshape(&p);
        a.net_price = p.net_price_minor.map(|m| major(m, &p.currency));
        a.currency_options = p.currency_options_minor.iter().map(|(c, m)| (c.clone(), major(*m, c))).collect();
        a.bound_months = p.binding_contract.as_ref().map(|b| b.duration.value);
        a.discount = None;
        a.discount_minor = None;
        a
    }
}

impl From<bullfinch::types::ProductOffering> for auk::types::ProductOffering {
    fn from(o: bullfinch::types::ProductOffering) -> Self {
        let mut a: auk::types::ProductOffering = reshape(&o);
        a.price = o.price.into();
        a
    }
}

impl From<bullfinch::types::ProductOfferingList> for auk::types::ProductOfferingList {
    fn from(l: bullfinch::types::ProductOfferingList) -> Self {
        auk::types::ProductOfferingList { items: l.items.into_iter().map(Into::into).collect(), pagination: l.pagination }
    }
}

impl From<bullfinch::types::ProductCatalog> for auk::types::ProductCatalog {
    fn from(c: bullfinch::types::ProductCatalog) -> Self {
        auk::types::ProductCatalog {
            product_catalog_id: c.product_catalog_id,
            name: c.name,
            description: c.description,
            customer_id: c.customer_id,
            items: c.items.into_iter().map(Into::into).collect(),
        }
    }
}

// ------------------------------------------------------------------ orders
//
// auk's order pricing carries each listed amount twice: the minor-unit
// field and its major-unit twin (the name without `Minor`), in the order's
// currency. Discounts and taxes hold no currency of their own, so the
// twins are added on the JSON of the object that does.

/// Adds the major-unit twin of each of `fields` present in `v`.
fn twins(v: &mut serde_json::Value, currency: &str, fields: &[&str]) {
    for f in fields {
        if let Some(minor) = v.get(*f).and_then(serde_json::Value::as_i64) {
            v[f.trim_end_matches("Minor")] = serde_json::json!(major(minor, currency));
        }
    }
}

/// OrderPricingAmounts: subtotal, taxAmount, total; amount of each
/// discount and tax.
fn amounts_twins(v: &mut serde_json::Value, currency: &str) {
    twins(v, currency, &["subtotalMinor", "taxAmountMinor", "totalMinor"]);
    for list in ["discounts", "taxes"] {
        for item in v[list].as_array_mut().into_iter().flatten() {
            twins(item, currency, &["amountMinor"]);
        }
    }
}

fn summary_twins(v: &mut serde_json::Value, currency: &str) {
    amounts_twins(v, currency);
    amounts_twins(&mut v["initialInvoice"], currency);
    amounts_twins(&mut v["recurringCosts"], currency);
}

fn line_pricing_twins(v: &mut serde_json::Value, currency: &str) {
    amounts_twins(v, currency);
    twins(v, currency, &["totalDiscountsMinor", "initialInvoiceAmountMinor", "recurringAmountMinor"]);
    amounts_twins(&mut v["recurringCosts"], currency);
}


impl From<bullfinch::types::OrderPricingSummary> for auk::types::OrderPricingSummary {
    fn from(p: bullfinch::types::OrderPricingSummary) -> Self {
        let mut v = json_of(&p);
        summary_twins(&mut v, &p.currency);
        from_json(v)
    }
}

impl From<bullfinch::types::Order> for auk::types::Order {
    fn from(o: bullfinch::types::Order) -> Self {
        let mut v = json_of(&o);
        summary_twins(&mut v["pricing"], &o.currency);
        for line in v["lineItems"].as_array_mut().into_iter().flatten() {
            line_pricing_twins(&mut line["pricing"], &o.currency);
        }
        from_json(v)
    }
}

impl From<bullfinch::types::OrderList> for auk::types::OrderList {
    fn from(l: bullfinch::types::OrderList) -> Self {
        let mut v = json_of(&l);
        for item in v["items"].as_array_mut().into_iter().flatten() {
            let currency = item["pricing"]["currency"].as_str().unwrap_or_default().to_string();
            twins(&mut item["pricing"], &currency, &["totalMinor"]);
        }
        from_json(v)
    }
}

// ------------------------------------------------------- subscriptions, licenses
//
// They name their offering with its price, so each carries auk's price.

impl From<bullfinch::types::ProductOfferingSummary> for auk::types::ProductOfferingSummary {
    fn from(o: bullfinch::types::ProductOfferingSummary) -> Self {
        let mut a: auk::types::ProductOfferingSummary = reshape(&o);
        a.price = o.price.into();
        a
    }
}

impl From<bullfinch::types::Subscription> for auk::types::Subscription {
    fn from(s: bullfinch::types::Subscription) -> Self {
        let mut a: auk::types::Subscription = reshape(&s);
        a.product_offering = s.product_offering.map(Into::into);
        a
    }
}

impl From<bullfinch::types::SubscriptionList> for auk::types::SubscriptionList {
    fn from(l: bullfinch::types::SubscriptionList) -> Self {
        auk::types::SubscriptionList { items: l.items.into_iter().map(Into::into).collect(), pagination: l.pagination }
    }
}

impl From<bullfinch::types::SubscriptionAddon> for auk::types::SubscriptionAddon {
    fn from(s: bullfinch::types::SubscriptionAddon) -> Self {
        let mut a: auk::types::SubscriptionAddon = reshape(&s);
        a.product_offering = s.product_offering.into();
        a
    }
}

impl From<bullfinch::types::SubscriptionAddonList> for auk::types::SubscriptionAddonList {
    fn from(l: bullfinch::types::SubscriptionAddonList) -> Self {
        auk::types::SubscriptionAddonList { items: l.items.into_iter().map(Into::into).collect() }
    }
}

impl From<bullfinch::types::License> for auk::types::License {
    fn from(l: bullfinch::types::License) -> Self {
        let mut a: auk::types::License = reshape(&l);
        a.product_offering = l.product_offering.into();
        a
    }
}

impl From<bullfinch::types::LicenseList> for auk::types::LicenseList {
    fn from(l: bullfinch::types::LicenseList) -> Self {
        auk::types::LicenseList { items: l.items.into_iter().map(Into::into).collect(), pagination: l.pagination }
    }
}
