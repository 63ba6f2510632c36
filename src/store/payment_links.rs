//! Payment links and saved payment profiles: rows, moves guarded by the
//! status they were read in, and lists.

use super::orders::metadata_text;
use super::payments::provider_col;
use super::subscriptions::opt_date;
use super::{Cursor, ListQuery, Page, Store, Tx, json_col, opt_ts, opt_uuid, parse_ts, parse_uuid, state_col, ts};
use crate::error::Result;
use crate::payment_providers::ProviderName;
use crate::states::payments::{PaymentLinkStatus, PaymentProfileStatus};
use chrono::{DateTime, NaiveDate, Utc};
use serde_json::Value;
use sqlx::any::AnyRow;
use sqlx::{AssertSqlSafe, Row};
use std::collections::BTreeMap;
use uuid::Uuid;

/// A payment link as stored; `token` is its page's address.
#[derive(Debug, Clone)]
pub struct LinkRow {
    pub id: Uuid,
    pub org: Uuid,
    pub customer_id: Uuid,
    pub order_id: Option<Uuid>,
    /// the invoice it collects (none for an order's)
    pub invoice_id: Option<Uuid>,
    pub intent_id: Uuid,
    pub token: String,
    pub hosted_url: String,
    pub status: PaymentLinkStatus,
    pub provider: ProviderName,
    pub amount_minor: i64,
    pub currency: String,
    pub profile_id: Option<Uuid>,
    pub save_profile: bool,
    pub set_default: bool,
    pub autopay: bool,
    pub description: Option<String>,
    pub return_url: Option<String>,
    pub cancel_url: Option<String>,
    pub failure_reason: Option<String>,
    /// a payment of it succeeded (COMPLETED, or FAILED and refunded)
    pub paid: bool,
    pub metadata: Option<BTreeMap<String, String>>,
    pub expires_at: DateTime<Utc>,
    pub completed_at: Option<DateTime<Utc>>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

#[derive(Debug, Default)]
pub struct LinkFilter {
    pub customer: Option<Uuid>,
    pub order: Option<Uuid>,
    pub statuses: Vec<PaymentLinkStatus>,
    pub visible_to: Option<Uuid>,
}

/// A saved payment method of a customer; `token` is the provider's.
#[derive(Debug, Clone)]
pub struct ProfileRow {
    pub id: Uuid,
    pub org: Uuid,
    pub customer_id: Uuid,
    pub provider: ProviderName,
    pub method_type: String,
    pub status: PaymentProfileStatus,
    pub display_name: String,
    pub token: String,
    pub expires_on: Option<NaiveDate>,
    pub billing_details: Option<Value>,
    pub metadata: Option<BTreeMap<String, String>>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

const LINK_COLUMNS: &str = "seq, id, org_id, customer_id, order_id, invoice_id, intent_id, token, hosted_url, status, provider, amount_minor, currency, profile_id, save_profile, \
     set_default, autopay, description, return_url, cancel_url, failure_reason, paid, metadata, expires_at, completed_at, created_at, updated_at";

pub(super) fn flag(r: &AnyRow, col: &str) -> Result<bool> {
    Ok(r.try_get::<i64, _>(col)? != 0)
}

fn link_row(r: &AnyRow) -> Result<(i64, LinkRow)> {
    Ok((
        r.try_get("seq")?,
        LinkRow {
            id: parse_uuid(&r.try_get::<String, _>("id")?)?,
            org: parse_uuid(&r.try_get::<String, _>("org_id")?)?,
            customer_id: parse_uuid(&r.try_get::<String, _>("customer_id")?)?,
            order_id: opt_uuid(r, "order_id")?,
            invoice_id: opt_uuid(r, "invoice_id")?,
            intent_id: parse_uuid(&r.try_get::<String, _>("intent_id")?)?,
            token: r.try_get("token")?,
            hosted_url: r.try_get("hosted_url")?,
            status: state_col(r, "status")?,
            provider: provider_col(r, "provider")?,
            amount_minor: r.try_get("amount_minor")?,
            currency: r.try_get("currency")?,
            profile_id: opt_uuid(r, "profile_id")?,
            save_profile: flag(r, "save_profile")?,
            set_default: flag(r, "set_default")?,
            autopay: flag(r, "autopay")?,
            description: r.try_get("description")?,
            return_url: r.try_get("return_url")?,
            cancel_url: r.try_get("cancel_url")?,
            failure_reason: r.try_get("failure_reason")?,
            paid: flag(r, "paid")?,
            metadata: json_col(r, "metadata")?,
            expires_at: parse_ts(&r.try_get::<String, _>("expires_at")?)?,
            completed_at: opt_ts(r, "completed_at")?,
            created_at: parse_ts(&r.try_get::<String, _>("created_at")?)?,
            updated_at: parse_ts(&r.try_get::<String, _>("updated_at")?)?,
        },
    ))
}

const PROFILE_COLUMNS: &str =
    "seq, id, org_id, customer_id, provider, method_type, status, display_name, token, expires_on, billing_details, metadata, created_at, updated_at";

fn profile_row(r: &AnyRow) -> Result<ProfileRow> {
    Ok(ProfileRow {
        id: parse_uuid(&r.try_get::<String, _>("id")?)?,
        org: parse_uuid(&r.try_get::<String, _>("org_id")?)?,
        customer_id: parse_uuid(&r.try_get::<String, _>("customer_id")?)?,
        provider: provider_col(r, "provider")?,
        method_type: r.try_get("method_type")?,
        status: state_col(r, "status")?,
        display_name: r.try_get("display_name")?,
        token: r.try_get("token")?,
        expires_on: opt_date(r, "expires_on")?,
        billing_details: json_col(r, "billing_details")?,
        metadata: json_col(r, "metadata")?,
        created_at: parse_ts(&r.try_get::<String, _>("created_at")?)?,
        updated_at: parse_ts(&r.try_get::<String, _>("updated_at")?)?,
    })
}

impl Store {
    pub async fn insert_link(tx: &mut Tx, l: &LinkRow) -> Result<()> {
        tx.execute(
            sqlx::query(
                "INSERT INTO payment_links (id, org_id, customer_id, order_id, intent_id, token, hosted_url, status, provider, amount_minor,
                   currency, profile_id, save_profile, set_default, autopay, description, return_url, cancel_url, failure_reason, paid,
                   metadata, expires_at, completed_at, created_at, updated_at, invoice_id)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24, $25, $26)",
            )
            .bind(l.id.to_string())
            .bind(l.org.to_string())
            .bind(l.customer_id.to_string())
            .bind(l.order_id.map(|u| u.to_string()))
            .bind(l.intent_id.to_string())
            .bind(&l.token)
            .bind(&l.hosted_url)
            .bind(l.status.stored())
            .bind(l.provider.as_str())
            .bind(l.amount_minor)
            .bind(&l.currency)
            .bind(l.profile_id.map(|u| u.to_string()))
            .bind(l.save_profile as i64)
            .bind(l.set_default as i64)
            .bind(l.autopay as i64)
            .bind(&l.description)
            .bind(&l.return_url)
            .bind(&l.cancel_url)
            .bind(&l.failure_reason)
            .bind(l.paid as i64)
            .bind(metadata_text(&l.metadata))
            .bind(ts(l.expires_at))
            .bind(l.completed_at.map(ts))
            .bind(ts(l.created_at))
            .bind(ts(l.updated_at))
            .bind(l.invoice_id.map(|u| u.to_string())),
        )
        .await?;
        Ok(())
    }

