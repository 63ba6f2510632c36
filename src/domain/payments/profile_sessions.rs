//! Payment profile sessions: a setup page that saves a payment method of
//! an order's customer without charging it (e.g. for an order that costs
//! nothing now). The provider keeps the method and checks it without
//! moving money (`PaymentProvider::set_up`); the profile is saved, and the
//! session COMPLETED, in one transaction guarded by the session still
//! being ACTIVE, so two submissions at once save one profile. Rule 4: a
//! cancelled session's page takes no further attempt.
//!
//! Nothing here moves money, so a crash between the provider's answer and
//! the commit leaves at most a method the provider keeps that no profile
//! names; the page asks again.

use super::enabled::require_enabled;
use super::links::{LIFETIME_HOURS, http_url, order_named};
use crate::domain::Caller;
use crate::domain::access::Role;
use crate::error::{Detail, Error, InternalCode, Result};
use crate::payment_providers::{Entered, Invalid, Outcome, ProviderError, Providers};
use crate::states::orders::OrderStatus;
use crate::states::payments::{PROFILE_SESSION, PaymentProfileSessionStatus as Status, ProfileSessionOp};
use crate::store::{ChargedMethod, HostedPage, ProfileSessionRow, Stateful, Store};
use crate::wire::latest as wire;
use chrono::Duration;
use uuid::Uuid;

/// Where a setup page's address is, beside the payment pages (the
/// routes and the version policy name the same path: `hosted`'s tests).
pub fn setup_url(public_url: &str, token: &str) -> String {
    format!("{}/setup/{token}", public_url.trim_end_matches('/'))
}

pub fn render(s: &ProfileSessionRow) -> wire::PaymentProfileSession {
    wire::PaymentProfileSession {
        payment_profile_session_id: s.id,
        status: s.status.into(),
        order_id: s.order_id,
        customer_id: s.customer_id,
        payment_provider: s.provider.into(),
        hosted_url: s.hosted_url.clone(),
        return_url: s.return_url.clone(),
        cancel_url: s.cancel_url.clone(),
        set_as_default_payment_profile: s.set_default,
        payment_profile_id: s.profile_id,
        last_failure_code: s.last_failure_code.clone(),
        cancellation_reason: s.cancellation_reason.clone(),
        expires_at: s.expires_at,
        completed_at: s.completed_at,
        canceled_at: s.canceled_at,
        created_at: s.created_at,
        updated_at: s.updated_at,
        metadata: s.metadata.clone().map(wire::Metadata),
    }
}

/// Writes `after` over `before` if it is still in the status it was read
/// in; otherwise the status another request moved it to, read in the
/// transaction (on SQLite's shared writer, that move may not be committed
/// yet, so the pool would not show it).
async fn write(caller: &Caller, before: &ProfileSessionRow, after: &ProfileSessionRow) -> Result<Option<Status>> {
    let mut tx = caller.store.begin().await?;
    if Store::move_profile_session(&mut tx, after, before.status).await? {
        tx.commit().await?;
        return Ok(None);
    }
    let now = Store::status_in(&mut tx, Stateful::PaymentProfileSessions, caller.org, before.id).await?;
    Ok(Some(now.ok_or_else(|| Error::Internal(format!("profile session {} vanished", before.id)))?))
}

/// An ACTIVE session past its expiresAt is EXPIRED, when it is next read
/// (nothing else waits on it: no job, no event). The session as it is now.
pub async fn expire_if_due(caller: &Caller, row: ProfileSessionRow) -> Result<ProfileSessionRow> {
    let Some(to) = PROFILE_SESSION.target(ProfileSessionOp::Expire, row.status).filter(|_| row.expires_at <= caller.now) else {
        return Ok(row);
    };
    let mut after = row.clone();
    after.status = to;
    after.pending_method = None;
    after.updated_at = row.expires_at;
    match write(caller, &row, &after).await? {
        None => Ok(after),
        // moved first by another request: as it now stands
        Some(status) => {
            let now = caller.store.profile_session(caller.org, row.id).await?.unwrap_or(row);
            Ok(ProfileSessionRow { status, ..now })
        }
    }
}

