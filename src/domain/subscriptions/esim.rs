//! An eSIM's activation code, a secret (it lets a device take the line):
//! who may see it, and its one read, audited by an event. Subscription
//! reads and events never carry it.

use super::find;
use crate::domain::Caller;
use crate::domain::access::Role;
use crate::error::{Error, InternalCode, Result};
use crate::events::{self, Event};
use crate::wire::latest as wire;
use uuid::Uuid;

/// Whether `caller` may see the secrets of `customer`'s subscriptions:
/// a full API key alone, or a user (not a support user) with ADMIN there
/// behind one. A read-only key (the kind handed to BI tools) never does.
pub fn may_see(caller: &Caller, customer: Uuid) -> bool {
    !caller.read_only && caller.require_role(customer, Role::Admin).is_ok()
}

/// The current eSIM profile of the subscription `key`, for the key alone
/// or an ADMIN; the fetch is recorded (who, never the code) in the same
/// transaction as nothing else, before the code is answered.
pub async fn view(caller: &Caller, key: &str) -> Result<wire::EsimActivationCode> {
    // the key caps everything first, as for a write
    if caller.read_only {
        return Err(Error::Forbidden { code: InternalCode::ReadOnlyApiKey, message: "A read-only API key is shown no secret.".into() });
    }
    let row = find(caller, key).await?;
    caller.require_role(row.customer_id, Role::Admin)?;
    let (Some(iccid), Some(code)) = (row.life.iccid.clone(), row.life.esim_activation_code.clone()) else {
        return Err(Error::Conflict {
            code: InternalCode::NoEsimProfile,
            message: "The subscription has no eSIM profile: a PSIM, or an eSIM not activated yet.".into(),
            property: "esimActivationCode",
        });
    };
    record_viewed(caller, row.id, row.customer_id, &iccid).await?;
    Ok(wire::EsimActivationCode { subscription_id: row.id, iccid, esim_activation_code: code })
}

/// Records (and commits) that `caller` is shown the activation code of
/// `subscription`'s profile `iccid`: who, never the code. Done before the
/// code is answered.
pub async fn record_viewed(caller: &Caller, subscription: Uuid, customer: Uuid, iccid: &str) -> Result<()> {
    let viewed = wire::EsimActivationCodeViewed {
        subscription_id: subscription,
        customer_id: customer,
        iccid: iccid.to_string(),
        api_key_id: caller.api_key_id,
        user_id: caller.user.as_ref().map(|u| u.user_id),
    };
    let mut tx = caller.store.begin().await?;
    events::record(&mut tx, caller.org, caller.now, &Event::SubscriptionEsimActivationCodeViewed(viewed)).await?;
    tx.commit().await
}
