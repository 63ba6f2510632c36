//! API keys: minting secrets, hashing them for lookup, and the short-lived
//! cache of verified keys that keeps the check off the database.

use crate::clock::Clock;
use crate::store::{ApiKeyRecord, Store};
use base64::Engine;
use chrono::{DateTime, Duration, Utc};
use lru::LruCache;
use rand::RngCore;
use sha2::{Digest, Sha256};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// Every key starts with this, so a leaked one is recognisable in logs.
pub const KEY_PREFIX: &str = "sbk_";
/// A sandbox organisation's keys start with this instead, as Stripe's test
/// keys do: a person reading a configuration, a secret scanner rating a
/// leak (a test key reaches no real subscriber) and a deployment check that
/// refuses test keys in production all tell the two apart from the text.
pub const TEST_KEY_PREFIX: &str = "sbk_test_";

/// A new secret: the prefix and 256 random bits.
pub fn mint(sandbox: bool) -> String {
    let prefix = if sandbox { TEST_KEY_PREFIX } else { KEY_PREFIX };
    format!("{prefix}{}", random_token())
}

/// 256 random bits, URL-safe: an API key's secret part, and the tokens of
/// hosted pages and number leases. A token alone opens its page, so it
/// must not be guessable (a link's id is not secret).
pub fn random_token() -> String {
    let mut bytes = [0u8; 32];
    rand::rng().fill_bytes(&mut bytes);
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

/// Keys are high-entropy secrets, so a plain SHA-256 is a safe lookup key
/// (a slow password hash would add milliseconds and no protection).
pub fn hash(key: &str) -> String {
    hex::encode(Sha256::digest(key.as_bytes()))
}

/// The part of a key shown in listings: its prefix and six characters.
pub fn display_prefix(key: &str) -> String {
    let prefix = if key.starts_with(TEST_KEY_PREFIX) { TEST_KEY_PREFIX } else { KEY_PREFIX };
    key.chars().take(prefix.len() + 6).collect()
}

/// How long a verified key (or a known-bad one) is trusted without asking
/// the database again; a revoke takes effect within this time.
pub const CACHE_TTL_SECONDS: i64 = 5;
/// At most this many keys are cached, the least recently used leaving
/// first; unknown keys have a cache of their own, so inventing keys never
/// pushes out the ones in use.
const CACHE_CAPACITY: usize = 10_000;

struct Entry {
    key: Option<ApiKeyRecord>,
    fetched: DateTime<Utc>,
    /// a request is fetching the key again (see `verify`)
    refreshing: bool,
}

/// Verified keys by hash, refreshed from SQL after `CACHE_TTL_SECONDS`.
pub struct KeyCache {
    store: Store,
    clock: Arc<Clock>,
    known: Mutex<LruCache<String, Entry>>,
    unknown: Mutex<LruCache<String, Entry>>,
    /// the keys asked of the database so far (the test of the limit before
    /// lookups counts them)
    lookups: AtomicU64,
}

impl std::fmt::Debug for KeyCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("KeyCache")
    }
}

impl KeyCache {
    pub fn new(store: Store, clock: Arc<Clock>) -> Self {
        KeyCache { store, clock, known: Mutex::new(LruCache::unbounded()), unknown: Mutex::new(LruCache::unbounded()), lookups: AtomicU64::new(0) }
    }

    /// How many keys this cache has asked the database about.
    pub fn lookups(&self) -> u64 {
        self.lookups.load(Ordering::Relaxed)
    }

    /// The cached answer for `secret` (Some(None): known to be no key), or
    /// None when only the database can tell.
    pub fn cached_only(&self, secret: &str) -> Option<Option<ApiKeyRecord>> {
        self.cached(&hash(secret), false).map(|(hit, _)| hit)
    }

