//! What a subscription was bought at and its billing cycles: the contracted
//! price, the day of the month its cycles begin, when the current one ends
//! (`renewsOn`), until when it was paid upfront (`nextPaymentOn`), and
//! what changing to another offering does to them.
//!
//! Cycles are counted from the first activation's date, by the price's
//! billing cycle (N months; `cycles`).

use crate::domain::catalog::price::Price;
use crate::domain::cycles::{cycle_end, cycle_months};
use crate::domain::offering_change::{day_of, price_of};
use crate::error::{Error, Result};
use crate::states::subscriptions::SubscriptionStatus as Status;
use crate::store::{OfferingRow, SubscriptionRow, Terms};
use crate::wire::latest::ChangeSchedule as Schedule;
use chrono::{DateTime, Datelike, NaiveDate, Utc};

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

/// The date a change on `schedule` takes effect for `row`, today being
/// `today`; None when the subscription has no such day (no billing cycles).
pub fn date_of(row: &SubscriptionRow, schedule: Schedule, today: NaiveDate) -> Option<NaiveDate> {
    day_of(schedule, today, row.life.renews_on, next_payment(row))
}

/// `row` on `offering` from now: its catalog price becomes the contracted
/// one; the binding contract's end, the billing day and what was paid
/// upfront stay. A subscription in service whose new price has billing
/// cycles and the old none begins them today; one whose new price has none
/// stops renewing.
pub fn change_to(row: &mut SubscriptionRow, offering: &OfferingRow, today: NaiveDate) -> Result<()> {
    let price = price_of(offering)?;
    row.offering_id = offering.id;
    row.terms.binding_contract &= price.binding_contract.is_some();
    row.terms.price = offering.offering.price.clone();
    match (cycle_months(&price), row.life.renews_on, row.life.activated_at) {
        (None, ..) => row.life.renews_on = None,
        (Some(months), None, Some(_)) if row.status != Status::Cancelled => {
            row.life.renews_on = Some(cycle_end(today, months, row.life.billing_day.unwrap_or(today.day())));
        }
        _ => {}
    }
    Ok(())
}
