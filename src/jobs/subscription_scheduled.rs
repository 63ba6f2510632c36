//! What a subscription has due falls due (a delayed activation completes,
//! a cancellation takes effect, a scheduled offering change, a renewal),
//! and tells so, even when nobody reads the subscription. Scheduled for the
//! next due time with every write that changes it; when it runs the work
//! may have been done by a read, or withdrawn, and then nothing happens.

use super::{Outcome, Worker};
use crate::domain::subscriptions::scheduled;
use crate::store::JobKind;
use std::sync::Arc;

pub fn worker() -> Worker {
    Worker {
        kind: JobKind::SubscriptionScheduled,
        lease: chrono::Duration::seconds(60),
        batch: 16,
        run: Arc::new(|store, clock, job| {
            Box::pin(async move {
                let (Some(org), Ok(id)) = (job.org, job.subject.parse()) else { return Outcome::Done };
                match scheduled::run(&store, org, id, clock.now()).await {
                    Ok(()) => Outcome::Done,
                    Err(e) => Outcome::Retry { after: chrono::Duration::seconds(60), error: e.to_string() },
                }
            })
        }),
    }
}
