//! The license's states and its transition table.

use crate::error::InternalCode;
use crate::kinds::kind;
use crate::states::{Operation, Table};
use LicenseStatus as Status;

kind! {
    /// Where a license stands (`licenses.status`).
    LicenseStatus <=> LicenseStatus {
        Pending = "PENDING" <=> Pending,
        Active = "ACTIVE" <=> Active,
        Paused = "PAUSED" <=> Paused,
        Cancelled = "CANCELLED" <=> Cancelled,
        Blocked = "BLOCKED" <=> Blocked,
    }
}

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
    /// POST /licenses/{id}/cancel, effective now
    CancelNow,
    /// POST /licenses/{id}/cancel, effective at a later date (`pendingStatus`)
    CancelLater,
    /// the date of a scheduled cancellation arrives
    CancellationDate,
    /// PUT /licenses/{id}/product-offering-change (now, or scheduled)
    ChangeOffering,
    /// the date of a scheduled offering change arrives
    OfferingChangeDate,
    /// its billing cycle ends (`renewsOn`)
    RenewalDay,
    /// the add-on that carries it ends (CANCELLED or EXPIRED)
    AddonEnds,
}

impl Operation for LicenseOp {
    fn name(self) -> &'static str {
        match self {
            LicenseOp::SubscriptionActive => "its subscription is ACTIVATED",
            LicenseOp::SubscriptionPaused => "its subscription is PAUSED or SUSPENDED",
            LicenseOp::SubscriptionBlocked => "its subscription is BLOCKED",
            LicenseOp::SubscriptionEnds => "its subscription is CANCELLED",
            LicenseOp::CancelNow => "cancel (now)",
            LicenseOp::CancelLater => "cancel (at a later date)",
            LicenseOp::CancellationDate => "the cancellation date arrives",
            LicenseOp::ChangeOffering => "change offering",
            LicenseOp::OfferingChangeDate => "the offering change date arrives",
            LicenseOp::RenewalDay => "its renewal day arrives",
            LicenseOp::AddonEnds => "the add-on carrying it ends",
        }
    }

    fn done(self) -> &'static str {
        match self {
            LicenseOp::SubscriptionActive => "activated",
            LicenseOp::SubscriptionPaused => "paused",
            LicenseOp::SubscriptionBlocked => "blocked",
            LicenseOp::SubscriptionEnds | LicenseOp::CancellationDate | LicenseOp::AddonEnds => "ended",
            LicenseOp::CancelNow => "cancelled",
            LicenseOp::CancelLater => "cancelled at a later date",
            LicenseOp::ChangeOffering | LicenseOp::OfferingChangeDate => "changed to another offering",
            LicenseOp::RenewalDay => "renewed",
        }
    }

    fn requested(self) -> bool {
        matches!(self, LicenseOp::CancelNow | LicenseOp::CancelLater | LicenseOp::ChangeOffering)
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
        (LicenseOp::CancelNow, LIVE, Status::Cancelled),
        (LicenseOp::AddonEnds, LIVE, Status::Cancelled),
        (LicenseOp::CancelLater, &[Status::Active], Status::Active),
        (LicenseOp::CancelLater, &[Status::Paused], Status::Paused),
        (LicenseOp::CancelLater, &[Status::Blocked], Status::Blocked),
        (LicenseOp::CancellationDate, &[Status::Active, Status::Paused, Status::Blocked], Status::Cancelled),
        (LicenseOp::ChangeOffering, &[Status::Pending], Status::Pending),
        (LicenseOp::ChangeOffering, &[Status::Active], Status::Active),
        (LicenseOp::ChangeOffering, &[Status::Paused], Status::Paused),
        (LicenseOp::ChangeOffering, &[Status::Blocked], Status::Blocked),
        (LicenseOp::OfferingChangeDate, &[Status::Pending], Status::Pending),
        (LicenseOp::OfferingChangeDate, &[Status::Active], Status::Active),
        (LicenseOp::OfferingChangeDate, &[Status::Paused], Status::Paused),
        (LicenseOp::OfferingChangeDate, &[Status::Blocked], Status::Blocked),
        // a PAUSED or BLOCKED license is not billed: its cycle passes unrenewed
        (LicenseOp::RenewalDay, &[Status::Active], Status::Active),
        (LicenseOp::RenewalDay, &[Status::Paused], Status::Paused),
        (LicenseOp::RenewalDay, &[Status::Blocked], Status::Blocked),
    ],
    refused: |s| match s {
        Status::Pending => InternalCode::LicensePending,
        Status::Active => InternalCode::LicenseActive,
        Status::Paused => InternalCode::LicensePaused,
        Status::Blocked => InternalCode::LicenseBlocked,
        Status::Cancelled => InternalCode::LicenseCancelled,
    },
};

#[cfg(test)]
mod tests {
    /// The Licenses tag of every document publishes this table.
    #[test]
    fn the_documents_publish_the_table() {
        for document in crate::wire::DOCUMENTS {
            let tag = crate::states::tag_description(document, "Licenses");
            assert!(tag.contains(&super::LICENSE.markdown()), "the Licenses tag lacks the table:\n{}", super::LICENSE.markdown());
        }
    }
}
