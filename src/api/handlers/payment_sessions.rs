//! The handlers of the Payment Sessions operations; creating wakes the job
//! that sends the session's charge.

use super::Result;
use crate::api::context::Context;
use crate::api::extract::{HeaderParams, JsonBody};
use crate::api::request::{Access, handle_idempotent, read};
use crate::domain::payments::sessions;
use crate::wire::latest::{params, types};
use dropshot::{HttpResponseCreated, HttpResponseOk, Path, RequestContext};

pub async fn payment_session_create(
    rqctx: RequestContext<Context>,
    headers: HeaderParams<params::PaymentSessionCreateHeaders>,
    body: JsonBody<types::CreatePaymentSessionRequest>,
) -> Result<HttpResponseCreated<types::PaymentSession>> {
    let answer =
        handle_idempotent(&rqctx, Access::Write, headers, body, |c, body| async move { Ok(HttpResponseCreated(sessions::create(&c, body).await?)) }).await;
    // (committed by now: the charge's job finds it)
    rqctx.context().payments_wake.notify_one();
    answer
}

pub async fn payment_session_view(
    rqctx: RequestContext<Context>,
    path: Path<params::PaymentSessionViewPath>,
    headers: HeaderParams<params::PaymentSessionViewHeaders>,
) -> Result<HttpResponseOk<types::PaymentSession>> {
    read(&rqctx, headers, |c| async move { Ok(sessions::view(&c, &path.into_inner().payment_session_id).await?) }).await
}
