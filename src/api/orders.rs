//! The handlers of the order operations that take more than a call:
//! creating (with the server's order expiry) and the bodiless, idempotent
//! steps (approve, cancel, submit).

use super::context::Context;
use super::error::ApiError;
use super::extract::{HeaderParams, JsonBody};
use super::reply::Reply;
use super::request::{Access, handle_idempotent};
use crate::domain::orders;
use crate::wire::latest::{params, types};
use dropshot::{HttpResponseCreated, HttpResponseOk, RequestContext};

type Result<T> = std::result::Result<Reply<T>, ApiError>;

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
