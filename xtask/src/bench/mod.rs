//! `cargo xtask bench`: Switchboard's throughput, latency and memory under
//! load, on SQLite and (with `SWITCHBOARD_TEST_POSTGRES`) PostgreSQL, side
//! by side with a baseline (a minimal hand-written axum + sqlx server over
//! the same SQLite file, `bench/`) measured in the same run, in interleaved
//! rounds; the figures that matter are the ratios to the baseline, since
//! one absolute figure on a shared machine means little.
//! `cargo xtask bench login` is the timing check of login start;
//! `cargo xtask bench webhooks` measures delivery under write load;
//! `cargo xtask bench report` a report run over a million subscriptions.

mod login;
mod report;
mod report_runs;
mod scenarios;
mod setup;
mod webhooks;

use crate::benchtool;
use crate::load::{self, Options as Load};
use crate::release::Profile;
use anyhow::{Context, Result, bail};
use report::{Measured, Row};
use scenarios::{Run, Scenario};
use std::sync::Arc;
use std::time::{Duration, Instant};

const USAGE: &str = "usage: cargo xtask bench [--quick | --smoke] [--rounds N] [--duration S] [--warmup S] \
[--connections N] [--customers N] [--only TEXT]... [--profile dist|release] | bench login | bench webhooks [--quick | --smoke] [--duration S] [--connections N] | bench report [--rows N] [--smoke | --profile P]";

pub fn run(args: &[String]) -> Result<()> {
    match args.first().map(String::as_str) {
        Some("login") => login::run(),
        Some("webhooks") => webhooks::run(&args[1..]),
        Some("report") => report_runs::run(&args[1..]),
        _ => suite(&Options::parse(args)?),
    }
}

struct Options {
    rounds: usize,
    customers: u32,
    load: Load,
    /// run only the scenarios whose label holds one of these (and the
    /// baseline's, which the ratios need); all when empty
    only: Vec<String>,
    /// `--smoke`: the debug build, a second per scenario, few customers;
    /// shows that the bench still works, not how fast anything is
    profile: Profile,
}

impl Options {
    fn parse(args: &[String]) -> Result<Options> {
        let mut o = Options {
            rounds: 3,
            customers: 100_000,
            only: vec![],
            profile: Profile::Dist,
            // 3 rounds of 16 scenarios at 1 + 4 s: about 4 minutes, so the whole
            // command stays under 6 on this 2-core machine
            load: Load { connections: 32, warmup: Duration::from_secs(1), duration: Duration::from_secs(4) },
        };
        // --quick first, so that flags after it can still change its settings
        if args.iter().any(|a| a == "--quick") {
            o.rounds = 1;
            o.load.duration = Duration::from_secs(2);
        }
        if args.iter().any(|a| a == "--smoke") {
            o.rounds = 1;
            o.customers = 1_000;
            o.profile = Profile::Debug;
            o.load.connections = 8;
            o.load.warmup = Duration::from_millis(500);
            o.load.duration = Duration::from_secs(2);
        }
        let mut it = args.iter();
        while let Some(a) = it.next() {
            let mut value = || it.next().with_context(|| format!("{a} needs a value; {USAGE}"));
            let seconds = |v: &String| -> Result<Duration> { Ok(Duration::try_from_secs_f64(v.parse()?)?) };
            match a.as_str() {
                "--quick" | "--smoke" => {}
                "--rounds" => o.rounds = value()?.parse()?,
                "--duration" => o.load.duration = seconds(value()?)?,
                "--warmup" => o.load.warmup = seconds(value()?)?,
                "--connections" => o.load.connections = value()?.parse()?,
                "--customers" => o.customers = value()?.parse()?,
                "--only" => o.only.push(value()?.clone()),
                "--profile" => o.profile = Profile::named(value()?)?,
                other => bail!("bench: unknown argument {other}; {USAGE}"),
            }
        }
        if o.rounds == 0 || o.load.connections == 0 || o.load.duration.is_zero() {
            bail!("bench: rounds, connections and duration must be above zero");
        }
        Ok(o)
    }