    /// Writes `l`'s status and what goes with it over the stored link if it
    /// is still in status `from`: false when another request moved it first.
    pub async fn move_link(tx: &mut Tx, l: &LinkRow, from: PaymentLinkStatus) -> Result<bool> {
        let done = sqlx::query(
            "UPDATE payment_links SET status = $1, failure_reason = $2, paid = $3, completed_at = $4, updated_at = $5
             WHERE id = $6 AND org_id = $7 AND status = $8",
        )
        .bind(l.status.stored())
        .bind(&l.failure_reason)
        .bind(l.paid as i64)
        .bind(l.completed_at.map(ts))
        .bind(ts(l.updated_at))
        .bind(l.id.to_string())
        .bind(l.org.to_string())
        .bind(from.stored())
        .execute(tx.conn().await?)
        .await?;
        Ok(done.rows_affected() == 1)
    }

    pub async fn link(&self, org: Uuid, id: Uuid) -> Result<Option<LinkRow>> {
        let sql = format!("SELECT {LINK_COLUMNS} FROM payment_links WHERE org_id = $1 AND id = $2");
        let row = sqlx::query(AssertSqlSafe(sql)).bind(org.to_string()).bind(id.to_string()).fetch_optional(&self.pool).await?;
        Ok(row.as_ref().map(link_row).transpose()?.map(|(_, l)| l))
    }

    /// The link whose page is at `token` (in any organisation: the token
    /// alone is the page's key).
    pub async fn link_by_token(&self, token: &str) -> Result<Option<LinkRow>> {
        let sql = format!("SELECT {LINK_COLUMNS} FROM payment_links WHERE token = $1");
        let row = sqlx::query(AssertSqlSafe(sql)).bind(token).fetch_optional(&self.pool).await?;
        Ok(row.as_ref().map(link_row).transpose()?.map(|(_, l)| l))
    }

    /// The order's links in `statuses`, as `tx` sees them.
    pub async fn links_of_order_in(tx: &mut Tx, org: Uuid, order: Uuid, status: PaymentLinkStatus) -> Result<Vec<LinkRow>> {
        let sql = format!("SELECT {LINK_COLUMNS} FROM payment_links WHERE org_id = $1 AND order_id = $2 AND status = $3");
        let rows = sqlx::query(AssertSqlSafe(sql)).bind(org.to_string()).bind(order.to_string()).bind(status.stored()).fetch_all(tx.conn().await?).await?;
        rows.iter().map(|r| link_row(r).map(|(_, l)| l)).collect()
    }

