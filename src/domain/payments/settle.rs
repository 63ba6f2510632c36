//! A charge's outcome, committed: the charge and its intent moved, their
//! events, and for a payment that succeeded the link's completion with the
//! order's submission, in the same transaction (rule 1). Should the order
//! no longer submit, or the link no longer be ACTIVE, the payment is
//! refunded in full instead (a `payment.refund` job sends it).

use super::collection::Collection;
use super::render;
use crate::domain::change::Change;
use crate::domain::{Caller, orders};
use crate::error::{Error, Result};
use crate::events::{self, Event};
use crate::payment_providers::{Invalid, Outcome, ProviderError};
use crate::states::payments::{CHARGE, ChargeOp, ChargeStatus, INTENT, IntentOp, PaymentIntentStatus};
use crate::store::{ChargeRow, IntentRow, LinkRow, OrderRow, RefundRow, Store, Tx};
use uuid::Uuid;

/// What an attempt came to, for the page to show.
#[derive(Debug)]
pub enum Attempt {
    /// paid; the link as it is after (COMPLETED, or FAILED and refunded)
    Paid(Option<LinkRow>),
    /// taken, settling (a SEPA debit)
    Processing,
    /// the person must authenticate first
    NeedsAction,
    /// declined, with the provider's code
    Declined(String),
    /// what was typed is refused
    Invalid(Invalid),
    /// the intent takes no attempt now (the page says why)
    NotNow(String),
    /// the page took `ATTEMPTS_AT_MOST` attempts: no new one
    TooManyAttempts,
    /// the provider did not answer: the attempt is resolved later
    Unavailable,
}

/// The moves an outcome makes of a PROCESSING charge and its intent.
fn moves(outcome: &Outcome) -> Option<(ChargeOp, IntentOp)> {
    match outcome {
        Outcome::Succeeded => Some((ChargeOp::Succeeded, IntentOp::Succeeded)),
        Outcome::RequiresAction => Some((ChargeOp::NeedsAction, IntentOp::NeedsAction)),
        Outcome::Failed(_) => Some((ChargeOp::Declined, IntentOp::Declined)),
        Outcome::Processing => None,
    }
}

/// What a charge already recorded came to.
fn recorded(charge: &ChargeRow) -> Attempt {
    match charge.status {
        ChargeStatus::Processing => Attempt::Processing,
        ChargeStatus::RequiresAction => Attempt::NeedsAction,
        ChargeStatus::Succeeded => Attempt::Paid(None),
        ChargeStatus::Failed => Attempt::Declined(charge.failure_code.clone().unwrap_or_default()),
    }
}

/// The failure code of an attempt the provider never received (given up
/// by the job that resolves attempts), or refused.
pub const NOT_RECEIVED: &str = "processing_error";

/// Commits what the provider answered of charge `id`.
pub async fn record(caller: &Caller, id: Uuid, outcome: Result<Outcome, ProviderError>) -> Result<Attempt> {
    let outcome = match outcome {
        Ok(o) => o,
        Err(ProviderError::Unavailable(_)) => return Ok(Attempt::Unavailable),
        // the provider refused the call itself: no money moved
        Err(ProviderError::Refused(_)) => Outcome::Failed(NOT_RECEIVED.into()),
    };
    let store = &caller.store;
    let charge = store.charge(caller.org, id).await?.ok_or_else(|| Error::Internal(format!("charge {id} vanished")))?;
    if charge.status != ChargeStatus::Processing {
        if charge.status == ChargeStatus::Failed && outcome == Outcome::Succeeded {
            return late_success(caller, &charge).await;
        }
        return Ok(recorded(&charge));
    }
    let intent = store.intent(caller.org, charge.intent_id).await?.ok_or_else(|| Error::Internal(format!("charge {id} has no intent")))?;
    let collection = Collection::of(store, &intent).await?;
    // autopay has no payer to authenticate: a charge that asks is declined
    // (its intent may take the next try)
    let outcome = match (&collection, outcome) {
        (Some(Collection::Invoice(_)), Outcome::RequiresAction) => Outcome::Failed("authentication_required".into()),
        (_, o) => o,
    };
    let Some((charge_op, intent_op)) = moves(&outcome) else { return Ok(Attempt::Processing) };
    let open = collection.as_ref().is_some_and(Collection::is_open);
    // what submitting the order needs read, before the transaction
    let submission = match (&outcome, collection.as_ref().and_then(Collection::order_id)) {
        (Outcome::Succeeded, Some(order)) if open => Some(prepare(caller, order).await?),
        _ => None,
    };
    let mut charged = charge.clone();
    charged.status = CHARGE.next(charge_op, charge.status)?;
    charged.failure_code = match &outcome {
        Outcome::Failed(code) => Some(code.clone()),
        _ => None,
    };
    charged.updated_at = caller.now;
    let mut after = intent.clone();
    after.status = INTENT.next(intent_op, PaymentIntentStatus::Processing)?;
    after.updated_at = caller.now;
    // the link closed while the provider decided, or the session ends
    // with this decline: nothing more is paid through it (a success on a
    // closed one is refunded in `complete`)
    let closing = collection.as_ref().is_some_and(|c| !c.is_open() || (outcome != Outcome::Succeeded && c.ends_with_its_charge()));
    if closing {
        if let Some(closed) = INTENT.target(IntentOp::LinkClosed, after.status) {
            after.status = closed;
        }
        if let Some(failed) = CHARGE.target(ChargeOp::LinkClosed, charged.status) {
            charged.status = failed;
            charged.failure_code = Some(super::closing::LINK_CLOSED.into());
        }
    }
    let mut tx = store.begin().await?;
    if !Store::move_charge(&mut tx, &charged, ChargeStatus::Processing).await? {
        drop(tx);
        let now = store.charge(caller.org, id).await?.ok_or_else(|| Error::Internal(format!("charge {id} vanished")))?;
        return Ok(recorded(&now));
    }
    let mut refunds = vec![];
    let attempt = match (outcome, collection) {
        (Outcome::Succeeded, Some(c)) => Attempt::Paid(complete(&mut tx, caller, c, &mut after, &charged, submission, &mut refunds).await?),
        (Outcome::Succeeded, None) => Attempt::Paid(None),
        (other, c) => {
            if let Some(c) = c.filter(Collection::is_open) {
                let code = match &other {
                    Outcome::Failed(code) => code.as_str(),
                    // no payer to authenticate an off-session charge
                    _ => "authentication_required",
                };
                c.decline(&mut tx, caller, code).await?;
            }
            recorded(&charged)
        }
    };
    if !Store::move_intent(&mut tx, &after, PaymentIntentStatus::Processing).await? {
        return Err(Error::Internal(format!("intent {} left PROCESSING while its charge was", intent.id)));
    }
    let event = match charged.status {
        ChargeStatus::Succeeded => Some(Event::PaymentIntentSucceeded as fn(_) -> _),
        ChargeStatus::Failed => Some(Event::PaymentIntentPaymentFailed as fn(_) -> _),
        _ => None,
    };
    if let Some(event) = event {
        let shown = super::intent_as_written(store, &after, Some(&charged), &refunds).await?;
        events::record(&mut tx, caller.org, caller.now, &event(shown)).await?;
    }
    tx.commit().await?;
    Ok(attempt)
}

