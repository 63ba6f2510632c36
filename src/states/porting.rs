//! The porting's states and its transition table. A request moves a port-in only while
//! the losing carrier has not accepted it (SERVICE.md rule 3); every
//! refused request is a 409 `porting_state_conflict` naming the state.

use crate::error::InternalCode;
use crate::kinds::kind;
use crate::states::{Operation, Table};
use PortingStatus as S;

kind! {
    /// Where a number moving between operators is (`portings.status`).
    PortingStatus <=> PortingStatus {
        Pending = "PENDING" <=> Pending,
        InProgress = "IN_PROGRESS" <=> InProgress,
        Scheduled = "SCHEDULED" <=> Scheduled,
        Completed = "COMPLETED" <=> Completed,
        Failed = "FAILED" <=> Failed,
    }
}

/// What moves a porting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PortingOp {
    /// POST in-porting: details updated (submitted again), or a new port-in
    /// after one that FAILED
    Request,
    /// the porting job submits it to the losing carrier
    Submit,
    /// the losing carrier accepts it for a date
    Accept,
    /// the losing carrier waits for updated details
    Wait,
    /// the losing carrier rejects it
    Reject,
    /// its date arrives (06:00 UTC, by the organisation's clock)
    Complete,
    /// its subscription was cancelled meanwhile
    SubscriptionCancelled,
}

impl Operation for PortingOp {
    fn name(self) -> &'static str {
        match self {
            PortingOp::Request => "start or update (POST in-porting)",
            PortingOp::Submit => "submitted to the losing carrier",
            PortingOp::Accept => "carrier: accepted for a date",
            PortingOp::Wait => "carrier: waits for updated details",
            PortingOp::Reject => "carrier: rejected",
            PortingOp::Complete => "its date arrives",
            PortingOp::SubscriptionCancelled => "its subscription is cancelled",
        }
    }

    fn done(self) -> &'static str {
        match self {
            PortingOp::Request => "updated",
            PortingOp::Submit => "submitted",
            PortingOp::Accept | PortingOp::Wait | PortingOp::Reject => "answered",
            PortingOp::Complete => "completed",
            PortingOp::SubscriptionCancelled => "failed",
        }
    }

    fn requested(self) -> bool {
        self == PortingOp::Request
    }
}

pub const PORTING: Table<S, PortingOp> = Table {
    resource: "porting",
    states: &[S::Pending, S::InProgress, S::Scheduled, S::Completed, S::Failed],
    moves: &[
        (PortingOp::Request, &[S::Pending, S::InProgress, S::Failed], S::Pending),
        (PortingOp::Submit, &[S::Pending], S::InProgress),
        (PortingOp::Accept, &[S::InProgress], S::Scheduled),
        (PortingOp::Wait, &[S::InProgress], S::InProgress),
        (PortingOp::Reject, &[S::InProgress], S::Failed),
        (PortingOp::Complete, &[S::Scheduled], S::Completed),
        (PortingOp::SubscriptionCancelled, &[S::Pending, S::InProgress, S::Scheduled], S::Failed),
    ],
    refused: |_| InternalCode::PortingStateConflict,
};

#[cfg(test)]
mod tests {
    /// The Porting tag of every document publishes this table.
    #[test]
    fn the_documents_publish_the_table() {
        for document in crate::wire::DOCUMENTS {
            let tag = crate::states::tag_description(document, "Porting");
            assert!(tag.contains(&super::PORTING.markdown()), "the Porting tag lacks the table:\n{}", super::PORTING.markdown());
        }
    }
}
