//! The sandbox payment providers' own ledger (migrations/*/0026): the
//! methods they keep, the charges and refunds they made, each once by its
//! idempotency key. It stands for what a real provider keeps on its side,
//! so it is written in transactions of its own, never in a request's.

use super::subscriptions::opt_date;
use super::{Store, opt_ts, parse_uuid, ts};
use crate::error::{Error, Result};
use chrono::{DateTime, NaiveDate, Utc};
use sqlx::Row;
use sqlx::any::AnyRow;
use uuid::Uuid;

/// A method a sandbox provider keeps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxMethod {
    pub provider: String,
    pub token: String,
    pub kind: String,
    pub behaviour: String,
    pub display_name: String,
    pub expires_on: Option<NaiveDate>,
}

/// A charge a sandbox provider made: where it stands, and where it goes
/// when it settles (`settles_at`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxCharge {
    pub attempt: Uuid,
    pub provider: String,
    pub token: String,
    pub amount_minor: i64,
    pub currency: String,
    pub status: String,
    pub failure_code: Option<String>,
    pub settles_at: Option<DateTime<Utc>>,
    pub settles_to: Option<String>,
    pub settles_code: Option<String>,
}

/// A refund a sandbox provider made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxRefund {
    pub refund: Uuid,
    pub attempt: Uuid,
    pub amount_minor: i64,
    pub status: String,
    pub failure_code: Option<String>,
}

fn method_row(r: &AnyRow) -> Result<SandboxMethod> {
    Ok(SandboxMethod {
        provider: r.try_get("provider")?,
        token: r.try_get("token")?,
        kind: r.try_get("kind")?,
        behaviour: r.try_get("behaviour")?,
        display_name: r.try_get("display_name")?,
        expires_on: opt_date(r, "expires_on")?,
    })
}

fn charge_row(r: &AnyRow) -> Result<SandboxCharge> {
    Ok(SandboxCharge {
        attempt: parse_uuid(&r.try_get::<String, _>("attempt_id")?)?,
        provider: r.try_get("provider")?,
        token: r.try_get("token")?,
        amount_minor: r.try_get("amount_minor")?,
        currency: r.try_get("currency")?,
        status: r.try_get("status")?,
        failure_code: r.try_get("failure_code")?,
        settles_at: opt_ts(r, "settles_at")?,
        settles_to: r.try_get("settles_to")?,
        settles_code: r.try_get("settles_code")?,
    })
}

const CHARGE_COLUMNS: &str = "attempt_id, provider, token, amount_minor, currency, status, failure_code, settles_at, settles_to, settles_code";

impl Store {
    pub async fn insert_sandbox_method(&self, m: &SandboxMethod, now: DateTime<Utc>) -> Result<()> {
        let mut tx = self.begin().await?;
        tx.execute(
            sqlx::query(
                "INSERT INTO sandbox_payment_methods (provider, token, kind, behaviour, display_name, expires_on, created_at)
                 VALUES ($1, $2, $3, $4, $5, $6, $7)",
            )
            .bind(&m.provider)
            .bind(&m.token)
            .bind(&m.kind)
            .bind(&m.behaviour)
            .bind(&m.display_name)
            .bind(m.expires_on.map(|d| d.to_string()))
            .bind(ts(now)),
        )
        .await?;
        tx.commit_now().await
    }

    pub async fn sandbox_method(&self, provider: &str, token: &str) -> Result<Option<SandboxMethod>> {
        let row =
            sqlx::query("SELECT provider, token, kind, behaviour, display_name, expires_on FROM sandbox_payment_methods WHERE provider = $1 AND token = $2")
                .bind(provider)
                .bind(token)
                .fetch_optional(&self.pool)
                .await?;
        row.as_ref().map(method_row).transpose()
    }

    /// Records `charge` unless its attempt was recorded before; the charge
    /// as recorded, the first time's when there was one.
    pub async fn sandbox_charge_once(&self, charge: &SandboxCharge, now: DateTime<Utc>) -> Result<SandboxCharge> {
        let mut tx = self.begin().await?;
        tx.execute(
            sqlx::query(
                "INSERT INTO sandbox_payment_charges (attempt_id, provider, token, amount_minor, currency, status, failure_code, settles_at, settles_to, settles_code, created_at, updated_at)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $11) ON CONFLICT (attempt_id) DO NOTHING",
            )
            .bind(charge.attempt.to_string())
            .bind(&charge.provider)
            .bind(&charge.token)
            .bind(charge.amount_minor)
            .bind(&charge.currency)
            .bind(&charge.status)
            .bind(charge.failure_code.as_deref())
            .bind(charge.settles_at.map(ts))
            .bind(charge.settles_to.as_deref())
            .bind(charge.settles_code.as_deref())
            .bind(ts(now)),
        )
        .await?;
        tx.commit_now().await?;
        self.sandbox_charge(charge.attempt).await?.ok_or_else(|| Error::Internal(format!("sandbox charge {} vanished", charge.attempt)))
    }

