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
fn reshape<A: Serialize, B: DeserializeOwned>(newer: &A) -> B {
    serde_json::to_value(newer)
        .and_then(serde_json::from_value)
        .expect("an auk shape holds every field of the bullfinch shape it comes from")
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
