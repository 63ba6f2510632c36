//! Orders: their rows, state moves guarded by status, and lists.

use super::{Cursor, ListQuery, Page, Store, Tx, json_col, opt_ts, parse_ts, parse_uuid, state_col, ts};
use crate::error::Result;
use crate::states::orders::OrderStatus;
use chrono::{DateTime, Utc};
use serde_json::Value;
use sqlx::any::AnyRow;
use sqlx::{AssertSqlSafe, Row};
use std::collections::BTreeMap;
use uuid::Uuid;

/// An order as stored; `doc` holds its line items and tax rates.
#[derive(Debug, Clone)]
pub struct OrderRow {
    pub id: Uuid,
    pub org: Uuid,
    pub customer_id: Uuid,
    pub customer_name: String,
    pub status: OrderStatus,
    pub currency: String,
    pub reference_id: Option<String>,
    pub approval_required: bool,
    pub doc: Value,
    pub metadata: Option<BTreeMap<String, String>>,
    pub expires_at: DateTime<Utc>,
    pub approved_at: Option<DateTime<Utc>>,
    pub submitted_at: Option<DateTime<Utc>>,
    pub cancelled_at: Option<DateTime<Utc>>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

#[derive(Debug, Default)]
pub struct OrderFilter {
    pub customers: Option<Vec<Uuid>>,
    pub statuses: Vec<OrderStatus>,
    /// only orders of customers this user is assigned to
    pub visible_to: Option<Uuid>,
    /// only orders created within this period
    pub created: super::Period,
}

const COLUMNS: &str = "o.seq, o.id, o.org_id, o.customer_id, c.name AS customer_name, o.status, o.currency, o.reference_id, \
     o.approval_required, o.line_items, o.metadata, o.expires_at, o.approved_at, o.submitted_at, o.cancelled_at, o.created_at, o.updated_at";

fn from_row(r: &AnyRow) -> Result<(i64, OrderRow)> {
    Ok((
        r.try_get("seq")?,
        OrderRow {
            id: parse_uuid(&r.try_get::<String, _>("id")?)?,
            org: parse_uuid(&r.try_get::<String, _>("org_id")?)?,
            customer_id: parse_uuid(&r.try_get::<String, _>("customer_id")?)?,
            customer_name: r.try_get("customer_name")?,
            status: state_col(r, "status")?,
            currency: r.try_get("currency")?,
            reference_id: r.try_get("reference_id")?,
            approval_required: r.try_get::<i64, _>("approval_required")? != 0,
            doc: json_col(r, "line_items")?.unwrap_or(Value::Null),
            metadata: json_col(r, "metadata")?,
            expires_at: parse_ts(&r.try_get::<String, _>("expires_at")?)?,
            approved_at: opt_ts(r, "approved_at")?,
            submitted_at: opt_ts(r, "submitted_at")?,
            cancelled_at: opt_ts(r, "cancelled_at")?,
            created_at: parse_ts(&r.try_get::<String, _>("created_at")?)?,
            updated_at: parse_ts(&r.try_get::<String, _>("updated_at")?)?,
        },
    ))
}

/// A metadata column's text (None for none).
pub(super) fn metadata_text(m: &Option<BTreeMap<String, String>>) -> Option<String> {
    m.as_ref().map(|m| serde_json::to_string(m).expect("JSON"))
}

impl Store {
    /// The document of `o` as stored: its lines' port-in details without
    /// their secrets, which are kept (sealed) while it is DRAFT or APPROVED
    /// and forgotten once it is not. A line written without them keeps those
    /// given before if it shows they were (`passcodeProvided`, ...).
    async fn keep_line_secrets(tx: &mut Tx, o: &OrderRow) -> Result<String> {
        let open = matches!(o.status, OrderStatus::Draft | OrderStatus::Approved);
        let mut doc = o.doc.clone();
        // each line's by the number it brings (`order_line`), so they follow
        // it however the lines are changed
        let (mut given, mut kept) = (vec![], vec![]);
        for line in doc.get_mut("lines").and_then(Value::as_array_mut).into_iter().flatten() {
            let key = super::port_in_secrets::order_line(o.id, line.pointer("/subscription/msisdn").and_then(Value::as_str).unwrap_or_default());
            let Some(details) = line.pointer_mut("/subscription/portIn/details") else { continue };
            match super::port_in_secrets::split(details) {
                Some(secrets) => given.push((key.clone(), secrets)),
                // a line that shows some were given keeps them
                None if super::port_in_secrets::SHOWN_FIELDS.iter().any(|f| details.get(f).is_some()) => {}
                None => continue,
            }
            kept.push(key);
        }
        Store::forget_order_port_in_secrets(tx, o.org, o.id, if open { &kept } else { &[] }).await?;
        for (key, secrets) in given.into_iter().filter(|_| open) {
            Store::add_port_in_secrets(tx, o.org, &key, secrets).await?;
        }
        Ok(doc.to_string())
    }

