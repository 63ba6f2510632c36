//! Invoices: what customers owe, one per customer and billing day. Lines
//! are written in the transaction of what they bill (`draft`: renewals,
//! orders submitted without a payment, priced usage), priced by the
//! catalog's rules (`lines`); a DRAFT is finalised at the end of its day
//! with a gapless number (`due`), collected by autopay (`collect`) and
//! paid (`paid`). One transition table (`states`); the wire form in
//! `render`.

pub mod billed;
pub mod closing;
pub mod collect;
pub mod delivery;
pub mod document;
pub mod draft;
pub mod due;
pub mod dunning;
pub mod lines;
pub mod paid;
pub mod render;
pub mod row;
pub mod void;

use super::{Caller, customers};
use crate::error::{Error, InternalCode, Result};
use crate::store::{Cursor, InvoiceFilter, InvoiceRow, limit_or_default};
use crate::wire::latest::{self as wire, params};
use uuid::Uuid;

/// The invoice named by `key`, if the caller sees its customer, with what
/// has fallen due of it done.
pub async fn find(caller: &Caller, key: &str) -> Result<InvoiceRow> {
    let missing = || Error::not_found(InternalCode::InvoiceNotFound, "invoice");
    let id = Uuid::parse_str(key).map_err(|_| missing())?;
    let row = caller.store.invoice(caller.org, id).await?.filter(|i| caller.sees_customer(i.customer_id));
    due::apply_if_due(caller, row.ok_or_else(missing)?).await
}

pub async fn view(caller: &Caller, key: &str) -> Result<wire::Invoice> {
    render::invoice(&find(caller, key).await?)
}

pub async fn list(caller: &Caller, q: params::InvoiceListQuery) -> Result<wire::InvoiceList> {
    due::apply_all_due(caller).await?;
    let after = q.cursor.as_deref().map(Cursor::decode).transpose()?;
    let filter = InvoiceFilter {
        customers: customers::find_all(caller, &q.customer_id).await?,
        statuses: super::filter_of::<wire::InvoiceStatus, _>("status", &q.status)?,
        visible_to: caller.viewer(),
        ..Default::default()
    };
    let page = caller.store.invoices(caller.org, &filter, after, limit_or_default(q.limit)).await?;
    Ok(wire::InvoiceList {
        items: page.items.iter().map(render::invoice).collect::<Result<_>>()?,
        pagination: wire::Pagination { next_cursor: page.next.map(Cursor::encode) },
    })
}
