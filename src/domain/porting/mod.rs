//! Number porting: a port-in brings a number from another operator to a
//! subscription, which runs on a temporary number of the pool meanwhile;
//! a port-out takes one of the organisation's numbers to another. Below:
//! the details each country's losing carrier checks (`details`), the
//! transition table (`states`); above: what the porting job does at each
//! state (`step`) and the sandbox's port-out (`outbound`). A porting as the
//! API shows it is `shown`'s (a subscription read shows its port-in).

pub mod details;
pub mod outbound;
pub mod step;

pub use crate::domain::subscriptions::port_in::to_wire;

use super::Caller;
use crate::domain::access::Role;
use crate::domain::catalog::Offerings;
use crate::domain::subscriptions::{self, render::shown_in};
use crate::error::{Detail, Error, InternalCode, Result};
use crate::events::{self, Event};
use crate::kinds::PortingDirection;
use crate::states::porting::{PORTING, PortingOp, PortingStatus};
use crate::states::subscriptions::SubscriptionStatus;
use crate::store::{JobKind, PortingRow, Store, SubscriptionRow, Tx};
use crate::wire::latest as wire;
use chrono::{DateTime, Utc};
use uuid::Uuid;

/// When a porting accepted for `day` moves: 06:00 UTC.
pub fn moves_at(day: chrono::NaiveDate) -> DateTime<Utc> {
    day.and_time(chrono::NaiveTime::from_hms_opt(6, 0, 0).expect("06:00")).and_utc()
}

/// `GET /subscriptions/{id}/in-porting`.
pub async fn view(caller: &Caller, key: &str) -> Result<wire::Porting> {
    let row = subscriptions::find(caller, key).await?;
    let porting = match row.life.port_in {
        Some(id) => caller.store.porting(caller.org, id).await?,
        None => None,
    };
    to_wire(&porting.ok_or_else(|| Error::not_found(InternalCode::PortingNotFound, "port-in"))?)
}

/// Whether `msisdn` may be brought to this operator: a number no
/// subscription of the installation holds, in no other organisation's pool
/// and no porting is moving (409 `msisdn_in_use` otherwise, under `field`).
pub async fn check_portable(caller: &Caller, msisdn: &str, field: &str) -> Result<()> {
    if caller.store.number_in_use(caller.org, msisdn).await? || caller.store.porting_open(msisdn).await? {
        return Err(Error::Refused {
            code: InternalCode::MsisdnInUse,
            message: format!("{msisdn} is in use, or being ported, at this operator."),
            details: vec![Detail::new(field, "msisdn_in_use", "the number is in use")],
        });
    }
    Ok(())
}

/// 400 when `msisdn` is a number of the organisation's own pool.
async fn not_in_pool(caller: &Caller, msisdn: &str) -> Result<()> {
    match caller.store.pool_number(caller.org, msisdn).await? {
        Some(_) => Err(Error::invalid("msisdn", "number_in_pool", "is a number of the organisation's own pool, not another operator's")),
        None => Ok(()),
    }
}

/// A new port-in of `msisdn` to `subscription`, PENDING, in `tx`: the job
/// submits it to the losing carrier at once.
pub async fn create_in(tx: &mut Tx, org: Uuid, subscription: Uuid, msisdn: &str, details: serde_json::Value, now: DateTime<Utc>) -> Result<PortingRow> {
    let p = PortingRow {
        id: crate::domain::new_id(),
        org_id: org,
        subscription_id: subscription,
        msisdn: msisdn.to_string(),
        direction: PortingDirection::Inbound,
        status: PortingStatus::Pending,
        details: Some(details),
        submissions: 0,
        submitted_at: None,
        scheduled_on: None,
        failure_reason: None,
        created_at: now,
        updated_at: now,
    };
    Store::insert_porting(tx, &p).await?;
    Store::schedule_job(tx, JobKind::PortingStep, &p.id.to_string(), Some(org), now, now).await?;
    Ok(p)
}

/// Follows a subscription's move (`Change::SubscriptionMoved`): cancelled
/// at `at`, its port-in, if one is open, fails at its next step, due then.
pub(in crate::domain) async fn subscription_moved(tx: &mut Tx, caller: &Caller, after: &SubscriptionRow, at: DateTime<Utc>) -> Result<()> {
    match after.life.port_in {
        Some(porting) if after.status == SubscriptionStatus::Cancelled => {
            Store::schedule_job(tx, JobKind::PortingStep, &porting.to_string(), Some(caller.org), at, caller.now).await
        }
        _ => Ok(()),
    }
}