    fn describe(&self) -> String {
        format!(
            "{:?} build, {} round(s) (median shown), {} connections, {} warm-up + {} measured per scenario, {} customers seeded",
            self.profile,
            self.rounds,
            self.load.connections,
            report::secs(self.load.warmup),
            report::secs(self.load.duration),
            self.customers
        )
    }
}

fn suite(o: &Options) -> Result<()> {
    let bins = crate::release::ensure(o.profile)?;
    let started = Instant::now();
    let work = bins.target.join("bench-run");
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work)?;
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;

    let databases = benchtool::databases(&bins.bench, &work, "bench")?;
    let mut deployments = vec![];
    for db in &databases {
        eprintln!("== {}: demo organisation, {} customers seeded, walking the list", db.label(), o.customers);
        deployments.push(setup::switchboard(&bins, db, &work, o.customers, &rt)?);
    }
    let mut baselines = vec![];
    let mut pairs = vec![];
    for (db, d) in databases.iter().zip(&deployments) {
        let (process, baseline) = setup::baseline(&bins, db, &d.target, &work, &rt)?;
        baselines.push(process);
        pairs.push((baseline, d.target.clone()));
    }
    let scenarios: Vec<_> = scenarios::all(&pairs)
        .into_iter()
        .filter(|s| s.kind.is_baseline() || o.only.is_empty() || o.only.iter().any(|t| s.label().contains(t.as_str())))
        .collect();

    let mut rows: Vec<Row> = scenarios.iter().map(|s| Row { label: s.label(), db: s.target.db.clone(), kind: s.kind, rounds: vec![] }).collect();
    for round in 0..o.rounds {
        eprintln!("== round {} of {}", round + 1, o.rounds);
        for (s, row) in scenarios.iter().zip(&mut rows) {
            let measured = measure(&rt, s, round, &o.load)?;
            eprintln!("   {}", report::progress(&row.label, &measured));
            row.rounds.push(measured);
        }
    }
    let command = format!("cargo xtask {}", std::env::args().skip(1).collect::<Vec<_>>().join(" "));
    println!("\n{}", report::header(&command, &o.describe()));
    println!("{}", report::table(&rows));
    println!("Ratios are Switchboard / baseline in this run, over the same database: each list page against the");
    println!("baseline's same page, other reads against its GET, writes against its POST (req/s: higher is better;");
    println!("p99: lower is better). Peak RSS is the server process's (VmHWM), not the database's.");
    println!("wall time: {:.0} s (after the build)", started.elapsed().as_secs_f64());
    drop(baselines);
    drop(deployments);
    drop(databases);
    let errors: u64 = rows.iter().flat_map(|r| &r.rounds).map(|m| m.figures.errors).sum();
    if errors > 0 {
        bail!("bench: {errors} requests failed under load (see the ERROR lines above)");
    }
    let idle: Vec<&str> = rows.iter().filter(|r| r.rounds.iter().all(|m| m.figures.rps == 0.0)).map(|r| r.label.as_str()).collect();
    if !idle.is_empty() {
        bail!("bench: no request finished in the measured time of {}", idle.join(", "));
    }
    Ok(())
}

/// One scenario once: its server's peak memory is reset before and read after.
fn measure(rt: &tokio::runtime::Runtime, s: &Scenario, round: usize, o: &Load) -> Result<Measured> {
    let pid = s.target.pid;
    std::fs::write(format!("/proc/{pid}/clear_refs"), "5").with_context(|| format!("resetting the peak RSS of {pid}"))?;
    let run = Arc::new(Run { kind: s.kind, target: s.target.clone(), tag: format!("r{round}-{:?}", s.kind), seed: crate::rng::clock_seed() });
    let figures = rt.block_on(load::run(&s.target.addr, o, run))?;
    Ok(Measured { figures, peak_rss_kib: peak_rss_kib(pid)? })
}

/// VmHWM: the peak resident set since the last reset.
fn peak_rss_kib(pid: u32) -> Result<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .with_context(|| format!("no VmHWM for process {pid}"))
}
