//! The load generator: a number of connections in a closed loop (each sends
//! its next request when its last is answered) through a warm-up that is
//! discarded, then a measured time; the latency of each iteration goes into
//! an HDR histogram. An iteration is whatever a workload does for one
//! (connection, sequence number): one request, or a few that belong together.

use crate::http::Conn;
use anyhow::{Context, Result};
use hdrhistogram::Histogram;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;

/// An iteration that takes longer than this has failed.
const TIMEOUT: Duration = Duration::from_secs(30);

/// Errors printed in full per run; the rest are only counted.
const ERRORS_SHOWN: u64 = 3;

#[derive(Debug, Clone)]
pub struct Options {
    pub connections: usize,
    pub warmup: Duration,
    pub duration: Duration,
}

/// What one run measured.
#[derive(Debug, Clone, Copy)]
pub struct Figures {
    /// iterations finished in the measured time, per second
    pub rps: f64,
    pub p50: Duration,
    pub p99: Duration,
    /// iterations that failed (a non-2xx answer, a broken connection, a
    /// timeout), warm-up included
    pub errors: u64,
}

pub trait Workload: Send + Sync + 'static {
    /// One iteration of `connection`, the `seq`th on it; an error says
    /// what was sent and what came back.
    fn iteration(&self, conn: &mut Conn, connection: usize, seq: u64) -> impl Future<Output = Result<()>> + Send;
}

/// Runs `workload` against `addr`; a connection that cannot be opened
/// fails the run, anything else is counted as an error.
pub async fn run<W: Workload>(addr: &str, o: &Options, workload: Arc<W>) -> Result<Figures> {
    let measured_from = Instant::now() + o.warmup;
    let end = measured_from + o.duration;
    let mut clients = tokio::task::JoinSet::new();
    for connection in 0..o.connections {
        let (workload, addr) = (workload.clone(), addr.to_string());
        clients.spawn(async move { client(&addr, connection, &*workload, measured_from, end).await });
    }
    let mut latencies = histogram();
    let mut errors = 0;
    while let Some(done) = clients.join_next().await {
        let (h, e) = done??;
        latencies.add(h)?;
        errors += e;
    }
    let quantile = |q| Duration::from_micros(latencies.value_at_quantile(q));
    Ok(Figures { rps: latencies.len() as f64 / o.duration.as_secs_f64(), p50: quantile(0.5), p99: quantile(0.99), errors })
}

/// Microseconds, from 1 µs to a minute, to three significant digits.
fn histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 60_000_000, 3).expect("valid histogram bounds")
}

/// One connection's loop: the latencies of iterations that started after
/// the warm-up and finished within the measured time, and its error count.
async fn client<W: Workload>(addr: &str, connection: usize, workload: &W, measured_from: Instant, end: Instant) -> Result<(Histogram<u64>, u64)> {
    let mut latencies = histogram();
    let mut errors = 0;
    let mut conn: Option<Conn> = None;
    let mut seq = 0;
    while Instant::now() < end {
        let c = match &mut conn {
            Some(c) if !c.is_closed() => c,
            _ => conn.insert(Conn::open(addr).await.with_context(|| format!("load connection {connection}"))?),
        };
        let started = Instant::now();
        let outcome = tokio::time::timeout(TIMEOUT, workload.iteration(c, connection, seq)).await;
        let finished = Instant::now();
        seq += 1;
        match outcome {
            Ok(Ok(())) => {
                if started >= measured_from && finished <= end {
                    let micros = u64::try_from((finished - started).as_micros()).unwrap_or(u64::MAX);
                    latencies.saturating_record(micros.max(1));
                }
            }
            Ok(Err(e)) => {
                errors += 1;
                if errors <= ERRORS_SHOWN {
                    eprintln!("   ERROR (connection {connection}, request {seq}): {e:#}");
                }
                // whatever state the connection is in, start clean
                conn = None;
            }
            Err(_) => {
                errors += 1;
                eprintln!("   ERROR (connection {connection}, request {seq}): no answer within {TIMEOUT:?}");
                conn = None;
            }
        }
    }
    Ok((latencies, errors))
}
