//! A port-out: another operator takes one of the organisation's numbers.
//! The sandbox plays that operator (`switchboard admin sandbox port-out`):
//! the porting is SCHEDULED at once for the next working day, and on it
//! the subscription is cancelled ("the number is ported out") and its
//! number is PORTED_OUT.

use crate::domain::Caller;
use crate::domain::change::Change;
use crate::error::{Error, InternalCode, Result};
use crate::kinds::PortingDirection;
use crate::network::Network;
use crate::states::porting::{PORTING, PortingOp, PortingStatus};
use crate::states::subscriptions::{SUBSCRIPTION, SubscriptionOp as Op};
use crate::store::{JobKind, PortingRow, Store, SubscriptionRow};
use chrono::{DateTime, Utc};

/// Another operator asks for `msisdn`, a number of a live subscription of
/// the caller's organisation: a port-out SCHEDULED for the next working
/// day (by the organisation's clock).
pub async fn request(caller: &Caller, msisdn: &str) -> Result<PortingRow> {
    let filter = crate::store::SubscriptionFilter { msisdn: Some(msisdn.to_string()), ..Default::default() };
    let page = caller.store.subscriptions(caller.org, &filter, None, 10).await?;
    let Some(subscription) = page.items.into_iter().find(|s| SUBSCRIPTION.target(Op::PortedOut, s.status).is_some()) else {
        return Err(Error::not_found(InternalCode::SubscriptionNotFound, "live subscription with this number"));
    };
    if caller.store.porting_open(msisdn).await? {
        return Err(Error::Conflict { code: InternalCode::PortingStateConflict, message: format!("{msisdn} is being ported already."), property: "msisdn" });
    }
    let day = crate::carrier::working_days_after(caller.now.date_naive(), 1);
    let p = PortingRow {
        id: crate::domain::new_id(),
        org_id: caller.org,
        subscription_id: subscription.id,
        msisdn: msisdn.to_string(),
        direction: PortingDirection::Outbound,
        status: PortingStatus::Scheduled,
        details: None,
        submissions: 0,
        submitted_at: None,
        scheduled_on: Some(day),
        failure_reason: None,
        created_at: caller.now,
        updated_at: caller.now,
    };
    let mut tx = caller.store.begin().await?;
    Store::insert_porting(&mut tx, &p).await?;
    Store::schedule_job(&mut tx, JobKind::PortingStep, &p.id.to_string(), Some(caller.org), super::moves_at(day), caller.now).await?;
    tx.commit().await?;
    Ok(p)
}

/// The port-out `p` of `subscription` happens at `at`: the network lets
/// the number go first, then, in one transaction, the porting COMPLETED
/// and what follows the number ported out (`Change::NumberPortedOut`: the
/// subscription CANCELLED, the number PORTED_OUT).
pub async fn complete(caller: &Caller, network: &dyn Network, p: &PortingRow, subscription: &SubscriptionRow, at: DateTime<Utc>) -> Result<()> {
    network.end_service(&subscription.msisdn, at).await.map_err(|r| Error::Internal(format!("the network refused porting {} out: {}", p.id, r.0)))?;
    let mut after = p.clone();
    (after.status, after.updated_at) = (PORTING.next(PortingOp::Complete, p.status)?, at);
    let mut tx = caller.store.begin().await?;
    if !Store::update_porting(&mut tx, &after, p).await? {
        return Ok(());
    }
    caller.follow(&mut tx, Change::NumberPortedOut { subscription, msisdn: &p.msisdn, at }).await?;
    tx.commit().await
}