    /// The links of invoice `invoice` in `status`, as `tx` sees them.
    pub async fn links_of_invoice_in(tx: &mut Tx, org: Uuid, invoice: Uuid, status: PaymentLinkStatus) -> Result<Vec<LinkRow>> {
        let sql = format!("SELECT {LINK_COLUMNS} FROM payment_links WHERE org_id = $1 AND invoice_id = $2 AND status = $3");
        let rows = sqlx::query(AssertSqlSafe(sql)).bind(org.to_string()).bind(invoice.to_string()).bind(status.stored()).fetch_all(tx.conn().await?).await?;
        rows.iter().map(|r| link_row(r).map(|(_, l)| l)).collect()
    }

    /// The links of `org` in `status` whose expiry has passed by `now`.
    pub async fn links_due_to_expire(&self, org: Uuid, now: DateTime<Utc>) -> Result<Vec<Uuid>> {
        let rows = sqlx::query("SELECT id FROM payment_links WHERE org_id = $1 AND status = $2 AND expires_at <= $3")
            .bind(org.to_string())
            .bind(PaymentLinkStatus::Active.stored())
            .bind(ts(now))
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(|r| parse_uuid(&r.try_get::<String, _>("id")?)).collect()
    }

    pub async fn links(&self, org: Uuid, f: &LinkFilter, after: Option<Cursor>, limit: usize) -> Result<Page<LinkRow>> {
        let mut q = ListQuery::new(format!("SELECT {LINK_COLUMNS} FROM payment_links WHERE org_id = $1 AND seq > $2"));
        if let Some(c) = f.customer {
            q.eq("customer_id", c.to_string());
        }
        if let Some(o) = f.order {
            q.eq("order_id", o.to_string());
        }
        if !f.statuses.is_empty() {
            q.any_of("status", f.statuses.iter().map(|s| s.stored().to_string()));
        }
        q.visible_to("customer_id", f.visible_to);
        let rows = q.fetch(&self.pool, org, after, "seq", limit).await?;
        Ok(Page::from_rows(rows.iter().map(link_row).collect::<Result<_>>()?, limit))
    }

    pub async fn insert_profile(tx: &mut Tx, p: &ProfileRow) -> Result<()> {
        tx.execute(
            sqlx::query(
                "INSERT INTO payment_profiles (id, org_id, customer_id, provider, method_type, status, display_name, token, expires_on,
                   billing_details, metadata, created_at, updated_at)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)",
            )
            .bind(p.id.to_string())
            .bind(p.org.to_string())
            .bind(p.customer_id.to_string())
            .bind(p.provider.as_str())
            .bind(&p.method_type)
            .bind(p.status.stored())
            .bind(&p.display_name)
            .bind(&p.token)
            .bind(p.expires_on.map(|d| d.to_string()))
            .bind(p.billing_details.as_ref().map(Value::to_string))
            .bind(metadata_text(&p.metadata))
            .bind(ts(p.created_at))
            .bind(ts(p.updated_at)),
        )
        .await?;
        Ok(())
    }

    /// Writes `p`'s status over the stored profile if it is still in `from`.
    pub async fn move_profile(tx: &mut Tx, p: &ProfileRow, from: PaymentProfileStatus) -> Result<bool> {
        let done = sqlx::query("UPDATE payment_profiles SET status = $1, updated_at = $2 WHERE id = $3 AND org_id = $4 AND status = $5")
            .bind(p.status.stored())
            .bind(ts(p.updated_at))
            .bind(p.id.to_string())
            .bind(p.org.to_string())
            .bind(from.stored())
            .execute(tx.conn().await?)
            .await?;
        Ok(done.rows_affected() == 1)
    }

    pub async fn profile(&self, org: Uuid, id: Uuid) -> Result<Option<ProfileRow>> {
        let sql = format!("SELECT {PROFILE_COLUMNS} FROM payment_profiles WHERE org_id = $1 AND id = $2");
        let row = sqlx::query(AssertSqlSafe(sql)).bind(org.to_string()).bind(id.to_string()).fetch_optional(&self.pool).await?;
        row.as_ref().map(profile_row).transpose()
    }

    /// Every profile of the customer, oldest first.
    pub async fn profiles_of(&self, org: Uuid, customer: Uuid) -> Result<Vec<ProfileRow>> {
        let sql = format!("SELECT {PROFILE_COLUMNS} FROM payment_profiles WHERE org_id = $1 AND customer_id = $2 ORDER BY seq");
        sqlx::query(AssertSqlSafe(sql)).bind(org.to_string()).bind(customer.to_string()).fetch_all(&self.pool).await?.iter().map(profile_row).collect()
    }
}
