//! The order's and its line items' states and transition tables.

use crate::error::InternalCode;
use crate::kinds::kind;
use crate::states::{Operation, Table};
use OrderStatus as Status;

kind! {
    /// Where an order stands (`orders.status`).
    OrderStatus <=> OrderStatus {
        Draft = "DRAFT" <=> Draft,
        Approved = "APPROVED" <=> Approved,
        Submitted = "SUBMITTED" <=> Submitted,
        Cancelled = "CANCELLED" <=> Cancelled,
        Expired = "EXPIRED" <=> Expired,
    }
}

kind! {
    /// Where an order's line stands (in the order's stored document).
    LineStatus <=> OrderLineItemStatus {
        Pending = "PENDING" <=> Pending,
        Submitted = "SUBMITTED" <=> Submitted,
        Cancelled = "CANCELLED" <=> Cancelled,
    }
}

/// What moves an order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OrderOp {
    /// `PUT /orders/{id}`: changes lines or fields, keeps the state
    Change,
    Approve,
    Submit,
    Cancel,
    /// `expiresAt` passes (by the clock, not an operation)
    Expire,
}

impl Operation for OrderOp {
    fn name(self) -> &'static str {
        match self {
            OrderOp::Change => "change (PUT)",
            OrderOp::Approve => "approve",
            OrderOp::Submit => "submit",
            OrderOp::Cancel => "cancel",
            OrderOp::Expire => "expiresAt passes",
        }
    }

    fn done(self) -> &'static str {
        match self {
            OrderOp::Change => "changed",
            OrderOp::Approve => "approved",
            OrderOp::Submit => "submitted",
            OrderOp::Cancel => "cancelled",
            OrderOp::Expire => "expired",
        }
    }

    fn requested(self) -> bool {
        self != OrderOp::Expire
    }
}

/// The states an order may still leave.
pub const OPEN: &[Status] = &[Status::Draft, Status::Approved];

pub const ORDER: Table<Status, OrderOp> = Table {
    resource: "order",
    states: &[Status::Draft, Status::Approved, Status::Submitted, Status::Cancelled, Status::Expired],
    moves: &[
        (OrderOp::Change, &[Status::Draft], Status::Draft),
        (OrderOp::Approve, &[Status::Draft], Status::Approved),
        (OrderOp::Submit, OPEN, Status::Submitted),
        (OrderOp::Cancel, OPEN, Status::Cancelled),
        (OrderOp::Expire, OPEN, Status::Expired),
    ],
    refused: |s| if s == Status::Expired { InternalCode::OrderExpired } else { InternalCode::OrderStateConflict },
};

/// A line item moves with its order: submitted with it, or cancelled when
/// the order is cancelled or expires.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineOp {
    Submit,
    Cancel,
}

impl Operation for LineOp {
    fn name(self) -> &'static str {
        match self {
            LineOp::Submit => "order submitted",
            LineOp::Cancel => "order cancelled or expired",
        }
    }

    fn done(self) -> &'static str {
        match self {
            LineOp::Submit => "submitted",
            LineOp::Cancel => "cancelled",
        }
    }

    fn requested(self) -> bool {
        false
    }
}

pub const LINE_ITEM: Table<LineStatus, LineOp> = Table {
    resource: "line item",
    states: &[LineStatus::Pending, LineStatus::Submitted, LineStatus::Cancelled],
    moves: &[(LineOp::Submit, &[LineStatus::Pending], LineStatus::Submitted), (LineOp::Cancel, &[LineStatus::Pending], LineStatus::Cancelled)],
    refused: |_| InternalCode::OrderStateConflict,
};

/// Still open: it may change state.
pub fn is_open(s: Status) -> bool {
    OPEN.contains(&s)
}

#[cfg(test)]
mod tests {
    use crate::states::tag_description;
    use crate::wire::DOCUMENTS;

    /// Every revision's document shows the tables the server applies.
    #[test]
    fn the_documents_publish_the_tables() {
        for document in DOCUMENTS {
            let description = tag_description(document, "Orders");
            for table in [super::ORDER.markdown(), super::LINE_ITEM.markdown()] {
                assert!(description.contains(&table), "the Orders tag must show:\n{table}\nit says:\n{description}");
            }
        }
    }
}
