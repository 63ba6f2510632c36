//! Operator commands (`switchboard admin ...`): organisations (and the
//! payment providers each collects with), API keys,
//! support users, the mail outbox, the product catalog, webhooks, usage,
//! invoices, the number pool, the SIM inventory, a sandbox's port-outs,
//! and backups.
//! Each returns the JSON the CLI prints.

use crate::api::revision::Revision;
use crate::clock::Clock;
use crate::keys;
use crate::payment_providers::ProviderName;
use crate::store::{NewApiKey, Store};
use anyhow::{Context as _, Result, bail};
use serde_json::{Value, json};

pub mod backup;
pub mod clock;
pub mod invoices;
pub mod numbers;
pub mod sandbox;
pub mod secrets;
pub mod sims;
pub mod usage;
pub mod webhooks;

/// A new organisation; a sandbox one's time can be moved (docs/sandbox.md).
pub async fn org_create(store: &Store, clock: &Clock, name: &str, sandbox: bool) -> Result<Value> {
    if name.trim().is_empty() {
        bail!("--name must not be empty");
    }
    let id = store.create_organisation(name, sandbox, clock.now()).await?;
    Ok(json!({ "organisationId": id, "name": name, "sandbox": sandbox }))
}

pub async fn org_list(store: &Store) -> Result<Value> {
    Ok(serde_json::to_value(store.organisations().await?)?)
}

/// Enables and disables payment providers for `org` (both are enabled
/// unless disabled here), and says which it collects with now.
pub async fn org_providers(store: &Store, clock: &Clock, org: uuid::Uuid, enable: &[ProviderName], disable: &[ProviderName]) -> Result<Value> {
    if !store.organisation_exists(org).await? {
        bail!("no organisation {org}");
    }
    if let Some(both) = enable.iter().find(|p| disable.contains(p)) {
        bail!("{} is both enabled and disabled", both.as_str());
    }
    for (providers, enabled) in [(enable, true), (disable, false)] {
        for p in providers {
            store.set_payment_provider_enabled(org, p.as_str(), enabled, clock.now()).await?;
        }
    }
    let disabled = store.disabled_payment_providers(org).await?;
    let providers: Vec<Value> =
        ProviderName::ALL.iter().map(|p| json!({ "paymentProvider": p.as_str(), "enabled": !disabled.iter().any(|d| d == p.as_str()) })).collect();
    Ok(json!({ "organisationId": org, "providers": providers }))
}

/// `admin org show`: every setting of `org` (docs/operating.md), with its
/// default and bounds.
pub async fn org_show(store: &Store, org: uuid::Uuid) -> Result<Value> {
    let Some(settings) = store.settings(org).await? else { bail!("no organisation {org}") };
    let shown: serde_json::Map<String, Value> =
        settings.iter().map(|(s, v)| (s.name.to_string(), json!({ "value": v, "default": s.default, "min": s.min, "max": s.max, "about": s.about }))).collect();
    Ok(json!({ "organisationId": org, "settings": shown }))
}

/// `admin org set NAME=VALUE...`: all of them, or (one unknown or out of
/// bounds) none; then what `org show` prints.
pub async fn org_set(store: &Store, org: uuid::Uuid, assignments: &[String]) -> Result<Value> {
    use crate::store::settings::{SETTINGS, Setting};
    if assignments.is_empty() {
        bail!("name a setting: NAME=VALUE (one of {})", SETTINGS.map(|s| s.name).join(", "));
    }
    let mut values = vec![];
    for a in assignments {
        let (name, text) = a.split_once('=').with_context(|| format!("{a:?} is not NAME=VALUE"))?;
        let setting = Setting::named(name.trim()).with_context(|| format!("no setting {name:?}; the settings: {}", SETTINGS.map(|s| s.name).join(", ")))?;
        values.push((setting, setting.value(text).map_err(anyhow::Error::msg)?));
    }
    if !store.set_settings(org, &values).await? {
        bail!("no organisation {org}");
    }
    org_show(store, org).await
}

fn revision_named(name: Option<&str>) -> Result<&'static Revision> {
    match name {
        None => Ok(Revision::current()),
        Some(n) => Revision::by_name(n).with_context(|| {
            let known: Vec<&str> = Revision::all().iter().map(|r| r.name).collect();
            format!("unknown revision {n:?}; known: {}", known.join(", "))
        }),
    }
}

