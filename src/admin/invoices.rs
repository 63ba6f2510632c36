//! `switchboard admin invoice ...`: what an operator does with invoices
//! besides the API: list them (those to print and post, `--paper`), void
//! one issued in error, and set the organisation's dunning days.

use crate::clock::Clock;
use crate::domain::invoices;
use crate::store::{InvoiceFilter, Store};
use anyhow::{Result, anyhow, bail};
use clap::Subcommand;
use serde_json::{Value, json};
use std::sync::Arc;
use uuid::Uuid;

#[derive(Subcommand)]
pub enum InvoiceCommand {
    /// Print the organisation's invoices, oldest first; with --paper, the
    /// finalised ones of customers billed on paper (to print and post).
    List {
        #[arg(long)]
        org: Uuid,
        #[arg(long)]
        paper: bool,
    },
    /// Void an OPEN invoice issued in error: it owes nothing, and what its
    /// dunning suspended is restored.
    Void {
        #[arg(long)]
        org: Uuid,
        #[arg(long)]
        invoice: Uuid,
    },
    /// Print the organisation's dunning days, after setting any: days after
    /// an unpaid invoice's due date before the customer's subscriptions are
    /// suspended (default 14), and before it is uncollectible and they are
    /// cancelled (default 60); 0: never. Invoices keep the days they were
    /// finalised under.
    Dunning {
        #[arg(long)]
        org: Uuid,
        #[arg(long = "suspend-after-days", value_parser = clap::value_parser!(i64).range(0..=365))]
        suspend_after_days: Option<i64>,
        #[arg(long = "uncollectible-after-days", value_parser = clap::value_parser!(i64).range(0..=730))]
        uncollectible_after_days: Option<i64>,
    },
}

pub async fn run(store: &Store, clock: &Arc<Clock>, command: InvoiceCommand) -> Result<Value> {
    let caller_of = |org: Uuid| async move {
        if !store.organisation_exists(org).await? {
            bail!("no organisation {org}");
        }
        Ok::<_, anyhow::Error>(crate::domain::Caller::system(store, org, store.organisation_time(org, clock.now()).await?))
    };
    match command {
        InvoiceCommand::List { org, paper } => {
            let caller = caller_of(org).await?;
            invoices::due::apply_all_due(&caller).await?;
            let rows = if paper {
                store.paper_invoices(org).await?
            } else {
                let filter = InvoiceFilter::default();
                let mut rows = vec![];
                let mut after = None;
                loop {
                    let page = store.invoices(org, &filter, after, 500).await?;
                    rows.extend(page.items);
                    match page.next {
                        Some(next) => after = Some(next),
                        None => break,
                    }
                }
                rows
            };
            let shown = rows.iter().map(invoices::render::invoice).collect::<crate::error::Result<Vec<_>>>()?;
            Ok(serde_json::to_value(shown)?)
        }
        InvoiceCommand::Void { org, invoice } => {
            let caller = caller_of(org).await?;
            Ok(serde_json::to_value(invoices::void::void(&caller, invoice).await.map_err(|e| anyhow!("{e}"))?)?)
        }
        InvoiceCommand::Dunning { org, suspend_after_days, uncollectible_after_days } => {
            caller_of(org).await?;
            let (suspend, give_up) = store.dunning_days(org).await?;
            let (suspend, give_up) = (suspend_after_days.unwrap_or(suspend), uncollectible_after_days.unwrap_or(give_up));
            if give_up != 0 && give_up < suspend {
                bail!("--uncollectible-after-days ({give_up}) must not be before --suspend-after-days ({suspend})");
            }
            store.set_dunning_days(org, suspend, give_up).await?;
            Ok(json!({ "organisationId": org, "suspendAfterDays": suspend, "uncollectibleAfterDays": give_up }))
        }
    }
}
