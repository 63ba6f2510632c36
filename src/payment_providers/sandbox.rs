//! The sandbox provider: plays PROVIDER_1 or PROVIDER_2 by the test values
//! (`test_values`), with its ledger in the database
//! (`store::sandbox_payments`) as a real provider keeps one on its side. A
//! SEPA debit settles `SETTLE_AFTER` after it was taken, by the
//! organisation's clock: asked about after that, it is settled.

use super::test_values::{self, AUTHENTICATION_FAILED, Behaviour, CARD_DECLINED};
use super::{ChargeRequest, Entered, Invalid, MAX_AMOUNT_MINOR, Method, Outcome, PaymentProvider, ProviderError, ProviderName, RefundOutcome};
use crate::store::{SandboxCharge, SandboxMethod, Store};
use async_trait::async_trait;
use chrono::{DateTime, Duration, NaiveDate, Utc};
use uuid::Uuid;

/// How long a SEPA debit stays PROCESSING.
pub const SETTLE_AFTER: Duration = Duration::minutes(5);

/// The code of a charge on a card past its expiry.
pub const EXPIRED_CARD: &str = "expired_card";

#[derive(Clone)]
pub struct Sandbox {
    store: Store,
    name: ProviderName,
}

impl std::fmt::Debug for Sandbox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sandbox").field("name", &self.name).finish_non_exhaustive()
    }
}

impl Sandbox {
    pub fn new(store: Store, name: ProviderName) -> Sandbox {
        Sandbox { store, name }
    }

    /// The charge of `attempt`, settled if it was due by `now`; None when
    /// this provider never took it.
    async fn charge_at(&self, attempt: Uuid, now: DateTime<Utc>) -> crate::error::Result<Option<SandboxCharge>> {
        let Some(charge) = self.store.sandbox_charge(attempt).await?.filter(|c| c.provider == self.name.as_str()) else {
            return Ok(None);
        };
        match (&charge.settles_at, &charge.settles_to) {
            (Some(at), Some(to)) if charge.status == "PROCESSING" && *at <= now => {
                // whoever asks first settles it; the others read what it left
                self.store.move_sandbox_charge(self.name.as_str(), attempt, "PROCESSING", to, charge.settles_code.as_deref(), now).await?;
                self.store.sandbox_charge(attempt).await
            }
            _ => Ok(Some(charge)),
        }
    }
}

fn outcome(c: &SandboxCharge) -> Outcome {
    match c.status.as_str() {
        "SUCCEEDED" => Outcome::Succeeded,
        "PROCESSING" => Outcome::Processing,
        "REQUIRES_ACTION" => Outcome::RequiresAction,
        _ => Outcome::Failed(c.failure_code.clone().unwrap_or_else(|| CARD_DECLINED.into())),
    }
}

fn unavailable(e: crate::error::Error) -> ProviderError {
    ProviderError::Unavailable(e.to_string())
}

fn amount_refused(amount_minor: i64) -> Option<ProviderError> {
    (!(1..=MAX_AMOUNT_MINOR).contains(&amount_minor)).then(|| ProviderError::Refused(format!("amount {amount_minor} is not between 1 and {MAX_AMOUNT_MINOR}")))
}

/// The first charge recorded for an attempt must be the one asked again.
fn same_charge(recorded: &SandboxCharge, request: &ChargeRequest<'_>) -> Result<(), ProviderError> {
    if recorded.amount_minor != request.amount_minor || recorded.currency != request.currency || recorded.token != request.token {
        return Err(ProviderError::Refused(format!("attempt {} was given before for another charge", recorded.attempt)));
    }
    Ok(())
}

/// Where a new charge on a method of `behaviour` starts: its status and
/// failure code, and where it goes when it settles.
fn first_step(behaviour: Behaviour, off_session: bool) -> (&'static str, Option<&'static str>, Option<(&'static str, Option<&'static str>)>) {
    match (behaviour, off_session) {
        (Behaviour::Succeeds, _) | (Behaviour::Authenticates, true) | (Behaviour::FailsOffSession, false) => ("SUCCEEDED", None, None),
        (Behaviour::Declines(code), _) => ("FAILED", Some(code), None),
        (Behaviour::Authenticates, false) => ("REQUIRES_ACTION", None, None),
        (Behaviour::FailsOffSession, true) => ("FAILED", Some(CARD_DECLINED), None),
        (Behaviour::Settles, _) => ("PROCESSING", None, Some(("SUCCEEDED", None))),
        (Behaviour::FailsAfterProcessing, _) => ("PROCESSING", None, Some(("FAILED", Some(test_values::DEBIT_FAILED)))),
    }
}

#[async_trait]
impl PaymentProvider for Sandbox {
    fn name(&self) -> ProviderName {
        self.name
    }

    async fn save_method(&self, entered: &Entered, now: DateTime<Utc>) -> Result<Result<Method, Invalid>, ProviderError> {
        let recognised = match entered {
            Entered::Card { number, expiry, cvc } => test_values::card(number, expiry, cvc, now.date_naive()),
            Entered::Sepa { iban } => test_values::iban(iban),
        };
        let recognised = match recognised {
            Ok(r) if !self.name.takes(r.kind) => {
                return Ok(Err(Invalid { field: "iban", message: format!("{} takes cards only.", self.name.as_str()) }));
            }
            Ok(r) => r,
            Err(invalid) => return Ok(Err(invalid)),
        };
        let method = Method {
            token: format!("pm_{}", Uuid::new_v4().simple()),
            kind: recognised.kind,
            display_name: recognised.display_name,
            expires_on: recognised.expires_on,
        };
        let kept = SandboxMethod {
            provider: self.name.as_str().into(),
            token: method.token.clone(),
            kind: method.kind.as_str().into(),
            behaviour: recognised.behaviour.as_str().into(),
            display_name: method.display_name.clone(),
            expires_on: method.expires_on,
        };
        self.store.insert_sandbox_method(&kept, now).await.map_err(unavailable)?;
        Ok(Ok(method))
    }

