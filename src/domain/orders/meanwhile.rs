//! The refusal of an order's move that another request beat to the row.

use crate::domain::Caller;
use crate::error::Error;
use crate::states::orders::{ORDER, OrderOp};
use crate::store::{Stateful, Store, Tx};

/// The refusal of a move that another request beat to the row: the table's
/// answer for the state that request left.
/// Read in the transaction whose guarded write missed, so that it sees the
/// move that beat it even before that move has committed (on SQLite the
/// two may share a batch).
pub(super) async fn moved_meanwhile(tx: &mut Tx, caller: &Caller, id: uuid::Uuid, op: OrderOp) -> Error {
    match Store::status_in(tx, Stateful::Orders, caller.org, id).await {
        Ok(Some(now)) => ORDER.next(op, now).err().unwrap_or_else(|| Error::changed_meanwhile("order")),
        Ok(None) => Error::concurrent_conflict(),
        Err(e) => e,
    }
}
