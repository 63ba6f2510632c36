//! The one implementation of the generated route trait, newest revision
//! only: extract, call the domain core, return.

use super::context::Context;
use super::extract::{HeaderParams, JsonBody, QueryParams};
use super::routes::SwitchboardApi;
use crate::wire::latest::{params, types};
use crate::wire::auk;
use super::request::{Access, handle, handle_idempotent, read};
use super::error::ApiError;
use super::reply::Reply;
use crate::domain::subscriptions::lifecycle::Move;
use super::moves::subscription_move;
use super::orders::Step;
use super::webhooks;
use crate::domain::{addons, catalog, customers, licenses, orders, subscribers, subscriptions, usage, users};
use dropshot::{HttpResponseAccepted, HttpResponseCreated, HttpResponseDeleted, HttpResponseOk, Path, RequestContext};

pub enum Handlers {}

type Result<T> = std::result::Result<Reply<T>, ApiError>;

impl SwitchboardApi for Handlers {
    type Context = Context;

    async fn customer_list(
        rqctx: RequestContext<Context>,
        query: QueryParams<params::CustomerListQuery>,
        headers: HeaderParams<params::CustomerListHeaders>,
    ) -> Result<HttpResponseOk<types::CustomerList>> {
        read(&rqctx, headers, |c| async move { Ok(customers::list(&c, query.into_inner()?).await?) }).await
    }

    async fn customer_create(
        rqctx: RequestContext<Context>,
        headers: HeaderParams<params::CustomerCreateHeaders>,
        body: JsonBody<types::CreateCustomerRequest>,
    ) -> Result<HttpResponseCreated<types::Customer>> {
        handle_idempotent(&rqctx, Access::Write, headers, body, |c, body| async move {
            Ok(HttpResponseCreated(customers::create(&c, body).await?))
        })
        .await
    }

    async fn customer_view(
        rqctx: RequestContext<Context>,
        path: Path<params::CustomerViewPath>,
        headers: HeaderParams<params::CustomerViewHeaders>,
    ) -> Result<HttpResponseOk<types::Customer>> {
        read(&rqctx, headers, |c| async move { Ok(customers::view(&c, &path.into_inner().customer_id).await?) }).await
    }

    async fn customer_update(
        rqctx: RequestContext<Context>,
        path: Path<params::CustomerUpdatePath>,
        headers: HeaderParams<params::CustomerUpdateHeaders>,
        body: JsonBody<types::UpdateCustomerRequest>,
    ) -> Result<HttpResponseOk<types::Customer>> {
        handle(&rqctx, Access::Write, headers, |c| async move {
            let body = body.into_inner()?;
            Ok(HttpResponseOk(customers::update(&c, &path.into_inner().customer_id, body).await?))
        })
        .await
    }

    async fn customer_product_catalog_view(
        rqctx: RequestContext<Context>,
        path: Path<params::CustomerProductCatalogViewPath>,
        headers: HeaderParams<params::CustomerProductCatalogViewHeaders>,
    ) -> Result<HttpResponseOk<types::ProductCatalog>> {
        read(&rqctx, headers, |c| async move { Ok(catalog::customer_catalog(&c, &path.into_inner().customer_id).await?) }).await
    }

    async fn product_offering_list(
        rqctx: RequestContext<Context>,
        query: QueryParams<params::ProductOfferingListQuery>,
        headers: HeaderParams<params::ProductOfferingListHeaders>,
    ) -> Result<HttpResponseOk<types::ProductOfferingList>> {
        read(&rqctx, headers, |c| async move { Ok(catalog::list(&c, query.into_inner()?).await?) }).await
    }

    async fn product_offering_view(
        rqctx: RequestContext<Context>,
        path: Path<params::ProductOfferingViewPath>,
        headers: HeaderParams<params::ProductOfferingViewHeaders>,
    ) -> Result<HttpResponseOk<types::ProductOffering>> {
        read(&rqctx, headers, |c| async move { Ok(catalog::view(&c, &path.into_inner().product_offering_id).await?) }).await
    }

