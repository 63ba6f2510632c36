//! The subscription's states and its transition table: which operation
//! moves which state to which. Every other combination is a 409 whose `internalCode` names
//! the state (`subscription_paused`, ...).

use crate::error::InternalCode;
use crate::kinds::kind;
use crate::states::{Operation, Table};
use SubscriptionStatus as Status;

kind! {
    /// Where a subscription stands (`subscriptions.status`, and the state
    /// a scheduled move leads to).
    SubscriptionStatus <=> SubscriptionStatus {
        Pending = "PENDING" <=> Pending,
        Activated = "ACTIVATED" <=> Activated,
        Blocked = "BLOCKED" <=> Blocked,
        Cancelled = "CANCELLED" <=> Cancelled,
        Paused = "PAUSED" <=> Paused,
        Suspended = "SUSPENDED" <=> Suspended,
    }
}

/// What moves a subscription.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SubscriptionOp {
    Activate,
    Pause,
    Suspend,
    BlockSim,
    Restore,
    ChangeSim,
    /// cancel, effective now
    CancelNow,
    /// cancel, effective at a later date (`pendingStatus` CANCELLED)
    CancelLater,
    WithdrawCancellation,
    /// the network completes an activation it took with a delay
    ActivationCompletes,
    /// the date of a scheduled cancellation arrives
    CancellationDate,
    /// PUT product-offering-change (now, or scheduled for later)
    ChangeOffering,
    /// the date of a scheduled offering change arrives
    OfferingChangeDate,
    /// a billing cycle ends and the next begins
    RenewalDay,
    /// PUT /subscribers/{id}
    SetSubscriber,
    /// dunning: an invoice of its customer is overdue
    DunningSuspend,
    /// dunning: the invoice that suspended it is paid, another overdue one
    /// keeps it suspended
    DunningTransfer,
    /// dunning: the invoice that suspended it is paid
    DunningRestore,
    /// dunning: the invoice that suspended it is uncollectible
    DunningCancel,
    /// its number was ported out to another operator
    PortedOut,
}

impl Operation for SubscriptionOp {
    fn name(self) -> &'static str {
        use SubscriptionOp::*;
        match self {
            Activate => "activate",
            Pause => "pause",
            Suspend => "suspend",
            BlockSim => "block-sim",
            Restore => "restore",
            ChangeSim => "change-sim",
            CancelNow => "cancel (now)",
            CancelLater => "cancel (at a later date)",
            WithdrawCancellation => "withdraw-cancellation",
            ActivationCompletes => "the network completes a delayed activation",
            CancellationDate => "the cancellation date arrives",
            ChangeOffering => "product-offering-change",
            OfferingChangeDate => "a scheduled offering change's date arrives",
            RenewalDay => "the renewal day arrives",
            SetSubscriber => "set its subscriber",
            DunningSuspend => "dunning: an invoice overdue",
            DunningTransfer => "dunning: the invoice paid, another overdue",
            DunningRestore => "dunning: the invoice paid",
            DunningCancel => "dunning: the invoice uncollectible",
            PortedOut => "the number is ported out",
        }
    }

    fn done(self) -> &'static str {
        use SubscriptionOp::*;
        match self {
            Activate => "activated",
            Pause => "paused",
            Suspend => "suspended",
            BlockSim => "blocked",
            Restore => "restored",
            ChangeSim => "given a new SIM",
            CancelNow => "cancelled",
            CancelLater => "cancelled at a later date",
            WithdrawCancellation => "kept (its cancellation withdrawn)",
            ActivationCompletes => "activated",
            CancellationDate => "ended",
            ChangeOffering | OfferingChangeDate => "changed to another offering",
            RenewalDay => "renewed",
            SetSubscriber => "given a subscriber",
            DunningSuspend => "suspended",
            DunningTransfer => "kept suspended",
            DunningRestore => "restored",
            DunningCancel | PortedOut => "cancelled",
        }
    }

    fn requested(self) -> bool {
        use SubscriptionOp::*;
        !matches!(
            self,
            ActivationCompletes
                | CancellationDate
                | OfferingChangeDate
                | RenewalDay
                | DunningSuspend
                | DunningTransfer
                | DunningRestore
                | DunningCancel
                | PortedOut
        )
    }
}

/// The states a subscription in service (or held out of it) is in: not
/// PENDING, not CANCELLED.
const LIVE: &[Status] = &[Status::Activated, Status::Paused, Status::Suspended, Status::Blocked];
const NOT_ENDED: &[Status] = &[Status::Pending, Status::Activated, Status::Paused, Status::Suspended, Status::Blocked];

