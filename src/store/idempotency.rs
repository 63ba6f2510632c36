//! Idempotency keys in SQL, so every server instance on one database sees
//! the same claims: claim a key before executing, record the answer after.

use super::{Store, parse_ts, ts};
use crate::error::Result;
use chrono::{DateTime, Utc};
use sqlx::Row;

/// An answer as first sent: replayed byte for byte.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredAnswer {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

/// What a claim on (organisation, key) found.
#[derive(Debug)]
pub enum Claim {
    /// The key is ours: execute, then `idempotency_finish`.
    Claimed,
    /// Another request with this key is executing.
    Running { fingerprint: String },
    /// The key was answered.
    Done { fingerprint: String, answer: StoredAnswer },
}

/// The times a claim is judged by.
pub struct ClaimTimes {
    pub now: DateTime<Utc>,
    /// rows created before this are forgotten
    pub expired_before: DateTime<Utc>,
    /// a running claim not finished by this time is abandoned
    pub lock_until: DateTime<Utc>,
}

impl Store {
    /// Claims `key` for a request with `fingerprint`, unless a live row
    /// holds it. Two instances racing for one key both try to insert; the
    /// loser's unique violation sends it round again to read the winner's row.
    pub async fn idempotency_claim(&self, org: uuid::Uuid, key: &str, fingerprint: &str, t: &ClaimTimes) -> Result<Claim> {
        for _ in 0..3 {
            match self.try_claim(org, key, fingerprint, t).await {
                Err(e) if e.is_concurrent_conflict() => continue,
                other => return other,
            }
        }
        // three lost races in a row: someone holds it
        Ok(Claim::Running { fingerprint: fingerprint.to_string() })
    }

    async fn try_claim(&self, org: uuid::Uuid, key: &str, fingerprint: &str, t: &ClaimTimes) -> Result<Claim> {
        let mut tx = self.begin().await?;
        // forget what has expired, this key's row included
        sqlx::query("DELETE FROM idempotency_keys WHERE created_at < $1")
            .bind(ts(t.expired_before))
            .execute(&mut *tx.tx)
            .await?;
        let row = sqlx::query(
            "SELECT fingerprint, state, locked_until, status, headers, body FROM idempotency_keys
             WHERE org_id = $1 AND idempotency_key = $2",
        )
        .bind(org.to_string())
        .bind(key)
        .fetch_optional(&mut *tx.tx)
        .await?;
        if let Some(row) = row {
            let held: String = row.try_get("fingerprint")?;
            let state: String = row.try_get("state")?;
            if state == "done" {
                let headers: String = row.try_get("headers")?;
                let answer = StoredAnswer {
                    status: u16::try_from(row.try_get::<i64, _>("status")?).unwrap_or(500),
                    headers: serde_json::from_str(&headers).unwrap_or_default(),
                    body: row.try_get("body")?,
                };
                return Ok(Claim::Done { fingerprint: held, answer });
            }
            let abandoned = parse_ts(&row.try_get::<String, _>("locked_until")?)? < t.now;
            if !(abandoned && held == fingerprint) {
                return Ok(Claim::Running { fingerprint: held });
            }
            // the request holding it never finished (a crash): take it over
            sqlx::query("UPDATE idempotency_keys SET locked_until = $1 WHERE org_id = $2 AND idempotency_key = $3")
                .bind(ts(t.lock_until))
                .bind(org.to_string())
                .bind(key)
                .execute(&mut *tx.tx)
                .await?;
        } else {
            sqlx::query(
                "INSERT INTO idempotency_keys (org_id, idempotency_key, fingerprint, state, locked_until, created_at)
                 VALUES ($1, $2, $3, 'running', $4, $5)",
            )
            .bind(org.to_string())
            .bind(key)
            .bind(fingerprint)
            .bind(ts(t.lock_until))
            .bind(ts(t.now))
            .execute(&mut *tx.tx)
            .await?;
        }
        tx.commit().await?;
        Ok(Claim::Claimed)
    }

    /// Records the answer of a claimed key.
    pub async fn idempotency_finish(&self, org: uuid::Uuid, key: &str, answer: &StoredAnswer) -> Result<()> {
        let mut tx = self.begin().await?;
        sqlx::query(
            "UPDATE idempotency_keys SET state = 'done', status = $1, headers = $2, body = $3
             WHERE org_id = $4 AND idempotency_key = $5",
        )
        .bind(i64::from(answer.status))
        .bind(serde_json::to_string(&answer.headers).expect("headers serialize"))
        .bind(&answer.body)
        .bind(org.to_string())
        .bind(key)
        .execute(&mut *tx.tx)
        .await?;
        tx.commit().await
    }
}
