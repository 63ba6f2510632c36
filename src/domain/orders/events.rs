//! The events of an order's state move, recorded in its transaction.

use super::lines::OrderDoc;
use super::render;
use crate::error::Result;
use crate::events::{self, Event};
use crate::store::{OrderRow, Tx};
use crate::wire::latest as wire;
use chrono::{DateTime, Utc};

/// Records order.statusChanged (and `event`, the event of the new status),
/// plus order.lineItemStatusChanged for each line whose status moved.
/// Returns the order as the events carry it, which is the answer too.
pub async fn record_transition(
    tx: &mut Tx,
    before: &OrderRow,
    after: &OrderRow,
    at: DateTime<Utc>,
    event: Option<fn(wire::Order) -> Event>,
) -> Result<wire::Order> {
    let order = render::order(after)?;
    let change = wire::OrderStatusChange { order_id: after.id, previous_status: before.status.into(), status: after.status.into(), order: order.clone() };
    events::record(tx, after.org, at, &Event::OrderStatusChanged(change)).await?;
    if let Some(e) = event {
        events::record(tx, after.org, at, &e(order.clone())).await?;
    }
    let old = OrderDoc::of(before)?;
    for (o, n) in old.lines.iter().zip(&order.line_items) {
        if wire::OrderLineItemStatus::from(o.status) != n.status {
            let change = wire::OrderLineItemStatusChange {
                order_id: after.id,
                line_item_id: n.line_item_id,
                previous_status: o.status.into(),
                status: n.status,
                line_item: n.clone(),
            };
            events::record(tx, after.org, at, &Event::OrderLineItemStatusChanged(change)).await?;
        }
    }
    Ok(order)
}
