//! Every handler's prelude: pick the revision, refuse header values that
//! are not text, authenticate (key, optional bearer token), rate-limit,
//! check the key's and the user's write permission, then run the body;
//! failures become the Error object carrying `Api-Revision` and the trace
//! id. The login operations have their own prelude (address and email
//! limits, the key as scope).

use super::context::{Context, Resolution, resolve};
use super::error::ApiError;
use super::extract::{HeaderParams, JsonBody};
use super::idempotency;
use super::reply::Reply;
use super::revision::API_REVISION;
use crate::domain::Caller;
use crate::domain::access::UserAccess;
use crate::domain::login::{Login, Scope};
use crate::error::{Detail, InternalCode};
use crate::metrics::Answer;
use crate::store::{self, ApiKeyRecord};
use crate::telemetry;
use crate::tokens::Refusal;
use dropshot::{Body, ErrorStatusCode, HttpCodedResponse, HttpResponseOk, RequestContext};
use http::{HeaderValue, Response};
use std::future::Future;
use std::sync::Arc;
use tracing::Instrument;

/// What an operation needs from the key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    Read,
    Write,
}

fn unauthorized(code: InternalCode, message: &str) -> ApiError {
    ApiError::new(ErrorStatusCode::UNAUTHORIZED, code, message)
}

fn too_many(seconds: u64, whose: &str) -> ApiError {
    let mut e =
        ApiError::new(ErrorStatusCode::TOO_MANY_REQUESTS, InternalCode::TooManyRequests, format!("Too many requests {whose}; retry after {seconds} seconds."));
    e.retry_after = Some(seconds);
    e
}

/// Headers the server reads itself. A value that is not visible ASCII text
/// is refused with 400 before anything else looks at it.
const READ_HEADERS: [&str; 4] = ["X-Api-Key", "Authorization", "X-Idempotency-Key", "Api-Revision"];

fn check_header_text(headers: &http::HeaderMap) -> Result<(), ApiError> {
    let details: Vec<Detail> = READ_HEADERS
        .iter()
        .filter(|name| headers.get_all(**name).iter().any(|v| v.to_str().is_err()))
        .map(|name| Detail::new(*name, "invalid_header", "must be visible ASCII text"))
        .collect();
    if details.is_empty() {
        return Ok(());
    }
    Err(ApiError::new(ErrorStatusCode::BAD_REQUEST, InternalCode::InvalidHeader, "A header value is not text; see details.").with_details(details))
}

/// The active key named by `X-Api-Key`, or 401.
/// The key `secret` names: while `client` is past its budget of unknown
/// keys, 429 (its real keys' requests too); a key that is none (the
/// database's or the cache's answer) counts against it, once per request
/// (the version policy counts only for requests no operation answers).
async fn api_key(ctx: &Context, client: std::net::IpAddr, secret: &str) -> Result<Option<ApiKeyRecord>, ApiError> {
    if let Err(seconds) = ctx.limits.may_authenticate(client) {
        return Err(too_many(seconds, "with unknown API keys from this address"));
    }
    let found = ctx.keys.verify(secret).await.map_err(ApiError::from)?;
    if found.is_none() {
        ctx.limits.failed_authentication(client);
    }
    Ok(found)
}

/// The user of `Authorization: Bearer <token>`, in the key's organisation.
async fn bearer_user(ctx: &Context, value: &str, org: uuid::Uuid) -> Result<UserAccess, ApiError> {
    let invalid = || unauthorized(InternalCode::InvalidBearerToken, "The bearer token is not valid.");
    let token = match value.split_once(' ') {
        Some((scheme, token)) if scheme.eq_ignore_ascii_case("bearer") => token.trim(),
        _ => return Err(unauthorized(InternalCode::InvalidBearerToken, "Authorization must be: Bearer <access token>.")),
    };
    let claims = ctx.tokens.verify(token, ctx.clock.now()).map_err(|r| match r {
        Refusal::Expired => unauthorized(InternalCode::BearerTokenExpired, "The bearer token has expired; sign in again."),
        Refusal::Invalid => invalid(),
    })?;
    // a token of another organisation is no token here
    if claims.org != org {
        return Err(invalid());
    }
    let grants = ctx.store.user_grants(org, claims.sub).await.map_err(ApiError::from)?.ok_or_else(invalid)?;
    // the user's sessions started over since (their sign-in address changed)
    if grants.sessions_from.is_some_and(|from| claims.iat_ms < from.timestamp_millis()) {
        return Err(unauthorized(InternalCode::InvalidBearerToken, "The bearer token was issued before the user's sign-in changed; sign in again."));
    }
    Ok(UserAccess::new(claims.sub, grants))
}

/// The client address a request counts against (see `client`).
pub(crate) fn client_of(rqctx: &RequestContext<Context>) -> std::net::IpAddr {
    let ctx = rqctx.context();
    super::client::address(rqctx.request.remote_addr().ip(), rqctx.request.headers(), &ctx.settings.trusted_proxies)
}

