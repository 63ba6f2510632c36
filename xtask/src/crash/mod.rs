//! `cargo xtask crash [--kills N] [--seed S]`: proves that idempotent
//! writes execute exactly once across process crashes. A release
//! `switchboard serve` takes concurrent `POST /customers`, `POST /orders`
//! and `POST /payment-sessions` (each paying a new order from a saved
//! card, off-session), each under its own `X-Idempotency-Key` (also
//! written into the resource's metadata, which is not unique, so a double
//! execution shows as two resources), and is killed with SIGKILL at random
//! moments and restarted, N times. Then every key is retried with the same
//! bytes, all customers, orders and sessions are listed, and the run fails
//! unless no acknowledged write was lost, no key executed twice, every
//! replay matched its first answer, and every session was charged exactly
//! once and SUCCEEDED (`payments`). On SQLite, and on PostgreSQL when
//! `SWITCHBOARD_TEST_POSTGRES` is set.
//!
//! `--instances N --minutes M`: several instances on one PostgreSQL, with
//! more kinds of load and faults (`multi`).

mod fleet;
mod ledger;
mod multi;
mod payments;
mod proxy;
mod receiver;
mod sandbox;

use crate::api;
use crate::benchtool::{self, Database};
use crate::http::{Conn, Request};
use crate::release::{Binaries, Profile};
use crate::rng::Rng;
use crate::server::{Launch, Switchboard, free_port};
use anyhow::{Context, Result, bail};
use ledger::{Kind, Ledger};
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};
use tokio::runtime::Runtime;

const USAGE: &str =
    "usage: cargo xtask crash [--kills N] [--seed S] [--debug | --profile P] | crash --instances N [--minutes M] [--seed S] [--debug | --profile P]";

/// Concurrent writers.
const WORKERS: usize = 16;

/// A kill comes this long (seconds, at random) after the server answers.
const KILL_AFTER: (f64, f64) = (0.2, 2.0);

/// The demo customer's offering every order buys (a license needs no MSISDN).
const OFFERING: &str = "PBX user";

struct Options {
    kills: u32,
    seed: u64,
    /// `--instances N`: the multi-instance run (`multi`), for `minutes`
    instances: Option<usize>,
    minutes: f64,
    /// `--debug`: the debug build (CI's one build); the verdict holds the
    /// same, only the load is lighter
    profile: Profile,
}

impl Options {
    fn parse(args: &[String]) -> Result<Options> {
        let mut o = Options { kills: 20, seed: crate::rng::clock_seed(), instances: None, minutes: 10.0, profile: Profile::Dist };
        let mut it = args.iter();
        while let Some(a) = it.next() {
            let mut value = || it.next().with_context(|| format!("{a} needs a value; {USAGE}"));
            match a.as_str() {
                "--kills" => o.kills = value()?.parse()?,
                "--seed" => o.seed = value()?.parse()?,
                "--instances" => o.instances = Some(value()?.parse()?),
                "--minutes" => {
                    o.minutes = value()?.parse()?;
                    if !(o.minutes.is_finite() && o.minutes > 0.0) {
                        bail!("--minutes must be a positive number; {USAGE}");
                    }
                }
                "--debug" => o.profile = Profile::Debug,
                "--profile" => o.profile = Profile::named(value()?)?,
                other => bail!("crash: unknown argument {other}; {USAGE}"),
            }
        }
        Ok(o)
    }
}

pub fn run(args: &[String]) -> Result<()> {
    let o = Options::parse(args)?;
    let bins = crate::release::ensure(o.profile)?;
    let work = bins.target.join("crash-run");
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work)?;
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    if let Some(instances) = o.instances {
        return multi::run(&o, instances, &bins, &rt, &work);
    }
    let mut failed = vec![];
    for db in benchtool::databases(&bins.bench, &work, "crash")? {
        let started = Instant::now();
        let title = format!("crash test, {}: {} kills (seed {}), {WORKERS} writers", db.label(), o.kills, o.seed);
        eprintln!("== {title}");
        let (verdict, resources) = campaign(&bins, &db, &work, &o, &rt)?;
        print!("{}", ledger::report(&title, &verdict, resources));
        println!("  wall time: {:.0} s", started.elapsed().as_secs_f64());
        if !verdict.clean() {
            failed.push(db.label());
        }
    }
    if !failed.is_empty() {
        bail!("crash: idempotent writes were not exactly once on {}", failed.join(", "));
    }
    Ok(())
}

