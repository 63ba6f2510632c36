//! The handlers of the Payment Profile Sessions operations; creating needs
//! the server's public URL (the setup page's address).

use super::Result;
use crate::api::context::Context;
use crate::api::extract::{HeaderParams, JsonBody};
use crate::api::request::{Access, handle_idempotent, read};
use crate::domain::payments::profile_sessions;
use crate::wire::latest::{params, types};
use dropshot::{HttpResponseCreated, HttpResponseOk, Path, RequestContext};

pub async fn payment_profile_session_create(
    rqctx: RequestContext<Context>,
    headers: HeaderParams<params::PaymentProfileSessionCreateHeaders>,
    body: JsonBody<types::CreatePaymentProfileSessionRequest>,
) -> Result<HttpResponseCreated<types::PaymentProfileSession>> {
    let public_url = super::public_url(&rqctx);
    handle_idempotent(
        &rqctx,
        Access::Write,
        headers,
        body,
        |c, body| async move { Ok(HttpResponseCreated(profile_sessions::create(&c, &public_url, body).await?)) },
    )
    .await
}

pub async fn payment_profile_session_view(
    rqctx: RequestContext<Context>,
    path: Path<params::PaymentProfileSessionViewPath>,
    headers: HeaderParams<params::PaymentProfileSessionViewHeaders>,
) -> Result<HttpResponseOk<types::PaymentProfileSession>> {
    read(&rqctx, headers, |c| async move { Ok(profile_sessions::view(&c, &path.into_inner().payment_profile_session_id).await?) }).await
}

pub async fn payment_profile_session_cancel(
    rqctx: RequestContext<Context>,
    path: Path<params::PaymentProfileSessionCancelPath>,
    headers: HeaderParams<params::PaymentProfileSessionCancelHeaders>,
    body: JsonBody<types::CancelPaymentProfileSessionRequest, true>,
) -> Result<HttpResponseOk<types::PaymentProfileSession>> {
    let session = path.into_inner().payment_profile_session_id;
    handle_idempotent(&rqctx, Access::Write, headers, body, |c, body| async move { Ok(HttpResponseOk(profile_sessions::cancel(&c, &session, body).await?)) })
        .await
}
