//! The handlers of webhook endpoints, their deliveries and the event log:
//! all act for the organisation (its key alone, never a user's bearer
//! token, for endpoints: webhooks see every customer's events).

use super::Result;
use crate::api::context::Context;
use crate::api::extract::{HeaderParams, JsonBody, QueryParams};
use crate::api::request::{Access, handle, handle_idempotent};
use crate::config::WebhookUrls;
use crate::domain::Caller;
use crate::domain::webhooks::deliveries as webhook_deliveries;
use crate::domain::webhooks::endpoints as webhook_endpoints;
use crate::domain::webhooks::endpoints::Owner;
use crate::domain::webhooks::log as event_log;
use crate::wire::latest::{params, types};
use chrono::{DateTime, Utc};
use dropshot::{HttpResponseAccepted, HttpResponseCreated, HttpResponseDeleted, HttpResponseOk, Path, RequestContext};

/// The organisation whose webhook endpoints the caller manages: its key
/// alone, never a user's bearer token (webhooks see every customer's events).
/// Webhooks run on the server's time (`now`), not a sandbox organisation's
/// clock: a delivery's attempts, a rotated secret's expiry and the
/// revision a delivery is rendered in concern a real receiver.
fn endpoint_owner<'a>(urls: WebhookUrls, now: DateTime<Utc>, c: &'a Caller) -> crate::error::Result<Owner<'a>> {
    c.require_organisation("manage webhook endpoints")?;
    Ok(Owner { store: &c.store, org: c.org, now, urls })
}

/// The webhook settings, and the server's time now.
fn webhooks_now(rqctx: &RequestContext<Context>) -> (WebhookUrls, DateTime<Utc>) {
    let ctx = rqctx.context();
    (ctx.settings.webhooks.clone(), ctx.clock.now())
}

pub async fn webhook_endpoint_list(
    rqctx: RequestContext<Context>,
    query: QueryParams<params::WebhookEndpointListQuery>,
    headers: HeaderParams<params::WebhookEndpointListHeaders>,
) -> Result<HttpResponseOk<types::WebhookEndpointList>> {
    let (urls, now) = webhooks_now(&rqctx);
    handle(&rqctx, Access::Read, headers, |c| async move {
        let q = query.into_inner()?;
        Ok(HttpResponseOk(webhook_endpoints::list(&endpoint_owner(urls, now, &c)?, q.cursor.as_deref(), q.limit).await?))
    })
    .await
}

pub async fn webhook_endpoint_create(
    rqctx: RequestContext<Context>,
    headers: HeaderParams<params::WebhookEndpointCreateHeaders>,
    body: JsonBody<types::CreateWebhookEndpointRequest>,
) -> Result<HttpResponseCreated<types::WebhookEndpoint>> {
    let (urls, now) = webhooks_now(&rqctx);
    handle_idempotent(&rqctx, Access::Write, headers, body, |c, body| async move {
        Ok(HttpResponseCreated(webhook_endpoints::create(&endpoint_owner(urls, now, &c)?, body).await?))
    })
    .await
}

pub async fn webhook_endpoint_view(
    rqctx: RequestContext<Context>,
    path: Path<params::WebhookEndpointViewPath>,
    headers: HeaderParams<params::WebhookEndpointViewHeaders>,
) -> Result<HttpResponseOk<types::WebhookEndpoint>> {
    let (urls, now) = webhooks_now(&rqctx);
    handle(&rqctx, Access::Read, headers, |c| async move {
        let id = path.into_inner().webhook_endpoint_id;
        Ok(HttpResponseOk(webhook_endpoints::view(&endpoint_owner(urls, now, &c)?, &id).await?))
    })
    .await
}

pub async fn webhook_endpoint_update(
    rqctx: RequestContext<Context>,
    path: Path<params::WebhookEndpointUpdatePath>,
    headers: HeaderParams<params::WebhookEndpointUpdateHeaders>,
    body: JsonBody<types::UpdateWebhookEndpointRequest>,
) -> Result<HttpResponseOk<types::WebhookEndpoint>> {
    let (urls, now) = webhooks_now(&rqctx);
    handle(&rqctx, Access::Write, headers, |c| async move {
        let (id, body) = (path.into_inner().webhook_endpoint_id, body.into_inner()?);
        Ok(HttpResponseOk(webhook_endpoints::update(&endpoint_owner(urls, now, &c)?, &id, body).await?))
    })
    .await
}

