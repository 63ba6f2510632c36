//! A webhook delivery's states and its transition table.

use crate::error::InternalCode;
use crate::kinds::kind;
use crate::states::{Operation, Table};
use DeliveryStatus as Status;

kind! {
    /// Where a webhook delivery stands (`webhook_deliveries.status`):
    /// PENDING is due again (or held while its endpoint is disabled),
    /// FAILED gave up after every attempt of its round failed.
    DeliveryStatus <=> WebhookDeliveryStatus {
        Pending = "PENDING" <=> Pending,
        Succeeded = "SUCCEEDED" <=> Succeeded,
        Failed = "FAILED" <=> Failed,
    }
}

/// What moves a delivery.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Move {
    /// the receiver answers 2xx
    Acknowledged,
    /// an attempt fails and the round's schedule has another
    TriedAgain,
    /// an attempt fails and the round's schedule is over
    GivenUp,
    /// POST /events/{id}/redeliver, or a replay that takes it in
    SentAgain,
}

impl Operation for Move {
    fn name(self) -> &'static str {
        match self {
            Move::Acknowledged => "an attempt is acknowledged (2xx)",
            Move::TriedAgain => "an attempt fails, another is scheduled",
            Move::GivenUp => "an attempt fails, the schedule is over",
            Move::SentAgain => "redeliver, or a replay that takes it in",
        }
    }

    fn done(self) -> &'static str {
        match self {
            Move::Acknowledged => "acknowledged",
            Move::TriedAgain => "tried again",
            Move::GivenUp => "given up",
            Move::SentAgain => "sent again",
        }
    }

    fn requested(self) -> bool {
        // a redelivery takes a delivery in any status; the others happen
        false
    }
}

/// The one table of a delivery's moves (the Webhooks tag of the documents
/// shows it). Only a PENDING delivery is attempted; sending one again
/// starts a new round from any status.
pub const DELIVERY: Table<Status, Move> = Table {
    resource: "webhook delivery",
    states: &[Status::Pending, Status::Succeeded, Status::Failed],
    moves: &[
        (Move::Acknowledged, &[Status::Pending], Status::Succeeded),
        (Move::TriedAgain, &[Status::Pending], Status::Pending),
        (Move::GivenUp, &[Status::Pending], Status::Failed),
        (Move::SentAgain, &[Status::Pending, Status::Succeeded, Status::Failed], Status::Pending),
    ],
    // (nothing a request asks for is refused)
    refused: |_| InternalCode::Conflict,
};
