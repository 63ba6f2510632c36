//! The states and transition tables of payment links, payment intents,
//! their charges and refunds, and saved profiles.

use crate::error::InternalCode;
use crate::kinds::kind;
use crate::states::{Operation, Table};
use {
    ChargeStatus as C, PaymentIntentStatus as I, PaymentLinkStatus as L, PaymentProfileSessionStatus as PS, PaymentProfileStatus as P,
    PaymentSessionStatus as S, RefundStatus as R,
};

kind! {
    /// Where a payment link stands (`payment_links.status`).
    PaymentLinkStatus <=> PaymentLinkStatus {
        Active = "ACTIVE" <=> Active,
        Expired = "EXPIRED" <=> Expired,
        Completed = "COMPLETED" <=> Completed,
        Canceled = "CANCELED" <=> Canceled,
        Failed = "FAILED" <=> Failed,
    }
}

kind! {
    /// Where a payment intent stands (`payment_intents.status`).
    PaymentIntentStatus <=> PaymentIntentStatus {
        Pending = "PENDING" <=> Pending,
        RequiresAction = "REQUIRES_ACTION" <=> RequiresAction,
        Processing = "PROCESSING" <=> Processing,
        Succeeded = "SUCCEEDED" <=> Succeeded,
        RequiresPaymentMethod = "REQUIRES_PAYMENT_METHOD" <=> RequiresPaymentMethod,
        Canceled = "CANCELED" <=> Canceled,
    }
}

kind! {
    /// Where one attempt to charge stands (`payment_charges.status`).
    ChargeStatus <=> PaymentChargeStatus {
        Processing = "PROCESSING" <=> Processing,
        RequiresAction = "REQUIRES_ACTION" <=> RequiresAction,
        Succeeded = "SUCCEEDED" <=> Succeeded,
        Failed = "FAILED" <=> Failed,
    }
}

kind! {
    /// Where a refund stands (`payment_refunds.status`).
    RefundStatus <=> PaymentRefundStatus {
        Pending = "PENDING" <=> Pending,
        Succeeded = "SUCCEEDED" <=> Succeeded,
        Failed = "FAILED" <=> Failed,
    }
}

kind! {
    /// Where a payment session stands (`payment_sessions.status`).
    PaymentSessionStatus <=> PaymentSessionStatus {
        Processing = "PROCESSING" <=> Processing,
        Succeeded = "SUCCEEDED" <=> Succeeded,
        Failed = "FAILED" <=> Failed,
    }
}

kind! {
    /// Where a payment profile session stands (`payment_profile_sessions.status`).
    PaymentProfileSessionStatus <=> PaymentProfileSessionStatus {
        Active = "ACTIVE" <=> Active,
        Completed = "COMPLETED" <=> Completed,
        Canceled = "CANCELED" <=> Canceled,
        Expired = "EXPIRED" <=> Expired,
    }
}

kind! {
    /// Whether a saved payment method can be charged (`payment_profiles.status`).
    PaymentProfileStatus <=> PaymentProfileStatus {
        Active = "ACTIVE" <=> Active,
        Inactive = "INACTIVE" <=> Inactive,
        Expired = "EXPIRED" <=> Expired,
        RequiresAction = "REQUIRES_ACTION" <=> RequiresAction,
    }
}

/// What moves a payment link.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkOp {
    Cancel,
    /// its order was changed, cancelled or expired
    OrderChanged,
    /// its invoice was paid otherwise, voided or given up
    InvoiceClosed,
    Completed,
    /// paid, but its order would not submit any more
    OrderRefused,
    Expire,
}

impl Operation for LinkOp {
    fn name(self) -> &'static str {
        match self {
            LinkOp::Cancel => "cancel",
            LinkOp::OrderChanged => "order changed",
            LinkOp::InvoiceClosed => "invoice paid otherwise or closed",
            LinkOp::Completed => "paid, order submitted",
            LinkOp::OrderRefused => "paid, order refused",
            LinkOp::Expire => "expiresAt passes",
        }
    }

    fn done(self) -> &'static str {
        match self {
            LinkOp::Cancel | LinkOp::OrderChanged | LinkOp::InvoiceClosed => "cancelled",
            LinkOp::Completed => "completed",
            LinkOp::OrderRefused => "failed",
            LinkOp::Expire => "expired",
        }
    }

    fn requested(self) -> bool {
        self == LinkOp::Cancel
    }
}

