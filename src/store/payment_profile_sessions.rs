//! Payment profile sessions: rows, found by id or by their setup page's
//! token, moved only from the status they were read in.

use super::orders::metadata_text;
use super::payment_links::flag;
use super::payments::{ChargedMethod, provider_col};
use super::subscriptions::uuid_col;
use super::{Store, Tx, json_col, opt_ts, opt_uuid, parse_ts, state_col, ts};
use crate::error::{Error, Result};
use crate::payment_providers::ProviderName;
use crate::states::payments::PaymentProfileSessionStatus;
use chrono::{DateTime, NaiveDate, Utc};
use sqlx::any::AnyRow;
use sqlx::{AssertSqlSafe, Row};
use std::collections::BTreeMap;
use uuid::Uuid;

/// A payment profile session as stored; `token` is its setup page's address.
#[derive(Debug, Clone)]
pub struct ProfileSessionRow {
    pub id: Uuid,
    pub org: Uuid,
    pub customer_id: Uuid,
    pub order_id: Uuid,
    pub token: String,
    pub hosted_url: String,
    pub status: PaymentProfileSessionStatus,
    pub provider: ProviderName,
    pub return_url: String,
    pub cancel_url: Option<String>,
    pub set_default: bool,
    pub profile_id: Option<Uuid>,
    /// a method the provider asked the payer to authenticate
    pub pending_method: Option<ChargedMethod>,
    pub last_failure_code: Option<String>,
    pub cancellation_reason: Option<String>,
    pub metadata: Option<BTreeMap<String, String>>,
    pub expires_at: DateTime<Utc>,
    pub completed_at: Option<DateTime<Utc>>,
    pub canceled_at: Option<DateTime<Utc>>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

const COLUMNS: &str = "id, org_id, customer_id, order_id, token, hosted_url, status, provider, return_url, cancel_url, set_default, profile_id, \
     pending_method, last_failure_code, cancellation_reason, metadata, expires_at, completed_at, canceled_at, created_at, updated_at";

fn pending_text(m: &Option<ChargedMethod>) -> Option<String> {
    m.as_ref().map(|m| serde_json::json!({"token": m.token, "kind": m.kind, "displayName": m.display_name, "expiresOn": m.expires_on}).to_string())
}

fn pending_col(r: &AnyRow) -> Result<Option<ChargedMethod>> {
    let Some(v) = json_col::<serde_json::Value>(r, "pending_method")? else { return Ok(None) };
    let text = |k: &str| v[k].as_str().map(str::to_string).ok_or_else(|| Error::Internal(format!("pending_method without {k}")));
    let expires_on = v["expiresOn"].as_str().map(|d| d.parse::<NaiveDate>()).transpose().map_err(|e| Error::Internal(e.to_string()))?;
    Ok(Some(ChargedMethod { token: text("token")?, kind: text("kind")?, display_name: text("displayName")?, expires_on }))
}

fn session_row(r: &AnyRow) -> Result<ProfileSessionRow> {
    Ok(ProfileSessionRow {
        id: uuid_col(r, "id")?,
        org: uuid_col(r, "org_id")?,
        customer_id: uuid_col(r, "customer_id")?,
        order_id: uuid_col(r, "order_id")?,
        token: r.try_get("token")?,
        hosted_url: r.try_get("hosted_url")?,
        status: state_col(r, "status")?,
        provider: provider_col(r, "provider")?,
        return_url: r.try_get("return_url")?,
        cancel_url: r.try_get("cancel_url")?,
        set_default: flag(r, "set_default")?,
        profile_id: opt_uuid(r, "profile_id")?,
        pending_method: pending_col(r)?,
        last_failure_code: r.try_get("last_failure_code")?,
        cancellation_reason: r.try_get("cancellation_reason")?,
        metadata: json_col(r, "metadata")?,
        expires_at: parse_ts(&r.try_get::<String, _>("expires_at")?)?,
        completed_at: opt_ts(r, "completed_at")?,
        canceled_at: opt_ts(r, "canceled_at")?,
        created_at: parse_ts(&r.try_get::<String, _>("created_at")?)?,
        updated_at: parse_ts(&r.try_get::<String, _>("updated_at")?)?,
    })
}

impl Store {
    pub async fn insert_profile_session(tx: &mut Tx, s: &ProfileSessionRow) -> Result<()> {
        tx.execute(
            sqlx::query(
                "INSERT INTO payment_profile_sessions (id, org_id, customer_id, order_id, token, hosted_url, status, provider, return_url,
                   cancel_url, set_default, profile_id, pending_method, last_failure_code, cancellation_reason, metadata, expires_at,
                   completed_at, canceled_at, created_at, updated_at)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21)",
            )
            .bind(s.id.to_string())
            .bind(s.org.to_string())
            .bind(s.customer_id.to_string())
            .bind(s.order_id.to_string())
            .bind(&s.token)
            .bind(&s.hosted_url)
            .bind(s.status.stored())
            .bind(s.provider.as_str())
            .bind(&s.return_url)
            .bind(&s.cancel_url)
            .bind(s.set_default as i64)
            .bind(s.profile_id.map(|p| p.to_string()))
            .bind(pending_text(&s.pending_method))
            .bind(&s.last_failure_code)
            .bind(&s.cancellation_reason)
            .bind(metadata_text(&s.metadata))
            .bind(ts(s.expires_at))
            .bind(s.completed_at.map(ts))
            .bind(s.canceled_at.map(ts))
            .bind(ts(s.created_at))
            .bind(ts(s.updated_at)),
        )
        .await?;
        Ok(())
    }

    /// Writes what may change of `s` over the stored session if it is
    /// still in `from` (an ACTIVE session's pending method and last
    /// failure move it from ACTIVE to ACTIVE).
    pub async fn move_profile_session(tx: &mut Tx, s: &ProfileSessionRow, from: PaymentProfileSessionStatus) -> Result<bool> {
        let done = sqlx::query(
            "UPDATE payment_profile_sessions SET status = $1, profile_id = $2, pending_method = $3, last_failure_code = $4,
               cancellation_reason = $5, metadata = $6, completed_at = $7, canceled_at = $8, updated_at = $9
             WHERE id = $10 AND org_id = $11 AND status = $12",
        )
        .bind(s.status.stored())
        .bind(s.profile_id.map(|p| p.to_string()))
        .bind(pending_text(&s.pending_method))
        .bind(&s.last_failure_code)
        .bind(&s.cancellation_reason)
        .bind(metadata_text(&s.metadata))
        .bind(s.completed_at.map(ts))
        .bind(s.canceled_at.map(ts))
        .bind(ts(s.updated_at))
        .bind(s.id.to_string())
        .bind(s.org.to_string())
        .bind(from.stored())
        .execute(tx.conn().await?)
        .await?;
        Ok(done.rows_affected() == 1)
    }

    pub async fn profile_session(&self, org: Uuid, id: Uuid) -> Result<Option<ProfileSessionRow>> {
        let sql = format!("SELECT {COLUMNS} FROM payment_profile_sessions WHERE org_id = $1 AND id = $2");
        let row = sqlx::query(AssertSqlSafe(sql)).bind(org.to_string()).bind(id.to_string()).fetch_optional(&self.pool).await?;
        row.as_ref().map(session_row).transpose()
    }

    pub async fn profile_session_by_token(&self, token: &str) -> Result<Option<ProfileSessionRow>> {
        let sql = format!("SELECT {COLUMNS} FROM payment_profile_sessions WHERE token = $1");
        let row = sqlx::query(AssertSqlSafe(sql)).bind(token).fetch_optional(&self.pool).await?;
        row.as_ref().map(session_row).transpose()
    }
}