async fn authenticate(rqctx: &RequestContext<Context>, access: Access) -> Result<Caller, ApiError> {
    let ctx = rqctx.context();
    let headers = rqctx.request.headers();
    // header values were checked to be text
    let text = |name| headers.get(name).and_then(|v: &HeaderValue| v.to_str().ok());
    let bearer = text(http::header::AUTHORIZATION.as_str());
    let Some(secret) = text("x-api-key") else {
        return Err(if bearer.is_some() {
            unauthorized(InternalCode::Unauthorized, "A bearer token is accepted only together with an X-Api-Key.")
        } else {
            unauthorized(InternalCode::Unauthorized, "An X-Api-Key header is required.")
        });
    };
    let record =
        api_key(ctx, client_of(rqctx), secret).await?.ok_or_else(|| unauthorized(InternalCode::InvalidApiKey, "The API key is unknown or revoked."))?;
    // limit before the token's user is loaded, so a flood costs no queries
    if let Err(seconds) = ctx.limits.check_key(record.api_key_id) {
        return Err(too_many(seconds, "with this API key"));
    }
    let user = match bearer {
        Some(value) => Some(bearer_user(ctx, value, record.organisation_id).await?),
        None => None,
    };
    if access == Access::Write && record.read_only {
        return Err(ApiError::new(ErrorStatusCode::FORBIDDEN, InternalCode::ReadOnlyApiKey, "This API key may only read."));
    }
    if access == Access::Write && user.as_ref().is_some_and(|u| u.support) {
        return Err(ApiError::new(ErrorStatusCode::FORBIDDEN, InternalCode::SupportUserReadOnly, "A support user may read but not change."));
    }
    Ok(Caller {
        store: ctx.store.clone(),
        org: record.organisation_id,
        api_key_id: record.api_key_id,
        user: user.map(Arc::new),
        read_only: record.read_only,
        // the organisation's time: the server's, moved by a sandbox
        // organisation's test clock (its offset came with the key)
        now: ctx.clock.now() + record.clock_offset,
    })
}

/// Runs one of the open login operations (and the refresh): limited per
/// client address and per email address, with the organisation of an
/// optional `X-Api-Key` as its scope. `email` picks the address out of the
/// body, if it has one.
pub async fn handle_login<T, H, B, F, Fut>(
    rqctx: &RequestContext<Context>,
    headers: HeaderParams<H>,
    body: JsonBody<B>,
    email: fn(&B) -> Option<&str>,
    work: F,
) -> Result<Reply<T>, ApiError>
where
    T: HttpCodedResponse,
    F: FnOnce(Login, Scope, B) -> Fut,
    Fut: Future<Output = Result<T, ApiError>>,
{
    answer(rqctx, |_| async move {
        let ctx = rqctx.context();
        if let Err(seconds) = ctx.limits.check_login_address(client_of(rqctx)) {
            return Err(too_many(seconds, "from this address"));
        }
        headers.into_inner()?;
        let input = body.into_inner()?;
        if let Some(Err(seconds)) = email(&input).map(|e| ctx.limits.check_login_email(e)) {
            return Err(too_many(seconds, "for this email address"));
        }
        let scope = match rqctx.request.headers().get("x-api-key").and_then(|v| v.to_str().ok()) {
            None => Scope::Anywhere,
            Some(secret) => match api_key(ctx, client_of(rqctx), secret).await? {
                Some(key) => Scope::Organisation(key.organisation_id),
                None => Scope::Nowhere,
            },
        };
        let login = Login {
            store: ctx.store.clone(),
            tokens: ctx.tokens.clone(),
            code_seconds: i64::from(ctx.settings.login_code_seconds),
            max_failures: ctx.settings.login_failures_per_day,
            refresh_seconds: i64::from(ctx.settings.refresh_token_seconds),
            now: ctx.clock.now(),
        };
        work(login, scope, input).await.map(Answered::Body)
    })
    .await
}

/// Runs an authenticated operation. `headers` are the operation's header
/// parameters, checked after authentication.
pub async fn handle<T, H, F, Fut>(rqctx: &RequestContext<Context>, access: Access, headers: HeaderParams<H>, body: F) -> Result<Reply<T>, ApiError>
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

/// A read: an authenticated operation that answers 200 with what `find`
/// finds (the shape of most GETs).
pub async fn read<T, H, F, Fut>(rqctx: &RequestContext<Context>, headers: HeaderParams<H>, find: F) -> Result<Reply<HttpResponseOk<T>>, ApiError>
where
    T: schemars::JsonSchema + serde::Serialize + Send + Sync + 'static,
    F: FnOnce(Caller) -> Fut,
    Fut: Future<Output = Result<T, ApiError>>,
{
    handle(rqctx, Access::Read, headers, |c| async move { Ok(HttpResponseOk(find(c).await?)) }).await
}

