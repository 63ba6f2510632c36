//! What `cargo xtask bench` measures: Switchboard over each fresh database
//! (its schema, demo organisation and key made by `serve --demo`, then the
//! customers bulk-inserted by `switchboard-bench seed`), and the baseline
//! server over the SQLite one. The ids to read and the deep page's cursor
//! are found by walking the list through the API, as a client would.

use super::scenarios::Target;
use crate::benchtool::{self, Database};
use crate::api;
use crate::http::Conn;
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
        demo: true,
        rate_limit: RATE_LIMIT,
        args: vec![],
        log: work.join(format!("switchboard-{}.log", db.label())),
    };
    let key = {
        let mut demo = Switchboard::start(&launch)?;
        let key = demo.demo_key()?.to_string();
        demo.process.stop()?;
        key
    };
    benchtool::seed(&bins.bench, db.url(), customers)?;
    launch.demo = false;
    let server = Switchboard::start(&launch)?;
    let addr = server.process.addr();
    let found = rt.block_on(explore(&addr, &key, customers))?;
    let target = Target {
        label: format!("Switchboard/{}", db.label()),
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

/// The baseline server over the SQLite database `of` serves.
pub fn baseline(bins: &Binaries, sqlite: &Database, of: &Target, work: &Path) -> Result<(Process, Arc<Target>)> {
    let process = benchtool::baseline(&bins.bench, sqlite.url(), free_port()?, &work.join("baseline.log"))?;
    let target = Target {
        label: "baseline".into(),
        addr: process.addr(),
        pid: process.pid(),
        key: of.key.clone(),
        ids: of.ids.clone(),
        deep_cursor: None,
        deep_rows: 0,
        offering: String::new(),
        msisdns: AtomicU64::new(0),
    };
    Ok((process, Arc::new(target)))
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
    let mut conn = Conn::open(addr).await?;
    let deep_rows = (customers as usize).saturating_sub(100);
    let (mut ids, mut cursor, mut walked) = (vec![], None::<String>, 0);
    while walked < deep_rows {
        let (items, next) = api::page(&mut conn, key, "/api/v2/customers", (deep_rows - walked).min(1000), cursor.as_deref()).await?;
        for c in &items {
            if c["name"].as_str().is_some_and(|n| n.starts_with(SEEDED_NAME)) {
                ids.push(c["customerId"].as_str().context("a customer without customerId")?.to_string());
            }
        }
        walked += items.len();
        if next.is_none() {
            bail!("the customer list ended after {walked} rows; expected more than {deep_rows}");
        }
        cursor = next;
    }
    if ids.is_empty() {
        // too few customers to walk: read the first page's
        let (items, _) = api::page(&mut conn, key, "/api/v2/customers", 1000, None).await?;
        ids = items.iter().filter_map(|c| c["customerId"].as_str().map(str::to_string)).collect();
    }
    let offering = api::demo_offering(&mut conn, key, OFFERING).await?;
    Ok(Found { ids, deep_cursor: cursor, deep_rows, offering })
}
