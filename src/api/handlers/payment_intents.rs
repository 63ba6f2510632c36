//! The handlers of the Payment Intents operations.

use super::Result;
use crate::api::context::Context;
use crate::api::extract::{HeaderParams, JsonBody, QueryParams};
use crate::api::request::{Access, handle_idempotent, read};
use crate::domain::payments;
use crate::wire::latest::{params, types};
use dropshot::{HttpResponseCreated, HttpResponseOk, Path, RequestContext};

pub async fn payment_intent_list(
    rqctx: RequestContext<Context>,
    query: QueryParams<params::PaymentIntentListQuery>,
    headers: HeaderParams<params::PaymentIntentListHeaders>,
) -> Result<HttpResponseOk<types::PaymentIntentList>> {
    read(&rqctx, headers, |c| async move { Ok(payments::list_intents(&c, query.into_inner()?).await?) }).await
}

pub async fn payment_intent_view(
    rqctx: RequestContext<Context>,
    path: Path<params::PaymentIntentViewPath>,
    headers: HeaderParams<params::PaymentIntentViewHeaders>,
) -> Result<HttpResponseOk<types::PaymentIntent>> {
    read(&rqctx, headers, |c| async move { Ok(payments::view_intent(&c, &path.into_inner().payment_intent_id).await?) }).await
}

pub async fn payment_intent_refund(
    rqctx: RequestContext<Context>,
    path: Path<params::PaymentIntentRefundPath>,
    headers: HeaderParams<params::PaymentIntentRefundHeaders>,
    body: JsonBody<types::CreatePaymentRefundRequest, true>,
) -> Result<HttpResponseCreated<types::PaymentIntent>> {
    let intent = path.into_inner().payment_intent_id;
    handle_idempotent(
        &rqctx,
        Access::Write,
        headers,
        body,
        |c, body| async move { Ok(HttpResponseCreated(payments::refunds::create(&c, &intent, body).await?)) },
    )
    .await
}