    async fn set_up(&self, token: &str, authenticated: Option<bool>, now: DateTime<Utc>) -> Result<Outcome, ProviderError> {
        let Some(method) = self.store.sandbox_method(self.name.as_str(), token).await.map_err(unavailable)? else {
            return Ok(Outcome::Failed("payment_method_unknown".into()));
        };
        if method.expires_on.is_some_and(|d| d < now.date_naive()) {
            return Ok(Outcome::Failed(EXPIRED_CARD.into()));
        }
        // a setup checks the card, not its funds: only an outright decline
        // and the authentication step show here
        Ok(match (Behaviour::parse(&method.behaviour), authenticated) {
            (Some(Behaviour::Declines(CARD_DECLINED)), _) => Outcome::Failed(CARD_DECLINED.into()),
            (Some(Behaviour::Authenticates), None) => Outcome::RequiresAction,
            (Some(Behaviour::Authenticates), Some(false)) => Outcome::Failed(AUTHENTICATION_FAILED.into()),
            (Some(_), _) => Outcome::Succeeded,
            (None, _) => return Err(ProviderError::Refused(format!("method {token} has no behaviour"))),
        })
    }

    async fn method_usable(&self, token: &str, today: NaiveDate) -> Result<bool, ProviderError> {
        let method = self.store.sandbox_method(self.name.as_str(), token).await.map_err(unavailable)?;
        Ok(method.is_some_and(|m| m.expires_on.is_none_or(|d| d >= today)))
    }

    async fn charge(&self, attempt: Uuid, request: &ChargeRequest<'_>) -> Result<Outcome, ProviderError> {
        if let Some(refused) = amount_refused(request.amount_minor) {
            return Err(refused);
        }
        if let Some(charge) = self.charge_at(attempt, request.now).await.map_err(unavailable)? {
            // the same attempt again: the first answer stands, as long as
            // it is the same charge
            same_charge(&charge, request)?;
            return Ok(outcome(&charge));
        }
        let Some(method) = self.store.sandbox_method(self.name.as_str(), request.token).await.map_err(unavailable)? else {
            return Ok(Outcome::Failed("payment_method_unknown".into()));
        };
        let behaviour = Behaviour::parse(&method.behaviour).ok_or_else(|| ProviderError::Refused(format!("method {} has no behaviour", method.token)))?;
        let (status, code, settles) = if method.expires_on.is_some_and(|d| d < request.now.date_naive()) {
            ("FAILED", Some(EXPIRED_CARD), None)
        } else {
            first_step(behaviour, request.off_session)
        };
        let charge = SandboxCharge {
            attempt,
            provider: self.name.as_str().into(),
            token: request.token.into(),
            amount_minor: request.amount_minor,
            currency: request.currency.into(),
            status: status.into(),
            failure_code: code.map(Into::into),
            settles_at: settles.map(|_| request.now + SETTLE_AFTER),
            settles_to: settles.map(|(to, _)| to.into()),
            settles_code: settles.and_then(|(_, code)| code).map(Into::into),
        };
        // another call with the same attempt may have recorded it first
        let recorded = self.store.sandbox_charge_once(&charge, request.now).await.map_err(unavailable)?;
        if recorded.provider != charge.provider {
            return Err(ProviderError::Refused(format!("attempt {attempt} was given to another provider")));
        }
        same_charge(&recorded, request)?;
        Ok(outcome(&recorded))
    }

    async fn charge_status(&self, attempt: Uuid, now: DateTime<Utc>) -> Result<Option<Outcome>, ProviderError> {
        Ok(self.charge_at(attempt, now).await.map_err(unavailable)?.as_ref().map(outcome))
    }

    async fn authenticate(&self, attempt: Uuid, approved: bool, now: DateTime<Utc>) -> Result<Outcome, ProviderError> {
        let (to, code) = if approved { ("SUCCEEDED", None) } else { ("FAILED", Some(AUTHENTICATION_FAILED)) };
        // a second answer (the page sent twice) finds it moved and reads
        // where the first left it
        self.store.move_sandbox_charge(self.name.as_str(), attempt, "REQUIRES_ACTION", to, code, now).await.map_err(unavailable)?;
        let charge = self.charge_at(attempt, now).await.map_err(unavailable)?;
        charge.as_ref().map(outcome).ok_or_else(|| ProviderError::Refused(format!("no charge {attempt} to authenticate")))
    }

    async fn refund(&self, refund: Uuid, attempt: Uuid, amount_minor: i64, now: DateTime<Utc>) -> Result<RefundOutcome, ProviderError> {
        if let Some(refused) = amount_refused(amount_minor) {
            return Err(refused);
        }
        // a debit due to settle settles first; another provider's charge
        // is none of this one's
        if self.charge_at(attempt, now).await.map_err(unavailable)?.is_none() {
            return Ok(RefundOutcome::Failed("charge_not_found".into()));
        }
        let recorded = self.store.sandbox_refund_once(refund, attempt, amount_minor, now).await.map_err(unavailable)?;
        if recorded.attempt != attempt || recorded.amount_minor != amount_minor {
            return Err(ProviderError::Refused(format!("refund {refund} was given before for another refund")));
        }
        Ok(match recorded.status.as_str() {
            "SUCCEEDED" => RefundOutcome::Succeeded,
            _ => RefundOutcome::Failed(recorded.failure_code.unwrap_or_default()),
        })
    }
}