/// One database: load, kills and restarts, retries, counting.
fn campaign(bins: &Binaries, db: &Database, work: &std::path::Path, o: &Options, rt: &Runtime) -> Result<(ledger::Verdict, (usize, usize, usize))> {
    let mut launch = Launch {
        binary: &bins.switchboard,
        database_url: db.url().to_string(),
        port: free_port()?,
        demo: true,
        rate_limit: 100_000_000,
        args: vec![],
        log: work.join(format!("switchboard-{}.log", db.label())),
    };
    let mut server = Switchboard::start(&launch)?;
    launch.demo = false;
    let key = server.demo_key()?.to_string();
    let addr = server.process.addr();
    let (offering, payer) = rt.block_on(async {
        let mut conn = Conn::open(&addr).await?;
        anyhow::Ok((api::demo_offering(&mut conn, &key, OFFERING).await?, payments::Payer::demo(&mut conn, &key).await?))
    })?;

    let writes = Arc::new(Writes { addr: addr.clone(), key: key.clone(), offering, payer, ledger: Ledger::default(), next: AtomicU64::new(0) });
    let stop = Arc::new(AtomicBool::new(false));
    let workers: Vec<_> = (0..WORKERS).map(|_| rt.spawn(writes.clone().worker(stop.clone()))).collect();
    let mut rng = Rng::new(o.seed);
    for kill in 1..=o.kills {
        rt.block_on(wait_healthy(&addr))?;
        std::thread::sleep(Duration::from_secs_f64(rng.between(KILL_AFTER.0, KILL_AFTER.1)));
        server.process.kill()?;
        let sent = writes.next.load(Ordering::Relaxed);
        eprintln!("   kill {kill} of {}: {sent} keys sent so far", o.kills);
        server = Switchboard::start(&launch)?;
    }
    rt.block_on(wait_healthy(&addr))?;
    stop.store(true, Ordering::Relaxed);
    for w in workers {
        rt.block_on(w)?;
    }
    let judged = rt.block_on(judge_writes(&writes, &addr, &key))?;
    server.process.stop()?;
    Ok(judged)
}

/// Retries every key the writers sent, byte for byte, on `addr`, finds
/// their resources through the API (payment sessions once settled), and
/// judges: the verdict, and how many customers, orders and sessions.
async fn judge_writes(writes: &Writes, addr: &str, key: &str) -> Result<(ledger::Verdict, (usize, usize, usize))> {
    eprintln!("   retrying every key");
    let mut sent = std::mem::take(&mut *writes.ledger.sent.lock().expect("ledger lock"));
    retry_all(addr, &mut sent).await?;
    let mut conn = Conn::open(addr).await?;
    let customers = api::all(&mut conn, key, "/api/v2/customers").await?;
    // an order's metadata is only in its full form, not in the list
    let ids = api::all(&mut conn, key, "/api/v2/orders").await?;
    let paths = ids.iter().filter_map(|o| o["orderId"].as_str().map(|id| format!("/api/v2/orders/{id}"))).collect();
    let orders = api::get_many(addr, key, paths, WORKERS).await?;
    eprintln!("   waiting for the payment sessions to settle");
    let (sessions, payment_problems) = writes.payer.settled(addr, key, WORKERS).await?;
    let mut resources: HashMap<String, usize> = HashMap::new();
    for item in customers.iter().chain(&orders).chain(&sessions) {
        if let Some(k) = item["metadata"]["crashKey"].as_str() {
            *resources.entry(k.to_string()).or_default() += 1;
        }
    }
    let mut verdict = ledger::judge(&sent, &resources);
    verdict.payment_problems = payment_problems;
    Ok((verdict, (customers.len(), orders.len(), sessions.len())))
}