async fn find(caller: &Caller, key: &str) -> Result<ProfileSessionRow> {
    let missing = || Error::not_found(InternalCode::PaymentProfileSessionNotFound, "payment profile session");
    let id = Uuid::parse_str(key).map_err(|_| missing())?;
    let row = caller.store.profile_session(caller.org, id).await?.filter(|s| caller.sees_customer(s.customer_id));
    expire_if_due(caller, row.ok_or_else(missing)?).await
}

pub async fn view(caller: &Caller, key: &str) -> Result<wire::PaymentProfileSession> {
    Ok(render(&find(caller, key).await?))
}

pub async fn create(caller: &Caller, public_url: &str, req: wire::CreatePaymentProfileSessionRequest) -> Result<wire::PaymentProfileSession> {
    let (return_url, cancel_url) = (http_url(&req.return_url), req.cancel_url.as_deref().map(http_url));
    let mut bad = vec![];
    for (field, refused) in [("returnUrl", return_url.is_none()), ("cancelUrl", cancel_url.as_ref().is_some_and(Option::is_none))] {
        if refused {
            bad.push(Detail::new(field, "invalid_url", "must be an absolute http or https URL"));
        }
    }
    let (Some(return_url), true) = (return_url, bad.is_empty()) else {
        return Err(Error::Invalid(bad));
    };
    let order = order_named(caller, &req.order_id).await?;
    caller.require_role(order.customer_id, Role::Manager)?;
    if matches!(order.status, OrderStatus::Cancelled | OrderStatus::Expired) {
        return Err(Error::Conflict {
            code: InternalCode::OrderStateConflict,
            message: format!("The order is {}; a payment method is saved only for an order that is neither cancelled nor expired.", order.status),
            property: "orderId",
        });
    }
    let provider = req.payment_provider.into();
    require_enabled(caller, provider).await?;
    let (now, token) = (caller.now, crate::keys::random_token());
    let session = ProfileSessionRow {
        id: crate::domain::new_id(),
        org: caller.org,
        customer_id: order.customer_id,
        order_id: order.id,
        hosted_url: setup_url(public_url, &token),
        token,
        status: Status::Active,
        provider,
        return_url,
        cancel_url: cancel_url.flatten(),
        set_default: req.set_as_default_payment_profile,
        profile_id: None,
        pending_method: None,
        last_failure_code: None,
        cancellation_reason: None,
        metadata: req.metadata.map(|m| m.0),
        expires_at: now + Duration::hours(LIFETIME_HOURS),
        completed_at: None,
        canceled_at: None,
        created_at: now,
        updated_at: now,
    };
    let mut tx = caller.store.begin().await?;
    Store::insert_profile_session(&mut tx, &session).await?;
    tx.commit().await?;
    Ok(render(&session))
}

pub async fn cancel(caller: &Caller, key: &str, req: wire::CancelPaymentProfileSessionRequest) -> Result<wire::PaymentProfileSession> {
    let row = find(caller, key).await?;
    caller.require_role(row.customer_id, Role::Manager)?;
    let mut after = row.clone();
    after.status = PROFILE_SESSION.next(ProfileSessionOp::Cancel, row.status)?;
    after.pending_method = None;
    after.canceled_at = Some(caller.now);
    after.updated_at = caller.now;
    after.cancellation_reason = req.reason;
    if let Some(m) = req.metadata {
        after.metadata = Some(m.0);
    }
    match write(caller, &row, &after).await? {
        None => Ok(render(&after)),
        Some(status) => {
            Err(PROFILE_SESSION.next(ProfileSessionOp::Cancel, status).err().unwrap_or_else(|| Error::changed_meanwhile("payment profile session")))
        }
    }
}

/// What became of what the payer sent on the setup page.
#[derive(Debug)]
pub enum Setup {
    /// saved: the session COMPLETED
    Saved(ProfileSessionRow),
    /// the provider asks the payer to authenticate first
    NeedsAction,
    /// the provider refused the method, with its code
    Declined(String),
    /// the page refuses what was typed
    Invalid(Invalid),
    /// nothing to do in the state the session is in (moved meanwhile by
    /// another request, as read in its transaction): the page shows why
    Closed(Status),
    /// the provider did not answer; nothing was saved
    Unavailable,
    /// the session took `ATTEMPTS_AT_MOST` attempts: no new one
    TooManyAttempts,
}

