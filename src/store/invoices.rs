//! Invoices: rows, writes guarded by the version they were read at, the
//! organisation's gapless numbers, and the dunning settings.

use super::page::ListQuery;
use super::subscriptions::{opt_date, uuid_col};
use super::{Cursor, Page, Store, Tx, json_col, opt_ts, opt_uuid, parse_ts, state_col, ts};
use crate::error::{Error, Result};
use crate::kinds::{BillingMethod, InvoicePaymentMethod};
use crate::states::invoices::InvoiceStatus;
use chrono::{DateTime, NaiveDate, Utc};
use sqlx::any::AnyRow;
use sqlx::{AssertSqlSafe, Row};
use uuid::Uuid;

/// An invoice as stored. Its lines (the domain's JSON, one document each)
/// are rows of `invoice_lines`, read with it; the totals are their sums,
/// kept once it is finalised.
#[derive(Debug, Clone, PartialEq)]
pub struct InvoiceRow {
    pub id: Uuid,
    pub org: Uuid,
    pub customer_id: Uuid,
    pub billing_date: NaiveDate,
    pub currency: String,
    pub status: InvoiceStatus,
    /// each write adds one (the guard of the next)
    pub version: i64,
    pub number: Option<String>,
    /// its lines' documents, a JSON array (Null where a read did not load
    /// them: `invoices_of_day_in`)
    pub lines: serde_json::Value,
    pub subtotal_minor: i64,
    pub discount_minor: i64,
    pub tax_minor: i64,
    pub total_minor: i64,
    pub billing_method: Option<BillingMethod>,
    pub auto_pay: Option<bool>,
    pub finalized_at: Option<DateTime<Utc>>,
    pub due_at: Option<DateTime<Utc>>,
    pub paid_at: Option<DateTime<Utc>>,
    pub paid_method: Option<InvoicePaymentMethod>,
    pub paid_reference: Option<String>,
    pub intent_id: Option<Uuid>,
    /// autopay's failed charges so far, and when the next is tried
    pub attempts: i64,
    pub next_attempt_at: Option<DateTime<Utc>>,
    /// dunning's steps (by the organisation's settings when finalised):
    /// when the customer's subscriptions are suspended, when it is given up
    pub suspend_at: Option<DateTime<Utc>>,
    pub give_up_at: Option<DateTime<Utc>>,
    /// when dunning suspended the customer's subscriptions for it
    pub suspended_at: Option<DateTime<Utc>>,
    /// when it became VOID or UNCOLLECTIBLE
    pub closed_at: Option<DateTime<Utc>>,
    /// when it went out by its billing method, and how many of autopay's
    /// failures were mailed (the invoice.due job's delivery)
    pub delivered_at: Option<DateTime<Utc>>,
    pub mailed_attempts: i64,
    /// its machine-readable document's download token (once finalised)
    pub document_token: Option<String>,
    /// where the document is downloaded (set with its token at delivery)
    pub document_url: Option<String>,
    /// when something of it falls due next
    pub wake_at: Option<DateTime<Utc>>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// Which invoices a list shows.
#[derive(Debug, Default)]
pub struct InvoiceFilter {
    pub customers: Option<Vec<Uuid>>,
    pub statuses: Vec<InvoiceStatus>,
    pub visible_to: Option<Uuid>,
    /// only invoices created within this period
    pub created: super::Period,
}

const COLUMNS: &str = "id, org_id, customer_id, billing_date, currency, status, version, number, subtotal_minor, discount_minor, \
     tax_minor, total_minor, billing_method, auto_pay, finalized_at, due_at, paid_at, paid_method, paid_reference, intent_id, attempts, \
     next_attempt_at, suspend_at, give_up_at, suspended_at, closed_at, delivered_at, mailed_attempts, document_token, document_url, wake_at, created_at, updated_at";

fn invoice_row(r: &AnyRow) -> Result<InvoiceRow> {
    let billing_date = opt_date(r, "billing_date")?.ok_or_else(|| Error::Internal("invoice without billing_date".into()))?;
    let paid_method: Option<String> = r.try_get("paid_method")?;
    let billing_method: Option<String> = r.try_get("billing_method")?;
    Ok(InvoiceRow {
        id: uuid_col(r, "id")?,
        org: uuid_col(r, "org_id")?,
        customer_id: uuid_col(r, "customer_id")?,
        billing_date,
        currency: r.try_get("currency")?,
        status: state_col(r, "status")?,
        version: r.try_get("version")?,
        number: r.try_get("number")?,
        lines: serde_json::Value::Null,
        subtotal_minor: r.try_get("subtotal_minor")?,
        discount_minor: r.try_get("discount_minor")?,
        tax_minor: r.try_get("tax_minor")?,
        total_minor: r.try_get("total_minor")?,
        billing_method: billing_method.map(|m| super::parse_state("billing_method", &m)).transpose()?,
        auto_pay: r.try_get::<Option<i64>, _>("auto_pay")?.map(|v| v != 0),
        finalized_at: opt_ts(r, "finalized_at")?,
        due_at: opt_ts(r, "due_at")?,
        paid_at: opt_ts(r, "paid_at")?,
        paid_method: paid_method.map(|m| super::parse_state("paid_method", &m)).transpose()?,
        paid_reference: r.try_get("paid_reference")?,
        intent_id: opt_uuid(r, "intent_id")?,
        attempts: r.try_get("attempts")?,
        next_attempt_at: opt_ts(r, "next_attempt_at")?,
        suspend_at: opt_ts(r, "suspend_at")?,
        give_up_at: opt_ts(r, "give_up_at")?,
        suspended_at: opt_ts(r, "suspended_at")?,
        closed_at: opt_ts(r, "closed_at")?,
        delivered_at: opt_ts(r, "delivered_at")?,
        mailed_attempts: r.try_get("mailed_attempts")?,
        document_token: r.try_get("document_token")?,
        document_url: r.try_get("document_url")?,
        wake_at: opt_ts(r, "wake_at")?,
        created_at: parse_ts(&r.try_get::<String, _>("created_at")?)?,
        updated_at: parse_ts(&r.try_get::<String, _>("updated_at")?)?,
    })
}

impl Store {
    /// Inserts `i`, unless it is a DRAFT and its customer already has one
    /// of its day and currency (then false, nothing written: a unique
    /// violation would abort a PostgreSQL transaction).
    pub async fn insert_invoice(tx: &mut Tx, i: &InvoiceRow) -> Result<bool> {
        let sql = format!(
            "INSERT INTO invoices ({COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, \
             $20, $21, $22, $23, $24, $25, $26, $27, $28, $29, $30, $31, $32, $33)
             ON CONFLICT (org_id, customer_id, billing_date, currency) WHERE status = 'DRAFT' DO NOTHING"
        );
        let q = sqlx::query(AssertSqlSafe(sql)).bind(i.id.to_string()).bind(i.org.to_string()).bind(i.customer_id.to_string());
        let q = bind_rest(q.bind(i.billing_date.to_string()).bind(&i.currency).bind(i.status.stored()).bind(i.version), i);
        Ok(q.execute(tx.conn().await?).await?.rows_affected() == 1)
    }