/// The writers' shared state.
struct Writes {
    addr: String,
    key: String,
    offering: String,
    payer: payments::Payer,
    ledger: Ledger,
    next: AtomicU64,
}

impl Writes {
    /// The request of key number `n`: customers, orders and payment
    /// sessions taking turns (a session pays `order`, made for it).
    fn request(&self, n: u64, order: Option<&str>) -> (String, Kind, Request) {
        let key = format!("crash-{n}");
        let (kind, path, body) = if let Some(order) = order {
            (Kind::Payment, "/api/v2/payment-sessions", self.payer.session(order, &key))
        } else if n.is_multiple_of(2) {
            let body = format!(r#"{{"customerType":"CONSUMER","name":"Crash {key}","contact":{{}},"metadata":{{"crashKey":"{key}"}}}}"#);
            (Kind::Customer, "/api/v2/customers", body)
        } else {
            let body = format!(
                r#"{{"customerId":"rid_acme","lineItems":[{{"type":"LICENSE","productOfferingId":"{}"}}],"metadata":{{"crashKey":"{key}"}}}}"#,
                self.offering
            );
            (Kind::Order, "/api/v2/orders", body)
        };
        let request = Request::json("POST", path, body).header("x-api-key", self.key.clone()).header("x-idempotency-key", key.clone());
        (key, kind, request)
    }

    /// Sends new keys until stopped; a broken connection (a kill) leaves
    /// that key unanswered, and the next key goes on a new connection.
    async fn worker(self: Arc<Self>, stop: Arc<AtomicBool>) {
        let mut conn: Option<Conn> = None;
        while !stop.load(Ordering::Relaxed) {
            let c = match &mut conn {
                Some(c) if !c.is_closed() => c,
                _ => match Conn::open(&self.addr).await {
                    Ok(c) => conn.insert(c),
                    Err(_) => {
                        // the server is down: it is being restarted
                        tokio::time::sleep(Duration::from_millis(20)).await;
                        continue;
                    }
                },
            };
            let n = self.next.fetch_add(1, Ordering::Relaxed);
            let order = if n % 3 == 2 {
                match self.payer.order(c, &self.key).await {
                    Some(order) => Some(order),
                    None => {
                        // cut by a kill before its session was asked for
                        conn = None;
                        continue;
                    }
                }
            } else {
                None
            };
            let (key, kind, request) = self.request(n, order.as_deref());
            let bytes = request.encode(&self.addr);
            let index = self.ledger.sent(key, kind, bytes.clone());
            match tokio::time::timeout(Duration::from_secs(30), c.send_bytes(&bytes)).await {
                Ok(Ok(answer)) => self.ledger.answered(index, answer),
                _ => conn = None,
            }
        }
    }
}

/// Polls `GET /health` until it answers 200.
async fn wait_healthy(addr: &str) -> Result<()> {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Ok(mut conn) = Conn::open(addr).await
            && conn.send(&Request::get("/api/v2/health")).await.is_ok_and(|r| r.status == 200)
        {
            return Ok(());
        }
        if Instant::now() > deadline {
            bail!("the server at {addr} did not become healthy");
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Resends every key's request, byte for byte, over `WORKERS` connections.
async fn retry_all(addr: &str, sent: &mut [ledger::Sent]) -> Result<()> {
    let chunk = sent.len().div_ceil(WORKERS).max(1);
    let mut tasks = tokio::task::JoinSet::new();
    for (i, part) in sent.chunks(chunk).enumerate() {
        let requests: Vec<Vec<u8>> = part.iter().map(|s| s.request.clone()).collect();
        let addr = addr.to_string();
        tasks.spawn(async move {
            let mut conn = Conn::open(&addr).await?;
            let mut answers = Vec::with_capacity(requests.len());
            for r in &requests {
                if conn.is_closed() {
                    conn = Conn::open(&addr).await?;
                }
                answers.push(conn.send_bytes(r).await?);
            }
            anyhow::Ok((i, answers))
        });
    }
    while let Some(done) = tasks.join_next().await {
        let (i, answers) = done??;
        for (s, answer) in sent[i * chunk..].iter_mut().zip(answers) {
            s.retry = Some(answer);
        }
    }
    Ok(())
}