    pub async fn sandbox_charge(&self, attempt: Uuid) -> Result<Option<SandboxCharge>> {
        let sql = format!("SELECT {CHARGE_COLUMNS} FROM sandbox_payment_charges WHERE attempt_id = $1");
        let row = sqlx::query(sqlx::AssertSqlSafe(sql)).bind(attempt.to_string()).fetch_optional(&self.pool).await?;
        row.as_ref().map(charge_row).transpose()
    }

    /// Moves `provider`'s charge of `attempt` from `from` to `to`; false
    /// when it was not in `from` (another caller moved it first).
    pub async fn move_sandbox_charge(
        &self,
        provider: &str,
        attempt: Uuid,
        from: &str,
        to: &str,
        failure_code: Option<&str>,
        now: DateTime<Utc>,
    ) -> Result<bool> {
        let mut tx = self.begin().await?;
        let done = sqlx::query(
            "UPDATE sandbox_payment_charges SET status = $1, failure_code = $2, updated_at = $3 WHERE attempt_id = $4 AND status = $5 AND provider = $6",
        )
        .bind(to)
        .bind(failure_code)
        .bind(ts(now))
        .bind(attempt.to_string())
        .bind(from)
        .bind(provider)
        .execute(tx.conn().await?)
        .await?;
        tx.commit_now().await?;
        Ok(done.rows_affected() == 1)
    }

    /// Records `refund` unless it was recorded before: FAILED, with a code
    /// saying why, when the charge is not SUCCEEDED or would be refunded
    /// beyond its amount. The refund as recorded. The refund's row comes
    /// first, so that two calls with one id count it once; the charge's
    /// refunded total moves in one conditional update, so that two refunds
    /// at once never take more than the charge between them.
    pub async fn sandbox_refund_once(&self, refund: Uuid, attempt: Uuid, amount_minor: i64, now: DateTime<Utc>) -> Result<SandboxRefund> {
        let mut tx = self.begin().await?;
        let fresh = sqlx::query(
            "INSERT INTO sandbox_payment_refunds (refund_id, attempt_id, amount_minor, status, created_at)
             VALUES ($1, $2, $3, 'PENDING', $4) ON CONFLICT (refund_id) DO NOTHING",
        )
        .bind(refund.to_string())
        .bind(attempt.to_string())
        .bind(amount_minor)
        .bind(ts(now))
        .execute(tx.conn().await?)
        .await?
        .rows_affected()
            == 1;
        if fresh {
            let taken = sqlx::query(
                "UPDATE sandbox_payment_charges SET refunded_minor = refunded_minor + $1
                 WHERE attempt_id = $2 AND status = 'SUCCEEDED' AND refunded_minor + $1 <= amount_minor",
            )
            .bind(amount_minor)
            .bind(attempt.to_string())
            .execute(tx.conn().await?)
            .await?
            .rows_affected()
                == 1;
            let refused = if taken {
                None
            } else {
                let charge = sqlx::query("SELECT status FROM sandbox_payment_charges WHERE attempt_id = $1")
                    .bind(attempt.to_string())
                    .fetch_optional(tx.conn().await?)
                    .await?;
                Some(match charge {
                    None => "charge_not_found",
                    Some(c) if c.try_get::<String, _>("status")? != "SUCCEEDED" => "charge_not_succeeded",
                    Some(_) => "refund_exceeds_charge",
                })
            };
            tx.execute(
                sqlx::query("UPDATE sandbox_payment_refunds SET status = $1, failure_code = $2 WHERE refund_id = $3")
                    .bind(if refused.is_some() { "FAILED" } else { "SUCCEEDED" })
                    .bind(refused)
                    .bind(refund.to_string()),
            )
            .await?;
        }
        tx.commit_now().await?;
        self.sandbox_refund(refund).await?.ok_or_else(|| Error::Internal(format!("sandbox refund {refund} vanished")))
    }

    pub async fn sandbox_refund(&self, refund: Uuid) -> Result<Option<SandboxRefund>> {
        let row = sqlx::query("SELECT refund_id, attempt_id, amount_minor, status, failure_code FROM sandbox_payment_refunds WHERE refund_id = $1")
            .bind(refund.to_string())
            .fetch_optional(&self.pool)
            .await?;
        let Some(r) = row else { return Ok(None) };
        Ok(Some(SandboxRefund {
            refund: parse_uuid(&r.try_get::<String, _>("refund_id")?)?,
            attempt: parse_uuid(&r.try_get::<String, _>("attempt_id")?)?,
            amount_minor: r.try_get("amount_minor")?,
            status: r.try_get("status")?,
            failure_code: r.try_get("failure_code")?,
        }))
    }
}