    /// Writes `i` (with its version one up) over the stored invoice if it
    /// is still at `i.version - 1`: false when another writer was first.
    pub async fn update_invoice(tx: &mut Tx, i: &InvoiceRow) -> Result<bool> {
        let q = sqlx::query(
            "UPDATE invoices SET status = $1, version = $2, number = $3, subtotal_minor = $4, discount_minor = $5, tax_minor = $6,
               total_minor = $7, billing_method = $8, auto_pay = $9, finalized_at = $10, due_at = $11, paid_at = $12, paid_method = $13,
               paid_reference = $14, intent_id = $15, attempts = $16, next_attempt_at = $17, suspend_at = $18, give_up_at = $19,
               suspended_at = $20, closed_at = $21, delivered_at = $22, mailed_attempts = $23, document_token = $24, document_url = $25,
               wake_at = $26, created_at = $27, updated_at = $28
             WHERE id = $29 AND org_id = $30 AND version = $31",
        )
        .bind(i.status.stored())
        .bind(i.version);
        let done = bind_rest(q, i).bind(i.id.to_string()).bind(i.org.to_string()).bind(i.version - 1).execute(tx.conn().await?).await?;
        Ok(done.rows_affected() == 1)
    }

    pub async fn invoice(&self, org: Uuid, id: Uuid) -> Result<Option<InvoiceRow>> {
        let sql = format!("SELECT {COLUMNS} FROM invoices WHERE org_id = $1 AND id = $2");
        let row = sqlx::query(AssertSqlSafe(sql)).bind(org.to_string()).bind(id.to_string()).fetch_optional(&self.pool).await?;
        let Some(mut invoice) = row.as_ref().map(invoice_row).transpose()? else { return Ok(None) };
        let lines = sqlx::query(LINES).bind(id.to_string()).fetch_all(&self.pool).await?;
        with_lines(&mut invoice, &lines)?;
        Ok(Some(invoice))
    }

