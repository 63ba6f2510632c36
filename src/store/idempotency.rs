//! Idempotency keys in SQL, so every server instance on one database sees
//! the same keys: a key's row is written once, with its answer, in the
//! transaction of the work it answers (see `api::idempotency`). An answer
//! that shows a secret once is kept sealed (`sealed_body`), bound to its
//! key's row, so its replay shows the secret too and the table does not.

use super::coalesce::Coalesced;
use super::{JobKind, Store, Tx, parse_ts, ts};
use crate::error::{Error, Result};
use chrono::{DateTime, Utc};
use sqlx::{AnyConnection, AnyPool, Row};
use std::collections::HashMap;
use std::sync::Arc;

/// How long a key is remembered (by the server's clock), and so how long a
/// key's row stays before the expiry job deletes it.
pub const LIFETIME_HOURS: i64 = 24;

/// An answer as first sent: replayed byte for byte.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredAnswer {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
    /// whether `body` shows a secret, and so is kept sealed
    pub secret: bool,
}

/// A key's row, its sealed body not yet opened.
#[derive(Clone)]
pub(super) struct Held {
    fingerprint: String,
    answer: StoredAnswer,
    created_at: DateTime<Utc>,
}

/// Where the sealed body of `org`'s `key` is: its sealing's associated data.
fn place(org: uuid::Uuid, key: &str) -> String {
    super::sealed::REPLAYED_SECRET.place(&format!("{org}/{key}"))
}

/// The coalesced lookup of keys' rows.
pub(super) type AnswersByKey = Arc<Coalesced<uuid::Uuid, String, Held>>;

pub(super) fn answers_by_key(pool: AnyPool) -> AnswersByKey {
    Coalesced::new(
        pool,
        Arc::new(|org: uuid::Uuid, keys: Vec<String>, mut conn| {
            Box::pin(async move {
                let found = answers(&mut conn, org, keys).await;
                (conn, found)
            })
        }),
    )
}

async fn answers(conn: &mut AnyConnection, org: uuid::Uuid, keys: Vec<String>) -> Result<HashMap<String, Held>> {
    let rows = super::fetch_in(conn, org, keys, |list| {
        format!(
            "SELECT idempotency_key, fingerprint, status, headers, body, sealed_body, created_at FROM idempotency_keys
             WHERE org_id = $1 AND idempotency_key IN ({list})"
        )
    })
    .await?;
    let mut found = HashMap::new();
    for row in rows {
        let headers: String = row.try_get("headers")?;
        let sealed: Option<String> = row.try_get("sealed_body")?;
        let held = Held {
            fingerprint: row.try_get("fingerprint")?,
            answer: StoredAnswer {
                status: u16::try_from(row.try_get::<i64, _>("status")?).unwrap_or(500),
                headers: serde_json::from_str(&headers).unwrap_or_default(),
                secret: sealed.is_some(),
                body: match sealed {
                    Some(sealed) => sealed,
                    None => row.try_get::<Option<String>, _>("body")?.unwrap_or_default(),
                },
            },
            created_at: parse_ts(&row.try_get::<String, _>("created_at")?)?,
        };
        found.insert(row.try_get("idempotency_key")?, held);
    }
    Ok(found)
}

/// The times a key is judged by.
pub struct KeyTimes {
    pub now: DateTime<Utc>,
    /// rows created before this are forgotten
    pub expired_before: DateTime<Utc>,
}

/// What a key holds for a new request with it.
#[derive(Debug)]
pub enum KeyHeld {
    /// never used, or forgotten by the expiry job
    Unused,
    /// answered before `expired_before`: forgotten, and its row replaced
    /// when the key is used again
    Expired,
    Answered {
        fingerprint: String,
        answer: StoredAnswer,
    },
}

impl KeyHeld {
    /// The stored answer and the fingerprint of the request it answered.
    pub fn answer(self) -> Option<(String, StoredAnswer)> {
        match self {
            KeyHeld::Answered { fingerprint, answer } => Some((fingerprint, answer)),
            KeyHeld::Unused | KeyHeld::Expired => None,
        }
    }
}

impl Store {
    /// What `key` holds, judged by `expired_before`. Concurrent lookups
    /// share one query (see `coalesce`).
    pub async fn idempotency_answer(&self, org: uuid::Uuid, key: &str, expired_before: DateTime<Utc>) -> Result<KeyHeld> {
        Ok(match self.answers_by_key.get(org, key.to_string()).await? {
            None => KeyHeld::Unused,
            Some(h) if h.created_at < expired_before => KeyHeld::Expired,
            Some(Held { fingerprint, mut answer, .. }) => {
                if answer.secret {
                    let unopened = |e| Error::Internal(format!("the stored answer of an idempotency key: {e}"));
                    answer.body = self.sealing.open(&place(org, key), &answer.body).map_err(unopened)?;
                }
                KeyHeld::Answered { fingerprint, answer }
            }
        })
    }

    /// Records the answer of `key`, in the transaction of the work it
    /// answers, replacing the key's expired row if the lookup before the
    /// work found one (`replacing_expired`; a key almost never has one, so
    /// the delete is left out otherwise). If another request with the key
    /// committed first, the commit of this transaction fails on the key's
    /// primary key, and the work rolls back with it.
    #[allow(clippy::too_many_arguments)] // the key's row, and the store that seals its body
    pub async fn idempotency_record(
        &self,
        tx: &mut Tx,
        org: uuid::Uuid,
        key: &str,
        fingerprint: &str,
        t: &KeyTimes,
        answer: &StoredAnswer,
        replacing_expired: bool,
    ) -> Result<()> {
        if replacing_expired {
            tx.execute(
                sqlx::query("DELETE FROM idempotency_keys WHERE org_id = $1 AND idempotency_key = $2 AND created_at < $3")
                    .bind(org.to_string())
                    .bind(key)
                    .bind(ts(t.expired_before)),
            )
            .await?;
        }
        let (body, sealed) = match answer.secret {
            true => (None, Some(self.sealing.seal(&place(org, key), &answer.body))),
            false => (Some(answer.body.as_str()), None),
        };
        tx.execute(
            sqlx::query(super::prepared::INSERT_IDEMPOTENCY_KEY)
                .bind(org.to_string())
                .bind(key)
                .bind(fingerprint)
                .bind(i64::from(answer.status))
                .bind(serde_json::to_string(&answer.headers).expect("headers serialize"))
                .bind(body)
                .bind(ts(t.now))
                .bind(sealed),
        )
        .await
    }

    /// Deletes the keys created before `before` (the idempotency.expiry
    /// job), and schedules that job again for `next`.
    pub async fn forget_idempotency_keys(&self, before: DateTime<Utc>, next: DateTime<Utc>, now: DateTime<Utc>) -> Result<u64> {
        let mut tx = self.begin().await?;
        let gone = sqlx::query("DELETE FROM idempotency_keys WHERE created_at < $1").bind(ts(before)).execute(tx.conn().await?).await?.rows_affected();
        Store::schedule_job(&mut tx, JobKind::IdempotencyExpiry, EXPIRY_SUBJECT, None, next, now).await?;
        tx.commit().await?;
        Ok(gone)
    }
}

/// The idempotency.expiry job has one item, for every organisation.
pub const EXPIRY_SUBJECT: &str = "*";
