//! An invoice's machine-readable document: a UBL 2.1 Invoice shaped as
//! Peppol BIS Billing 3.0 (EN 16931) expects, the format Swedish and EU
//! public buyers must accept and most e-invoicing access points take.
//! Served at the invoice's `documentUrl` for every finalised invoice;
//! E_INVOICE customers are delivered it.

use super::lines::{self, Line};
use crate::error::Result;
use crate::markup::escape;
use crate::money::decimal;
use crate::store::{CustomerRow, InvoiceRow};
use std::fmt::Write;

const CUSTOMIZATION: &str = "urn:cen.eu:en16931:2017#compliant#urn:fdc:peppol.eu:2017:poacc:billing:3.0";
const PROFILE: &str = "urn:fdc:peppol.eu:2017:poacc:billing:01:1.0";

/// A rate in basis points as a percentage: 2500 is "25", 1250 "12.5".
fn percent(basis_points: u32) -> String {
    let whole = format!("{}.{:02}", basis_points / 100, basis_points % 100);
    whole.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// A line's VAT category: S (standard rated) with its rate, or Z (zero
/// rated) when it is taxed nothing.
fn category(rate: u32) -> (&'static str, String) {
    if rate == 0 { ("Z", "0".into()) } else { ("S", percent(rate)) }
}

fn line_rate(l: &Line) -> u32 {
    l.taxes.iter().map(|t| t.rate_basis_points).sum()
}

fn net(l: &Line) -> i64 {
    l.amount_minor - l.discount_minor()
}

/// The document of finalised `invoice`, from the organisation `seller` to
/// `customer`.
pub fn ubl(invoice: &InvoiceRow, seller: &str, customer: &CustomerRow) -> Result<String> {
    let lines = lines::parse(&invoice.lines)?;
    let cur = invoice.currency.as_str();
    let amount = |minor: i64| format!("currencyID=\"{}\">{}", escape(cur), decimal(minor, cur));
    let mut x = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    x.push_str("<Invoice xmlns=\"urn:oasis:names:specification:ubl:schema:xsd:Invoice-2\" ");
    x.push_str("xmlns:cac=\"urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2\" ");
    x.push_str("xmlns:cbc=\"urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2\">\n");
    let _ = writeln!(x, "  <cbc:CustomizationID>{CUSTOMIZATION}</cbc:CustomizationID>\n  <cbc:ProfileID>{PROFILE}</cbc:ProfileID>");
    let _ = writeln!(x, "  <cbc:ID>{}</cbc:ID>", escape(invoice.number.as_deref().unwrap_or_default()));
    let issued = invoice.finalized_at.map_or(invoice.billing_date, |f| f.date_naive());
    let _ = writeln!(x, "  <cbc:IssueDate>{issued}</cbc:IssueDate>");
    if let Some(due) = invoice.due_at {
        let _ = writeln!(x, "  <cbc:DueDate>{}</cbc:DueDate>", due.date_naive());
    }
    let _ = writeln!(x, "  <cbc:InvoiceTypeCode>380</cbc:InvoiceTypeCode>\n  <cbc:DocumentCurrencyCode>{}</cbc:DocumentCurrencyCode>", escape(cur));
    let buyer = customer.reference_id.clone().unwrap_or_else(|| customer.id.to_string());
    let _ = writeln!(x, "  <cbc:BuyerReference>{}</cbc:BuyerReference>", escape(&buyer));
    let _ = writeln!(
        x,
        "  <cac:AccountingSupplierParty><cac:Party><cac:PartyName><cbc:Name>{0}</cbc:Name></cac:PartyName>\
         <cac:PartyLegalEntity><cbc:RegistrationName>{0}</cbc:RegistrationName></cac:PartyLegalEntity></cac:Party></cac:AccountingSupplierParty>",
        escape(seller)
    );
    x.push_str("  <cac:AccountingCustomerParty><cac:Party>");
    if let Some(a) = customer.billing.as_ref().and_then(|b| b.address.as_ref()) {
        let _ = write!(
            x,
            "<cac:PostalAddress><cbc:StreetName>{}</cbc:StreetName><cbc:CityName>{}</cbc:CityName><cbc:PostalZone>{}</cbc:PostalZone>\
             <cac:Country><cbc:IdentificationCode>{}</cbc:IdentificationCode></cac:Country></cac:PostalAddress>",
            escape(&a.street1),
            escape(&a.city),
            escape(&a.zip),
            escape(&a.country)
        );
    }
    let _ = writeln!(
        x,
        "<cac:PartyLegalEntity><cbc:RegistrationName>{}</cbc:RegistrationName></cac:PartyLegalEntity></cac:Party></cac:AccountingCustomerParty>",
        escape(&customer.name)
    );
    // the taxes per rate: what each taxes, and the tax
    let mut by_rate: Vec<(u32, i64, i64)> = vec![];
    for l in &lines {
        let rate = line_rate(l);
        match by_rate.iter_mut().find(|(r, ..)| *r == rate) {
            Some(e) => (e.1, e.2) = (e.1 + net(l), e.2 + l.tax_minor()),
            None => by_rate.push((rate, net(l), l.tax_minor())),
        }
    }
    let _ = write!(x, "  <cac:TaxTotal><cbc:TaxAmount {}</cbc:TaxAmount>", amount(invoice.tax_minor));
    for (rate, taxable, tax) in &by_rate {
        let (id, pct) = category(*rate);
        let _ = write!(
            x,
            "<cac:TaxSubtotal><cbc:TaxableAmount {}</cbc:TaxableAmount><cbc:TaxAmount {}</cbc:TaxAmount><cac:TaxCategory><cbc:ID>{id}</cbc:ID>\
             <cbc:Percent>{pct}</cbc:Percent><cac:TaxScheme><cbc:ID>VAT</cbc:ID></cac:TaxScheme></cac:TaxCategory></cac:TaxSubtotal>",
            amount(*taxable),
            amount(*tax)
        );
    }
    x.push_str("</cac:TaxTotal>\n");
    let net_total = invoice.subtotal_minor - invoice.discount_minor;
    let paid = if invoice.status == crate::states::invoices::InvoiceStatus::Paid { invoice.total_minor } else { 0 };
    let _ = writeln!(
        x,
        "  <cac:LegalMonetaryTotal><cbc:LineExtensionAmount {}</cbc:LineExtensionAmount><cbc:TaxExclusiveAmount {}</cbc:TaxExclusiveAmount>\
         <cbc:TaxInclusiveAmount {}</cbc:TaxInclusiveAmount><cbc:PrepaidAmount {}</cbc:PrepaidAmount><cbc:PayableAmount {}</cbc:PayableAmount></cac:LegalMonetaryTotal>",
        amount(net_total),
        amount(net_total),
        amount(invoice.total_minor),
        amount(paid),
        amount(invoice.total_minor - paid)
    );
    for (n, l) in lines.iter().enumerate() {
        let _ = write!(x, "  <cac:InvoiceLine><cbc:ID>{}</cbc:ID><cbc:InvoicedQuantity unitCode=\"C62\">1</cbc:InvoicedQuantity>", n + 1);
        let _ = write!(x, "<cbc:LineExtensionAmount {}</cbc:LineExtensionAmount>", amount(net(l)));
        if let Some((start, end)) = l.period {
            let last = end.pred_opt().unwrap_or(end);
            let _ = write!(x, "<cac:InvoicePeriod><cbc:StartDate>{start}</cbc:StartDate><cbc:EndDate>{last}</cbc:EndDate></cac:InvoicePeriod>");
        }
        for d in &l.discounts {
            let _ = write!(
                x,
                "<cac:AllowanceCharge><cbc:ChargeIndicator>false</cbc:ChargeIndicator><cbc:AllowanceChargeReason>{}</cbc:AllowanceChargeReason>\
                 <cbc:Amount {}</cbc:Amount></cac:AllowanceCharge>",
                escape(&d.description),
                amount(d.amount_minor)
            );
        }
        let (id, pct) = category(line_rate(l));
        let _ = writeln!(
            x,
            "<cac:Item><cbc:Name>{}</cbc:Name><cac:ClassifiedTaxCategory><cbc:ID>{id}</cbc:ID><cbc:Percent>{pct}</cbc:Percent>\
             <cac:TaxScheme><cbc:ID>VAT</cbc:ID></cac:TaxScheme></cac:ClassifiedTaxCategory></cac:Item><cac:Price><cbc:PriceAmount {}</cbc:PriceAmount></cac:Price></cac:InvoiceLine>",
            escape(&l.description),
            amount(l.amount_minor)
        );
    }
    x.push_str("</Invoice>\n");
    Ok(x)
}

#[cfg(test)]
mod tests {
    #[test]
    fn rates_are_percentages() {
        assert_eq!(super::percent(2500), "25");
        assert_eq!(super::percent(1250), "12.5");
        assert_eq!(super::percent(600), "6");
        assert_eq!(super::percent(5), "0.05");
    }
}
