//! `cargo xtask bench webhooks`: does delivery keep up with writes? A
//! release `serve --demo` on a fresh SQLite file gets a webhook endpoint on
//! a local receiver (here, answering 200 at once), then idempotent
//! `POST /customers` in a closed loop: the server's own sustainable write
//! rate, with delivery running beside it. Each write records one
//! `customer.created`; the receiver counts each event once and its lag
//! (received minus `occurredAt`). Printed: events and deliveries per second
//! in the same window, their ratio, lag p50/p99, the backlog (writes
//! acknowledged minus events received) each second, and how long the
//! backlog takes to drain after the load stops.

use crate::http::{Conn, Request};
use crate::load::{self, Options as Load, Workload};
use crate::server::{Launch, Switchboard};
use anyhow::{Context, Result, bail};
use hdrhistogram::Histogram;
use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};
use tokio::io::{AsyncWriteExt, BufReader};

use crate::release::Profile;

const USAGE: &str = "usage: cargo xtask bench webhooks [--quick | --smoke] [--duration S] [--connections N]";

/// The bench's customers are named so; the demo's own events are not counted.
const NAME: &str = "Webhook Bench ";

pub fn run(args: &[String]) -> Result<()> {
    let mut load = Load { connections: 16, warmup: Duration::ZERO, duration: Duration::from_secs(20) };
    if args.iter().any(|a| a == "--quick") {
        load.duration = Duration::from_secs(5);
    }
    // the debug build, for a second: shows the command works, measures little
    let smoke = args.iter().any(|a| a == "--smoke");
    if smoke {
        load.duration = Duration::from_secs(1);
    }
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = || it.next().with_context(|| format!("{a} needs a value; {USAGE}"));
        match a.as_str() {
            "--quick" | "--smoke" => {}
            "--duration" => load.duration = Duration::try_from_secs_f64(value()?.parse()?)?,
            "--connections" => load.connections = value()?.parse()?,
            other => bail!("bench webhooks: unknown argument {other}; {USAGE}"),
        }
    }
    let bins = crate::release::ensure(if smoke { Profile::Debug } else { Profile::Dist })?;
    let work = bins.target.join("bench-webhooks");
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work)?;
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    let received = Arc::new(Received::default());
    let receiver = rt.block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))?;
    let hooks = format!("http://{}/hooks", receiver.local_addr()?);
    rt.spawn(receive(receiver, received.clone()));

    let mut launch = Launch::demo_sqlite(&bins.switchboard, &work, 100_000_000)?;
    launch.args = vec!["--webhooks-allow-private".into(), "--webhooks-allow-http".into()];
    let server = Switchboard::start(&launch)?;
    let key = server.demo_key()?.to_string();
    let addr = server.process.addr();
    rt.block_on(async {
        let mut conn = Conn::open(&addr).await?;
        let body = serde_json::json!({"url": hooks, "events": ["customer.created"]}).to_string();
        conn.send(&Request::json("POST", "/api/v2/webhook-endpoints", body).header("x-api-key", key.clone())).await?.success("POST /webhook-endpoints")?;
        anyhow::Ok(())
    })?;

    let acked = Arc::new(AtomicU64::new(0));
    let started = Instant::now();
    let samples = rt.spawn(sample(acked.clone(), received.clone(), started));
    eprintln!("== {} connections writing for {} s, delivery running beside them", load.connections, load.duration.as_secs_f64());
    let writes = Arc::new(Writes { key, acked: acked.clone() });
    let figures = rt.block_on(load::run(&addr, &load, writes))?;
    let events = acked.load(Ordering::SeqCst);
    let delivered_in_window = received.count();
    let stopped = Instant::now();
    while received.count() < events && stopped.elapsed() < Duration::from_secs(120) {
        std::thread::sleep(Duration::from_millis(20));
    }
    let drained = stopped.elapsed();
    samples.abort();
    let window = load.duration.as_secs_f64();
    let lag = received.lags.lock().expect("lags");
    let backlog = received.backlog.lock().expect("backlog");
    println!("\nwebhook delivery under write load: cargo xtask bench webhooks {}", args.join(" "));
    println!(
        "{:?} build, SQLite, {} connections of idempotent POST /customers, {window:.0} s; receiver on 127.0.0.1 answers 200",
        bins.profile, load.connections
    );
    println!(
        "  writes (events)     {:>8.0} /s   (p50 {:.1} ms, p99 {:.1} ms; {} errors)",
        events as f64 / window,
        ms(figures.p50),
        ms(figures.p99),
        figures.errors
    );
    println!("  delivered           {:>8.0} /s   in the same window", delivered_in_window as f64 / window);
    println!("  delivered / events  {:>8.3}      in the window", delivered_in_window as f64 / events.max(1) as f64);
    println!(
        "  lag                 p50 {:.0} ms, p99 {:.0} ms   (received - occurredAt)",
        lag.value_at_quantile(0.5) as f64 / 1000.0,
        lag.value_at_quantile(0.99) as f64 / 1000.0
    );
    println!("  after the load      {} of {} events delivered, backlog drained in {:.1} s", received.count(), events, drained.as_secs_f64());
    println!("  backlog each second (writes acknowledged - events received): {}", backlog.iter().map(u64::to_string).collect::<Vec<_>>().join(" "));
    drop(server);
    if received.count() < events {
        bail!("bench webhooks: {} events were never delivered", events - received.count());
    }
    Ok(())
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// Idempotent `POST /customers`, each acknowledged write counted.
struct Writes {
    key: String,
    acked: Arc<AtomicU64>,
}

