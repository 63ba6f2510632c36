//! The handlers of the Subscriptions operations. Every move goes one way
//! through (`subscription_move`): an idempotent write, on the subscription
//! the path names, sent to the server's network.

use super::Result;
use crate::api::context::Context;
use crate::api::extract::{HeaderParams, JsonBody, QueryParams};
use crate::api::request::{Access, handle, handle_idempotent, read};
use crate::domain::subscriptions::lifecycle::{Move, Moves};
use crate::domain::{subscriptions, usage};
use crate::wire::latest::types::Subscription;
use crate::wire::latest::{params, types};
use dropshot::{HttpResponseCreated, HttpResponseOk, Path, RequestContext};

pub async fn subscription_list(
    rqctx: RequestContext<Context>,
    query: QueryParams<params::SubscriptionListQuery>,
    headers: HeaderParams<params::SubscriptionListHeaders>,
) -> Result<HttpResponseOk<types::SubscriptionList>> {
    read(&rqctx, headers, |c| async move { Ok(subscriptions::list(&c, query.into_inner()?).await?) }).await
}

pub async fn subscription_view(
    rqctx: RequestContext<Context>,
    path: Path<params::SubscriptionViewPath>,
    headers: HeaderParams<params::SubscriptionViewHeaders>,
) -> Result<HttpResponseOk<types::Subscription>> {
    read(&rqctx, headers, |c| async move { Ok(subscriptions::view(&c, &path.into_inner().subscription_id).await?) }).await
}

pub async fn subscription_esim_activation_code_view(
    rqctx: RequestContext<Context>,
    path: Path<params::SubscriptionEsimActivationCodeViewPath>,
    headers: HeaderParams<params::SubscriptionEsimActivationCodeViewHeaders>,
) -> Result<HttpResponseOk<types::EsimActivationCode>> {
    read(&rqctx, headers, |c| async move { Ok(subscriptions::esim::view(&c, &path.into_inner().subscription_id).await?) }).await
}

pub async fn subscription_activate(
    rqctx: RequestContext<Context>,
    path: Path<params::SubscriptionActivatePath>,
    headers: HeaderParams<params::SubscriptionActivateHeaders>,
    body: JsonBody<types::ActivateSubscriptionRequest, true>,
) -> Result<HttpResponseOk<types::Subscription>> {
    subscription_move(&rqctx, headers, body.map(Move::Activate), path.into_inner().subscription_id).await
}

pub async fn subscription_pause(
    rqctx: RequestContext<Context>,
    path: Path<params::SubscriptionPausePath>,
    headers: HeaderParams<params::SubscriptionPauseHeaders>,
    body: JsonBody<types::SubscriptionStatusChangeRequest, true>,
) -> Result<HttpResponseOk<types::Subscription>> {
    subscription_move(&rqctx, headers, body.map(Move::Pause), path.into_inner().subscription_id).await
}

pub async fn subscription_restore(
    rqctx: RequestContext<Context>,
    path: Path<params::SubscriptionRestorePath>,
    headers: HeaderParams<params::SubscriptionRestoreHeaders>,
    body: JsonBody<types::SubscriptionStatusChangeRequest, true>,
) -> Result<HttpResponseOk<types::Subscription>> {
    subscription_move(&rqctx, headers, body.map(Move::Restore), path.into_inner().subscription_id).await
}

pub async fn subscription_suspend(
    rqctx: RequestContext<Context>,
    path: Path<params::SubscriptionSuspendPath>,
    headers: HeaderParams<params::SubscriptionSuspendHeaders>,
    body: JsonBody<types::SubscriptionStatusChangeRequest, true>,
) -> Result<HttpResponseOk<types::Subscription>> {
    subscription_move(&rqctx, headers, body.map(Move::Suspend), path.into_inner().subscription_id).await
}

pub async fn subscription_block_sim(
    rqctx: RequestContext<Context>,
    path: Path<params::SubscriptionBlockSimPath>,
    headers: HeaderParams<params::SubscriptionBlockSimHeaders>,
    body: JsonBody<types::SubscriptionStatusChangeRequest, true>,
) -> Result<HttpResponseOk<types::Subscription>> {
    subscription_move(&rqctx, headers, body.map(Move::BlockSim), path.into_inner().subscription_id).await
}