/// A new key, pinned to `revision` (default: the current one). The secret
/// is in this answer only.
pub async fn key_create(store: &Store, clock: &Clock, org: uuid::Uuid, revision: Option<&str>, read_only: bool) -> Result<Value> {
    let revision = revision_named(revision)?;
    let Some(clock_row) = store.clock_of(org).await? else {
        bail!("no organisation {org}");
    };
    let secret = keys::mint(clock_row.sandbox);
    let record = store
        .insert_api_key(
            NewApiKey { organisation_id: org, key_hash: &keys::hash(&secret), prefix: &keys::display_prefix(&secret), revision: revision.name, read_only },
            clock.now(),
        )
        .await?;
    Ok(json!({
        "apiKeyId": record.api_key_id,
        "apiKey": secret,
        "organisationId": org,
        "revision": record.revision,
        "readOnly": record.read_only,
        "sandbox": record.sandbox,
    }))
}

pub async fn key_list(store: &Store, org: uuid::Uuid) -> Result<Value> {
    Ok(serde_json::to_value(store.api_keys_of(org).await?)?)
}

pub async fn key_revoke(store: &Store, clock: &Clock, key: uuid::Uuid) -> Result<Value> {
    Ok(serde_json::to_value(store.revoke_api_key(key, clock.now()).await?)?)
}

/// Moves a key's pin; only an operator does this, never the server.
pub async fn key_pin(store: &Store, key: uuid::Uuid, revision: &str) -> Result<Value> {
    let revision = revision_named(Some(revision))?;
    Ok(serde_json::to_value(store.pin_api_key(key, revision.name).await?)?)
}

/// Sets or clears a user's support flag.
pub async fn user_support(store: &Store, user: uuid::Uuid, support: bool) -> Result<Value> {
    if !store.set_user_support(user, support).await? {
        bail!("no user {user}");
    }
    Ok(json!({ "userId": user, "support": support }))
}

/// Ends every session of a user (`users.sessions_from`): tokens issued
/// before now, access and refresh alike, are refused.
pub async fn user_sign_out(store: &Store, clock: &Clock, user: uuid::Uuid) -> Result<Value> {
    let now = clock.now();
    if !store.end_user_sessions(user, now).await? {
        bail!("no user {user}");
    }
    Ok(json!({ "userId": user, "sessionsFrom": now }))
}

/// The mail outbox (all of it, or what went to `to`), oldest first.
pub async fn mail_list(store: &Store, to: Option<&str>) -> Result<Value> {
    Ok(serde_json::to_value(store.mails(to).await?)?)
}

/// Imports a catalog file; every problem is reported, each with its path.
pub async fn catalog_import(store: &Store, org: uuid::Uuid, path: &std::path::Path) -> Result<Value> {
    use crate::domain::catalog::{file, import};
    if !store.organisation_exists(org).await? {
        bail!("no organisation {org}");
    }
    let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let json = path.extension().is_some_and(|e| e.eq_ignore_ascii_case("json"));
    let shown = path.display();
    let parsed = file::parse(&text, json).map_err(|p| anyhow::anyhow!("{shown}: {p}"))?;
    match import::import(store, org, parsed).await {
        Ok(report) => Ok(serde_json::to_value(report)?),
        Err(import::ImportError::Invalid(problems)) => {
            let lines: Vec<String> = problems.iter().map(|p| format!("{shown}: {p}")).collect();
            bail!("the catalog file is invalid; nothing was imported:\n{}", lines.join("\n"))
        }
        Err(import::ImportError::Store(e)) => Err(e.into()),
    }
}

/// A domain refusal as one line naming each failing field (`--property:
/// message`, as the CLI's flags are named after the fields).
pub(crate) fn explain(e: crate::error::Error) -> anyhow::Error {
    match e {
        crate::error::Error::Invalid(details) => {
            let lines: Vec<String> = details.iter().map(|d| format!("--{}: {}", d.property, d.message)).collect();
            anyhow::anyhow!("{}", lines.join("; "))
        }
        other => anyhow::anyhow!("{other}"),
    }
}
