//! The handlers of the Orders operations; creating (with the server's
//! order expiry) and the bodiless, idempotent steps (approve, cancel,
//! submit) take more than a call, below.

use super::Result;
use crate::api::context::Context;
use crate::api::extract::{HeaderParams, JsonBody, QueryParams};
use crate::api::request::{Access, handle, handle_idempotent, read};
use crate::domain::orders;
use crate::wire::auk;
use crate::wire::latest::{params, types};
use dropshot::{HttpResponseCreated, HttpResponseOk, Path, RequestContext};

pub async fn order_list(
    rqctx: RequestContext<Context>,
    query: QueryParams<params::OrderListQuery>,
    headers: HeaderParams<params::OrderListHeaders>,
) -> Result<HttpResponseOk<types::OrderList>> {
    read(&rqctx, headers, |c| async move { Ok(orders::list(&c, query.into_inner()?).await?) }).await
}

pub async fn order_create(
    rqctx: RequestContext<Context>,
    headers: HeaderParams<params::OrderCreateHeaders>,
    body: JsonBody<types::CreateOrderRequest>,
) -> Result<HttpResponseCreated<types::Order>> {
    create(&rqctx, headers, body).await
}

pub async fn order_view(
    rqctx: RequestContext<Context>,
    path: Path<params::OrderViewPath>,
    headers: HeaderParams<params::OrderViewHeaders>,
) -> Result<HttpResponseOk<types::Order>> {
    read(&rqctx, headers, |c| async move { Ok(orders::view(&c, &path.into_inner().order_id).await?) }).await
}

pub async fn order_update(
    rqctx: RequestContext<Context>,
    path: Path<params::OrderUpdatePath>,
    headers: HeaderParams<params::OrderUpdateHeaders>,
    body: JsonBody<types::UpdateOrderRequest>,
) -> Result<HttpResponseOk<types::Order>> {
    handle(&rqctx, Access::Write, headers, |c| async move {
        let body = body.into_inner()?;
        Ok(HttpResponseOk(orders::update(&c, &path.into_inner().order_id, body).await?))
    })
    .await
}

pub async fn order_approve(
    rqctx: RequestContext<Context>,
    path: Path<params::OrderApprovePath>,
    headers: HeaderParams<params::OrderApproveHeaders>,
) -> Result<HttpResponseOk<types::Order>> {
    step(&rqctx, path.into_inner().order_id, headers, Step::Approve).await
}

pub async fn order_cancel(
    rqctx: RequestContext<Context>,
    path: Path<params::OrderCancelPath>,
    headers: HeaderParams<params::OrderCancelHeaders>,
) -> Result<HttpResponseOk<types::Order>> {
    step(&rqctx, path.into_inner().order_id, headers, Step::Cancel).await
}

pub async fn order_submit(
    rqctx: RequestContext<Context>,
    path: Path<params::OrderSubmitPath>,
    headers: HeaderParams<params::OrderSubmitHeaders>,
) -> Result<HttpResponseOk<types::Order>> {
    step(&rqctx, path.into_inner().order_id, headers, Step::Submit).await
}

/// auk only: bullfinch returns the pricing from every order operation.
pub async fn order_calculate_price_auk(
    rqctx: RequestContext<Context>,
    path: Path<auk::params::OrderCalculatePricePath>,
    headers: HeaderParams<auk::params::OrderCalculatePriceHeaders>,
) -> Result<HttpResponseOk<auk::types::OrderPricingSummary>> {
    read(&rqctx, headers, |c| async move { Ok(orders::pricing(&c, &path.into_inner().order_id).await?.into()) }).await
}

pub async fn create(
    rqctx: &RequestContext<Context>,
    headers: HeaderParams<params::OrderCreateHeaders>,
    body: JsonBody<types::CreateOrderRequest>,
) -> Result<HttpResponseCreated<types::Order>> {
    let expiry = chrono::Duration::seconds(rqctx.context().settings.order_expiry_seconds.into());
    handle_idempotent(rqctx, Access::Write, headers, body, |c, body| async move { Ok(HttpResponseCreated(orders::create(&c, body, expiry).await?)) }).await
}

/// A step of an order's life asked for by POST /orders/{orderId}/{step}.
pub enum Step {
    Approve,
    Cancel,
    Submit,
}

pub async fn step<H>(rqctx: &RequestContext<Context>, order: String, headers: HeaderParams<H>, step: Step) -> Result<HttpResponseOk<types::Order>> {
    handle_idempotent(rqctx, Access::Write, headers, JsonBody::<()>::none(), |c, ()| async move {
        let order = match step {
            Step::Approve => orders::approve(&c, &order).await?,
            Step::Cancel => orders::cancel(&c, &order).await?,
            Step::Submit => orders::submit(&c, &order).await?,
        };
        Ok(HttpResponseOk(order))
    })
    .await
}
