//! `cargo xtask bench login`: does `POST /auth/email/start` take as long
//! for an address without a user as for one with a user? Both are timed in
//! the same run, interleaved (taking turns at going first) over one kept-alive connection to the dist
//! build (as packaged) of `serve --demo`, with `GET /health` as the baseline; the figures
//! are ratios, since one absolute time on a shared machine means little.

use crate::contract::{cargo, target_dir};
use crate::http::{Conn, Request};
use crate::server::{Launch, Switchboard};
use anyhow::Result;
use std::time::Instant;

/// Requests per kind, after as many again to warm up.
const ROUNDS: usize = 400;

pub fn run() -> Result<()> {
    let root = crate::spec::root();
    let target = target_dir(&root)?;
    cargo(&root, &["build", "--quiet", "--profile", "dist", "--bin", "switchboard"])?;
    let work = target.join("bench-login");
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work)?;
    // every request comes from one address, many for one email address
    let binary = target.join("dist/switchboard");
    let server = Switchboard::start(&Launch::demo_sqlite(&binary, &work, 1_000_000)?)?;
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let (mut known, mut unknown, mut health) = runtime.block_on(measure(&server.process.addr()))?;
    let (k50, u50, h50) = (percentile(&mut known, 50), percentile(&mut unknown, 50), percentile(&mut health, 50));
    let (k90, u90) = (percentile(&mut known, 90), percentile(&mut unknown, 90));
    println!("login start timing, {ROUNDS} requests each, interleaved, dist build, SQLite");
    println!("  median: known / unknown address = {:.3}  (p90: {:.3})", k50 / u50, k90 / u90);
    println!("  median: start / GET /health      = {:.2}  (baseline in the same run)", u50 / h50);
    println!("  absolute medians (this machine, this run): known {k50:.0} µs, unknown {u50:.0} µs, health {h50:.0} µs");
    Ok(())
}

/// Times of (known address, unknown address, health), in µs.
async fn measure(addr: &str) -> Result<(Vec<f64>, Vec<f64>, Vec<f64>)> {
    let mut conn = Conn::open(addr).await?;
    let (mut known, mut unknown, mut health) = (vec![], vec![], vec![]);
    for i in 0..ROUNDS * 2 {
        // the demo's user, and a fresh address no user has, taking turns
        // at going first
        let unknown_email = format!("nobody-{i}@example.com");
        let (k, u) = if i % 2 == 0 {
            let k = start(&mut conn, "anna@acme.example").await?;
            (k, start(&mut conn, &unknown_email).await?)
        } else {
            let u = start(&mut conn, &unknown_email).await?;
            (start(&mut conn, "anna@acme.example").await?, u)
        };
        let h = timed(&mut conn, Request::get("/api/v2/health")).await?;
        if i >= ROUNDS {
            known.push(k);
            unknown.push(u);
            health.push(h);
        }
    }
    Ok((known, unknown, health))
}

async fn start(conn: &mut Conn, email: &str) -> Result<f64> {
    timed(conn, Request::json("POST", "/api/v2/auth/email/start", format!(r#"{{"email":"{email}"}}"#))).await
}

/// A request's time in µs, from writing it to having read its answer.
async fn timed(conn: &mut Conn, request: Request) -> Result<f64> {
    let bytes = request.encode(conn.host());
    let started = Instant::now();
    conn.send_bytes(&bytes).await?.success(&format!("{} {}", request.method, request.path))?;
    Ok(started.elapsed().as_secs_f64() * 1e6)
}

fn percentile(v: &mut [f64], p: usize) -> f64 {
    v.sort_by(f64::total_cmp);
    v[(v.len() - 1) * p / 100]
}