pub const SUBSCRIPTION: Table<Status, SubscriptionOp> = Table {
    resource: "subscription",
    states: &[Status::Pending, Status::Activated, Status::Paused, Status::Suspended, Status::Blocked, Status::Cancelled],
    moves: &[
        (SubscriptionOp::Activate, &[Status::Pending], Status::Activated),
        (SubscriptionOp::Pause, &[Status::Activated], Status::Paused),
        (SubscriptionOp::Suspend, &[Status::Activated], Status::Suspended),
        (SubscriptionOp::BlockSim, &[Status::Activated, Status::Paused, Status::Suspended], Status::Blocked),
        (SubscriptionOp::Restore, &[Status::Paused, Status::Suspended, Status::Blocked], Status::Activated),
        (SubscriptionOp::ChangeSim, &[Status::Pending], Status::Pending),
        (SubscriptionOp::ChangeSim, &[Status::Activated], Status::Activated),
        (SubscriptionOp::ChangeSim, &[Status::Paused], Status::Paused),
        (SubscriptionOp::ChangeSim, &[Status::Suspended], Status::Suspended),
        (SubscriptionOp::ChangeSim, &[Status::Blocked], Status::Blocked),
        (SubscriptionOp::CancelNow, NOT_ENDED, Status::Cancelled),
        (SubscriptionOp::CancelLater, &[Status::Activated], Status::Activated),
        (SubscriptionOp::CancelLater, &[Status::Paused], Status::Paused),
        (SubscriptionOp::CancelLater, &[Status::Suspended], Status::Suspended),
        (SubscriptionOp::CancelLater, &[Status::Blocked], Status::Blocked),
        (SubscriptionOp::WithdrawCancellation, &[Status::Activated], Status::Activated),
        (SubscriptionOp::WithdrawCancellation, &[Status::Paused], Status::Paused),
        (SubscriptionOp::WithdrawCancellation, &[Status::Suspended], Status::Suspended),
        (SubscriptionOp::WithdrawCancellation, &[Status::Blocked], Status::Blocked),
        (SubscriptionOp::ActivationCompletes, &[Status::Pending], Status::Activated),
        (SubscriptionOp::CancellationDate, LIVE, Status::Cancelled),
        (SubscriptionOp::ChangeOffering, &[Status::Pending], Status::Pending),
        (SubscriptionOp::ChangeOffering, &[Status::Activated], Status::Activated),
        (SubscriptionOp::ChangeOffering, &[Status::Paused], Status::Paused),
        (SubscriptionOp::ChangeOffering, &[Status::Suspended], Status::Suspended),
        (SubscriptionOp::ChangeOffering, &[Status::Blocked], Status::Blocked),
        (SubscriptionOp::OfferingChangeDate, &[Status::Pending], Status::Pending),
        (SubscriptionOp::OfferingChangeDate, &[Status::Activated], Status::Activated),
        (SubscriptionOp::OfferingChangeDate, &[Status::Paused], Status::Paused),
        (SubscriptionOp::OfferingChangeDate, &[Status::Suspended], Status::Suspended),
        (SubscriptionOp::OfferingChangeDate, &[Status::Blocked], Status::Blocked),
        (SubscriptionOp::RenewalDay, &[Status::Activated], Status::Activated),
        (SubscriptionOp::RenewalDay, &[Status::Paused], Status::Paused),
        (SubscriptionOp::RenewalDay, &[Status::Suspended], Status::Suspended),
        (SubscriptionOp::RenewalDay, &[Status::Blocked], Status::Blocked),
        (SubscriptionOp::SetSubscriber, &[Status::Pending], Status::Pending),
        (SubscriptionOp::SetSubscriber, &[Status::Activated], Status::Activated),
        (SubscriptionOp::SetSubscriber, &[Status::Paused], Status::Paused),
        (SubscriptionOp::SetSubscriber, &[Status::Suspended], Status::Suspended),
        (SubscriptionOp::SetSubscriber, &[Status::Blocked], Status::Blocked),
        (SubscriptionOp::DunningSuspend, &[Status::Activated], Status::Suspended),
        (SubscriptionOp::DunningTransfer, &[Status::Suspended], Status::Suspended),
        (SubscriptionOp::DunningRestore, &[Status::Suspended], Status::Activated),
        (SubscriptionOp::DunningCancel, LIVE, Status::Cancelled),
        (SubscriptionOp::PortedOut, &[Status::Pending, Status::Activated, Status::Paused, Status::Suspended, Status::Blocked], Status::Cancelled),
    ],
    refused: |s| match s {
        Status::Pending => InternalCode::SubscriptionPending,
        Status::Activated => InternalCode::SubscriptionActivated,
        Status::Paused => InternalCode::SubscriptionPaused,
        Status::Suspended => InternalCode::SubscriptionSuspended,
        Status::Blocked => InternalCode::SubscriptionBlocked,
        Status::Cancelled => InternalCode::SubscriptionCancelled,
    },
};

#[cfg(test)]
mod tests {
    /// The Subscriptions tag of every document publishes this table.
    #[test]
    fn the_documents_publish_the_table() {
        for document in crate::wire::DOCUMENTS {
            let tag = crate::states::tag_description(document, "Subscriptions");
            assert!(tag.contains(&super::SUBSCRIPTION.markdown()), "the Subscriptions tag lacks the table:\n{}", super::SUBSCRIPTION.markdown());
        }
    }
}
