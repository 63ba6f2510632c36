//! The handlers of the Subscribers operations: extract, call the domain, answer.

use super::Result;
use crate::api::context::Context;
use crate::api::extract::{HeaderParams, JsonBody};
use crate::api::request::{Access, handle, read};
use crate::domain::subscribers;
use crate::wire::latest::{params, types};
use dropshot::{HttpResponseOk, Path, RequestContext};

pub async fn subscriber_view(
    rqctx: RequestContext<Context>,
    path: Path<params::SubscriberViewPath>,
    headers: HeaderParams<params::SubscriberViewHeaders>,
) -> Result<HttpResponseOk<types::Subscriber>> {
    read(&rqctx, headers, |c| async move { Ok(subscribers::view(&c, &path.into_inner().subscriber_id).await?) }).await
}

pub async fn subscriber_set(
    rqctx: RequestContext<Context>,
    path: Path<params::SubscriberSetPath>,
    headers: HeaderParams<params::SubscriberSetHeaders>,
    body: JsonBody<types::SetSubscriberRequest>,
) -> Result<HttpResponseOk<types::Subscriber>> {
    handle(&rqctx, Access::Write, headers, |c| async move {
        let (key, body) = (path.into_inner().subscriber_id, body.into_inner()?);
        Ok(HttpResponseOk(subscribers::set(&c, &key, body).await?))
    })
    .await
}
