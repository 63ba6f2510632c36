//! Rate limits: requests per API key, failed authentications per client
//! address, and for the open login operations requests per client address
//! and per email address; counted on the server's `Clock` so tests move
//! time instead of waiting for it.
//!
//! Each limit is a generic cell rate algorithm (GCRA, as governor's) over a
//! bounded least-recently-used map: a check is O(1) however many keys an
//! attacker invents, and memory stays under `TRACKED_KEYS` entries per
//! limit. A key pushed out gets a full burst again, which takes
//! `TRACKED_KEYS` other keys seen since; the lockout that protects login
//! codes is counted in the database and does not depend on it.

use crate::clock::Clock;
use crate::config::Settings;
use lru::LruCache;
use std::hash::Hash;
use std::net::{IpAddr, Ipv6Addr};
use std::sync::{Arc, Mutex};

/// Keys each limit remembers, most recently seen first.
const TRACKED_KEYS: usize = 100_000;

/// Puts `key` in `cache`, first pushing out the least recently used
/// entry when `cache` holds `capacity` others. (`LruCache::new` would
/// allocate room for all of them at start; this grows as keys come.)
pub(crate) fn put_bounded<K: Hash + Eq, V>(cache: &mut LruCache<K, V>, capacity: usize, key: K, value: V) {
    if cache.len() >= capacity && !cache.contains(&key) {
        cache.pop_lru();
    }
    cache.put(key, value);
}

/// `n` events a `period` (in nanoseconds) per key, with a burst of `n`.
struct Limit<K: Hash + Eq> {
    /// nanoseconds between two events at the steady rate
    interval: i128,
    /// how far ahead of now a key's theoretical arrival time may run
    tolerance: i128,
    /// each key's theoretical arrival time, in nanoseconds since the epoch
    arrivals: Mutex<LruCache<K, i128>>,
}

impl<K: Hash + Eq> Limit<K> {
    fn new(n: u32, period_seconds: i128) -> Self {
        let n = i128::from(n.max(1));
        let interval = period_seconds * 1_000_000_000 / n;
        Limit { interval, tolerance: interval * (n - 1), arrivals: Mutex::new(LruCache::unbounded()) }
    }

    /// Ok when `key` may act at `now` (and, if `take`, counts the act), or
    /// the nanoseconds until it may.
    fn check(&self, key: K, now: i128, take: bool) -> Result<(), i128> {
        let mut arrivals = self.arrivals.lock().expect("limit lock");
        let arrival = arrivals.get(&key).copied().unwrap_or(now).max(now);
        if arrival - now > self.tolerance {
            return Err(arrival - self.tolerance - now);
        }
        if take {
            put_bounded(&mut arrivals, TRACKED_KEYS, key, arrival + self.interval);
        }
        Ok(())
    }
}

pub struct RateLimits {
    per_key: Limit<uuid::Uuid>,
    auth_failures: Limit<IpAddr>,
    /// hosted pages' tokens that found nothing (a budget of the same size)
    page_misses: Limit<IpAddr>,
    login_per_address: Limit<IpAddr>,
    login_per_email: Limit<String>,
    clock: Arc<Clock>,
}

/// Whole seconds, rounded up, of `nanos`.
fn seconds(nanos: i128) -> u64 {
    u64::try_from((nanos + 999_999_999) / 1_000_000_000).unwrap_or(u64::MAX).max(1)
}

/// The bucket a client address counts in: an IPv4 address (also written
/// as IPv6) alone, an IPv6 address with its /64, the block one subscriber
/// line or host usually gets (counting each of its 2^64 addresses alone
/// would limit nothing).
pub fn bucket(address: IpAddr) -> IpAddr {
    match address {
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => IpAddr::V6(Ipv6Addr::from(u128::from(v6) & !((1u128 << 64) - 1))),
        },
        v4 => v4,
    }
}

impl std::fmt::Debug for RateLimits {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RateLimits")
    }
}

