//! The handlers of the Payment Links operations; creating needs the
//! server's public URL (the hosted page's address).

use super::Result;
use crate::api::context::Context;
use crate::api::extract::{HeaderParams, JsonBody, QueryParams};
use crate::api::request::{Access, handle_idempotent, read};
use crate::domain::{invoices, payments};
use crate::wire::latest::{params, types};
use dropshot::{HttpResponseCreated, HttpResponseOk, Path, RequestContext};

pub async fn payment_link_list(
    rqctx: RequestContext<Context>,
    query: QueryParams<params::PaymentLinkListQuery>,
    headers: HeaderParams<params::PaymentLinkListHeaders>,
) -> Result<HttpResponseOk<types::PaymentLinkList>> {
    read(&rqctx, headers, |c| async move { Ok(payments::list_links(&c, query.into_inner()?).await?) }).await
}

pub async fn payment_link_create(
    rqctx: RequestContext<Context>,
    headers: HeaderParams<params::PaymentLinkCreateHeaders>,
    body: JsonBody<types::CreatePaymentLinkRequest>,
) -> Result<HttpResponseCreated<types::PaymentLink>> {
    let public_url = super::public_url(&rqctx);
    handle_idempotent(&rqctx, Access::Write, headers, body, |c, body| async move {
        Ok(HttpResponseCreated(payments::links::create(&c, &public_url, body, invoices::collect::link_collecting).await?))
    })
    .await
}

pub async fn payment_link_view(
    rqctx: RequestContext<Context>,
    path: Path<params::PaymentLinkViewPath>,
    headers: HeaderParams<params::PaymentLinkViewHeaders>,
) -> Result<HttpResponseOk<types::PaymentLink>> {
    read(&rqctx, headers, |c| async move { Ok(payments::view_link(&c, &path.into_inner().payment_link_id).await?) }).await
}

pub async fn payment_link_cancel(
    rqctx: RequestContext<Context>,
    path: Path<params::PaymentLinkCancelPath>,
    headers: HeaderParams<params::PaymentLinkCancelHeaders>,
) -> Result<HttpResponseOk<types::PaymentLink>> {
    let link = path.into_inner().payment_link_id;
    handle_idempotent(
        &rqctx,
        Access::Write,
        headers,
        JsonBody::<()>::none(),
        |c, ()| async move { Ok(HttpResponseOk(payments::links::cancel(&c, &link).await?)) },
    )
    .await
}
