//! Billing cycles, whatever is billed in them (a subscription, an add-on,
//! a license): how many months a price's cycle runs, the day a cycle ends,
//! and the instant what is due on a date falls due.
//!
//! A cycle ends on the same day of the month N months on, or on the
//! month's last day when the month is shorter: something activated on 31
//! January renews on 28 (29) February, 31 March, 30 April.

use crate::domain::catalog::price::{Price, PriceType};
use chrono::{DateTime, Datelike, Days, Months, NaiveDate, NaiveTime, Utc};

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
    let first = first_of_month(from) + Months::new(months);
    let last = (first + Months::new(1) - Days::new(1)).day();
    first + Days::new(u64::from(day.clamp(1, last) - 1))
}

/// The first day of `date`'s month.
pub fn first_of_month(date: NaiveDate) -> NaiveDate {
    date - Days::new(u64::from(date.day0()))
}

/// 00:00 UTC of `date`: when what is due on a date falls due.
pub fn midnight(date: NaiveDate) -> DateTime<Utc> {
    date.and_time(NaiveTime::MIN).and_utc()
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