    /// Appends `lines` (documents) to invoice `invoice`, in the transaction
    /// of what they bill.
    pub async fn add_invoice_lines(tx: &mut Tx, org: Uuid, invoice: Uuid, lines: &[serde_json::Value], at: DateTime<Utc>) -> Result<()> {
        for line in lines {
            tx.execute(
                sqlx::query("INSERT INTO invoice_lines (invoice_id, org_id, line, created_at) VALUES ($1, $2, $3, $4)")
                    .bind(invoice.to_string())
                    .bind(org.to_string())
                    .bind(line.to_string())
                    .bind(ts(at)),
            )
            .await?;
        }
        Ok(())
    }

    /// Whether invoice `id` is still a DRAFT, as `tx` sees it, holding it
    /// so (on PostgreSQL a share lock: lines are added by many at once,
    /// and its finalisation waits for them; SQLite has one writer).
    pub async fn draft_held_in(tx: &mut Tx, org: Uuid, id: Uuid) -> Result<bool> {
        let lock = if tx.is_postgres() { " FOR SHARE" } else { "" };
        let sql = format!("SELECT status FROM invoices WHERE org_id = $1 AND id = $2{lock}");
        let row = sqlx::query(AssertSqlSafe(sql)).bind(org.to_string()).bind(id.to_string()).fetch_optional(tx.conn().await?).await?;
        Ok(row.map(|r| r.try_get::<String, _>("status")).transpose()?.as_deref() == Some("DRAFT"))
    }

    /// The invoice whose document has download token `token`.
    pub async fn invoice_by_document(&self, token: &str) -> Result<Option<InvoiceRow>> {
        let sql = format!("SELECT {COLUMNS} FROM invoices WHERE document_token = $1");
        let row = sqlx::query(AssertSqlSafe(sql)).bind(token).fetch_optional(&self.pool).await?;
        let Some(mut invoice) = row.as_ref().map(invoice_row).transpose()? else { return Ok(None) };
        self.load_lines(&mut [&mut invoice]).await?;
        Ok(Some(invoice))
    }

    /// `invoices` with their lines, read in one query.
    async fn load_lines(&self, invoices: &mut [&mut InvoiceRow]) -> Result<()> {
        if invoices.is_empty() {
            return Ok(());
        }
        let marks: Vec<String> = (1..=invoices.len()).map(|n| format!("${n}")).collect();
        let sql = format!("SELECT invoice_id, line, created_at FROM invoice_lines WHERE invoice_id IN ({}) ORDER BY seq", marks.join(", "));
        let mut q = sqlx::query(AssertSqlSafe(sql));
        for i in invoices.iter() {
            q = q.bind(i.id.to_string());
        }
        let rows = q.fetch_all(&self.pool).await?;
        for i in invoices.iter_mut() {
            let own: Vec<&AnyRow> = rows.iter().filter(|r| r.try_get::<String, _>("invoice_id").is_ok_and(|id| id == i.id.to_string())).collect();
            with_lines(i, &own)?;
        }
        Ok(())
    }

    /// The organisation's finalised invoices of customers billed on paper,
    /// oldest first (what is to be printed and posted).
    pub async fn paper_invoices(&self, org: Uuid) -> Result<Vec<InvoiceRow>> {
        let sql = format!("SELECT {COLUMNS} FROM invoices WHERE org_id = $1 AND billing_method = 'PAPER_INVOICE' AND status <> 'DRAFT' ORDER BY seq");
        let rows = sqlx::query(AssertSqlSafe(sql)).bind(org.to_string()).fetch_all(&self.pool).await?;
        let mut items = rows.iter().map(invoice_row).collect::<Result<Vec<_>>>()?;
        self.load_lines(&mut items.iter_mut().collect::<Vec<_>>()).await?;
        Ok(items)
    }

    /// The invoice as `tx` sees it (with what writers before it in its
    /// batch changed).
    pub async fn invoice_in(tx: &mut Tx, org: Uuid, id: Uuid) -> Result<Option<InvoiceRow>> {
        let sql = format!("SELECT {COLUMNS} FROM invoices WHERE org_id = $1 AND id = $2");
        let row = sqlx::query(AssertSqlSafe(sql)).bind(org.to_string()).bind(id.to_string()).fetch_optional(tx.conn().await?).await?;
        let Some(mut invoice) = row.as_ref().map(invoice_row).transpose()? else { return Ok(None) };
        let lines = sqlx::query(LINES).bind(id.to_string()).fetch_all(tx.conn().await?).await?;
        with_lines(&mut invoice, &lines)?;
        Ok(Some(invoice))
    }

