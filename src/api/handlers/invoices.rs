//! The handlers of the Invoices operations.

use super::Result;
use crate::api::context::Context;
use crate::api::extract::{HeaderParams, JsonBody, QueryParams};
use crate::api::request::{Access, handle_idempotent, read};
use crate::domain::invoices;
use crate::wire::latest::{params, types};
use dropshot::{HttpResponseOk, Path, RequestContext};

pub async fn invoice_list(
    rqctx: RequestContext<Context>,
    query: QueryParams<params::InvoiceListQuery>,
    headers: HeaderParams<params::InvoiceListHeaders>,
) -> Result<HttpResponseOk<types::InvoiceList>> {
    read(&rqctx, headers, |c| async move { Ok(invoices::list(&c, query.into_inner()?).await?) }).await
}

pub async fn invoice_view(
    rqctx: RequestContext<Context>,
    path: Path<params::InvoiceViewPath>,
    headers: HeaderParams<params::InvoiceViewHeaders>,
) -> Result<HttpResponseOk<types::Invoice>> {
    read(&rqctx, headers, |c| async move { Ok(invoices::view(&c, &path.into_inner().invoice_id).await?) }).await
}

pub async fn invoice_mark_paid(
    rqctx: RequestContext<Context>,
    path: Path<params::InvoiceMarkPaidPath>,
    headers: HeaderParams<params::InvoiceMarkPaidHeaders>,
    body: JsonBody<types::MarkInvoicePaidRequest, true>,
) -> Result<HttpResponseOk<types::Invoice>> {
    let invoice = path.into_inner().invoice_id;
    handle_idempotent(&rqctx, Access::Write, headers, body, |c, body| async move { Ok(HttpResponseOk(invoices::paid::mark_paid(&c, &invoice, body).await?)) })
        .await
}
