//! Concurrent reads of one shape served by one query: lookups by key queue
//! up while a query runs, and the next query fetches all of them at once
//! (`WHERE id IN (...)`). Under load each request then costs a fraction
//! of a round trip to the database instead of one; alone, a lookup waits
//! for nothing but its own query. A runner keeps its pooled connection
//! from one batch to the next while the pool has others to spare: sqlx
//! checks a connection with a round trip each time it goes back.

use crate::error::{Error, Result};
use futures::future::BoxFuture;
use sqlx::pool::PoolConnection;
use sqlx::{Any, AnyPool};
use std::collections::HashMap;
use std::hash::Hash;
use std::sync::{Arc, Mutex};
use tokio::sync::oneshot;

/// Queries in flight at once for one shape: SQLite reads in parallel on
/// the pool's connections, and two keep one batching while one runs.
const RUNNERS: usize = 2;
/// Keys one query fetches at most (SQLite allows 32766 parameters).
const MAX_KEYS: usize = 256;

type Waiter<V> = oneshot::Sender<Result<Option<V>>>;

/// Fetches the values of a batch of keys of one group (say, one
/// organisation) on the connection given, and gives it back; keys it does
/// not answer are missing.
pub(super) type Fetch<G, K, V> = Arc<dyn Fn(G, Vec<K>, PoolConnection<Any>) -> BoxFuture<'static, (PoolConnection<Any>, Result<HashMap<K, V>>)> + Send + Sync>;

pub(super) struct Coalesced<G, K, V> {
    pool: AnyPool,
    fetch: Fetch<G, K, V>,
    queue: Mutex<Queue<G, K, V>>,
}

struct Queue<G, K, V> {
    waiting: Vec<(G, K, Waiter<V>)>,
    running: usize,
}

impl<G, K, V> Coalesced<G, K, V>
where
    G: Clone + Eq + Send + 'static,
    K: Clone + Eq + Hash + Send + 'static,
    V: Clone + Send + 'static,
{
    pub(super) fn new(pool: AnyPool, fetch: Fetch<G, K, V>) -> Arc<Self> {
        Arc::new(Coalesced { pool, fetch, queue: Mutex::new(Queue { waiting: vec![], running: 0 }) })
    }

    /// The value of `key` in `group`, fetched together with whatever other
    /// lookups are waiting.
    pub(super) async fn get(self: &Arc<Self>, group: G, key: K) -> Result<Option<V>> {
        let (tell, told) = oneshot::channel();
        let start = {
            let mut q = self.queue.lock().expect("coalesce queue");
            q.waiting.push((group, key, tell));
            let start = q.running < RUNNERS;
            q.running += usize::from(start);
            start
        };
        if start {
            // a task of its own, so no request's answer waits for the
            // batches after its own
            tokio::spawn(self.clone().run());
        }
        told.await.map_err(|_| Error::Internal("a coalesced read was dropped".into()))?
    }

    /// Serves batches until nothing waits.
    async fn run(self: Arc<Self>) {
        // counted out however this ends (a panic included), so lookups
        // never wait for a runner that is gone
        struct Running<'a, G, K, V>(&'a Mutex<Queue<G, K, V>>);
        impl<G, K, V> Drop for Running<'_, G, K, V> {
            fn drop(&mut self) {
                let mut q = self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                q.running -= 1;
            }
        }
        let _running = Running(&self.queue);
        let mut kept: Option<PoolConnection<Any>> = None;
        loop {
            let batch = {
                let mut q = self.queue.lock().expect("coalesce queue");
                if q.waiting.is_empty() {
                    return;
                }
                // the first waiter's group, as many of its keys as fit
                let group = q.waiting[0].0.clone();
                let mut batch = Vec::new();
                let mut rest = Vec::with_capacity(q.waiting.len());
                for item in q.waiting.drain(..) {
                    if item.0 == group && batch.len() < MAX_KEYS {
                        batch.push(item);
                    } else {
                        rest.push(item);
                    }
                }
                q.waiting = rest;
                (group, batch)
            };
            let (group, waiters) = batch;
            let keys: Vec<K> = waiters.iter().map(|(_, k, _)| k.clone()).collect();
            let fetched = match kept.take() {
                Some(conn) => Ok(conn),
                None => self.pool.acquire().await.map_err(Error::from),
            };
            let found = match fetched {
                Ok(conn) => {
                    let (conn, found) = (self.fetch)(group, keys, conn).await;
                    // kept for the next batch unless others may need it (or
                    // the query failed, and the connection may have too)
                    if found.is_ok() && self.pool.num_idle() > 0 {
                        kept = Some(conn);
                    }
                    found
                }
                Err(e) => Err(e),
            };
            match found {
                Ok(found) => {
                    for (_, key, tell) in waiters {
                        let _ = tell.send(Ok(found.get(&key).cloned()));
                    }
                }
                Err(e) => {
                    let message = e.to_string();
                    for (_, _, tell) in waiters {
                        let _ = tell.send(Err(Error::Database(message.clone())));
                    }
                }
            }
        }
    }
}
