//! Payment sessions: server-to-server collection for an order from a saved
//! profile, no page. The request commits the session, its intent and its
//! charge (PROCESSING) with the job that sends the charge; the job asks the
//! provider with the charge's id as the idempotency key (`charge::resolve`),
//! so a crash before, during or after the call never charges twice, and
//! `settle` ends the session with the outcome.

use super::collectable::claim_for_collection;
use super::enabled::require_enabled;
use super::links::collectable;
use crate::domain::Caller;
use crate::error::{Error, InternalCode, Result};
use crate::states::payments::{INTENT, IntentOp, PaymentIntentStatus, PaymentSessionStatus};
use crate::store::{IntentRow, JobKind, SessionRow, Store};
use crate::wire::latest as wire;
use uuid::Uuid;

fn render(s: &SessionRow) -> wire::PaymentSession {
    wire::PaymentSession {
        payment_session_id: s.id,
        status: s.status.into(),
        order_id: s.order_id,
        customer_id: s.customer_id,
        payment_profile_id: s.profile_id,
        payment_intent_id: s.intent_id,
        payment_provider: s.provider.into(),
        amount_minor: s.amount_minor,
        currency: s.currency.clone(),
        failure_code: s.failure_code.clone(),
        failure_reason: s.failure_reason.clone(),
        completed_at: s.completed_at,
        created_at: s.created_at,
        updated_at: s.updated_at,
        metadata: s.metadata.clone().map(wire::Metadata),
    }
}

pub async fn view(caller: &Caller, key: &str) -> Result<wire::PaymentSession> {
    let missing = || Error::not_found(InternalCode::PaymentSessionNotFound, "payment session");
    let id = Uuid::parse_str(key).map_err(|_| missing())?;
    let row = caller.store.session(caller.org, id).await?.filter(|s| caller.sees_customer(s.customer_id));
    Ok(render(&row.ok_or_else(missing)?))
}

pub async fn create(caller: &Caller, req: wire::CreatePaymentSessionRequest) -> Result<wire::PaymentSession> {
    let (order, priced, amount) = collectable(caller, &req.order_id).await?;
    let profile = super::profiles::usable(caller, &req.payment_profile_id, order.customer_id).await?;
    require_enabled(caller, profile.provider).await?;
    let now = caller.now;
    let (session_id, intent_id) = (crate::domain::new_id(), crate::domain::new_id());
    let intent = IntentRow {
        id: intent_id,
        org: caller.org,
        customer_id: order.customer_id,
        order_id: Some(order.id),
        link_id: None,
        session_id: Some(session_id),
        invoice_id: None,
        // collection starts with its charge
        status: INTENT.next(IntentOp::Charge, PaymentIntentStatus::Pending)?,
        amount_minor: amount,
        currency: order.currency.clone(),
        description: Some(format!("Order {}", order.id)),
        due_at: None,
        lines: serde_json::to_value(super::render::lines_of(&priced)).expect("JSON"),
        created_at: now,
        updated_at: now,
    };
    let charge = super::profiles::off_session_charge(&intent, &profile, now);
    let session = SessionRow {
        id: session_id,
        org: caller.org,
        customer_id: order.customer_id,
        order_id: order.id,
        profile_id: profile.id,
        intent_id,
        provider: profile.provider,
        status: PaymentSessionStatus::Processing,
        amount_minor: amount,
        currency: order.currency.clone(),
        failure_code: None,
        failure_reason: None,
        metadata: req.metadata.map(|m| m.0),
        completed_at: None,
        created_at: now,
        updated_at: now,
    };
    let mut tx = caller.store.begin().await?;
    claim_for_collection(&mut tx, &order).await?;
    Store::insert_intent(&mut tx, &intent).await?;
    Store::insert_charge(&mut tx, &charge).await?;
    Store::insert_session(&mut tx, &session).await?;
    // sent by its job, due at once (the request wakes it)
    Store::schedule_job(&mut tx, JobKind::PaymentCharge, &charge.id.to_string(), Some(caller.org), now, now).await?;
    tx.commit().await?;
    Ok(render(&session))
}