impl RateLimits {
    pub fn new(settings: &Settings, clock: Arc<Clock>) -> Self {
        RateLimits {
            per_key: Limit::new(settings.per_key_per_second, 1),
            auth_failures: Limit::new(settings.auth_failures_per_minute, 60),
            page_misses: Limit::new(settings.auth_failures_per_minute, 60),
            login_per_address: Limit::new(settings.login_per_address_per_minute, 60),
            login_per_email: Limit::new(settings.login_per_email_per_minute, 60),
            clock,
        }
    }

    fn now(&self) -> i128 {
        i128::from(self.clock.now().timestamp_nanos_opt().unwrap_or_default())
    }

    /// Ok, or the whole seconds to wait before the key may call again.
    pub fn check_key(&self, key: uuid::Uuid) -> Result<(), u64> {
        self.per_key.check(key, self.now(), true).map_err(seconds)
    }

    /// Whether `client` may still try a credential: Ok, or the seconds until
    /// its failed authentications allow another.
    pub fn may_authenticate(&self, client: IpAddr) -> Result<(), u64> {
        self.auth_failures.check(bucket(client), self.now(), false).map_err(seconds)
    }

    /// `client` sent an unknown or revoked API key.
    pub fn failed_authentication(&self, client: IpAddr) {
        let _ = self.auth_failures.check(bucket(client), self.now(), true);
    }

    /// Whether `client` may still open a hosted page: Ok, or the seconds
    /// until its tokens that found nothing allow another.
    pub fn may_open_page(&self, client: IpAddr) -> Result<(), u64> {
        self.page_misses.check(bucket(client), self.now(), false).map_err(seconds)
    }

    /// `client` asked for a hosted page whose token found nothing.
    pub fn missed_page(&self, client: IpAddr) {
        let _ = self.page_misses.check(bucket(client), self.now(), true);
    }

    /// A login request from `client`.
    pub fn check_login_address(&self, client: IpAddr) -> Result<(), u64> {
        self.login_per_address.check(bucket(client), self.now(), true).map_err(seconds)
    }

    /// A login request for `email` (compared without case).
    pub fn check_login_email(&self, email: &str) -> Result<(), u64> {
        self.login_per_email.check(crate::store::email_key(email), self.now(), true).map_err(seconds)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_ipv6_client_counts_with_its_64() {
        let a: IpAddr = "2001:db8:1:2:aaaa::1".parse().unwrap();
        let b: IpAddr = "2001:db8:1:2:bbbb::2".parse().unwrap();
        let c: IpAddr = "2001:db8:1:3::1".parse().unwrap();
        assert_eq!(bucket(a), bucket(b));
        assert_ne!(bucket(a), bucket(c));
        assert_eq!(bucket("::ffff:192.0.2.7".parse().unwrap()), "192.0.2.7".parse::<IpAddr>().unwrap());
        assert_ne!(bucket("192.0.2.7".parse().unwrap()), bucket("192.0.2.8".parse().unwrap()));
    }

    #[test]
    fn a_limit_allows_its_burst_then_its_rate() {
        let limit = Limit::new(3, 60);
        let s = 1_000_000_000i128;
        for _ in 0..3 {
            assert!(limit.check("k", 0, true).is_ok());
        }
        assert_eq!(limit.check("k", 0, true), Err(20 * s));
        assert!(limit.check("other", 0, true).is_ok());
        // looking does not count
        assert!(limit.check("k", 20 * s, false).is_ok());
        assert!(limit.check("k", 20 * s, true).is_ok());
        assert!(limit.check("k", 20 * s, true).is_err());
        assert!(limit.check("k", 100 * s, true).is_ok());
    }

    #[test]
    fn a_full_cache_pushes_out_the_least_recently_used() {
        let mut cache = LruCache::unbounded();
        for k in 0..3 {
            put_bounded(&mut cache, 3, k, ());
        }
        cache.get(&0);
        put_bounded(&mut cache, 3, 3, ());
        put_bounded(&mut cache, 3, 3, ());
        let mut kept: Vec<i32> = cache.iter().map(|(k, _)| *k).collect();
        kept.sort();
        assert_eq!(kept, [0, 2, 3]);
    }
}