pub async fn webhook_endpoint_delete(
    rqctx: RequestContext<Context>,
    path: Path<params::WebhookEndpointDeletePath>,
    headers: HeaderParams<params::WebhookEndpointDeleteHeaders>,
) -> Result<HttpResponseDeleted> {
    let (urls, now) = webhooks_now(&rqctx);
    handle(&rqctx, Access::Write, headers, |c| async move {
        webhook_endpoints::delete(&endpoint_owner(urls, now, &c)?, &path.into_inner().webhook_endpoint_id).await?;
        Ok(HttpResponseDeleted())
    })
    .await
}

pub async fn webhook_endpoint_rotate_secret(
    rqctx: RequestContext<Context>,
    path: Path<params::WebhookEndpointRotateSecretPath>,
    headers: HeaderParams<params::WebhookEndpointRotateSecretHeaders>,
) -> Result<HttpResponseOk<types::WebhookEndpoint>> {
    let (urls, now) = webhooks_now(&rqctx);
    handle_idempotent(&rqctx, Access::Write, headers, JsonBody::<()>::none(), |c, ()| async move {
        let id = path.into_inner().webhook_endpoint_id;
        Ok(HttpResponseOk(webhook_endpoints::rotate_secret(&endpoint_owner(urls, now, &c)?, &id).await?))
    })
    .await
}

pub async fn event_list(
    rqctx: RequestContext<Context>,
    query: QueryParams<params::EventListQuery>,
    headers: HeaderParams<params::EventListHeaders>,
) -> Result<HttpResponseOk<types::EventList>> {
    // rendered in the revision deliveries use: by the server's date
    let (_, now) = webhooks_now(&rqctx);
    handle(&rqctx, Access::Read, headers, |c| async move {
        c.require_organisation("read the event log")?;
        Ok(HttpResponseOk(event_log::list(&c.store, c.org, now, query.into_inner()?).await?))
    })
    .await
}

pub async fn event_view(
    rqctx: RequestContext<Context>,
    path: Path<params::EventViewPath>,
    headers: HeaderParams<params::EventViewHeaders>,
) -> Result<HttpResponseOk<types::EventEnvelope>> {
    let (_, now) = webhooks_now(&rqctx);
    handle(&rqctx, Access::Read, headers, |c| async move {
        c.require_organisation("read the event log")?;
        Ok(HttpResponseOk(event_log::view(&c.store, c.org, now, &path.into_inner().event_id).await?))
    })
    .await
}

pub async fn webhook_delivery_list(
    rqctx: RequestContext<Context>,
    path: Path<params::WebhookDeliveryListPath>,
    query: QueryParams<params::WebhookDeliveryListQuery>,
    headers: HeaderParams<params::WebhookDeliveryListHeaders>,
) -> Result<HttpResponseOk<types::WebhookDeliveryList>> {
    let (urls, now) = webhooks_now(&rqctx);
    handle(&rqctx, Access::Read, headers, |c| async move {
        let id = path.into_inner().webhook_endpoint_id;
        Ok(HttpResponseOk(webhook_deliveries::list(&endpoint_owner(urls, now, &c)?, &id, query.into_inner()?).await?))
    })
    .await
}

pub async fn event_redeliver(
    rqctx: RequestContext<Context>,
    path: Path<params::EventRedeliverPath>,
    headers: HeaderParams<params::EventRedeliverHeaders>,
    body: JsonBody<types::RedeliverEventRequest, true>,
) -> Result<HttpResponseAccepted<types::EventRedelivery>> {
    let (urls, now) = webhooks_now(&rqctx);
    handle_idempotent(&rqctx, Access::Write, headers, body, |c, body| async move {
        let id = path.into_inner().event_id;
        Ok(HttpResponseAccepted(webhook_deliveries::redeliver(&endpoint_owner(urls, now, &c)?, &id, body).await?))
    })
    .await
}

pub async fn webhook_endpoint_replay(
    rqctx: RequestContext<Context>,
    path: Path<params::WebhookEndpointReplayPath>,
    headers: HeaderParams<params::WebhookEndpointReplayHeaders>,
    body: JsonBody<types::ReplayWebhookEndpointRequest>,
) -> Result<HttpResponseAccepted<types::WebhookReplay>> {
    let (urls, now) = webhooks_now(&rqctx);
    handle_idempotent(&rqctx, Access::Write, headers, body, |c, body| async move {
        let id = path.into_inner().webhook_endpoint_id;
        Ok(HttpResponseAccepted(webhook_deliveries::replay(&endpoint_owner(urls, now, &c)?, &id, body).await?))
    })
    .await
}