pub const LINK: Table<L, LinkOp> = Table {
    resource: "payment link",
    states: &[L::Active, L::Expired, L::Completed, L::Canceled, L::Failed],
    moves: &[
        (LinkOp::Cancel, &[L::Active], L::Canceled),
        (LinkOp::OrderChanged, &[L::Active], L::Canceled),
        (LinkOp::InvoiceClosed, &[L::Active], L::Canceled),
        (LinkOp::Completed, &[L::Active], L::Completed),
        (LinkOp::OrderRefused, &[L::Active], L::Failed),
        (LinkOp::Expire, &[L::Active], L::Expired),
    ],
    refused: |_| InternalCode::PaymentLinkStateConflict,
};

/// What moves a payment intent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IntentOp {
    /// an attempt is sent to the provider
    Charge,
    /// the payer approved or failed the authentication asked for
    Authenticate,
    Succeeded,
    NeedsAction,
    Declined,
    Refund,
    /// its link was cancelled or expired, or its session failed
    LinkClosed,
}

impl Operation for IntentOp {
    fn name(self) -> &'static str {
        match self {
            IntentOp::Charge => "charge",
            IntentOp::Authenticate => "authenticate",
            IntentOp::Succeeded => "provider: succeeded",
            IntentOp::NeedsAction => "provider: authentication needed",
            IntentOp::Declined => "provider: declined",
            IntentOp::Refund => "refund",
            IntentOp::LinkClosed => "collection closed",
        }
    }

    fn done(self) -> &'static str {
        match self {
            IntentOp::Charge => "charged",
            IntentOp::Authenticate => "authenticated",
            IntentOp::Succeeded => "paid",
            IntentOp::NeedsAction => "sent to authentication",
            IntentOp::Declined => "declined",
            IntentOp::Refund => "refunded",
            IntentOp::LinkClosed => "cancelled",
        }
    }

    fn requested(self) -> bool {
        matches!(self, IntentOp::Charge | IntentOp::Authenticate | IntentOp::Refund)
    }
}

pub const INTENT: Table<I, IntentOp> = Table {
    resource: "payment intent",
    states: &[I::Pending, I::RequiresAction, I::Processing, I::Succeeded, I::RequiresPaymentMethod, I::Canceled],
    moves: &[
        (IntentOp::Charge, &[I::Pending, I::RequiresPaymentMethod], I::Processing),
        (IntentOp::Authenticate, &[I::RequiresAction], I::Processing),
        (IntentOp::Succeeded, &[I::Processing], I::Succeeded),
        (IntentOp::NeedsAction, &[I::Processing], I::RequiresAction),
        (IntentOp::Declined, &[I::Processing], I::RequiresPaymentMethod),
        (IntentOp::Refund, &[I::Succeeded], I::Succeeded),
        (IntentOp::LinkClosed, &[I::Pending, I::RequiresAction, I::RequiresPaymentMethod], I::Canceled),
    ],
    refused: |_| InternalCode::PaymentIntentStateConflict,
};

/// What moves one attempt to charge (nothing asks for it directly: the
/// intent's moves do).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChargeOp {
    Succeeded,
    NeedsAction,
    Declined,
    Authenticate,
    LinkClosed,
}

impl Operation for ChargeOp {
    fn name(self) -> &'static str {
        match self {
            ChargeOp::Succeeded => "provider: succeeded",
            ChargeOp::NeedsAction => "provider: authentication needed",
            ChargeOp::Declined => "provider: declined",
            ChargeOp::Authenticate => "authenticate",
            ChargeOp::LinkClosed => "link cancelled or expired",
        }
    }

    fn done(self) -> &'static str {
        self.name()
    }

    fn requested(self) -> bool {
        false
    }
}

pub const CHARGE: Table<C, ChargeOp> = Table {
    resource: "charge",
    states: &[C::Processing, C::RequiresAction, C::Succeeded, C::Failed],
    moves: &[
        (ChargeOp::Succeeded, &[C::Processing], C::Succeeded),
        (ChargeOp::NeedsAction, &[C::Processing], C::RequiresAction),
        (ChargeOp::Declined, &[C::Processing], C::Failed),
        (ChargeOp::Authenticate, &[C::RequiresAction], C::Processing),
        (ChargeOp::LinkClosed, &[C::RequiresAction], C::Failed),
    ],
    refused: |_| InternalCode::PaymentIntentStateConflict,
};

/// What moves a payment session: the provider's answer to its one charge.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionOp {
    Completed,
    OrderRefused,
    Declined,
}

