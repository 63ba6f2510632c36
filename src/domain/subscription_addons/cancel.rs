//! Cancelling add-ons (POST /subscriptions/{id}/addons/cancel): the named
//! add-ons, now or at the end of each one's period, all or none, with one
//! `subscription.updated` in the transaction that cancels them.

use super::lifecycle::{addons_of, moved, offering_of, tell, write};
use super::shown;
use crate::domain::Caller;
use crate::domain::access::Role;
use crate::domain::cycles::midnight;
use crate::domain::subscriptions::find;
use crate::error::{Error, InternalCode, Result};
use crate::states::agreed;
use crate::states::subscription_addons::{ADDON, AddonOp, AddonStatus as Status};
use crate::store::{AddonRow, SubscriptionRow};
use crate::wire::latest as wire;
use chrono::{DateTime, Utc};

/// The end of `a`'s period: its expiry, or else its subscription's next
/// renewal; None when it has neither.
fn period_end(a: &AddonRow, s: &SubscriptionRow) -> Option<DateTime<Utc>> {
    a.expires_at.or(s.life.renews_on.map(midnight))
}

pub async fn cancel(caller: &Caller, key: &str, req: wire::CancelSubscriptionAddonsRequest) -> Result<wire::SubscriptionAddonList> {
    let s = find(caller, key).await?;
    caller.require_role(s.customer_id, Role::Admin)?;
    let all = addons_of(caller, &s).await?;
    let now = caller.now;
    let mut moves = vec![];
    // left out: cancelled now
    let at_period_end = req.at_period_end.unwrap_or(false);
    for (i, id) in req.subscription_addon_ids.iter().enumerate() {
        if req.subscription_addon_ids[..i].contains(id) {
            return Err(Error::invalid("subscriptionAddonIds", "duplicate", "names an add-on twice"));
        }
        let Some(before) = all.iter().find(|a| a.id == *id) else {
            return Err(Error::missing_reference(
                InternalCode::SubscriptionAddonNotFound,
                "subscriptionAddonIds",
                format!("{id} is not an add-on of this subscription"),
            ));
        };
        let offering = offering_of(&caller.store, None, caller.org, before).await?;
        if at_period_end {
            ADDON.next(AddonOp::CancelAtPeriodEnd, before.status)?;
        }
        let after = match period_end(before, &s).filter(|_| at_period_end) {
            Some(end) => {
                let mut after = before.clone();
                (after.pending, after.cancelled_at, after.updated_at) = (Some((Status::Cancelled, end)), Some(now), now);
                after
            }
            // now (or at period end, when it has no end)
            None => {
                ADDON.next(AddonOp::CancelNow, before.status)?;
                agreed(moved(before, &offering, AddonOp::CancelNow, now), "an add-on's cancellation")?
            }
        };
        moves.push((before.clone(), after));
    }
    let mut tx = caller.store.begin().await?;
    for (before, after) in &moves {
        if !write(&caller.store, &mut tx, caller.org, before, after, now).await? {
            return Err(Error::concurrent_conflict());
        }
    }
    tell(caller, &mut tx, &s, now).await?;
    tx.commit().await?;
    let rows: Vec<AddonRow> = moves.into_iter().map(|(_, after)| after).collect();
    Ok(wire::SubscriptionAddonList { items: shown(caller, &rows).await? })
}
