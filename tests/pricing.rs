//! Property tests of order pricing, on the wire forms both revisions send:
//! total = subtotal - discounts + taxes at every level, the order is the sum
//! of its lines, no amount is negative, and every auk major-unit twin is
//! exactly minor / 10^exponent of the currency.

use proptest::prelude::*;
use serde_json::{Value, json};
use switchboard::domain::catalog::price::Price;
use switchboard::domain::orders::{Line, OfferingRef, OrderDoc};
use switchboard::domain::pricing::TaxRate;
use switchboard::wire::{auk, bullfinch};

const CURRENCIES: [&str; 4] = ["SEK", "JPY", "BHD", "EUR"];

fn discount() -> impl Strategy<Value = Option<Value>> {
    prop::option::of((0i64..=2_000_000, prop::option::of(1u32..=36)).prop_map(|(amount, months)| {
        let mut d = json!({"amountMinor": amount});
        if let Some(m) = months {
            d["duration"] = json!({"unit": "MONTHS", "value": m});
        }
        d
    }))
}

/// Any valid price in `currency`, with or without each option.
fn price() -> impl Strategy<Value = Price> {
    (
        0i64..=10_000_000,
        prop::sample::select(CURRENCIES.to_vec()),
        any::<bool>(),
        1u32..=12,
        discount(),
        prop::option::of((1u32..=36, discount())),
        prop::option::of((1u32..=24, discount())),
    )
        .prop_map(|(net, currency, recurring, interval, standard, binding, upfront)| {
            let mut p = json!({"netPriceMinor": net, "currency": currency, "priceType": if recurring { "RECURRING" } else { "ONE_TIME" }});
            if recurring {
                p["billingCycle"] = json!({"period": "MONTHLY", "interval": interval});
                if let Some((cycles, d)) = upfront {
                    p["customUpfrontPayment"] = json!({"billingCycles": cycles});
                    if let Some(d) = d {
                        p["customUpfrontPayment"]["discount"] = d;
                    }
                }
            }
            if let Some(d) = standard {
                p["standardDiscount"] = d;
            }
            if let Some((months, d)) = binding {
                p["bindingContract"] = json!({"duration": {"unit": "MONTHS", "value": months}});
                if let Some(d) = d {
                    p["bindingContract"]["discount"] = d;
                }
            }
            let mut price: Price = serde_json::from_value(p).unwrap();
            assert!(price.check().is_empty());
            price
        })
}

fn line(price: Price, binding: bool, upfront: bool) -> Line {
    let binding_contract = binding && price.binding_contract.is_some();
    let upfront_payment = upfront && price.custom_upfront_payment.is_some();
    serde_json::from_value::<Line>(json!({
        "lineItemId": uuid::Uuid::new_v4(), "type": "EXTERNAL_PRODUCT", "status": "PENDING",
        "productOffering": OfferingRef { product_offering_id: uuid::Uuid::new_v4(), name: "x".into() },
        "bindingContract": binding_contract, "upfrontPayment": upfront_payment, "price": price
    }))
    .unwrap()
}

fn taxes() -> impl Strategy<Value = Vec<TaxRate>> {
    prop::collection::vec((0u32..=10_000).prop_map(|bp| TaxRate { description: format!("Tax {bp}"), rate_basis_points: bp }), 0..3)
}

fn int(v: &Value, field: &str) -> i64 {
    v[field].as_i64().unwrap_or_else(|| panic!("{field} in {v:#}"))
}

/// total = subtotal - discounts + taxes, the parts sum up, nothing negative.
fn check_amounts(v: &Value) {
    let discounts: i64 = v["discounts"].as_array().unwrap().iter().map(|d| int(d, "amountMinor")).sum();
    let taxes: i64 = v["taxes"].as_array().unwrap().iter().map(|t| int(t, "amountMinor")).sum();
    assert_eq!(int(v, "totalDiscountsMinor"), discounts);
    assert_eq!(int(v, "taxAmountMinor"), taxes);
    assert_eq!(int(v, "totalMinor"), int(v, "subtotalMinor") - discounts + taxes);
    for f in ["subtotalMinor", "totalDiscountsMinor", "taxAmountMinor", "totalMinor"] {
        assert!(int(v, f) >= 0, "{f} negative: {v:#}");
    }
    assert!(int(v, "subtotalMinor") - discounts >= 0, "discounts exceed the charge: {v:#}");
}

