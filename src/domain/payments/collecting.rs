//! What a payment link collects: an order's initial invoice (rule 2: only
//! for an order that would submit) or an OPEN invoice. Each says who pays,
//! how much, its lines, and claims itself in the transaction that starts
//! collecting.

use super::links::{claim_for_collection, collectable, link_exists};
use crate::domain::Caller;
use crate::domain::access::Role;
use crate::domain::invoices;
use crate::error::{Error, InternalCode, Result};
use crate::kinds::{InvoiceStatus, PaymentIntentStatus, PaymentLinkStatus};
use crate::store::{InvoiceRow, OrderRow, Store, Tx};
use chrono::{DateTime, Utc};
use uuid::Uuid;

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
    /// The order named by the body's `orderId`, if collection may start
    /// for it (`links::collectable`).
    pub async fn order(caller: &Caller, key: &str) -> Result<Collecting> {
        let (order, priced, amount) = collectable(caller, key).await?;
        Ok(Collecting {
            customer_id: order.customer_id,
            currency: order.currency.clone(),
            amount_minor: amount,
            lines: serde_json::to_value(super::render::lines_of(&priced)).expect("JSON"),
            description: format!("Order {}", order.id),
            until: Some(order.expires_at),
            of: Of::Order(order),
        })
    }

    /// The invoice named by the body's `invoiceId`: one the caller sees
    /// (404 naming the field), as a MANAGER of its customer, OPEN (409
    /// naming its state).
    pub async fn invoice(caller: &Caller, key: &str) -> Result<Collecting> {
        let invoice = invoices::find(caller, key).await.map_err(|e| match e {
            Error::NotFound { code, .. } => Error::missing_reference(code, "invoiceId", "invoiceId names no invoice of this organisation"),
            e => e,
        })?;
        caller.require_role(invoice.customer_id, Role::Manager)?;
        Collecting::open_invoice(invoice)
    }

    /// OPEN `invoice` to collect.
    pub fn open_invoice(invoice: InvoiceRow) -> Result<Collecting> {
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
            lines: serde_json::to_value(invoices::collect::intent_lines(&invoice)?).expect("JSON"),
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
                    return Err(link_exists());
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
