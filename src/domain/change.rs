//! What a resource's write tells the other resources: a `Change` for each
//! kind of move whose consequences reach past the resource's own rows. The
//! resource writes its rows and records its events, then tells the change
//! in the same transaction (`Caller::follow`); what the other resources do
//! in consequence is decided in one place, the followers table
//! (`domain::follow`). A resource names the change it made, never the
//! resources that follow it.

use crate::store::{InvoiceRow, SubscriptionRow};
use crate::wire::latest as wire;
use chrono::{DateTime, Utc};
use uuid::Uuid;

/// A move, as its followers are told it. Each says with which events it
/// is recorded; the followers run after those events, so theirs follow.
pub enum Change<'a> {
    /// A subscription moved from `before` to `after` at `at` (its
    /// `subscription.*` events, if any, recorded).
    SubscriptionMoved { before: &'a SubscriptionRow, after: &'a SubscriptionRow, at: DateTime<Utc> },
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
    /// A charge of an invoice's autopay was declined
    /// (`payment_intent.payment_failed`).
    InvoiceChargeDeclined { invoice: &'a InvoiceRow },
}
