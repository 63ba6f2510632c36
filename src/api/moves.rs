//! The one way through of every subscription move's handler: an
//! idempotent write, on the subscription the path names, sent to the
//! server's network.

use super::context::Context;
use super::error::ApiError;
use super::extract::{HeaderParams, JsonBody};
use super::reply::Reply;
use super::request::{Access, handle_idempotent};
use crate::domain::subscriptions::lifecycle::{Move, Moves};
use crate::wire::latest::types::Subscription;
use dropshot::{HttpResponseOk, RequestContext};

pub async fn subscription_move<H>(
    rqctx: &RequestContext<Context>,
    headers: HeaderParams<H>,
    body: JsonBody<Move>,
    subscription: String,
) -> Result<Reply<HttpResponseOk<Subscription>>, ApiError> {
    let network = rqctx.context().network.clone();
    handle_idempotent(rqctx, Access::Write, headers, body, |c, m| async move {
        Ok(HttpResponseOk(Moves { caller: &c, network: &*network }.make(&subscription, m).await?))
    })
    .await
}
