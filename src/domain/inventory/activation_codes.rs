//! An eSIM's activation code, a secret (it lets a device take the line):
//! who may see it, and each read audited by an event
//! (`subscription.esim_activation_code_viewed`: who, never the code),
//! whether through its subscription or its SIM.

use crate::domain::Caller;
use crate::domain::access::Role;
use crate::error::Result;
use crate::events::{self, Event};
use crate::wire::latest as wire;
use uuid::Uuid;

/// Whether `caller` may see the secrets of `customer`'s subscriptions:
/// a full API key alone, or a user (not a support user) with ADMIN there
/// behind one. A read-only key (the kind handed to BI tools) never does.
pub fn may_see(caller: &Caller, customer: Uuid) -> bool {
    !caller.read_only && caller.require_role(customer, Role::Admin).is_ok()
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
