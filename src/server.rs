//! Starting and stopping the HTTP server over a store.

use crate::api::{Context, Handlers, RevisionPolicy, routes::switchboard_api_mod};
use crate::clock::Clock;
use crate::config::Settings;
use crate::keys::KeyCache;
use crate::limits::RateLimits;
use crate::store::Store;
use crate::tokens::Tokens;
use dropshot::{ConfigDropshot, HandlerTaskMode, ServerBuilder, VersionPolicy};
use std::net::SocketAddr;
use std::sync::Arc;

pub struct Running {
    pub server: dropshot::HttpServer<Context>,
    pub store: Store,
    pub clock: Arc<Clock>,
    pub jobs: crate::jobs::Jobs,
    /// the API keys' cache (the tests count its lookups)
    pub keys: Arc<KeyCache>,
    /// the sandbox network (tests and the demo report usage on its feed)
    pub network: Arc<crate::network::Sandbox>,
    /// `GET /metrics`, when `--metrics-listen` asks for it
    pub metrics: Option<dropshot::HttpServer<crate::metrics::serve::Scraped>>,
    /// how long `close` goes on serving, not ready, before it stops accepting
    drain: std::time::Duration,
}

impl Running {
    pub fn local_addr(&self) -> SocketAddr {
        self.server.local_addr()
    }

    /// Says it is not ready (`/ready` 503) and goes on serving for
    /// `--shutdown-delay-seconds`, so that a load balancer takes it out;
    /// then stops accepting and lets requests in flight finish while its
    /// jobs finish their items and release what this instance claimed
    /// (`Jobs::stop`); then closes the pool.
    pub async fn close(self) -> anyhow::Result<()> {
        self.jobs.mark_stopping();
        tokio::time::sleep(self.drain).await;
        let (closed, ()) = tokio::join!(self.server.close(), self.jobs.stop());
        let metrics = match self.metrics {
            Some(metrics) => metrics.close().await,
            None => Ok(()),
        };
        self.store.close().await;
        closed.and(metrics).map_err(|e| anyhow::anyhow!(e))
    }

    /// Stops as a crash would, for tests: jobs cut off mid-item, their
    /// claims left to run out; the listeners and the pool closed.
    pub async fn crash(self) {
        self.jobs.abort();
        let _ = self.server.close().await;
        if let Some(metrics) = self.metrics {
            let _ = metrics.close().await;
        }
        self.store.close().await;
    }
}

/// Seals the secrets at rest that are not yet under the current master
/// key (the first start with a key, or after a rotation); says so once
/// when there is no key.
async fn seal_secrets(store: &Store) -> anyhow::Result<()> {
    let done = store.reseal_secrets().await.map_err(|e| anyhow::anyhow!("sealing the secrets at rest: {e}"))?;
    match store.sealing().current_id() {
        None => tracing::warn!("secrets at rest are stored in plain: set SWITCHBOARD_MASTER_KEY (docs/operating.md, Secrets at rest)"),
        Some(key) if done.resealed > 0 => tracing::info!(resealed = done.resealed, key, "secrets at rest sealed under the current master key"),
        Some(_) => {}
    }
    Ok(())
}

/// Starts serving `store` on `listen` as `settings` say.
pub async fn start(store: Store, clock: Arc<Clock>, listen: SocketAddr, settings: Settings) -> anyhow::Result<Running> {
    // dropshot's own answers (no route, ...) as the Error object
    dropshot::render_own_errors_with(crate::api::error::render_dropshot_error);
    // a request's id is its trace's (src/telemetry/ids.rs)
    dropshot::make_request_ids_with(crate::telemetry::new_request_id);
    // bound first: nothing else has started if its address is taken
    let metrics = match settings.metrics_listen {
        Some(at) => Some(crate::metrics::serve::start(store.clone(), clock.clone(), at)?),
        None => None,
    };
    let mut api = switchboard_api_mod::api_description::<Handlers>().map_err(|e| anyhow::anyhow!("{e}"))?;
    crate::hosted::register(&mut api).map_err(|e| anyhow::anyhow!("{e}"))?;
    seal_secrets(&store).await?;
    // once per database: port-in secrets kept in plain before they were write-only
    store.seal_plain_port_in_details(clock.now()).await.map_err(|e| anyhow::anyhow!("sealing port-in secrets stored in plain: {e}"))?;
    let keys = Arc::new(KeyCache::new(store.clone(), clock.clone()));
    let limits = Arc::new(RateLimits::new(&settings, clock.clone()));
    let trusted_proxies = settings.trusted_proxies.clone();
    let tokens = Arc::new(Tokens::load(&store, clock.now(), settings.token_secret.as_deref(), settings.access_token_seconds).await?);
    let mail_wake = Arc::new(tokio::sync::Notify::new());
    let advance_wake = Arc::new(tokio::sync::Notify::new());
    let delay = chrono::Duration::seconds(settings.network_activation_delay_seconds.try_into().unwrap_or(i64::MAX));
    let network = Arc::new(crate::network::Sandbox::new(delay));
    // the sandbox keeps its ledger in transactions of its own, over the
    // root store (never a request's scoped one)
    let providers = crate::payment_providers::Providers::sandbox(&store);
    let payments_wake = Arc::new(tokio::sync::Notify::new());
    let reports_wake = Arc::new(tokio::sync::Notify::new());
    let wakes = crate::jobs::Wakes { mail: mail_wake.clone(), advance: advance_wake.clone(), payments: payments_wake.clone(), reports: reports_wake.clone() };
    let job_settings = settings.clone();
    let files = settings.files.open()?;
    let jobs_state = Arc::new(crate::jobs::State::default());
    let config = ConfigDropshot {
        bind_address: listen,
        default_request_body_max_bytes: settings.max_body_bytes,
        // a handler runs to completion even if its client goes away, so a
        // write is never cut between its checks and its commit
        default_handler_task_mode: HandlerTaskMode::Detached,
        ..Default::default()
    };
    let context = Context {
        store: store.clone(),
        clock: clock.clone(),
        keys: keys.clone(),
        limits: limits.clone(),
        tokens,
        mail_wake,
        advance_wake,
        payments_wake,
        reports_wake,
        network: network.clone(),
        in_flight: Default::default(),
        settings,
        providers: providers.clone(),
        files: files.clone(),
        jobs: jobs_state.clone(),
    };
    // dropshot's own logger costs time per request even when filtered out;
    // we log through `tracing` instead.
    let log = slog::Logger::root(slog::Discard, slog::o!());
    let server = ServerBuilder::new(api, context, log)
        .config(config)
        .version_policy(VersionPolicy::Dynamic(Box::new(RevisionPolicy { keys: keys.clone(), clock: clock.clone(), limits, trusted_proxies })))
        .start()
        .map_err(|e| anyhow::anyhow!("cannot listen on {listen}: {e}"))?;
    // the jobs start once the address is known: the mail they send links
    // to the hosted pages (what waits meanwhile is rows, taken then)
    let public_url = job_settings.public_url.clone().unwrap_or_else(|| format!("http://{}", server.local_addr()));
    let jobs = crate::jobs::start(jobs_state, &store, &clock, &job_settings, wakes, network.clone(), &providers, &public_url, &files).await?;
    let drain = std::time::Duration::from_secs(job_settings.shutdown_delay_seconds.into());
    Ok(Running { server, store, clock, jobs, keys, network, metrics, drain })
}
