//! `switchboard admin clock show|advance`: a sandbox organisation's test
//! clock, as the API shows and advances it. `advance` runs the work that
//! falls due itself (or waits for the server that took it) and prints the
//! clock once it is READY.

use super::explain;
use crate::clock::Clock;
use crate::domain::{Caller, sandbox};
use crate::store::Store;
use crate::wire::latest as wire;
use anyhow::{Result, anyhow, bail};
use chrono::{DateTime, Utc};
use clap::Subcommand;
use serde_json::{Value, json};
use std::sync::Arc;
use uuid::Uuid;

#[derive(Subcommand)]
pub enum ClockCommand {
    /// Print the organisation's clock.
    Show {
        #[arg(long)]
        org: Uuid,
    },
    /// Move the clock forward, run everything that falls due, and print
    /// the clock when it is READY.
    Advance {
        #[arg(long)]
        org: Uuid,
        /// The new time (RFC 3339).
        #[arg(long, conflicts_with = "by", required_unless_present = "by")]
        to: Option<DateTime<Utc>>,
        /// How far to move it: 30d, 12h, 2w, 90m ...
        #[arg(long, value_parser = humantime::parse_duration)]
        by: Option<std::time::Duration>,
        /// Where payers reach the server (the hosted pages that invoices
        /// mailed during the advance link to), as `serve --public-url`.
        #[arg(long = "public-url", env = "SWITCHBOARD_PUBLIC_URL", default_value = "http://127.0.0.1:8080")]
        public_url: String,
        /// Where report files are (the runs that fall due write theirs), as
        /// `serve` has them.
        #[command(flatten)]
        files: crate::config::Files,
    },
}

/// How often `advance` looks whether a server's advance has finished.
const LOOK_EVERY: std::time::Duration = std::time::Duration::from_millis(200);

pub async fn run(store: &Store, clock: &Arc<Clock>, command: ClockCommand) -> Result<Value> {
    match command {
        ClockCommand::Show { org } => Ok(json!(sandbox::show(&caller(store, org, clock).await?, clock.now()).await.map_err(explain)?)),
        ClockCommand::Advance { org, to, by, public_url, files } => {
            let files = files.open()?;
            let caller = caller(store, org, clock).await?;
            let to = match (to, by) {
                (Some(to), _) => to,
                (None, Some(by)) => caller.now + chrono::Duration::from_std(by).map_err(|_| anyhow!("--by is too long"))?,
                (None, None) => bail!("--to or --by is required"),
            };
            sandbox::advance(&caller, clock.now(), wire::AdvanceSandboxClockRequest { to }).await.map_err(explain)?;
            loop {
                crate::jobs::clock_advance::run_now(store, clock, org, &crate::payment_providers::Providers::sandbox(store), &public_url, &files).await?;
                let shown = sandbox::show(&caller, clock.now()).await.map_err(explain)?;
                if shown.status == wire::SandboxClockStatus::Ready {
                    return Ok(json!(shown));
                }
                tokio::time::sleep(LOOK_EVERY).await;
            }
        }
    }
}

/// The operator, acting for `org` as its key alone would.
async fn caller(store: &Store, org: Uuid, clock: &Clock) -> Result<Caller> {
    if !store.organisation_exists(org).await? {
        bail!("no organisation {org}");
    }
    let now = store.organisation_time(org, clock.now()).await?;
    Ok(Caller::system(store, org, now))
}
