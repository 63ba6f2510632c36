//! `X-Idempotency-Key` for every operation marked (I): the first request
//! with a key executes and its answer is stored; a retry with the same key
//! and the same request replays that answer byte for byte (marked with
//! `Idempotent-Replayed: true`); the same key on a different request is 409
//! `idempotency_key_mismatch`, and on one still executing 409
//! `idempotency_key_locked`. Keys are scoped to the organisation and kept
//! 24 hours by the server's clock.
//!
//! Only requests that begin executing are stored: one refused before that
//! (authentication, malformed or invalid input) leaves the key unused, so
//! the client can fix the request and retry with the same key. One that
//! failed on the server's side (5xx) is not stored either, and commits
//! nothing: its retry executes.

use super::error::ApiError;
use super::revision::API_REVISION;
use crate::domain::Caller;
use crate::error::InternalCode;
use crate::store::{KeyHeld, KeyTimes, Scope, Store, StoredAnswer};
use dropshot::{Body, ErrorStatusCode, HttpCodedResponse, RequestContext, ServerContext};
use http::{HeaderName, HeaderValue, Response};
use http_body_util::BodyExt;
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::future::Future;
use std::sync::Arc;
use std::sync::Mutex;

/// The request header.
pub const HEADER: &str = "x-idempotency-key";
/// The response header a replay carries.
pub const REPLAYED: &str = "idempotent-replayed";
pub use crate::store::IDEMPOTENCY_LIFETIME_HOURS as LIFETIME_HOURS;

/// Headers of the first answer that are kept for replays; per-request
/// transport headers (date, request id, length) are not part of the answer.
const KEPT_HEADERS: [&str; 4] = ["content-type", "api-revision", "location", "retry-after"];

/// What makes two requests "the same": method, path, query, body, the
/// revision they are answered in, and who sends them (the key, and the
/// user of a bearer token).
pub fn fingerprint<C: ServerContext>(rqctx: &RequestContext<C>, body_digest: &[u8; 32], revision: &str, caller: &Caller) -> String {
    let mut h = Sha256::new();
    let uri = rqctx.request.uri();
    let user = caller.user.as_ref().map_or(uuid::Uuid::nil(), |u| u.user_id);
    for part in [
        rqctx.request.method().as_str().as_bytes(),
        uri.path().as_bytes(),
        uri.query().unwrap_or("").as_bytes(),
        body_digest,
        revision.as_bytes(),
        caller.api_key_id.as_bytes(),
        user.as_bytes(),
    ] {
        // length-prefixed, so no two different tuples hash the same bytes
        h.update((part.len() as u64).to_be_bytes());
        h.update(part);
    }
    hex::encode(h.finalize())
}

fn conflict(code: InternalCode, message: &str) -> ApiError {
    ApiError::new(ErrorStatusCode::CONFLICT, code, message)
}

fn locked() -> ApiError {
    conflict(InternalCode::IdempotencyKeyLocked, "A request with this X-Idempotency-Key is still in progress; retry it in a moment.")
}

fn mismatch() -> ApiError {
    conflict(InternalCode::IdempotencyKeyMismatch, "This X-Idempotency-Key was used for a different request; use a new key for a new request.")
}

/// The keys (with their requests' fingerprints) whose requests are
/// executing in this instance. A retry racing its own original here waits
/// for nothing and runs nothing: it answers as a retry would, instead of
/// running its work beside the original's and meeting the original's
/// unique values (a `referenceId`, an email) before the original's answer
/// is stored, which would tell a client whose request succeeded that it
/// conflicted. Instances sharing a database meet at the key's row instead
/// (see `run`).
#[derive(Debug, Default)]
pub struct InFlight(Mutex<HashMap<(uuid::Uuid, String), String>>);

/// A key held in `InFlight` until its request has answered.
struct Claim<'a> {
    in_flight: &'a InFlight,
    id: (uuid::Uuid, String),
}

impl InFlight {
    /// Holds `key` for this request, or says why another holds it.
    fn claim(&self, org: uuid::Uuid, key: &str, fingerprint: &str) -> Result<Claim<'_>, ApiError> {
        let id = (org, key.to_string());
        match self.0.lock().unwrap_or_else(|e| e.into_inner()).entry(id.clone()) {
            Entry::Occupied(held) if held.get() == fingerprint => Err(locked()),
            Entry::Occupied(_) => Err(mismatch()),
            Entry::Vacant(free) => {
                free.insert(fingerprint.to_string());
                Ok(Claim { in_flight: self, id })
            }
        }
    }
}

impl Drop for Claim<'_> {
    fn drop(&mut self) {
        self.in_flight.0.lock().unwrap_or_else(|e| e.into_inner()).remove(&self.id);
    }
}

/// The key of one idempotent request, and the scope its work writes in.
pub struct Keyed<'a> {
    /// the store outside the scope, for the answer
    pub store: &'a Store,
    pub org: uuid::Uuid,
    pub key: &'a str,
    pub fingerprint: String,
    /// where `work` (run over `store.scoped(scope)`) parks its transaction
    pub scope: Arc<Scope>,
    /// this instance's keys in flight
    pub in_flight: &'a InFlight,
}

