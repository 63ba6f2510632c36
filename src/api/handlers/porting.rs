//! The handlers of the Porting operations.

use super::Result;
use crate::api::context::Context;
use crate::api::extract::{HeaderParams, JsonBody};
use crate::api::request::{Access, handle_idempotent, read};
use crate::domain::porting;
use crate::wire::latest::{params, types};
use dropshot::{HttpResponseOk, Path, RequestContext};

pub async fn porting_in_view(
    rqctx: RequestContext<Context>,
    path: Path<params::PortingInViewPath>,
    headers: HeaderParams<params::PortingInViewHeaders>,
) -> Result<HttpResponseOk<types::Porting>> {
    read(&rqctx, headers, |c| async move { Ok(porting::view(&c, &path.into_inner().subscription_id).await?) }).await
}

pub async fn porting_in_start(
    rqctx: RequestContext<Context>,
    path: Path<params::PortingInStartPath>,
    headers: HeaderParams<params::PortingInStartHeaders>,
    body: JsonBody<types::PortInRequest, false>,
) -> Result<HttpResponseOk<types::PortInResponse>> {
    let subscription = path.into_inner().subscription_id;
    handle_idempotent(&rqctx, Access::Write, headers, body, |c, body| async move { Ok(HttpResponseOk(porting::start(&c, &subscription, body).await?)) }).await
}
