//! `switchboard admin webhook ...`: an organisation's webhook endpoints and
//! its webhook revision, through the same domain functions as the API.

use crate::clock::Clock;
use crate::config::WebhookUrls;
use crate::domain::webhooks::endpoints::{self, Move, Owner};
use crate::domain::webhooks::revision;
use crate::store::Store;
use crate::wire::latest as wire;
use anyhow::{Result, bail};
use clap::Subcommand;
use serde_json::{Value, json};
use uuid::Uuid;

#[derive(Subcommand)]
pub enum WebhookCommand {
    /// Register an endpoint; its signing secret is printed once.
    Create {
        #[arg(long)]
        org: Uuid,
        #[arg(long)]
        url: String,
        /// Event types it receives, comma-separated (default: *, all).
        #[arg(long, value_delimiter = ',')]
        events: Vec<String>,
        #[arg(long)]
        description: Option<String>,
        #[command(flatten)]
        urls: WebhookUrls,
    },
    /// List an organisation's endpoints (never their secrets).
    List {
        #[arg(long)]
        org: Uuid,
    },
    /// Change an endpoint's URL, event types or description.
    Update {
        #[arg(long)]
        org: Uuid,
        #[arg(long)]
        endpoint: Uuid,
        #[arg(long)]
        url: Option<String>,
        /// Event types it receives, comma-separated.
        #[arg(long, value_delimiter = ',')]
        events: Vec<String>,
        #[arg(long)]
        description: Option<String>,
        #[command(flatten)]
        urls: WebhookUrls,
    },
    /// Stop sending events to an endpoint.
    Disable {
        #[arg(long)]
        org: Uuid,
        #[arg(long)]
        endpoint: Uuid,
    },
    /// Resume sending events to an endpoint (also one disabled as FAILING).
    Enable {
        #[arg(long)]
        org: Uuid,
        #[arg(long)]
        endpoint: Uuid,
    },
    /// Remove an endpoint.
    Delete {
        #[arg(long)]
        org: Uuid,
        #[arg(long)]
        endpoint: Uuid,
    },
    /// Give an endpoint a new secret, printed once; the old one keeps
    /// signing beside it for 24 hours.
    RotateSecret {
        #[arg(long)]
        org: Uuid,
        #[arg(long)]
        endpoint: Uuid,
    },
    /// Print the organisation's webhook revision, or move it with --set.
    Revision {
        #[arg(long)]
        org: Uuid,
        #[arg(long)]
        set: Option<String>,
    },
}

/// Runs one command; the JSON it prints.
pub async fn run(store: &Store, clock: &Clock, command: WebhookCommand) -> Result<Value> {
    use super::explain;
    use WebhookCommand::*;
    let now = clock.now();
    let owner = |org: Uuid, urls: WebhookUrls| Owner { store, org, now, urls };
    let known = |org: Uuid| async move {
        if !store.organisation_exists(org).await? {
            bail!("no organisation {org}");
        }
        Ok(())
    };
    let out = match command {
        Create { org, url, events, description, urls } => {
            known(org).await?;
            let events = selectors(events)?;
            let req = wire::CreateWebhookEndpointRequest { url, events, description };
            json!(endpoints::create(&owner(org, urls), req).await.map_err(explain)?)
        }
        List { org } => {
            known(org).await?;
            let mut all = vec![];
            let mut cursor = None;
            loop {
                let page = endpoints::list(&owner(org, WebhookUrls::default()), cursor.as_deref(), Some(1000)).await.map_err(explain)?;
                all.extend(page.items);
                match page.pagination.next_cursor {
                    Some(next) => cursor = Some(next),
                    None => break,
                }
            }
            json!(all)
        }
        Update { org, endpoint, url, events, description, urls } => {
            let req = wire::UpdateWebhookEndpointRequest { url, events: selectors(events)?, description, status: None };
            json!(endpoints::update(&owner(org, urls), &endpoint.to_string(), req).await.map_err(explain)?)
        }
        Disable { org, endpoint } => {
            json!(endpoints::set_status(&owner(org, WebhookUrls::default()), &endpoint.to_string(), Move::Disable).await.map_err(explain)?)
        }
        Enable { org, endpoint } => {
            json!(endpoints::set_status(&owner(org, WebhookUrls::default()), &endpoint.to_string(), Move::Enable).await.map_err(explain)?)
        }
        Delete { org, endpoint } => {
            endpoints::delete(&owner(org, WebhookUrls::default()), &endpoint.to_string()).await.map_err(explain)?;
            json!({ "webhookEndpointId": endpoint, "deleted": true })
        }
        RotateSecret { org, endpoint } => json!(endpoints::rotate_secret(&owner(org, WebhookUrls::default()), &endpoint.to_string()).await.map_err(explain)?),
        Revision { org, set } => {
            known(org).await?;
            let today = now.date_naive();
            let r = match set {
                Some(name) => revision::set(store, org, &name, today).await.map_err(explain)?,
                None => revision::of(store, org, today).await.map_err(explain)?,
            };
            json!({ "organisationId": org, "webhookRevision": r.name })
        }
    };
    Ok(out)
}

/// `--events` as the documents' selectors; none given is None.
fn selectors(names: Vec<String>) -> Result<Option<Vec<wire::WebhookEventSelector>>> {
    if names.is_empty() {
        return Ok(None);
    }
    let parsed = names
        .iter()
        .map(|n| n.trim().parse().map_err(|_| anyhow::anyhow!("--events: unknown event type {n:?} (an event type of SERVICE.md, or *)")))
        .collect::<Result<Vec<_>>>()?;
    Ok(Some(parsed))
}
