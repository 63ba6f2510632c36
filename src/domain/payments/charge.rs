//! An attempt to charge, from a hosted page: the attempt is committed
//! (PROCESSING, the intent with it, and the job that resolves it should
//! this process die) before the provider is asked, with the attempt's id
//! as the provider's idempotency key; then its outcome is settled
//! (`settle`). Two attempts at once on one intent: the intent's guarded
//! move lets one through, and the other is told a payment is in progress.

use super::settle::{self, Attempt};
use crate::domain::Caller;
use crate::error::{Error, Result};
use crate::payment_providers::{ChargeRequest, Entered, Invalid, MethodKind, Providers};
use crate::states::payments::{CHARGE, ChargeOp, ChargeStatus, INTENT, IntentOp, PaymentIntentStatus};
use crate::store::{ChargeRow, ChargedMethod, HostedPage, IntentRow, JobKind, LinkRow, Store};
use chrono::Duration;

/// When the job that resolves an attempt looks at it, should the request
/// that made it not record its outcome: long after a provider answers.
pub const RESOLVE_AFTER: Duration = Duration::seconds(60);

/// The intent's status as another request left it.
async fn status_now(caller: &Caller, intent: &IntentRow) -> Result<PaymentIntentStatus> {
    Ok(caller.store.intent(caller.org, intent.id).await?.map_or(intent.status, |i| i.status))
}

/// What the page says when the intent's state takes no attempt now.
fn not_now(status: PaymentIntentStatus) -> Attempt {
    Attempt::NotNow(match status {
        PaymentIntentStatus::Processing => "A payment is being processed; refresh this page in a moment.".into(),
        PaymentIntentStatus::Succeeded => "This payment has been made.".into(),
        PaymentIntentStatus::RequiresAction => "This payment is waiting for authentication.".into(),
        _ => "This payment can no longer be made.".into(),
    })
}

/// What pays on the page: what the person typed, or the saved profile the
/// link offers (`paymentProfileId`).
pub enum Paying<'a> {
    Entered(&'a Entered),
    Profile,
}

/// The method of the link's own profile, if it can still be charged.
async fn offered(caller: &Caller, link: &LinkRow) -> Result<Option<(ChargedMethod, uuid::Uuid)>> {
    let Some(id) = link.profile_id else { return Ok(None) };
    let usable = caller
        .store
        .profile(caller.org, id)
        .await?
        .filter(|p| p.status == crate::states::payments::PaymentProfileStatus::Active && p.provider == link.provider);
    Ok(usable.map(|p| (ChargedMethod { token: p.token, kind: p.method_type, display_name: p.display_name, expires_on: p.expires_on }, p.id)))
}

/// Pays `link`'s intent with what the person typed on its page, or with
/// the saved profile it offers.
pub async fn pay(caller: &Caller, providers: &Providers, link: &LinkRow, paying: Paying<'_>) -> Result<Attempt> {
    let intent = caller.store.intent(caller.org, link.intent_id).await?.ok_or_else(|| Error::Internal(format!("link {} has no intent", link.id)))?;
    if INTENT.target(IntentOp::Charge, intent.status).is_none() {
        return Ok(not_now(intent.status));
    }
    if !super::enabled::provider_enabled(caller, link.provider).await? {
        return Ok(Attempt::NotNow(format!("Payments through {} are not available at the moment.", link.provider.as_str())));
    }
    // (the page's attempts so far: a page that took them all asks the
    // provider nothing more)
    if super::attempts_spent(caller, HostedPage::Link, link.id).await? {
        return Ok(Attempt::TooManyAttempts);
    }
    let provider = providers.get(link.provider);
    let (method, profile_id) = match paying {
        Paying::Profile => match offered(caller, link).await? {
            Some((method, id)) => (method, Some(id)),
            None => return Ok(Attempt::NotNow("The saved payment method can no longer be used; enter another.".into())),
        },
        Paying::Entered(entered) => {
            if matches!(entered, Entered::Sepa { .. }) && !link.provider.takes(MethodKind::SepaDebit) {
                return Ok(Attempt::Invalid(Invalid { field: "iban", message: format!("{} takes cards only.", link.provider.as_str()) }));
            }
            match provider.save_method(entered, caller.now).await {
                Ok(Ok(m)) => (ChargedMethod { token: m.token, kind: m.kind.as_str().into(), display_name: m.display_name, expires_on: m.expires_on }, None),
                Ok(Err(invalid)) => return Ok(Attempt::Invalid(invalid)),
                Err(_) => return Ok(Attempt::Unavailable),
            }
        }
    };
    let charge = ChargeRow {
        id: crate::domain::new_id(),
        org: caller.org,
        intent_id: intent.id,
        status: ChargeStatus::Processing,
        amount_minor: intent.amount_minor,
        currency: intent.currency.clone(),
        provider: link.provider,
        method,
        profile_id,
        off_session: false,
        failure_code: None,
        created_at: caller.now,
        updated_at: caller.now,
    };
    // counted before the charge is asked for, so that attempts sent at once
    // count each (a mistyped card, refused above, is none)
    if !caller.store.take_page_attempt(HostedPage::Link, caller.org, link.id, super::ATTEMPTS_AT_MOST).await? {
        return Ok(Attempt::TooManyAttempts);
    }
    if !begin(caller, &intent, IntentOp::Charge, &charge, None).await? {
        let now = status_now(caller, &intent).await?;
        return Ok(not_now(now));
    }
    let request =
        ChargeRequest { token: &charge.method.token, amount_minor: charge.amount_minor, currency: &charge.currency, off_session: false, now: caller.now };
    let outcome = provider.charge(charge.id, &request).await;
    settle::record(caller, charge.id, outcome).await
}

