//! An invoice's lines as stored, how a line is priced (by the catalog's
//! rules, the same as an order's: `pricing`), and the invoice's totals as
//! the sums of its lines'.

use crate::domain::pricing::Amounts;
use crate::error::{Error, Result};
use chrono::NaiveDate;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// What a line bills.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum LineKind {
    SubscriptionRenewal,
    LicenseRenewal,
    Order,
    Usage,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LineDiscount {
    pub description: String,
    pub amount_minor: i64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LineTax {
    pub description: String,
    pub rate_basis_points: u32,
    pub amount_minor: i64,
}

/// One line, as stored in the invoice's `lines` column.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Line {
    pub kind: LineKind,
    pub description: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub period: Option<(NaiveDate, NaiveDate)>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subscription_id: Option<Uuid>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub license_id: Option<Uuid>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub order_id: Option<Uuid>,
    pub amount_minor: i64,
    pub discounts: Vec<LineDiscount>,
    pub taxes: Vec<LineTax>,
}

/// What a line is about besides its amounts.
pub struct About {
    pub kind: LineKind,
    pub description: String,
    pub period: Option<(NaiveDate, NaiveDate)>,
    pub subscription_id: Option<Uuid>,
    pub license_id: Option<Uuid>,
    pub order_id: Option<Uuid>,
}

impl Line {
    /// The line of `amounts` (one priced charge).
    pub fn of(about: About, amounts: &Amounts) -> Line {
        Line {
            kind: about.kind,
            description: about.description,
            period: about.period,
            subscription_id: about.subscription_id,
            license_id: about.license_id,
            order_id: about.order_id,
            amount_minor: amounts.subtotal,
            discounts: amounts.discounts.iter().map(|d| LineDiscount { description: d.description.clone(), amount_minor: d.amount }).collect(),
            taxes: amounts
                .taxes
                .iter()
                .map(|t| LineTax { description: t.description.clone(), rate_basis_points: t.rate_basis_points, amount_minor: t.amount })
                .collect(),
        }
    }

    pub fn discount_minor(&self) -> i64 {
        self.discounts.iter().map(|d| d.amount_minor).sum()
    }

    pub fn tax_minor(&self) -> i64 {
        self.taxes.iter().map(|t| t.amount_minor).sum()
    }

    pub fn total_minor(&self) -> i64 {
        self.amount_minor - self.discount_minor() + self.tax_minor()
    }

    /// Whether `other` adds to this line instead of standing beside it:
    /// usage of one subscription and kind on one invoice is one line.
    pub fn takes(&self, other: &Line) -> bool {
        self.kind == LineKind::Usage && other.kind == self.kind && self.subscription_id == other.subscription_id && self.description == other.description
    }

    /// `other`'s amount added to this line, its taxes taken again on the
    /// sum (rounded once per line, as every line's are).
    pub fn add(&mut self, other: &Line) {
        self.amount_minor += other.amount_minor;
        let base = self.amount_minor - self.discount_minor();
        for t in &mut self.taxes {
            t.amount_minor = crate::domain::pricing::tax(base, t.rate_basis_points);
        }
    }
}

/// The lines of a stored invoice, as it shows them: usage of one
/// subscription and kind on one line (`takes`), written a record at a time.
pub fn parse(lines: &serde_json::Value) -> Result<Vec<Line>> {
    let written: Vec<Line> = serde_json::from_value(lines.clone()).map_err(|e| Error::Internal(format!("stored invoice lines: {e}")))?;
    let mut shown: Vec<Line> = Vec::with_capacity(written.len());
    for line in written {
        match shown.iter_mut().find(|l| l.takes(&line)) {
            Some(existing) => existing.add(&line),
            None => shown.push(line),
        }
    }
    Ok(shown)
}

/// The invoice's totals: (subtotal, discounts, taxes, total), each the
/// sum of its lines'.
pub fn totals(lines: &[Line]) -> (i64, i64, i64, i64) {
    let sum = |f: fn(&Line) -> i64| lines.iter().map(f).sum::<i64>();
    (sum(|l| l.amount_minor), sum(Line::discount_minor), sum(Line::tax_minor), sum(Line::total_minor))
}

/// The taxes per rate over all lines, in the order first met.
pub fn taxes_by_rate(lines: &[Line]) -> Vec<LineTax> {
    let mut out: Vec<LineTax> = vec![];
    for t in lines.iter().flat_map(|l| &l.taxes) {
        match out.iter_mut().find(|o| o.description == t.description && o.rate_basis_points == t.rate_basis_points) {
            Some(o) => o.amount_minor += t.amount_minor,
            None => out.push(t.clone()),
        }
    }
    out
}
