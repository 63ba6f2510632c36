//! The rules every change of offering shares (a subscription's, an
//! add-on's, a license's): the price an offering is sold at, the day a
//! schedule falls on, the earliest schedule of a change, whether it is an
//! upgrade, the date asked for, and the offering a change names.

use crate::domain::Caller;
use crate::domain::catalog::{self, price::Price};
use crate::domain::cycles::cycle_months;
use crate::error::{Error, InternalCode, Result};
use crate::store::OfferingRow;
use crate::wire::latest::ChangeSchedule as Schedule;
use chrono::{Datelike, Months, NaiveDate};

/// The catalog price of `offering`, as the domain reads it.
pub fn price_of(offering: &OfferingRow) -> Result<Price> {
    serde_json::from_value(offering.offering.price.clone()).map_err(|e| Error::Internal(format!("offering {}: price: {e}", offering.id)))
}

/// The date `schedule` falls on, today being `today`, for something that
/// renews on `renews_on` and is next paid for on `pays_on` (None: it has
/// no such day).
pub fn day_of(schedule: Schedule, today: NaiveDate, renews_on: Option<NaiveDate>, pays_on: Option<NaiveDate>) -> Option<NaiveDate> {
    match schedule {
        Schedule::Instant => Some(today),
        Schedule::FirstOfNextMonth => Some(today.with_day(1)? + Months::new(1)),
        Schedule::NextRenewalDay => renews_on,
        Schedule::NextPaymentDay => pays_on,
    }
}

/// The earliest schedule of a change of an add-on or a license: INSTANT
/// while it is `pending` (nothing billed yet) or for an `upgrade`, else
/// its next renewal day, or the first of next month when it `renews` not.
pub fn earliest_for(pending: bool, upgrade: bool, renews: bool) -> Schedule {
    match (pending || upgrade, renews) {
        (true, _) => Schedule::Instant,
        (false, true) => Schedule::NextRenewalDay,
        (false, false) => Schedule::FirstOfNextMonth,
    }
}

/// The offering a change names (`productOfferingId`): 404 naming that
/// field when there is none.
pub async fn named(caller: &Caller, key: &str) -> Result<OfferingRow> {
    catalog::find(caller, key).await.map_err(|e| match e {
        Error::NotFound { code, message, .. } => Error::NotFound { code, message, property: "productOfferingId" },
        e => e,
    })
}

/// The schedule and date a change asked for on `asked` (the option's
/// `first` when none) takes effect: on or after `not_before`, the date of
/// `first`; `date_of` gives the day a schedule falls on for the `what`
/// changing (None: it has no such day). Else 409
/// change_schedule_not_allowed.
pub fn asked_date(
    asked: Option<Schedule>,
    first: Schedule,
    not_before: NaiveDate,
    what: &str,
    date_of: impl Fn(Schedule) -> Option<NaiveDate>,
) -> Result<(Schedule, NaiveDate)> {
    let schedule = asked.unwrap_or(first);
    match date_of(schedule).filter(|d| *d >= not_before) {
        Some(date) => Ok((schedule, date)),
        None => Err(Error::Conflict {
            code: InternalCode::ChangeScheduleNotAllowed,
            message: format!("This change takes effect {first} ({not_before}) at the earliest; {schedule} is earlier or not a day this {what} has."),
            property: "changeSchedule",
        }),
    }
}

/// Whether `new` costs more per month than `current` in `currency`.
pub fn is_upgrade(current: &Price, new: &Price, currency: &str) -> bool {
    let per_month = |p: &Price| (p.net_in(currency).unwrap_or(0) as i128, cycle_months(p).unwrap_or(1) as i128);
    let ((cur, cur_months), (new, new_months)) = (per_month(current), per_month(new));
    new * cur_months > cur * new_months
}
