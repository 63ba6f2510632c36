//! Payment intents, their charge attempts and refunds: rows, moves guarded
//! by the status they were read in, and lists.

use super::subscriptions::{opt_date, ts_col, uuid_col};
use super::{Cursor, ListQuery, Page, Store, Tx, json_col, opt_uuid, state_col, ts};
use crate::error::{Error, Result};
use crate::payment_providers::ProviderName;
use crate::states::payments::{ChargeStatus, PaymentIntentStatus, RefundStatus};
use chrono::{DateTime, NaiveDate, Utc};
use serde_json::Value;
use sqlx::any::AnyRow;
use sqlx::{AssertSqlSafe, Row};
use uuid::Uuid;

/// A payment intent as stored; `lines` holds its line items as collection
/// started (and what submitting the order created, once it is).
#[derive(Debug, Clone)]
pub struct IntentRow {
    pub id: Uuid,
    pub org: Uuid,
    pub customer_id: Uuid,
    pub order_id: Option<Uuid>,
    pub link_id: Option<Uuid>,
    pub session_id: Option<Uuid>,
    /// the invoice it collects (autopay, or an invoice's payment link)
    pub invoice_id: Option<Uuid>,
    pub status: PaymentIntentStatus,
    pub amount_minor: i64,
    pub currency: String,
    pub description: Option<String>,
    pub due_at: Option<DateTime<Utc>>,
    pub lines: Value,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// What a charge was made with, as the provider let it be shown.
#[derive(Debug, Clone)]
pub struct ChargedMethod {
    pub token: String,
    pub kind: String,
    pub display_name: String,
    pub expires_on: Option<NaiveDate>,
}

/// One attempt to charge; its id is the provider's idempotency key.
#[derive(Debug, Clone)]
pub struct ChargeRow {
    pub id: Uuid,
    pub org: Uuid,
    pub intent_id: Uuid,
    pub status: ChargeStatus,
    pub amount_minor: i64,
    pub currency: String,
    pub provider: ProviderName,
    pub method: ChargedMethod,
    pub profile_id: Option<Uuid>,
    pub off_session: bool,
    pub failure_code: Option<String>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// Money given back from a charge; its id is the provider's idempotency key.
#[derive(Debug, Clone)]
pub struct RefundRow {
    pub id: Uuid,
    pub org: Uuid,
    pub intent_id: Uuid,
    pub charge_id: Uuid,
    pub status: RefundStatus,
    pub amount_minor: i64,
    pub reason: Option<String>,
    pub failure_code: Option<String>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

#[derive(Debug, Default)]
pub struct IntentFilter {
    pub customers: Option<Vec<Uuid>>,
    pub statuses: Vec<PaymentIntentStatus>,
    pub visible_to: Option<Uuid>,
    /// only intents created within this period
    pub created: super::Period,
}

pub(super) fn provider_col(r: &AnyRow, col: &str) -> Result<ProviderName> {
    let text: String = r.try_get(col)?;
    ProviderName::parse(&text).ok_or_else(|| Error::Internal(format!("column {col}: unknown provider {text:?}")))
}

const INTENT_COLUMNS: &str = "seq, id, org_id, customer_id, order_id, link_id, session_id, invoice_id, status, amount_minor, currency, description, due_at, line_items, created_at, updated_at";

fn intent_row(r: &AnyRow) -> Result<(i64, IntentRow)> {
    Ok((
        r.try_get("seq")?,
        IntentRow {
            id: uuid_col(r, "id")?,
            org: uuid_col(r, "org_id")?,
            customer_id: uuid_col(r, "customer_id")?,
            order_id: opt_uuid(r, "order_id")?,
            link_id: opt_uuid(r, "link_id")?,
            session_id: opt_uuid(r, "session_id")?,
            invoice_id: opt_uuid(r, "invoice_id")?,
            status: state_col(r, "status")?,
            amount_minor: r.try_get("amount_minor")?,
            currency: r.try_get("currency")?,
            description: r.try_get("description")?,
            due_at: super::opt_ts(r, "due_at")?,
            lines: json_col(r, "line_items")?.unwrap_or(Value::Null),
            created_at: ts_col(r, "created_at")?,
            updated_at: ts_col(r, "updated_at")?,
        },
    ))
}

const CHARGE_COLUMNS: &str = "id, org_id, intent_id, status, amount_minor, currency, provider, method_token, method_type, method_display, \
     method_expires_on, profile_id, off_session, failure_code, created_at, updated_at";

fn charge_row(r: &AnyRow) -> Result<ChargeRow> {
    Ok(ChargeRow {
        id: uuid_col(r, "id")?,
        org: uuid_col(r, "org_id")?,
        intent_id: uuid_col(r, "intent_id")?,
        status: state_col(r, "status")?,
        amount_minor: r.try_get("amount_minor")?,
        currency: r.try_get("currency")?,
        provider: provider_col(r, "provider")?,
        method: ChargedMethod {
            token: r.try_get("method_token")?,
            kind: r.try_get("method_type")?,
            display_name: r.try_get("method_display")?,
            expires_on: opt_date(r, "method_expires_on")?,
        },
        profile_id: opt_uuid(r, "profile_id")?,
        off_session: r.try_get::<i64, _>("off_session")? != 0,
        failure_code: r.try_get("failure_code")?,
        created_at: ts_col(r, "created_at")?,
        updated_at: ts_col(r, "updated_at")?,
    })
}

const REFUND_COLUMNS: &str = "id, org_id, intent_id, charge_id, status, amount_minor, reason, failure_code, created_at, updated_at";

fn refund_row(r: &AnyRow) -> Result<RefundRow> {
    Ok(RefundRow {
        id: uuid_col(r, "id")?,
        org: uuid_col(r, "org_id")?,
        intent_id: uuid_col(r, "intent_id")?,
        charge_id: uuid_col(r, "charge_id")?,
        status: state_col(r, "status")?,
        amount_minor: r.try_get("amount_minor")?,
        reason: r.try_get("reason")?,
        failure_code: r.try_get("failure_code")?,
        created_at: ts_col(r, "created_at")?,
        updated_at: ts_col(r, "updated_at")?,
    })
}

impl Store {
    pub async fn insert_intent(tx: &mut Tx, i: &IntentRow) -> Result<()> {
        tx.execute(
            sqlx::query(
                "INSERT INTO payment_intents (id, org_id, customer_id, order_id, link_id, session_id, status, amount_minor, currency, description,
                   due_at, line_items, created_at, updated_at, invoice_id)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)",
            )
            .bind(i.id.to_string())
            .bind(i.org.to_string())
            .bind(i.customer_id.to_string())
            .bind(i.order_id.map(|u| u.to_string()))
            .bind(i.link_id.map(|u| u.to_string()))
            .bind(i.session_id.map(|u| u.to_string()))
            .bind(i.status.stored())
            .bind(i.amount_minor)
            .bind(&i.currency)
            .bind(&i.description)
            .bind(i.due_at.map(ts))
            .bind(i.lines.to_string())
            .bind(ts(i.created_at))
            .bind(ts(i.updated_at))
            .bind(i.invoice_id.map(|u| u.to_string())),
        )
        .await?;
        Ok(())
    }

