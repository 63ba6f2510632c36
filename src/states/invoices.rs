//! The invoice's states and its transition table. Only a DRAFT changes its lines; every
//! refused request is a 409 `invoice_state_conflict` naming the state.

use crate::error::InternalCode;
use crate::kinds::kind;
use crate::states::{Operation, Table};
use InvoiceStatus as S;

kind! {
    /// Where an invoice stands (`invoices.status`).
    InvoiceStatus <=> InvoiceStatus {
        Draft = "DRAFT" <=> Draft,
        Open = "OPEN" <=> Open,
        Paid = "PAID" <=> Paid,
        Void = "VOID" <=> Void,
        Uncollectible = "UNCOLLECTIBLE" <=> Uncollectible,
    }
}

/// What moves an invoice.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InvoiceOp {
    /// a renewal, an order or usage of its billing day adds lines
    AddLines,
    /// the end of its billing day, something owed
    Finalize,
    /// the end of its billing day, nothing owed
    FinalizeNothingOwed,
    /// autopay's charge, or a payment link's, succeeded
    Paid,
    /// autopay's charge failed (tried again later)
    PaymentFailed,
    /// POST /invoices/{id}/mark-paid
    MarkPaid,
    /// dunning: unpaid past its due date by the organisation's days
    Suspend,
    /// dunning: unpaid long after, given up
    Uncollectible,
    /// `admin invoice void`: issued in error
    Void,
}

impl Operation for InvoiceOp {
    fn name(self) -> &'static str {
        match self {
            InvoiceOp::AddLines => "lines of its billing day",
            InvoiceOp::Finalize => "end of its billing day",
            InvoiceOp::FinalizeNothingOwed => "end of its billing day, nothing owed",
            InvoiceOp::Paid => "paid (autopay, payment link)",
            InvoiceOp::PaymentFailed => "autopay's charge fails",
            InvoiceOp::MarkPaid => "mark-paid",
            InvoiceOp::Suspend => "dunning: overdue, subscriptions suspended",
            InvoiceOp::Uncollectible => "dunning: given up",
            InvoiceOp::Void => "void (operator)",
        }
    }

    fn done(self) -> &'static str {
        match self {
            InvoiceOp::AddLines => "given lines",
            InvoiceOp::Finalize | InvoiceOp::FinalizeNothingOwed => "finalised",
            InvoiceOp::Paid | InvoiceOp::MarkPaid => "marked paid",
            InvoiceOp::PaymentFailed => "charged",
            InvoiceOp::Suspend => "followed up",
            InvoiceOp::Uncollectible => "given up",
            InvoiceOp::Void => "voided",
        }
    }

    fn requested(self) -> bool {
        matches!(self, InvoiceOp::MarkPaid | InvoiceOp::Void)
    }
}

pub const INVOICE: Table<S, InvoiceOp> = Table {
    resource: "invoice",
    states: &[S::Draft, S::Open, S::Paid, S::Void, S::Uncollectible],
    moves: &[
        (InvoiceOp::AddLines, &[S::Draft], S::Draft),
        (InvoiceOp::Finalize, &[S::Draft], S::Open),
        (InvoiceOp::FinalizeNothingOwed, &[S::Draft], S::Paid),
        (InvoiceOp::Paid, &[S::Open], S::Paid),
        (InvoiceOp::PaymentFailed, &[S::Open], S::Open),
        (InvoiceOp::MarkPaid, &[S::Open], S::Paid),
        (InvoiceOp::Suspend, &[S::Open], S::Open),
        (InvoiceOp::Uncollectible, &[S::Open], S::Uncollectible),
        (InvoiceOp::Void, &[S::Open], S::Void),
    ],
    refused: |_| InternalCode::InvoiceStateConflict,
};

#[cfg(test)]
mod tests {
    /// The Invoices tag of every document publishes this table.
    #[test]
    fn the_documents_publish_the_table() {
        for document in crate::wire::DOCUMENTS {
            let tag = crate::states::tag_description(document, "Invoices");
            assert!(tag.contains(&super::INVOICE.markdown()), "the Invoices tag lacks the table:\n{}", super::INVOICE.markdown());
        }
    }
}
