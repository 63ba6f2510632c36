//! The order.* events a change records, in its transaction.

use super::lines::OrderDoc;
use super::render;
use crate::error::Result;
use crate::store::{OrderRow, Store, Tx};
use chrono::{DateTime, Utc};
use serde_json::json;

/// Records order.statusChanged (and the event of the new status), plus
/// order.lineItemStatusChanged for each line whose status moved.
pub async fn record_transition(tx: &mut Tx<'_>, before: &OrderRow, after: &OrderRow, at: DateTime<Utc>, event: Option<&str>) -> Result<()> {
    let order = serde_json::to_value(render::order(after)?).expect("wire values serialize");
    Store::record_event(tx, after.org, "order.statusChanged", at, &json!({"orderId": after.id, "previousStatus": before.status, "status": after.status, "order": order})).await?;
    if let Some(e) = event {
        Store::record_event(tx, after.org, e, at, &order).await?;
    }
    let (old, new) = (OrderDoc::of(before)?, OrderDoc::of(after)?);
    for (i, (o, n)) in old.lines.iter().zip(&new.lines).enumerate() {
        if o.status != n.status {
            let data = json!({"orderId": after.id, "lineItemId": n.line_item_id, "previousStatus": o.status, "status": n.status, "lineItem": order["lineItems"][i]});
            Store::record_event(tx, after.org, "order.lineItemStatusChanged", at, &data).await?;
        }
    }
    Ok(())
}
