//! The handlers of serving the API (the Operations tag), open to anyone:
//! the health check and the published documents of each revision.

use super::context::Context;
use super::error::ApiError;
use super::extract::HeaderParams;
use super::reply::Reply;
use super::request::handle_open;
use super::revision::Revision;
use crate::error::InternalCode;
use crate::wire::latest::{params, types};
use dropshot::{ErrorStatusCode, HttpResponseOk, Path, RequestContext};

type Result<T> = std::result::Result<Reply<T>, ApiError>;

/// A revision's published document (embedded at build time).
fn document(revision: &Revision) -> types::OpenApiDocument {
    types::OpenApiDocument(serde_json::from_str(revision.document()).expect("embedded documents are JSON objects"))
}

pub async fn health(rqctx: &RequestContext<Context>, headers: HeaderParams<params::HealthViewHeaders>) -> Result<HttpResponseOk<types::Health>> {
    handle_open(rqctx, headers, |store| async move {
        store.ping().await?;
        Ok(HttpResponseOk(types::Health { status: types::HealthStatus::Ok }))
    })
    .await
}

pub async fn openapi(rqctx: &RequestContext<Context>, headers: HeaderParams<params::OpenapiViewHeaders>) -> Result<HttpResponseOk<types::OpenApiDocument>> {
    handle_open(rqctx, headers, |_| async move { Ok(HttpResponseOk(document(Revision::current()))) }).await
}

pub async fn openapi_revision(
    rqctx: &RequestContext<Context>,
    path: Path<params::OpenapiRevisionViewPath>,
    headers: HeaderParams<params::OpenapiRevisionViewHeaders>,
) -> Result<HttpResponseOk<types::OpenApiDocument>> {
    handle_open(rqctx, headers, |_| async move {
        let name = path.into_inner().document;
        let revision = name.strip_suffix(".json").and_then(Revision::by_name).ok_or_else(|| {
            ApiError::new(ErrorStatusCode::NOT_FOUND, InternalCode::NotFound, "No revision has this document.")
        })?;
        Ok(HttpResponseOk(document(revision)))
    })
    .await
}
