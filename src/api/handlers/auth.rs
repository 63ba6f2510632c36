//! The handlers of the Auth operations, email login: starting it (which
//! wakes the mail sender when a code was queued), verifying the code for a
//! bearer token and a refresh token, and refreshing.

use super::Result;
use crate::api::context::Context;
use crate::api::extract::{HeaderParams, JsonBody};
use crate::api::request::handle_login;
use crate::wire::latest::{params, types};
use dropshot::{HttpResponseAccepted, HttpResponseOk, RequestContext};

pub async fn auth_email_start(
    rqctx: RequestContext<Context>,
    headers: HeaderParams<params::AuthEmailStartHeaders>,
    body: JsonBody<types::EmailLoginStartRequest>,
) -> Result<HttpResponseAccepted<types::EmailLoginChallenge>> {
    start(&rqctx, headers, body).await
}

pub async fn auth_email_verify(
    rqctx: RequestContext<Context>,
    headers: HeaderParams<params::AuthEmailVerifyHeaders>,
    body: JsonBody<types::EmailLoginVerifyRequest>,
) -> Result<HttpResponseOk<types::AccessToken>> {
    verify(&rqctx, headers, body).await
}

pub async fn auth_token_refresh(
    rqctx: RequestContext<Context>,
    headers: HeaderParams<params::AuthTokenRefreshHeaders>,
    body: JsonBody<types::RefreshTokenRequest>,
) -> Result<HttpResponseOk<types::AccessToken>> {
    refresh(&rqctx, headers, body).await
}

pub async fn start(
    rqctx: &RequestContext<Context>,
    headers: HeaderParams<params::AuthEmailStartHeaders>,
    body: JsonBody<types::EmailLoginStartRequest>,
) -> Result<HttpResponseAccepted<types::EmailLoginChallenge>> {
    let wake = rqctx.context().mail_wake.clone();
    handle_login(
        rqctx,
        headers,
        body,
        |b| Some(&b.email),
        |login, scope, body| async move {
            let (challenge, queued) = login.start(scope, &body.email).await?;
            if queued {
                wake.notify_one();
            }
            Ok(HttpResponseAccepted(challenge))
        },
    )
    .await
}

pub async fn verify(
    rqctx: &RequestContext<Context>,
    headers: HeaderParams<params::AuthEmailVerifyHeaders>,
    body: JsonBody<types::EmailLoginVerifyRequest>,
) -> Result<HttpResponseOk<types::AccessToken>> {
    handle_login(rqctx, headers, body, |b| Some(&b.email), |login, scope, body| async move { Ok(HttpResponseOk(login.verify(scope, &body).await?)) }).await
}

pub async fn refresh(
    rqctx: &RequestContext<Context>,
    headers: HeaderParams<params::AuthTokenRefreshHeaders>,
    body: JsonBody<types::RefreshTokenRequest>,
) -> Result<HttpResponseOk<types::AccessToken>> {
    handle_login(rqctx, headers, body, |_| None, |login, scope, body| async move { Ok(HttpResponseOk(login.refresh(scope, &body).await?)) }).await
}
