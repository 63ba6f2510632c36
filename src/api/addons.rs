//! The handlers of a subscription's add-on operations that take more than
//! a call: buying (as an order, with the server's order expiry), cancelling
//! (idempotent), and offering options and changes.

use super::context::Context;
use super::error::ApiError;
use super::extract::{HeaderParams, JsonBody, QueryParams};
use super::reply::Reply;
use super::request::{Access, handle, handle_idempotent, read};
use crate::domain::addons;
use crate::wire::latest::{params, types};
use dropshot::{HttpResponseCreated, HttpResponseOk, Path, RequestContext};

type Result<T> = std::result::Result<Reply<T>, ApiError>;

pub async fn create(
    rqctx: &RequestContext<Context>,
    path: Path<params::SubscriptionAddonCreatePath>,
    headers: HeaderParams<params::SubscriptionAddonCreateHeaders>,
    body: JsonBody<types::CreateSubscriptionAddonsRequest>,
) -> Result<HttpResponseCreated<types::SubscriptionAddonList>> {
    let expiry = chrono::Duration::seconds(rqctx.context().settings.order_expiry_seconds.into());
    let subscription = path.into_inner().subscription_id;
    handle_idempotent(rqctx, Access::Write, headers, body, |c, body| async move {
        Ok(HttpResponseCreated(addons::add::add(&c, &subscription, body, expiry).await?))
    })
    .await
}

pub async fn cancel(
    rqctx: &RequestContext<Context>,
    path: Path<params::SubscriptionAddonCancelPath>,
    headers: HeaderParams<params::SubscriptionAddonCancelHeaders>,
    body: JsonBody<types::CancelSubscriptionAddonsRequest>,
) -> Result<HttpResponseOk<types::SubscriptionAddonList>> {
    let subscription = path.into_inner().subscription_id;
    handle_idempotent(rqctx, Access::Write, headers, body, |c, body| async move { Ok(HttpResponseOk(addons::cancel::cancel(&c, &subscription, body).await?)) })
        .await
}

pub async fn offering_options(
    rqctx: &RequestContext<Context>,
    path: Path<params::SubscriptionAddonProductOfferingOptionsPath>,
    query: QueryParams<params::SubscriptionAddonProductOfferingOptionsQuery>,
    headers: HeaderParams<params::SubscriptionAddonProductOfferingOptionsHeaders>,
) -> Result<HttpResponseOk<types::ProductOfferingOptionList>> {
    read(rqctx, headers, |c| async move {
        let (subscription, current) = (path.into_inner().subscription_id, query.into_inner()?.current_product_offering_id);
        Ok(addons::offerings::options(&c, &subscription, &current).await?)
    })
    .await
}

pub async fn offering_change(
    rqctx: &RequestContext<Context>,
    path: Path<params::SubscriptionAddonProductOfferingChangePath>,
    headers: HeaderParams<params::SubscriptionAddonProductOfferingChangeHeaders>,
    body: JsonBody<types::AddonOfferingChangeRequest>,
) -> Result<HttpResponseOk<types::SubscriptionAddon>> {
    handle(rqctx, Access::Write, headers, |c| async move {
        let (key, body) = (path.into_inner().subscription_id, body.into_inner()?);
        Ok(HttpResponseOk(addons::offerings::change(&c, &key, body).await?))
    })
    .await
}
