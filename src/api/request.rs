//! Every handler's prelude: pick the revision, authenticate, check the
//! key's permission, then run the body; failures become the Error object
//! carrying `Api-Revision` and the trace id.

use super::context::{Context, Resolution, resolve};
use super::extract::{HeaderParams, JsonBody};
use super::idempotency;
use super::support::{API_REVISION, ApiError, Reply};
use crate::domain::Caller;
use crate::error::InternalCode;
use dropshot::{Body, ErrorStatusCode, HttpCodedResponse, RequestContext};
use http::{HeaderValue, Response};
use std::future::Future;

/// What an operation needs from the key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    Read,
    Write,
}

fn unauthorized(code: InternalCode, message: &str) -> ApiError {
    ApiError::new(ErrorStatusCode::UNAUTHORIZED, code, message)
}

async fn authenticate(rqctx: &RequestContext<Context>, access: Access) -> Result<Caller, ApiError> {
    let ctx = rqctx.context();
    let headers = rqctx.request.headers();
    let bearer = headers.contains_key(http::header::AUTHORIZATION);
    let Some(key) = headers.get("x-api-key") else {
        return Err(if bearer {
            unauthorized(InternalCode::Unauthorized, "A bearer token is accepted only together with an X-Api-Key.")
        } else {
            unauthorized(InternalCode::Unauthorized, "An X-Api-Key header is required.")
        });
    };
    let secret = key.to_str().map_err(|_| unauthorized(InternalCode::InvalidApiKey, "The API key is not valid."))?;
    let record = ctx
        .keys
        .verify(secret)
        .await
        .map_err(ApiError::from)?
        .ok_or_else(|| unauthorized(InternalCode::InvalidApiKey, "The API key is unknown or revoked."))?;
    if bearer {
        // No user tokens are issued yet (email login comes with the access
        // issue), so no bearer token can be valid.
        return Err(unauthorized(InternalCode::InvalidBearerToken, "The bearer token is not valid."));
    }
    if let Err(seconds) = ctx.limits.check_key(record.api_key_id) {
        let mut e = ApiError::new(
            ErrorStatusCode::TOO_MANY_REQUESTS,
            InternalCode::TooManyRequests,
            format!("Too many requests with this API key; retry after {seconds} seconds."),
        );
        e.retry_after = Some(seconds);
        return Err(e);
    }
    if access == Access::Write && record.read_only {
        return Err(ApiError::new(
            ErrorStatusCode::FORBIDDEN,
            InternalCode::ReadOnlyApiKey,
            "This API key may only read.",
        ));
    }
    Ok(Caller { store: ctx.store.clone(), org: record.organisation_id, api_key_id: record.api_key_id, now: ctx.clock.now() })
}

/// Runs an authenticated operation. `headers` are the operation's header
/// parameters, checked after authentication.
pub async fn handle<T, H, F, Fut>(
    rqctx: &RequestContext<Context>,
    access: Access,
    headers: HeaderParams<H>,
    body: F,
) -> Result<Reply<T>, ApiError>
where
    T: HttpCodedResponse,
    F: FnOnce(Caller) -> Fut,
    Fut: Future<Output = Result<T, ApiError>>,
{
    answer(rqctx, |_| async {
        let caller = authenticate(rqctx, access).await?;
        headers.into_inner()?;
        body(caller).await.map(Answered::Body)
    })
    .await
}

/// Runs an authenticated operation marked (I): the request body is checked
/// before an `X-Idempotency-Key` is claimed (see `idempotency`), so a
/// refused request leaves the key unused.
pub async fn handle_idempotent<T, H, B, F, Fut>(
    rqctx: &RequestContext<Context>,
    access: Access,
    headers: HeaderParams<H>,
    body: JsonBody<B>,
    work: F,
) -> Result<Reply<T>, ApiError>
where
    T: HttpCodedResponse,
    F: FnOnce(Caller, B) -> Fut,
    Fut: Future<Output = Result<T, ApiError>>,
{
    answer(rqctx, |revision| async move {
        let caller = authenticate(rqctx, access).await?;
        headers.into_inner()?;
        let digest = body.digest();
        let input = body.into_inner()?;
        // the header parameters were validated: the key is text of 1..=256
        let key = rqctx.request.headers().get(idempotency::HEADER).and_then(|v| v.to_str().ok()).map(str::to_string);
        let Some(key) = key else {
            return work(caller, input).await.map(Answered::Body);
        };
        let fingerprint = idempotency::fingerprint(rqctx, &digest, revision, &caller);
        let render = |outcome: Result<T, ApiError>| render(outcome, revision, &rqctx.request_id);
        let response = idempotency::run(&caller.clone(), &key, fingerprint, work(caller, input), render).await?;
        Ok(Answered::Sent(response))
    })
    .await
}

/// What an operation produced: a typed body, or a response already built
/// (an idempotent replay, or a first answer as it was stored).
enum Answered<T> {
    Body(T),
    Sent(Response<Body>),
}

/// The response of an outcome, as `Reply` would send it.
fn render<T: HttpCodedResponse>(outcome: Result<T, ApiError>, revision: &'static str, trace_id: &str) -> Response<Body> {
    let rendered = outcome.and_then(|t| t.into().map_err(|e| ApiError::internal(format!("rendering a response: {e}"))));
    let mut response = rendered.unwrap_or_else(|e| e.into_response(revision, trace_id));
    response.headers_mut().entry(API_REVISION).or_insert(HeaderValue::from_static(revision));
    response
}

/// Runs an operation that needs no credentials (health, documents).
pub async fn handle_open<T, H, F, Fut>(
    rqctx: &RequestContext<Context>,
    headers: HeaderParams<H>,
    body: F,
) -> Result<Reply<T>, ApiError>
where
    T: HttpCodedResponse,
    F: FnOnce(crate::store::Store) -> Fut,
    Fut: Future<Output = Result<T, ApiError>>,
{
    answer(rqctx, |_| async {
        headers.into_inner()?;
        body(rqctx.context().store.clone()).await.map(Answered::Body)
    })
    .await
}

/// Checks the revision, runs `work`, and renders its outcome in that revision.
async fn answer<T: HttpCodedResponse, Fut>(
    rqctx: &RequestContext<Context>,
    work: impl FnOnce(&'static str) -> Fut,
) -> Result<Reply<T>, ApiError>
where
    Fut: Future<Output = Result<Answered<T>, ApiError>>,
{
    let ctx = rqctx.context();
    let resolution = resolve(rqctx.request.headers(), &ctx.keys, &ctx.clock);
    let revision = resolution.revision();
    let outcome = match resolution {
        Resolution::UnknownHeader(_) => Err(ApiError::new(
            ErrorStatusCode::BAD_REQUEST,
            InternalCode::UnknownApiRevision,
            "Api-Revision must name a revision in full, e.g. 2026-09-01.bullfinch.",
        )),
        Resolution::Resolved(_) => work(revision.name).await,
    };
    Ok(match outcome {
        Ok(Answered::Body(t)) => Reply::new(revision.name, t),
        Ok(Answered::Sent(response)) => Reply::raw(revision.name, response),
        Err(e) => {
            if e.status.as_u16() >= 500 {
                tracing::error!(trace_id = %rqctx.request_id, error = %e, "request failed");
            }
            Reply::raw(revision.name, e.into_response(revision.name, &rqctx.request_id))
        }
    })
}
