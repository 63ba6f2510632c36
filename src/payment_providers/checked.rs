//! A provider's answers, checked before anything uses them: `Providers`
//! puts every provider (the sandbox, a real integration) behind `Checked`.
//! What a provider says is outside input: a method's token and name are
//! stored and shown on pages and in the API, a decline's code is stored,
//! shown and sent in events. An answer that does not fit is not used: a
//! method that is malformed is as if the provider had not answered (the
//! page asks the person to try again; nothing is kept), a code that is not
//! a code is replaced by `provider_declined` (the decline itself stands:
//! no money moved), and a charge made without the person present cannot
//! wait for them to authenticate (`authentication_required`).

use super::{ChargeRequest, Entered, Invalid, Method, Outcome, PaymentProvider, ProviderError, ProviderName, RefundOutcome};
use async_trait::async_trait;
use chrono::{DateTime, Datelike, NaiveDate, Utc};
use std::sync::Arc;
use uuid::Uuid;

/// The code of a decline whose own code was not one.
pub const UNREADABLE_CODE: &str = "provider_declined";

/// Bounds of what a provider may hand us to keep.
const TOKEN_BYTES: usize = 255;
const DISPLAY_NAME_CHARS: usize = 100;
const CODE_BYTES: usize = 64;

#[derive(Debug)]
pub struct Checked(pub Arc<dyn PaymentProvider>);

/// Whether `code` is a code: 1 to 64 of `a-z`, `0-9` and `_`.
fn is_code(code: &str) -> bool {
    (1..=CODE_BYTES).contains(&code.len()) && code.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
}

/// `outcome` with its code checked, and no authentication asked of a
/// person who is not there.
fn outcome(outcome: Outcome, off_session: bool) -> Outcome {
    match outcome {
        Outcome::Failed(code) if !is_code(&code) => {
            tracing::warn!(code = %code.escape_debug(), "payment provider: a decline's code is not a code");
            Outcome::Failed(UNREADABLE_CODE.into())
        }
        Outcome::RequiresAction if off_session => Outcome::Failed("authentication_required".into()),
        o => o,
    }
}

/// What is wrong with `m`, a method to keep, if anything.
fn malformed(m: &Method, now: DateTime<Utc>) -> Option<&'static str> {
    let printable = |s: &str| s.chars().all(|c| !c.is_control());
    if m.token.is_empty() || m.token.len() > TOKEN_BYTES || !m.token.bytes().all(|b| b.is_ascii_graphic()) {
        return Some("a method's token is not 1 to 255 visible characters");
    }
    if m.display_name.trim().is_empty() || m.display_name.chars().count() > DISPLAY_NAME_CHARS || !printable(&m.display_name) {
        return Some("a method's name is not 1 to 100 printable characters");
    }
    // a card runs out within a few decades, and not before cards were sold
    let plausible = |d: NaiveDate| d.year() >= 2000 && d.year() <= now.year() + 50;
    if m.expires_on.is_some_and(|d| !plausible(d)) {
        return Some("a method's expiry is not a plausible date");
    }
    None
}

#[async_trait]
impl PaymentProvider for Checked {
    fn name(&self) -> ProviderName {
        self.0.name()
    }

    async fn save_method(&self, entered: &Entered, now: DateTime<Utc>) -> Result<Result<Method, Invalid>, ProviderError> {
        match self.0.save_method(entered, now).await? {
            Ok(m) => match malformed(&m, now) {
                Some(why) => {
                    tracing::warn!(provider = self.name().as_str(), why, "payment provider: an answer not used");
                    Err(ProviderError::Unavailable(why.into()))
                }
                None => Ok(Ok(m)),
            },
            Err(invalid) => Ok(Err(invalid)),
        }
    }

    async fn set_up(&self, token: &str, authenticated: Option<bool>, now: DateTime<Utc>) -> Result<Outcome, ProviderError> {
        Ok(outcome(self.0.set_up(token, authenticated, now).await?, false))
    }

    async fn method_usable(&self, token: &str, today: NaiveDate) -> Result<bool, ProviderError> {
        self.0.method_usable(token, today).await
    }

    async fn charge(&self, attempt: Uuid, request: &ChargeRequest<'_>) -> Result<Outcome, ProviderError> {
        Ok(outcome(self.0.charge(attempt, request).await?, request.off_session))
    }

    async fn charge_status(&self, attempt: Uuid, now: DateTime<Utc>) -> Result<Option<Outcome>, ProviderError> {
        // (asked about a charge already made: its authentication, if asked
        // for, was asked on its page)
        Ok(self.0.charge_status(attempt, now).await?.map(|o| outcome(o, false)))
    }

    async fn authenticate(&self, attempt: Uuid, approved: bool, now: DateTime<Utc>) -> Result<Outcome, ProviderError> {
        Ok(outcome(self.0.authenticate(attempt, approved, now).await?, false))
    }

