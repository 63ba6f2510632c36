//! The one source of time. Tests move it instead of sleeping.

use chrono::{DateTime, Duration, SubsecRound, Utc};
use std::sync::atomic::{AtomicI64, Ordering};

/// Wall-clock time plus an offset that tests can advance.
#[derive(Debug, Default)]
pub struct Clock {
    offset_ms: AtomicI64,
}

impl Clock {
    /// Now, to the microsecond: what the store keeps, so an answer or an
    /// event dated now equals every later read of the same row.
    pub fn now(&self) -> DateTime<Utc> {
        (Utc::now() + Duration::milliseconds(self.offset_ms.load(Ordering::Relaxed))).trunc_subsecs(6)
    }

    /// Moves time forward by `d` for everything that reads this clock.
    pub fn advance(&self, d: Duration) {
        self.offset_ms.fetch_add(d.num_milliseconds(), Ordering::Relaxed);
    }
}
