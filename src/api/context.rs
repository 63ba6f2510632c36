//! The server's shared state, and the version policy that picks each
//! request's revision: `Api-Revision` header, else the key's pin, else the
//! oldest supported revision. A key it has not seen lately is looked up
//! only while the client address has unknown keys left in its budget.

use super::revision::{ApiContext, Revision};
use crate::clock::Clock;
use crate::keys::KeyCache;
use crate::store::Store;
use dropshot::{Body, HttpError};
use http::HeaderMap;
use std::sync::Arc;

pub struct Context {
    pub store: Store,
    pub clock: Arc<Clock>,
    pub keys: Arc<KeyCache>,
    pub limits: Arc<crate::limits::RateLimits>,
    pub tokens: Arc<crate::tokens::Tokens>,
    /// woken when mail is queued, so the SMTP sender goes at once
    pub mail_wake: Arc<tokio::sync::Notify>,
    /// wakes the sandbox clock's advance worker when an advance commits
    pub advance_wake: Arc<tokio::sync::Notify>,
    /// wakes the sender of payment sessions' charges when one commits
    pub payments_wake: Arc<tokio::sync::Notify>,
    /// wakes the report writer when a run is asked for
    pub reports_wake: Arc<tokio::sync::Notify>,
    pub settings: crate::config::Settings,
    /// who moves the money (built over the root store: never called
    /// while a request holds a transaction)
    pub providers: crate::payment_providers::Providers,
    /// the mobile network subscriptions' moves go to
    pub network: Arc<dyn crate::network::Network>,
    /// idempotency keys whose requests are executing here
    pub in_flight: super::idempotency::InFlight,
    /// where report files are (the download route reads them)
    pub files: crate::report_files::ReportFiles,
    /// whether this instance's jobs run (`/ready`)
    pub jobs: Arc<crate::jobs::State>,
}