    async fn refund(&self, refund: Uuid, attempt: Uuid, amount_minor: i64, now: DateTime<Utc>) -> Result<RefundOutcome, ProviderError> {
        Ok(match self.0.refund(refund, attempt, amount_minor, now).await? {
            RefundOutcome::Failed(code) if !is_code(&code) => {
                tracing::warn!(code = %code.escape_debug(), "payment provider: a refund's code is not a code");
                RefundOutcome::Failed(UNREADABLE_CODE.into())
            }
            r => r,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::payment_providers::MethodKind;

    /// A provider that answers what it is told to.
    #[derive(Debug)]
    struct Says {
        method: Method,
        outcome: Outcome,
    }

    #[async_trait]
    impl PaymentProvider for Says {
        fn name(&self) -> ProviderName {
            ProviderName::Provider1
        }
        async fn save_method(&self, _: &Entered, _: DateTime<Utc>) -> Result<Result<Method, Invalid>, ProviderError> {
            Ok(Ok(self.method.clone()))
        }
        async fn set_up(&self, _: &str, _: Option<bool>, _: DateTime<Utc>) -> Result<Outcome, ProviderError> {
            Ok(self.outcome.clone())
        }
        async fn method_usable(&self, _: &str, _: NaiveDate) -> Result<bool, ProviderError> {
            Ok(true)
        }
        async fn charge(&self, _: Uuid, _: &ChargeRequest<'_>) -> Result<Outcome, ProviderError> {
            Ok(self.outcome.clone())
        }
        async fn charge_status(&self, _: Uuid, _: DateTime<Utc>) -> Result<Option<Outcome>, ProviderError> {
            Ok(Some(self.outcome.clone()))
        }
        async fn authenticate(&self, _: Uuid, _: bool, _: DateTime<Utc>) -> Result<Outcome, ProviderError> {
            Ok(self.outcome.clone())
        }
        async fn refund(&self, _: Uuid, _: Uuid, _: i64, _: DateTime<Utc>) -> Result<RefundOutcome, ProviderError> {
            match &self.outcome {
                Outcome::Failed(code) => Ok(RefundOutcome::Failed(code.clone())),
                _ => Ok(RefundOutcome::Succeeded),
            }
        }
    }

    fn method(token: &str, name: &str, expires_on: Option<NaiveDate>) -> Method {
        Method { token: token.into(), kind: MethodKind::Card, display_name: name.into(), expires_on }
    }

    fn checked(method: Method, outcome: Outcome) -> Checked {
        Checked(Arc::new(Says { method, outcome }))
    }

    fn card() -> Entered {
        Entered::Card { number: "4242424242424242".into(), expiry: "12/30".into(), cvc: "123".into() }
    }

    #[tokio::test]
    async fn a_malformed_method_is_not_kept_and_a_sound_one_is() {
        let now = Utc::now();
        let sound = method("pm_1", "Visa •••• 4242", NaiveDate::from_ymd_opt(2030, 12, 31));
        assert_eq!(checked(sound.clone(), Outcome::Succeeded).save_method(&card(), now).await, Ok(Ok(sound)));
        let long = "x".repeat(256);
        let name = "n".repeat(101);
        for bad in [
            method("", "Visa", None),
            method("pm 1", "Visa", None),
            method(&long, "Visa", None),
            method("pm_1", " ", None),
            method("pm_1", "Visa\u{0}<script>", None),
            method("pm_1", &name, None),
            method("pm_1", "Visa", NaiveDate::from_ymd_opt(1970, 1, 1)),
            method("pm_1", "Visa", NaiveDate::from_ymd_opt(9999, 12, 31)),
        ] {
            assert!(matches!(checked(bad.clone(), Outcome::Succeeded).save_method(&card(), now).await, Err(ProviderError::Unavailable(_))), "{bad:?}");
        }
    }

    #[tokio::test]
    async fn a_code_that_is_not_a_code_is_replaced_and_the_decline_stands() {
        let now = Utc::now();
        let request = ChargeRequest { token: "pm_1", amount_minor: 100, currency: "SEK", off_session: false, now };
        let m = method("pm_1", "Visa", None);
        for (said, kept) in [("card_declined", "card_declined"), ("<b>no</b>", UNREADABLE_CODE), ("", UNREADABLE_CODE), ("DECLINED", UNREADABLE_CODE)] {
            let p = checked(m.clone(), Outcome::Failed(said.into()));
            assert_eq!(p.charge(Uuid::nil(), &request).await, Ok(Outcome::Failed(kept.into())), "{said}");
            assert_eq!(p.charge_status(Uuid::nil(), now).await, Ok(Some(Outcome::Failed(kept.into()))));
            assert_eq!(p.refund(Uuid::nil(), Uuid::nil(), 1, now).await, Ok(RefundOutcome::Failed(kept.into())));
        }
        let code = "c".repeat(65);
        assert_eq!(checked(m, Outcome::Failed(code)).set_up("pm_1", None, now).await, Ok(Outcome::Failed(UNREADABLE_CODE.into())));
    }

    #[tokio::test]
    async fn a_charge_without_the_person_cannot_wait_for_their_authentication() {
        let now = Utc::now();
        let p = checked(method("pm_1", "Visa", None), Outcome::RequiresAction);
        let on_page = ChargeRequest { token: "pm_1", amount_minor: 100, currency: "SEK", off_session: false, now };
        assert_eq!(p.charge(Uuid::nil(), &on_page).await, Ok(Outcome::RequiresAction));
        let off_session = ChargeRequest { off_session: true, ..on_page };
        assert_eq!(p.charge(Uuid::nil(), &off_session).await, Ok(Outcome::Failed("authentication_required".into())));
    }
}
