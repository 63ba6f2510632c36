//! The webhook dispatcher: turns each event of the outbox into a delivery
//! per enabled endpoint of its organisation that wants its type, off the
//! request path. A request that records an event only wakes it (after its
//! commit); the dispatcher then takes the events not yet dispatched, oldest
//! first, in batches, each batch's deliveries, jobs and "dispatched" mark in
//! one transaction, and wakes the sender. Other instances' events are
//! found by polling each second.

use super::Drain;
use std::sync::Arc;
use tokio::sync::Notify;

/// Events dispatched per transaction.
const BATCH: i64 = 256;

pub fn drain(sender: Arc<Notify>) -> Drain {
    Drain {
        name: "webhook.dispatch",
        poll: std::time::Duration::from_secs(1),
        run: Arc::new(move |store, clock, stop| {
            let sender = sender.clone();
            Box::pin(async move {
                let mut events = 0;
                // queued deliveries (a redelivery, a replay) wake this task
                // too: the sender hears of them from here
                sender.notify_one();
                while !*stop.borrow() && store.undispatched_events().await? {
                    let (dispatched, deliveries) = store.dispatch_events(clock.now(), BATCH).await?;
                    if deliveries > 0 {
                        sender.notify_one();
                    }
                    if dispatched == 0 {
                        // another instance holds them
                        break;
                    }
                    events += dispatched;
                }
                Ok(events)
            })
        }),
    }
}
