//! What a payment link collects: an order's initial invoice (rule 2: only
//! for an order that would submit; `links::collectable` checks it) or an
//! OPEN invoice. Each says who pays, how much, its lines, and claims
//! itself in the transaction that starts collecting; a link of it is made
//! here (also the one an invoice is mailed with).

use super::enabled::provider;
use super::render::hosted_url;
use crate::domain::Caller;
use crate::error::{Error, InternalCode, Result};
use crate::payment_providers::ProviderName;
use crate::states::invoices::InvoiceStatus;
use crate::states::payments::{PaymentIntentStatus, PaymentLinkStatus};
use crate::store::{IntentRow, InvoiceRow, JobKind, LinkRow, OrderRow, Store, Tx};
use chrono::{DateTime, Duration, Utc};
use uuid::Uuid;

/// An invoice's link (mailed with it) expires unpaid after this long at most.
pub const INVOICE_LIFETIME_DAYS: i64 = 30;

pub enum Of {
    Order(OrderRow),
    Invoice(InvoiceRow),
}

/// What is collected, as read before the transaction.
pub struct Collecting {
    pub of: Of,
    pub customer_id: Uuid,
    pub currency: String,
    pub amount_minor: i64,
    /// the intent's lines
    pub lines: serde_json::Value,
    pub description: String,
    /// no link lasts past this (an order's expiry)
    pub until: Option<DateTime<Utc>>,
}

impl Collecting {
    /// OPEN `invoice` to collect, with its lines as an intent keeps them.
    pub fn open_invoice(invoice: InvoiceRow, lines: serde_json::Value) -> Result<Collecting> {
        if invoice.status != InvoiceStatus::Open {
            return Err(Error::Conflict {
                code: InternalCode::InvoiceStateConflict,
                message: format!("An invoice in status {} is not collected.", invoice.status),
                property: "invoiceId",
            });
        }
        Ok(Collecting {
            customer_id: invoice.customer_id,
            currency: invoice.currency.clone(),
            amount_minor: invoice.total_minor,
            lines,
            description: format!("Invoice {}", invoice.number.as_deref().unwrap_or_default()),
            until: None,
            of: Of::Invoice(invoice),
        })
    }

    pub fn order_id(&self) -> Option<Uuid> {
        match &self.of {
            Of::Order(o) => Some(o.id),
            Of::Invoice(_) => None,
        }
    }

    pub fn invoice_id(&self) -> Option<Uuid> {
        match &self.of {
            Of::Order(_) => None,
            Of::Invoice(i) => Some(i.id),
        }
    }

    /// In the transaction that starts collecting: claimed as read (a move
    /// that beat it wins), with no ACTIVE link and no charge in progress.
    pub async fn claim(&self, tx: &mut Tx) -> Result<()> {
        match &self.of {
            Of::Order(order) => claim_for_collection(tx, order).await,
            Of::Invoice(invoice) => {
                let mut claimed = invoice.clone();
                claimed.version += 1;
                if !Store::update_invoice(tx, &claimed).await? {
                    return Err(Error::changed_meanwhile("invoice"));
                }
                if !Store::links_of_invoice_in(tx, invoice.org, invoice.id, PaymentLinkStatus::Active).await?.is_empty() {
                    return Err(link_exists(true));
                }
                let autopay = match invoice.intent_id {
                    Some(id) => Store::intent_in(tx, invoice.org, id).await?,
                    None => None,
                };
                if autopay.is_some_and(|i| i.status == PaymentIntentStatus::Processing) {
                    return Err(Error::Conflict {
                        code: InternalCode::PaymentInProgress,
                        message: "Autopay's charge of the invoice is being processed.".into(),
                        property: "invoiceId",
                    });
                }
                Ok(())
            }
        }
    }
}

/// In the transaction that starts collecting for `order`: the order
/// claimed as it was read and priced (a change that beat this transaction
/// to it wins: the collection would be for a stale amount; one after it
/// finds the link or session and closes it), and neither an ACTIVE link
/// nor a PROCESSING session of it.
pub async fn claim_for_collection(tx: &mut Tx, order: &OrderRow) -> Result<()> {
    if !Store::update_order(tx, order, order).await? {
        return Err(Error::changed_meanwhile("order"));
    }
    if !Store::links_of_order_in(tx, order.org, order.id, PaymentLinkStatus::Active).await?.is_empty() {
        return Err(link_exists(false));
    }
    if Store::order_has_session_in(tx, order.org, order.id, crate::states::payments::PaymentSessionStatus::Processing).await? {
        return Err(Error::Conflict {
            code: InternalCode::PaymentInProgress,
            message: "A payment session of the order is being processed.".into(),
            property: "orderId",
        });
    }
    Ok(())
}

