//! The server's Prometheus metrics: what requests, jobs and webhook
//! deliveries count as they go, and what a scrape reads from the database
//! then (jobs due and held, the connection pool). Served on their own
//! address by `serve` (`--metrics-listen`), rendered on each request;
//! docs/operating.md lists every metric.

pub mod serve;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;
use std::sync::OnceLock;
use std::sync::atomic::AtomicU64;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Request {
    operation: &'static str,
    revision: &'static str,
    status: u16,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Operation {
    operation: &'static str,
    revision: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Kind {
    kind: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Outcome {
    outcome: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Connections {
    state: &'static str,
}

/// Every metric, registered once per process (several servers in one
/// process, as in the tests, count together).
struct Metrics {
    registry: Registry,
    requests: Family<Request, Counter>,
    durations: Family<Operation, Histogram, fn() -> Histogram>,
    replays: Family<Operation, Counter>,
    locked: Family<Operation, Counter>,
    rate_limited: Family<Operation, Counter>,
    jobs_due: Family<Kind, Gauge>,
    jobs_held: Family<Kind, Gauge>,
    jobs_lag: Family<Kind, Gauge<f64, AtomicU64>>,
    job_runs: Family<Kind, Counter>,
    job_failures: Family<Kind, Counter>,
    deliveries: Family<Outcome, Counter>,
    delivery_seconds: Histogram,
    connections: Family<Connections, Gauge>,
    connections_max: Gauge,
}

/// Seconds from 1 ms to about 16 s, doubling.
fn latency() -> Histogram {
    Histogram::new(exponential_buckets(0.001, 2.0, 15))
}

fn metrics() -> &'static Metrics {
    static METRICS: OnceLock<Metrics> = OnceLock::new();
    METRICS.get_or_init(|| {
        let mut registry = Registry::with_prefix("switchboard");
        let m = Metrics {
            requests: Family::default(),
            durations: Family::new_with_constructor(latency as fn() -> Histogram),
            replays: Family::default(),
            locked: Family::default(),
            rate_limited: Family::default(),
            jobs_due: Family::default(),
            jobs_held: Family::default(),
            jobs_lag: Family::default(),
            job_runs: Family::default(),
            job_failures: Family::default(),
            deliveries: Family::default(),
            delivery_seconds: latency(),
            connections: Family::default(),
            connections_max: Gauge::default(),
            registry: Registry::default(),
        };
        let r = &mut registry;
        r.register("http_requests", "API requests answered, by operation, revision and status", m.requests.clone());
        r.register("http_request_duration_seconds", "Time to answer an API request, by operation and revision", m.durations.clone());
        r.register("idempotent_replays", "Requests answered from their X-Idempotency-Key's stored answer", m.replays.clone());
        r.register("idempotency_key_locked", "Requests refused 409 because their X-Idempotency-Key's first request was still running", m.locked.clone());
        r.register("rate_limited", "Requests refused 429 by a rate limit", m.rate_limited.clone());
        r.register("jobs_due", "Job items due now and held by no instance (in the database: every instance's)", m.jobs_due.clone());
        r.register("jobs_held", "Job items an instance holds a claim on now (running)", m.jobs_held.clone());
        r.register("jobs_oldest_due_seconds", "How long the oldest due item of a kind has waited (0: none)", m.jobs_lag.clone());
        r.register("job_runs", "Job items this instance ran, by kind", m.job_runs.clone());
        r.register("job_failures", "Job items that failed and were scheduled again, by kind", m.job_failures.clone());
        r.register("webhook_deliveries", "Webhook attempts, by outcome: acknowledged (2xx), retried, or failed for good", m.deliveries.clone());
        r.register("webhook_delivery_duration_seconds", "Time a webhook receiver took to answer an attempt", m.delivery_seconds.clone());
        r.register(
            "db_connections",
            "Database connections of this instance's pool, idle or in use (SQLite: its readers; the writer is apart)",
            m.connections.clone(),
        );
        r.register("db_connections_max", "The most connections this instance's pool opens", m.connections_max.clone());
        Metrics { registry, ..m }
    })
}

/// How a request ended, besides its status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    Plain,
    Replayed,
    KeyLocked,
    RateLimited,
}

/// One answered API request.
pub fn request(operation: &str, revision: &'static str, status: u16, seconds: f64, answer: Answer) {
    let m = metrics();
    let op = Operation { operation: interned(operation), revision };
    m.requests.get_or_create(&Request { operation: op.operation, revision, status }).inc();
    m.durations.get_or_create(&op).observe(seconds);
    match answer {
        Answer::Plain => {}
        Answer::Replayed => {
            m.replays.get_or_create(&op).inc();
        }
        Answer::KeyLocked => {
            m.locked.get_or_create(&op).inc();
        }
        Answer::RateLimited => {
            m.rate_limited.get_or_create(&op).inc();
        }
    }
}

/// A request refused before it reached an operation: counted only when the
/// version policy refused it for unknown keys (429, operation `refused`),
/// so a flood of invented keys shows as the rate limit it met.
pub fn refused(revision: &'static str, status: u16) {
    if status != 429 {
        return;
    }
    let m = metrics();
    let op = Operation { operation: interned("refused"), revision };
    m.requests.get_or_create(&Request { operation: op.operation, revision, status }).inc();
    m.rate_limited.get_or_create(&op).inc();
}

/// The operation's id as a label, allocated once per operation (there are
/// as many as the documents have) rather than twice per request.
fn interned(operation: &str) -> &'static str {
    static NAMES: OnceLock<std::sync::RwLock<std::collections::HashSet<&'static str>>> = OnceLock::new();
    let names = NAMES.get_or_init(Default::default);
    if let Some(name) = names.read().unwrap_or_else(|e| e.into_inner()).get(operation) {
        return name;
    }
    let mut names = names.write().unwrap_or_else(|e| e.into_inner());
    match names.get(operation) {
        Some(name) => name,
        None => {
            let name: &'static str = Box::leak(operation.into());
            names.insert(name);
            name
        }
    }
}

/// One job item run here, and whether it failed (to be tried again).
pub fn job_run(kind: &'static str, failed: bool) {
    let m = metrics();
    m.job_runs.get_or_create(&Kind { kind }).inc();
    if failed {
        m.job_failures.get_or_create(&Kind { kind }).inc();
    }
}

/// One webhook attempt: `acknowledged`, `retried` or `failed`, and how
/// long the receiver took (None: never sent).
pub fn delivery(outcome: &'static str, seconds: Option<f64>) {
    let m = metrics();
    m.deliveries.get_or_create(&Outcome { outcome }).inc();
    if let Some(seconds) = seconds {
        m.delivery_seconds.observe(seconds);
    }
}

/// One kind of job as a scrape reads it from the database.
pub struct JobsNow {
    pub kind: &'static str,
    pub due: i64,
    pub held: i64,
    pub oldest_due_seconds: f64,
}

/// The metrics as text (OpenMetrics), after setting what is read now.
pub fn render(jobs: &[JobsNow], pool: &sqlx::AnyPool) -> String {
    let m = metrics();
    for j in jobs {
        let kind = Kind { kind: j.kind };
        m.jobs_due.get_or_create(&kind).set(j.due);
        m.jobs_held.get_or_create(&kind).set(j.held);
        m.jobs_lag.get_or_create(&kind).set(j.oldest_due_seconds);
    }
    let (size, idle) = (i64::from(pool.size()), i64::try_from(pool.num_idle()).unwrap_or(i64::MAX));
    m.connections.get_or_create(&Connections { state: "idle" }).set(idle);
    m.connections.get_or_create(&Connections { state: "in_use" }).set((size - idle).max(0));
    m.connections_max.set(i64::from(pool.options().get_max_connections()));
    let mut text = String::new();
    prometheus_client::encoding::text::encode(&mut text, &m.registry).expect("writing to a String");
    text
}
