//! Autopay: an invoice of a customer who pays by autopay is charged
//! off-session to their default payment profile when it is finalised. The
//! intent and its charge (PROCESSING) are committed with the finalisation
//! and sent by the payment.charge job with the charge's id as the
//! provider's idempotency key (`payments::charge::resolve`), so a crash
//! never charges twice. A failed charge leaves the intent
//! REQUIRES_PAYMENT_METHOD and is tried again 1, 3 and 7 days later by the
//! organisation's clock (`RETRY_DAYS`), each on a new charge of the same
//! intent; the outcome is settled by `payments::settle` through the
//! invoice's `Collection`.

use super::lines;
use crate::domain::Caller;
use crate::domain::access::Role;
use crate::domain::payments::collectable::Collecting;
use crate::domain::payments::profiles::off_session_charge;
use crate::domain::payments::render::IntentLine;
use crate::error::{Error, Result};
use crate::events::{self, Event};
use crate::states::invoices::{INVOICE, InvoiceOp, InvoiceStatus};
use crate::states::payments::{INTENT, IntentOp, PaymentIntentStatus, PaymentProfileStatus};
use crate::store::{ChargeRow, CustomerRow, IntentRow, InvoiceRow, JobKind, ProfileRow, Store, Tx};
use chrono::{DateTime, Duration, Utc};
use futures::future::BoxFuture;
use uuid::Uuid;

/// Days after each failed charge before the next (then no more: dunning
/// follows the invoice up).
pub const RETRY_DAYS: [i64; 3] = [1, 3, 7];

/// The customer's default profile, if autopay may charge it now: ACTIVE,
/// at a provider the organisation has enabled.
pub async fn usable_default(caller: &Caller, customer: &CustomerRow) -> Result<Option<ProfileRow>> {
    let Some(id) = customer.billing.as_ref().and_then(|b| b.default_payment_profile_id.as_deref()).and_then(|d| Uuid::parse_str(d).ok()) else {
        return Ok(None);
    };
    let Some(profile) = caller.store.profile(caller.org, id).await?.filter(|p| p.status == PaymentProfileStatus::Active) else { return Ok(None) };
    if !crate::domain::payments::enabled::provider_enabled(caller, profile.provider).await? {
        return Ok(None);
    }
    Ok(Some(profile))
}

/// Autopay's first charge of an invoice being finalised, to be started in
/// the finalising transaction.
pub struct Autopay {
    pub intent: IntentRow,
    charge: ChargeRow,
}

impl Autopay {
    /// Writes the intent and its charge, and the job that sends it (due at
    /// once).
    pub async fn start(&self, tx: &mut Tx, caller: &Caller, invoice: &InvoiceRow) -> Result<()> {
        let mut intent = self.intent.clone();
        intent.description = invoice.number.as_ref().map(|n| format!("Invoice {n}"));
        Store::insert_intent(tx, &intent).await?;
        Store::insert_charge(tx, &self.charge).await?;
        Store::schedule_job(tx, JobKind::PaymentCharge, &self.charge.id.to_string(), Some(caller.org), caller.now, caller.now).await
    }
}

/// Autopay's collection of `invoice` from `profile`, started at `at`: its
/// intent (PROCESSING) and first charge.
pub fn started(caller: &Caller, invoice: &InvoiceRow, profile: &ProfileRow, at: DateTime<Utc>) -> Result<Autopay> {
    let intent = IntentRow {
        id: crate::domain::new_id(),
        org: caller.org,
        customer_id: invoice.customer_id,
        order_id: None,
        link_id: None,
        session_id: None,
        invoice_id: Some(invoice.id),
        status: INTENT.next(IntentOp::Charge, PaymentIntentStatus::Pending)?,
        amount_minor: invoice.total_minor,
        currency: invoice.currency.clone(),
        description: None,
        due_at: invoice.due_at,
        lines: intent_lines(invoice)?,
        created_at: at,
        updated_at: at,
    };
    let charge = off_session_charge(&intent, profile, at);
    Ok(Autopay { intent, charge })
}

/// `after` with a try that failed at `at` counted and the next scheduled.
pub fn failed_now(after: &mut InvoiceRow, at: DateTime<Utc>) {
    after.attempts += 1;
    after.next_attempt_at = next_attempt(after.attempts, at);
}

/// The invoice a payment link's `invoiceId` names, as the link collects
/// it (`payments::links::InvoiceCollecting`): one the caller sees (404
/// naming the field), as a MANAGER of its customer, OPEN (409 naming its
/// state).
pub fn link_collecting<'a>(caller: &'a Caller, key: &'a str) -> BoxFuture<'a, Result<Collecting>> {
    Box::pin(async move {
        let invoice = super::find(caller, key).await.map_err(|e| match e {
            Error::NotFound { code, .. } => Error::missing_reference(code, "invoiceId", "invoiceId names no invoice of this organisation"),
            e => e,
        })?;
        caller.require_role(invoice.customer_id, Role::Manager)?;
        let lines = intent_lines(&invoice)?;
        Collecting::open_invoice(invoice, lines)
    })
}