    async fn order_list(
        rqctx: RequestContext<Context>,
        query: QueryParams<params::OrderListQuery>,
        headers: HeaderParams<params::OrderListHeaders>,
    ) -> Result<HttpResponseOk<types::OrderList>> {
        read(&rqctx, headers, |c| async move { Ok(orders::list(&c, query.into_inner()?).await?) }).await
    }

    async fn order_create(
        rqctx: RequestContext<Context>,
        headers: HeaderParams<params::OrderCreateHeaders>,
        body: JsonBody<types::CreateOrderRequest>,
    ) -> Result<HttpResponseCreated<types::Order>> {
        super::orders::create(&rqctx, headers, body).await
    }

    async fn order_view(
        rqctx: RequestContext<Context>,
        path: Path<params::OrderViewPath>,
        headers: HeaderParams<params::OrderViewHeaders>,
    ) -> Result<HttpResponseOk<types::Order>> {
        read(&rqctx, headers, |c| async move { Ok(orders::view(&c, &path.into_inner().order_id).await?) }).await
    }

    async fn order_update(
        rqctx: RequestContext<Context>,
        path: Path<params::OrderUpdatePath>,
        headers: HeaderParams<params::OrderUpdateHeaders>,
        body: JsonBody<types::UpdateOrderRequest>,
    ) -> Result<HttpResponseOk<types::Order>> {
        handle(&rqctx, Access::Write, headers, |c| async move {
            let body = body.into_inner()?;
            Ok(HttpResponseOk(orders::update(&c, &path.into_inner().order_id, body).await?))
        })
        .await
    }

    async fn order_approve(
        rqctx: RequestContext<Context>,
        path: Path<params::OrderApprovePath>,
        headers: HeaderParams<params::OrderApproveHeaders>,
    ) -> Result<HttpResponseOk<types::Order>> {
        super::orders::step(&rqctx, path.into_inner().order_id, headers, Step::Approve).await
    }

    async fn order_cancel(
        rqctx: RequestContext<Context>,
        path: Path<params::OrderCancelPath>,
        headers: HeaderParams<params::OrderCancelHeaders>,
    ) -> Result<HttpResponseOk<types::Order>> {
        super::orders::step(&rqctx, path.into_inner().order_id, headers, Step::Cancel).await
    }

    async fn order_submit(
        rqctx: RequestContext<Context>,
        path: Path<params::OrderSubmitPath>,
        headers: HeaderParams<params::OrderSubmitHeaders>,
    ) -> Result<HttpResponseOk<types::Order>> {
        super::orders::step(&rqctx, path.into_inner().order_id, headers, Step::Submit).await
    }

    /// auk only: bullfinch returns the pricing from every order operation.
    async fn order_calculate_price_auk(
        rqctx: RequestContext<Context>,
        path: Path<auk::params::OrderCalculatePricePath>,
        headers: HeaderParams<auk::params::OrderCalculatePriceHeaders>,
    ) -> Result<HttpResponseOk<auk::types::OrderPricingSummary>> {
        read(&rqctx, headers, |c| async move { Ok(orders::pricing(&c, &path.into_inner().order_id).await?.into()) }).await
    }

    async fn subscription_list(
        rqctx: RequestContext<Context>,
        query: QueryParams<params::SubscriptionListQuery>,
        headers: HeaderParams<params::SubscriptionListHeaders>,
    ) -> Result<HttpResponseOk<types::SubscriptionList>> {
        read(&rqctx, headers, |c| async move { Ok(subscriptions::list(&c, query.into_inner()?).await?) }).await
    }

    async fn subscription_view(
        rqctx: RequestContext<Context>,
        path: Path<params::SubscriptionViewPath>,
        headers: HeaderParams<params::SubscriptionViewHeaders>,
    ) -> Result<HttpResponseOk<types::Subscription>> {
        read(&rqctx, headers, |c| async move { Ok(subscriptions::view(&c, &path.into_inner().subscription_id).await?) }).await
    }

