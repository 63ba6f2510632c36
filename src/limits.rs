//! Rate limits: requests per API key, and for the open login operations
//! per client address and per email address; counted on the server's
//! `Clock` so tests move time instead of waiting for it.

use crate::clock::Clock;
use governor::clock::Clock as GovernorClock;
use governor::middleware::NoOpMiddleware;
use governor::nanos::Nanos;
use governor::state::keyed::HashMapStateStore;
use governor::{Quota, RateLimiter};
use crate::config::Settings;
use std::net::IpAddr;
use std::num::NonZeroU32;
use std::sync::Arc;

/// Past this many tracked keys, forget the ones that are back to full.
const TRACKED_KEYS: usize = 10_000;

/// The server's clock as governor reads time: nanoseconds since the epoch.
#[derive(Clone)]
struct ServerClock(Arc<Clock>);

impl GovernorClock for ServerClock {
    type Instant = Nanos;
    fn now(&self) -> Nanos {
        Nanos::from(self.0.now().timestamp_nanos_opt().unwrap_or_default().max(0) as u64)
    }
}

type Keyed<K> = RateLimiter<K, HashMapStateStore<K>, ServerClock, NoOpMiddleware<Nanos>>;

pub struct RateLimits {
    per_key: Keyed<uuid::Uuid>,
    per_address: Keyed<IpAddr>,
    per_email: Keyed<String>,
    clock: ServerClock,
}

/// `n` a period, with a burst of `n`.
fn quota(n: u32, per: fn(NonZeroU32) -> Quota) -> Quota {
    let n = NonZeroU32::new(n.max(1)).expect("at least 1");
    per(n).allow_burst(n)
}

impl RateLimits {
    pub fn new(settings: &Settings, clock: Arc<Clock>) -> Self {
        let clock = ServerClock(clock);
        RateLimits {
            per_key: RateLimiter::hashmap_with_clock(quota(settings.per_key_per_second, Quota::per_second), clock.clone()),
            per_address: RateLimiter::hashmap_with_clock(
                quota(settings.login_per_address_per_minute, Quota::per_minute),
                clock.clone(),
            ),
            per_email: RateLimiter::hashmap_with_clock(quota(settings.login_per_email_per_minute, Quota::per_minute), clock.clone()),
            clock,
        }
    }

    /// Ok, or the whole seconds to wait before the key may call again.
    pub fn check_key(&self, key: uuid::Uuid) -> Result<(), u64> {
        self.check(&self.per_key, &key)
    }

    /// A login request from `address`.
    pub fn check_address(&self, address: IpAddr) -> Result<(), u64> {
        self.check(&self.per_address, &address)
    }

    /// A login request for `email` (compared without case).
    pub fn check_email(&self, email: &str) -> Result<(), u64> {
        self.check(&self.per_email, &crate::store::email_key(email))
    }

    fn check<K: Clone + Eq + std::hash::Hash>(&self, limiter: &Keyed<K>, key: &K) -> Result<(), u64> {
        if limiter.len() > TRACKED_KEYS {
            limiter.retain_recent();
        }
        limiter.check_key(key).map_err(|not_until| {
            let wait = not_until.wait_time_from(self.clock.now());
            wait.as_secs() + u64::from(wait.subsec_nanos() > 0)
        })
    }
}
