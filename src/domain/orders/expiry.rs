//! Orders not submitted by `expiresAt` expire: at once for whoever reads
//! one, and by their order.expiry job for those nobody reads.

use super::events::record_transition;
use super::lines::OrderDoc;
use crate::domain::Caller;
use crate::domain::change::Change;
use crate::error::Result;
use crate::events::Event;
use crate::states::orders::{LINE_ITEM, LineOp, ORDER, OrderOp};
use crate::store::{OrderRow, Store};
use chrono::{DateTime, Utc};
use uuid::Uuid;

/// Moves an open order past its expiry to EXPIRED (with its events, dated
/// at the expiry). Returns the order as it now is.
pub async fn expire_if_due(caller: &Caller, row: OrderRow) -> Result<OrderRow> {
    let Some(expired) = ORDER.target(OrderOp::Expire, row.status) else { return Ok(row) };
    if row.expires_at > caller.now {
        return Ok(row);
    }
    let mut after = row.clone();
    after.status = expired;
    after.updated_at = row.expires_at;
    let mut doc = OrderDoc::of(&row)?;
    for l in &mut doc.lines {
        l.status = LINE_ITEM.next(LineOp::Cancel, l.status)?;
    }
    after.doc = doc.to_stored();
    let mut tx = caller.store.begin().await?;
    if Store::update_order(&mut tx, &after, &row).await? {
        record_transition(&mut tx, &row, &after, row.expires_at, Some(Event::OrderExpired)).await?;
        caller.follow(&mut tx, Change::OrderMoved { order: row.id, at: row.expires_at }).await?;
        tx.commit().await?;
        return Ok(after);
    }
    drop(tx);
    // another request moved it first: read what it left
    super::find_row(caller, row.id).await
}

/// Expires order `id` of `org` if it is open and past its expiry by `now`
/// (the order.expiry job; safe to run again: an order moved meanwhile is
/// left as it is). Whether this call expired it.
pub async fn expire(store: &Store, org: Uuid, id: Uuid, now: DateTime<Utc>) -> Result<bool> {
    let Some(row) = store.order(org, id).await? else { return Ok(false) };
    let caller = Caller::system(store, org, now);
    let before = row.status;
    Ok(expire_if_due(&caller, row).await?.status != before)
}
