//! An invoice's row as the other parts of billing write it: when its
//! billing day ends, what falls due of it next, the row as written next
//! (version, `wake_at`), its job, and its customer.

use crate::domain::Caller;
use crate::domain::cycles::midnight;
use crate::error::{Error, Result};
use crate::states::invoices::InvoiceStatus;
use crate::store::{CustomerRow, IdOrRef, InvoiceRow, JobKind, Store, Tx};
use chrono::{DateTime, Duration, NaiveDate, Utc};

/// The last instant of billing day `day`: when its DRAFT is finalised.
pub fn end_of(day: NaiveDate) -> DateTime<Utc> {
    midnight(day) + Duration::days(1) - Duration::seconds(1)
}

/// What falls due of an invoice by the clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// its billing day ends
    Finalize,
    /// autopay tries again
    Retry,
    /// dunning suspends
    Suspend,
    /// dunning gives it up
    GiveUp,
}

/// What falls due next of `row`, and when. At the same time autopay's
/// try comes first (it may pay it), then dunning's steps.
pub fn next_due(row: &InvoiceRow) -> Option<(DateTime<Utc>, Step)> {
    match row.status {
        InvoiceStatus::Draft => Some((end_of(row.billing_date), Step::Finalize)),
        InvoiceStatus::Open => {
            let retry = row.next_attempt_at.map(|at| (at, Step::Retry));
            let suspend = row.suspend_at.filter(|_| row.suspended_at.is_none()).map(|at| (at, Step::Suspend));
            let give_up = row.give_up_at.map(|at| (at, Step::GiveUp));
            // min_by_key keeps the first of equals
            [retry, suspend, give_up].into_iter().flatten().min_by_key(|(at, _)| *at)
        }
        _ => None,
    }
}

/// `row` as written next: its version one up, `wake_at` what falls due
/// next, changed at `at`.
pub fn written(mut row: InvoiceRow, at: DateTime<Utc>) -> InvoiceRow {
    row.version += 1;
    row.updated_at = at.max(row.updated_at);
    row.wake_at = next_due(&row).map(|(at, _)| at);
    row
}

/// In `tx`, which writes `row`: its job at what falls due of it next.
pub async fn schedule_next(tx: &mut Tx, caller: &Caller, row: &InvoiceRow) -> Result<()> {
    if let Some(at) = row.wake_at {
        Store::schedule_job(tx, JobKind::InvoiceDue, &row.id.to_string(), Some(caller.org), at, caller.now).await?;
    }
    Ok(())
}

/// The customer an invoice bills, as stored.
pub async fn customer_of(caller: &Caller, row: &InvoiceRow) -> Result<CustomerRow> {
    let customer = caller.store.customer(caller.org, &IdOrRef::Id(row.customer_id)).await?;
    customer.ok_or_else(|| Error::Internal(format!("invoice {}: customer vanished", row.id)))
}

/// `row` as another writer left it (after a write of it missed).
pub async fn reread(caller: &Caller, row: &InvoiceRow) -> Result<InvoiceRow> {
    caller.store.invoice(caller.org, row.id).await?.ok_or_else(|| Error::Internal(format!("invoice {} vanished", row.id)))
}