    /// The cached answer for `hash` if it is younger than
    /// `CACHE_TTL_SECONDS`, and whether this caller is to fetch it again:
    /// with `refresh`, the first caller to find it past half its life.
    fn cached(&self, hash: &str, refresh: bool) -> Option<(Option<ApiKeyRecord>, bool)> {
        let now = self.clock.now();
        for cache in [&self.known, &self.unknown] {
            let mut cache = cache.lock().expect("key cache");
            let Some(e) = cache.get_mut(hash) else { continue };
            let age = now - e.fetched;
            if age >= Duration::seconds(CACHE_TTL_SECONDS) {
                continue;
            }
            let renew = refresh && !e.refreshing && age >= Duration::milliseconds(CACHE_TTL_SECONDS * 500);
            e.refreshing |= renew;
            return Some((e.key.clone(), renew));
        }
        None
    }

    fn remember(&self, hash: String, key: Option<ApiKeyRecord>) {
        let (cache, other) = if key.is_some() { (&self.known, &self.unknown) } else { (&self.unknown, &self.known) };
        // a key just revoked (or created) leaves the other cache, which
        // would otherwise keep answering for it until it expired
        other.lock().expect("key cache").pop(&hash);
        crate::limits::put_bounded(&mut cache.lock().expect("key cache"), CACHE_CAPACITY, hash, Entry { key, fetched: self.clock.now(), refreshing: false });
    }

    /// The active (unrevoked) key with this secret, if any. A key in use
    /// is fetched again by the first request past half its cache life, so
    /// its entry never expires under load: `verify_blocking`, which runs
    /// before every request, then never blocks (each block hands the
    /// worker thread off to a new one, and under 32 concurrent requests the
    /// expiry of one entry grew the server from 2 threads to 17, and its
    /// memory with them: docs/performance.md, Memory).
    pub async fn verify(&self, secret: &str) -> crate::error::Result<Option<ApiKeyRecord>> {
        let h = hash(secret);
        let young = match self.cached(&h, true) {
            Some((hit, false)) => return Ok(hit),
            Some((hit, true)) => Some(hit),
            None => None,
        };
        self.lookups.fetch_add(1, Ordering::Relaxed);
        let key = match (self.store.api_key_by_hash(&h).await, young) {
            (Ok(key), _) => key.filter(|k| k.revoked_at.is_none()),
            (Err(e), None) => return Err(e),
            // the entry is young enough to answer while the database does
            // not; the next request past half its life tries again
            (Err(_), Some(hit)) => {
                for cache in [&self.known, &self.unknown] {
                    if let Some(e) = cache.lock().expect("key cache").get_mut(&h) {
                        e.refreshing = false;
                    }
                }
                return Ok(hit);
            }
        };
        self.remember(h, key.clone());
        Ok(key)
    }

    /// `org`'s test clock moved to `offset` (an advance committed here):
    /// its cached keys carry the new offset, so this instance's next
    /// request reads the new time. Other instances read it with the key
    /// again, within `CACHE_TTL_SECONDS` (a key in use: within half that).
    pub fn clock_moved(&self, org: uuid::Uuid, offset: Duration) {
        let mut known = self.known.lock().expect("key cache");
        for (_, e) in known.iter_mut() {
            if let Some(k) = e.key.as_mut().filter(|k| k.organisation_id == org) {
                k.clock_offset = offset;
            }
        }
    }

    /// Like `verify`, for synchronous callers (dropshot's version policy)
    /// of a secret `cached_only` did not know: blocks this worker thread on
    /// one indexed lookup. A lookup that failed is an error, not "no such
    /// key": the caller must not guess the key's pinned revision. (Outside
    /// a multi-threaded runtime it cannot block and answers no key: only
    /// tests run so.)
    pub fn verify_blocking(&self, secret: &str) -> crate::error::Result<Option<ApiKeyRecord>> {
        let Ok(handle) = tokio::runtime::Handle::try_current() else { return Ok(None) };
        if handle.runtime_flavor() != tokio::runtime::RuntimeFlavor::MultiThread {
            return Ok(None);
        }
        tokio::task::block_in_place(|| handle.block_on(self.verify(secret)))
    }
}
