//! Delivery by billing method, by the invoice.due job once an invoice is
//! finalised (the mail is queued in the outbox in the transaction that
//! records the delivery, so it goes once): an EMAIL_INVOICE customer is
//! mailed the invoice, with a payment link unless autopay collects it; an
//! E_INVOICE customer's document is at the invoice's `documentUrl`; a
//! PAPER_INVOICE customer's is listed for printing (`admin invoice list
//! --paper`). Each failure of autopay is mailed with a payment link.

use super::collect::intent_lines;
use super::row::{customer_of, written};
use crate::domain::Caller;
use crate::domain::payments::collectable::for_invoice;
use crate::error::Result;
use crate::kinds::BillingMethod;
use crate::money::decimal;
use crate::states::invoices::InvoiceStatus;
use crate::store::{CustomerRow, InvoiceRow, Store};
use std::fmt::Write;

/// Where mail about invoices goes: the billing address, else the contact's.
fn mail_to(customer: &CustomerRow) -> Option<String> {
    customer.billing.as_ref().and_then(|b| b.email.clone()).or_else(|| customer.contact.email.clone())
}

/// The invoice as a mail's text: its lines, totals, due date.
fn summary(row: &InvoiceRow) -> Result<String> {
    let cur = row.currency.as_str();
    let mut text = format!("Invoice {}, {}\n\n", row.number.as_deref().unwrap_or_default(), row.billing_date);
    for l in super::lines::parse(&row.lines)? {
        let _ = writeln!(text, "{}: {} {cur}", l.description, decimal(l.total_minor(), cur));
    }
    let _ = writeln!(text, "\nSubtotal: {} {cur}", decimal(row.subtotal_minor, cur));
    if row.discount_minor != 0 {
        let _ = writeln!(text, "Discounts: -{} {cur}", decimal(row.discount_minor, cur));
    }
    let _ = writeln!(text, "Tax: {} {cur}\nTotal: {} {cur}", decimal(row.tax_minor, cur), decimal(row.total_minor, cur));
    if let Some(due) = row.due_at {
        let _ = writeln!(text, "Due: {}", due.date_naive());
    }
    Ok(text)
}

/// `row` delivered as far as is due: the first delivery once finalised,
/// and a mail for each failure of autopay not yet mailed. The invoice as
/// it is after.
pub async fn deliver(caller: &Caller, public_url: &str, row: InvoiceRow) -> Result<InvoiceRow> {
    let first = row.delivered_at.is_none() && row.finalized_at.is_some();
    let failures = row.status == InvoiceStatus::Open && row.attempts > row.mailed_attempts;
    if !first && !failures {
        return Ok(row);
    }
    let customer = customer_of(caller, &row).await?;
    let to = mail_to(&customer);
    let number = row.number.clone().unwrap_or_default();
    let mut after = row.clone();
    let mut tx = caller.store.begin().await?;
    if first {
        after.delivered_at = Some(caller.now);
        let token = crate::keys::random_token();
        after.document_url = Some(format!("{}/invoice-documents/{token}", public_url.trim_end_matches('/')));
        after.document_token = Some(token);
        if let (Some(BillingMethod::EmailInvoice), Some(to)) = (row.billing_method, &to) {
            let mut body = summary(&row)?;
            if row.status == InvoiceStatus::Open && row.auto_pay != Some(true) {
                if let Some(link) = for_invoice(&mut tx, caller, public_url, &row, intent_lines(&row)?).await? {
                    let _ = writeln!(body, "\nPay it here: {}", link.hosted_url);
                }
            } else if row.auto_pay == Some(true) {
                body.push_str("\nIt is charged to your saved payment method.\n");
            }
            Store::queue_mail_of_org(&mut tx, to, &format!("Invoice {number}"), &body, caller.now).await?;
        }
    }
    if failures {
        after.mailed_attempts = row.attempts;
        if let Some(to) = &to {
            let mut body = format!("We could not charge your saved payment method for invoice {number}.\n\n{}", summary(&row)?);
            if let Some(link) = for_invoice(&mut tx, caller, public_url, &row, intent_lines(&row)?).await? {
                let _ = writeln!(body, "\nPay it here: {}", link.hosted_url);
            }
            if let Some(next) = row.next_attempt_at {
                let _ = writeln!(body, "We will try your saved method again on {}.", next.date_naive());
            }
            Store::queue_mail_of_org(&mut tx, to, &format!("Payment of invoice {number} failed"), &body, caller.now).await?;
        }
    }
    let after = written(after, caller.now);
    if !Store::update_invoice(&mut tx, &after).await? {
        // moved meanwhile: the job is tried again, and delivers then
        return Err(crate::error::Error::changed_meanwhile("invoice"));
    }
    tx.commit().await?;
    Ok(after)
}
