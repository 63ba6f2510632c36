//! When a failed delivery is tried again: a schedule that spans about three
//! days (5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h, then every 12 h), each
//! delay spread by up to a tenth either way so that receivers coming back
//! from an outage are not hit by every retry at once, or the delay a
//! receiver's `Retry-After` asks for, within bounds. `switchboard listen`
//! retries on the same schedule.

use chrono::{DateTime, Duration, Utc};

/// The delays after the 1st, 2nd, ... failed attempt of a round; every
/// later one waits `LAST_DELAY`.
const DELAYS: [Duration; 7] =
    [Duration::seconds(5), Duration::minutes(5), Duration::minutes(30), Duration::hours(2), Duration::hours(5), Duration::hours(10), Duration::hours(10)];
const LAST_DELAY: Duration = Duration::hours(12);

/// A round makes at most this many attempts: the nominal schedule then
/// spans 63 h 35 min (jitter moves it by 7 h at most either way).
pub const ATTEMPTS: u32 = 11;

/// And no attempt of a round is made later than this after the round
/// began (a receiver's `Retry-After` cannot stretch it): the delivery fails
/// when the next attempt would be.
pub const SPAN: Duration = Duration::hours(72);

/// A `Retry-After` is honoured between these.
pub const RETRY_AFTER_MIN: Duration = Duration::seconds(1);
pub const RETRY_AFTER_MAX: Duration = Duration::hours(12);

/// An endpoint whose every attempt failed for this long is disabled.
pub const FAILING_LIMIT: Duration = Duration::days(5);

/// The nominal delay after the `failed`-th failed attempt of a round
/// (1-based), before jitter.
pub fn delay(failed: u32) -> Duration {
    DELAYS.get(failed.saturating_sub(1) as usize).copied().unwrap_or(LAST_DELAY)
}

/// When to try again after the `failed`-th failed attempt of a round that
/// began at `round_start`, failed at `now`; None when the round is over
/// (`ATTEMPTS` made, or the next would be past `SPAN`).
/// `jitter` in [-1, 1] spreads the delay by up to a tenth; `retry_after`,
/// the receiver's own ask, replaces the schedule's delay (bounded).
pub fn next_attempt(round_start: DateTime<Utc>, failed: u32, now: DateTime<Utc>, retry_after: Option<Duration>, jitter: f64) -> Option<DateTime<Utc>> {
    if failed >= ATTEMPTS {
        return None;
    }
    let wait = match retry_after {
        Some(asked) => asked.clamp(RETRY_AFTER_MIN, RETRY_AFTER_MAX),
        None => {
            let nominal = delay(failed);
            nominal + Duration::milliseconds((nominal.num_milliseconds() as f64 * jitter.clamp(-1.0, 1.0) / 10.0) as i64)
        }
    };
    let at = now + wait;
    (at <= round_start + SPAN).then_some(at)
}

/// A `Retry-After` header's delay: seconds, or an HTTP date (RFC 9110);
/// None when it is neither.
pub fn parse_retry_after(value: &str, now: DateTime<Utc>) -> Option<Duration> {
    let value = value.trim();
    if let Ok(seconds) = value.parse::<u32>() {
        return Some(Duration::seconds(seconds.into()));
    }
    let at = DateTime::parse_from_rfc2822(value).ok()?.with_timezone(&Utc);
    Some((at - now).max(Duration::zero()))
}

/// A random jitter for `next_attempt`.
pub fn jitter() -> f64 {
    rand::random_range(-1.0..=1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn start() -> DateTime<Utc> {
        "2026-09-01T10:00:00Z".parse().unwrap()
    }

    #[test]
    fn the_schedule_spans_about_three_days_and_then_gives_up() {
        let mut now = start();
        let mut attempts = 1;
        while let Some(at) = next_attempt(start(), attempts, now, None, 0.0) {
            now = at;
            attempts += 1;
        }
        assert_eq!(attempts, ATTEMPTS, "eleven attempts in a round");
        // jitter at either extreme changes neither the count nor the span
        for jitter in [-1.0, 1.0] {
            let (mut at, mut n) = (start(), 1);
            while let Some(next) = next_attempt(start(), n, at, None, jitter) {
                at = next;
                n += 1;
            }
            assert_eq!(n, ATTEMPTS);
            assert!(at - start() < SPAN);
        }
        assert_eq!(now - start(), Duration::seconds(5 + 300 + 1800) + Duration::hours(2 + 5 + 10 + 10 + 12 * 3));
    }

    #[test]
    fn jitter_spreads_a_delay_by_a_tenth_at_most() {
        let late = next_attempt(start(), 2, start(), None, 1.0).unwrap();
        let early = next_attempt(start(), 2, start(), None, -1.0).unwrap();
        assert_eq!(late - start(), Duration::seconds(330));
        assert_eq!(early - start(), Duration::seconds(270));
    }

    #[test]
    fn retry_after_replaces_the_delay_within_bounds() {
        assert_eq!(next_attempt(start(), 1, start(), Some(Duration::seconds(120)), 0.9).unwrap() - start(), Duration::seconds(120));
        assert_eq!(next_attempt(start(), 1, start(), Some(Duration::zero()), 0.0).unwrap() - start(), RETRY_AFTER_MIN);
        assert_eq!(next_attempt(start(), 1, start(), Some(Duration::days(3)), 0.0).unwrap() - start(), RETRY_AFTER_MAX);
        // never past the round's span
        assert_eq!(next_attempt(start(), 3, start() + Duration::hours(70), Some(Duration::hours(3)), 0.0), None);
    }

    #[test]
    fn retry_after_reads_seconds_and_http_dates() {
        assert_eq!(parse_retry_after(" 30 ", start()), Some(Duration::seconds(30)));
        assert_eq!(parse_retry_after("Tue, 01 Sep 2026 10:02:00 GMT", start()), Some(Duration::minutes(2)));
        assert_eq!(parse_retry_after("Tue, 01 Sep 2026 09:00:00 GMT", start()), Some(Duration::zero()));
        assert_eq!(parse_retry_after("soon", start()), None);
    }
}
