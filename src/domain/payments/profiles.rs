//! Saved payment profiles: listed per customer, saved when a link that
//! asks for it is paid (made the customer's default if asked), and
//! expired with their card, by the organisation's clock.

use super::render;
use crate::domain::{Caller, customers};
use crate::error::{Error, InternalCode, Result};
use crate::events::{self, Event};
use crate::payment_providers::ProviderName;
use crate::states::payments::{PROFILE, PaymentProfileStatus, ProfileOp};
use crate::store::{ChargedMethod, CustomerRow, JobKind, ProfileRow, Store, Tx};
use crate::wire::latest::{self as wire, params};
use chrono::{DateTime, Utc};
use uuid::Uuid;

fn default_of(customer: &CustomerRow) -> Option<String> {
    customer.billing.as_ref().and_then(|b| b.default_payment_profile_id.clone())
}

/// The profile named by `key`, if the caller sees its customer.
async fn find(caller: &Caller, key: &str) -> Result<ProfileRow> {
    let missing = || Error::not_found(InternalCode::PaymentProfileNotFound, "payment profile");
    let id = Uuid::parse_str(key).map_err(|_| missing())?;
    caller.store.profile(caller.org, id).await?.filter(|p| caller.sees_customer(p.customer_id)).ok_or_else(missing)
}

/// A profile of `customer` that can be charged: 404 (naming the field)
/// when there is none by `key`, 409 when it is not ACTIVE.
pub async fn usable(caller: &Caller, key: &str, customer: Uuid) -> Result<ProfileRow> {
    let found = find(caller, key).await.ok().filter(|p| p.customer_id == customer);
    let p = found.ok_or_else(|| {
        Error::missing_reference(InternalCode::PaymentProfileNotFound, "paymentProfileId", "paymentProfileId names no payment profile of the order's customer")
    })?;
    if p.status != PaymentProfileStatus::Active {
        return Err(Error::Conflict {
            code: InternalCode::PaymentProfileNotUsable,
            message: format!("The payment profile is {}, not ACTIVE.", p.status),
            property: "paymentProfileId",
        });
    }
    Ok(p)
}

pub async fn list(caller: &Caller, q: params::PaymentProfileListQuery) -> Result<wire::PaymentProfileList> {
    let customer = customers::find(caller, &q.customer_id).await?;
    let default = default_of(&customer);
    let rows = caller.store.profiles_of(caller.org, customer.id).await?;
    Ok(wire::PaymentProfileList { items: rows.iter().map(|p| render::profile_item(p, default.as_deref())).collect() })
}

pub async fn view(caller: &Caller, key: &str) -> Result<wire::PaymentProfile> {
    let row = find(caller, key).await?;
    let customer = customers::find(caller, &row.customer_id.to_string()).await?;
    render::profile(&row, default_of(&customer).as_deref())
}

/// The payer's details a profile keeps: the customer's billing as it is.
fn billing_details(customer: &wire::Customer) -> serde_json::Value {
    let billing = customer.billing.as_ref();
    let address = billing.and_then(|b| b.address.as_ref()).map(|a| wire::PaymentProfileAddress {
        street: a.street1.clone(),
        street1: Some(a.street1.clone()),
        street2: a.street2.clone(),
        city: a.city.clone(),
        zip: a.zip.clone(),
        country: a.country.clone(),
        state: a.state.clone(),
        region: a.region.clone(),
        attention: a.attention.clone(),
    });
    let details = wire::PaymentProfileBillingDetails { name: Some(customer.name.clone()), email: billing.and_then(|b| b.email.clone()), address };
    serde_json::to_value(details).expect("JSON")
}

/// Saves `method`, kept by `provider` (what a charge was paid with, or
/// what a setup page checked), as a profile of `customer`, in `tx`
/// (`payment_profile.created`); its card's expiry scheduled. Made the
/// default when `set_default` (the customer's billing changed,
/// `customer.updated`), and autopay turned on when `autopay`.
pub async fn save(
    tx: &mut Tx,
    caller: &Caller,
    customer: Uuid,
    provider: ProviderName,
    method: &ChargedMethod,
    set_default: bool,
    autopay: bool,
) -> Result<ProfileRow> {
    let customer = customers::view(caller, &customer.to_string()).await?;
    let customer = &customer;
    let now = caller.now;
    let row = ProfileRow {
        id: crate::domain::new_id(),
        org: caller.org,
        customer_id: customer.customer_id,
        provider,
        method_type: method.kind.clone(),
        status: PaymentProfileStatus::Active,
        display_name: method.display_name.clone(),
        token: method.token.clone(),
        expires_on: method.expires_on,
        billing_details: Some(billing_details(customer)),
        metadata: None,
        created_at: now,
        updated_at: now,
    };
    Store::insert_profile(tx, &row).await?;
    if let Some(last_day) = row.expires_on {
        let due = (last_day + chrono::Days::new(1)).and_hms_opt(0, 0, 0).map(|t| t.and_utc()).unwrap_or(now);
        Store::schedule_job(tx, JobKind::PaymentProfileExpiry, &row.id.to_string(), Some(row.org), due, now).await?;
    }
    // a customer without billing details has no default to set
    let set_default = set_default && customer.billing.is_some();
    let default = if set_default { Some(row.id.to_string()) } else { customer.billing.as_ref().and_then(|b| b.default_payment_profile_id.clone()) };
    events::record(tx, row.org, now, &Event::PaymentProfileCreated(render::profile(&row, default.as_deref())?)).await?;
    if set_default || autopay {
        customers::set_payment_defaults(tx, caller, customer.customer_id, set_default.then_some(row.id), autopay).await?;
    }
    Ok(row)
}

/// The payment.profile_expiry job: a card whose last valid day has passed
/// by `now` is EXPIRED (safe to run again).
pub async fn expire(store: &Store, org: Uuid, id: Uuid, now: DateTime<Utc>) -> Result<()> {
    let Some(row) = store.profile(org, id).await? else { return Ok(()) };
    let (Some(to), Some(last_day)) = (PROFILE.target(ProfileOp::Expire, row.status), row.expires_on) else { return Ok(()) };
    if now.date_naive() <= last_day {
        return Ok(());
    }
    let mut after = row.clone();
    after.status = to;
    after.updated_at = now;
    let mut tx = store.begin().await?;
    Store::move_profile(&mut tx, &after, row.status).await?;
    tx.commit().await
}

/// A charge of `intent` to saved `profile`, off-session (no payer there),
/// PROCESSING: sent by the payment.charge job with its id as the
/// provider's idempotency key (a payment session's, autopay's).
pub fn off_session_charge(intent: &crate::store::IntentRow, profile: &ProfileRow, at: chrono::DateTime<chrono::Utc>) -> crate::store::ChargeRow {
    crate::store::ChargeRow {
        id: crate::domain::new_id(),
        org: intent.org,
        intent_id: intent.id,
        status: crate::states::payments::ChargeStatus::Processing,
        amount_minor: intent.amount_minor,
        currency: intent.currency.clone(),
        provider: profile.provider,
        method: crate::store::ChargedMethod {
            token: profile.token.clone(),
            kind: profile.method_type.clone(),
            display_name: profile.display_name.clone(),
            expires_on: profile.expires_on,
        },
        profile_id: Some(profile.id),
        off_session: true,
        failure_code: None,
        created_at: at,
        updated_at: at,
    }
}
