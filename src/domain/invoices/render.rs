//! Invoices in their wire form.

use super::lines::{self, Line, LineKind, LineTax};
use crate::error::Result;
use crate::store::InvoiceRow;
use crate::wire::latest as wire;

fn tax(t: &LineTax) -> wire::InvoiceTax {
    wire::InvoiceTax {
        description: t.description.clone(),
        rate_basis_points: i32::try_from(t.rate_basis_points).unwrap_or(i32::MAX),
        amount_minor: t.amount_minor,
    }
}

fn line(l: &Line) -> wire::InvoiceLine {
    wire::InvoiceLine {
        type_: match l.kind {
            LineKind::SubscriptionRenewal => wire::InvoiceLineType::SubscriptionRenewal,
            LineKind::LicenseRenewal => wire::InvoiceLineType::LicenseRenewal,
            LineKind::Order => wire::InvoiceLineType::Order,
            LineKind::Usage => wire::InvoiceLineType::Usage,
        },
        description: l.description.clone(),
        period_start: l.period.map(|(s, _)| s),
        period_end: l.period.map(|(_, e)| e),
        subscription_id: l.subscription_id,
        license_id: l.license_id,
        order_id: l.order_id,
        amount_minor: l.amount_minor,
        discounts: l.discounts.iter().map(|d| wire::InvoiceDiscount { description: d.description.clone(), amount_minor: d.amount_minor }).collect(),
        taxes: l.taxes.iter().map(tax).collect(),
        total_minor: l.total_minor(),
    }
}

pub fn invoice(row: &InvoiceRow) -> Result<wire::Invoice> {
    let lines = lines::parse(&row.lines)?;
    // a DRAFT's are its lines' sums so far; a finalised one's were kept
    let (subtotal_minor, total_discounts_minor, tax_amount_minor, total_minor) = lines::totals(&lines);
    Ok(wire::Invoice {
        invoice_id: row.id,
        number: row.number.clone(),
        customer_id: row.customer_id,
        status: row.status.into(),
        currency: row.currency.clone(),
        billing_date: row.billing_date,
        billing_method: row.billing_method.map(Into::into),
        auto_pay: row.auto_pay,
        lines: lines.iter().map(line).collect(),
        subtotal_minor,
        total_discounts_minor,
        tax_amount_minor,
        total_minor,
        taxes: lines::taxes_by_rate(&lines).iter().map(tax).collect(),
        finalized_at: row.finalized_at,
        due_at: row.due_at,
        paid_at: row.paid_at,
        payment_method: row.paid_method.map(Into::into),
        payment_reference: row.paid_reference.clone(),
        payment_intent_id: row.intent_id,
        document_url: row.document_url.clone(),
        payment_attempts: (row.attempts > 0).then(|| i32::try_from(row.attempts).unwrap_or(i32::MAX)),
        next_payment_attempt_at: row.next_attempt_at,
        created_at: row.created_at,
        updated_at: row.updated_at,
    })
}