    /// The customer's invoices of billing day `day` in `currency`, as `tx`
    /// sees them (at most one DRAFT among them), without their lines.
    pub async fn invoices_of_day_in(tx: &mut Tx, org: Uuid, customer: Uuid, day: NaiveDate, currency: &str) -> Result<Vec<InvoiceRow>> {
        let sql = format!("SELECT {COLUMNS} FROM invoices WHERE org_id = $1 AND customer_id = $2 AND billing_date = $3 AND currency = $4");
        let rows = sqlx::query(AssertSqlSafe(sql))
            .bind(org.to_string())
            .bind(customer.to_string())
            .bind(day.to_string())
            .bind(currency)
            .fetch_all(tx.conn().await?)
            .await?;
        rows.iter().map(invoice_row).collect()
    }

    pub async fn invoices(&self, org: Uuid, f: &InvoiceFilter, after: Option<Cursor>, limit: usize) -> Result<Page<InvoiceRow>> {
        let mut q = ListQuery::new(format!("SELECT seq, {COLUMNS} FROM invoices WHERE org_id = $1 AND seq > $2"));
        if let Some(c) = &f.customers {
            q.any_of("customer_id", c.iter().map(Uuid::to_string));
        }
        if !f.statuses.is_empty() {
            q.any_of("status", f.statuses.iter().map(|s| s.stored().to_string()));
        }
        q.visible_to("customer_id", f.visible_to);
        q.within("created_at", &f.created);
        let rows = q.fetch(&self.pool, org, after, "seq", limit).await?;
        let mut items: Vec<(i64, InvoiceRow)> = rows.iter().map(|r| Ok((r.try_get::<i64, _>("seq")?, invoice_row(r)?))).collect::<Result<_>>()?;
        self.load_lines(&mut items.iter_mut().map(|(_, i)| i).collect::<Vec<_>>()).await?;
        Ok(Page::from_rows(items, limit))
    }

    /// Whether a charge for invoice `invoice` (autopay's, or a link's) is
    /// with its provider: its intent PROCESSING.
    pub async fn invoice_charging(&self, org: Uuid, invoice: Uuid) -> Result<bool> {
        let row = sqlx::query("SELECT id FROM payment_intents WHERE org_id = $1 AND invoice_id = $2 AND status = 'PROCESSING'")
            .bind(org.to_string())
            .bind(invoice.to_string())
            .fetch_optional(&self.pool)
            .await?;
        Ok(row.is_some())
    }

    /// The organisation's DRAFTs whose billing day has ended by `now`.
    pub async fn drafts_due(&self, org: Uuid, now: DateTime<Utc>) -> Result<Vec<Uuid>> {
        let rows = sqlx::query("SELECT id FROM invoices WHERE org_id = $1 AND status = 'DRAFT' AND wake_at <= $2 ORDER BY wake_at")
            .bind(org.to_string())
            .bind(ts(now))
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(|r| uuid_col(r, "id")).collect()
    }

    /// The customer's oldest OPEN invoice but `except` that dunning has
    /// suspended subscriptions for, as `tx` sees them.
    pub async fn overdue_invoice_in(tx: &mut Tx, org: Uuid, customer: Uuid, except: Uuid) -> Result<Option<InvoiceRow>> {
        let sql = format!(
            "SELECT {COLUMNS} FROM invoices WHERE org_id = $1 AND customer_id = $2 AND id <> $3 AND status = 'OPEN' AND suspended_at IS NOT NULL ORDER BY seq LIMIT 1"
        );
        let row =
            sqlx::query(AssertSqlSafe(sql)).bind(org.to_string()).bind(customer.to_string()).bind(except.to_string()).fetch_optional(tx.conn().await?).await?;
        row.as_ref().map(invoice_row).transpose()
    }

    /// The customer's subscriptions, as `tx` sees them.
    pub async fn customer_subscriptions_in(tx: &mut Tx, org: Uuid, customer: Uuid) -> Result<Vec<crate::store::SubscriptionRow>> {
        Store::subscriptions_where_in(tx, org, "s.customer_id", customer).await
    }

    /// The subscriptions whose dunning invoice `invoice` was last, as `tx`
    /// sees them.
    pub async fn subscriptions_dunned_in(tx: &mut Tx, org: Uuid, invoice: Uuid) -> Result<Vec<crate::store::SubscriptionRow>> {
        Store::subscriptions_where_in(tx, org, "s.suspended_for_invoice", invoice).await
    }

