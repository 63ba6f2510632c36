//! Closing an invoice's ways of being paid other than the one that closed
//! it (paid otherwise, voided, given up): autopay's intent and its ACTIVE
//! payment links.

use crate::domain::Caller;
use crate::domain::change::Change;
use crate::error::{Error, Result};
use crate::states::payments::{INTENT, IntentOp};
use crate::store::{InvoiceRow, Store, Tx};
use chrono::{DateTime, Utc};
use uuid::Uuid;

/// In `tx`, which closes `row` without its intent's payment (marked paid,
/// voided, given up): the intent CANCELED if it still waits for a payment
/// method. A charge with the provider is left to settle: should it
/// succeed, it is refunded (the invoice is no longer OPEN).
pub async fn close_intent(tx: &mut Tx, caller: &Caller, row: &InvoiceRow, at: DateTime<Utc>) -> Result<()> {
    let Some(id) = row.intent_id else { return Ok(()) };
    let Some(mut intent) = Store::intent_in(tx, caller.org, id).await? else { return Ok(()) };
    if let Some(closed) = INTENT.target(IntentOp::LinkClosed, intent.status) {
        let from = intent.status;
        (intent.status, intent.updated_at) = (closed, at.max(intent.updated_at));
        if !Store::move_intent(tx, &intent, from).await? {
            return Err(Error::changed_meanwhile("invoice"));
        }
    }
    Ok(())
}

/// In `tx`: `row`'s intent closed (`close_intent`), and its other ways
/// of being paid but link `except` (the one paying it) told it closed.
pub async fn close_others(tx: &mut Tx, caller: &Caller, row: &InvoiceRow, except: Option<Uuid>, at: DateTime<Utc>) -> Result<()> {
    close_intent(tx, caller, row, at).await?;
    caller.follow(tx, Change::InvoiceClosed { invoice: row.id, except, at }).await
}
