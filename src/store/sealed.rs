//! The columns that hold secrets at rest (src/sealing.rs): where each
//! value is (its place, the sealing's associated data), how many are under
//! which master key (`switchboard admin secrets`), and moving every one
//! under the current key (`reseal`, at each start and on demand).

use super::Store;
use crate::error::{Error, Result};
use serde::Serialize;
use sqlx::{AssertSqlSafe, Row};
use std::collections::BTreeMap;

/// A column of secrets: its table, what names the row (a column, or an
/// expression of the row's key columns), and the column itself.
pub(super) struct Column {
    table: &'static str,
    key: &'static str,
    column: &'static str,
}

/// The server's own secret (access tokens, login codes, download URLs).
pub(super) const SERVER_SECRET: Column = Column { table: "server_secrets", key: "name", column: "value" };
/// A webhook endpoint's signing secret, and the one before its rotation.
pub(super) const ENDPOINT_SECRET: Column = Column { table: "webhook_endpoints", key: "id", column: "secret" };
pub(super) const ENDPOINT_PREVIOUS_SECRET: Column = Column { table: "webhook_endpoints", key: "id", column: "previous_secret" };
/// A port-in's transfer PIN and account number (src/store/port_in_secrets.rs).
pub(super) const PORT_IN_SECRETS: Column = Column { table: "port_in_secrets", key: "id", column: "secrets" };

/// The stored answer of an idempotency key that shows a secret once (src/store/idempotency.rs).
pub(super) const REPLAYED_SECRET: Column = Column { table: "idempotency_keys", key: "org_id || '/' || idempotency_key", column: "sealed_body" };

/// Every column of secrets at rest.
const COLUMNS: [Column; 5] = [SERVER_SECRET, ENDPOINT_SECRET, ENDPOINT_PREVIOUS_SECRET, PORT_IN_SECRETS, REPLAYED_SECRET];

impl Column {
    /// Where row `key`'s value is, as its sealing's associated data: a
    /// value sealed for one row or column does not open in another.
    pub(super) fn place(&self, key: &str) -> String {
        format!("{}.{}:{key}", self.table, self.column)
    }
}

/// How the database's secrets are kept: in plain, or sealed under which
/// master key (by its id).
#[derive(Debug, Default, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct SecretsAtRest {
    pub plain: u64,
    pub sealed_under: BTreeMap<String, u64>,
}

/// What a reseal did.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Resealed {
    pub resealed: u64,
    pub secrets: SecretsAtRest,
}

impl Store {
    /// Every column's values, as stored: (column, row's key, value).
    async fn secrets_stored(&self) -> Result<Vec<(&'static Column, String, String)>> {
        let mut out = vec![];
        for c in &COLUMNS {
            let sql = format!("SELECT {key}, {column} FROM {table} WHERE {column} IS NOT NULL", key = c.key, column = c.column, table = c.table);
            for r in sqlx::query(AssertSqlSafe(sql)).fetch_all(&self.pool).await? {
                out.push((c, r.try_get::<String, _>(0)?, r.try_get::<String, _>(1)?));
            }
        }
        Ok(out)
    }

    /// How the secrets at rest are kept.
    pub async fn secrets_at_rest(&self) -> Result<SecretsAtRest> {
        let mut counts = SecretsAtRest::default();
        for (_, _, stored) in self.secrets_stored().await? {
            match crate::sealing::sealed_under(&stored) {
                Some(id) => *counts.sealed_under.entry(id.to_string()).or_default() += 1,
                None => counts.plain += 1,
            }
        }
        Ok(counts)
    }

    /// Seals every secret that is in plain or under another key with the
    /// current master key. Each value is replaced only if it is still what
    /// was read, so instances resealing at once, or a rotation of an
    /// endpoint's secret meanwhile, lose nothing. A value no configured
    /// key opens stops it, naming the key; so does a sealed value when
    /// there is no key at all (a process must not start and write secrets
    /// in plain beside sealed ones).
    pub async fn reseal_secrets(&self) -> Result<Resealed> {
        let mut resealed = 0;
        for (c, key, stored) in self.secrets_stored().await? {
            let unopened = |e: crate::sealing::Unsealable| Error::Internal(format!("{}.{} of {key}: {e}", c.table, c.column));
            if !self.sealing.needs_resealing(&stored) {
                self.sealing.opens(&stored).map_err(unopened)?;
                continue;
            }
            let place = c.place(&key);
            let plain = self.sealing.open(&place, &stored).map_err(unopened)?;
            let sql = format!("UPDATE {table} SET {column} = $1 WHERE {key} = $2 AND {column} = $3", table = c.table, column = c.column, key = c.key);
            let mut tx = self.begin().await?;
            let changed =
                sqlx::query(AssertSqlSafe(sql)).bind(self.sealing.seal(&place, &plain)).bind(key).bind(stored).execute(tx.conn().await?).await?.rows_affected();
            tx.commit().await?;
            resealed += changed;
        }
        Ok(Resealed { resealed, secrets: self.secrets_at_rest().await? })
    }
}
