//! Orders nobody reads still expire: every minute, every open order past
//! its `expiresAt` is expired (and `order.expired` recorded once).

use crate::clock::Clock;
use crate::domain::orders;
use crate::store::Store;
use std::sync::Arc;

/// How often unsubmitted orders past their expiry are looked for: an order
/// is EXPIRED at once for whoever reads it; this bounds how late its
/// `order.expired` event is recorded when nobody does.
pub const EVERY: std::time::Duration = std::time::Duration::from_secs(60);

pub async fn run(store: Store, clock: Arc<Clock>) {
    let mut tick = tokio::time::interval(EVERY);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        match orders::expire_due(&store, clock.now()).await {
            Ok(0) => {}
            Ok(n) => tracing::info!(expired = n, "orders expired"),
            Err(e) => tracing::warn!(error = %e, "order expiry sweep failed"),
        }
    }
}
