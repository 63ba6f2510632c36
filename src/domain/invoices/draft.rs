//! Billing: lines written to the customer's DRAFT invoice of their billing
//! day, in the transaction of what they bill (a renewal, an order's
//! submission, priced usage), so a line exists exactly when what it bills
//! does. One DRAFT per customer, day and currency; it is finalised at the
//! end of its day (`due`).

use super::lines::Line;
use super::row::end_of;
use crate::error::{Error, Result};
use crate::states::invoices::{INVOICE, InvoiceOp, InvoiceStatus};
use crate::store::{InvoiceRow, JobKind, Store, Tx};
use chrono::{DateTime, Days, NaiveDate, Utc};
use uuid::Uuid;

/// How often a line is tried on a DRAFT that another writer creates at
/// the same moment (each try reads again in the transaction: on
/// PostgreSQL a statement sees what committed before it began).
const TRIES: usize = 5;

/// Adds `new` to the customer's DRAFT of the billing day of `at` (by the
/// organisation's clock) in `currency`, creating it (with the job that
/// finalises it) when there is none. A day whose invoice is already
/// finalised (a line written in its last second) bills on the next day's.
/// A line is a row of its own, appended: a busy customer's DRAFT is never
/// rewritten, and lines written at once do not wait for each other.
pub async fn bill(tx: &mut Tx, org: Uuid, customer: Uuid, currency: &str, new: Vec<Line>, at: DateTime<Utc>, now: DateTime<Utc>) -> Result<()> {
    if new.is_empty() {
        return Ok(());
    }
    let docs: Vec<serde_json::Value> = new.iter().map(|l| serde_json::to_value(l).expect("invoice lines are JSON")).collect();
    let mut day = at.date_naive();
    let mut tries = 0;
    while tries < TRIES {
        let of_day = Store::invoices_of_day_in(tx, org, customer, day, currency).await?;
        if let Some(draft) = of_day.iter().find(|i| i.status == InvoiceStatus::Draft) {
            INVOICE.next(InvoiceOp::AddLines, draft.status)?;
            // held a DRAFT until this commits: its finalisation waits
            if Store::draft_held_in(tx, org, draft.id).await? {
                return Store::add_invoice_lines(tx, org, draft.id, &docs, at).await;
            }
            tries += 1;
        } else if of_day.is_empty() {
            let draft = empty(org, customer, day, currency, at);
            // another writer's DRAFT of the day may get there first: then
            // the line goes on that one
            if Store::insert_invoice(tx, &draft).await? {
                Store::add_invoice_lines(tx, org, draft.id, &docs, at).await?;
                Store::schedule_job(tx, JobKind::InvoiceDue, &draft.id.to_string(), Some(org), end_of(day), now).await?;
                return Ok(());
            }
            tries += 1;
        } else {
            // the day's invoice is finalised
            day = day.checked_add_days(Days::new(1)).ok_or_else(|| Error::Internal("billing day out of range".into()))?;
        }
    }
    Err(Error::changed_meanwhile("invoice"))
}

fn empty(org: Uuid, customer: Uuid, day: NaiveDate, currency: &str, at: DateTime<Utc>) -> InvoiceRow {
    InvoiceRow {
        id: crate::domain::new_id(),
        org,
        customer_id: customer,
        billing_date: day,
        currency: currency.to_string(),
        status: InvoiceStatus::Draft,
        version: 1,
        number: None,
        lines: serde_json::Value::Null,
        subtotal_minor: 0,
        discount_minor: 0,
        tax_minor: 0,
        total_minor: 0,
        billing_method: None,
        auto_pay: None,
        finalized_at: None,
        due_at: None,
        paid_at: None,
        paid_method: None,
        paid_reference: None,
        intent_id: None,
        attempts: 0,
        next_attempt_at: None,
        suspend_at: None,
        give_up_at: None,
        suspended_at: None,
        closed_at: None,
        delivered_at: None,
        mailed_attempts: 0,
        document_token: None,
        document_url: None,
        wake_at: Some(end_of(day)),
        created_at: at,
        updated_at: at,
    }
}
