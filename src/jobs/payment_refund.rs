//! A PENDING refund is sent to its provider, its id the provider's
//! idempotency key, and its outcome committed (payment.refund, subject:
//! the refund's id). A provider that does not answer is asked again.

use super::{Outcome, Worker};
use crate::domain::payments;
use crate::payment_providers::Providers;
use crate::store::JobKind;
use std::sync::Arc;

const AGAIN_AFTER: chrono::Duration = chrono::Duration::seconds(60);

pub fn worker(providers: Providers) -> Worker {
    Worker {
        kind: JobKind::PaymentRefund,
        lease: chrono::Duration::seconds(60),
        batch: 1,
        run: Arc::new(move |store, _clock, job| {
            let providers = providers.clone();
            Box::pin(async move {
                let (Some(org), Ok(refund)) = (job.org, job.subject.parse()) else { return Outcome::Done };
                match payments::refunds::send(&store, &providers, org, refund, job.now).await {
                    Ok(true) => Outcome::Done,
                    Ok(false) => Outcome::Retry { after: AGAIN_AFTER, error: "the provider did not answer".into() },
                    Err(e) => Outcome::Retry { after: AGAIN_AFTER, error: e.to_string() },
                }
            })
        }),
    }
}
