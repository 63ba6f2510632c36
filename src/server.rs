//! Starting and stopping the HTTP server over a store.

use crate::api::{Context, Handlers, RevisionPolicy, generated::switchboard_api_mod};
use crate::clock::Clock;
use crate::keys::KeyCache;
use crate::limits::RateLimits;
use crate::store::Store;
use dropshot::{ConfigDropshot, HandlerTaskMode, ServerBuilder, VersionPolicy};
use std::net::SocketAddr;
use std::sync::Arc;

/// Largest request body accepted (bytes).
pub const MAX_BODY_BYTES: usize = 1024 * 1024;

pub struct Running {
    pub server: dropshot::HttpServer<Context>,
    pub store: Store,
    pub clock: Arc<Clock>,
}

impl Running {
    pub fn local_addr(&self) -> SocketAddr {
        self.server.local_addr()
    }

    /// Stops accepting, lets requests in flight finish, closes the pool.
    pub async fn close(self) -> anyhow::Result<()> {
        self.server.close().await.map_err(|e| anyhow::anyhow!(e))?;
        self.store.close().await;
        Ok(())
    }
}

/// Starts serving `store` on `listen`, with the default rate limits.
pub fn start(store: Store, clock: Arc<Clock>, listen: SocketAddr) -> anyhow::Result<Running> {
    let limits = RateLimits::per_second(crate::limits::DEFAULT_PER_SECOND, clock.clone());
    start_with(store, clock, listen, limits)
}

pub fn start_with(store: Store, clock: Arc<Clock>, listen: SocketAddr, limits: RateLimits) -> anyhow::Result<Running> {
    let api = switchboard_api_mod::api_description::<Handlers>().map_err(|e| anyhow::anyhow!("{e}"))?;
    let keys = Arc::new(KeyCache::new(store.clone(), clock.clone()));
    let context = Context { store: store.clone(), clock: clock.clone(), keys: keys.clone(), limits };
    let config = ConfigDropshot {
        bind_address: listen,
        default_request_body_max_bytes: MAX_BODY_BYTES,
        // a handler runs to completion even if its client goes away, so a
        // write is never cut between its checks and its commit
        default_handler_task_mode: HandlerTaskMode::Detached,
        ..Default::default()
    };
    // dropshot's own logger costs time per request even when filtered out;
    // we log through `tracing` instead.
    let log = slog::Logger::root(slog::Discard, slog::o!());
    let server = ServerBuilder::new(api, context, log)
        .config(config)
        .version_policy(VersionPolicy::Dynamic(Box::new(RevisionPolicy { keys, clock: clock.clone() })))
        .start()
        .map_err(|e| anyhow::anyhow!("cannot listen on {listen}: {e}"))?;
    Ok(Running { server, store, clock })
}
