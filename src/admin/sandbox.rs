//! `switchboard admin sandbox ...`: a sandbox organisation's stand-ins for
//! the world outside: `port-out` plays another operator taking one of its
//! numbers (docs/porting.md).

use crate::clock::Clock;
use crate::domain::porting;
use crate::store::Store;
use anyhow::{Result, bail};
use clap::Subcommand;
use serde_json::Value;
use std::sync::Arc;
use uuid::Uuid;

#[derive(Subcommand)]
pub enum SandboxCommand {
    /// Another operator asks for the number of a live subscription of a
    /// sandbox organisation: a port-out, SCHEDULED for the next working
    /// day; on it (by the organisation's clock) the subscription is
    /// cancelled and the number PORTED_OUT. Prints the porting.
    PortOut {
        #[arg(long)]
        org: Uuid,
        /// the number, E.164
        #[arg(long)]
        msisdn: String,
    },
}

pub async fn run(store: &Store, clock: &Arc<Clock>, command: SandboxCommand) -> Result<Value> {
    match command {
        SandboxCommand::PortOut { org, msisdn } => {
            match store.clock_of(org).await? {
                None => bail!("no organisation {org}"),
                Some(c) if !c.sandbox => bail!("organisation {org} is not a sandbox organisation: its numbers are ported out by real operators"),
                Some(_) => {}
            }
            let caller = crate::domain::Caller::system(store, org, store.organisation_time(org, clock.now()).await?);
            let p = porting::outbound::request(&caller, &msisdn).await.map_err(super::explain)?;
            Ok(crate::wire::to_json(&porting::to_wire(&p)?))
        }
    }
}
