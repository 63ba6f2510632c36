//! `cargo xtask bench report [--rows N] [--smoke]`: one run of the
//! subscriptions report over the demo organisation with N subscriptions
//! seeded (a million by default), on SQLite and (with
//! `SWITCHBOARD_TEST_POSTGRES`) PostgreSQL: how long it takes from
//! `POST /reports` to SUCCEEDED, and the server's peak resident memory
//! while it runs and while its file is downloaded. A report streams in
//! keyset pages, so the peak must not grow with N: over 100 MiB fails the
//! bench (the release build; `--smoke` runs the debug build on a few
//! thousand rows to show the bench still works).

use crate::benchtool::{self, Database};
use crate::http::{Conn, Request};
use crate::release::{Binaries, Profile};
use crate::server::{Launch, Switchboard, free_port};
use anyhow::{Context, Result, bail};
use std::path::Path;
use std::time::{Duration, Instant};

const USAGE: &str = "usage: cargo xtask bench report [--rows N] [--smoke | --profile P]";

/// The most a report run may take of resident memory, as the issue set it.
const MAX_RSS_MIB: f64 = 100.0;

/// How often the run is read while it is written.
const LOOK_EVERY: Duration = Duration::from_millis(100);

/// The longest a run may take before the bench gives up on it.
const GIVE_UP: Duration = Duration::from_secs(30 * 60);

struct Measured {
    db: &'static str,
    rows: u64,
    seconds: f64,
    run_rss_mib: f64,
    download_rss_mib: f64,
    file_mib: f64,
}

pub fn run(args: &[String]) -> Result<()> {
    let (mut rows, mut profile) = (1_000_000u64, Profile::Dist);
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--rows" => rows = it.next().context(USAGE)?.parse().context(USAGE)?,
            "--smoke" => {
                rows = 3_000;
                profile = Profile::Debug;
            }
            "--profile" => profile = Profile::named(it.next().context(USAGE)?)?,
            other => bail!("bench report: unknown argument {other}; {USAGE}"),
        }
    }
    let bins = crate::release::ensure(profile)?;
    let work = bins.target.join("bench-report");
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work)?;
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    let mut measured = vec![];
    for db in benchtool::databases(&bins.bench, &work, "report")? {
        eprintln!("== {}: demo organisation, {rows} subscriptions seeded, one subscriptions report", db.label());
        measured.push(one(&bins, &db, &work, rows, &rt)?);
    }
    println!("\ncargo xtask bench report {}", args.join(" "));
    println!("{profile:?} build; the subscriptions report of the demo organisation with {rows} subscriptions seeded (CSV)");
    println!("| database | rows | run (s) | rows/s | peak RSS, run | peak RSS, download | file |");
    println!("|---|---|---|---|---|---|---|");
    for m in &measured {
        println!(
            "| {} | {} | {:.1} | {:.0} | {:.1} MiB | {:.1} MiB | {:.1} MiB |",
            m.db,
            m.rows,
            m.seconds,
            m.rows as f64 / m.seconds,
            m.run_rss_mib,
            m.download_rss_mib,
            m.file_mib
        );
    }
    println!("Peak RSS is the server process's (VmHWM, reset before the run and before the download).");
    if profile != Profile::Debug
        && let Some(m) = measured.iter().find(|m| m.run_rss_mib.max(m.download_rss_mib) > MAX_RSS_MIB)
    {
        bail!("bench report: the server's peak RSS on {} passed {MAX_RSS_MIB} MiB", m.db);
    }
    Ok(())
}

fn one(bins: &Binaries, db: &Database, work: &Path, rows: u64, rt: &tokio::runtime::Runtime) -> Result<Measured> {
    let mut launch = Launch {
        binary: &bins.switchboard,
        database_url: db.url().to_string(),
        port: free_port()?,
        demo: false,
        rate_limit: 1_000_000,
        args: vec![],
        log: work.join(format!("switchboard-{}.log", db.label())),
    };
    let key = launch.demo_once()?;
    benchtool::seed_subscriptions(&bins.bench, db.url(), None, rows)?;
    let server = Switchboard::start(&launch)?;
    let (addr, pid) = (server.process.addr(), server.process.pid());
    rt.block_on(async {
        let mut conn = Conn::open(&addr).await?;
        let run_path = |id: &str| format!("/api/v2/reports/{id}");
        // the demo's own run first, so the measured one has the worker alone
        let existing = conn.send(&Request::get("/api/v2/reports?reportKey=subscriptions").header("x-api-key", key.clone())).await?;
        for run in existing.success("GET /reports")?.json()?["items"].as_array().into_iter().flatten() {
            finished(&mut conn, &key, &run_path(run["reportRunId"].as_str().unwrap_or_default())).await?;
        }
        reset_peak(pid)?;
        let started = Instant::now();
        let ask = Request::json("POST", "/api/v2/reports", r#"{"reportKey": "subscriptions"}"#).header("x-api-key", key.clone());
        let created = conn.send(&ask).await?.success("POST /reports")?.json()?;
        let id = created["reportRunId"].as_str().context("a run without reportRunId")?.to_string();
        let run = finished(&mut conn, &key, &run_path(&id)).await?;
        let seconds = started.elapsed().as_secs_f64();
        let run_rss_mib = peak_mib(pid)?;
        if run["status"] != "SUCCEEDED" {
            bail!("the run ended {}: {run:#}", run["status"]);
        }
        let counted = run["rowCount"].as_u64().context("a run without rowCount")?;
        if counted < rows {
            bail!("the run holds {counted} rows; {rows} were seeded");
        }
        // the file, through its download URL, in the same constant memory
        reset_peak(pid)?;
        let url = run["downloadUrl"].as_str().context("a run without downloadUrl")?;
        let path = url.split_once("/report-files/").map(|(_, p)| format!("/report-files/{p}")).context("a download URL")?;
        let file = conn.send(&Request::get(path)).await?.success("the download")?;
        let download_rss_mib = peak_mib(pid)?;
        let lines = file.body.iter().filter(|b| **b == b'\n').count() as u64;
        if lines != counted + 1 {
            bail!("the file has {lines} lines; the run says {counted} rows and a header");
        }
        Ok(Measured { db: db.label(), rows: counted, seconds, run_rss_mib, download_rss_mib, file_mib: file.body.len() as f64 / 1048576.0 })
    })
}

/// The run at `path` once it has SUCCEEDED or FAILED.
async fn finished(conn: &mut Conn, key: &str, path: &str) -> Result<serde_json::Value> {
    let started = Instant::now();
    loop {
        let run = conn.send(&Request::get(path).header("x-api-key", key.to_string())).await?.success(path)?.json()?;
        if run["status"] == "SUCCEEDED" || run["status"] == "FAILED" {
            return Ok(run);
        }
        if started.elapsed() > GIVE_UP {
            bail!("the run at {path} did not finish in {} s: {run:#}", GIVE_UP.as_secs());
        }
        tokio::time::sleep(LOOK_EVERY).await;
    }
}

fn reset_peak(pid: u32) -> Result<()> {
    std::fs::write(format!("/proc/{pid}/clear_refs"), "5").with_context(|| format!("resetting the peak RSS of {pid}"))
}

fn peak_mib(pid: u32) -> Result<f64> {
    Ok(super::peak_rss_kib(pid)? as f64 / 1024.0)
}
