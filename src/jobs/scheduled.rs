//! What a subscription, an add-on or a license has due falls due (a delayed
//! activation completes, a cancellation takes effect, a scheduled offering
//! change, a renewal; an add-on's cancellation at period end, offering
//! change or expiry; a license's scheduled cancellation) and tells so, even
//! when nobody reads it. Scheduled for the next due time with every write
//! that changes it; when it runs the work may have been done by a read,
//! or withdrawn, and then nothing happens.

use super::{Outcome, Worker};
use crate::domain::{addons, licenses, subscriptions};
use crate::error::Result;
use crate::store::{JobKind, Store};
use chrono::{DateTime, Utc};
use futures::future::BoxFuture;
use std::sync::Arc;
use uuid::Uuid;

/// Does what is due by a time for one subject (org, id) of `kind`.
type Run = fn(Store, Uuid, Uuid, DateTime<Utc>) -> BoxFuture<'static, Result<()>>;

fn worker(kind: JobKind, run: Run) -> Worker {
    Worker {
        kind,
        lease: chrono::Duration::seconds(60),
        batch: 16,
        run: Arc::new(move |store, _clock, job| {
            Box::pin(async move {
                let (Some(org), Ok(id)) = (job.org, job.subject.parse()) else { return Outcome::Done };
                match run(store, org, id, job.now).await {
                    Ok(()) => Outcome::Done,
                    Err(e) => Outcome::Retry { after: chrono::Duration::seconds(60), error: e.to_string() },
                }
            })
        }),
    }
}

/// invoice.due (subject: an invoice's id); dunning's moves reach the
/// network through it, and invoices are delivered by it (their mail links
/// to the hosted pages at `public_url`)
pub fn invoices(network: Arc<dyn crate::network::Network>, public_url: &str) -> Worker {
    let public_url: Arc<str> = public_url.into();
    Worker {
        kind: JobKind::InvoiceDue,
        lease: chrono::Duration::seconds(60),
        batch: 16,
        run: Arc::new(move |store, _clock, job| {
            let (network, public_url) = (network.clone(), public_url.clone());
            Box::pin(async move {
                let (Some(org), Ok(id)) = (job.org, job.subject.parse()) else { return Outcome::Done };
                match crate::domain::invoices::due::run(&store, network.as_ref(), &public_url, org, id, job.now).await {
                    Ok(()) => Outcome::Done,
                    Err(e) => Outcome::Retry { after: chrono::Duration::seconds(60), error: e.to_string() },
                }
            })
        }),
    }
}

/// porting.step (subject: a porting's id): it asks the losing carrier and
/// the network
pub fn portings(network: Arc<dyn crate::network::Network>, carrier: Arc<dyn crate::carrier::Carrier>) -> Worker {
    Worker {
        kind: JobKind::PortingStep,
        lease: chrono::Duration::seconds(60),
        batch: 16,
        run: Arc::new(move |store, _clock, job| {
            let (network, carrier) = (network.clone(), carrier.clone());
            Box::pin(async move {
                let (Some(org), Ok(id)) = (job.org, job.subject.parse()) else { return Outcome::Done };
                match crate::domain::porting::step::run(&store, carrier.as_ref(), network.as_ref(), org, id, job.now).await {
                    Ok(()) => Outcome::Done,
                    Err(e) => Outcome::Retry { after: chrono::Duration::seconds(60), error: e.to_string() },
                }
            })
        }),
    }
}

/// subscription.scheduled (subject: a subscription's id)
pub fn subscriptions() -> Worker {
    worker(JobKind::SubscriptionScheduled, |store, org, id, now| Box::pin(async move { subscriptions::scheduled::run(&store, org, id, now).await }))
}

/// license.scheduled (subject: a license's id)
pub fn licenses() -> Worker {
    worker(JobKind::LicenseScheduled, |store, org, id, now| Box::pin(async move { licenses::scheduled::run(&store, org, id, now).await }))
}

/// addon.scheduled (subject: an add-on's id)
pub fn addons() -> Worker {
    worker(JobKind::AddonScheduled, |store, org, id, now| {
        Box::pin(async move {
            // what its subscription had due comes first (it may end the add-on)
            if let Some(a) = store.addon(org, id).await? {
                subscriptions::scheduled::run(&store, org, a.subscription_id, now).await?;
            }
            addons::lifecycle::run(&store, org, id, now).await
        })
    })
}