impl Operation for SessionOp {
    fn name(self) -> &'static str {
        match self {
            SessionOp::Completed => "provider: succeeded, order submitted",
            SessionOp::OrderRefused => "provider: succeeded, order refused",
            SessionOp::Declined => "provider: declined",
        }
    }

    fn done(self) -> &'static str {
        self.name()
    }

    fn requested(self) -> bool {
        false
    }
}

pub const SESSION: Table<S, SessionOp> = Table {
    resource: "payment session",
    states: &[S::Processing, S::Succeeded, S::Failed],
    moves: &[
        (SessionOp::Completed, &[S::Processing], S::Succeeded),
        (SessionOp::OrderRefused, &[S::Processing], S::Failed),
        (SessionOp::Declined, &[S::Processing], S::Failed),
    ],
    refused: |_| InternalCode::PaymentIntentStateConflict,
};

/// What the provider answers of a refund.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefundOp {
    Refunded,
    Refused,
}

impl Operation for RefundOp {
    fn name(self) -> &'static str {
        match self {
            RefundOp::Refunded => "provider: refunded",
            RefundOp::Refused => "provider: refused",
        }
    }

    fn done(self) -> &'static str {
        self.name()
    }

    fn requested(self) -> bool {
        false
    }
}

pub const REFUND: Table<R, RefundOp> = Table {
    resource: "refund",
    states: &[R::Pending, R::Succeeded, R::Failed],
    moves: &[(RefundOp::Refunded, &[R::Pending], R::Succeeded), (RefundOp::Refused, &[R::Pending], R::Failed)],
    refused: |_| InternalCode::PaymentIntentStateConflict,
};

/// What moves a saved profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProfileOp {
    Expire,
}

impl Operation for ProfileOp {
    fn name(self) -> &'static str {
        "card expiry passes"
    }

    fn done(self) -> &'static str {
        "expired"
    }

    fn requested(self) -> bool {
        false
    }
}

pub const PROFILE: Table<P, ProfileOp> = Table {
    resource: "payment profile",
    states: &[P::Active, P::Inactive, P::Expired, P::RequiresAction],
    moves: &[(ProfileOp::Expire, &[P::Active], P::Expired)],
    refused: |_| InternalCode::PaymentProfileNotUsable,
};

/// What moves a payment profile session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProfileSessionOp {
    Cancel,
    /// a method was saved on its page
    Saved,
    Expire,
}

impl Operation for ProfileSessionOp {
    fn name(self) -> &'static str {
        match self {
            ProfileSessionOp::Cancel => "cancel",
            ProfileSessionOp::Saved => "method saved on the page",
            ProfileSessionOp::Expire => "expiresAt passes",
        }
    }

    fn done(self) -> &'static str {
        match self {
            ProfileSessionOp::Cancel => "cancelled",
            ProfileSessionOp::Saved => "completed",
            ProfileSessionOp::Expire => "expired",
        }
    }

    fn requested(self) -> bool {
        self == ProfileSessionOp::Cancel
    }
}

pub const PROFILE_SESSION: Table<PS, ProfileSessionOp> = Table {
    resource: "payment profile session",
    states: &[PS::Active, PS::Completed, PS::Canceled, PS::Expired],
    moves: &[
        (ProfileSessionOp::Cancel, &[PS::Active], PS::Canceled),
        (ProfileSessionOp::Saved, &[PS::Active], PS::Completed),
        (ProfileSessionOp::Expire, &[PS::Active], PS::Expired),
    ],
    refused: |_| InternalCode::PaymentProfileSessionStateConflict,
};

#[cfg(test)]
mod tests {
    use crate::states::tag_description;
    use crate::wire::DOCUMENTS;

    /// Every revision's document shows the tables the server applies.
    #[test]
    fn the_documents_publish_the_tables() {
        for document in DOCUMENTS {
            let tags = [
                ("Payment Links", vec![super::LINK.markdown()]),
                ("Payment Intents", vec![super::INTENT.markdown(), super::CHARGE.markdown(), super::REFUND.markdown()]),
                ("Payment Profiles", vec![super::PROFILE.markdown()]),
                ("Payment Sessions", vec![super::SESSION.markdown()]),
                ("Payment Profile Sessions", vec![super::PROFILE_SESSION.markdown()]),
            ];
            for (tag, tables) in tags {
                let description = tag_description(document, tag);
                for table in tables {
                    assert!(description.contains(&table), "the {tag} tag must show:\n{table}\nit says:\n{description}");
                }
            }
        }
    }
}
