//! What a renewal bills: the line of the cycle it begins, priced by the
//! catalog's rules for that cycle (the discounts still running then, the
//! taxes of the customer's country now), written in the renewal's
//! transaction as a follower of it (`Change::SubscriptionRenewed`,
//! `Change::LicenseRenewed`); and what an order submitted unpaid bills.

use super::draft;
use super::lines::{About, Line, LineKind};
use crate::domain::Caller;
use crate::domain::catalog::price::Price;
use crate::domain::change::Renewed;
use crate::domain::cycles::{cycle_end, cycle_months};
use crate::domain::pricing::{self, Choices};
use crate::error::{Error, Result};
use crate::store::{IdOrRef, LicenseRow, SubscriptionRow, Tx};
use chrono::{DateTime, Datelike, NaiveDate, Utc};
use uuid::Uuid;

/// Lines for one customer's invoice of a billing day.
#[derive(Debug, Clone)]
pub struct Bill {
    pub customer_id: Uuid,
    pub currency: String,
    pub lines: Vec<Line>,
}

impl Bill {
    /// Writes the lines to the customer's DRAFT of the day of `at`, in the
    /// transaction of what they bill.
    pub async fn write(self, tx: &mut Tx, caller: &Caller, at: DateTime<Utc>) -> Result<()> {
        draft::bill(tx, caller.org, self.customer_id, &self.currency, self.lines, at, caller.now).await
    }
}

/// How many whole cycles of `months` lie between `from` and `to` (cycles
/// begun on `day` of the month): the index of the cycle beginning `to`.
fn cycle_index(from: NaiveDate, to: NaiveDate, months: u32, day: u32) -> u32 {
    let (mut at, mut n) = (from, 0);
    // bounded: a cycle is at least a month, a subscription at most centuries
    while at < to && n < 12_000 {
        at = cycle_end(at, months, day);
        n += 1;
    }
    n
}

/// The taxes of the customer's country.
async fn taxes_of(caller: &Caller, customer: Uuid) -> Result<Vec<pricing::TaxRate>> {
    let row = caller.store.customer(caller.org, &IdOrRef::Id(customer)).await?;
    let row = row.ok_or_else(|| Error::Internal(format!("customer {customer} vanished")))?;
    crate::domain::customers::tax_rates(&caller.store, caller.org, &row).await
}

async fn offering_name(caller: &Caller, id: Uuid) -> Result<String> {
    Ok(caller.store.offering(caller.org, id).await?.map_or_else(|| "Subscription".into(), |o| o.offering.name))
}

/// One cycle of something billed: `start`..`end` of `price` in
/// `currency`, for a line activated on `activated`.
struct Cycle<'a> {
    kind: LineKind,
    price: &'a Price,
    currency: &'a str,
    choices: Choices,
    activated: NaiveDate,
    start: NaiveDate,
    end: NaiveDate,
    billing_day: u32,
    name: String,
    customer: Uuid,
    subscription_id: Option<Uuid>,
    license_id: Option<Uuid>,
}

impl Cycle<'_> {
    /// What the cycle bills; None when its price bills nothing then.
    async fn bill(self, caller: &Caller) -> Result<Option<Bill>> {
        let Some(months) = cycle_months(self.price) else { return Ok(None) };
        let taxes = taxes_of(caller, self.customer).await?;
        let index = cycle_index(self.activated, self.start, months, self.billing_day);
        let Some(amounts) = pricing::price_cycle(self.price, self.currency, self.choices, &taxes, index) else { return Ok(None) };
        let about = About {
            kind: self.kind,
            description: format!("{}, {} to {}", self.name, self.start, self.end),
            period: Some((self.start, self.end)),
            subscription_id: self.subscription_id,
            license_id: self.license_id,
            order_id: None,
        };
        Ok(Some(Bill { customer_id: self.customer, currency: self.currency.to_string(), lines: vec![Line::of(about, &amounts)] }))
    }
}

/// Follows `Change::SubscriptionRenewed`: what the renewal bills, written
/// to the customer's DRAFT of the day.
pub(in crate::domain) async fn subscription_renewed(tx: &mut Tx, caller: &Caller, renewed: &Renewed<'_>) -> Result<()> {
    match subscription_renewal(caller, renewed).await? {
        Some(bill) => bill.write(tx, caller, renewed.at).await,
        None => Ok(()),
    }
}

/// Follows `Change::LicenseRenewed`: what license `l`'s renewal on
/// `renews` (its next cycle ending `next`) bills, written to the
/// customer's DRAFT of the day of `at`.
pub(in crate::domain) async fn license_renewed(
    tx: &mut Tx,
    caller: &Caller,
    l: &LicenseRow,
    (renews, next): (NaiveDate, Option<NaiveDate>),
    at: DateTime<Utc>,
) -> Result<()> {
    match license_renewal(caller, l, renews, next).await? {
        Some(bill) => bill.write(tx, caller, at).await,
        None => Ok(()),
    }
}