/// Every `x`/`xMinor` pair in `v` (recursively): x == xMinor / 10^exp
/// exactly, as decimal text.
fn check_twins(v: &Value, exponent: u32, seen: &mut usize) {
    match v {
        Value::Object(m) => {
            for (k, minor) in m {
                if let (Some(name), Some(minor)) = (k.strip_suffix("Minor"), minor.as_i64()) {
                    let Some(major) = m.get(name) else { continue };
                    let expected = rust_decimal_text(minor, exponent);
                    let text = major.as_f64().unwrap().to_string();
                    assert_eq!(text.trim_end_matches(".0"), expected, "{name}: {major} vs {minor}");
                    *seen += 1;
                }
                check_twins(minor, exponent, seen);
            }
        }
        Value::Array(a) => a.iter().for_each(|x| check_twins(x, exponent, seen)),
        _ => {}
    }
}

/// minor / 10^exponent as the shortest decimal text.
fn rust_decimal_text(minor: i64, exponent: u32) -> String {
    let sign = if minor < 0 { "-" } else { "" };
    let digits = minor.unsigned_abs().to_string();
    let e = exponent as usize;
    let (int, frac) = if digits.len() > e { digits.split_at(digits.len() - e) } else { ("0", digits.as_str()) };
    let frac = format!("{frac:0>e$}");
    let frac = frac.trim_end_matches('0');
    if frac.is_empty() { format!("{sign}{int}") } else { format!("{sign}{int}.{frac}") }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn pricing_invariants_hold_on_both_revisions(
        lines in prop::collection::vec((price(), any::<bool>(), any::<bool>()), 1..6),
        taxes in taxes(),
        currency_index in 0usize..4,
    ) {
        // every line priced in the order currency: its own or an option
        let currency = CURRENCIES[currency_index];
        let lines: Vec<Line> = lines.into_iter().map(|(mut p, b, u)| {
            if p.currency != currency {
                let net = p.net_price_minor.unwrap_or(0);
                p.currency_options_minor.insert(currency.to_string(), net / 3);
            }
            line(p, b, u)
        }).collect();
        let doc = OrderDoc { lines, tax_rates: taxes };
        let (line_prices, summary) = switchboard::domain::orders::priced(&doc, currency).unwrap();
        let line_prices: Vec<serde_json::Value> = line_prices.iter().map(|l| serde_json::to_value(l).unwrap()).collect();
        let summary = serde_json::to_value(&summary).unwrap();

        for l in &line_prices {
            check_amounts(l);
            check_amounts(&l["recurringCosts"]);
            prop_assert_eq!(int(l, "initialInvoiceAmountMinor"), int(l, "totalMinor"));
            prop_assert_eq!(int(l, "recurringAmountMinor"), int(&l["recurringCosts"], "totalMinor"));
        }
        check_amounts(&summary);
        for part in ["initialInvoice", "recurringCosts"] {
            check_amounts(&summary[part]);
        }
        // the order is the sum of its lines
        for f in ["subtotalMinor", "totalDiscountsMinor", "taxAmountMinor", "totalMinor"] {
            let lines: i64 = line_prices.iter().map(|l| int(l, f)).sum();
            prop_assert_eq!(int(&summary, f), lines);
            prop_assert_eq!(int(&summary["initialInvoice"], f), lines);
            let recurring: i64 = line_prices.iter().map(|l| int(&l["recurringCosts"], f)).sum();
            prop_assert_eq!(int(&summary["recurringCosts"], f), recurring);
        }

        // auk: the same amounts with exact major-unit twins
        let wire: bullfinch::types::OrderPricingSummary = serde_json::from_value(summary.clone()).unwrap();
        let older: auk::types::OrderPricingSummary = wire.into();
        let older = serde_json::to_value(older).unwrap();
        let exponent = switchboard::money::exponent(currency).unwrap();
        let mut seen = 0;
        check_twins(&older, exponent, &mut seen);
        prop_assert!(seen >= 9, "twins checked: {}", seen);
    }
}

#[test]
fn decimal_text_is_exact() {
    assert_eq!(rust_decimal_text(12345, 2), "123.45");
    assert_eq!(rust_decimal_text(5, 3), "0.005");
    assert_eq!(rust_decimal_text(1500, 0), "1500");
    assert_eq!(rust_decimal_text(100, 2), "1");
}
