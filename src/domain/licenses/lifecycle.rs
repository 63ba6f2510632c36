//! The license lifecycle: its transition table, and how a license follows
//! the subscription it is assigned to: ACTIVE when it is ACTIVATED, PAUSED
//! while it is PAUSED or SUSPENDED, BLOCKED while it is BLOCKED, CANCELLED
//! when it ends; each move with its events, in the transaction of the
//! subscription's move.

use crate::domain::Caller;
use crate::domain::catalog::Offerings;
use crate::domain::states::{Operation, Table};
use crate::error::{InternalCode, Result};
use crate::events::{self, Event};
use crate::store::{LicenseRow, Store, SubscriptionRow, Tx};
use crate::wire::latest::{LicenseStatus as Status, SubscriptionStatus};
use chrono::{DateTime, Utc};

/// What moves a license.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LicenseOp {
    /// its subscription is ACTIVATED (activated, or restored)
    SubscriptionActive,
    /// its subscription is PAUSED or SUSPENDED
    SubscriptionPaused,
    /// its subscription is BLOCKED
    SubscriptionBlocked,
    /// its subscription is CANCELLED
    SubscriptionEnds,
}

impl Operation for LicenseOp {
    fn name(self) -> &'static str {
        match self {
            LicenseOp::SubscriptionActive => "its subscription is ACTIVATED",
            LicenseOp::SubscriptionPaused => "its subscription is PAUSED or SUSPENDED",
            LicenseOp::SubscriptionBlocked => "its subscription is BLOCKED",
            LicenseOp::SubscriptionEnds => "its subscription is CANCELLED",
        }
    }

    fn done(self) -> &'static str {
        match self {
            LicenseOp::SubscriptionActive => "activated",
            LicenseOp::SubscriptionPaused => "paused",
            LicenseOp::SubscriptionBlocked => "blocked",
            LicenseOp::SubscriptionEnds => "ended",
        }
    }

    fn requested(self) -> bool {
        false
    }
}

/// Every state but CANCELLED.
const LIVE: &[Status] = &[Status::Pending, Status::Active, Status::Paused, Status::Blocked];

pub const LICENSE: Table<Status, LicenseOp> = Table {
    resource: "license",
    states: &[Status::Pending, Status::Active, Status::Paused, Status::Blocked, Status::Cancelled],
    moves: &[
        (LicenseOp::SubscriptionActive, &[Status::Pending, Status::Paused, Status::Blocked], Status::Active),
        (LicenseOp::SubscriptionPaused, &[Status::Active], Status::Paused),
        (LicenseOp::SubscriptionBlocked, &[Status::Active, Status::Paused], Status::Blocked),
        (LicenseOp::SubscriptionEnds, LIVE, Status::Cancelled),
    ],
    refused: |s| match s {
        Status::Pending => InternalCode::LicensePending,
        Status::Active => InternalCode::LicenseActive,
        Status::Paused => InternalCode::LicensePaused,
        Status::Blocked => InternalCode::LicenseBlocked,
        Status::Cancelled => InternalCode::LicenseCancelled,
    },
};

/// `l` after `op` at `at`, and the events it records (each carrying the
/// license after it); None where the table has no such move.
fn moved(l: &LicenseRow, op: LicenseOp, at: DateTime<Utc>) -> Option<(LicenseRow, &'static [fn(crate::wire::latest::License) -> Event])> {
    let mut after = l.clone();
    after.status = LICENSE.target(op, l.status)?;
    after.updated_at = at.max(l.updated_at);
    after.paused_at = (after.status == Status::Paused).then(|| l.paused_at.unwrap_or(at));
    let events: &'static [fn(crate::wire::latest::License) -> Event] = match (l.status, after.status) {
        (Status::Pending, Status::Active) => {
            after.activated_at = Some(at);
            &[Event::LicenseActivated]
        }
        (_, Status::Cancelled) => {
            (after.cancelled_at, after.ended_at, after.pending) = (Some(l.cancelled_at.unwrap_or(at)), Some(at), None);
            &[Event::LicenseCancelled, Event::LicenseEnded]
        }
        _ => &[Event::LicenseUpdated],
    };
    Some((after, events))
}

/// In the transaction of a move of the subscription from `before` to
/// `after` at `at`: the licenses assigned to it follow, each with its
/// events.
pub async fn follow(caller: &Caller, tx: &mut Tx, before: SubscriptionStatus, after: &SubscriptionRow, at: DateTime<Utc>) -> Result<()> {
    let op = match after.status {
        _ if after.status == before => return Ok(()),
        SubscriptionStatus::Activated => LicenseOp::SubscriptionActive,
        SubscriptionStatus::Paused | SubscriptionStatus::Suspended => LicenseOp::SubscriptionPaused,
        SubscriptionStatus::Blocked => LicenseOp::SubscriptionBlocked,
        SubscriptionStatus::Cancelled => LicenseOp::SubscriptionEnds,
        SubscriptionStatus::Pending => return Ok(()),
    };
    let mut offerings = Offerings::default();
    for l in caller.store.subscription_licenses(tx, caller.org, after.id).await? {
        let Some((moved, told)) = moved(&l, op, at) else { continue };
        if !Store::update_license(tx, caller.org, &moved, &l).await? {
            return Err(crate::error::Error::concurrent_conflict());
        }
        let shown = super::to_wire(&moved, offerings.get(caller, moved.offering_id).await?)?;
        for event in told {
            events::record(tx, caller.org, at, &event(shown.clone())).await?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    /// The Licenses tag of every document publishes this table.
    #[test]
    fn the_documents_publish_the_table() {
        for document in crate::api::routes::DOCUMENTS {
            let tag = crate::domain::states::tag_description(document, "Licenses");
            assert!(tag.contains(&super::LICENSE.markdown()), "the Licenses tag lacks the table:\n{}", super::LICENSE.markdown());
        }
    }
}
