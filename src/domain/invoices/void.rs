//! Voiding an invoice issued in error (`switchboard admin invoice void`):
//! OPEN → VOID (`invoice.voided`), owing nothing. Its ways of being paid
//! close (autopay's intent, its links) and what its dunning suspended is
//! restored.

use super::row::written;
use super::{closing, due, render};
use crate::domain::Caller;
use crate::domain::change::Change;
use crate::error::{Error, InternalCode, Result};
use crate::events::{self, Event};
use crate::states::invoices::{INVOICE, InvoiceOp, InvoiceStatus};
use crate::store::{Stateful, Store};
use crate::wire::latest as wire;
use uuid::Uuid;

pub async fn void(caller: &Caller, id: Uuid) -> Result<wire::Invoice> {
    let row = caller.store.invoice(caller.org, id).await?.ok_or_else(|| Error::not_found(InternalCode::InvoiceNotFound, "invoice"))?;
    let row = due::apply_if_due(caller, row).await?;
    let mut after = row.clone();
    after.status = INVOICE.next(InvoiceOp::Void, row.status)?;
    (after.closed_at, after.next_attempt_at) = (Some(caller.now), None);
    let after = written(after, caller.now);
    let mut tx = caller.store.begin().await?;
    if !Store::update_invoice(&mut tx, &after).await? {
        let now: Option<InvoiceStatus> = Store::status_in(&mut tx, Stateful::Invoices, caller.org, row.id).await?;
        return Err(now.and_then(|s| INVOICE.next(InvoiceOp::Void, s).err()).unwrap_or_else(|| Error::changed_meanwhile("invoice")));
    }
    events::record(&mut tx, caller.org, caller.now, &Event::InvoiceVoided(render::invoice(&after)?)).await?;
    closing::close_others(&mut tx, caller, &row, None, caller.now).await?;
    caller.follow(&mut tx, Change::InvoiceSettled { invoice: &after, why: "void" }).await?;
    tx.commit().await?;
    render::invoice(&after)
}
