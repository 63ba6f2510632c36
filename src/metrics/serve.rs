//! `GET /metrics` on the address `--metrics-listen` names, apart from the
//! API's (an operator scrapes it from inside; the API's clients never
//! see it). Each scrape reads the jobs table and the pool, then renders.

use crate::clock::Clock;
use crate::store::Store;
use dropshot::{ApiDescription, Body, ConfigDropshot, HttpError, RequestContext, ServerBuilder};
use http::Response;
use std::net::SocketAddr;
use std::sync::Arc;

/// What a scrape reads.
pub struct Scraped {
    store: Store,
    clock: Arc<Clock>,
}

/// OpenMetrics text, which Prometheus reads.
const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

#[dropshot::endpoint { method = GET, path = "/metrics" }]
async fn metrics(rqctx: RequestContext<Scraped>) -> Result<Response<Body>, HttpError> {
    let ctx = rqctx.context();
    let now = ctx.clock.now();
    let jobs = ctx.store.jobs_now(now).await.map_err(|e| HttpError::for_internal_error(format!("reading the jobs: {e}")))?;
    let jobs: Vec<super::JobsNow> = jobs
        .into_iter()
        .map(|(kind, due, held, oldest)| super::JobsNow {
            kind: kind.as_str(),
            due,
            held,
            oldest_due_seconds: oldest.map_or(0.0, |t| (now - t).num_milliseconds().max(0) as f64 / 1000.0),
        })
        .collect();
    let text = super::render(&jobs, ctx.store.pool());
    Response::builder()
        .header(http::header::CONTENT_TYPE, CONTENT_TYPE)
        .header(http::header::CACHE_CONTROL, "no-store")
        .body(Body::from(text))
        .map_err(|e| HttpError::for_internal_error(e.to_string()))
}

/// Serves the metrics on `listen` until closed.
pub fn start(store: Store, clock: Arc<Clock>, listen: SocketAddr) -> anyhow::Result<dropshot::HttpServer<Scraped>> {
    let mut api = ApiDescription::new();
    api.register(metrics).map_err(|e| anyhow::anyhow!("{e}"))?;
    let log = slog::Logger::root(slog::Discard, slog::o!());
    ServerBuilder::new(api, Scraped { store, clock }, log)
        .config(ConfigDropshot { bind_address: listen, ..Default::default() })
        .start()
        .map_err(|e| anyhow::anyhow!("cannot listen on {listen} (--metrics-listen): {e}"))
}
