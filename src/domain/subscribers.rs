//! Subscribers: the person who uses a subscription, as distinct from the
//! customer who pays. Every subscription has one from its creation
//! (`Subscription.subscriberId`), empty until set; whoever sees the
//! subscription sees its subscriber, and setting one is a move of the
//! subscription (`subscription.subscriber_set`).

use super::Caller;
use super::access::Role;
use super::subscriptions::{
    self,
    write::{Also, commit},
};
use super::values::Checks;
use crate::error::{Error, InternalCode, Result};
use crate::events::Event;
use crate::states::subscriptions::{SUBSCRIPTION, SubscriptionOp as Op};
use crate::store::SubscriptionRow;
use crate::wire::latest as wire;
use chrono::{DateTime, Utc};
use uuid::Uuid;

/// The subscription of subscriber `key`, if the caller sees it; else 404.
async fn find(caller: &Caller, key: &str) -> Result<SubscriptionRow> {
    let missing = || Error::not_found(InternalCode::SubscriberNotFound, "subscriber");
    let id = Uuid::parse_str(key).map_err(|_| missing())?;
    let row = caller.store.subscription_of_subscriber(caller.org, id).await?.filter(|s| caller.sees_customer(s.customer_id)).ok_or_else(missing)?;
    // what fell due (a cancellation) shows as done
    subscriptions::scheduled::apply_if_due(caller, row).await
}

fn to_wire(s: &SubscriptionRow, set: wire::SetSubscriberRequest, updated_at: DateTime<Utc>) -> wire::Subscriber {
    wire::Subscriber {
        subscriber_id: s.subscriber_id,
        subscription_id: s.id,
        customer_id: s.customer_id,
        first_name: set.first_name,
        last_name: set.last_name,
        contact: set.contact,
        date_of_birth: set.date_of_birth,
        identity: set.identity,
        address: set.address,
        locale: set.locale,
        metadata: set.metadata,
        created_at: s.created_at,
        updated_at,
    }
}

/// What subscriber of `s` was last set to (empty, as of the subscription's
/// creation, until set).
async fn current(caller: &Caller, s: &SubscriptionRow) -> Result<(wire::SetSubscriberRequest, DateTime<Utc>)> {
    match caller.store.subscriber(caller.org, s.subscriber_id).await? {
        Some((doc, at)) => Ok((serde_json::from_value(doc).map_err(|e| Error::Internal(format!("subscriber {}: {e}", s.subscriber_id)))?, at)),
        None => Ok((wire::SetSubscriberRequest::default(), s.created_at)),
    }
}

pub async fn view(caller: &Caller, key: &str) -> Result<wire::Subscriber> {
    let s = find(caller, key).await?;
    let (set, at) = current(caller, &s).await?;
    Ok(to_wire(&s, set, at))
}

/// Rules beyond the schema: a real contact number, an assigned country, a
/// birth date not in the future.
fn check(caller: &Caller, req: &wire::SetSubscriberRequest) -> Result<()> {
    let mut checks = Checks::default();
    if let Some(c) = &req.contact {
        checks.contact(c);
    }
    if let Some(a) = &req.address {
        checks.address("address", a);
    }
    if let Some(i) = &req.identity {
        checks.country("identity.country", &i.country);
    }
    if req.date_of_birth.is_some_and(|d| d > caller.now.date_naive()) {
        checks.add("dateOfBirth", "invalid_date", "must not be in the future");
    }
    checks.finish()
}

pub async fn set(caller: &Caller, key: &str, req: wire::SetSubscriberRequest) -> Result<wire::Subscriber> {
    let before = find(caller, key).await?;
    caller.require_role(before.customer_id, Role::Manager)?;
    check(caller, &req)?;
    let status = SUBSCRIPTION.next(Op::SetSubscriber, before.status)?;
    let (now_set, set_at) = current(caller, &before).await?;
    if now_set == req {
        // already so: nothing changes, nothing is recorded
        return Ok(to_wire(&before, now_set, set_at));
    }
    let mut after = before.clone();
    (after.status, after.updated_at) = (status, caller.now);
    let doc = crate::wire::to_json(&req);
    commit(caller, &before, &after, Also::Subscriber(&doc), Op::SetSubscriber, &[Event::SubscriptionSubscriberSet], caller.now).await?;
    Ok(to_wire(&after, req, caller.now))
}