    async fn subscription_esim_activation_code_view(
        rqctx: RequestContext<Context>,
        path: Path<params::SubscriptionEsimActivationCodeViewPath>,
        headers: HeaderParams<params::SubscriptionEsimActivationCodeViewHeaders>,
    ) -> Result<HttpResponseOk<types::EsimActivationCode>> {
        read(&rqctx, headers, |c| async move { Ok(subscriptions::esim::view(&c, &path.into_inner().subscription_id).await?) }).await
    }

    async fn subscription_activate(
        rqctx: RequestContext<Context>,
        path: Path<params::SubscriptionActivatePath>,
        headers: HeaderParams<params::SubscriptionActivateHeaders>,
        body: JsonBody<types::ActivateSubscriptionRequest>,
    ) -> Result<HttpResponseOk<types::Subscription>> {
        subscription_move(&rqctx, headers, body.map(Move::Activate), path.into_inner().subscription_id).await
    }

    async fn subscription_pause(
        rqctx: RequestContext<Context>,
        path: Path<params::SubscriptionPausePath>,
        headers: HeaderParams<params::SubscriptionPauseHeaders>,
        body: JsonBody<types::SubscriptionStatusChangeRequest>,
    ) -> Result<HttpResponseOk<types::Subscription>> {
        subscription_move(&rqctx, headers, body.map(Move::Pause), path.into_inner().subscription_id).await
    }

    async fn subscription_restore(
        rqctx: RequestContext<Context>,
        path: Path<params::SubscriptionRestorePath>,
        headers: HeaderParams<params::SubscriptionRestoreHeaders>,
        body: JsonBody<types::SubscriptionStatusChangeRequest>,
    ) -> Result<HttpResponseOk<types::Subscription>> {
        subscription_move(&rqctx, headers, body.map(Move::Restore), path.into_inner().subscription_id).await
    }

    async fn subscription_suspend(
        rqctx: RequestContext<Context>,
        path: Path<params::SubscriptionSuspendPath>,
        headers: HeaderParams<params::SubscriptionSuspendHeaders>,
        body: JsonBody<types::SubscriptionStatusChangeRequest>,
    ) -> Result<HttpResponseOk<types::Subscription>> {
        subscription_move(&rqctx, headers, body.map(Move::Suspend), path.into_inner().subscription_id).await
    }

    async fn subscription_block_sim(
        rqctx: RequestContext<Context>,
        path: Path<params::SubscriptionBlockSimPath>,
        headers: HeaderParams<params::SubscriptionBlockSimHeaders>,
        body: JsonBody<types::SubscriptionStatusChangeRequest>,
    ) -> Result<HttpResponseOk<types::Subscription>> {
        subscription_move(&rqctx, headers, body.map(Move::BlockSim), path.into_inner().subscription_id).await
    }

    async fn subscription_cancel(
        rqctx: RequestContext<Context>,
        path: Path<params::SubscriptionCancelPath>,
        headers: HeaderParams<params::SubscriptionCancelHeaders>,
        body: JsonBody<types::CancelSubscriptionRequest>,
    ) -> Result<HttpResponseOk<types::Subscription>> {
        subscription_move(&rqctx, headers, body.map(Move::Cancel), path.into_inner().subscription_id).await
    }

    async fn subscription_withdraw_cancellation(
        rqctx: RequestContext<Context>,
        path: Path<params::SubscriptionWithdrawCancellationPath>,
        headers: HeaderParams<params::SubscriptionWithdrawCancellationHeaders>,
        body: JsonBody<types::SubscriptionStatusChangeRequest>,
    ) -> Result<HttpResponseOk<types::Subscription>> {
        subscription_move(&rqctx, headers, body.map(Move::WithdrawCancellation), path.into_inner().subscription_id).await
    }

