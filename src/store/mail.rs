//! The mail outbox: messages queued in the transaction that caused them
//! (with the job that delivers each), their delivery history, listed for
//! the operator.

use super::{JobKind, Store, Tx, parse_ts, state_col, ts};
use crate::error::Result;
use chrono::{DateTime, Utc};
use serde::Serialize;
use sqlx::Row;
use sqlx::any::AnyRow;

/// Where a message is: waiting for delivery, delivered, or the stand-in of
/// a mail not sent (never listed).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum MailStatus {
    Queued,
    Sent,
    Discarded,
}

impl MailStatus {
    fn as_str(self) -> &'static str {
        match self {
            MailStatus::Queued => "queued",
            MailStatus::Sent => "sent",
            MailStatus::Discarded => "discarded",
        }
    }
}

impl std::str::FromStr for MailStatus {
    type Err = ();
    fn from_str(s: &str) -> std::result::Result<Self, ()> {
        [MailStatus::Queued, MailStatus::Sent, MailStatus::Discarded].into_iter().find(|m| m.as_str() == s).ok_or(())
    }
}

/// One message, as `switchboard admin mail list` prints it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Mail {
    pub mail_id: String,
    pub to: String,
    pub subject: String,
    pub body: String,
    pub status: MailStatus,
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
        status: state_col(r, "status")?,
        attempts: r.try_get("attempts")?,
        last_error: r.try_get("last_error")?,
        created_at: parse_ts(&r.try_get::<String, _>("created_at")?)?,
        sent_at: r.try_get::<Option<String>, _>("sent_at")?.map(|t| parse_ts(&t)).transpose()?,
    })
}

/// How long a discarded stand-in, or a sent message's record, is kept
/// before the cleanup deletes it.
const DISCARDED_KEPT_HOURS: i64 = 24;

/// Inserts a message.
async fn insert(tx: &mut Tx, to: &str, subject: &str, body: &str, status: MailStatus, now: DateTime<Utc>) -> Result<String> {
    let id = uuid::Uuid::new_v4().to_string();
    tx.execute(
        sqlx::query("INSERT INTO mail_outbox (id, to_address, subject, body, status, created_at) VALUES ($1, $2, $3, $4, $5, $6)")
            .bind(&id)
            .bind(to)
            .bind(subject)
            .bind(body)
            .bind(status.as_str())
            .bind(ts(now)),
    )
    .await?;
    Ok(id)
}

impl Store {
    /// A message, and the job that delivers it. Two writes, as
    /// `discard_mail`, so both cost alike.
    pub async fn queue_mail(tx: &mut Tx, to: &str, subject: &str, body: &str, now: DateTime<Utc>) -> Result<()> {
        let id = insert(tx, to, subject, body, MailStatus::Queued, now).await?;
        Store::schedule_job(tx, JobKind::MailDelivery, &id, None, now, now).await
    }

    /// A message written at an organisation's time `at` (a sandbox clock
    /// may run ahead of the server's), delivered at once: mail goes out on
    /// the server's time, whatever the organisation's.
    pub async fn queue_mail_of_org(tx: &mut Tx, to: &str, subject: &str, body: &str, at: DateTime<Utc>) -> Result<()> {
        let id = insert(tx, to, subject, body, MailStatus::Queued, at).await?;
        Store::schedule_job(tx, JobKind::MailDelivery, &id, None, DateTime::UNIX_EPOCH, at).await
    }

    /// The stand-in for a mail not sent (a login for an address without a
    /// user): the same two writes as `queue_mail`, a row holding nothing
    /// (never sent or listed) and the job that deletes it a day later.
    pub async fn discard_mail(tx: &mut Tx, now: DateTime<Utc>) -> Result<()> {
        let id = insert(tx, "", "", "", MailStatus::Discarded, now).await?;
        let due = now + chrono::Duration::hours(DISCARDED_KEPT_HOURS);
        Store::schedule_job(tx, JobKind::MailCleanup, &id, None, due, now).await
    }

    /// Deletes the discarded stand-in or sent message `id` (the
    /// mail.cleanup job); a message still queued stays.
    pub async fn forget_discarded_mail(&self, id: &str) -> Result<()> {
        let mut tx = self.begin().await?;
        tx.execute(sqlx::query("DELETE FROM mail_outbox WHERE id = $1 AND status IN ('discarded', 'sent')").bind(id)).await?;
        tx.commit().await
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

    /// The message `id`, if it is still in the outbox.
    pub async fn mail(&self, id: &str) -> Result<Option<Mail>> {
        let row = sqlx::query(sqlx::AssertSqlSafe(format!("SELECT {COLUMNS} FROM mail_outbox WHERE id = $1"))).bind(id).fetch_optional(&self.pool).await?;
        row.as_ref().map(from_row).transpose()
    }

    /// Records a try: `Ok` marks the message sent, blanks its subject and
    /// body (a login code is no one's to read once it is on its way) and
    /// has the cleanup delete the record a day later; `Err(reason)` keeps it
    /// queued with the reason (its job says when it is tried again).
    pub async fn mail_sent(&self, id: &str, outcome: std::result::Result<(), String>, now: DateTime<Utc>) -> Result<()> {
        let mut tx = self.begin().await?;
        match &outcome {
            Ok(()) => {
                let sent = "UPDATE mail_outbox SET status = 'sent', sent_at = $1, attempts = attempts + 1, subject = '', body = '' WHERE id = $2";
                tx.execute(sqlx::query(sent).bind(ts(now)).bind(id)).await?;
                let due = now + chrono::Duration::hours(DISCARDED_KEPT_HOURS);
                Store::schedule_job(&mut tx, JobKind::MailCleanup, id, None, due, now).await?;
            }
            Err(reason) => {
                let failed = "UPDATE mail_outbox SET last_error = $1, attempts = attempts + 1 WHERE id = $2";
                tx.execute(sqlx::query(failed).bind(reason.as_str()).bind(id)).await?;
            }
        }
        tx.commit().await?;
        Ok(())
    }
}
