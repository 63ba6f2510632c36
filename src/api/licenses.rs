//! The handlers of the license operations that take more than a call:
//! buying (as an order, with the server's order expiry), cancelling
//! (idempotent), and offering changes.

use super::context::Context;
use super::error::ApiError;
use super::extract::{HeaderParams, JsonBody};
use super::reply::Reply;
use super::request::{Access, handle, handle_idempotent};
use crate::domain::licenses;
use crate::wire::latest::{params, types};
use dropshot::{HttpResponseCreated, HttpResponseOk, Path, RequestContext};

type Result<T> = std::result::Result<Reply<T>, ApiError>;

pub async fn create(
    rqctx: &RequestContext<Context>,
    headers: HeaderParams<params::LicenseCreateHeaders>,
    body: JsonBody<types::CreateLicenseRequest>,
) -> Result<HttpResponseCreated<types::License>> {
    let expiry = chrono::Duration::seconds(rqctx.context().settings.order_expiry_seconds.into());
    handle_idempotent(rqctx, Access::Write, headers, body, |c, body| async move { Ok(HttpResponseCreated(licenses::create::create(&c, body, expiry).await?)) })
        .await
}

pub async fn cancel(
    rqctx: &RequestContext<Context>,
    path: Path<params::LicenseCancelPath>,
    headers: HeaderParams<params::LicenseCancelHeaders>,
    body: JsonBody<types::CancelLicenseRequest>,
) -> Result<HttpResponseOk<types::License>> {
    let license = path.into_inner().license_id;
    handle_idempotent(rqctx, Access::Write, headers, body, |c, body| async move { Ok(HttpResponseOk(licenses::cancel::cancel(&c, &license, body).await?)) })
        .await
}

pub async fn offering_change(
    rqctx: &RequestContext<Context>,
    path: Path<params::LicenseProductOfferingChangePath>,
    headers: HeaderParams<params::LicenseProductOfferingChangeHeaders>,
    body: JsonBody<types::ProductOfferingChangeRequest>,
) -> Result<HttpResponseOk<types::License>> {
    handle(rqctx, Access::Write, headers, |c| async move {
        let (key, body) = (path.into_inner().license_id, body.into_inner()?);
        Ok(HttpResponseOk(licenses::offerings::change(&c, &key, body).await?))
    })
    .await
}
