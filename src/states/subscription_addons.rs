//! The add-on's states and its transition table.

use crate::error::InternalCode;
use crate::kinds::kind;
use crate::states::{Operation, Table};
use AddonStatus as Status;

kind! {
    /// Where an add-on stands (`subscription_addons.status`).
    AddonStatus <=> SubscriptionAddonStatus {
        Pending = "PENDING" <=> Pending,
        Active = "ACTIVE" <=> Active,
        Cancelled = "CANCELLED" <=> Cancelled,
        Expired = "EXPIRED" <=> Expired,
    }
}

/// What moves an add-on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AddonOp {
    /// its subscription is ACTIVATED (an INSTANT add-on)
    SubscriptionActive,
    /// the network reports the subscription's first usage (a FIRST_USE add-on)
    FirstUse,
    /// its product's validityDays run out
    ValidityEnds,
    /// its subscription is CANCELLED
    SubscriptionEnds,
    /// POST .../addons/cancel
    CancelNow,
    /// POST .../addons/cancel with atPeriodEnd (`pendingStatus` CANCELLED)
    CancelAtPeriodEnd,
    /// the end of its period comes with a cancellation scheduled for it
    CancellationDate,
    /// PUT .../addons/product-offering-change (now, or scheduled)
    ChangeOffering,
    /// the date of a scheduled offering change arrives
    OfferingChangeDate,
}

impl Operation for AddonOp {
    fn name(self) -> &'static str {
        match self {
            AddonOp::SubscriptionActive => "its subscription is ACTIVATED (INSTANT add-ons)",
            AddonOp::FirstUse => "the network reports usage (FIRST_USE add-ons)",
            AddonOp::ValidityEnds => "its validityDays run out",
            AddonOp::SubscriptionEnds => "its subscription is CANCELLED",
            AddonOp::CancelNow => "cancel",
            AddonOp::CancelAtPeriodEnd => "cancel (at period end)",
            AddonOp::CancellationDate => "the end of its period comes, cancelled at it",
            AddonOp::ChangeOffering => "product-offering-change",
            AddonOp::OfferingChangeDate => "a scheduled offering change's date arrives",
        }
    }

    fn done(self) -> &'static str {
        match self {
            AddonOp::SubscriptionActive | AddonOp::FirstUse => "activated",
            AddonOp::ValidityEnds => "expired",
            AddonOp::SubscriptionEnds | AddonOp::CancellationDate => "ended",
            AddonOp::CancelNow => "cancelled",
            AddonOp::CancelAtPeriodEnd => "cancelled at the end of its period",
            AddonOp::ChangeOffering | AddonOp::OfferingChangeDate => "changed to another offering",
        }
    }

    fn requested(self) -> bool {
        matches!(self, AddonOp::CancelNow | AddonOp::CancelAtPeriodEnd | AddonOp::ChangeOffering)
    }
}

pub const ADDON: Table<Status, AddonOp> = Table {
    resource: "add-on",
    states: &[Status::Pending, Status::Active, Status::Cancelled, Status::Expired],
    moves: &[
        (AddonOp::SubscriptionActive, &[Status::Pending], Status::Active),
        (AddonOp::FirstUse, &[Status::Pending], Status::Active),
        (AddonOp::ValidityEnds, &[Status::Active], Status::Expired),
        (AddonOp::SubscriptionEnds, &[Status::Pending, Status::Active], Status::Cancelled),
        (AddonOp::CancelNow, &[Status::Pending, Status::Active], Status::Cancelled),
        (AddonOp::CancelAtPeriodEnd, &[Status::Active], Status::Active),
        (AddonOp::CancellationDate, &[Status::Active], Status::Cancelled),
        (AddonOp::ChangeOffering, &[Status::Pending], Status::Pending),
        (AddonOp::ChangeOffering, &[Status::Active], Status::Active),
        (AddonOp::OfferingChangeDate, &[Status::Pending], Status::Pending),
        (AddonOp::OfferingChangeDate, &[Status::Active], Status::Active),
    ],
    refused: |s| match s {
        Status::Pending => InternalCode::AddonPending,
        Status::Active => InternalCode::AddonActive,
        Status::Cancelled => InternalCode::AddonCancelled,
        Status::Expired => InternalCode::AddonExpired,
    },
};
