//! An offering's price as stored and imported: the minor-unit shape of the
//! newest revision, with the rules a price must keep.

use crate::money::{MAX_MINOR, exponent};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum PriceType {
    OneTime,
    Recurring,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum DiscountSource {
    Standard,
    BindingContract,
    UpfrontPayment,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum DurationUnit {
    Months,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum BillingPeriod {
    Monthly,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Duration {
    pub unit: DurationUnit,
    pub value: u32,
}

/// Taken off every billing period while it runs (not a total).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Discount {
    pub amount_minor: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration: Option<Duration>,
    /// Implied by where the discount sits; a catalog file may omit it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<DiscountSource>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub invoicing_description: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BindingContract {
    pub duration: Duration,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub discount: Option<Discount>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UpfrontPayment {
    pub billing_cycles: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub discount: Option<Discount>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BillingCycle {
    pub period: BillingPeriod,
    pub interval: u32,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Price {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub net_price_minor: Option<i64>,
    pub currency: String,
    pub price_type: PriceType,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub binding_contract: Option<BindingContract>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub standard_discount: Option<Discount>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub custom_upfront_payment: Option<UpfrontPayment>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub billing_cycle: Option<BillingCycle>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub currency_options_minor: BTreeMap<String, i64>,
}

/// Limits of the published schema (spec/ Price and its parts).
const MAX_DURATION_MONTHS: u32 = 120;
const MAX_UPFRONT_CYCLES: u32 = 60;
const MAX_INTERVAL: u32 = 12;

impl Price {
    /// Every rule a stored price keeps, as (path below the price, message).
    /// Fills in each discount's source from where it sits.
    pub fn check(&mut self) -> Vec<(String, String)> {
        let mut bad = vec![];
        let mut err = |path: &str, msg: &str| bad.push((path.to_string(), msg.to_string()));
        if exponent(&self.currency).is_none() {
            err("currency", "must be an ISO 4217 currency code with minor units");
        }
        if let Some(n) = self.net_price_minor
            && !(0..=MAX_MINOR).contains(&n)
        {
            err("netPriceMinor", &format!("must be 0 to {MAX_MINOR}"));
        }
        for (code, amount) in &self.currency_options_minor {
            if exponent(code).is_none() {
                err(&format!("currencyOptionsMinor.{code}"), "must be keyed by an ISO 4217 currency code with minor units");
            } else if *code == self.currency {
                err(&format!("currencyOptionsMinor.{code}"), "repeats the price's own currency");
            }
            if !(0..=MAX_MINOR).contains(amount) {
                err(&format!("currencyOptionsMinor.{code}"), &format!("must be 0 to {MAX_MINOR}"));
            }
        }
        match (self.price_type, &self.billing_cycle) {
            (PriceType::Recurring, None) => err("billingCycle", "is required for a RECURRING price"),
            (PriceType::OneTime, Some(_)) => err("billingCycle", "is only for RECURRING prices"),
            (_, Some(c)) if !(1..=MAX_INTERVAL).contains(&c.interval) => err("billingCycle.interval", &format!("must be 1 to {MAX_INTERVAL}")),
            _ => {}
        }
        if let Some(u) = &self.custom_upfront_payment {
            if self.price_type == PriceType::OneTime {
                err("customUpfrontPayment", "is only for RECURRING prices");
            }
            if !(1..=MAX_UPFRONT_CYCLES).contains(&u.billing_cycles) {
                err("customUpfrontPayment.billingCycles", &format!("must be 1 to {MAX_UPFRONT_CYCLES}"));
            }
        }
        if let Some(b) = &self.binding_contract {
            check_duration("bindingContract.duration", &b.duration, &mut err);
        }
        let slots = [
            ("standardDiscount", self.standard_discount.as_mut(), DiscountSource::Standard),
            ("bindingContract.discount", self.binding_contract.as_mut().and_then(|b| b.discount.as_mut()), DiscountSource::BindingContract),
            ("customUpfrontPayment.discount", self.custom_upfront_payment.as_mut().and_then(|u| u.discount.as_mut()), DiscountSource::UpfrontPayment),
        ];
        for (path, discount, source) in slots {
            let Some(d) = discount else { continue };
            if !(0..=MAX_MINOR).contains(&d.amount_minor) {
                err(&format!("{path}.amountMinor"), &format!("must be 0 to {MAX_MINOR}"));
            }
            if let Some(dur) = &d.duration {
                check_duration(&format!("{path}.duration"), dur, &mut err);
            }
            match d.source {
                Some(s) if s != source => err(&format!("{path}.source"), &format!("must be {}", source_name(source))),
                _ => d.source = Some(source),
            }
        }
        bad
    }

    /// The net price in `currency`, if the price is offered in it: its own
    /// currency, or one of its currency options.
    pub fn net_in(&self, currency: &str) -> Option<i64> {
        if currency == self.currency { Some(self.net_price_minor.unwrap_or(0)) } else { self.currency_options_minor.get(currency).copied() }
    }
}

fn check_duration(path: &str, d: &Duration, err: &mut impl FnMut(&str, &str)) {
    if !(1..=MAX_DURATION_MONTHS).contains(&d.value) {
        err(&format!("{path}.value"), &format!("must be 1 to {MAX_DURATION_MONTHS}"));
    }
}

fn source_name(s: DiscountSource) -> &'static str {
    match s {
        DiscountSource::Standard => "STANDARD",
        DiscountSource::BindingContract => "BINDING_CONTRACT",
        DiscountSource::UpfrontPayment => "UPFRONT_PAYMENT",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn price(json: serde_json::Value) -> Price {
        serde_json::from_value(json).unwrap()
    }

    #[test]
    fn a_recurring_price_needs_a_cycle_and_discounts_get_their_source() {
        let mut p = price(serde_json::json!({
            "netPriceMinor": 29900, "currency": "SEK", "priceType": "RECURRING",
            "billingCycle": {"period": "MONTHLY", "interval": 1},
            "bindingContract": {"duration": {"unit": "MONTHS", "value": 24}, "discount": {"amountMinor": 5000}}
        }));
        assert!(p.check().is_empty());
        assert_eq!(p.binding_contract.unwrap().discount.unwrap().source, Some(DiscountSource::BindingContract));
        let mut p = price(serde_json::json!({"currency": "XAU", "priceType": "RECURRING",
            "standardDiscount": {"amountMinor": -1, "source": "UPFRONT_PAYMENT"}}));
        let paths: Vec<String> = p.check().into_iter().map(|(p, _)| p).collect();
        assert_eq!(paths, ["currency", "billingCycle", "standardDiscount.amountMinor", "standardDiscount.source"]);
    }
}
