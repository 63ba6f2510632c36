//! Cancelling a license (POST /licenses/{id}/cancel): now, or at a later
//! date (`pendingStatus` until then), with its events in the transaction.

use super::find;
use super::lifecycle::{moved, write};
use super::render::shown;
use crate::domain::Caller;
use crate::domain::access::Role;
use crate::domain::catalog::Offerings;
use crate::domain::cycles::midnight;
use crate::error::{Error, Result};
use crate::states::agreed;
use crate::states::licenses::{LICENSE, LicenseOp};
use crate::wire::latest as wire;

pub async fn cancel(caller: &Caller, key: &str, req: wire::CancelLicenseRequest) -> Result<wire::License> {
    let before = find(caller, key).await?;
    caller.require_role(before.customer_id, Role::Admin)?;
    let now = caller.now;
    // a date after today schedules; today, a past date or none: now
    let later = req.effective_date.filter(|d| *d > now.date_naive()).map(midnight);
    let (op, at) = match later {
        Some(date) => (LicenseOp::CancelLater, date),
        None => (LicenseOp::CancelNow, now),
    };
    LICENSE.next(op, before.status)?;
    let (mut after, told) = agreed(moved(&before, op, at), "a license's cancellation")?;
    (after.cancelled_at, after.updated_at) = (Some(now), now);
    let mut offerings = Offerings::default();
    let mut tx = caller.store.begin().await?;
    if !write(caller, &mut tx, &mut offerings, &before, &after, told, now).await? {
        return Err(Error::concurrent_conflict());
    }
    tx.commit().await?;
    shown(caller, &mut offerings, &after).await
}