/// A new ACTIVE link collecting `collecting` through `provider`, asking
/// nothing beyond the payment.
pub fn new_link(
    caller: &Caller,
    public_url: &str,
    collecting: &Collecting,
    provider: ProviderName,
    expires_at: DateTime<Utc>,
    description: Option<String>,
) -> LinkRow {
    let now = caller.now;
    let token = crate::keys::random_token();
    LinkRow {
        id: crate::domain::new_id(),
        org: caller.org,
        customer_id: collecting.customer_id,
        order_id: collecting.order_id(),
        invoice_id: collecting.invoice_id(),
        intent_id: crate::domain::new_id(),
        hosted_url: hosted_url(public_url, &token),
        token,
        status: PaymentLinkStatus::Active,
        provider,
        amount_minor: collecting.amount_minor,
        currency: collecting.currency.clone(),
        profile_id: None,
        save_profile: false,
        set_default: false,
        autopay: false,
        description: description.or_else(|| Some(collecting.description.clone())),
        return_url: None,
        cancel_url: None,
        failure_reason: None,
        paid: false,
        metadata: None,
        expires_at,
        completed_at: None,
        created_at: now,
        updated_at: now,
    }
}

/// In `tx`: `link` and its intent (PENDING), and the job that expires it.
pub async fn insert(tx: &mut Tx, caller: &Caller, collecting: &Collecting, link: &LinkRow) -> Result<()> {
    let intent = IntentRow {
        id: link.intent_id,
        org: caller.org,
        customer_id: link.customer_id,
        order_id: link.order_id,
        link_id: Some(link.id),
        session_id: None,
        invoice_id: link.invoice_id,
        status: PaymentIntentStatus::Pending,
        amount_minor: link.amount_minor,
        currency: link.currency.clone(),
        description: link.description.clone(),
        due_at: Some(link.expires_at),
        lines: collecting.lines.clone(),
        created_at: link.created_at,
        updated_at: link.created_at,
    };
    Store::insert_intent(tx, &intent).await?;
    Store::insert_link(tx, link).await.map_err(|e| if e.is_concurrent_conflict() { link_exists(link.invoice_id.is_some()) } else { e })?;
    Store::schedule_job(tx, JobKind::PaymentLinkExpiry, &link.id.to_string(), Some(caller.org), link.expires_at, caller.now).await
}

/// In `tx`, which delivers OPEN `invoice`: the link a mail offers to pay
/// it, ACTIVE for `INVOICE_LIFETIME_DAYS` through the first provider the
/// organisation has enabled; its ACTIVE link if it has one. None when no
/// provider is enabled.
pub async fn for_invoice(tx: &mut Tx, caller: &Caller, public_url: &str, invoice: &InvoiceRow, lines: serde_json::Value) -> Result<Option<LinkRow>> {
    if let Some(active) = Store::links_of_invoice_in(tx, caller.org, invoice.id, PaymentLinkStatus::Active).await?.pop() {
        return Ok(Some(active));
    }
    let provider = match provider(caller, None, None).await {
        Ok(p) => p,
        // none enabled: the mail goes without a link
        Err(Error::Precondition { .. }) => return Ok(None),
        Err(e) => return Err(e),
    };
    let collecting = Collecting::open_invoice(invoice.clone(), lines)?;
    let link = new_link(caller, public_url, &collecting, provider, caller.now + Duration::days(INVOICE_LIFETIME_DAYS), None);
    insert(tx, caller, &collecting, &link).await?;
    Ok(Some(link))
}

/// 409 `payment_link_exists`: the order's (or the invoice's) ACTIVE link
/// must be cancelled before another is made.
pub fn link_exists(of_invoice: bool) -> Error {
    let (what, property) = if of_invoice { ("invoice", "invoiceId") } else { ("order", "orderId") };
    Error::Conflict { code: InternalCode::PaymentLinkExists, message: format!("The {what} already has an ACTIVE payment link; cancel it first."), property }
}
