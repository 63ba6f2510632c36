//! An order not submitted by its `expiresAt` expires, and tells so
//! (`order.expired`, dated at the expiry), even when nobody reads it. The
//! job is scheduled with the order; when it runs the order may have been
//! submitted, cancelled or expired by a read meanwhile, and then nothing
//! happens.

use super::{Outcome, Worker};
use crate::domain::orders;
use crate::store::JobKind;
use std::sync::Arc;

pub fn worker() -> Worker {
    Worker {
        kind: JobKind::OrderExpiry,
        lease: chrono::Duration::seconds(60),
        batch: 16,
        run: Arc::new(|store, _clock, job| {
            Box::pin(async move {
                let expired = match (job.org, job.subject.parse()) {
                    (Some(org), Ok(order)) => orders::expire(&store, org, order, job.now).await,
                    _ => return Outcome::Done,
                };
                match expired {
                    Ok(_) => Outcome::Done,
                    Err(e) => Outcome::Retry { after: chrono::Duration::seconds(60), error: e.to_string() },
                }
            })
        }),
    }
}
