//! A subscription as the API shows it: its type, its display name, and
//! its wire form with the offerings it names.

use super::terms;
use crate::domain::Caller;
use crate::domain::catalog::{self, Offerings};
use crate::domain::values::number_display;
use crate::error::{Error, Result};
use crate::store::{Store, SubscriptionRow, Tx};
use crate::wire::latest as wire;

/// `row` as the API shows it, on `offering` (its own), with `pending` (the
/// offering of a change scheduled for later).
pub fn to_wire(row: &SubscriptionRow, offering: wire::ProductOffering, pending: Option<wire::ProductOffering>) -> Result<wire::Subscription> {
    let contracted = serde_json::from_value(row.terms.price.clone()).map_err(|e| Error::Internal(format!("subscription {}: terms: {e}", row.id)))?;
    Ok(wire::Subscription {
        subscription_id: row.id,
        reference_id: row.reference_id.clone(),
        status: row.status.into(),
        type_: row.subscription_type.clone(),
        display: number_display(&row.msisdn, row.display_name.as_deref()),
        msisdn: row.msisdn.clone(),
        customer: wire::CustomerSummary { customer_id: row.customer_id, name: row.customer_name.clone() },
        product_offering: Some(catalog::summary(offering)),
        sim_type: row.sim_type.into(),
        order_id: Some(row.order_id),
        created_at: row.created_at,
        updated_at: row.updated_at,
        iccid: row.life.iccid.clone(),
        // a secret: only the move that issues it and the audited fetch show it (`esim`)
        esim_activation_code: None,
        status_reason: row.life.status_reason.clone(),
        pending_status: row.life.pending.map(|(s, _)| s.into()),
        pending_status_at: row.life.pending.map(|(_, at)| at),
        activated_at: row.life.activated_at,
        paused_at: row.life.paused_at,
        suspended_at: row.life.suspended_at,
        blocked_at: row.life.blocked_at,
        cancelled_at: row.life.cancelled_at,
        ended_at: row.life.ended_at,
        binding_ends_on: row.life.binding_ends_on,
        subscriber_id: row.subscriber_id,
        currency: row.terms.currency.clone(),
        contracted_price: contracted,
        binding_contract: row.terms.binding_contract,
        upfront_paid_cycles: row.terms.upfront_cycles as i32,
        billing_day: row.life.billing_day.map(|d| d as i32),
        renews_on: row.life.renews_on,
        next_payment_on: terms::next_payment(row),
        // (filled by `shown_in`, which reads it)
        port_in: None,
        pending_product_offering: match (&row.life.pending_offering, pending) {
            (Some(p), Some(o)) => Some(wire::PendingProductOffering {
                product_offering: catalog::summary(o),
                change_schedule: p.schedule.parse().map_err(|_| Error::Internal(format!("subscription {}: schedule {:?}", row.id, p.schedule)))?,
                scheduled_at: p.at,
            }),
            _ => None,
        },
    })
}

/// `row` as the API shows it, with the offerings it names.
pub async fn shown(caller: &Caller, offerings: &mut Offerings, row: &SubscriptionRow) -> Result<wire::Subscription> {
    shown_in(caller, None, offerings, row).await
}

/// `shown`, read in `tx` when given (by a move inside its transaction).
pub async fn shown_in(caller: &Caller, mut tx: Option<&mut Tx>, offerings: &mut Offerings, row: &SubscriptionRow) -> Result<wire::Subscription> {
    let offering = offerings.get_in(caller, tx.as_deref_mut(), row.offering_id).await?;
    let pending = match &row.life.pending_offering {
        Some(p) => Some(offerings.get_in(caller, tx.as_deref_mut(), p.offering_id).await?),
        None => None,
    };
    let mut shown = to_wire(row, offering, pending)?;
    // its latest port-in, when it has one
    if let Some(id) = row.life.port_in {
        let porting = match tx {
            Some(tx) => Store::porting_in(tx, caller.org, id).await?,
            None => caller.store.porting(caller.org, id).await?,
        };
        shown.port_in = porting.as_ref().map(super::port_in::to_wire).transpose()?;
    }
    Ok(shown)
}
