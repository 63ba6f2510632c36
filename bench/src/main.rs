//! `switchboard-bench`: what `cargo xtask bench` and `cargo xtask crash`
//! need beside the product: a baseline server (a minimal hand-written axum +
//! sqlx app over Switchboard's own schema, on SQLite or PostgreSQL), bulk
//! seeders (customers, subscriptions), and fresh PostgreSQL databases. Not part of the product.

mod app;
mod customers;
mod orders;
mod pg;
mod seed;
mod serve;
mod subscriptions;

use clap::{Parser, Subcommand};
use std::net::SocketAddr;

#[derive(Parser)]
#[command(name = "switchboard-bench", about = "Baseline server and database helpers of `cargo xtask bench`")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Serve the bench's customer and order operations over a Switchboard database.
    Serve {
        /// sqlite://FILE or postgres://... of a database `switchboard` has migrated
        #[arg(long)]
        db: String,
        #[arg(long)]
        listen: SocketAddr,
    },
    /// Insert customers for an organisation straight into the tables, in one transaction.
    Seed {
        /// sqlite://FILE or postgres://... of a database `switchboard` has migrated
        #[arg(long)]
        db: String,
        /// The organisation; by default the database's only one.
        #[arg(long)]
        org: Option<String>,
        #[arg(long)]
        count: u32,
    },
    /// Insert copies of one of an organisation's ACTIVATED subscriptions
    /// straight into the table, in one transaction.
    SeedSubscriptions {
        /// sqlite://FILE or postgres://... of a database `switchboard` has migrated
        #[arg(long)]
        db: String,
        /// The organisation; by default the database's only one.
        #[arg(long)]
        org: Option<String>,
        #[arg(long)]
        count: u64,
    },
    /// Create an empty PostgreSQL database.
    Createdb { admin_url: String, name: String },
    /// Drop a PostgreSQL database, closing its connections.
    Dropdb { admin_url: String, name: String },
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    match Cli::parse().command {
        Command::Serve { db, listen } => serve::run(&db, listen).await,
        Command::Seed { db, org, count } => seed::run(&db, org.as_deref(), count).await,
        Command::SeedSubscriptions { db, org, count } => subscriptions::run(&db, org.as_deref(), count).await,
        Command::Createdb { admin_url, name } => pg::create(&admin_url, &name).await,
        Command::Dropdb { admin_url, name } => pg::drop(&admin_url, &name).await,
    }
}