/// The person approved (or failed) the authentication the intent of
/// `link` waits for.
pub async fn authenticate(caller: &Caller, providers: &Providers, link: &LinkRow, approved: bool) -> Result<Attempt> {
    let intent = caller.store.intent(caller.org, link.intent_id).await?.ok_or_else(|| Error::Internal(format!("link {} has no intent", link.id)))?;
    if INTENT.target(IntentOp::Authenticate, intent.status).is_none() {
        return Ok(not_now(intent.status));
    }
    let charges = caller.store.charges_of(caller.org, intent.id).await?;
    let Some(waiting) = charges.into_iter().rev().find(|c| c.status == ChargeStatus::RequiresAction) else {
        // another answer to the step (the button pressed twice) was first
        let now = status_now(caller, &intent).await?;
        return Ok(not_now(now));
    };
    let mut moved = waiting.clone();
    moved.status = CHARGE.next(ChargeOp::Authenticate, waiting.status)?;
    moved.updated_at = caller.now;
    if !begin(caller, &intent, IntentOp::Authenticate, &moved, Some(waiting.status)).await? {
        let now = status_now(caller, &intent).await?;
        return Ok(not_now(now));
    }
    let outcome = providers.get(link.provider).authenticate(moved.id, approved, caller.now).await;
    settle::record(caller, moved.id, outcome).await
}

/// Commits the attempt: the intent moved by `op` to PROCESSING if it is
/// still as read, the charge written (inserted, or moved from `from`), and
/// the job that resolves it after `RESOLVE_AFTER`. False when another
/// attempt moved the intent first.
async fn begin(caller: &Caller, intent: &IntentRow, op: IntentOp, charge: &ChargeRow, from: Option<ChargeStatus>) -> Result<bool> {
    let mut after = intent.clone();
    after.status = INTENT.next(op, intent.status)?;
    after.updated_at = caller.now;
    let mut tx = caller.store.begin().await?;
    if !Store::move_intent(&mut tx, &after, intent.status).await? {
        return Ok(false);
    }
    match from {
        None => Store::insert_charge(&mut tx, charge).await?,
        Some(from) => {
            if !Store::move_charge(&mut tx, charge, from).await? {
                return Err(Error::Internal(format!("charge {} moved while its intent was claimed", charge.id)));
            }
        }
    }
    Store::schedule_job(&mut tx, JobKind::PaymentCharge, &charge.id.to_string(), Some(caller.org), caller.now + RESOLVE_AFTER, caller.now).await?;
    tx.commit().await?;
    Ok(true)
}

/// The payment.charge job: an attempt still PROCESSING is resolved by
/// asking its provider where it stands, never by charging again. Still
/// processing (a SEPA debit): asked again later. Never received by the
/// provider (the process died between the commit and the call): declined,
/// so the payer may try again.
pub async fn resolve(store: &Store, providers: &Providers, org: uuid::Uuid, id: uuid::Uuid, now: chrono::DateTime<chrono::Utc>) -> Result<()> {
    let Some(charge) = store.charge(org, id).await? else { return Ok(()) };
    if charge.status != ChargeStatus::Processing {
        return Ok(());
    }
    let caller = Caller::system(store, org, now);
    let provider = providers.get(charge.provider);
    let outcome = if charge.off_session {
        // a payment session's charge is sent by this job: asked again (a
        // retry, a crash after the call), the provider answers the first
        // outcome and moves no money again
        let request = ChargeRequest { token: &charge.method.token, amount_minor: charge.amount_minor, currency: &charge.currency, off_session: true, now };
        provider.charge(id, &request).await
    } else {
        // a page's charge was sent by its request, with the payer there:
        // never sent again without them
        match provider.charge_status(id, now).await {
            Ok(Some(o)) => Ok(o),
            Ok(None) => Ok(crate::payment_providers::Outcome::Failed(super::settle::NOT_RECEIVED.into())),
            Err(e) => Err(e),
        }
    };
    match settle::record(&caller, id, outcome).await? {
        Attempt::Processing | Attempt::Unavailable => {
            let mut tx = store.begin().await?;
            Store::schedule_job(&mut tx, JobKind::PaymentCharge, &id.to_string(), Some(org), now + RESOLVE_AFTER, now).await?;
            tx.commit().await
        }
        _ => Ok(()),
    }
}
