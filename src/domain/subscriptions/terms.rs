//! What a subscription was bought at and its billing cycles: the contracted
//! price, the day of the month its cycles begin, when the current one ends
//! (`renewsOn`), and until when it was paid upfront (`nextPaymentOn`).
//!
//! Cycles are counted from the first activation's date, by the price's
//! billing cycle (N months). A cycle ends on the same day of the month N
//! months on, or on the month's last day when the month is shorter: a
//! subscription activated on 31 January renews on 28 (29) February, 31
//! March, 30 April.

use crate::domain::catalog::price::{Price, PriceType};
use crate::error::{Error, Result};
use crate::store::{SubscriptionRow, Terms};
use chrono::{DateTime, Datelike, Months, NaiveDate, NaiveTime, Utc};

/// The price a subscription was bought at, as the domain reads it.
pub fn price(terms: &Terms) -> Result<Price> {
    serde_json::from_value(terms.price.clone()).map_err(|e| Error::Internal(format!("stored contracted price: {e}")))
}

/// The terms of a line bought at `price` in `currency` with its choices.
pub fn bought(currency: &str, price: &Price, binding_contract: bool, upfront_payment: bool) -> Terms {
    let upfront_cycles = match (&price.custom_upfront_payment, upfront_payment) {
        (Some(u), true) => u.billing_cycles,
        _ => 0,
    };
    Terms {
        currency: currency.to_string(),
        price: crate::wire::to_json(price),
        binding_contract: binding_contract && price.binding_contract.is_some(),
        upfront_cycles,
    }
}

/// Months per billing cycle of a recurring price; None for a one-time one.
pub fn cycle_months(price: &Price) -> Option<u32> {
    match price.price_type {
        PriceType::OneTime => None,
        PriceType::Recurring => Some(price.billing_cycle.as_ref().map_or(1, |c| c.interval)),
    }
}

/// The day `months` after `from` that falls on `day` of its month (or the
/// month's last day when it has fewer days).
pub fn cycle_end(from: NaiveDate, months: u32, day: u32) -> NaiveDate {
    let first = from.with_day(1).expect("every month has a 1st") + Months::new(months);
    let last = (first + Months::new(1)).pred_opt().expect("a month has a last day").day();
    first.with_day(day.min(last)).expect("clamped to the month")
}

/// 00:00 UTC of `date`: when what is due on a date falls due.
pub fn midnight(date: NaiveDate) -> DateTime<Utc> {
    date.and_time(NaiveTime::MIN).and_utc()
}

/// What the first activation at `at` begins: billing cycles on its day, the
/// first ending a cycle on, and the upfront payment running through the
/// cycles it paid (the initial invoice pays at least the first).
pub fn begin_cycles(row: &mut SubscriptionRow, at: DateTime<Utc>) -> Result<()> {
    let Some(months) = cycle_months(&price(&row.terms)?) else { return Ok(()) };
    let (day, start) = (at.day(), at.date_naive());
    row.life.billing_day = Some(day);
    row.life.renews_on = Some(cycle_end(start, months, day));
    row.life.paid_through = Some(cycle_end(start, months * row.terms.upfront_cycles.max(1), day));
    Ok(())
}

/// The next cycle's end, after the one ending `renews_on`, by the price
/// `row` is on now (an offering change may have changed its cycle).
pub fn next_cycle(row: &SubscriptionRow, renews_on: NaiveDate) -> Result<Option<NaiveDate>> {
    let day = row.life.billing_day.unwrap_or(renews_on.day());
    Ok(cycle_months(&price(&row.terms)?).map(|m| cycle_end(renews_on, m, day)))
}

/// The first renewal not paid for: the next one, or the end of the cycles
/// paid upfront when that is later.
pub fn next_payment(row: &SubscriptionRow) -> Option<NaiveDate> {
    let renews = row.life.renews_on?;
    Some(row.life.paid_through.map_or(renews, |p| p.max(renews)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(s: &str) -> NaiveDate {
        s.parse().unwrap()
    }

    #[test]
    fn a_cycle_ends_on_its_day_or_the_months_last() {
        assert_eq!(cycle_end(d("2026-01-31"), 1, 31), d("2026-02-28"));
        assert_eq!(cycle_end(d("2026-02-28"), 1, 31), d("2026-03-31"));
        assert_eq!(cycle_end(d("2026-03-31"), 1, 31), d("2026-04-30"));
        assert_eq!(cycle_end(d("2028-01-30"), 1, 30), d("2028-02-29"));
        assert_eq!(cycle_end(d("2028-02-29"), 12, 29), d("2029-02-28"));
        assert_eq!(cycle_end(d("2029-02-28"), 12, 29), d("2030-02-28"));
        assert_eq!(cycle_end(d("2026-11-15"), 3, 15), d("2027-02-15"));
        assert_eq!(cycle_end(d("2026-12-01"), 1, 1), d("2027-01-01"));
    }
}
