//! A payment link not paid by its `expiresAt` expires, and tells so
//! (`payment_link.expired`, dated at the expiry), even when nobody reads
//! it (payment.link_expiry, subject: the link's id). A link paid,
//! cancelled or expired by a read meanwhile is left as it is.

use super::{Outcome, Worker};
use crate::domain::payments;
use crate::store::JobKind;
use std::sync::Arc;

pub fn worker() -> Worker {
    Worker {
        kind: JobKind::PaymentLinkExpiry,
        lease: chrono::Duration::seconds(60),
        batch: 16,
        run: Arc::new(|store, _clock, job| {
            Box::pin(async move {
                let (Some(org), Ok(link)) = (job.org, job.subject.parse()) else { return Outcome::Done };
                match payments::links::expire(&store, org, link, job.now).await {
                    Ok(()) => Outcome::Done,
                    Err(e) => Outcome::Retry { after: chrono::Duration::seconds(60), error: e.to_string() },
                }
            })
        }),
    }
}