    /// The subscriptions whose dunning invoice `invoice` was last.
    pub async fn subscriptions_dunned(&self, org: Uuid, invoice: Uuid) -> Result<Vec<crate::store::SubscriptionRow>> {
        let sql = format!(
            "SELECT {} FROM {} WHERE s.org_id = $1 AND s.suspended_for_invoice = $2 ORDER BY s.seq",
            super::subscriptions::SUBSCRIPTION_COLUMNS,
            super::subscriptions::SUBSCRIPTIONS
        );
        let rows = sqlx::query(AssertSqlSafe(sql)).bind(org.to_string()).bind(invoice.to_string()).fetch_all(&self.pool).await?;
        rows.iter().map(|r| super::subscriptions::subscription_row(r).map(|(_, s)| s)).collect()
    }

    /// The organisation's next invoice number, taken in `tx`: the counter
    /// row is written in the transaction that finalises the invoice, so a
    /// number is used exactly when the invoice that carries it commits
    /// (no gaps), and two finalisations at once wait for each other.
    pub async fn next_invoice_number(tx: &mut Tx, org: Uuid) -> Result<i64> {
        let row = sqlx::query(
            "INSERT INTO invoice_numbers (org_id, last) VALUES ($1, 1)
             ON CONFLICT (org_id) DO UPDATE SET last = invoice_numbers.last + 1 RETURNING last",
        )
        .bind(org.to_string())
        .fetch_one(tx.conn().await?)
        .await?;
        Ok(row.try_get("last")?)
    }

    /// The organisation's dunning settings: days after an invoice's due
    /// date before suspension, and before it is uncollectible.
    pub async fn dunning_days(&self, org: Uuid) -> Result<(i64, i64)> {
        let row = sqlx::query("SELECT dunning_suspend_days, dunning_uncollectible_days FROM organisations WHERE id = $1")
            .bind(org.to_string())
            .fetch_optional(&self.pool)
            .await?
            .ok_or_else(|| Error::Internal(format!("organisation {org} vanished")))?;
        Ok((row.try_get("dunning_suspend_days")?, row.try_get("dunning_uncollectible_days")?))
    }

    /// Sets the organisation's dunning settings; false when there is no
    /// such organisation.
    pub async fn set_dunning_days(&self, org: Uuid, suspend: i64, uncollectible: i64) -> Result<bool> {
        let done = sqlx::query("UPDATE organisations SET dunning_suspend_days = $1, dunning_uncollectible_days = $2 WHERE id = $3")
            .bind(suspend)
            .bind(uncollectible)
            .bind(org.to_string())
            .execute(&self.pool)
            .await?;
        Ok(done.rows_affected() == 1)
    }
}

/// The lines of one invoice, oldest first.
const LINES: &str = "SELECT line, created_at FROM invoice_lines WHERE invoice_id = $1 ORDER BY seq";

/// `invoice` with `rows` (of `invoice_lines`) as its lines; a DRAFT changed
/// when its last line was written.
fn with_lines<R: std::borrow::Borrow<AnyRow>>(invoice: &mut InvoiceRow, rows: &[R]) -> Result<()> {
    let mut lines = Vec::with_capacity(rows.len());
    for r in rows {
        let r = r.borrow();
        lines.push(json_col::<serde_json::Value>(r, "line")?.unwrap_or(serde_json::Value::Null));
        invoice.updated_at = invoice.updated_at.max(parse_ts(&r.try_get::<String, _>("created_at")?)?);
    }
    invoice.lines = serde_json::Value::Array(lines);
    Ok(())
}

/// Binds the columns from `number` on, in `COLUMNS`' order.
fn bind_rest<'q>(q: sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments>, i: &InvoiceRow) -> sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments> {
    q.bind(i.number.clone())
        .bind(i.subtotal_minor)
        .bind(i.discount_minor)
        .bind(i.tax_minor)
        .bind(i.total_minor)
        .bind(i.billing_method.map(|m| m.stored()))
        .bind(i.auto_pay.map(i64::from))
        .bind(i.finalized_at.map(ts))
        .bind(i.due_at.map(ts))
        .bind(i.paid_at.map(ts))
        .bind(i.paid_method.map(|m| m.stored()))
        .bind(i.paid_reference.clone())
        .bind(i.intent_id.map(|u| u.to_string()))
        .bind(i.attempts)
        .bind(i.next_attempt_at.map(ts))
        .bind(i.suspend_at.map(ts))
        .bind(i.give_up_at.map(ts))
        .bind(i.suspended_at.map(ts))
        .bind(i.closed_at.map(ts))
        .bind(i.delivered_at.map(ts))
        .bind(i.mailed_attempts)
        .bind(i.document_token.clone())
        .bind(i.document_url.clone())
        .bind(i.wake_at.map(ts))
        .bind(ts(i.created_at))
        .bind(ts(i.updated_at))
}