/// What a subscription's renewal bills at its contracted price: the cycle
/// it begins, when it falls on or after `nextPaymentOn` (`paid_through`:
/// the cycles paid upfront bill nothing). (Told only for a subscription
/// ACTIVATED or SUSPENDED.)
async fn subscription_renewal(caller: &Caller, renewed: &Renewed<'_>) -> Result<Option<Bill>> {
    let Renewed { subscription: row, renews, next, price, paid_through, .. } = *renewed;
    let (Some(activated), Some(end)) = (row.life.activated_at, next) else { return Ok(None) };
    if paid_through.is_some_and(|p| renews < p) {
        return Ok(None);
    }
    let choices = Choices { binding_contract: row.terms.binding_contract, upfront_payment: row.terms.upfront_cycles > 0 };
    Cycle {
        kind: LineKind::SubscriptionRenewal,
        price,
        currency: &row.terms.currency,
        choices,
        activated: activated.date_naive(),
        start: renews,
        end,
        billing_day: row.life.billing_day.unwrap_or(activated.day()),
        name: offering_name(caller, row.offering_id).await?,
        customer: row.customer_id,
        subscription_id: Some(row.id),
        license_id: None,
    }
    .bill(caller)
    .await
}

/// What license `l`'s renewal on `renews` bills: the cycle it begins, at
/// its offering's price now (a license keeps no contracted price).
async fn license_renewal(caller: &Caller, l: &LicenseRow, renews: NaiveDate, next: Option<NaiveDate>) -> Result<Option<Bill>> {
    let (Some(activated), Some(end), Some(currency)) = (l.activated_at, next, l.currency.as_deref()) else { return Ok(None) };
    let Some(offering) = caller.store.offering(caller.org, l.offering_id).await? else { return Ok(None) };
    let price: Price = serde_json::from_value(offering.offering.price.clone()).map_err(|e| Error::Internal(format!("offering price: {e}")))?;
    let choices = Choices { binding_contract: false, upfront_payment: false };
    Cycle {
        kind: LineKind::LicenseRenewal,
        price: &price,
        currency,
        choices,
        activated: activated.date_naive(),
        start: renews,
        end,
        billing_day: l.billing_day.unwrap_or(activated.day()),
        name: offering.offering.name,
        customer: l.customer_id,
        subscription_id: None,
        license_id: Some(l.id),
    }
    .bill(caller)
    .await
}

/// Follows `Change::OrderSubmittedUnpaid`: the order's initial invoice
/// billed at `at` (`order_initial`), when it costs something now.
pub(in crate::domain) async fn order_submitted_unpaid(tx: &mut Tx, caller: &Caller, order: &crate::wire::latest::Order, at: DateTime<Utc>) -> Result<()> {
    match order_initial(order) {
        Some(bill) => bill.write(tx, caller, at).await,
        None => Ok(()),
    }
}

/// What an order submitted without a payment bills: its initial invoice,
/// a line per line item that costs something now, on the day's DRAFT.
/// (An order paid through a payment link or session has its payment
/// intent as its receipt.)
fn order_initial(order: &crate::wire::latest::Order) -> Option<Bill> {
    let lines: Vec<Line> = order
        .line_items
        .iter()
        .filter(|l| l.pricing.subtotal_minor != 0 || l.pricing.total_minor != 0)
        .map(|l| Line {
            kind: LineKind::Order,
            description: l.product_offering.name.clone(),
            period: None,
            subscription_id: l.created_subscription_id.or(l.subscription_id),
            license_id: l.created_license_id,
            order_id: Some(order.order_id),
            amount_minor: l.pricing.subtotal_minor,
            discounts: l
                .pricing
                .discounts
                .iter()
                .map(|d| super::lines::LineDiscount { description: d.description.clone(), amount_minor: d.amount_minor })
                .collect(),
            taxes: l
                .pricing
                .taxes
                .iter()
                .map(|t| super::lines::LineTax {
                    description: t.description.clone(),
                    rate_basis_points: u32::try_from(t.rate_basis_points).unwrap_or(0),
                    amount_minor: t.amount_minor,
                })
                .collect(),
        })
        .collect();
    (!lines.is_empty()).then(|| Bill { customer_id: order.customer.customer_id, currency: order.currency.clone(), lines })
}

/// What a call abroad charges that its packages did not pay (`charged`,
/// net, in the subscription's currency): a USAGE line of the day, taxed by
/// the customer's country's rates (one line per subscription and day,
/// added to as calls come).
pub async fn usage(caller: &Caller, row: &SubscriptionRow, charged: i64) -> Result<Bill> {
    let taxes = taxes_of(caller, row.customer_id).await?;
    let amounts = pricing::Amounts {
        subtotal: charged,
        discounts: vec![],
        taxes: taxes
            .iter()
            .map(|t| pricing::TaxLine {
                description: t.description.clone(),
                rate_basis_points: t.rate_basis_points,
                amount: pricing::tax(charged, t.rate_basis_points),
            })
            .collect(),
    };
    let about = About {
        kind: LineKind::Usage,
        description: format!("Calls abroad, {}", row.msisdn),
        period: None,
        subscription_id: Some(row.id),
        license_id: None,
        order_id: None,
    };
    Ok(Bill { customer_id: row.customer_id, currency: row.terms.currency.clone(), lines: vec![Line::of(about, &amounts)] })
}