    /// Writes `i`'s status, lines and time over the stored intent if it is
    /// still in status `from`: false when another request moved it first.
    pub async fn move_intent(tx: &mut Tx, i: &IntentRow, from: PaymentIntentStatus) -> Result<bool> {
        let done = sqlx::query("UPDATE payment_intents SET status = $1, line_items = $2, updated_at = $3 WHERE id = $4 AND org_id = $5 AND status = $6")
            .bind(i.status.stored())
            .bind(i.lines.to_string())
            .bind(ts(i.updated_at))
            .bind(i.id.to_string())
            .bind(i.org.to_string())
            .bind(from.stored())
            .execute(tx.conn().await?)
            .await?;
        Ok(done.rows_affected() == 1)
    }

    pub async fn intent(&self, org: Uuid, id: Uuid) -> Result<Option<IntentRow>> {
        let sql = format!("SELECT {INTENT_COLUMNS} FROM payment_intents WHERE org_id = $1 AND id = $2");
        let row = sqlx::query(AssertSqlSafe(sql)).bind(org.to_string()).bind(id.to_string()).fetch_optional(&self.pool).await?;
        Ok(row.as_ref().map(intent_row).transpose()?.map(|(_, i)| i))
    }

    /// The intent as `tx` sees it (with what writers before it in its batch
    /// changed): what a guarded move that missed met.
    pub async fn intent_in(tx: &mut Tx, org: Uuid, id: Uuid) -> Result<Option<IntentRow>> {
        let sql = format!("SELECT {INTENT_COLUMNS} FROM payment_intents WHERE org_id = $1 AND id = $2");
        let row = sqlx::query(AssertSqlSafe(sql)).bind(org.to_string()).bind(id.to_string()).fetch_optional(tx.conn().await?).await?;
        Ok(row.as_ref().map(intent_row).transpose()?.map(|(_, i)| i))
    }