/// The invoice's lines as an intent keeps them.
pub fn intent_lines(invoice: &InvoiceRow) -> Result<serde_json::Value> {
    let kept: Vec<IntentLine> = lines::parse(&invoice.lines)?
        .into_iter()
        .map(|l| IntentLine {
            line_item_id: None,
            description: l.description.clone(),
            amount_minor: l.amount_minor,
            discounts: l.discounts.iter().map(|d| (d.description.clone(), d.amount_minor)).collect(),
            taxes: l.taxes.iter().map(|t| (t.description.clone(), t.amount_minor)).collect(),
            subscription_id: l.subscription_id,
            license_id: l.license_id,
        })
        .collect();
    Ok(serde_json::to_value(kept).expect("JSON"))
}

/// When autopay tries again after its `failed`th failed charge, if it does.
pub fn next_attempt(failed: i64, at: DateTime<Utc>) -> Option<DateTime<Utc>> {
    let days = RETRY_DAYS.get(usize::try_from(failed).ok()?.checked_sub(1)?)?;
    Some(at + Duration::days(*days))
}

/// Follows `Change::InvoiceChargeDeclined` (a failed charge of `invoice`'s
/// autopay, settled): one more failure counted, the next try scheduled,
/// and `invoice.payment_failed`.
pub(in crate::domain) async fn declined(tx: &mut Tx, caller: &Caller, invoice: &InvoiceRow) -> Result<()> {
    let Some(now) = Store::invoice_in(tx, invoice.org, invoice.id).await? else { return Ok(()) };
    if now.status != InvoiceStatus::Open {
        return Ok(());
    }
    INVOICE.next(InvoiceOp::PaymentFailed, now.status)?;
    let mut after = now.clone();
    failed_now(&mut after, caller.now);
    let after = super::row::written(after, caller.now);
    if !Store::update_invoice(tx, &after).await? {
        return Err(Error::changed_meanwhile("invoice"));
    }
    events::record(tx, caller.org, caller.now, &Event::InvoicePaymentFailed(super::render::invoice(&after)?)).await?;
    // its job at once: it mails the failure, then waits for the next try
    Store::schedule_job(tx, JobKind::InvoiceDue, &after.id.to_string(), Some(caller.org), caller.now, caller.now).await
}

/// Autopay's try of `row` due at `at`: a new charge of its intent to the
/// default profile as it is now; when there is no usable one, the try
/// fails at once (counted, the next scheduled); when the customer has
/// turned autopay off since, no more tries. The invoice is written first
/// (as everything that pays or closes it does, so no two writers take the
/// invoice and its intent in opposite orders). The invoice as it is after.
pub async fn retry(caller: &Caller, row: &InvoiceRow, at: DateTime<Utc>) -> Result<InvoiceRow> {
    let customer = super::row::customer_of(caller, row).await?;
    let autopay = customer.billing.as_ref().is_some_and(|b| b.auto_pay);
    let profile = if autopay { usable_default(caller, &customer).await? } else { None };
    let intent = match row.intent_id {
        Some(id) => caller.store.intent(caller.org, id).await?,
        None => None,
    };
    let chargeable = |i: &IntentRow| INTENT.target(IntentOp::Charge, i.status).is_some();
    let mut after = row.clone();
    after.next_attempt_at = None;
    let failed = autopay && profile.is_none();
    if failed {
        failed_now(&mut after, at);
    }
    let after = super::row::written(after, at);
    let mut tx = caller.store.begin().await?;
    if !Store::update_invoice(&mut tx, &after).await? {
        drop(tx);
        return super::row::reread(caller, row).await;
    }
    let mut after = after;
    match (profile, intent) {
        (Some(profile), Some(intent)) if chargeable(&intent) => {
            let mut charging = intent.clone();
            charging.status = INTENT.next(IntentOp::Charge, intent.status)?;
            charging.updated_at = at;
            if !Store::move_intent(&mut tx, &charging, intent.status).await? {
                return Err(Error::changed_meanwhile("invoice"));
            }
            let charge = off_session_charge(&charging, &profile, at);
            Store::insert_charge(&mut tx, &charge).await?;
            Store::schedule_job(&mut tx, JobKind::PaymentCharge, &charge.id.to_string(), Some(caller.org), at, caller.now).await?;
        }
        // no intent yet (no usable profile when it was finalised), or one
        // that can take no more charges (it asked for authentication): a
        // new one, the old closed
        (Some(profile), _) => {
            super::closing::close_intent(&mut tx, caller, &after, at).await?;
            let autopay = started(caller, row, &profile, at)?;
            after.intent_id = Some(autopay.intent.id);
            after.version += 1;
            autopay.start(&mut tx, caller, &after).await?;
            if !Store::update_invoice(&mut tx, &after).await? {
                return Err(Error::Internal(format!("invoice {} moved in its own transaction", row.id)));
            }
        }
        _ if failed => {
            events::record(&mut tx, caller.org, at, &Event::InvoicePaymentFailed(super::render::invoice(&after)?)).await?;
            // its job at once: it mails the failure
            Store::schedule_job(&mut tx, JobKind::InvoiceDue, &after.id.to_string(), Some(caller.org), caller.now, caller.now).await?;
        }
        // autopay turned off: no more tries
        _ => {}
    }
    if !failed {
        super::row::schedule_next(&mut tx, caller, &after).await?;
    }
    tx.commit().await?;
    Ok(after)
}
