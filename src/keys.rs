//! API keys: minting secrets, hashing them for lookup, and the short-lived
//! cache of verified keys that keeps the check off the database.

use crate::clock::Clock;
use crate::store::{ApiKeyRecord, Store};
use base64::Engine;
use chrono::{DateTime, Duration, Utc};
use rand::RngCore;
use sha2::{Digest, Sha256};
use lru::LruCache;
use std::sync::{Arc, Mutex};

/// Every key starts with this, so a leaked one is recognisable in logs.
pub const KEY_PREFIX: &str = "sbk_";

/// A new secret: the prefix and 256 random bits.
pub fn mint() -> String {
    let mut bytes = [0u8; 32];
    rand::rng().fill_bytes(&mut bytes);
    format!("{KEY_PREFIX}{}", base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes))
}

/// Keys are high-entropy secrets, so a plain SHA-256 is a safe lookup key
/// (a slow password hash would add milliseconds and no protection).
pub fn hash(key: &str) -> String {
    hex::encode(Sha256::digest(key.as_bytes()))
}

/// The part of a key shown in listings.
pub fn display_prefix(key: &str) -> String {
    key.chars().take(KEY_PREFIX.len() + 6).collect()
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
}

/// Verified keys by hash, refreshed from SQL after `CACHE_TTL_SECONDS`.
pub struct KeyCache {
    store: Store,
    clock: Arc<Clock>,
    known: Mutex<LruCache<String, Entry>>,
    unknown: Mutex<LruCache<String, Entry>>,
}

impl std::fmt::Debug for KeyCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("KeyCache")
    }
}

impl KeyCache {
    pub fn new(store: Store, clock: Arc<Clock>) -> Self {
        KeyCache { store, clock, known: Mutex::new(LruCache::unbounded()), unknown: Mutex::new(LruCache::unbounded()) }
    }

    fn cached(&self, hash: &str) -> Option<Option<ApiKeyRecord>> {
        let fresh = |e: &Entry| self.clock.now() - e.fetched < Duration::seconds(CACHE_TTL_SECONDS);
        for cache in [&self.known, &self.unknown] {
            if let Some(e) = cache.lock().expect("key cache").get(hash).filter(|e| fresh(e)) {
                return Some(e.key.clone());
            }
        }
        None
    }

    fn remember(&self, hash: String, key: Option<ApiKeyRecord>) {
        let cache = if key.is_some() { &self.known } else { &self.unknown };
        crate::limits::put_bounded(&mut cache.lock().expect("key cache"), CACHE_CAPACITY, hash, Entry { key, fetched: self.clock.now() });
    }

    /// The active (unrevoked) key with this secret, if any.
    pub async fn verify(&self, secret: &str) -> crate::error::Result<Option<ApiKeyRecord>> {
        let h = hash(secret);
        if let Some(hit) = self.cached(&h) {
            return Ok(hit);
        }
        let key = self.store.api_key_by_hash(&h).await?.filter(|k| k.revoked_at.is_none());
        self.remember(h, key.clone());
        Ok(key)
    }

    /// Like `verify`, for synchronous callers (dropshot's version policy):
    /// a cache miss blocks this worker thread on one indexed lookup.
    pub fn verify_blocking(&self, secret: &str) -> Option<ApiKeyRecord> {
        if let Some(hit) = self.cached(&hash(secret)) {
            return hit;
        }
        let handle = tokio::runtime::Handle::try_current().ok()?;
        if handle.runtime_flavor() != tokio::runtime::RuntimeFlavor::MultiThread {
            return None;
        }
        tokio::task::block_in_place(|| handle.block_on(self.verify(secret))).ok().flatten()
    }
}
