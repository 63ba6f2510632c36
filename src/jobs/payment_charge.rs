//! A charge attempt still PROCESSING is resolved by asking its provider
//! about it (payment.charge, subject: the charge's id): a SEPA debit that
//! settled, or an attempt whose request died before recording what the
//! provider answered. Never charged again (`payments::charge::resolve`).

use super::{Outcome, Worker};
use crate::domain::payments;
use crate::payment_providers::Providers;
use crate::store::JobKind;
use std::sync::Arc;

pub fn worker(providers: Providers) -> Worker {
    Worker {
        kind: JobKind::PaymentCharge,
        // longer than a provider's answer takes; a charge whose instance
        // died is taken over when it runs out
        lease: chrono::Duration::seconds(30),
        batch: 1,
        run: Arc::new(move |store, _clock, job| {
            let providers = providers.clone();
            Box::pin(async move {
                let (Some(org), Ok(charge)) = (job.org, job.subject.parse()) else { return Outcome::Done };
                match payments::charge::resolve(&store, &providers, org, charge, job.now).await {
                    Ok(()) => Outcome::Done,
                    Err(e) => Outcome::Retry { after: chrono::Duration::seconds(60), error: e.to_string() },
                }
            })
        }),
    }
}
