//! A report run's file (`GET /report-files/{reportRunId}?expires=&signature=`,
//! the run's `downloadUrl`), streamed from the report store. The signed
//! URL is its only key: an expired or altered one is 403, the same answer
//! whether or not the run exists.

use super::internal;
use crate::api::context::Context;
use crate::domain::reports::download;
use crate::kinds::ReportFormat;
use crate::states::reports::ReportRunStatus;
use bytes::Bytes;
use dropshot::{Body, HttpError, Path, RequestContext};
use futures::StreamExt;
use http::{Response, StatusCode};
use std::pin::Pin;
use std::task::{Context as TaskContext, Poll};

#[derive(serde::Deserialize, schemars::JsonSchema)]
pub struct RunPath {
    run: String,
}

/// The signed parts of the URL's query: `expires` (unix seconds, as
/// written when signed) and `signature`, each once; None for anything
/// else (read here, not by an extractor, so a malformed query is the same
/// 403 as a wrong signature). Public for the fuzz targets.
pub fn signed(query: Option<&str>) -> Option<(i64, String)> {
    let (mut expires, mut signature) = (None, None);
    for (name, value) in form_urlencoded::parse(query?.as_bytes()) {
        let slot = match name.as_ref() {
            "expires" => &mut expires,
            "signature" => &mut signature,
            _ => return None,
        };
        if slot.replace(value.into_owned()).is_some() {
            return None;
        }
    }
    let (expires, signature) = (expires?, signature?);
    let at: i64 = expires.parse().ok()?;
    // as signed: no sign, no leading zeros
    (at.to_string() == expires).then_some((at, signature))
}

fn text(status: StatusCode, body: &'static str) -> Result<Response<Body>, HttpError> {
    Response::builder()
        .status(status)
        .header(http::header::CONTENT_TYPE, "text/plain; charset=utf-8")
        .header(http::header::CACHE_CONTROL, "no-store")
        .body(Body::from(body))
        .map_err(|e| HttpError::for_internal_error(e.to_string()))
}

/// The file's bytes as the report store gives them, through a channel: a
/// response body must be `Sync`, which the store's stream is not.
struct Chunks(tokio::sync::mpsc::Receiver<std::io::Result<Bytes>>);

impl http_body::Body for Chunks {
    type Data = Bytes;
    type Error = std::io::Error;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Option<Result<http_body::Frame<Bytes>, std::io::Error>>> {
        self.0.poll_recv(cx).map(|chunk| chunk.map(|c| c.map(http_body::Frame::data)))
    }
}

#[dropshot::endpoint { method = GET, path = "/report-files/{run}", unpublished = true }]
pub(super) async fn report_file(rqctx: RequestContext<Context>, path: Path<RunPath>) -> Result<Response<Body>, HttpError> {
    super::traced(&rqctx, report_file_answered(&rqctx, path)).await
}

async fn report_file_answered(rqctx: &RequestContext<Context>, path: Path<RunPath>) -> Result<Response<Body>, HttpError> {
    let ctx = rqctx.context();
    // (an expired or altered URL is a guess, as a page's unknown token is)
    let forbidden = || {
        super::missed(rqctx);
        text(StatusCode::FORBIDDEN, "This download link has expired or is not valid. Read the report run again for a fresh one.\n")
    };
    let (Ok(run), Some((expires, signature))) = (uuid::Uuid::parse_str(&path.into_inner().run), signed(rqctx.request.uri().query())) else {
        return forbidden();
    };
    if !download::valid(ctx.tokens.download_key(), run, expires, &signature, ctx.clock.now()) {
        return forbidden();
    }
    let gone = || text(StatusCode::NOT_FOUND, "This report's file is no longer kept.\n");
    let Some(row) = ctx.store.report_run_by_id(run).await.map_err(internal)? else { return gone() };
    let (ReportRunStatus::Succeeded, Some(key)) = (row.status, &row.object_key) else { return gone() };
    let Some((size, mut stream)) = ctx.files.read(key).await.map_err(internal)? else { return gone() };
    let (content_type, ext) = match row.format {
        ReportFormat::Csv => ("text/csv; charset=utf-8; header=present", "csv"),
        ReportFormat::Jsonl => ("application/jsonl", "jsonl"),
    };
    let (tx, rx) = tokio::sync::mpsc::channel(4);
    tokio::spawn(async move {
        while let Some(chunk) = stream.next().await {
            if tx.send(chunk).await.is_err() {
                break;
            }
        }
    });
    let name = format!("{}-{}.{ext}", row.report_key.stored(), row.created_at.format("%Y%m%dT%H%M%SZ"));
    Response::builder()
        .status(StatusCode::OK)
        .header(http::header::CONTENT_TYPE, content_type)
        .header(http::header::CONTENT_LENGTH, size)
        .header(http::header::CONTENT_DISPOSITION, format!("attachment; filename=\"{name}\""))
        .header(http::header::CACHE_CONTROL, "private, no-store")
        .header("referrer-policy", "no-referrer")
        .header("x-content-type-options", "nosniff")
        .body(Body::wrap(Chunks(rx)))
        .map_err(|e| HttpError::for_internal_error(e.to_string()))
}

#[cfg(test)]
mod tests {
    #[test]
    fn only_the_query_as_signed_is_read() {
        assert_eq!(super::signed(Some("expires=1793610900&signature=ab")), Some((1793610900, "ab".into())));
        assert_eq!(super::signed(Some("signature=ab&expires=1793610900")), Some((1793610900, "ab".into())));
        for bad in [
            "expires=1&expires=2&signature=ab",
            "expires=+1793610900&signature=ab",
            "expires=01793610900&signature=ab",
            "expires=1793610900",
            "expires=1793610900&signature=ab&x=1",
            "expires=x&signature=ab",
            "",
        ] {
            assert_eq!(super::signed(Some(bad)), None, "{bad}");
        }
        assert_eq!(super::signed(None), None);
    }
}
