//! The baseline server: what a plain hand-written axum + sqlx service does
//! for the bench's work over Switchboard's own database and schema (SQLite
//! or PostgreSQL), so Switchboard's figures can be read as "how far from the
//! least this work costs on this machine". Keys are checked in memory, a
//! read is one query, a write one transaction. The operations are in
//! `customers.rs` and `orders.rs`, what they share in `app.rs`.

use crate::app::App;
use crate::{customers, orders};
use anyhow::{Context, Result};
use axum::Router;
use axum::routing::{get, post};
use sqlx::Row;
use sqlx::any::AnyPoolOptions;
use std::net::SocketAddr;
use std::sync::Arc;

/// Connections in the pool: what a hand-written service on a small
/// machine would pick, not tuned to win.
const POOL_SIZE: u32 = 8;

pub async fn run(url: &str, listen: SocketAddr) -> Result<()> {
    sqlx::any::install_default_drivers();
    let mut options = AnyPoolOptions::new().max_connections(POOL_SIZE);
    if url.starts_with("sqlite:") {
        // the file is in WAL mode already (Switchboard made it); these are
        // per connection, as a careful SQLite service sets them
        options = options.after_connect(|conn, _| {
            Box::pin(async move {
                for pragma in ["PRAGMA foreign_keys = ON", "PRAGMA synchronous = NORMAL", "PRAGMA busy_timeout = 5000"] {
                    sqlx::query(pragma).execute(&mut *conn).await?;
                }
                Ok(())
            })
        });
    }
    let pool = options.connect(url).await.with_context(|| format!("database {}", url.split('@').next_back().unwrap_or(url)))?;
    let keys = sqlx::query("SELECT key_hash, org_id FROM api_keys WHERE revoked_at IS NULL")
        .fetch_all(&pool)
        .await?
        .iter()
        .map(|r| Ok((r.try_get("key_hash")?, r.try_get("org_id")?)))
        .collect::<Result<_, sqlx::Error>>()?;
    let app = Arc::new(App { pool, keys });
    let router = Router::new()
        .route("/customers", get(customers::list).post(customers::create))
        .route("/customers/{id}", get(customers::view))
        .route("/orders", post(orders::create))
        .route("/orders/{id}/submit", post(orders::submit))
        .with_state(app);
    let listener = tokio::net::TcpListener::bind(listen).await?;
    println!("baseline listening on {}", listener.local_addr()?);
    axum::serve(listener, router).await?;
    Ok(())
}
