//! API keys: stored only as the SHA-256 of the secret.

use super::{Store, parse_ts, parse_uuid, ts};
use crate::error::{Error, InternalCode, Result};
use chrono::{DateTime, Utc};
use sqlx::any::AnyRow;
use sqlx::{AssertSqlSafe, Row};

/// A key as stored (never the secret).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ApiKeyRecord {
    pub api_key_id: uuid::Uuid,
    pub organisation_id: uuid::Uuid,
    /// The first characters of the secret, to recognise it by.
    pub prefix: String,
    pub revision: String,
    pub read_only: bool,
    pub created_at: DateTime<Utc>,
    pub revoked_at: Option<DateTime<Utc>>,
    /// the key's organisation is a sandbox (its time can be moved)
    pub sandbox: bool,
    /// how far the organisation's time is ahead of the server's (a sandbox
    /// organisation's test clock): read with the key, so a request knows
    /// its organisation's time without a query of its own
    #[serde(skip)]
    pub clock_offset: chrono::Duration,
}

pub struct NewApiKey<'a> {
    pub organisation_id: uuid::Uuid,
    pub key_hash: &'a str,
    pub prefix: &'a str,
    pub revision: &'a str,
    pub read_only: bool,
}

/// A key's columns, with its organisation's kind: `FROM {KEYS} WHERE ...`
/// (columns of `api_keys` as `k.`).
const COLUMNS: &str = "k.id, k.org_id, k.prefix, k.revision, k.read_only, k.created_at, k.revoked_at, o.sandbox, o.clock_offset_ms";
const KEYS: &str = "api_keys k JOIN organisations o ON o.id = k.org_id";

fn from_row(r: &AnyRow) -> Result<ApiKeyRecord> {
    let revoked: Option<String> = r.try_get("revoked_at")?;
    Ok(ApiKeyRecord {
        api_key_id: parse_uuid(&r.try_get::<String, _>("id")?)?,
        organisation_id: parse_uuid(&r.try_get::<String, _>("org_id")?)?,
        prefix: r.try_get("prefix")?,
        revision: r.try_get("revision")?,
        read_only: r.try_get::<i64, _>("read_only")? != 0,
        created_at: parse_ts(&r.try_get::<String, _>("created_at")?)?,
        revoked_at: revoked.as_deref().map(parse_ts).transpose()?,
        sandbox: r.try_get::<i64, _>("sandbox")? != 0,
        clock_offset: chrono::Duration::milliseconds(r.try_get("clock_offset_ms")?),
    })
}

impl Store {
    pub async fn insert_api_key(&self, k: NewApiKey<'_>, now: DateTime<Utc>) -> Result<ApiKeyRecord> {
        if !self.organisation_exists(k.organisation_id).await? {
            return Err(Error::not_found(InternalCode::NotFound, "organisation"));
        }
        let id = uuid::Uuid::new_v4();
        let mut tx = self.begin().await?;
        tx.execute(
            sqlx::query(
                "INSERT INTO api_keys (id, org_id, key_hash, prefix, revision, read_only, created_at)
                 VALUES ($1, $2, $3, $4, $5, $6, $7)",
            )
            .bind(id.to_string())
            .bind(k.organisation_id.to_string())
            .bind(k.key_hash)
            .bind(k.prefix)
            .bind(k.revision)
            .bind(k.read_only as i64)
            .bind(ts(now)),
        )
        .await?;
        tx.commit().await?;
        self.api_key(id).await?.ok_or_else(|| Error::Internal("key vanished".into()))
    }

    /// The key whose secret hashes to `key_hash`, revoked or not.
    pub async fn api_key_by_hash(&self, key_hash: &str) -> Result<Option<ApiKeyRecord>> {
        let row = sqlx::query(AssertSqlSafe(format!("SELECT {COLUMNS} FROM {KEYS} WHERE k.key_hash = $1"))).bind(key_hash).fetch_optional(&self.pool).await?;
        row.as_ref().map(from_row).transpose()
    }

    pub async fn api_key(&self, id: uuid::Uuid) -> Result<Option<ApiKeyRecord>> {
        let row = sqlx::query(AssertSqlSafe(format!("SELECT {COLUMNS} FROM {KEYS} WHERE k.id = $1"))).bind(id.to_string()).fetch_optional(&self.pool).await?;
        row.as_ref().map(from_row).transpose()
    }

    pub async fn api_keys_of(&self, org: uuid::Uuid) -> Result<Vec<ApiKeyRecord>> {
        let rows = sqlx::query(AssertSqlSafe(format!("SELECT {COLUMNS} FROM {KEYS} WHERE k.org_id = $1 ORDER BY k.created_at, k.id")))
            .bind(org.to_string())
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(from_row).collect()
    }

    /// Revokes a key (idempotent: a revoked key keeps its first revocation time).
    pub async fn revoke_api_key(&self, id: uuid::Uuid, now: DateTime<Utc>) -> Result<ApiKeyRecord> {
        let mut tx = self.begin().await?;
        tx.execute(sqlx::query("UPDATE api_keys SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL").bind(ts(now)).bind(id.to_string())).await?;
        tx.commit().await?;
        self.api_key(id).await?.ok_or_else(|| Error::not_found(InternalCode::NotFound, "API key"))
    }

    pub async fn pin_api_key(&self, id: uuid::Uuid, revision: &str) -> Result<ApiKeyRecord> {
        let mut tx = self.begin().await?;
        tx.execute(sqlx::query("UPDATE api_keys SET revision = $1 WHERE id = $2").bind(revision).bind(id.to_string())).await?;
        tx.commit().await?;
        self.api_key(id).await?.ok_or_else(|| Error::not_found(InternalCode::NotFound, "API key"))
    }
}
