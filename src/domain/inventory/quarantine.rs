//! A number a cancelled subscription lets go rests before the pool offers
//! it again (a lease's and a quarantine's end are read by the clock:
//! `store/numbers.rs`).

use crate::error::Result;
use crate::store::{Store, Tx};
use chrono::Duration;
use uuid::Uuid;

/// How long a number released by a cancelled subscription rests before it
/// is offered again (so calls meant for its last holder do not reach a new
/// one); operators commonly keep 3 months.
pub const QUARANTINE_DAYS: i64 = 90;

/// The subscription `id` was cancelled at `at`: its pool number rests.
pub async fn released(tx: &mut Tx, id: Uuid, at: chrono::DateTime<chrono::Utc>) -> Result<()> {
    Store::quarantine_number(tx, id, at + Duration::days(QUARANTINE_DAYS), at).await
}
