//! `switchboard admin usage record`: records usage of a subscription as
//! the network's feed would (for tests, demos, and usage a real network
//! delivers some other way), through the same domain function.

use crate::clock::Clock;
use crate::domain::usage::record;
use crate::store::{IdOrRef, Store, UsageKind, UsageRecord};
use anyhow::{Result, bail};
use clap::Subcommand;
use serde_json::{Value, json};
use uuid::Uuid;

#[derive(Subcommand)]
pub enum UsageCommand {
    /// Record one usage record of a subscription (once: the same
    /// --record-id again changes nothing).
    Record {
        #[arg(long)]
        org: Uuid,
        /// The subscription's id, or `rid_` followed by its referenceId.
        #[arg(long)]
        subscription: String,
        /// DATA, VOICE, SMS or VOICE_ILD (a call to a number abroad).
        #[arg(long)]
        kind: UsageKind,
        /// Kilobytes (DATA), seconds (VOICE, VOICE_ILD) or messages (SMS).
        #[arg(long)]
        quantity: i64,
        /// VOICE_ILD: the call's cost in minor units of the subscription's currency.
        #[arg(long, default_value_t = 0)]
        charge_minor: i64,
        /// VOICE_ILD: the country called (ISO 3166-1 alpha-3).
        #[arg(long)]
        country: Option<String>,
        /// When it happened (RFC 3339; default: now).
        #[arg(long)]
        at: Option<chrono::DateTime<chrono::Utc>>,
        /// The record's id (default: a new one).
        #[arg(long)]
        record_id: Option<String>,
    },
}

pub async fn run(store: &Store, clock: &Clock, command: UsageCommand) -> Result<Value> {
    let UsageCommand::Record { org, subscription, kind, quantity, charge_minor, country, at, record_id } = command;
    let Some(s) = store.subscription(org, &IdOrRef::parse(&subscription)).await? else { bail!("no subscription {subscription} in organisation {org}") };
    let record_id = record_id.unwrap_or_else(|| Uuid::new_v4().to_string());
    // the organisation's time: a sandbox organisation's clock may have moved
    let now = store.organisation_time(org, clock.now()).await?;
    let r = UsageRecord { record_id: record_id.clone(), kind, quantity, charge_minor, country, occurred_at: at.unwrap_or(now) };
    let recorded = record::record(store, org, s.id, &r, now).await.map_err(super::explain)?;
    Ok(json!({ "subscriptionId": s.id, "recordId": record_id, "recorded": recorded }))
}