    pub async fn intents(&self, org: Uuid, f: &IntentFilter, after: Option<Cursor>, limit: usize) -> Result<Page<IntentRow>> {
        let mut q = ListQuery::new(format!("SELECT {INTENT_COLUMNS} FROM payment_intents WHERE org_id = $1 AND seq > $2"));
        if let Some(c) = &f.customers {
            q.any_of("customer_id", c.iter().map(Uuid::to_string));
        }
        if !f.statuses.is_empty() {
            q.any_of("status", f.statuses.iter().map(|s| s.stored().to_string()));
        }
        q.visible_to("customer_id", f.visible_to);
        q.within("created_at", &f.created);
        let rows = q.fetch(&self.pool, org, after, "seq", limit).await?;
        Ok(Page::from_rows(rows.iter().map(intent_row).collect::<Result<_>>()?, limit))
    }

    pub async fn insert_charge(tx: &mut Tx, c: &ChargeRow) -> Result<()> {
        tx.execute(
            sqlx::query(
                "INSERT INTO payment_charges (id, org_id, intent_id, status, amount_minor, currency, provider, method_token, method_type,
                   method_display, method_expires_on, profile_id, off_session, failure_code, created_at, updated_at)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)",
            )
            .bind(c.id.to_string())
            .bind(c.org.to_string())
            .bind(c.intent_id.to_string())
            .bind(c.status.stored())
            .bind(c.amount_minor)
            .bind(&c.currency)
            .bind(c.provider.as_str())
            .bind(&c.method.token)
            .bind(&c.method.kind)
            .bind(&c.method.display_name)
            .bind(c.method.expires_on.map(|d| d.to_string()))
            .bind(c.profile_id.map(|u| u.to_string()))
            .bind(c.off_session as i64)
            .bind(&c.failure_code)
            .bind(ts(c.created_at))
            .bind(ts(c.updated_at)),
        )
        .await?;
        Ok(())
    }

    /// Writes `c`'s status and failure over the stored charge if it is
    /// still in status `from`.
    pub async fn move_charge(tx: &mut Tx, c: &ChargeRow, from: ChargeStatus) -> Result<bool> {
        let done = sqlx::query("UPDATE payment_charges SET status = $1, failure_code = $2, updated_at = $3 WHERE id = $4 AND org_id = $5 AND status = $6")
            .bind(c.status.stored())
            .bind(&c.failure_code)
            .bind(ts(c.updated_at))
            .bind(c.id.to_string())
            .bind(c.org.to_string())
            .bind(from.stored())
            .execute(tx.conn().await?)
            .await?;
        Ok(done.rows_affected() == 1)
    }

    /// Moves the intent's charges that are in `from` to `to` with
    /// `failure_code`, in `tx` (a closed link's charge waiting for
    /// authentication): one guarded write that sees what `tx` sees.
    pub async fn move_charges_of(
        tx: &mut Tx,
        org: Uuid,
        intent: Uuid,
        from: ChargeStatus,
        to: ChargeStatus,
        failure_code: &str,
        now: DateTime<Utc>,
    ) -> Result<()> {
        sqlx::query("UPDATE payment_charges SET status = $1, failure_code = $2, updated_at = $3 WHERE intent_id = $4 AND org_id = $5 AND status = $6")
            .bind(to.stored())
            .bind(failure_code)
            .bind(ts(now))
            .bind(intent.to_string())
            .bind(org.to_string())
            .bind(from.stored())
            .execute(tx.conn().await?)
            .await?;
        Ok(())
    }

    pub async fn charge(&self, org: Uuid, id: Uuid) -> Result<Option<ChargeRow>> {
        let sql = format!("SELECT {CHARGE_COLUMNS} FROM payment_charges WHERE org_id = $1 AND id = $2");
        let row = sqlx::query(AssertSqlSafe(sql)).bind(org.to_string()).bind(id.to_string()).fetch_optional(&self.pool).await?;
        row.as_ref().map(charge_row).transpose()
    }

    /// Every charge of the intent of `org`, oldest first.
    pub async fn charges_of(&self, org: Uuid, intent: Uuid) -> Result<Vec<ChargeRow>> {
        let sql = format!("SELECT {CHARGE_COLUMNS} FROM payment_charges WHERE org_id = $1 AND intent_id = $2 ORDER BY seq");
        let rows = sqlx::query(AssertSqlSafe(sql)).bind(org.to_string()).bind(intent.to_string()).fetch_all(&self.pool).await?;
        rows.iter().map(charge_row).collect()
    }

    pub async fn insert_refund(tx: &mut Tx, r: &RefundRow) -> Result<()> {
        tx.execute(
            sqlx::query(
                "INSERT INTO payment_refunds (id, org_id, intent_id, charge_id, status, amount_minor, reason, failure_code, created_at, updated_at)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
            )
            .bind(r.id.to_string())
            .bind(r.org.to_string())
            .bind(r.intent_id.to_string())
            .bind(r.charge_id.to_string())
            .bind(r.status.stored())
            .bind(r.amount_minor)
            .bind(&r.reason)
            .bind(&r.failure_code)
            .bind(ts(r.created_at))
            .bind(ts(r.updated_at)),
        )
        .await?;
        Ok(())
    }

    /// Writes `r`'s status and failure over the stored refund if it is
    /// still in status `from`.
    pub async fn move_refund(tx: &mut Tx, r: &RefundRow, from: RefundStatus) -> Result<bool> {
        let done = sqlx::query("UPDATE payment_refunds SET status = $1, failure_code = $2, updated_at = $3 WHERE id = $4 AND org_id = $5 AND status = $6")
            .bind(r.status.stored())
            .bind(&r.failure_code)
            .bind(ts(r.updated_at))
            .bind(r.id.to_string())
            .bind(r.org.to_string())
            .bind(from.stored())
            .execute(tx.conn().await?)
            .await?;
        Ok(done.rows_affected() == 1)
    }

    pub async fn refund(&self, org: Uuid, id: Uuid) -> Result<Option<RefundRow>> {
        let sql = format!("SELECT {REFUND_COLUMNS} FROM payment_refunds WHERE org_id = $1 AND id = $2");
        let row = sqlx::query(AssertSqlSafe(sql)).bind(org.to_string()).bind(id.to_string()).fetch_optional(&self.pool).await?;
        row.as_ref().map(refund_row).transpose()
    }

    /// Every refund of the intent of `org`, oldest first.
    pub async fn refunds_of(&self, org: Uuid, intent: Uuid) -> Result<Vec<RefundRow>> {
        let sql = format!("SELECT {REFUND_COLUMNS} FROM payment_refunds WHERE org_id = $1 AND intent_id = $2 ORDER BY seq");
        let rows = sqlx::query(AssertSqlSafe(sql)).bind(org.to_string()).bind(intent.to_string()).fetch_all(&self.pool).await?;
        rows.iter().map(refund_row).collect()
    }

    /// What the intent's refunds have given back or are giving back
    /// (PENDING and SUCCEEDED), as `tx` sees it: read in the transaction
    /// that adds one, after its intent's row was claimed, so two refunds
    /// at once never together give back more than was paid.
    pub async fn refunded_in(tx: &mut Tx, intent: Uuid) -> Result<i64> {
        let row = sqlx::query("SELECT CAST(COALESCE(SUM(amount_minor), 0) AS BIGINT) AS n FROM payment_refunds WHERE intent_id = $1 AND status <> $2")
            .bind(intent.to_string())
            .bind(RefundStatus::Failed.stored())
            .fetch_one(tx.conn().await?)
            .await?;
        Ok(row.try_get::<i64, _>("n")?)
    }

    /// Claims the intent's row in `tx` (its `updated_at` rewritten as it
    /// was), so that concurrent writers about it take turns.
    pub async fn claim_intent(tx: &mut Tx, org: Uuid, id: Uuid) -> Result<bool> {
        let done = sqlx::query("UPDATE payment_intents SET updated_at = updated_at WHERE id = $1 AND org_id = $2")
            .bind(id.to_string())
            .bind(org.to_string())
            .execute(tx.conn().await?)
            .await?;
        Ok(done.rows_affected() == 1)
    }
}
