//! What falls due on a date for a license: a scheduled cancellation, an
//! offering change, a renewal. Done for whoever reads the license once its
//! time has passed, and by the license.scheduled job for those nobody
//! reads; either way in time order, each dated at its own time.

use super::lifecycle::{change_to, moved, write};
use crate::domain::Caller;
use crate::domain::catalog::Offerings;
use crate::domain::change::Change;
use crate::domain::cycles::midnight;
use crate::error::{Error, Result};
use crate::states::agreed;
use crate::states::licenses::LicenseOp as Op;
use crate::store::{LicenseRow, Store};
use chrono::{DateTime, Utc};
use uuid::Uuid;

/// What falls due next, and when. At the same time, a cancellation comes
/// first (it ends the license before it would renew), then an offering
/// change (the new cycle begins on the new offering).
fn next_due(l: &LicenseRow) -> Option<(DateTime<Utc>, Op)> {
    let cancellation = l.pending.map(|(_, at)| (at, Op::CancellationDate));
    let offering = l.pending_offering.as_ref().map(|p| (p.at, Op::OfferingChangeDate));
    let renewal = l.renews_on.map(|d| (midnight(d), Op::RenewalDay));
    // min_by_key keeps the first of equals
    [cancellation, offering, renewal].into_iter().flatten().min_by_key(|(at, _)| *at)
}

/// `l` with everything due by the caller's now done, in time order.
pub async fn apply_if_due(caller: &Caller, mut l: LicenseRow) -> Result<LicenseRow> {
    let mut offerings = Offerings::default();
    while let Some((at, op)) = next_due(&l).filter(|(at, _)| *at <= caller.now) {
        let (after, told) = match moved(&l, op, at) {
            Some((mut after, told)) => {
                if op == Op::OfferingChangeDate {
                    let pending = agreed(after.pending_offering.take(), "a license's due offering change")?;
                    let offering = caller.store.offering(caller.org, pending.offering_id).await?;
                    let offering = offering.ok_or_else(|| Error::Internal(format!("offering {} vanished", pending.offering_id)))?;
                    change_to(&mut after, &offering, at.date_naive())?;
                }
                (after, told)
            }
            // a state the table does not move only forgets what was due
            None => {
                let mut after = l.clone();
                after.version += 1;
                (after.pending, after.pending_offering, after.renews_on) = (None, None, None);
                (after, &[][..])
            }
        };
        // a renewal of an ACTIVE license: its followers bill the cycle it begins
        let renewal = match (op, l.renews_on) {
            (Op::RenewalDay, Some(renews)) if l.status == crate::states::licenses::LicenseStatus::Active => Some(renews),
            _ => None,
        };
        let mut tx = caller.store.begin().await?;
        l = if write(caller, &mut tx, &mut offerings, &l, &after, told, at).await? {
            if let Some(renews) = renewal {
                caller.follow(&mut tx, Change::LicenseRenewed { license: &l, renews, next: after.renews_on, at }).await?;
            }
            tx.commit().await?;
            after
        } else {
            drop(tx);
            // another request or instance did it first: go on from what it left
            let now = caller.store.license(caller.org, l.id).await?;
            let now = now.ok_or_else(|| Error::Internal(format!("license {} vanished", l.id)))?;
            if now.version == l.version {
                return Err(Error::Internal(format!("license {}: what is due cannot be written", l.id)));
            }
            now
        };
    }
    Ok(l)
}

/// The license.scheduled job: license `id` of `org` with what is due by
/// `now` done.
pub async fn run(store: &Store, org: Uuid, id: Uuid, now: DateTime<Utc>) -> Result<()> {
    let Some(l) = store.license(org, id).await? else { return Ok(()) };
    let caller = Caller::system(store, org, now);
    apply_if_due(&caller, l).await.map(drop)
}