    /// Writes `o`; its lines' port-in secrets are kept apart, sealed, while
    /// it is open (src/store/port_in_secrets.rs).
    pub async fn insert_order(tx: &mut Tx, o: &OrderRow) -> Result<()> {
        let doc = Store::keep_line_secrets(tx, o).await?;
        tx.execute(
            sqlx::query(
                "INSERT INTO orders (id, org_id, customer_id, status, currency, reference_id, approval_required, line_items,
                   metadata, expires_at, approved_at, submitted_at, cancelled_at, created_at, updated_at)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)",
            )
            .bind(o.id.to_string())
            .bind(o.org.to_string())
            .bind(o.customer_id.to_string())
            .bind(o.status.stored())
            .bind(&o.currency)
            .bind(&o.reference_id)
            .bind(o.approval_required as i64)
            .bind(doc)
            .bind(metadata_text(&o.metadata))
            .bind(ts(o.expires_at))
            .bind(o.approved_at.map(ts))
            .bind(o.submitted_at.map(ts))
            .bind(o.cancelled_at.map(ts))
            .bind(ts(o.created_at))
            .bind(ts(o.updated_at)),
        )
        .await?;
        Ok(())
    }

    /// Writes `o` over the stored order if it is still as `before` was read
    /// (same status, same `updatedAt`): false when another request changed
    /// it first, so no change overwrites one it did not see.
    pub async fn update_order(tx: &mut Tx, o: &OrderRow, before: &OrderRow) -> Result<bool> {
        let doc = Store::keep_line_secrets(tx, o).await?;
        let done = sqlx::query(
            "UPDATE orders SET status = $1, reference_id = $2, approval_required = $3, line_items = $4, metadata = $5,
               approved_at = $6, submitted_at = $7, cancelled_at = $8, updated_at = $9
             WHERE id = $10 AND org_id = $11 AND status = $12 AND updated_at = $13",
        )
        .bind(o.status.stored())
        .bind(&o.reference_id)
        .bind(o.approval_required as i64)
        .bind(doc)
        .bind(metadata_text(&o.metadata))
        .bind(o.approved_at.map(ts))
        .bind(o.submitted_at.map(ts))
        .bind(o.cancelled_at.map(ts))
        .bind(ts(o.updated_at))
        .bind(o.id.to_string())
        .bind(o.org.to_string())
        .bind(before.status.stored())
        .bind(ts(before.updated_at))
        .execute(tx.conn().await?)
        .await?;
        Ok(done.rows_affected() == 1)
    }

    pub async fn order(&self, org: Uuid, id: Uuid) -> Result<Option<OrderRow>> {
        let sql = format!("SELECT {COLUMNS} FROM orders o JOIN customers c ON c.id = o.customer_id WHERE o.org_id = $1 AND o.id = $2");
        let row = sqlx::query(AssertSqlSafe(sql)).bind(org.to_string()).bind(id.to_string()).fetch_optional(&self.pool).await?;
        Ok(row.as_ref().map(from_row).transpose()?.map(|(_, o)| o))
    }

    /// The orders of `org` in one of the `open` states whose expiry has
    /// passed by `now`.
    pub async fn orders_due_to_expire(&self, org: Uuid, now: DateTime<Utc>, open: &[OrderStatus]) -> Result<Vec<Uuid>> {
        let placeholders = super::placeholders(3, open.len());
        let sql = format!("SELECT id FROM orders WHERE org_id = $1 AND expires_at <= $2 AND status IN ({})", placeholders);
        let mut q = sqlx::query(AssertSqlSafe(sql)).bind(org.to_string()).bind(ts(now));
        for s in open {
            q = q.bind(s.stored());
        }
        q.fetch_all(&self.pool).await?.iter().map(|r| parse_uuid(&r.try_get::<String, _>("id")?)).collect()
    }

    pub async fn orders(&self, org: Uuid, f: &OrderFilter, after: Option<Cursor>, limit: usize) -> Result<Page<OrderRow>> {
        let mut q = ListQuery::new(format!("SELECT {COLUMNS} FROM orders o JOIN customers c ON c.id = o.customer_id WHERE o.org_id = $1 AND o.seq > $2"));
        if let Some(c) = &f.customers {
            q.any_of("o.customer_id", c.iter().map(Uuid::to_string));
        }
        if !f.statuses.is_empty() {
            q.any_of("o.status", f.statuses.iter().map(|s| s.stored().to_string()));
        }
        q.visible_to("o.customer_id", f.visible_to);
        q.within("o.created_at", &f.created);
        let rows = q.fetch(&self.pool, org, after, "o.seq", limit).await?;
        Ok(Page::from_rows(rows.iter().map(from_row).collect::<Result<_>>()?, limit))
    }

    /// Counts of (subscriptions, add-ons, licenses) an order created.
    pub async fn order_results(&self, order: Uuid) -> Result<(i64, i64, i64)> {
        let mut counts = [0i64; 3];
        for (i, table) in ["subscriptions", "subscription_addons", "licenses"].iter().enumerate() {
            let row = sqlx::query(AssertSqlSafe(format!("SELECT COUNT(*) AS n FROM {table} WHERE order_id = $1")))
                .bind(order.to_string())
                .fetch_one(&self.pool)
                .await?;
            counts[i] = row.try_get("n")?;
        }
        Ok((counts[0], counts[1], counts[2]))
    }
}
