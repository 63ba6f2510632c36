//! Making and changing orders: create, change (PUT), approve, cancel.

use super::events::record_transition;
use super::lines::{OrderDoc, billing_currency, check_lines, context, refusal};
use super::render;
use crate::domain::access::Role;
use crate::domain::change::Change;
use crate::domain::customers::tax_rates;
use crate::domain::orders::meanwhile::moved_meanwhile;
use crate::domain::{Caller, check_reference_free, customers};
use crate::error::{Error, InternalCode, Result};
use crate::events::{self, Event};
use crate::states::orders::{LINE_ITEM, LineOp, ORDER, OrderOp};
use crate::store::{JobKind, OrderRow, Referenced, Store, Tx};
use crate::wire::latest as wire;
use uuid::Uuid;

/// A MEMBER's order needs approval by a MANAGER or ADMIN.
fn needs_approval(caller: &Caller, customer: Uuid) -> bool {
    caller.user.as_ref().is_some_and(|u| u.roles.get(&customer).is_some_and(|r| *r == Role::Member))
}

pub async fn create(caller: &Caller, req: wire::CreateOrderRequest, expiry: chrono::Duration) -> Result<wire::Order> {
    let row = prepare(caller, req, expiry).await?;
    let mut tx = caller.store.begin().await?;
    let order = insert(&mut tx, caller, &row).await?;
    Store::schedule_job(&mut tx, JobKind::OrderExpiry, &row.id.to_string(), Some(caller.org), row.expires_at, caller.now).await?;
    tx.commit().await?;
    Ok(order)
}

/// An order created and submitted at once (POST /subscriptions buys
/// through one), in one transaction: the submitted order and the events of
/// what its lines created.
pub async fn create_submitted(caller: &Caller, req: wire::CreateOrderRequest, expiry: chrono::Duration) -> Result<(wire::Order, Vec<Event>)> {
    let row = prepare(caller, req, expiry).await?;
    let checked = super::submit::check(caller, &row).await?;
    let mut tx = caller.store.begin().await?;
    insert(&mut tx, caller, &row).await?;
    // nobody else has seen the order: nothing can move it meanwhile
    let written = super::submit::write(&mut tx, caller, &row, checked).await?;
    let written = written.ok_or_else(|| Error::Internal(format!("order {} moved before it was committed", row.id)))?;
    caller.follow(&mut tx, Change::OrderSubmittedUnpaid { order: &written.0, at: caller.now }).await?;
    tx.commit().await?;
    Ok(written)
}

/// A new DRAFT order of `req`, checked, not written yet.
async fn prepare(caller: &Caller, req: wire::CreateOrderRequest, expiry: chrono::Duration) -> Result<OrderRow> {
    let customer = customers::find(caller, &req.customer_id).await?;
    caller.require_role(customer.id, Role::Member)?;
    let currency = match req.currency.clone().or_else(|| billing_currency(&customer)) {
        Some(c) => c,
        None => {
            return Err(Error::Conflict {
                code: InternalCode::CurrencyRequired,
                message: "The customer has no billing currency: the order needs a currency.".into(),
                property: "currency",
            });
        }
    };
    if crate::money::exponent(&currency).is_none() {
        return Err(Error::invalid("currency", "invalid_currency", "must be an ISO 4217 currency code with minor units"));
    }
    let ctx = context(caller, customer).await?;
    let lines = check_lines(caller, &ctx, &currency, &req.line_items).await?.map_err(refusal)?;
    if let Some(r) = &req.reference_id {
        check_reference_free(&caller.store, caller.org, Referenced::Order, r, None).await?;
    }
    let now = caller.now;
    Ok(OrderRow {
        id: crate::domain::new_id(),
        org: caller.org,
        customer_id: ctx.customer.id,
        customer_name: ctx.customer.name.clone(),
        status: crate::states::orders::OrderStatus::Draft,
        currency,
        reference_id: req.reference_id,
        approval_required: needs_approval(caller, ctx.customer.id),
        doc: OrderDoc { lines, tax_rates: tax_rates(&caller.store, caller.org, &ctx.customer).await? }.to_stored(),
        metadata: req.metadata.map(|m| m.0),
        expires_at: now + expiry,
        approved_at: None,
        submitted_at: None,
        cancelled_at: None,
        created_at: now,
        updated_at: now,
    })
}

