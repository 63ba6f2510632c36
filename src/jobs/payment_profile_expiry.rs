//! A saved card is EXPIRED once its last valid day has passed, by the
//! organisation's clock (payment.profile_expiry, subject: the profile's
//! id).

use super::{Outcome, Worker};
use crate::domain::payments;
use crate::store::JobKind;
use std::sync::Arc;

pub fn worker() -> Worker {
    Worker {
        kind: JobKind::PaymentProfileExpiry,
        lease: chrono::Duration::seconds(60),
        batch: 16,
        run: Arc::new(|store, _clock, job| {
            Box::pin(async move {
                let (Some(org), Ok(profile)) = (job.org, job.subject.parse()) else { return Outcome::Done };
                match payments::profiles::expire(&store, org, profile, job.now).await {
                    Ok(()) => Outcome::Done,
                    Err(e) => Outcome::Retry { after: chrono::Duration::seconds(60), error: e.to_string() },
                }
            })
        }),
    }
}
