//! The handlers of the Operations operations, serving the API, open to
//! anyone: the health check and the published documents of each revision.

use crate::api::context::Context;
use crate::api::error::ApiError;
use crate::api::extract::HeaderParams;
use crate::api::request::{handle_open, handle_open_sent};
use crate::api::revision::Revision;
use crate::error::InternalCode;
use crate::wire::latest::{params, types};
use dropshot::{HttpResponseOk, Path, RequestContext, Body, ErrorStatusCode};
use http::Response;
use super::Result;

pub async fn health_view(
    rqctx: RequestContext<Context>,
    headers: HeaderParams<params::HealthViewHeaders>,
) -> Result<HttpResponseOk<types::Health>> {
    health(&rqctx, headers).await
}

pub async fn openapi_view(
    rqctx: RequestContext<Context>,
    headers: HeaderParams<params::OpenapiViewHeaders>,
) -> Result<HttpResponseOk<types::OpenApiDocument>> {
    openapi(&rqctx, headers).await
}

pub async fn openapi_revision_view(
    rqctx: RequestContext<Context>,
    path: Path<params::OpenapiRevisionViewPath>,
    headers: HeaderParams<params::OpenapiRevisionViewHeaders>,
) -> Result<HttpResponseOk<types::OpenApiDocument>> {
    openapi_revision(&rqctx, path, headers).await
}

/// A revision's published document, as embedded at build time.
fn document(revision: &Revision) -> std::result::Result<Response<Body>, ApiError> {
    Response::builder()
        .status(http::StatusCode::OK)
        .header(http::header::CONTENT_TYPE, "application/json")
        .body(Body::from(revision.document()))
        .map_err(|e| ApiError::internal(format!("the document's response: {e}")))
}

pub async fn health(rqctx: &RequestContext<Context>, headers: HeaderParams<params::HealthViewHeaders>) -> Result<HttpResponseOk<types::Health>> {
    handle_open(rqctx, headers, |store| async move {
        store.ping().await?;
        Ok(HttpResponseOk(types::Health { status: types::HealthStatus::Ok }))
    })
    .await
}

pub async fn openapi(rqctx: &RequestContext<Context>, headers: HeaderParams<params::OpenapiViewHeaders>) -> Result<HttpResponseOk<types::OpenApiDocument>> {
    handle_open_sent(rqctx, headers, || document(Revision::current())).await
}

pub async fn openapi_revision(
    rqctx: &RequestContext<Context>,
    path: Path<params::OpenapiRevisionViewPath>,
    headers: HeaderParams<params::OpenapiRevisionViewHeaders>,
) -> Result<HttpResponseOk<types::OpenApiDocument>> {
    handle_open_sent(rqctx, headers, || {
        let name = path.into_inner().document;
        let revision = name.strip_suffix(".json").and_then(Revision::by_name).ok_or_else(|| {
            ApiError::new(ErrorStatusCode::NOT_FOUND, InternalCode::NotFound, "No revision has this document.")
        })?;
        document(revision)
    })
    .await
}