/// Runs an authenticated operation marked (I): the request body is checked
/// before its `X-Idempotency-Key` is looked up (see `idempotency`), so a
/// refused request leaves the key unused.
pub async fn handle_idempotent<T, H, B, F, Fut, const OPTIONAL: bool>(
    rqctx: &RequestContext<Context>,
    access: Access,
    headers: HeaderParams<H>,
    body: JsonBody<B, OPTIONAL>,
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
        let scope = Arc::new(store::Scope::default());
        let store = caller.store.clone();
        let keyed = idempotency::Keyed { store: &store, org: caller.org, key: &key, fingerprint, scope: scope.clone(), in_flight: &rqctx.context().in_flight };
        // the key's lifetime is the server's, not a sandbox clock's
        let now = rqctx.context().clock.now();
        let work = work(Caller { store: store.scoped(scope), ..caller }, input);
        let response = idempotency::run(keyed, now, work, render).await?;
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
pub async fn handle_open<T, H, F, Fut>(rqctx: &RequestContext<Context>, headers: HeaderParams<H>, body: F) -> Result<Reply<T>, ApiError>
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

/// Runs an open operation whose answer is built already: a published
/// document, served as the bytes embedded at build time (re-serialising
/// half a megabyte per request would be an easy load to put on the server).
pub async fn handle_open_sent<T, H, F>(rqctx: &RequestContext<Context>, headers: HeaderParams<H>, body: F) -> Result<Reply<T>, ApiError>
where
    T: HttpCodedResponse,
    F: FnOnce() -> Result<Response<Body>, ApiError>,
{
    answer(rqctx, |_| async {
        headers.into_inner()?;
        body().map(Answered::Sent)
    })
    .await
}

/// Checks the revision, runs `work`, and renders its outcome in that revision.
async fn answer<T: HttpCodedResponse, Fut>(rqctx: &RequestContext<Context>, work: impl FnOnce(&'static str) -> Fut) -> Result<Reply<T>, ApiError>
where
    Fut: Future<Output = Result<Answered<T>, ApiError>>,
{
    let started = std::time::Instant::now();
    let ctx = rqctx.context();
    let resolution = resolve(rqctx.request.headers(), &ctx.keys, &ctx.clock, Some(&ctx.budget(rqctx.request.remote_addr().ip(), rqctx.request.headers())));
    let revision = resolution.revision();
    let headers = rqctx.request.headers();
    let span = telemetry::request_span(&rqctx.request_id, &rqctx.endpoint.operation_id, Some(rqctx.request.method()), Some(revision.name), Some(headers));
    let outcome = async {
        match resolution {
            Resolution::UnknownHeader(_) => Err(ApiError::new(
                ErrorStatusCode::BAD_REQUEST,
                InternalCode::UnknownApiRevision,
                "Api-Revision must name a revision in full, e.g. 2026-09-01.bullfinch.",
            )),
            Resolution::KeyUnread(oldest) => Err(Resolution::key_unread(oldest).into()),
            Resolution::Limited(_, seconds) => Err(too_many(seconds, "with unknown API keys from this address")),
            Resolution::Resolved(_) => match check_header_text(rqctx.request.headers()) {
                Ok(()) => work(revision.name).await,
                Err(e) => Err(e),
            },
        }
    }
    .instrument(span.clone())
    .await;
    let (status, how) = match &outcome {
        Ok(Answered::Body(_)) => (T::STATUS_CODE.as_u16(), Answer::Plain),
        Ok(Answered::Sent(r)) if r.headers().contains_key(idempotency::REPLAYED) => (r.status().as_u16(), Answer::Replayed),
        Ok(Answered::Sent(r)) => (r.status().as_u16(), Answer::Plain),
        Err(e) => (
            e.status.as_u16(),
            match e.body.internal_code.as_deref().unwrap_or_default() {
                code if code == InternalCode::IdempotencyKeyLocked.as_str() => Answer::KeyLocked,
                code if code == InternalCode::TooManyRequests.as_str() => Answer::RateLimited,
                _ => Answer::Plain,
            },
        ),
    };
    let seconds = started.elapsed().as_secs_f64();
    crate::metrics::request(&rqctx.endpoint.operation_id, revision.name, status, seconds, how);
    telemetry::request_ended(&span, status);
    // the access log, for who asks for it (RUST_LOG=switchboard::api=debug)
    tracing::debug!(parent: &span, status, seconds, "answered");
    Ok(match outcome {
        Ok(Answered::Body(t)) => Reply::new(revision.name, t),
        Ok(Answered::Sent(response)) => Reply::raw(revision.name, response),
        Err(e) => {
            if e.status.as_u16() >= 500 {
                // (the trace id also here: RUST_LOG may leave the span out)
                tracing::error!(parent: &span, trace_id = %rqctx.request_id, error = %e, "request failed");
            }
            Reply::raw(revision.name, e.into_response(revision.name, &rqctx.request_id))
        }
    })
}
