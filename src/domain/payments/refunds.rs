//! Refunds: recorded PENDING (by the API, or by a payment that succeeded
//! on a link whose order no longer submits), then sent to the provider by
//! the payment.refund job with the refund's id as its idempotency key, and
//! their outcome committed (`payment_intent.refunded` when given back).

use crate::domain::Caller;
use crate::error::{Error, InternalCode, Result};
use crate::events::{self, Event};
use crate::payment_providers::{ProviderError, RefundOutcome};
use crate::states::payments::{ChargeStatus, INTENT, IntentOp, REFUND, RefundOp, RefundStatus};
use crate::store::{ChargeRow, JobKind, RefundRow, Store, Tx};
use crate::wire::latest as wire;
use chrono::{DateTime, Utc};
use uuid::Uuid;

/// A PENDING refund of `amount` of `charge`, not written yet.
pub fn pending(charge: &ChargeRow, amount: i64, reason: String, now: DateTime<Utc>) -> RefundRow {
    RefundRow {
        id: crate::domain::new_id(),
        org: charge.org,
        intent_id: charge.intent_id,
        charge_id: charge.id,
        status: RefundStatus::Pending,
        amount_minor: amount,
        reason: Some(reason),
        failure_code: None,
        created_at: now,
        updated_at: now,
    }
}

/// Writes `refund` in `tx`, and the job that sends it, due at once.
pub async fn write(tx: &mut Tx, refund: RefundRow) -> Result<RefundRow> {
    Store::insert_refund(tx, &refund).await?;
    Store::schedule_job(tx, JobKind::PaymentRefund, &refund.id.to_string(), Some(refund.org), refund.created_at, refund.created_at).await?;
    Ok(refund)
}

fn exceeds(left: i64) -> Error {
    Error::Conflict {
        code: InternalCode::RefundExceedsPayment,
        message: format!("Only {left} (minor units) of the payment is left to refund."),
        property: "amountMinor",
    }
}

/// POST /payment-intents/{id}/refunds.
pub async fn create(caller: &Caller, key: &str, req: wire::CreatePaymentRefundRequest) -> Result<wire::PaymentIntent> {
    let intent = super::find_intent(caller, key).await?;
    // giving money back is the operator's back office, never the payer's
    caller.require_organisation("refund a payment")?;
    INTENT.next(IntentOp::Refund, intent.status)?;
    let charges = caller.store.charges_of(caller.org, intent.id).await?;
    let Some(paid) = charges.iter().rev().find(|c| c.status == ChargeStatus::Succeeded) else {
        return Err(Error::Internal(format!("intent {} SUCCEEDED without a charge that did", intent.id)));
    };
    let mut tx = caller.store.begin().await?;
    // refunds of one intent take turns: each sees what those before it took
    if !Store::claim_intent(&mut tx, caller.org, intent.id).await? {
        return Err(Error::Internal(format!("intent {} vanished", intent.id)));
    }
    let left = paid.amount_minor - Store::refunded_in(&mut tx, intent.id).await?;
    let amount = req.amount_minor.unwrap_or(left);
    if amount > left || amount <= 0 {
        return Err(exceeds(left));
    }
    let refund = write(&mut tx, pending(paid, amount, req.reason.unwrap_or_else(|| "requested".into()), caller.now)).await?;
    tx.commit().await?;
    // (within an idempotent request that commit is not yet the real one:
    // the answer shows the refund from here)
    super::intent_as_written(&caller.store, &intent, None, &[refund]).await
}

/// The payment.refund job: sends PENDING refund `id` to its provider (at
/// most once there, by its id) and commits the outcome. Not answered: due
/// again later.
pub async fn send(store: &Store, providers: &crate::payment_providers::Providers, org: Uuid, id: Uuid, now: DateTime<Utc>) -> Result<bool> {
    let Some(refund) = store.refund(org, id).await? else { return Ok(true) };
    if refund.status != RefundStatus::Pending {
        return Ok(true);
    }
    let Some(charge) = store.charge(org, refund.charge_id).await? else { return Err(Error::Internal(format!("refund {id} has no charge"))) };
    let answered = providers.get(charge.provider).refund(refund.id, charge.id, refund.amount_minor, now).await;
    let (op, code) = match answered {
        Ok(RefundOutcome::Succeeded) => (RefundOp::Refunded, None),
        Ok(RefundOutcome::Failed(code)) => (RefundOp::Refused, Some(code)),
        Err(ProviderError::Refused(m)) => (RefundOp::Refused, Some(format!("refused: {m}"))),
        Err(ProviderError::Unavailable(_)) => return Ok(false),
    };
    let mut after = refund.clone();
    after.status = REFUND.next(op, refund.status)?;
    after.failure_code = code;
    after.updated_at = now;
    let mut tx = store.begin().await?;
    if !Store::move_refund(&mut tx, &after, RefundStatus::Pending).await? {
        return Ok(true);
    }
    if op == RefundOp::Refunded {
        let intent = store.intent(org, refund.intent_id).await?.ok_or_else(|| Error::Internal(format!("refund {id} has no intent")))?;
        let shown = super::intent_as_written(store, &intent, None, std::slice::from_ref(&after)).await?;
        events::record(&mut tx, org, now, &Event::PaymentIntentRefunded(shown)).await?;
    }
    tx.commit().await?;
    Ok(true)
}
