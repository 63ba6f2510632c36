//! The mail outbox: messages queued in the transaction that caused them,
//! leased to a sender one at a time, listed for the operator.

use super::{Store, Tx, parse_ts, ts};
use crate::error::Result;
use chrono::{DateTime, Utc};
use serde::Serialize;
use sqlx::Row;
use sqlx::any::AnyRow;

/// One message, as `switchboard admin mail list` prints it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Mail {
    pub mail_id: String,
    pub to: String,
    pub subject: String,
    pub body: String,
    /// queued, sending or sent
    pub status: String,
    pub attempts: i64,
    pub last_error: Option<String>,
    pub created_at: DateTime<Utc>,
    pub sent_at: Option<DateTime<Utc>>,
}

const COLUMNS: &str = "id, to_address, subject, body, status, attempts, last_error, created_at, sent_at";

fn from_row(r: &AnyRow) -> Result<Mail> {
    Ok(Mail {
        mail_id: r.try_get("id")?,
        to: r.try_get("to_address")?,
        subject: r.try_get("subject")?,
        body: r.try_get("body")?,
        status: r.try_get("status")?,
        attempts: r.try_get("attempts")?,
        last_error: r.try_get("last_error")?,
        created_at: parse_ts(&r.try_get::<String, _>("created_at")?)?,
        sent_at: r.try_get::<Option<String>, _>("sent_at")?.map(|t| parse_ts(&t)).transpose()?,
    })
}

/// Deletes discarded rows older than a day.
async fn forget_discarded(tx: &mut Tx<'_>, now: DateTime<Utc>) -> Result<()> {
    sqlx::query("DELETE FROM mail_outbox WHERE status = 'discarded' AND created_at < $1")
        .bind(ts(now - chrono::Duration::days(1)))
        .execute(&mut *tx.tx)
        .await?;
    Ok(())
}

impl Store {
    pub async fn queue_mail(tx: &mut Tx<'_>, to: &str, subject: &str, body: &str, now: DateTime<Utc>) -> Result<()> {
        // the same statements as discard_mail, so both cost alike
        forget_discarded(tx, now).await?;
        sqlx::query(
            "INSERT INTO mail_outbox (id, to_address, subject, body, status, created_at) VALUES ($1, $2, $3, $4, 'queued', $5)",
        )
        .bind(uuid::Uuid::new_v4().to_string())
        .bind(to)
        .bind(subject)
        .bind(body)
        .bind(ts(now))
        .execute(&mut *tx.tx)
        .await?;
        Ok(())
    }

    /// The stand-in for a mail not sent (a login for an address without a
    /// user): the same write as `queue_mail`, holding nothing, never sent or
    /// listed, and deleted a day later.
    pub async fn discard_mail(tx: &mut Tx<'_>, now: DateTime<Utc>) -> Result<()> {
        forget_discarded(tx, now).await?;
        sqlx::query(
            "INSERT INTO mail_outbox (id, to_address, subject, body, status, created_at) VALUES ($1, '', '', '', 'discarded', $2)",
        )
        .bind(uuid::Uuid::new_v4().to_string())
        .bind(ts(now))
        .execute(&mut *tx.tx)
        .await?;
        Ok(())
    }

    /// Every message, oldest first; only those to `to` (any case) when given.
    pub async fn mails(&self, to: Option<&str>) -> Result<Vec<Mail>> {
        let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT {COLUMNS} FROM mail_outbox WHERE status <> 'discarded' AND ($1 IS NULL OR LOWER(to_address) = $1) ORDER BY seq"
        )))
        .bind(to.map(|t| t.trim().to_lowercase()))
        .fetch_all(&self.pool)
        .await?;
        rows.iter().map(from_row).collect()
    }

    /// Leases the oldest message due for sending (queued and not waiting for
    /// a retry, or sending with an expired lease: its sender died) until
    /// `lease_until`.
    pub async fn lease_mail(&self, now: DateTime<Utc>, lease_until: DateTime<Utc>) -> Result<Option<Mail>> {
        let mut tx = self.begin().await?;
        let lock = match self.backend {
            super::Backend::Postgres => " FOR UPDATE SKIP LOCKED",
            super::Backend::Sqlite => "",
        };
        let row = sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT {COLUMNS} FROM mail_outbox
             WHERE status IN ('queued', 'sending') AND (lease_until IS NULL OR lease_until < $1)
             ORDER BY seq LIMIT 1{lock}"
        )))
        .bind(ts(now))
        .fetch_optional(&mut *tx.tx)
        .await?;
        let Some(row) = row else { return Ok(None) };
        let mail = from_row(&row)?;
        sqlx::query("UPDATE mail_outbox SET status = 'sending', lease_until = $1, attempts = attempts + 1 WHERE id = $2")
            .bind(ts(lease_until))
            .bind(&mail.mail_id)
            .execute(&mut *tx.tx)
            .await?;
        tx.commit().await?;
        Ok(Some(mail))
    }

    /// Records a send: `Ok` marks it sent; `Err((reason, retry_at))` puts it
    /// back in the queue until `retry_at`.
    pub async fn mail_sent(&self, id: &str, outcome: std::result::Result<(), (String, DateTime<Utc>)>, now: DateTime<Utc>) -> Result<()> {
        let mut tx = self.begin().await?;
        let q = match &outcome {
            Ok(()) => sqlx::query("UPDATE mail_outbox SET status = 'sent', sent_at = $1, lease_until = NULL WHERE id = $2")
                .bind(ts(now))
                .bind(id),
            Err((reason, retry_at)) => {
                sqlx::query("UPDATE mail_outbox SET status = 'queued', last_error = $1, lease_until = $2 WHERE id = $3")
                    .bind(reason.as_str())
                    .bind(ts(*retry_at))
                    .bind(id)
            }
        };
        q.execute(&mut *tx.tx).await?;
        tx.commit().await?;
        Ok(())
    }
}
