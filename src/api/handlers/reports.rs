//! The handlers of the Reports operations; a run's download URL is
//! signed for the server's public URL, by the server's clock.

use super::Result;
use crate::api::context::Context;
use crate::api::extract::{HeaderParams, JsonBody, QueryParams};
use crate::api::request::{Access, handle_idempotent, read};
use crate::domain::reports::{self, download::Signer};
use crate::wire::latest::{params, types};
use dropshot::{HttpResponseCreated, HttpResponseOk, Path, RequestContext};

/// What signs the download URLs this request shows.
fn signer(rqctx: &RequestContext<Context>) -> Signer {
    let ctx = rqctx.context();
    Signer {
        key: ctx.tokens.download_key().to_vec(),
        base: super::public_url(rqctx),
        lifetime: chrono::Duration::seconds(i64::from(ctx.settings.report_url_seconds)),
        now: ctx.clock.now(),
    }
}

pub async fn report_create(
    rqctx: RequestContext<Context>,
    headers: HeaderParams<params::ReportCreateHeaders>,
    body: JsonBody<types::NewReportRun, false>,
) -> Result<HttpResponseCreated<types::ReportRun>> {
    let created =
        handle_idempotent(&rqctx, Access::Write, headers, body, |c, body| async move { Ok(HttpResponseCreated(reports::create(&c, body).await?)) }).await;
    // the writer starts at once, not at its next look
    rqctx.context().reports_wake.notify_one();
    created
}

pub async fn report_list(
    rqctx: RequestContext<Context>,
    query: QueryParams<params::ReportListQuery>,
    headers: HeaderParams<params::ReportListHeaders>,
) -> Result<HttpResponseOk<types::ReportRunList>> {
    let signer = signer(&rqctx);
    read(&rqctx, headers, |c| async move { Ok(reports::list(&c, &signer, query.into_inner()?).await?) }).await
}

pub async fn report_view(
    rqctx: RequestContext<Context>,
    path: Path<params::ReportViewPath>,
    headers: HeaderParams<params::ReportViewHeaders>,
) -> Result<HttpResponseOk<types::ReportRun>> {
    let signer = signer(&rqctx);
    read(&rqctx, headers, |c| async move { Ok(reports::view(&c, &signer, &path.into_inner().report_run_id).await?) }).await
}
