//! The one source of time. Tests move it instead of sleeping.

use chrono::{DateTime, Duration, SubsecRound, Utc};
use std::sync::atomic::{AtomicI64, Ordering};

/// Wall-clock time plus an offset that tests can advance.
#[derive(Debug, Default)]
pub struct Clock {
    offset_ms: AtomicI64,
}

impl Clock {
    /// A clock that reads `start` now and runs on from there at the
    /// machine's pace: a test pins its date with it, so its verdict does not
    /// change with the day it runs (a revision's retirement, a month's end).
    pub fn starting_at(start: DateTime<Utc>) -> Clock {
        Clock { offset_ms: AtomicI64::new((start - Utc::now()).num_milliseconds()) }
    }

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