pub async fn subscription_cancel(
    rqctx: RequestContext<Context>,
    path: Path<params::SubscriptionCancelPath>,
    headers: HeaderParams<params::SubscriptionCancelHeaders>,
    body: JsonBody<types::CancelSubscriptionRequest, true>,
) -> Result<HttpResponseOk<types::Subscription>> {
    subscription_move(&rqctx, headers, body.map(Move::Cancel), path.into_inner().subscription_id).await
}

pub async fn subscription_withdraw_cancellation(
    rqctx: RequestContext<Context>,
    path: Path<params::SubscriptionWithdrawCancellationPath>,
    headers: HeaderParams<params::SubscriptionWithdrawCancellationHeaders>,
    body: JsonBody<types::SubscriptionStatusChangeRequest, true>,
) -> Result<HttpResponseOk<types::Subscription>> {
    subscription_move(&rqctx, headers, body.map(Move::WithdrawCancellation), path.into_inner().subscription_id).await
}

pub async fn subscription_change_sim(
    rqctx: RequestContext<Context>,
    path: Path<params::SubscriptionChangeSimPath>,
    headers: HeaderParams<params::SubscriptionChangeSimHeaders>,
    body: JsonBody<types::ChangeSimRequest>,
) -> Result<HttpResponseOk<types::Subscription>> {
    subscription_move(&rqctx, headers, body.map(Move::ChangeSim), path.into_inner().subscription_id).await
}

pub async fn subscription_create(
    rqctx: RequestContext<Context>,
    headers: HeaderParams<params::SubscriptionCreateHeaders>,
    body: JsonBody<types::CreateSubscriptionRequest>,
) -> Result<HttpResponseCreated<types::Subscription>> {
    let expiry = chrono::Duration::seconds(rqctx.context().settings.order_expiry_seconds.into());
    handle_idempotent(&rqctx, Access::Write, headers, body, |c, body| async move {
        Ok(HttpResponseCreated(crate::domain::purchases::subscription::create(&c, body, expiry).await?))
    })
    .await
}

pub async fn subscription_product_offering_options(
    rqctx: RequestContext<Context>,
    path: Path<params::SubscriptionProductOfferingOptionsPath>,
    headers: HeaderParams<params::SubscriptionProductOfferingOptionsHeaders>,
) -> Result<HttpResponseOk<types::ProductOfferingOptionList>> {
    read(&rqctx, headers, |c| async move { Ok(subscriptions::offerings::options(&c, &path.into_inner().subscription_id).await?) }).await
}

pub async fn subscription_product_offering_change(
    rqctx: RequestContext<Context>,
    path: Path<params::SubscriptionProductOfferingChangePath>,
    headers: HeaderParams<params::SubscriptionProductOfferingChangeHeaders>,
    body: JsonBody<types::ProductOfferingChangeRequest>,
) -> Result<HttpResponseOk<types::Subscription>> {
    handle(&rqctx, Access::Write, headers, |c| async move {
        let (key, body) = (path.into_inner().subscription_id, body.into_inner()?);
        Ok(HttpResponseOk(subscriptions::offerings::change(&c, &key, body).await?))
    })
    .await
}

pub async fn subscription_usage_view(
    rqctx: RequestContext<Context>,
    path: Path<params::SubscriptionUsageViewPath>,
    query: QueryParams<params::SubscriptionUsageViewQuery>,
    headers: HeaderParams<params::SubscriptionUsageViewHeaders>,
) -> Result<HttpResponseOk<types::SubscriptionUsage>> {
    read(&rqctx, headers, |c| async move { Ok(usage::view(&c, &path.into_inner().subscription_id, query.into_inner()?).await?) }).await
}

pub async fn subscription_usage_list(
    rqctx: RequestContext<Context>,
    query: QueryParams<params::SubscriptionUsageListQuery>,
    headers: HeaderParams<params::SubscriptionUsageListHeaders>,
) -> Result<HttpResponseOk<types::SubscriptionUsageList>> {
    read(&rqctx, headers, |c| async move { Ok(usage::list(&c, query.into_inner()?).await?) }).await
}

pub async fn subscription_move<H>(
    rqctx: &RequestContext<Context>,
    headers: HeaderParams<H>,
    body: JsonBody<Move>,
    subscription: String,
) -> Result<HttpResponseOk<Subscription>> {
    let network = rqctx.context().network.clone();
    handle_idempotent(rqctx, Access::Write, headers, body, |c, m| async move {
        Ok(HttpResponseOk(Moves { caller: &c, network: &*network }.make(&subscription, m).await?))
    })
    .await
}
