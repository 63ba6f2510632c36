//! The handlers of the Operations operations, serving the API, open to
//! anyone: the health check, the published documents of each revision
//! and their reference pages.

use super::Result;
use crate::api::context::Context;
use crate::api::error::ApiError;
use crate::api::extract::HeaderParams;
use crate::api::request::{handle_open, handle_open_sent};
use crate::api::revision::Revision;
use crate::error::{Detail, InternalCode};
use crate::wire::latest::{params, types};
use dropshot::{Body, ErrorStatusCode, HttpResponseOk, Path, RequestContext};
use http::Response;

pub async fn health_view(rqctx: RequestContext<Context>, headers: HeaderParams<params::HealthViewHeaders>) -> Result<HttpResponseOk<types::Health>> {
    health(&rqctx, headers).await
}

pub async fn ready_view(rqctx: RequestContext<Context>, headers: HeaderParams<params::ReadyViewHeaders>) -> Result<HttpResponseOk<types::Readiness>> {
    ready(&rqctx, headers).await
}

pub async fn openapi_view(rqctx: RequestContext<Context>, headers: HeaderParams<params::OpenapiViewHeaders>) -> Result<HttpResponseOk<types::OpenApiDocument>> {
    openapi(&rqctx, headers).await
}

pub async fn openapi_revision_view(
    rqctx: RequestContext<Context>,
    path: Path<params::OpenapiRevisionViewPath>,
    headers: HeaderParams<params::OpenapiRevisionViewHeaders>,
) -> Result<HttpResponseOk<types::OpenApiDocument>> {
    openapi_revision(&rqctx, path, headers).await
}

pub async fn docs_view(rqctx: RequestContext<Context>, headers: HeaderParams<params::DocsViewHeaders>) -> Result<HttpResponseOk<String>> {
    handle_open_sent(&rqctx, headers, || reference_page(Revision::current())).await
}

pub async fn docs_revision_view(
    rqctx: RequestContext<Context>,
    path: Path<params::DocsRevisionViewPath>,
    headers: HeaderParams<params::DocsRevisionViewHeaders>,
) -> Result<HttpResponseOk<String>> {
    handle_open_sent(&rqctx, headers, || {
        let revision = Revision::by_name(&path.into_inner().revision)
            .ok_or_else(|| ApiError::new(ErrorStatusCode::NOT_FOUND, InternalCode::NotFound, "No revision has this name."))?;
        reference_page(revision)
    })
    .await
}

/// A revision's reference page (rendered once, `crate::reference`): HTML
/// that may load nothing from anywhere, as the hosted pages.
fn reference_page(revision: &'static Revision) -> std::result::Result<Response<Body>, ApiError> {
    crate::markup::page_headers(Response::builder().status(http::StatusCode::OK), crate::markup::Forms::None)
        .body(Body::from(crate::reference::page(revision)))
        .map_err(|e| ApiError::internal(format!("the reference page's response: {e}")))
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

/// 200 when the database answers, has every migration of this build and
/// this instance's jobs run; else 503, a detail per failing check.
pub async fn ready(rqctx: &RequestContext<Context>, headers: HeaderParams<params::ReadyViewHeaders>) -> Result<HttpResponseOk<types::Readiness>> {
    let jobs = rqctx.context().jobs.clone();
    handle_open(rqctx, headers, |store| async move {
        let mut failing = vec![];
        match store.applied_migration().await {
            Err(e) => {
                tracing::warn!(error = %e, "not ready: the database does not answer");
                failing.push(Detail::new("database", "database_unreachable", "the database does not answer"));
            }
            Ok(applied) if applied < crate::store::newest_migration() => failing.push(Detail::new(
                "migrations",
                "migrations_pending",
                format!("the database has migrations up to {applied}; this build needs {}", crate::store::newest_migration()),
            )),
            Ok(_) => {}
        }
        if !jobs.running() {
            failing.push(Detail::new("jobs", "jobs_stopped", "this instance's jobs do not run (it is starting or shutting down)"));
        }
        if !failing.is_empty() {
            return Err(ApiError::new(ErrorStatusCode::SERVICE_UNAVAILABLE, InternalCode::NotReady, "This instance is not ready.").with_details(failing));
        }
        Ok(HttpResponseOk(types::Readiness {
            status: types::ReadinessStatus::Ready,
            database: types::ReadinessDatabase::Ok,
            migrations: types::ReadinessMigrations::Ok,
            jobs: types::ReadinessJobs::Ok,
        }))
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
        let revision = name
            .strip_suffix(".json")
            .and_then(Revision::by_name)
            .ok_or_else(|| ApiError::new(ErrorStatusCode::NOT_FOUND, InternalCode::NotFound, "No revision has this document."))?;
        document(revision)
    })
    .await
}
