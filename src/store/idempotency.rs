//! Idempotency keys in SQL, so every server instance on one database sees
//! the same claims: claim a key before executing; the answer is written in
//! the transaction of the work it answers (see `api::idempotency`).

use super::{JobKind, Store, Tx, ts};
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
    /// Claims `key` for a request with `fingerprint`: a new key, one whose
    /// row has expired, or one whose claim was abandoned by the same
    /// request (its server died mid-request) is ours; otherwise the row
    /// that holds it says what it holds. One statement when the key is new.
    pub async fn idempotency_claim(&self, org: uuid::Uuid, key: &str, fingerprint: &str, t: &ClaimTimes) -> Result<Claim> {
        let mut tx = self.begin().await?;
        let claimed = sqlx::query(
            "INSERT INTO idempotency_keys (org_id, idempotency_key, fingerprint, state, locked_until, created_at)
             VALUES ($1, $2, $3, 'running', $4, $5)
             ON CONFLICT (org_id, idempotency_key) DO UPDATE SET
               fingerprint = excluded.fingerprint, state = 'running', locked_until = excluded.locked_until,
               status = NULL, headers = NULL, body = NULL,
               created_at = CASE WHEN idempotency_keys.created_at < $6 THEN excluded.created_at ELSE idempotency_keys.created_at END
             WHERE idempotency_keys.created_at < $6
                OR (idempotency_keys.state = 'running' AND idempotency_keys.locked_until < $5
                    AND idempotency_keys.fingerprint = excluded.fingerprint)",
        )
        .bind(org.to_string())
        .bind(key)
        .bind(fingerprint)
        .bind(ts(t.lock_until))
        .bind(ts(t.now))
        .bind(ts(t.expired_before))
        .execute(tx.conn())
        .await?
        .rows_affected()
            == 1;
        if claimed {
            tx.commit().await?;
            return Ok(Claim::Claimed);
        }
        let row = sqlx::query(
            "SELECT fingerprint, state, status, headers, body FROM idempotency_keys
             WHERE org_id = $1 AND idempotency_key = $2",
        )
        .bind(org.to_string())
        .bind(key)
        .fetch_one(tx.conn())
        .await?;
        drop(tx);
        let held: String = row.try_get("fingerprint")?;
        if row.try_get::<String, _>("state")? != "done" {
            return Ok(Claim::Running { fingerprint: held });
        }
        let headers: String = row.try_get("headers")?;
        let answer = StoredAnswer {
            status: u16::try_from(row.try_get::<i64, _>("status")?).unwrap_or(500),
            headers: serde_json::from_str(&headers).unwrap_or_default(),
            body: row.try_get("body")?,
        };
        Ok(Claim::Done { fingerprint: held, answer })
    }

    /// Records the answer of a claimed key, in the transaction of the work
    /// it answers, if the claim made with `t` still holds it. It does not
    /// when the request outlived its lock and a retry took the key over:
    /// then the work must not commit (the retry's will).
    pub async fn idempotency_finish(tx: &mut Tx, org: uuid::Uuid, key: &str, t: &ClaimTimes, answer: &StoredAnswer) -> Result<bool> {
        let updated = sqlx::query(
            "UPDATE idempotency_keys SET state = 'done', status = $1, headers = $2, body = $3
             WHERE org_id = $4 AND idempotency_key = $5 AND state = 'running' AND locked_until = $6",
        )
        .bind(i64::from(answer.status))
        .bind(serde_json::to_string(&answer.headers).expect("headers serialize"))
        .bind(&answer.body)
        .bind(org.to_string())
        .bind(key)
        .bind(ts(t.lock_until))
        .execute(tx.conn())
        .await?
        .rows_affected();
        Ok(updated == 1)
    }

    /// Deletes the keys created before `before` (the idempotency.expiry
    /// job), and schedules that job again for `next`.
    pub async fn forget_idempotency_keys(&self, before: DateTime<Utc>, next: DateTime<Utc>, now: DateTime<Utc>) -> Result<u64> {
        let mut tx = self.begin().await?;
        let gone = sqlx::query("DELETE FROM idempotency_keys WHERE created_at < $1")
            .bind(ts(before))
            .execute(tx.conn())
            .await?
            .rows_affected();
        Store::schedule_job(&mut tx, JobKind::IdempotencyExpiry, EXPIRY_SUBJECT, None, next, now).await?;
        tx.commit().await?;
        Ok(gone)
    }
}

/// The idempotency.expiry job has one item, for every organisation.
pub const EXPIRY_SUBJECT: &str = "*";