/// Writes the new order `row` and its `order.created`.
async fn insert(tx: &mut Tx, caller: &Caller, row: &OrderRow) -> Result<wire::Order> {
    let order = render::order(row)?;
    Store::insert_order(tx, row).await?;
    events::record(tx, caller.org, caller.now, &Event::OrderCreated(order.clone())).await?;
    Ok(order)
}

pub async fn update(caller: &Caller, key: &str, req: wire::UpdateOrderRequest) -> Result<wire::Order> {
    let before = super::find(caller, key).await?;
    caller.require_role(before.customer_id, Role::Member)?;
    let mut row = before.clone();
    row.status = ORDER.next(OrderOp::Change, before.status)?;
    let lines_changed = !req.line_items.is_empty();
    if lines_changed {
        let items = &req.line_items;
        let customer = customers::find(caller, &row.customer_id.to_string()).await?;
        let taxes = tax_rates(&caller.store, caller.org, &customer).await?;
        let ctx = context(caller, customer).await?;
        let lines = check_lines(caller, &ctx, &row.currency, items).await?.map_err(refusal)?;
        row.doc = OrderDoc { lines, tax_rates: taxes }.to_stored();
    }
    if let Some(r) = req.reference_id {
        check_reference_free(&caller.store, caller.org, Referenced::Order, &r, Some(row.id)).await?;
        row.reference_id = Some(r);
    }
    if let Some(m) = req.metadata {
        row.metadata = Some(m.0);
    }
    row.approval_required |= needs_approval(caller, row.customer_id);
    row.updated_at = caller.now;
    let order = render::order(&row)?;
    let mut tx = caller.store.begin().await?;
    if !Store::update_order(&mut tx, &row, &before).await? {
        return Err(moved_meanwhile(&mut tx, caller, row.id, OrderOp::Change).await);
    }
    events::record(&mut tx, caller.org, caller.now, &Event::OrderUpdated(order.clone())).await?;
    // new lines: what its link would collect no longer holds
    if lines_changed {
        caller.follow(&mut tx, Change::OrderMoved { order: row.id, at: caller.now }).await?;
    }
    tx.commit().await?;
    Ok(order)
}

/// Writes a state move: the row if it is still in `before`'s status, and
/// its events, in one transaction.
async fn commit_transition(caller: &Caller, before: &OrderRow, after: &OrderRow, event: Option<fn(wire::Order) -> Event>, op: OrderOp) -> Result<wire::Order> {
    let mut tx = caller.store.begin().await?;
    if !Store::update_order(&mut tx, after, before).await? {
        return Err(moved_meanwhile(&mut tx, caller, before.id, op).await);
    }
    let order = record_transition(&mut tx, before, after, caller.now, event).await?;
    if !crate::states::orders::is_open(after.status) {
        caller.follow(&mut tx, Change::OrderMoved { order: after.id, at: caller.now }).await?;
    }
    tx.commit().await?;
    Ok(order)
}

/// Every line of `row` moved by `op`.
fn move_lines(row: &mut OrderRow, op: LineOp) -> Result<()> {
    let mut doc = OrderDoc::of(row)?;
    for l in &mut doc.lines {
        l.status = LINE_ITEM.next(op, l.status)?;
    }
    row.doc = doc.to_stored();
    Ok(())
}

pub async fn approve(caller: &Caller, key: &str) -> Result<wire::Order> {
    let before = super::find(caller, key).await?;
    caller.require_role(before.customer_id, Role::Manager)?;
    let mut after = before.clone();
    after.status = ORDER.next(OrderOp::Approve, before.status)?;
    after.approved_at = Some(caller.now);
    after.updated_at = caller.now;
    commit_transition(caller, &before, &after, None, OrderOp::Approve).await
}

pub async fn cancel(caller: &Caller, key: &str) -> Result<wire::Order> {
    let before = super::find(caller, key).await?;
    caller.require_role(before.customer_id, Role::Member)?;
    let mut after = before.clone();
    after.status = ORDER.next(OrderOp::Cancel, before.status)?;
    after.cancelled_at = Some(caller.now);
    after.updated_at = caller.now;
    move_lines(&mut after, LineOp::Cancel)?;
    commit_transition(caller, &before, &after, Some(Event::OrderCancelled), OrderOp::Cancel).await
}
