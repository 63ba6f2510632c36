//! The handlers of the Licenses operations; buying (as an order, with the
//! server's order expiry), cancelling (idempotent) and offering changes
//! take more than a call, below.

use super::Result;
use crate::api::context::Context;
use crate::api::extract::{HeaderParams, JsonBody, QueryParams};
use crate::api::request::{Access, handle, handle_idempotent, read};
use crate::domain::licenses;
use crate::wire::latest::{params, types};
use dropshot::{HttpResponseCreated, HttpResponseOk, Path, RequestContext};

pub async fn license_list(
    rqctx: RequestContext<Context>,
    query: QueryParams<params::LicenseListQuery>,
    headers: HeaderParams<params::LicenseListHeaders>,
) -> Result<HttpResponseOk<types::LicenseList>> {
    read(&rqctx, headers, |c| async move { Ok(licenses::list(&c, query.into_inner()?).await?) }).await
}

pub async fn license_create(
    rqctx: RequestContext<Context>,
    headers: HeaderParams<params::LicenseCreateHeaders>,
    body: JsonBody<types::CreateLicenseRequest>,
) -> Result<HttpResponseCreated<types::License>> {
    create(&rqctx, headers, body).await
}

pub async fn license_cancel(
    rqctx: RequestContext<Context>,
    path: Path<params::LicenseCancelPath>,
    headers: HeaderParams<params::LicenseCancelHeaders>,
    body: JsonBody<types::CancelLicenseRequest, true>,
) -> Result<HttpResponseOk<types::License>> {
    let license = path.into_inner().license_id;
    handle_idempotent(&rqctx, Access::Write, headers, body, |c, body| async move { Ok(HttpResponseOk(licenses::cancel::cancel(&c, &license, body).await?)) })
        .await
}

pub async fn license_product_offering_options(
    rqctx: RequestContext<Context>,
    path: Path<params::LicenseProductOfferingOptionsPath>,
    headers: HeaderParams<params::LicenseProductOfferingOptionsHeaders>,
) -> Result<HttpResponseOk<types::ProductOfferingOptionList>> {
    read(&rqctx, headers, |c| async move { Ok(licenses::offerings::options(&c, &path.into_inner().license_id).await?) }).await
}

pub async fn license_product_offering_change(
    rqctx: RequestContext<Context>,
    path: Path<params::LicenseProductOfferingChangePath>,
    headers: HeaderParams<params::LicenseProductOfferingChangeHeaders>,
    body: JsonBody<types::ProductOfferingChangeRequest>,
) -> Result<HttpResponseOk<types::License>> {
    offering_change(&rqctx, path, headers, body).await
}

pub async fn license_view(
    rqctx: RequestContext<Context>,
    path: Path<params::LicenseViewPath>,
    headers: HeaderParams<params::LicenseViewHeaders>,
) -> Result<HttpResponseOk<types::License>> {
    read(&rqctx, headers, |c| async move { Ok(licenses::view(&c, &path.into_inner().license_id).await?) }).await
}

pub async fn create(
    rqctx: &RequestContext<Context>,
    headers: HeaderParams<params::LicenseCreateHeaders>,
    body: JsonBody<types::CreateLicenseRequest>,
) -> Result<HttpResponseCreated<types::License>> {
    let expiry = chrono::Duration::seconds(rqctx.context().settings.order_expiry_seconds.into());
    handle_idempotent(rqctx, Access::Write, headers, body, |c, body| async move {
        Ok(HttpResponseCreated(crate::domain::purchases::license::create(&c, body, expiry).await?))
    })
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