/// How a request's revision was decided.
#[derive(Debug, Clone, Copy)]
pub enum Resolution {
    Resolved(&'static Revision),
    /// `Api-Revision` named no revision: answered 400 unknown_api_revision,
    /// in the oldest supported revision.
    UnknownHeader(&'static Revision),
    /// The key's pin could not be read (the database failed): answered 500
    /// in the oldest supported revision, never executed in a guessed one.
    /// A guess would answer in the wrong shape, and a retry of the same
    /// request, once the key reads again, would meet its own
    /// `X-Idempotency-Key` as another request's (`idempotency_key_mismatch`).
    KeyUnread(&'static Revision),
    /// The key is not cached and the client address has spent its budget
    /// of unknown keys: answered 429 (retry after the seconds) in the
    /// oldest supported revision, the key never looked up, so a flood of
    /// invented keys costs the database nothing. Every request from the
    /// address is refused so anyway (`authenticate`), a real key's too.
    Limited(&'static Revision, u64),
}

impl Resolution {
    pub fn revision(self) -> &'static Revision {
        match self {
            Resolution::Resolved(r) | Resolution::UnknownHeader(r) | Resolution::KeyUnread(r) | Resolution::Limited(r, _) => r,
        }
    }

    /// The refusal of a request whose key was not looked up: the client
    /// address may try another in `seconds`.
    pub fn limited(revision: &Revision, seconds: u64) -> HttpError {
        let message = format!("Too many requests with unknown API keys from this address; retry after {seconds} seconds.");
        let mut e = HttpError::for_client_error(None, dropshot::ClientErrorStatusCode::TOO_MANY_REQUESTS, message);
        let mut headers = HeaderMap::new();
        headers.insert(super::revision::API_REVISION, http::HeaderValue::from_static(revision.name));
        headers.insert(http::header::RETRY_AFTER, http::HeaderValue::from(seconds));
        e.headers = Some(Box::new(headers));
        e
    }

    /// The refusal of a request whose key could not be read, in the
    /// oldest supported revision (`revision`).
    pub fn key_unread(revision: &Revision) -> HttpError {
        let mut e = HttpError::for_internal_error("database: the API key could not be read".into());
        e.external_message = "The server failed to complete the request.".into();
        let mut headers = HeaderMap::new();
        headers.insert(super::revision::API_REVISION, http::HeaderValue::from_static(revision.name));
        e.headers = Some(Box::new(headers));
        e
    }
}

/// The revision an `Api-Revision` header's value names on `today` (when
/// the header is there, the key's pin is not asked).
pub fn from_header(v: &http::HeaderValue, today: chrono::NaiveDate) -> Resolution {
    match v.to_str().ok().and_then(Revision::by_name) {
        Some(r) => Resolution::Resolved(r.or_oldest_supported(today)),
        None => Resolution::UnknownHeader(Revision::oldest_supported(today)),
    }
}

/// A client address's budget of unknown keys, as the version policy meets
/// it: a key it has not cached is looked up only within it. A key the
/// database does not know is counted against it once per request: by the
/// handler's prelude (or the login's), or, for a request no operation
/// answers, by the policy itself (`missed`).
pub struct Budget<'a> {
    pub limits: &'a crate::limits::RateLimits,
    pub client: std::net::IpAddr,
    /// the key was looked up here and is no key
    pub missed: std::cell::Cell<bool>,
}

impl<'a> Budget<'a> {
    pub fn new(limits: &'a crate::limits::RateLimits, client: std::net::IpAddr) -> Budget<'a> {
        Budget { limits, client, missed: std::cell::Cell::new(false) }
    }
}

/// The revision of a request with `headers`; a key not cached is looked up
/// within `budget` (None: without one, as unit tests do).
pub fn resolve(headers: &HeaderMap, keys: &KeyCache, clock: &Clock, budget: Option<&Budget<'_>>) -> Resolution {
    let today = clock.now().date_naive();
    if let Some(v) = headers.get(super::revision::API_REVISION) {
        return from_header(v, today);
    }
    let secret = headers.get("x-api-key").and_then(|k| k.to_str().ok());
    let looked_up = match secret.map(|s| (s, keys.cached_only(s))) {
        None => Ok(None),
        Some((_, Some(hit))) => Ok(hit),
        Some((secret, None)) => {
            if let Some(Err(seconds)) = budget.map(|b| b.limits.may_authenticate(b.client)) {
                return Resolution::Limited(Revision::oldest_supported(today), seconds);
            }
            let found = keys.verify_blocking(secret);
            if let (Ok(None), Some(b)) = (&found, budget) {
                b.missed.set(true);
            }
            found
        }
    };
    let key = match looked_up {
        Ok(key) => key,
        Err(e) => {
            tracing::warn!(error = %e, "the API key's revision could not be read");
            return Resolution::KeyUnread(Revision::oldest_supported(today));
        }
    };
    let pinned = key.and_then(|k| Revision::by_name(&k.revision));
    Resolution::Resolved(match pinned {
        Some(r) => r.or_oldest_supported(today),
        None => Revision::oldest_supported(today),
    })
}

impl Context {
    /// The budget of unknown keys of the client of a request from `peer`
    /// (the connection's address) with `headers`.
    pub fn budget(&self, peer: std::net::IpAddr, headers: &HeaderMap) -> Budget<'_> {
        Budget::new(&self.limits, super::client::address(peer, headers, &self.settings.trusted_proxies))
    }
}

impl ApiContext for Context {
    fn revision_of(&self, headers: &HeaderMap, peer: std::net::IpAddr) -> &'static Revision {
        resolve(headers, &self.keys, &self.clock, Some(&self.budget(peer, headers))).revision()
    }
}

/// dropshot's hook. An unknown revision routes as the oldest supported one
/// and the handler answers 400 in the service's format; a request the
/// revision has no route for is answered here (see `paths`).
#[derive(Debug)]
pub struct RevisionPolicy {
    pub keys: Arc<KeyCache>,
    pub clock: Arc<Clock>,
    /// the server's limits: unknown keys per client address
    pub limits: Arc<crate::limits::RateLimits>,
    pub trusted_proxies: Vec<ipnet::IpNet>,
}

impl dropshot::DynamicVersionPolicy for RevisionPolicy {
    fn request_extract_version(&self, request: &http::Request<Body>, _log: &slog::Logger) -> Result<semver::Version, HttpError> {
        // the connection's address, which dropshot puts on the request for
        // its policy (vendor/dropshot/PATCHED.md, hook 3)
        let peer = request.extensions().get::<std::net::SocketAddr>().map(|a| a.ip());
        let budget = peer.map(|peer| Budget::new(&self.limits, super::client::address(peer, request.headers(), &self.trusted_proxies)));
        let resolution = resolve(request.headers(), &self.keys, &self.clock, budget.as_ref());
        let revision = resolution.revision();
        match resolution {
            Resolution::KeyUnread(oldest) => return Err(Resolution::key_unread(oldest)),
            Resolution::Limited(oldest, seconds) => return Err(Resolution::limited(oldest, seconds)),
            Resolution::Resolved(_) | Resolution::UnknownHeader(_) => {}
        }
        super::paths::check(revision, request.method(), request.uri().path()).map_err(|u| {
            // no operation's prelude will count the invented key it carried
            if let Some(b) = budget.as_ref().filter(|b| b.missed.get()) {
                b.limits.failed_authentication(b.client);
            }
            super::paths::refusal(u, revision)
        })?;
        Ok(revision.version.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A key the database could not be asked about is not taken for "no
    /// such key", which would answer in the oldest revision: a key pinned to
    /// another would get the wrong shape, and its retry, once the database
    /// answers, a mismatch of its own idempotency key.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_key_the_database_could_not_read_is_refused_not_given_a_guessed_revision() {
        let dir = std::env::temp_dir().join(format!("switchboard-resolve-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&dir).unwrap();
        let store = Store::connect(&format!("sqlite://{}", dir.join("db.sqlite").display())).await.unwrap();
        let clock = Arc::new(Clock::default());
        let keys = KeyCache::new(store.clone(), clock.clone());
        let mut headers = HeaderMap::new();
        headers.insert("x-api-key", http::HeaderValue::from_static("sk_test_unknown"));
        // while the database answers, an unknown key is no pin: the oldest revision
        assert!(
            matches!(resolve(&headers, &keys, &clock, None), Resolution::Resolved(r) if r.name == Revision::oldest_supported(clock.now().date_naive()).name)
        );
        headers.insert("x-api-key", http::HeaderValue::from_static("sk_test_another"));
        store.close().await;
        assert!(matches!(resolve(&headers, &keys, &clock, None), Resolution::KeyUnread(_)));
        let _ = std::fs::remove_dir_all(dir);
    }
}
