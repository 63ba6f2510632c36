//! Payment providers: who moves the money. One `PaymentProvider` trait,
//! and the sandbox that stands in for both of the service's providers
//! (PROVIDER_1 takes cards, PROVIDER_2 cards and SEPA debits). A real
//! integration implements the trait; handlers never see which.
//!
//! Every call that moves money carries Switchboard's own id of the attempt
//! (a charge's, a refund's) as the provider's idempotency key: asked twice,
//! a provider answers the first outcome and moves nothing again. After a
//! crash between a call and the commit of its outcome, the attempt is
//! resolved by asking about it (`charge_status`), never by charging again.

pub mod checked;
mod sandbox;
pub mod test_values;

pub use sandbox::Sandbox;

use async_trait::async_trait;
use chrono::{DateTime, NaiveDate, Utc};
use std::sync::Arc;
use uuid::Uuid;

/// The service's two providers, spelled as the live service spells them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ProviderName {
    Provider1,
    Provider2,
}

impl ProviderName {
    pub const ALL: [ProviderName; 2] = [ProviderName::Provider1, ProviderName::Provider2];

    pub fn as_str(self) -> &'static str {
        match self {
            ProviderName::Provider1 => "PROVIDER_1",
            ProviderName::Provider2 => "PROVIDER_2",
        }
    }

    pub fn parse(s: &str) -> Option<ProviderName> {
        ProviderName::ALL.into_iter().find(|p| p.as_str() == s)
    }

    /// The kinds of method the provider takes.
    pub fn takes(self, kind: MethodKind) -> bool {
        match self {
            ProviderName::Provider1 => kind == MethodKind::Card,
            ProviderName::Provider2 => true,
        }
    }
}

impl From<ProviderName> for crate::wire::latest::PaymentProvider {
    fn from(p: ProviderName) -> Self {
        match p {
            ProviderName::Provider1 => Self::Provider1,
            ProviderName::Provider2 => Self::Provider2,
        }
    }
}

impl From<crate::wire::latest::PaymentProvider> for ProviderName {
    fn from(p: crate::wire::latest::PaymentProvider) -> Self {
        use crate::wire::latest::PaymentProvider as W;
        match p {
            W::Provider1 => ProviderName::Provider1,
            W::Provider2 => ProviderName::Provider2,
        }
    }
}

/// A payment profile's `type` for the methods the sandbox takes (the
/// service's `type` is open: a real provider may report others).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MethodKind {
    Card,
    SepaDebit,
}

impl MethodKind {
    pub fn as_str(self) -> &'static str {
        match self {
            MethodKind::Card => "CARD",
            MethodKind::SepaDebit => "SEPA_DEBIT",
        }
    }
}

/// What a person typed on a hosted page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entered {
    Card { number: String, expiry: String, cvc: String },
    Sepa { iban: String },
}

/// What a page refuses of what was typed: the form's field and a sentence
/// for the person.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invalid {
    pub field: &'static str,
    pub message: String,
}

/// A method the provider keeps for us: the token to charge it by and what
/// may be shown of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Method {
    pub token: String,
    pub kind: MethodKind,
    pub display_name: String,
    /// a card's last valid day
    pub expires_on: Option<NaiveDate>,
}

/// A charge asked of a provider.
#[derive(Debug, Clone)]
pub struct ChargeRequest<'a> {
    pub token: &'a str,
    pub amount_minor: i64,
    pub currency: &'a str,
    /// charged without the person present (a saved profile), not on a page
    pub off_session: bool,
    /// the organisation's time
    pub now: DateTime<Utc>,
}

/// Where a charge stands at its provider.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Succeeded,
    /// taken, settled later (a SEPA debit): ask again with `charge_status`
    Processing,
    /// the person must authenticate on the page first (`authenticate`)
    RequiresAction,
    /// declined, with the provider's code (`test_values`' codes)
    Failed(String),
}