impl Workload for Writes {
    async fn iteration(&self, conn: &mut Conn, connection: usize, seq: u64) -> Result<()> {
        let body = format!(r#"{{"customerType":"BUSINESS","name":"{NAME}{connection}-{seq}","contact":{{}}}}"#);
        let request = Request::json("POST", "/api/v2/customers", body)
            .header("x-api-key", self.key.clone())
            .header("x-idempotency-key", format!("webhook-bench-{connection}-{seq}"));
        conn.send(&request).await?.success("POST /customers")?;
        self.acked.fetch_add(1, Ordering::SeqCst);
        Ok(())
    }
}

/// What the receiver has seen.
struct Received {
    ids: Mutex<HashSet<String>>,
    /// microseconds from occurredAt to receipt, first receipt of each event
    lags: Mutex<Histogram<u64>>,
    /// the backlog, sampled each second
    backlog: Mutex<Vec<u64>>,
}

impl Default for Received {
    fn default() -> Self {
        Received { ids: Mutex::default(), lags: Mutex::new(Histogram::new_with_bounds(1, 600_000_000, 3).expect("valid bounds")), backlog: Mutex::default() }
    }
}

impl Received {
    fn count(&self) -> u64 {
        self.ids.lock().expect("ids").len() as u64
    }

    fn record(&self, body: &[u8]) {
        let Ok(event) = serde_json::from_slice::<serde_json::Value>(body) else { return };
        if !event["data"]["name"].as_str().is_some_and(|n| n.starts_with(NAME)) {
            return;
        }
        let Some(id) = event["eventId"].as_str() else { return };
        if !self.ids.lock().expect("ids").insert(id.to_string()) {
            return;
        }
        let occurred = event["occurredAt"].as_str().and_then(|t| chrono::DateTime::parse_from_rfc3339(t).ok());
        if let Some(at) = occurred {
            let lag = SystemTime::from(at).elapsed().unwrap_or_default();
            self.lags.lock().expect("lags").saturating_record(u64::try_from(lag.as_micros()).unwrap_or(u64::MAX).max(1));
        }
    }
}

async fn sample(acked: Arc<AtomicU64>, received: Arc<Received>, started: Instant) {
    let mut tick = tokio::time::interval_at(tokio::time::Instant::from_std(started) + Duration::from_secs(1), Duration::from_secs(1));
    loop {
        tick.tick().await;
        let backlog = acked.load(Ordering::SeqCst).saturating_sub(received.count());
        received.backlog.lock().expect("backlog").push(backlog);
    }
}

/// The receiver: HTTP/1.1 with keep-alive, 200 to every request.
async fn receive(listener: tokio::net::TcpListener, received: Arc<Received>) {
    while let Ok((socket, _)) = listener.accept().await {
        let received = received.clone();
        tokio::spawn(async move {
            let _ = connection(socket, &received).await;
        });
    }
}

async fn connection(socket: tokio::net::TcpStream, received: &Received) -> Result<()> {
    let mut reader = BufReader::new(socket);
    while let Some(request) = crate::http::read_incoming(&mut reader).await? {
        received.record(&request.body);
        reader.get_mut().write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok").await?;
    }
    Ok(())
}