    async fn subscription_change_sim(
        rqctx: RequestContext<Context>,
        path: Path<params::SubscriptionChangeSimPath>,
        headers: HeaderParams<params::SubscriptionChangeSimHeaders>,
        body: JsonBody<types::ChangeSimRequest>,
    ) -> Result<HttpResponseOk<types::Subscription>> {
        subscription_move(&rqctx, headers, body.map(Move::ChangeSim), path.into_inner().subscription_id).await
    }

    async fn subscription_addon_list(
        rqctx: RequestContext<Context>,
        path: Path<params::SubscriptionAddonListPath>,
        headers: HeaderParams<params::SubscriptionAddonListHeaders>,
    ) -> Result<HttpResponseOk<types::SubscriptionAddonList>> {
        read(&rqctx, headers, |c| async move { Ok(addons::list(&c, &path.into_inner().subscription_id).await?) }).await
    }

    async fn subscription_addon_create(
        rqctx: RequestContext<Context>,
        path: Path<params::SubscriptionAddonCreatePath>,
        headers: HeaderParams<params::SubscriptionAddonCreateHeaders>,
        body: JsonBody<types::CreateSubscriptionAddonsRequest>,
    ) -> Result<HttpResponseCreated<types::SubscriptionAddonList>> {
        super::addons::create(&rqctx, path, headers, body).await
    }

    async fn subscription_addon_cancel(
        rqctx: RequestContext<Context>,
        path: Path<params::SubscriptionAddonCancelPath>,
        headers: HeaderParams<params::SubscriptionAddonCancelHeaders>,
        body: JsonBody<types::CancelSubscriptionAddonsRequest>,
    ) -> Result<HttpResponseOk<types::SubscriptionAddonList>> {
        super::addons::cancel(&rqctx, path, headers, body).await
    }

    async fn subscription_addon_product_offering_options(
        rqctx: RequestContext<Context>,
        path: Path<params::SubscriptionAddonProductOfferingOptionsPath>,
        query: QueryParams<params::SubscriptionAddonProductOfferingOptionsQuery>,
        headers: HeaderParams<params::SubscriptionAddonProductOfferingOptionsHeaders>,
    ) -> Result<HttpResponseOk<types::ProductOfferingOptionList>> {
        super::addons::offering_options(&rqctx, path, query, headers).await
    }

    async fn subscription_addon_product_offering_change(
        rqctx: RequestContext<Context>,
        path: Path<params::SubscriptionAddonProductOfferingChangePath>,
        headers: HeaderParams<params::SubscriptionAddonProductOfferingChangeHeaders>,
        body: JsonBody<types::AddonOfferingChangeRequest>,
    ) -> Result<HttpResponseOk<types::SubscriptionAddon>> {
        super::addons::offering_change(&rqctx, path, headers, body).await
    }

    async fn subscription_addon_options(
        rqctx: RequestContext<Context>,
        path: Path<params::SubscriptionAddonOptionsPath>,
        headers: HeaderParams<params::SubscriptionAddonOptionsHeaders>,
    ) -> Result<HttpResponseOk<types::SubscriptionAddonOptionList>> {
        read(&rqctx, headers, |c| async move { Ok(addons::options::list(&c, &path.into_inner().subscription_id).await?) }).await
    }

    async fn subscription_create(
        rqctx: RequestContext<Context>,
        headers: HeaderParams<params::SubscriptionCreateHeaders>,
        body: JsonBody<types::CreateSubscriptionRequest>,
    ) -> Result<HttpResponseCreated<types::Subscription>> {
        let expiry = chrono::Duration::seconds(rqctx.context().settings.order_expiry_seconds.into());
        handle_idempotent(&rqctx, Access::Write, headers, body, |c, body| async move {
            Ok(HttpResponseCreated(subscriptions::create::create(&c, body, expiry).await?))
        })
        .await
    }

