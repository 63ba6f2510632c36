//! Calls of `switchboard-bench` (bench/), the helper binary that holds all
//! the SQL the xtask needs: bulk seeding, fresh PostgreSQL databases, and
//! the baseline server.

use crate::server::Process;
use anyhow::{Context, Result, bail};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn run(binary: &Path, args: &[&str]) -> Result<()> {
    let status = Command::new(binary).args(args).status().with_context(|| format!("starting {}", binary.display()))?;
    if !status.success() {
        bail!("switchboard-bench {} exited with {status}", args.first().unwrap_or(&""));
    }
    Ok(())
}

/// Inserts `count` customers for the database's only organisation.
pub fn seed(binary: &Path, url: &str, count: u32) -> Result<()> {
    run(binary, &["seed", "--db", url, "--count", &count.to_string()])
}

/// Inserts `count` copies of an ACTIVATED subscription of `org` (by
/// default the database's only organisation).
pub fn seed_subscriptions(binary: &Path, url: &str, org: Option<&str>, count: u64) -> Result<()> {
    let count = count.to_string();
    let mut args = vec!["seed-subscriptions", "--db", url, "--count", &count];
    if let Some(org) = org {
        args.extend(["--org", org]);
    }
    run(binary, &args)
}

/// The baseline server over a SQLite database, on `port`.
pub fn baseline(binary: &Path, url: &str, port: u16, log: &Path) -> Result<Process> {
    let mut cmd = Command::new(binary);
    cmd.args(["serve", "--db", url, "--listen", &format!("127.0.0.1:{port}")]).stdout(Stdio::null()).stderr(Stdio::from(std::fs::File::create(log)?));
    let mut process = Process::spawn(&mut cmd, port)?;
    process.wait_listening("switchboard-bench serve")?;
    Ok(process)
}

/// A fresh PostgreSQL database on the server of an admin URL; dropped on drop.
pub struct PgDatabase {
    binary: PathBuf,
    admin_url: String,
    name: String,
    pub url: String,
}

impl PgDatabase {
    /// `switchboard_<label>_<pid>` beside the admin URL's database.
    pub fn create(binary: &Path, admin_url: &str, label: &str) -> Result<PgDatabase> {
        let name = format!("switchboard_{label}_{}", std::process::id());
        let (base, query) = admin_url.split_once('?').map_or((admin_url, None), |(b, q)| (b, Some(q)));
        let (server, _) = base.rsplit_once('/').filter(|(s, _)| s.contains("://") && !s.ends_with('/')).context("PostgreSQL URL without a database")?;
        let url = match query {
            Some(q) => format!("{server}/{name}?{q}"),
            None => format!("{server}/{name}"),
        };
        run(binary, &["dropdb", admin_url, &name])?;
        run(binary, &["createdb", admin_url, &name])?;
        Ok(PgDatabase { binary: binary.to_path_buf(), admin_url: admin_url.to_string(), name, url })
    }
}

impl Drop for PgDatabase {
    fn drop(&mut self) {
        if let Err(e) = run(&self.binary, &["dropdb", &self.admin_url, &self.name]) {
            eprintln!("warning: database {} was not dropped: {e:#}", self.name);
        }
    }
}

/// A fresh database of a run.
pub enum Database {
    Sqlite(String),
    Postgres(PgDatabase),
}

impl Database {
    pub fn url(&self) -> &str {
        match self {
            Database::Sqlite(url) => url,
            Database::Postgres(db) => &db.url,
        }
    }

    pub fn label(&self) -> &'static str {
        match self {
            Database::Sqlite(_) => "SQLite",
            Database::Postgres(_) => "PostgreSQL",
        }
    }
}

/// A fresh SQLite file in `work`, and a fresh PostgreSQL database when
/// `SWITCHBOARD_TEST_POSTGRES` names a server.
pub fn databases(binary: &Path, work: &Path, label: &str) -> Result<Vec<Database>> {
    let file = work.join(format!("{label}.db"));
    let mut all = vec![Database::Sqlite(format!("sqlite://{}?mode=rwc", file.display()))];
    if let Ok(admin) = std::env::var("SWITCHBOARD_TEST_POSTGRES") {
        all.push(Database::Postgres(PgDatabase::create(binary, &admin, label)?));
    }
    Ok(all)
}
