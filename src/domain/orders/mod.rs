//! Orders: what a customer buys. Line items are checked against the
//! catalog (`lines`), priced at every read (`render`), moved by one
//! transition table (`states`), created and changed (`change`), submitted
//! into subscriptions, add-ons and licenses (`submit`), and expired by the
//! clock (`expiry`). Every change records its events (`events`) in the
//! transaction of the change.

mod change;
mod events;
mod expiry;
mod lines;
mod meanwhile;
pub(crate) mod render;
mod submit;

pub use change::{approve, cancel, create, create_submitted, update};
pub use expiry::expire;
pub use lines::{Line, OfferingRef, OrderDoc};
pub use render::priced;
pub use submit::submit;
/// Submission in parts, for what submits an order as part of its own
/// transaction (a payment link's completion): `ready`, `check`, `write`.
pub mod submission {
    pub use super::submit::{Checked, check, ready, write};
}

use super::{Caller, customers};
use crate::error::{Error, InternalCode, Result};
use crate::store::{Cursor, OrderFilter, OrderRow, limit_or_default};
use crate::wire::latest::{self as wire, params::OrderListQuery};
use uuid::Uuid;

/// The stored order `id`, if the caller sees its customer; else 404.
async fn find_row(caller: &Caller, id: Uuid) -> Result<OrderRow> {
    caller
        .store
        .order(caller.org, id)
        .await?
        .filter(|o| caller.sees_customer(o.customer_id))
        .ok_or_else(|| Error::not_found(InternalCode::OrderNotFound, "order"))
}

/// The order named by `key`, visible to the caller, expired if due.
pub async fn find(caller: &Caller, key: &str) -> Result<OrderRow> {
    let id = Uuid::parse_str(key).map_err(|_| Error::not_found(InternalCode::OrderNotFound, "order"))?;
    let row = find_row(caller, id).await?;
    expiry::expire_if_due(caller, row).await
}

pub async fn view(caller: &Caller, key: &str) -> Result<wire::Order> {
    render::order(&find(caller, key).await?)
}

pub async fn pricing(caller: &Caller, key: &str) -> Result<wire::OrderPricingSummary> {
    Ok(view(caller, key).await?.pricing)
}

pub async fn list(caller: &Caller, q: OrderListQuery) -> Result<wire::OrderList> {
    // a list shows what a read of each would: orders past their expiry
    // are expired now, not when their job gets to them
    for id in caller.store.orders_due_to_expire(caller.org, caller.now, crate::states::orders::OPEN).await? {
        match find_row(caller, id).await {
            Ok(row) => drop(expiry::expire_if_due(caller, row).await?),
            // another customer's order, which this caller does not see
            Err(Error::NotFound { .. }) => {}
            Err(e) => return Err(e),
        }
    }
    let after = q.cursor.as_deref().map(Cursor::decode).transpose()?;
    let filter = OrderFilter {
        customers: customers::find_all(caller, &q.customer_id).await?,
        statuses: super::filter_of::<wire::OrderStatus, _>("status", &q.status)?,
        visible_to: caller.viewer(),
        ..Default::default()
    };
    let page = caller.store.orders(caller.org, &filter, after, limit_or_default(q.limit)).await?;
    Ok(wire::OrderList {
        items: page.items.iter().map(render::list_item).collect::<Result<_>>()?,
        pagination: wire::Pagination { next_cursor: page.next.map(Cursor::encode) },
    })
}
