//! What `cargo xtask bench` measures: Switchboard over each fresh database
//! (its schema, demo organisation and key made by `serve --demo`, then the
//! customers bulk-inserted by `switchboard-bench seed`), and the baseline
//! server over each of them. The ids to read and the deep page's cursor
//! are found by walking each server's list, as a client would.

use super::scenarios::Target;
use crate::api;
use crate::benchtool::{self, Database};
use crate::http::{Conn, Request};
use crate::release::Binaries;
use crate::server::{Launch, Process, Switchboard, free_port};
use anyhow::{Context, Result, bail};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use tokio::runtime::Runtime;

/// Requests per second per key: far above what this machine can send, so
/// the limiter counts but never refuses.
const RATE_LIMIT: u64 = 100_000_000;

/// The demo customer's catalog offering the order scenario buys.
const OFFERING: &str = "Mobile 10 GB";

/// Seeded customers are named so, and only they are read and updated.
const SEEDED_NAME: &str = "Bench Customer ";

/// Switchboard serving one seeded database.
pub struct Deployment {
    /// held so the server runs as long as the deployment lives
    _server: Switchboard,
    pub target: Arc<Target>,
}

pub fn switchboard(bins: &Binaries, db: &Database, work: &Path, customers: u32, rt: &Runtime) -> Result<Deployment> {
    let mut launch = Launch {
        binary: &bins.switchboard,
        database_url: db.url().to_string(),
        port: free_port()?,
        demo: false,
        rate_limit: RATE_LIMIT,
        args: vec![],
        log: work.join(format!("switchboard-{}.log", db.label())),
    };
    let key = launch.demo_once()?;
    benchtool::seed(&bins.bench, db.url(), customers)?;
    let server = Switchboard::start(&launch)?;
    let addr = server.process.addr();
    let found = rt.block_on(explore(&addr, &key, customers))?;
    let target = Target {
        label: format!("Switchboard/{}", db.label()),
        db: db.label().to_string(),
        pid: server.process.pid(),
        addr,
        key,
        ids: Arc::new(found.ids),
        deep_cursor: found.deep_cursor,
        deep_rows: found.deep_rows,
        offering: found.offering,
        msisdns: AtomicU64::new(0),
    };
    Ok(Deployment { _server: server, target: Arc::new(target) })
}

/// The baseline server over the database `of` serves; its list must serve
/// what Switchboard's does (the first page's size within 10%).
pub fn baseline(bins: &Binaries, db: &Database, of: &Target, work: &Path, rt: &Runtime) -> Result<(Process, Arc<Target>)> {
    let log = work.join(format!("baseline-{}.log", db.label()));
    let process = benchtool::baseline(&bins.bench, db.url(), free_port()?, &log)?;
    let addr = process.addr();
    let deep_cursor = rt.block_on(async {
        let (ours, theirs) = (first_page(&of.addr, &of.key, "/api/v2/customers").await?, first_page(&addr, &of.key, "/customers").await?);
        if (theirs as f64 - ours as f64).abs() > ours as f64 * 0.1 {
            bail!("the baseline's first list page is {theirs} bytes, Switchboard's {ours}: not the same work");
        }
        walk(&addr, &of.key, "/customers", of.deep_rows, |_| Ok(())).await
    })?;
    let target = Target {
        label: format!("baseline/{}", db.label()),
        db: db.label().to_string(),
        addr,
        pid: process.pid(),
        key: of.key.clone(),
        ids: of.ids.clone(),
        deep_cursor,
        deep_rows: of.deep_rows,
        offering: of.offering.clone(),
        // its subscriptions share the database with Switchboard's: numbers
        // from another range
        msisdns: AtomicU64::new(5_000_000),
    };
    Ok((process, Arc::new(target)))
}

/// The size of a list's first page of 100.
async fn first_page(addr: &str, key: &str, path: &str) -> Result<usize> {
    let mut conn = Conn::open(addr).await?;
    let page = conn.send(&Request::get(format!("{path}?limit=100")).header("x-api-key", key)).await?;
    Ok(page.success(&format!("GET {path}"))?.body.len())
}

/// Walks the list at `path` a thousand rows a page up to `rows`, showing
/// each item to `keep`; the cursor of the page after them.
async fn walk(addr: &str, key: &str, path: &str, rows: usize, mut keep: impl FnMut(&serde_json::Value) -> Result<()>) -> Result<Option<String>> {
    let mut conn = Conn::open(addr).await?;
    let (mut cursor, mut walked) = (None::<String>, 0);
    while walked < rows {
        let (items, next) = api::page(&mut conn, key, path, (rows - walked).min(1000), cursor.as_deref()).await?;
        items.iter().try_for_each(&mut keep)?;
        walked += items.len();
        if next.is_none() {
            bail!("{path} ended after {walked} rows; expected more than {rows}");
        }
        cursor = next;
    }
    Ok(cursor)
}

struct Found {
    ids: Vec<String>,
    deep_cursor: Option<String>,
    deep_rows: usize,
    offering: String,
}

/// Walks the customer list up to the deep page (the last 100 seeded rows),
/// keeping the seeded customers' ids and the cursor there; finds the offering.
async fn explore(addr: &str, key: &str, customers: u32) -> Result<Found> {
    let deep_rows = (customers as usize).saturating_sub(100);
    let mut ids = vec![];
    let cursor = walk(addr, key, "/api/v2/customers", deep_rows, |c| {
        if c["name"].as_str().is_some_and(|n| n.starts_with(SEEDED_NAME)) {
            ids.push(c["customerId"].as_str().context("a customer without customerId")?.to_string());
        }
        Ok(())
    })
    .await?;
    let mut conn = Conn::open(addr).await?;
    if ids.is_empty() {
        // too few customers to walk: read the first page's
        let (items, _) = api::page(&mut conn, key, "/api/v2/customers", 1000, None).await?;
        ids = items.iter().filter_map(|c| c["customerId"].as_str().map(str::to_string)).collect();
    }
    let offering = api::demo_offering(&mut conn, key, OFFERING).await?;
    Ok(Found { ids, deep_cursor: cursor, deep_rows, offering })
}
