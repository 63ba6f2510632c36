//! Payment links, intents and profiles in their wire form, and the lines
//! an intent keeps of what it collects for.

use crate::error::{Error, Result};
use crate::store::{ChargeRow, IntentRow, LinkRow, ProfileRow, RefundRow};
use crate::wire::latest as wire;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// A line of an intent, as kept (`payment_intents.line_items`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct IntentLine {
    /// the order's line it stands for (none for an invoice's)
    #[serde(default)]
    pub line_item_id: Option<Uuid>,
    pub description: String,
    pub amount_minor: i64,
    pub discounts: Vec<(String, i64)>,
    pub taxes: Vec<(String, i64)>,
    #[serde(default)]
    pub subscription_id: Option<Uuid>,
    #[serde(default)]
    pub license_id: Option<Uuid>,
}

/// The lines an intent collects for: the order's, as priced now.
pub fn lines_of(order: &wire::Order) -> Vec<IntentLine> {
    order
        .line_items
        .iter()
        .map(|l| IntentLine {
            line_item_id: Some(l.line_item_id),
            description: l.product_offering.name.clone(),
            amount_minor: l.pricing.subtotal_minor,
            discounts: l.pricing.discounts.iter().map(|d| (d.description.clone(), d.amount_minor)).collect(),
            taxes: l.pricing.taxes.iter().map(|t| (t.description.clone(), t.amount_minor)).collect(),
            subscription_id: None,
            license_id: None,
        })
        .collect()
}

pub fn stored_lines(row: &IntentRow) -> Result<Vec<IntentLine>> {
    serde_json::from_value(row.lines.clone()).map_err(|e| Error::Internal(format!("intent {} lines: {e}", row.id)))
}

/// What submitting the order made of each line, now kept on the intent.
pub fn with_created(row: &mut IntentRow, order: &wire::Order) -> Result<()> {
    let mut lines = stored_lines(row)?;
    for l in &mut lines {
        if let Some(o) = order.line_items.iter().find(|o| Some(o.line_item_id) == l.line_item_id) {
            l.subscription_id = o.created_subscription_id.or(o.subscription_id);
            l.license_id = o.created_license_id;
        }
    }
    row.lines = serde_json::to_value(lines).expect("JSON");
    Ok(())
}

fn amounts(v: &[(String, i64)]) -> Vec<wire::PaymentIntentAmount> {
    v.iter().map(|(d, a)| wire::PaymentIntentAmount { description: d.clone(), amount_minor: *a }).collect()
}

pub fn intent_item(row: &IntentRow) -> wire::PaymentIntentListItem {
    wire::PaymentIntentListItem {
        payment_intent_id: row.id,
        customer_id: row.customer_id,
        status: row.status.into(),
        amount_minor: row.amount_minor,
        currency: row.currency.clone(),
        description: row.description.clone(),
        due_at: row.due_at,
        created_at: row.created_at,
        updated_at: row.updated_at,
    }
}

fn charge(c: &ChargeRow) -> wire::PaymentCharge {
    wire::PaymentCharge {
        charge_id: c.id,
        status: c.status.into(),
        amount_minor: c.amount_minor,
        currency: c.currency.clone(),
        payment_provider: c.provider.into(),
        payment_method: wire::PaymentMethodSummary { type_: c.method.kind.clone(), display_name: c.method.display_name.clone() },
        payment_profile_id: c.profile_id,
        failure_code: c.failure_code.clone(),
        created_at: c.created_at,
        updated_at: c.updated_at,
    }
}

fn refund(r: &RefundRow) -> wire::PaymentRefund {
    wire::PaymentRefund {
        refund_id: r.id,
        status: r.status.into(),
        amount_minor: r.amount_minor,
        reason: r.reason.clone(),
        failure_code: r.failure_code.clone(),
        created_at: r.created_at,
        updated_at: r.updated_at,
    }
}

