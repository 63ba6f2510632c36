//! `switchboard admin secrets`: how the secrets at rest are kept (in plain,
//! or sealed under which master key), `reseal` to move them all under the
//! current `--master-key` (a rotation's last step), and `new-key` to make a
//! master key (src/sealing.rs; docs/operating.md, Secrets at rest).

use crate::store::Store;
use anyhow::Result;
use clap::Subcommand;
use serde_json::{Value, json};

#[derive(Subcommand)]
pub enum SecretsCommand {
    /// Count the secrets at rest: in plain, and sealed under each master key
    /// (by its id). The current key's id is `currentKey`.
    Status,
    /// Seal every secret that is in plain or under a previous key with the
    /// current --master-key (each start of `serve` does this too).
    Reseal,
    /// Print a new master key (32 random bytes, base64).
    NewKey,
}

pub async fn run(store: &Store, command: SecretsCommand) -> Result<Value> {
    let current = store.sealing().current_id().map(str::to_string);
    Ok(match command {
        SecretsCommand::Status => json!({"currentKey": current, "secrets": store.secrets_at_rest().await?}),
        SecretsCommand::Reseal => {
            if current.is_none() {
                anyhow::bail!("reseal needs --master-key (SWITCHBOARD_MASTER_KEY): the key to seal under");
            }
            let done = store.reseal_secrets().await?;
            json!({"currentKey": current, "resealed": done.resealed, "secrets": done.secrets})
        }
        SecretsCommand::NewKey => new_key(),
    })
}

/// A new master key (no database needed: `main` answers it before connecting).
pub fn new_key() -> Value {
    json!({"masterKey": crate::sealing::new_master_key()})
}
