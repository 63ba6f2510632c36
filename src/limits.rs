//! Rate limits: requests per API key, counted on the server's `Clock` so
//! tests move time instead of waiting for it.

use crate::clock::Clock;
use governor::clock::Clock as GovernorClock;
use governor::middleware::NoOpMiddleware;
use governor::nanos::Nanos;
use governor::state::keyed::HashMapStateStore;
use governor::{Quota, RateLimiter};
use std::num::NonZeroU32;
use std::sync::Arc;

/// Requests per second each API key may make (also its burst) unless
/// `serve --rate-limit` says otherwise.
pub const DEFAULT_PER_SECOND: u32 = 100;

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

pub struct RateLimits {
    per_key: RateLimiter<uuid::Uuid, HashMapStateStore<uuid::Uuid>, ServerClock, NoOpMiddleware<Nanos>>,
    clock: ServerClock,
}

impl RateLimits {
    pub fn new(quota: Quota, clock: Arc<Clock>) -> Self {
        let clock = ServerClock(clock);
        RateLimits { per_key: RateLimiter::hashmap_with_clock(quota, clock.clone()), clock }
    }

    /// `per_second` requests a second per key, with a burst of as many.
    pub fn per_second(per_second: u32, clock: Arc<Clock>) -> Self {
        let n = NonZeroU32::new(per_second.max(1)).expect("at least 1");
        RateLimits::new(Quota::per_second(n).allow_burst(n), clock)
    }

    /// Ok, or the whole seconds to wait before the key may call again.
    pub fn check_key(&self, key: uuid::Uuid) -> Result<(), u64> {
        if self.per_key.len() > TRACKED_KEYS {
            self.per_key.retain_recent();
        }
        self.per_key.check_key(&key).map_err(|not_until| {
            let wait = not_until.wait_time_from(self.clock.now());
            wait.as_secs() + u64::from(wait.subsec_nanos() > 0)
        })
    }
}