    async fn subscription_product_offering_options(
        rqctx: RequestContext<Context>,
        path: Path<params::SubscriptionProductOfferingOptionsPath>,
        headers: HeaderParams<params::SubscriptionProductOfferingOptionsHeaders>,
    ) -> Result<HttpResponseOk<types::ProductOfferingOptionList>> {
        read(&rqctx, headers, |c| async move { Ok(subscriptions::offerings::options(&c, &path.into_inner().subscription_id).await?) }).await
    }

    async fn subscription_product_offering_change(
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

    async fn subscription_usage_view(
        rqctx: RequestContext<Context>,
        path: Path<params::SubscriptionUsageViewPath>,
        query: QueryParams<params::SubscriptionUsageViewQuery>,
        headers: HeaderParams<params::SubscriptionUsageViewHeaders>,
    ) -> Result<HttpResponseOk<types::SubscriptionUsage>> {
        read(&rqctx, headers, |c| async move { Ok(usage::view(&c, &path.into_inner().subscription_id, query.into_inner()?).await?) }).await
    }

    async fn subscription_usage_list(
        rqctx: RequestContext<Context>,
        query: QueryParams<params::SubscriptionUsageListQuery>,
        headers: HeaderParams<params::SubscriptionUsageListHeaders>,
    ) -> Result<HttpResponseOk<types::SubscriptionUsageList>> {
        read(&rqctx, headers, |c| async move { Ok(usage::list(&c, query.into_inner()?).await?) }).await
    }

    async fn subscriber_view(
        rqctx: RequestContext<Context>,
        path: Path<params::SubscriberViewPath>,
        headers: HeaderParams<params::SubscriberViewHeaders>,
    ) -> Result<HttpResponseOk<types::Subscriber>> {
        read(&rqctx, headers, |c| async move { Ok(subscribers::view(&c, &path.into_inner().subscriber_id).await?) }).await
    }

    async fn subscriber_set(
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

    async fn license_list(
        rqctx: RequestContext<Context>,
        query: QueryParams<params::LicenseListQuery>,
        headers: HeaderParams<params::LicenseListHeaders>,
    ) -> Result<HttpResponseOk<types::LicenseList>> {
        read(&rqctx, headers, |c| async move { Ok(licenses::list(&c, query.into_inner()?).await?) }).await
    }

    async fn license_create(
        rqctx: RequestContext<Context>,
        headers: HeaderParams<params::LicenseCreateHeaders>,
        body: JsonBody<types::CreateLicenseRequest>,
    ) -> Result<HttpResponseCreated<types::License>> {
        super::licenses::create(&rqctx, headers, body).await
    }

    async fn license_cancel(
        rqctx: RequestContext<Context>,
        path: Path<params::LicenseCancelPath>,
        headers: HeaderParams<params::LicenseCancelHeaders>,
        body: JsonBody<types::CancelLicenseRequest>,
    ) -> Result<HttpResponseOk<types::License>> {
        super::licenses::cancel(&rqctx, path, headers, body).await
    }

    async fn license_product_offering_options(
        rqctx: RequestContext<Context>,
        path: Path<params::LicenseProductOfferingOptionsPath>,
        headers: HeaderParams<params::LicenseProductOfferingOptionsHeaders>,
    ) -> Result<HttpResponseOk<types::ProductOfferingOptionList>> {
        read(&rqctx, headers, |c| async move { Ok(licenses::offerings::options(&c, &path.into_inner().license_id).await?) }).await
    }

    async fn license_product_offering_change(
        rqctx: RequestContext<Context>,
        path: Path<params::LicenseProductOfferingChangePath>,
        headers: HeaderParams<params::LicenseProductOfferingChangeHeaders>,
        body: JsonBody<types::ProductOfferingChangeRequest>,
    ) -> Result<HttpResponseOk<types::License>> {
        super::licenses::offering_change(&rqctx, path, headers, body).await
    }

    async fn license_view(
        rqctx: RequestContext<Context>,
        path: Path<params::LicenseViewPath>,
        headers: HeaderParams<params::LicenseViewHeaders>,
    ) -> Result<HttpResponseOk<types::License>> {
        read(&rqctx, headers, |c| async move { Ok(licenses::view(&c, &path.into_inner().license_id).await?) }).await
    }

    async fn health_view(
        rqctx: RequestContext<Context>,
        headers: HeaderParams<params::HealthViewHeaders>,
    ) -> Result<HttpResponseOk<types::Health>> {
        super::operations::health(&rqctx, headers).await
    }

    async fn openapi_view(
        rqctx: RequestContext<Context>,
        headers: HeaderParams<params::OpenapiViewHeaders>,
    ) -> Result<HttpResponseOk<types::OpenApiDocument>> {
        super::operations::openapi(&rqctx, headers).await
    }

    async fn openapi_revision_view(
        rqctx: RequestContext<Context>,
        path: Path<params::OpenapiRevisionViewPath>,
        headers: HeaderParams<params::OpenapiRevisionViewHeaders>,
    ) -> Result<HttpResponseOk<types::OpenApiDocument>> {
        super::operations::openapi_revision(&rqctx, path, headers).await
    }

    async fn user_list(
        rqctx: RequestContext<Context>,
        query: QueryParams<params::UserListQuery>,
        headers: HeaderParams<params::UserListHeaders>,
    ) -> Result<HttpResponseOk<types::UserList>> {
        read(&rqctx, headers, |c| async move { Ok(users::list(&c, query.into_inner()?).await?) }).await
    }

    async fn user_create(
        rqctx: RequestContext<Context>,
        headers: HeaderParams<params::UserCreateHeaders>,
        body: JsonBody<types::CreateUserRequest>,
    ) -> Result<HttpResponseCreated<types::User>> {
        handle_idempotent(&rqctx, Access::Write, headers, body, |c, body| async move {
            Ok(HttpResponseCreated(users::create(&c, body).await?))
        })
        .await
    }

    async fn user_view(
        rqctx: RequestContext<Context>,
        path: Path<params::UserViewPath>,
        headers: HeaderParams<params::UserViewHeaders>,
    ) -> Result<HttpResponseOk<types::User>> {
        read(&rqctx, headers, |c| async move { Ok(users::view(&c, &path.into_inner().user_id).await?) }).await
    }

    async fn user_update(
        rqctx: RequestContext<Context>,
        path: Path<params::UserUpdatePath>,
        headers: HeaderParams<params::UserUpdateHeaders>,
        body: JsonBody<types::UpdateUserRequest>,
    ) -> Result<HttpResponseOk<types::User>> {
        handle(&rqctx, Access::Write, headers, |c| async move {
            let body = body.into_inner()?;
            Ok(HttpResponseOk(users::update(&c, &path.into_inner().user_id, body).await?))
        })
        .await
    }

    async fn auth_email_start(
        rqctx: RequestContext<Context>,
        headers: HeaderParams<params::AuthEmailStartHeaders>,
        body: JsonBody<types::EmailLoginStartRequest>,
    ) -> Result<HttpResponseAccepted<types::EmailLoginChallenge>> {
        super::login::start(&rqctx, headers, body).await
    }

    async fn auth_email_verify(
        rqctx: RequestContext<Context>,
        headers: HeaderParams<params::AuthEmailVerifyHeaders>,
        body: JsonBody<types::EmailLoginVerifyRequest>,
    ) -> Result<HttpResponseOk<types::AccessToken>> {
        super::login::verify(&rqctx, headers, body).await
    }

    async fn webhook_endpoint_list(
        rqctx: RequestContext<Context>,
        query: QueryParams<params::WebhookEndpointListQuery>,
        headers: HeaderParams<params::WebhookEndpointListHeaders>,
    ) -> Result<HttpResponseOk<types::WebhookEndpointList>> {
        webhooks::webhook_endpoint_list(&rqctx, query, headers).await
    }

    async fn webhook_endpoint_create(
        rqctx: RequestContext<Context>,
        headers: HeaderParams<params::WebhookEndpointCreateHeaders>,
        body: JsonBody<types::CreateWebhookEndpointRequest>,
    ) -> Result<HttpResponseCreated<types::WebhookEndpoint>> {
        webhooks::webhook_endpoint_create(&rqctx, headers, body).await
    }

    async fn webhook_endpoint_view(
        rqctx: RequestContext<Context>,
        path: Path<params::WebhookEndpointViewPath>,
        headers: HeaderParams<params::WebhookEndpointViewHeaders>,
    ) -> Result<HttpResponseOk<types::WebhookEndpoint>> {
        webhooks::webhook_endpoint_view(&rqctx, path, headers).await
    }

    async fn webhook_endpoint_update(
        rqctx: RequestContext<Context>,
        path: Path<params::WebhookEndpointUpdatePath>,
        headers: HeaderParams<params::WebhookEndpointUpdateHeaders>,
        body: JsonBody<types::UpdateWebhookEndpointRequest>,
    ) -> Result<HttpResponseOk<types::WebhookEndpoint>> {
        webhooks::webhook_endpoint_update(&rqctx, path, headers, body).await
    }

    async fn webhook_endpoint_delete(
        rqctx: RequestContext<Context>,
        path: Path<params::WebhookEndpointDeletePath>,
        headers: HeaderParams<params::WebhookEndpointDeleteHeaders>,
    ) -> Result<HttpResponseDeleted> {
        webhooks::webhook_endpoint_delete(&rqctx, path, headers).await
    }

    async fn webhook_endpoint_rotate_secret(
        rqctx: RequestContext<Context>,
        path: Path<params::WebhookEndpointRotateSecretPath>,
        headers: HeaderParams<params::WebhookEndpointRotateSecretHeaders>,
    ) -> Result<HttpResponseOk<types::WebhookEndpoint>> {
        webhooks::webhook_endpoint_rotate_secret(&rqctx, path, headers).await
    }

    async fn event_list(
        rqctx: RequestContext<Context>,
        query: QueryParams<params::EventListQuery>,
        headers: HeaderParams<params::EventListHeaders>,
    ) -> Result<HttpResponseOk<types::EventList>> {
        webhooks::event_list(&rqctx, query, headers).await
    }

    async fn event_view(
        rqctx: RequestContext<Context>,
        path: Path<params::EventViewPath>,
        headers: HeaderParams<params::EventViewHeaders>,
    ) -> Result<HttpResponseOk<types::EventEnvelope>> {
        webhooks::event_view(&rqctx, path, headers).await
    }

    async fn webhook_delivery_list(
        rqctx: RequestContext<Context>,
        path: Path<params::WebhookDeliveryListPath>,
        query: QueryParams<params::WebhookDeliveryListQuery>,
        headers: HeaderParams<params::WebhookDeliveryListHeaders>,
    ) -> Result<HttpResponseOk<types::WebhookDeliveryList>> {
        webhooks::webhook_delivery_list(&rqctx, path, query, headers).await
    }

    async fn event_redeliver(
        rqctx: RequestContext<Context>,
        path: Path<params::EventRedeliverPath>,
        headers: HeaderParams<params::EventRedeliverHeaders>,
        body: JsonBody<types::RedeliverEventRequest>,
    ) -> Result<HttpResponseAccepted<types::EventRedelivery>> {
        webhooks::event_redeliver(&rqctx, path, headers, body).await
    }

    async fn webhook_endpoint_replay(
        rqctx: RequestContext<Context>,
        path: Path<params::WebhookEndpointReplayPath>,
        headers: HeaderParams<params::WebhookEndpointReplayHeaders>,
        body: JsonBody<types::ReplayWebhookEndpointRequest>,
    ) -> Result<HttpResponseAccepted<types::WebhookReplay>> {
        webhooks::webhook_endpoint_replay(&rqctx, path, headers, body).await
    }
}
