//! What a subscription, an add-on or a license has due falls due (a delayed
//! activation completes, a cancellation takes effect, a scheduled offering
//! change, a renewal; an add-on's cancellation at period end, offering
//! change or expiry; a license's scheduled cancellation) and tells so, even
//! when nobody reads it; and what an invoice or a porting has due next.
//! Scheduled for the next due time with every write that changes it; when
//! it runs the work may have been done by a read, or withdrawn, and then
//! nothing happens.

use super::{Worker, per_subject};
use crate::domain::{licenses, subscription_addons, subscriptions};
use crate::store::JobKind;
use std::sync::Arc;

/// invoice.due (subject: an invoice's id); dunning's moves reach the
/// network through it, and invoices are delivered by it (their mail links
/// to the hosted pages at `public_url`)
pub fn invoices(network: Arc<dyn crate::network::Network>, public_url: &str) -> Worker {
    let public_url: Arc<str> = public_url.into();
    per_subject(JobKind::InvoiceDue, (network, public_url), |store, (network, url), org, id, now| {
        Box::pin(async move { crate::domain::invoices::due::run(&store, network.as_ref(), &url, org, id, now).await })
    })
}

/// porting.step (subject: a porting's id): it asks the losing carrier
/// (whatever carrier, behind `carrier::Checked`) and the network
pub fn portings(network: Arc<dyn crate::network::Network>, carrier: Arc<dyn crate::carrier::Carrier>) -> Worker {
    let carrier: Arc<dyn crate::carrier::Carrier> = Arc::new(crate::carrier::Checked(carrier));
    per_subject(JobKind::PortingStep, (network, carrier), |store, (network, carrier), org, id, now| {
        Box::pin(async move { crate::domain::porting::step::run(&store, carrier.as_ref(), network.as_ref(), org, id, now).await })
    })
}

/// subscription.scheduled (subject: a subscription's id)
pub fn subscriptions() -> Worker {
    per_subject(JobKind::SubscriptionScheduled, (), |store, (), org, id, now| {
        Box::pin(async move { subscriptions::scheduled::run(&store, org, id, now).await })
    })
}

/// license.scheduled (subject: a license's id)
pub fn licenses() -> Worker {
    per_subject(JobKind::LicenseScheduled, (), |store, (), org, id, now| Box::pin(async move { licenses::scheduled::run(&store, org, id, now).await }))
}

/// addon.scheduled (subject: an add-on's id)
pub fn addons() -> Worker {
    per_subject(JobKind::AddonScheduled, (), |store, (), org, id, now| {
        Box::pin(async move {
            // what its subscription had due comes first (it may end the add-on)
            if let Some(a) = store.addon(org, id).await? {
                subscriptions::scheduled::run(&store, org, a.subscription_id, now).await?;
            }
            subscription_addons::lifecycle::run(&store, org, id, now).await
        })
    })
}