/// `POST /subscriptions/{id}/in-porting`: a new port-in (none yet, or the
/// last FAILED), or new details for one PENDING or IN_PROGRESS (submitted
/// again); 409 naming any other state.
pub async fn start(caller: &Caller, key: &str, req: wire::PortInRequest) -> Result<wire::PortInResponse> {
    let row = subscriptions::find(caller, key).await?;
    caller.require_role(row.customer_id, Role::Manager)?;
    if row.status == SubscriptionStatus::Cancelled {
        return Err(Error::Conflict {
            code: InternalCode::SubscriptionCancelled,
            message: "A CANCELLED subscription takes no number.".into(),
            property: "status",
        });
    }
    let latest = match row.life.port_in {
        Some(id) => caller.store.porting(caller.org, id).await?,
        None => None,
    };
    let msisdn = match (&req.msisdn, &latest) {
        (Some(m), _) => m.to_string(),
        (None, Some(p)) => p.msisdn.clone(),
        (None, None) => return Err(Error::invalid("msisdn", "required", "is required: the subscription has no port-in to take the number of")),
    };
    let details = details::check(&msisdn, "msisdn", crate::wire::to_json(&req.details), "details")?;
    let now = caller.now;
    let mut tx = caller.store.begin().await?;
    let (event, porting_id) = match latest.filter(|p| p.status != PortingStatus::Failed) {
        Some(before) => {
            let mut after = before.clone();
            after.status = PORTING.next(PortingOp::Request, before.status)?;
            let details = if after.msisdn != msisdn {
                not_in_pool(caller, &msisdn).await?;
                check_portable(caller, &msisdn, "msisdn").await?;
                // another number, another account: what was given goes
                Store::keep_port_in_secrets(&mut tx, caller.org, &before.id.to_string(), None).await?;
                details
            } else {
                keeping_secrets(details, before.details.as_ref())
            };
            (after.msisdn, after.details, after.failure_reason, after.updated_at) = (msisdn, Some(details), None, now);
            // the updated details are a new submission: the carrier's key
            // (id, submission) of the one before must not carry them
            after.submissions = before.submissions + 1;
            if !Store::update_porting(&mut tx, &after, &before).await? {
                return Err(moved_meanwhile(caller, before.id).await);
            }
            Store::schedule_job(&mut tx, JobKind::PortingStep, &after.id.to_string(), Some(caller.org), now, now).await?;
            (Event::SubscriptionPortInUpdated as fn(wire::Subscription) -> Event, after.id)
        }
        None => {
            not_in_pool(caller, &msisdn).await?;
            check_portable(caller, &msisdn, "msisdn").await?;
            let p = create_in(&mut tx, caller.org, row.id, &msisdn, details, now).await?;
            (Event::SubscriptionPortInCreated as fn(wire::Subscription) -> Event, p.id)
        }
    };
    let mut shown_row = row.clone();
    shown_row.life.port_in = Some(porting_id);
    let shown = shown_in(caller, Some(&mut tx), &mut Offerings::default(), &shown_row).await?;
    events::record(&mut tx, caller.org, now, &event(shown.clone())).await?;
    tx.commit().await?;
    Ok(wire::PortInResponse { subscription: Some(shown) })
}

/// New details of the same number sent without a secret given before (the
/// transfer PIN, the account number) keep it: it is write-only, so the
/// caller cannot read it back to send it again. They show that it was
/// given, as before.
fn keeping_secrets(mut new: serde_json::Value, before: Option<&serde_json::Value>) -> serde_json::Value {
    for (secret, shown) in [("passcode", "passcodeProvided"), ("accountNumber", "accountNumberLast4")] {
        let kept = before.and_then(|b| b.get(shown)).filter(|_| new.get(secret).is_none()).cloned();
        if let (Some(object), Some(kept)) = (new.as_object_mut(), kept) {
            object.insert(shown.to_string(), kept);
        }
    }
    new
}

/// The 409 of a request whose porting another moved first: the state it
/// meets now, or (a move the table allows again) the concurrent conflict,
/// which a retry resolves.
async fn moved_meanwhile(caller: &Caller, id: Uuid) -> Error {
    match caller.store.porting(caller.org, id).await {
        Ok(Some(now)) => PORTING.next(PortingOp::Request, now.status).err().unwrap_or_else(Error::concurrent_conflict),
        Ok(None) => Error::Internal(format!("porting {id} vanished")),
        Err(e) => e,
    }
}
