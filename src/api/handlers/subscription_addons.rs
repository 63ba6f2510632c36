//! The handlers of the Subscription Add-ons operations; buying (as an
//! order, with the server's order expiry), cancelling (idempotent), and
//! offering options and changes take more than a call, below.

use super::Result;
use crate::api::context::Context;
use crate::api::extract::{HeaderParams, JsonBody, QueryParams};
use crate::api::request::{Access, handle, handle_idempotent, read};
use crate::domain::subscription_addons;
use crate::wire::latest::{params, types};
use dropshot::{HttpResponseCreated, HttpResponseOk, Path, RequestContext};

pub async fn subscription_addon_list(
    rqctx: RequestContext<Context>,
    path: Path<params::SubscriptionAddonListPath>,
    headers: HeaderParams<params::SubscriptionAddonListHeaders>,
) -> Result<HttpResponseOk<types::SubscriptionAddonList>> {
    read(&rqctx, headers, |c| async move { Ok(subscription_addons::list(&c, &path.into_inner().subscription_id).await?) }).await
}

pub async fn subscription_addon_create(
    rqctx: RequestContext<Context>,
    path: Path<params::SubscriptionAddonCreatePath>,
    headers: HeaderParams<params::SubscriptionAddonCreateHeaders>,
    body: JsonBody<types::CreateSubscriptionAddonsRequest>,
) -> Result<HttpResponseCreated<types::SubscriptionAddonList>> {
    create(&rqctx, path, headers, body).await
}

pub async fn subscription_addon_cancel(
    rqctx: RequestContext<Context>,
    path: Path<params::SubscriptionAddonCancelPath>,
    headers: HeaderParams<params::SubscriptionAddonCancelHeaders>,
    body: JsonBody<types::CancelSubscriptionAddonsRequest>,
) -> Result<HttpResponseOk<types::SubscriptionAddonList>> {
    cancel(&rqctx, path, headers, body).await
}

pub async fn subscription_addon_product_offering_options(
    rqctx: RequestContext<Context>,
    path: Path<params::SubscriptionAddonProductOfferingOptionsPath>,
    query: QueryParams<params::SubscriptionAddonProductOfferingOptionsQuery>,
    headers: HeaderParams<params::SubscriptionAddonProductOfferingOptionsHeaders>,
) -> Result<HttpResponseOk<types::ProductOfferingOptionList>> {
    offering_options(&rqctx, path, query, headers).await
}

pub async fn subscription_addon_product_offering_change(
    rqctx: RequestContext<Context>,
    path: Path<params::SubscriptionAddonProductOfferingChangePath>,
    headers: HeaderParams<params::SubscriptionAddonProductOfferingChangeHeaders>,
    body: JsonBody<types::AddonOfferingChangeRequest>,
) -> Result<HttpResponseOk<types::SubscriptionAddon>> {
    offering_change(&rqctx, path, headers, body).await
}

pub async fn subscription_addon_options(
    rqctx: RequestContext<Context>,
    path: Path<params::SubscriptionAddonOptionsPath>,
    headers: HeaderParams<params::SubscriptionAddonOptionsHeaders>,
) -> Result<HttpResponseOk<types::SubscriptionAddonOptionList>> {
    read(&rqctx, headers, |c| async move { Ok(subscription_addons::options::list(&c, &path.into_inner().subscription_id).await?) }).await
}

pub async fn create(
    rqctx: &RequestContext<Context>,
    path: Path<params::SubscriptionAddonCreatePath>,
    headers: HeaderParams<params::SubscriptionAddonCreateHeaders>,
    body: JsonBody<types::CreateSubscriptionAddonsRequest>,
) -> Result<HttpResponseCreated<types::SubscriptionAddonList>> {
    let expiry = chrono::Duration::seconds(rqctx.context().settings.order_expiry_seconds.into());
    let subscription = path.into_inner().subscription_id;
    handle_idempotent(rqctx, Access::Write, headers, body, |c, body| async move {
        Ok(HttpResponseCreated(crate::domain::purchases::addons::add(&c, &subscription, body, expiry).await?))
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
    handle_idempotent(rqctx, Access::Write, headers, body, |c, body| async move {
        Ok(HttpResponseOk(subscription_addons::cancel::cancel(&c, &subscription, body).await?))
    })
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
        Ok(subscription_addons::offerings::options(&c, &subscription, &current).await?)
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
        Ok(HttpResponseOk(subscription_addons::offerings::change(&c, &key, body).await?))
    })
    .await
}
