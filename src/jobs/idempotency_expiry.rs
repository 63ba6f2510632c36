//! Idempotency keys live 24 hours by the server's clock: once an hour this
//! job deletes those past it (a claim also ignores an expired row of its
//! own key, so a key is forgotten on time even between runs).

use super::{Outcome, Worker};
use crate::store::IDEMPOTENCY_LIFETIME_HOURS as LIFETIME_HOURS;
use crate::store::JobKind;
use std::sync::Arc;

/// How often expired keys are deleted.
pub fn every() -> chrono::Duration {
    chrono::Duration::hours(1)
}

pub fn worker() -> Worker {
    Worker {
        kind: JobKind::IdempotencyExpiry,
        lease: chrono::Duration::minutes(5),
        batch: 1,
        run: Arc::new(|store, clock, _job| {
            Box::pin(async move {
                let now = clock.now();
                match store.forget_idempotency_keys(now - chrono::Duration::hours(LIFETIME_HOURS), now + every(), now).await {
                    Ok(_) => Outcome::Done,
                    Err(e) => Outcome::Retry { after: chrono::Duration::minutes(5), error: e.to_string() },
                }
            })
        }),
    }
}
