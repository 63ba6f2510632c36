//! `switchboard admin backup` and `admin restore`: a SQLite database's
//! consistent copy, taken while the server runs (`VACUUM INTO`: one read
//! transaction, so the copy is the database as of one commit), and its
//! restoring in place of a stopped server's database. A PostgreSQL
//! database is backed up with PostgreSQL's own tools; the commands say
//! which.

use anyhow::{Context as _, Result, bail};
use serde_json::{Value, json};
use sqlx::Row;
use std::path::{Path, PathBuf};

/// What to do instead on PostgreSQL.
const POSTGRES: &str = "a PostgreSQL database is backed up with PostgreSQL's tools: \
`pg_dump --format=custom --file FILE DATABASE_URL` (online, consistent); restore into an empty database with \
`pg_restore --dbname DATABASE_URL FILE`, then start switchboard on it (it migrates the schema up to date)";

/// The file a `sqlite:` URL names (its query left off).
fn sqlite_file(url: &str) -> Result<PathBuf> {
    let Some(rest) = url.strip_prefix("sqlite://").or_else(|| url.strip_prefix("sqlite:")) else { bail!("{POSTGRES}") };
    let path = rest.split('?').next().unwrap_or_default();
    if path.is_empty() || path == ":memory:" {
        bail!("the database URL names no file");
    }
    Ok(PathBuf::from(path))
}

/// Copies the database at `url` to `to`, which must not exist yet.
pub async fn backup(url: &str, to: &Path) -> Result<Value> {
    sqlite_file(url)?;
    if to.exists() {
        bail!("{} exists already: a backup is written to a new file", to.display());
    }
    let to_text = to.to_str().context("the backup's path is not UTF-8")?;
    let store = crate::store::Store::connect(url).await?;
    store.backup_into(to_text).await?;
    store.close().await;
    let bytes = std::fs::metadata(to)?.len();
    Ok(json!({ "backup": to.display().to_string(), "bytes": bytes }))
}

/// Whether `file` is a Switchboard database this binary can run: whole,
/// with a schema no newer than its own migrations.
async fn check(file: &Path) -> Result<()> {
    sqlx::any::install_default_drivers();
    let url = format!("sqlite://{}?mode=ro", file.display());
    let mut conn = <sqlx::AnyConnection as sqlx::Connection>::connect(&url).await.with_context(|| format!("{} is not a SQLite database", file.display()))?;
    let whole: String =
        sqlx::query("PRAGMA integrity_check").fetch_one(&mut conn).await.with_context(|| format!("{} is not a SQLite database", file.display()))?.try_get(0)?;
    if whole != "ok" {
        bail!("{} is damaged: {whole}", file.display());
    }
    let newest: Option<i64> = sqlx::query("SELECT MAX(version) AS v FROM _sqlx_migrations")
        .fetch_one(&mut conn)
        .await
        .with_context(|| format!("{} is not a Switchboard database", file.display()))?
        .try_get("v")?;
    let ours = crate::store::newest_migration();
    match newest {
        None => bail!("{} is not a Switchboard database (no migration applied)", file.display()),
        Some(v) if v > ours => bail!("{} comes from a newer Switchboard (schema {v}; this one knows up to {ours})", file.display()),
        Some(_) => Ok(()),
    }
}

/// Puts the backup `from` in place of the database at `url` (the server
/// must be stopped): checked first; an existing database is replaced only
/// with `force`. The schema is then brought up to date.
pub async fn restore(url: &str, from: &Path, force: bool) -> Result<Value> {
    let target = sqlite_file(url)?;
    check(from).await?;
    if target.exists() && !force {
        bail!("{} exists: stop the server, and restore over it with --force", target.display());
    }
    // the old database's write-ahead log must not be applied to the copy
    for suffix in ["-wal", "-shm"] {
        let side = PathBuf::from(format!("{}{suffix}", target.display()));
        if side.exists() {
            std::fs::remove_file(&side).with_context(|| format!("removing {}", side.display()))?;
        }
    }
    // copied beside it, then renamed: the database is whole at every moment
    let part = PathBuf::from(format!("{}.restoring", target.display()));
    std::fs::copy(from, &part).with_context(|| format!("copying {}", from.display()))?;
    std::fs::File::open(&part)?.sync_all()?;
    std::fs::rename(&part, &target).with_context(|| format!("replacing {}", target.display()))?;
    let store = crate::store::Store::connect(url).await?;
    let organisations = store.organisation_count().await?;
    store.close().await;
    Ok(json!({ "restored": target.display().to_string(), "from": from.display().to_string(), "organisations": organisations }))
}
