//! `cargo xtask bench login`: does `POST /auth/email/start` take as long
//! for an address without a user as for one with a user? Both are timed in
//! the same run, interleaved (taking turns at going first) over one kept-alive connection to a release
//! build of `serve --demo`, with `GET /health` as the baseline; the figures
//! are ratios, since one absolute time on a shared machine means little.

use crate::contract::{Server, cargo, target_dir};
use anyhow::{Context, Result, bail};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::Instant;

/// Requests per kind, after as many again to warm up.
const ROUNDS: usize = 400;

pub fn run(args: &[String]) -> Result<()> {
    match args.first().map(String::as_str) {
        Some("login") => login(),
        _ => bail!("usage: cargo xtask bench login"),
    }
}

fn login() -> Result<()> {
    let root = crate::spec::root();
    let target = target_dir(&root)?;
    cargo(&root, &["build", "--quiet", "--release", "--bin", "switchboard"])?;
    let work = target.join("bench-run");
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work)?;
    let server = Server::start(&target.join("release/switchboard"), &work)?;
    let addr = server.base.trim_start_matches("http://").to_string();
    let mut conn = Connection::open(&addr)?;
    let start = |conn: &mut Connection, email: &str| conn.post("/api/v2/auth/email/start", &format!(r#"{{"email":"{email}"}}"#));
    let (mut known, mut unknown, mut health) = (vec![], vec![], vec![]);
    for i in 0..ROUNDS * 2 {
        // the demo's user, and a fresh address no user has, taking turns
        // at going first
        let unknown_email = format!("nobody-{i}@example.com");
        let (k, u) = if i % 2 == 0 {
            let k = start(&mut conn, "anna@acme.example")?;
            (k, start(&mut conn, &unknown_email)?)
        } else {
            let u = start(&mut conn, &unknown_email)?;
            (start(&mut conn, "anna@acme.example")?, u)
        };
        let h = conn.get("/api/v2/health")?;
        if i >= ROUNDS {
            known.push(k);
            unknown.push(u);
            health.push(h);
        }
    }
    let (k50, u50, h50) = (percentile(&mut known, 50), percentile(&mut unknown, 50), percentile(&mut health, 50));
    let (k90, u90) = (percentile(&mut known, 90), percentile(&mut unknown, 90));
    println!("login start timing, {ROUNDS} requests each, interleaved, release build, SQLite");
    println!("  median: known / unknown address = {:.3}  (p90: {:.3})", k50 / u50, k90 / u90);
    println!("  median: start / GET /health      = {:.2}  (baseline in the same run)", u50 / h50);
    println!("  absolute medians (this machine, this run): known {k50:.0} µs, unknown {u50:.0} µs, health {h50:.0} µs");
    Ok(())
}

fn percentile(v: &mut [f64], p: usize) -> f64 {
    v.sort_by(f64::total_cmp);
    v[(v.len() - 1) * p / 100]
}

/// One HTTP/1.1 connection, kept alive; each call answers its time in µs.
struct Connection {
    reader: BufReader<TcpStream>,
    host: String,
}

impl Connection {
    fn open(addr: &str) -> Result<Connection> {
        let stream = TcpStream::connect(addr).with_context(|| format!("connecting to {addr}"))?;
        stream.set_nodelay(true)?;
        Ok(Connection { reader: BufReader::new(stream), host: addr.to_string() })
    }

    fn get(&mut self, path: &str) -> Result<f64> {
        self.send(&format!("GET {path} HTTP/1.1\r\nHost: {}\r\n\r\n", self.host))
    }

    fn post(&mut self, path: &str, body: &str) -> Result<f64> {
        let head = format!(
            "POST {path} HTTP/1.1\r\nHost: {}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
            self.host,
            body.len()
        );
        self.send(&(head + body))
    }

    /// Sends a request and reads its whole answer.
    fn send(&mut self, request: &str) -> Result<f64> {
        let started = Instant::now();
        self.reader.get_mut().write_all(request.as_bytes())?;
        let mut status = String::new();
        self.reader.read_line(&mut status)?;
        if !(status.contains(" 200 ") || status.contains(" 202 ")) {
            bail!("unexpected answer: {status}");
        }
        let mut length = 0;
        loop {
            let mut line = String::new();
            self.reader.read_line(&mut line)?;
            if line == "\r\n" {
                break;
            }
            if let Some((name, value)) = line.split_once(':') {
                if name.eq_ignore_ascii_case("content-length") {
                    length = value.trim().parse()?;
                }
            }
        }
        let mut body = vec![0; length];
        self.reader.read_exact(&mut body)?;
        Ok(started.elapsed().as_secs_f64() * 1e6)
    }
}
