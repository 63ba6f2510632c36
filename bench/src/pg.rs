//! Fresh PostgreSQL databases for one benchmark or crash run, so a run
//! never sees another's rows and leaves nothing behind.

use anyhow::{Result, bail};
use sqlx::{AssertSqlSafe, Connection, PgConnection};

/// A database name is spliced into SQL (no placeholders for identifiers),
/// so only plain lowercase names are accepted.
fn checked(name: &str) -> Result<&str> {
    let plain = !name.is_empty() && name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
    if !plain {
        bail!("database name {name:?}: use lowercase letters, digits and _");
    }
    Ok(name)
}

pub async fn create(admin_url: &str, name: &str) -> Result<()> {
    let mut conn = PgConnection::connect(admin_url).await?;
    sqlx::query(AssertSqlSafe(format!("CREATE DATABASE \"{}\"", checked(name)?))).execute(&mut conn).await?;
    conn.close().await?;
    Ok(())
}

pub async fn drop(admin_url: &str, name: &str) -> Result<()> {
    let mut conn = PgConnection::connect(admin_url).await?;
    // FORCE: a killed server may leave sessions that would block the drop
    sqlx::query(AssertSqlSafe(format!("DROP DATABASE IF EXISTS \"{}\" WITH (FORCE)", checked(name)?))).execute(&mut conn).await?;
    conn.close().await?;
    Ok(())
}
