//! What a resource's write tells the other resources: a `Change` for each
//! kind of move whose consequences reach past the resource's own rows. The
//! resource writes its rows and records its events, then tells the change
//! in the same transaction (`Caller::follow`); what the other resources do
//! in consequence is decided in one place, the followers table
//! (`domain::follow`). A resource names the change it made, never the
//! resources that follow it.

use crate::domain::catalog::price::Price;
use crate::store::{InvoiceRow, LicenseRow, SubscriptionRow};
use crate::wire::latest as wire;
use chrono::{DateTime, NaiveDate, Utc};
use uuid::Uuid;

/// A move, as its followers are told it. Each says with which events it
/// is recorded; the followers run after those events, so theirs follow.
pub enum Change<'a> {
    /// A subscription moved from `before` to `after` at `at` (its
    /// `subscription.*` events, if any, recorded).
    SubscriptionMoved { before: &'a SubscriptionRow, after: &'a SubscriptionRow, at: DateTime<Utc> },
    /// A subscription renewed (`subscription.renewed`): the cycle it
    /// begins is billed.
    SubscriptionRenewed(Renewed<'a>),
    /// A license renewed on `renews` at `at` (`license.renewed`), its next
    /// cycle ending `next`: the cycle it begins is billed.
    LicenseRenewed { license: &'a LicenseRow, renews: NaiveDate, next: Option<NaiveDate>, at: DateTime<Utc> },
    /// An order's lines changed, or it closed otherwise than paid through
    /// a link (`order.updated`, `order.cancelled`, `order.expired`,
    /// `order.submitted`): what a payment link of it collects no longer
    /// holds.
    OrderMoved { order: Uuid, at: DateTime<Utc> },
    /// An order was submitted without being paid (`order.submitted`): what
    /// it costs at once is billed.
    OrderSubmittedUnpaid { order: &'a wire::Order, at: DateTime<Utc> },
    /// An invoice was paid otherwise than through link `except` (or
    /// voided, or given up: `invoice.paid`, `invoice.voided`,
    /// `invoice.uncollectible`): its other ways of being paid close.
    InvoiceClosed { invoice: Uuid, except: Option<Uuid>, at: DateTime<Utc> },
    /// A port-out of `subscription`'s number `msisdn` completed at `at`
    /// (no event of the porting's own).
    NumberPortedOut { subscription: &'a SubscriptionRow, msisdn: &'a str, at: DateTime<Utc> },
    /// An invoice is overdue past its dunning's first step, at `at` (no
    /// event of the invoice's own).
    InvoiceOverdue { invoice: &'a InvoiceRow, at: DateTime<Utc> },
    /// An invoice was paid or voided (`invoice.paid`, `invoice.voided`;
    /// `why`: "paid", "void").
    InvoiceSettled { invoice: &'a InvoiceRow, why: &'static str },
    /// An invoice was given up at `at` (`invoice.uncollectible`).
    InvoiceUncollectible { invoice: &'a InvoiceRow, at: DateTime<Utc> },
    /// A charge of `intent` (autopay's, or that of `link`) for an invoice
    /// succeeded, its link or intent claimed (`payment_intent.succeeded`
    /// follows): the invoice is paid by it, and the followers set `paid`;
    /// left false (the invoice no longer OPEN), the payment is given back.
    InvoiceChargeSucceeded { invoice: Uuid, intent: Uuid, link: Option<Uuid>, paid: &'a mut bool },
    /// A charge of an invoice's autopay was declined
    /// (`payment_intent.payment_failed`).
    InvoiceChargeDeclined { invoice: &'a InvoiceRow },
}

/// A subscription's renewal: `subscription` as it was, renewed on
/// `renews` at `at`, its next cycle ending `next`, at its contracted
/// `price`, paid upfront until `paid_through` (the cycles before it bill
/// nothing).
pub struct Renewed<'a> {
    pub subscription: &'a SubscriptionRow,
    pub renews: NaiveDate,
    pub next: Option<NaiveDate>,
    pub price: &'a Price,
    pub paid_through: Option<NaiveDate>,
    pub at: DateTime<Utc>,
}
