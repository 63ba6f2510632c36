//! The server's shared state, and the version policy that picks each
//! request's revision: `Api-Revision` header, else the key's pin, else the
//! oldest supported revision.

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
    pub limits: crate::limits::RateLimits,
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
}

impl Resolution {
    pub fn revision(self) -> &'static Revision {
        match self {
            Resolution::Resolved(r) | Resolution::UnknownHeader(r) | Resolution::KeyUnread(r) => r,
        }
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

pub fn resolve(headers: &HeaderMap, keys: &KeyCache, clock: &Clock) -> Resolution {
    let today = clock.now().date_naive();
    if let Some(v) = headers.get(super::revision::API_REVISION) {
        return from_header(v, today);
    }
    let key = match headers.get("x-api-key").and_then(|k| k.to_str().ok()).map(|k| keys.verify_blocking(k)).transpose() {
        Ok(key) => key.flatten(),
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

impl ApiContext for Context {
    fn revision_of(&self, headers: &HeaderMap) -> &'static Revision {
        resolve(headers, &self.keys, &self.clock).revision()
    }
}

/// dropshot's hook. An unknown revision routes as the oldest supported one
/// and the handler answers 400 in the service's format; a request the
/// revision has no route for is answered here (see `paths`).
#[derive(Debug)]
pub struct RevisionPolicy {
    pub keys: Arc<KeyCache>,
    pub clock: Arc<Clock>,
}

impl dropshot::DynamicVersionPolicy for RevisionPolicy {
    fn request_extract_version(
        &self,
        request: &http::Request<Body>,
        _log: &slog::Logger,
    ) -> Result<semver::Version, HttpError> {
        let resolution = resolve(request.headers(), &self.keys, &self.clock);
        let revision = resolution.revision();
        if let Resolution::KeyUnread(oldest) = resolution {
            return Err(Resolution::key_unread(oldest));
        }
        super::paths::check(revision, request.method(), request.uri().path()).map_err(|u| super::paths::refusal(u, revision))?;
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
        assert!(matches!(resolve(&headers, &keys, &clock), Resolution::Resolved(r) if r.name == Revision::oldest_supported(clock.now().date_naive()).name));
        headers.insert("x-api-key", http::HeaderValue::from_static("sk_test_another"));
        store.close().await;
        assert!(matches!(resolve(&headers, &keys, &clock), Resolution::KeyUnread(_)));
        let _ = std::fs::remove_dir_all(dir);
    }
}
