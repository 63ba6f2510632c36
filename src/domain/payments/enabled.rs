//! Which payment providers an organisation collects through (`admin org
//! providers`): checking one, and choosing one for a link.

use crate::domain::Caller;
use crate::error::{Error, InternalCode, Result};
use crate::payment_providers::ProviderName;

/// Whether the operator lets the organisation collect through `provider`
/// (`admin org providers`).
pub async fn provider_enabled(caller: &Caller, provider: ProviderName) -> Result<bool> {
    Ok(!caller.store.disabled_payment_providers(caller.org).await?.iter().any(|d| d == provider.as_str()))
}

fn disabled_error(provider: ProviderName) -> Error {
    Error::Precondition { code: InternalCode::PaymentProviderDisabled, message: format!("{} is not enabled for this organisation.", provider.as_str()) }
}

/// 412 `payment_provider_disabled` unless the organisation may collect
/// through `provider`.
pub async fn require_enabled(caller: &Caller, provider: ProviderName) -> Result<()> {
    if provider_enabled(caller, provider).await? { Ok(()) } else { Err(disabled_error(provider)) }
}

/// The provider a link charges through, enabled for the organisation.
pub async fn provider(caller: &Caller, asked: Option<ProviderName>, profile: Option<ProviderName>) -> Result<ProviderName> {
    let disabled = caller.store.disabled_payment_providers(caller.org).await?;
    let enabled = |p: ProviderName| !disabled.iter().any(|d| d == p.as_str());
    let chosen = asked.or(profile).or_else(|| ProviderName::ALL.into_iter().find(|p| enabled(*p)));
    match chosen {
        Some(p) if enabled(p) => Ok(p),
        Some(p) => Err(disabled_error(p)),
        None => {
            Err(Error::Precondition { code: InternalCode::PaymentProviderDisabled, message: "No payment provider is enabled for this organisation.".into() })
        }
    }
}
