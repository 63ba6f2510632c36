//! Usage arrives: reads the network's usage feed and records each record
//! for the subscription whose current SIM and number it names, in the
//! organisation that holds the SIM. How far the feed has been read is kept
//! in the database after each batch (`feed_positions`), so the next start
//! and every other instance go on from there; a record read twice (two
//! instances at once, or a crash before the position was kept) changes
//! nothing the second time (its id is kept with it). A record naming no
//! subscription, or one never activated, is skipped with a warning.

use super::Drain;
use crate::domain::usage::record;
use crate::error::Error;
use crate::network::Network;
use std::sync::Arc;

/// Records read from the feed at once.
const BATCH: usize = 500;

pub fn drain(network: Arc<dyn Network>) -> Drain {
    Drain {
        name: "usage_collect",
        poll: std::time::Duration::from_secs(30),
        run: Arc::new(move |store, clock, stop| {
            let network = network.clone();
            Box::pin(async move {
                let feed = network.usage_feed();
                let mut done = 0;
                while !*stop.borrow() {
                    let after = store.feed_position(&feed).await?;
                    let batch = network.usage(after, BATCH).await.map_err(|e| Error::Internal(format!("the network's usage feed: {}", e.0)))?;
                    if batch.is_empty() {
                        return Ok(done);
                    }
                    let mut read = after;
                    for (at, u) in batch {
                        match store.subscription_on_sim(&u.iccid, &u.msisdn).await? {
                            Some((org, id)) => match record::record(&store, org, id, &u.record, store.organisation_time(org, clock.now()).await?).await {
                                Ok(fresh) => done += usize::from(fresh),
                                Err(e @ Error::Invalid(_)) => tracing::warn!(iccid = %u.iccid, record = %u.record.record_id, error = %e, "usage skipped"),
                                Err(e) => return Err(e),
                            },
                            None => tracing::warn!(iccid = %u.iccid, msisdn = %u.msisdn, "usage names no subscription on its SIM; skipped"),
                        }
                        read = read.max(at);
                    }
                    store.set_feed_position(&feed, read, clock.now()).await?;
                }
                Ok(done)
            })
        }),
    }
}