/// A charge given up as never received succeeded after all (the provider
/// answered late): the money is given back in full; the charge stays as
/// recorded.
async fn late_success(caller: &Caller, charge: &ChargeRow) -> Result<Attempt> {
    let mut tx = caller.store.begin().await?;
    let why = "The payment succeeded after its attempt had been given up.".to_string();
    super::refunds::write(&mut tx, super::refunds::pending(charge, charge.amount_minor, why, caller.now)).await?;
    tx.commit().await?;
    Ok(recorded(charge))
}

/// The order's submission checked now, for `complete`: the order as read
/// and what writing its submission needs, or why it would be refused.
type Submission = Result<(OrderRow, orders::submission::Checked), Error>;

async fn prepare(caller: &Caller, order_id: Uuid) -> Result<Submission> {
    let order = caller.store.order(caller.org, order_id).await?.ok_or_else(|| Error::Internal(format!("order {order_id} being paid vanished")))?;
    let checked = match orders::submission::ready(&order) {
        Ok(()) => orders::submission::check(caller, &order).await,
        Err(e) => Err(e),
    };
    match checked {
        Ok(c) => Ok(Ok((order, c))),
        // what submission answers a request: the order refuses
        Err(e @ (Error::Conflict { .. } | Error::Refused { .. } | Error::Invalid(_) | Error::NotFound { .. } | Error::Missing { .. })) => Ok(Err(e)),
        // anything else (the database) is no answer: tried again
        Err(e) => Err(e),
    }
}

/// In the transaction of a successful charge: its link COMPLETED (or its
/// session SUCCEEDED) and its order submitted (rule 1); or, when the order
/// no longer submits, the link or session FAILED; or, when it is no longer
/// open, left as it is. In the last two the payment is refunded in full
/// (`refunds`: the refund recorded). The link as it now is.
async fn complete(
    tx: &mut Tx,
    caller: &Caller,
    collection: Collection,
    intent: &mut IntentRow,
    charge: &ChargeRow,
    submission: Option<Submission>,
    refunds: &mut Vec<RefundRow>,
) -> Result<Option<LinkRow>> {
    let refund = |why: String| super::refunds::pending(charge, charge.amount_minor, why, caller.now);
    // claimed first: a cancel or an expiry that beat this transaction to
    // it wins, and the payment is given back
    // an invoice (autopay's, or a link's) is paid by its guarded write; one
    // no longer OPEN gives the payment back (a link FAILED)
    let invoice = match &collection {
        Collection::Invoice(i) => Some((i.id, None)),
        Collection::Link(l) => l.invoice_id.map(|i| (i, Some(l.id))),
        Collection::Session(_) => None,
    };
    if let Some((invoice, link)) = invoice {
        let open = collection.is_open() && collection.claim(tx, caller.now).await?;
        let mut paid = false;
        if open {
            caller.follow(tx, Change::InvoiceChargeSucceeded { invoice, intent: intent.id, link, paid: &mut paid }).await?;
        }
        if paid {
            return collection.complete(tx, caller, charge).await;
        }
        let reason = "The invoice was no longer open when the payment succeeded.".to_string();
        refunds.push(super::refunds::write(tx, refund(reason.clone())).await?);
        return if open { collection.refuse(tx, caller.now, &reason).await } else { Ok(None) };
    }
    let claimed = match submission {
        Some(s) if collection.is_open() && collection.claim(tx, caller.now).await? => s,
        _ => {
            refunds.push(super::refunds::write(tx, refund(format!("The {} when the payment succeeded.", collection.described()))).await?);
            return Ok(None);
        }
    };
    let written = match claimed {
        Ok((order, checked)) => {
            orders::submission::write(tx, caller, &order, checked).await?.ok_or_else(|| "The order was changed while it was being paid.".to_string())
        }
        Err(refusal) => Err(format!("The order could no longer be submitted: {refusal}")),
    };
    match written {
        Ok((order, _)) => {
            render::with_created(intent, &order)?;
            collection.complete(tx, caller, charge).await
        }
        Err(reason) => {
            let after = collection.refuse(tx, caller.now, &reason).await?;
            refunds.push(super::refunds::write(tx, refund(reason)).await?);
            Ok(after)
        }
    }
}