/// Where a refund stands at its provider.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RefundOutcome {
    Succeeded,
    Failed(String),
}

/// A call the provider did not carry out (a decline is no error: it is
/// an `Outcome`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProviderError {
    /// it did not answer: ask again later, with the same id
    Unavailable(String),
    /// it refused the call itself (an id given before for another charge,
    /// an amount that is not positive): asking again will not help
    Refused(String),
}

/// The largest amount, in minor units, a charge or refund may be (sums of
/// two never overflow).
pub const MAX_AMOUNT_MINOR: i64 = i64::MAX / 4;

/// What Switchboard asks of a payment provider.
#[async_trait]
pub trait PaymentProvider: Send + Sync + std::fmt::Debug {
    fn name(&self) -> ProviderName;
    /// Checks what a person typed, at `now` (the organisation's time), and
    /// keeps it as a method to charge later; `Ok(Err)`: the page shows why
    /// it was refused.
    async fn save_method(&self, entered: &Entered, now: DateTime<Utc>) -> Result<Result<Method, Invalid>, ProviderError>;
    /// Checks a saved method for later charges without moving money (a
    /// setup, as a zero-amount authorisation): `Succeeded` when it may be
    /// kept, `RequiresAction` when the person must authenticate first
    /// (asked again with their answer in `authenticated`), `Failed` with
    /// the provider's code when it is refused.
    async fn set_up(&self, token: &str, authenticated: Option<bool>, now: DateTime<Utc>) -> Result<Outcome, ProviderError>;
    /// Whether the method `token` is still there and chargeable on `today`.
    async fn method_usable(&self, token: &str, today: NaiveDate) -> Result<bool, ProviderError>;
    /// Charges the method, at most once per `attempt`: asked again with the
    /// same attempt, answers where the first charge stands.
    async fn charge(&self, attempt: Uuid, request: &ChargeRequest<'_>) -> Result<Outcome, ProviderError>;
    /// Where the charge of `attempt` stands at `now`; None when the
    /// provider never received it (then it is safe to give it up).
    async fn charge_status(&self, attempt: Uuid, now: DateTime<Utc>) -> Result<Option<Outcome>, ProviderError>;
    /// The person approved (or failed) the authentication `attempt` asked
    /// for; where the charge stands after.
    async fn authenticate(&self, attempt: Uuid, approved: bool, now: DateTime<Utc>) -> Result<Outcome, ProviderError>;
    /// Gives back `amount_minor` of the charge of `attempt`, at most once per
    /// `refund`.
    async fn refund(&self, refund: Uuid, attempt: Uuid, amount_minor: i64, now: DateTime<Utc>) -> Result<RefundOutcome, ProviderError>;
}

/// The providers the server talks to, one per name.
#[derive(Debug, Clone)]
pub struct Providers {
    provider_1: Arc<dyn PaymentProvider>,
    provider_2: Arc<dyn PaymentProvider>,
}

impl Providers {
    /// Each behind `checked::Checked`: what they answer is checked before
    /// it is used.
    pub fn new(provider_1: Arc<dyn PaymentProvider>, provider_2: Arc<dyn PaymentProvider>) -> Providers {
        Providers { provider_1: Arc::new(checked::Checked(provider_1)), provider_2: Arc::new(checked::Checked(provider_2)) }
    }

    /// Both providers played by the sandbox, its ledger in `store`.
    pub fn sandbox(store: &crate::store::Store) -> Providers {
        Providers::new(Arc::new(Sandbox::new(store.clone(), ProviderName::Provider1)), Arc::new(Sandbox::new(store.clone(), ProviderName::Provider2)))
    }

    pub fn get(&self, name: ProviderName) -> &dyn PaymentProvider {
        match name {
            ProviderName::Provider1 => self.provider_1.as_ref(),
            ProviderName::Provider2 => self.provider_2.as_ref(),
        }
    }
}