/// What refunds have given back or are giving back.
pub fn refunded(refunds: &[RefundRow]) -> i64 {
    refunds.iter().filter(|r| r.status != crate::states::payments::RefundStatus::Failed).map(|r| r.amount_minor).sum()
}

pub fn intent(row: &IntentRow, charges: &[ChargeRow], refunds: &[RefundRow]) -> Result<wire::PaymentIntent> {
    let lines = stored_lines(row)?;
    Ok(wire::PaymentIntent {
        payment_intent_id: row.id,
        customer_id: row.customer_id,
        status: row.status.into(),
        amount_minor: row.amount_minor,
        currency: row.currency.clone(),
        amount_refunded_minor: refunded(refunds),
        description: row.description.clone(),
        order_id: row.order_id,
        invoice_id: row.invoice_id,
        payment_link_id: row.link_id,
        payment_session_id: row.session_id,
        due_at: row.due_at,
        line_items: lines
            .iter()
            .map(|l| wire::PaymentIntentLineItem {
                description: l.description.clone(),
                amount_minor: l.amount_minor,
                subscription_id: l.subscription_id,
                license_id: l.license_id,
                discounts: amounts(&l.discounts),
                taxes: amounts(&l.taxes),
            })
            .collect(),
        charges: charges.iter().map(charge).collect(),
        refunds: refunds.iter().map(refund).collect(),
        created_at: row.created_at,
        updated_at: row.updated_at,
    })
}

/// The address of a hosted page: the server's public URL, the page's kind
/// and its token.
pub fn hosted_url(public_url: &str, token: &str) -> String {
    format!("{}/pay/{token}", public_url.trim_end_matches('/'))
}

pub fn link(row: &LinkRow) -> wire::PaymentLink {
    wire::PaymentLink {
        payment_link_id: row.id,
        order_id: row.order_id,
        invoice_id: row.invoice_id,
        customer_id: Some(row.customer_id),
        payment_provider: Some(row.provider.into()),
        payment_profile_id: row.profile_id,
        hosted_url: row.hosted_url.clone(),
        status: row.status.into(),
        amount_minor: row.amount_minor,
        currency: row.currency.clone(),
        description: row.description.clone(),
        save_payment_profile: row.save_profile,
        set_as_default_payment_profile: row.set_default,
        grant_autopay_consent: row.autopay,
        payment_intent_id: row.paid.then_some(row.intent_id),
        return_url: row.return_url.clone(),
        cancel_url: row.cancel_url.clone(),
        failure_reason: row.failure_reason.clone(),
        expires_at: row.expires_at,
        completed_at: row.completed_at,
        created_at: row.created_at,
        updated_at: row.updated_at,
        metadata: row.metadata.clone().map(wire::Metadata),
    }
}

pub fn profile_item(row: &ProfileRow, default: Option<&str>) -> wire::PaymentProfileListItem {
    wire::PaymentProfileListItem {
        payment_profile_id: row.id,
        payment_provider: Some(row.provider.into()),
        type_: row.method_type.clone(),
        status: row.status.into(),
        display_name: Some(row.display_name.clone()),
        is_default: Some(default == Some(row.id.to_string().as_str())),
        expires_at: row.expires_on,
        created_at: row.created_at,
    }
}

pub fn profile(row: &ProfileRow, default: Option<&str>) -> Result<wire::PaymentProfile> {
    let billing_details =
        row.billing_details.clone().map(serde_json::from_value).transpose().map_err(|e| Error::Internal(format!("profile {} billing details: {e}", row.id)))?;
    Ok(wire::PaymentProfile {
        payment_profile_id: row.id,
        customer_id: row.customer_id,
        payment_provider: Some(row.provider.into()),
        type_: row.method_type.clone(),
        status: row.status.into(),
        display_name: Some(row.display_name.clone()),
        is_default: Some(default == Some(row.id.to_string().as_str())),
        expires_at: row.expires_on,
        billing_details,
        created_at: row.created_at,
        metadata: row.metadata.clone().map(wire::Metadata),
    })
}