/// Runs `work` under the key, or answers from what the key already holds.
/// `render` turns work's outcome into the response that is stored and
/// sent.
///
/// No claim is committed before the work: the key's row is written, with
/// the answer, in the transaction the work parked, so the work, its events
/// and the answer commit together or not at all. A crash before that
/// commit leaves the key unused (a retry executes it once, at once); after
/// it, answered (a retry replays). Two requests with one key may both
/// execute up to that commit, but only one commits: the other's insert of
/// the key fails on its primary key, its work rolls back, and it answers
/// with the winner's answer, or `idempotency_key_locked` while the winner's
/// commit is still on its way. So work must not act outside the database
/// before it commits; what it sets off goes through the outbox and jobs.
///
/// Within one instance the race never starts: a request whose key is in
/// flight here answers `idempotency_key_locked` (or the answer, once
/// stored) without running its work (`InFlight`).
///
/// The work's written statements go with that commit (see `store::tx`),
/// so a unique-index race the work lost (say, to a concurrent request with
/// another key and the same referenceId) is found there, after its answer
/// was rendered: the request then answers that 409, which is not stored,
/// and a retry executes again.
pub async fn run<T, Fut>(
    keyed: Keyed<'_>,
    now: chrono::DateTime<chrono::Utc>,
    work: Fut,
    render: impl FnOnce(Result<T, ApiError>) -> Response<Body>,
) -> Result<Response<Body>, ApiError>
where
    T: HttpCodedResponse,
    Fut: Future<Output = Result<T, ApiError>>,
{
    let Keyed { store, org, key, fingerprint, scope, in_flight } = keyed;
    let times = KeyTimes { now, expired_before: now - chrono::Duration::hours(LIFETIME_HOURS) };
    // held until this request has answered, so that a retry arriving after
    // it lets go finds the answer stored
    let _claim = match in_flight.claim(org, key, &fingerprint) {
        Ok(claim) => claim,
        // the holder may have committed and not yet let go
        Err(busy) => return answered(store, org, key, &fingerprint, &times).await?.unwrap_or(Err(busy)),
    };
    let replacing_expired = match store.idempotency_answer(org, key, times.expired_before).await? {
        KeyHeld::Answered { fingerprint: held, answer } => return if held == fingerprint { Ok(replay(answer)) } else { Err(mismatch()) },
        KeyHeld::Expired => true,
        KeyHeld::Unused => false,
    };
    let response = render(work.await);
    // a failure on the server's side (a 5xx: the database lost mid-way,
    // say) is not stored, and nothing of its work commits (its parked
    // transaction is dropped, rolled back): a retry executes anew, rather
    // than replay a failure for a day
    if response.status().is_server_error() {
        drop(scope.take());
        return Ok(response);
    }
    let (answer, response) = store_form(response).await?;
    // the work's parked transaction, or (it wrote nothing: a refusal) one
    // of the answer's own
    let mut tx = match scope.take() {
        Some(tx) => tx,
        None => store.begin().await?,
    };
    let recorded = match store.idempotency_record(&mut tx, org, key, &fingerprint, &times, &answer, replacing_expired).await {
        Ok(()) => tx.commit_now().await,
        Err(e) => {
            // rolled back now: its connection must be free for the lookup
            // below (on PostgreSQL the pool may have no other)
            drop(tx);
            Err(e)
        }
    };
    match recorded {
        Ok(()) => Ok(response),
        // another request with the key won: its answer stands
        Err(e) => match answered(store, org, key, &fingerprint, &times).await? {
            Some(answer) => answer,
            None if e.is_idempotency_key_taken() => Err(locked()),
            None => Err(e.into()),
        },
    }
}

/// What the key's stored answer says to a request with `fingerprint`, if
/// the key has one: a replay, or a mismatch.
async fn answered(
    store: &Store,
    org: uuid::Uuid,
    key: &str,
    fingerprint: &str,
    times: &KeyTimes,
) -> Result<Option<Result<Response<Body>, ApiError>>, ApiError> {
    Ok(store.idempotency_answer(org, key, times.expired_before).await?.answer().map(
        |(held, answer)| {
            if held == fingerprint { Ok(replay(answer)) } else { Err(mismatch()) }
        },
    ))
}

/// The stored form of a response, and the response rebuilt from it.
async fn store_form(response: Response<Body>) -> Result<(StoredAnswer, Response<Body>), ApiError> {
    let (parts, body) = response.into_parts();
    let bytes = body.collect().await.map_err(|e| ApiError::internal(format!("reading a response body: {e}")))?.to_bytes();
    // every answer of this API is JSON text
    let body = String::from_utf8(bytes.to_vec()).map_err(|_| ApiError::internal("a response body is not UTF-8"))?;
    let answer = StoredAnswer {
        status: parts.status.as_u16(),
        headers: KEPT_HEADERS
            .iter()
            .filter_map(|name| parts.headers.get(*name).and_then(|v| v.to_str().ok()).map(|v| (name.to_string(), v.to_string())))
            .collect(),
        secret: shows_a_secret(&body),
        body,
    };
    Ok((answer, Response::from_parts(parts, Body::from(bytes))))
}

/// Fields that show a secret once: a webhook endpoint's signing `secret`
/// (create, rotate-secret) and an eSIM's activation code (activate,
/// change-sim). An answer with one is kept sealed, so that its replay is
/// the first answer byte for byte without the table holding the secret.
const SHOWN_ONCE: [&str; 2] = ["secret", "esimActivationCode"];

fn shows_a_secret(body: &str) -> bool {
    SHOWN_ONCE.iter().any(|field| body.contains(&format!("\"{field}\"")))
}

fn replay(answer: StoredAnswer) -> Response<Body> {
    let mut response = Response::new(Body::from(answer.body));
    *response.status_mut() = http::StatusCode::from_u16(answer.status).unwrap_or(http::StatusCode::INTERNAL_SERVER_ERROR);
    let headers = response.headers_mut();
    for (name, value) in answer.headers {
        if let (Ok(n), Ok(v)) = (HeaderName::try_from(name), HeaderValue::try_from(value)) {
            headers.insert(n, v);
        }
    }
    headers.insert(REPLAYED, HeaderValue::from_static("true"));
    debug_assert!(headers.contains_key(API_REVISION));
    response
}