/// Saves what the payer typed on the setup page of `session` (ACTIVE).
pub async fn enter(caller: &Caller, providers: &Providers, session: &ProfileSessionRow, entered: &Entered) -> Result<Setup> {
    if session.status != Status::Active {
        return Ok(Setup::Closed(session.status));
    }
    // (a page that took all its attempts asks the provider nothing more)
    if super::attempts_spent(caller, HostedPage::Setup, session.id).await? {
        return Ok(Setup::TooManyAttempts);
    }
    let provider = providers.get(session.provider);
    let method = match provider.save_method(entered, caller.now).await {
        Ok(Ok(m)) => ChargedMethod { token: m.token, kind: m.kind.as_str().into(), display_name: m.display_name, expires_on: m.expires_on },
        Ok(Err(invalid)) => return Ok(Setup::Invalid(invalid)),
        Err(e) => return Ok(unavailable(e)),
    };
    // a method the provider will be asked about (a mistyped one is not an
    // attempt), counted before it is asked, so that attempts sent at once
    // count each
    if !caller.store.take_page_attempt(HostedPage::Setup, caller.org, session.id, super::ATTEMPTS_AT_MOST).await? {
        return Ok(Setup::TooManyAttempts);
    }
    let outcome = provider.set_up(&method.token, None, caller.now).await;
    settle(caller, session, method, outcome).await
}

/// The payer's answer to the authentication step of `session`.
pub async fn authenticate(caller: &Caller, providers: &Providers, session: &ProfileSessionRow, approved: bool) -> Result<Setup> {
    // (an answer to no step asked shows the page as it is)
    let (Status::Active, Some(method)) = (session.status, session.pending_method.clone()) else {
        return Ok(Setup::Closed(session.status));
    };
    let outcome = providers.get(session.provider).set_up(&method.token, Some(approved), caller.now).await;
    settle(caller, session, method, outcome).await
}

fn unavailable(e: ProviderError) -> Setup {
    tracing::warn!(error = ?e, "payment provider: setup");
    Setup::Unavailable
}

/// Records the provider's answer about `method` on `session`: saved as a
/// profile (the session COMPLETED), kept pending authentication, or its
/// decline noted.
async fn settle(caller: &Caller, session: &ProfileSessionRow, method: ChargedMethod, outcome: std::result::Result<Outcome, ProviderError>) -> Result<Setup> {
    let outcome = match outcome {
        Ok(o) => o,
        Err(e) => return Ok(unavailable(e)),
    };
    let mut after = session.clone();
    after.updated_at = caller.now;
    let answer = match outcome {
        Outcome::Succeeded => {
            let mut tx = caller.store.begin().await?;
            let profile = super::profiles::save(&mut tx, caller, session.customer_id, session.provider, &method, session.set_default, false).await?;
            after.status = PROFILE_SESSION.next(ProfileSessionOp::Saved, session.status)?;
            (after.profile_id, after.pending_method, after.last_failure_code, after.completed_at) = (Some(profile.id), None, None, Some(caller.now));
            if !Store::move_profile_session(&mut tx, &after, session.status).await? {
                // another request moved it first: this one saves nothing
                let now = Store::status_in(&mut tx, Stateful::PaymentProfileSessions, caller.org, session.id).await?;
                return Ok(Setup::Closed(now.unwrap_or(session.status)));
            }
            tx.commit().await?;
            return Ok(Setup::Saved(after));
        }
        // (a setup moves no money, so nothing of it settles later)
        Outcome::Processing => return Ok(Setup::Unavailable),
        Outcome::RequiresAction => {
            after.pending_method = Some(method);
            Setup::NeedsAction
        }
        Outcome::Failed(code) => {
            (after.pending_method, after.last_failure_code) = (None, Some(code.clone()));
            Setup::Declined(code)
        }
    };
    Ok(match write(caller, session, &after).await? {
        None => answer,
        Some(status) => Setup::Closed(status),
    })
}
