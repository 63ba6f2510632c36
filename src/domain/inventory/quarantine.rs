//! What a cancelled subscription lets go: its SIMs retire, and its number
//! rests before the pool offers it again (a lease's and a quarantine's end are read by the clock:
//! `store/numbers.rs`).

use crate::error::Result;
use crate::states::subscriptions::SubscriptionStatus;
use crate::store::{Store, SubscriptionRow, Tx};
use chrono::{DateTime, Duration, Utc};

/// How long a number released by a cancelled subscription rests before it
/// is offered again (so calls meant for its last holder do not reach a new
/// one); operators commonly keep 3 months.
pub const QUARANTINE_DAYS: i64 = 90;

/// Follows a subscription's move (`Change::SubscriptionMoved`): cancelled
/// at `at`, its SIMs are retired, its number leaves it and, if it came
/// from the pool, rests.
pub(in crate::domain) async fn subscription_moved(tx: &mut Tx, after: &SubscriptionRow, at: DateTime<Utc>) -> Result<()> {
    if after.status != SubscriptionStatus::Cancelled {
        return Ok(());
    }
    Store::end_sims(tx, after.id, "RETIRED", at).await?;
    Store::release_number(tx, after.id).await?;
    Store::quarantine_number(tx, after.id, at + Duration::days(QUARANTINE_DAYS), at).await
}
