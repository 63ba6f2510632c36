//! What an intent collects through: a payment link (a page, where the payer
//! may try again after a decline), a payment session (a saved profile,
//! charged off-session, which ends with its one charge) or an invoice's
//! autopay (a saved profile, charged off-session again after a decline).
//! Each closes its own way when a charge ends (`settle`).

use super::render;
use crate::domain::Caller;
use crate::domain::change::Change;
use crate::error::Result;
use crate::events::{self, Event};
use crate::states::invoices::InvoiceStatus;
use crate::states::payments::{LINK, LinkOp, PaymentLinkStatus, PaymentSessionStatus, SESSION, SessionOp};
use crate::store::{ChargeRow, IntentRow, InvoiceRow, LinkRow, SessionRow, Store, Tx};
use chrono::{DateTime, Utc};
use uuid::Uuid;

pub enum Collection {
    Link(LinkRow),
    Session(SessionRow),
    /// an invoice's autopay
    Invoice(InvoiceRow),
}

impl Collection {
    /// The link or session `intent` collects through, as stored.
    pub async fn of(store: &Store, intent: &IntentRow) -> Result<Option<Collection>> {
        if let Some(id) = intent.link_id {
            return Ok(store.link(intent.org, id).await?.map(Collection::Link));
        }
        if let Some(id) = intent.session_id {
            return Ok(store.session(intent.org, id).await?.map(Collection::Session));
        }
        if let Some(id) = intent.invoice_id {
            return Ok(store.invoice(intent.org, id).await?.map(Collection::Invoice));
        }
        Ok(None)
    }

    /// Still collecting: a link ACTIVE, a session PROCESSING.
    pub fn is_open(&self) -> bool {
        match self {
            Collection::Link(l) => l.status == PaymentLinkStatus::Active,
            Collection::Session(s) => s.status == PaymentSessionStatus::Processing,
            Collection::Invoice(i) => i.status == InvoiceStatus::Open,
        }
    }

    /// A session has no payer to try again: any outcome but a success
    /// ends it.
    pub fn ends_with_its_charge(&self) -> bool {
        matches!(self, Collection::Session(_))
    }

    pub fn order_id(&self) -> Option<Uuid> {
        match self {
            Collection::Link(l) => l.order_id,
            Collection::Session(s) => Some(s.order_id),
            Collection::Invoice(_) => None,
        }
    }

    /// What a refund's reason calls it, and its state.
    pub fn described(&self) -> String {
        match self {
            Collection::Link(l) => format!("payment link was {}", l.status),
            Collection::Session(s) => format!("payment session was {}", s.status),
            Collection::Invoice(i) => format!("invoice was {}", i.status),
        }
    }

    /// Claims it in `tx` while open (a guarded write that leaves it as it
    /// is): a move that beat this transaction wins. False when it did.
    pub async fn claim(&self, tx: &mut Tx, now: DateTime<Utc>) -> Result<bool> {
        match self {
            Collection::Link(l) => {
                let claimed = LinkRow { updated_at: now, ..l.clone() };
                Store::move_link(tx, &claimed, PaymentLinkStatus::Active).await
            }
            Collection::Session(s) => {
                let claimed = SessionRow { updated_at: now, ..s.clone() };
                Store::move_session(tx, &claimed, PaymentSessionStatus::Processing).await
            }
            // paying it (`complete`) is its guarded write
            Collection::Invoice(_) => Ok(true),
        }
    }

    /// Paid, and its order submitted: the link COMPLETED
    /// (`payment_link.completed`) with what it asked saved, or the session
    /// SUCCEEDED. The link as it now is.
    pub async fn complete(self, tx: &mut Tx, caller: &Caller, charge: &ChargeRow) -> Result<Option<LinkRow>> {
        let now = caller.now;
        match self {
            Collection::Link(link) => {
                let after =
                    LinkRow { status: LINK.next(LinkOp::Completed, link.status)?, paid: true, completed_at: Some(now), updated_at: now, ..link.clone() };
                Store::move_link(tx, &after, PaymentLinkStatus::Active).await?;
                events::record(tx, caller.org, now, &Event::PaymentLinkCompleted(render::link(&after))).await?;
                if link.save_profile {
                    super::profiles::save(tx, caller, link.customer_id, charge.provider, &charge.method, link.set_default, link.autopay).await?;
                }
                Ok(Some(after))
            }
            Collection::Session(s) => {
                let after = SessionRow { status: SESSION.next(SessionOp::Completed, s.status)?, completed_at: Some(now), updated_at: now, ..s.clone() };
                Store::move_session(tx, &after, PaymentSessionStatus::Processing).await?;
                Ok(None)
            }
            // paid in `settle`, by its own guarded write
            Collection::Invoice(_) => Ok(None),
        }
    }

    /// Paid, but its order no longer submits (`reason`): the link or the
    /// session FAILED (the caller refunds the payment).
    pub async fn refuse(self, tx: &mut Tx, now: DateTime<Utc>, reason: &str) -> Result<Option<LinkRow>> {
        match self {
            Collection::Link(link) => {
                let status = LINK.next(LinkOp::OrderRefused, link.status)?;
                let after = LinkRow { status, paid: true, failure_reason: Some(reason.into()), updated_at: now, ..link };
                Store::move_link(tx, &after, PaymentLinkStatus::Active).await?;
                Ok(Some(after))
            }
            Collection::Session(s) => {
                let status = SESSION.next(SessionOp::OrderRefused, s.status)?;
                let after = SessionRow { status, failure_reason: Some(reason.into()), updated_at: now, ..s };
                Store::move_session(tx, &after, PaymentSessionStatus::Processing).await?;
                Ok(None)
            }
            // nothing of autopay's to close: the intent keeps what it paid
            Collection::Invoice(_) => Ok(None),
        }
    }

    /// Declined (`code`): a session FAILED; a link stays open for another
    /// try; an invoice's autopay tries again later.
    pub async fn decline(self, tx: &mut Tx, caller: &Caller, code: &str) -> Result<()> {
        match self {
            Collection::Session(s) => {
                let status = SESSION.next(SessionOp::Declined, s.status)?;
                let after = SessionRow { status, failure_code: Some(code.into()), updated_at: caller.now, ..s };
                Store::move_session(tx, &after, PaymentSessionStatus::Processing).await?;
            }
            Collection::Invoice(i) => caller.follow(tx, Change::InvoiceChargeDeclined { invoice: &i }).await?,
            Collection::Link(_) => {}
        }
        Ok(())
    }
}
