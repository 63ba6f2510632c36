//! Orders, and the subscriptions, add-ons and licenses their submission
//! creates.

use super::{Cursor, IdOrRef, Page, Store, Tx, json_col, parse_ts, parse_uuid, ts};
use crate::error::Result;
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
    pub status: String,
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
    pub statuses: Vec<String>,
    /// only orders of customers this user is assigned to
    pub visible_to: Option<Uuid>,
}

/// A subscription as an order needs it: whose, what, and in which state.
#[derive(Debug, Clone)]
pub struct SubscriptionRef {
    pub id: Uuid,
    pub customer_id: Uuid,
    pub offering_id: Uuid,
    pub status: String,
    pub msisdn: String,
    pub display_name: Option<String>,
}

#[derive(Debug, Clone)]
pub struct NewSubscription {
    pub id: Uuid,
    pub org: Uuid,
    pub customer_id: Uuid,
    pub order_id: Uuid,
    pub offering_id: Uuid,
    pub subscription_type: String,
    pub msisdn: String,
    pub display_name: Option<String>,
    pub sim_type: String,
    pub reference_id: Option<String>,
    pub now: DateTime<Utc>,
}

const COLUMNS: &str = "o.seq, o.id, o.org_id, o.customer_id, c.name AS customer_name, o.status, o.currency, o.reference_id, \
     o.approval_required, o.line_items, o.metadata, o.expires_at, o.approved_at, o.submitted_at, o.cancelled_at, o.created_at, o.updated_at";

fn opt_ts(r: &AnyRow, col: &str) -> Result<Option<DateTime<Utc>>> {
    r.try_get::<Option<String>, _>(col)?.as_deref().map(parse_ts).transpose()
}

fn from_row(r: &AnyRow) -> Result<(i64, OrderRow)> {
    Ok((
        r.try_get("seq")?,
        OrderRow {
            id: parse_uuid(&r.try_get::<String, _>("id")?)?,
            org: parse_uuid(&r.try_get::<String, _>("org_id")?)?,
            customer_id: parse_uuid(&r.try_get::<String, _>("customer_id")?)?,
            customer_name: r.try_get("customer_name")?,
            status: r.try_get("status")?,
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

fn metadata_text(m: &Option<BTreeMap<String, String>>) -> Option<String> {
    m.as_ref().map(|m| serde_json::to_string(m).expect("JSON"))
}

impl Store {
    pub async fn insert_order(tx: &mut Tx<'_>, o: &OrderRow) -> Result<()> {
        sqlx::query(
            "INSERT INTO orders (id, org_id, customer_id, status, currency, reference_id, approval_required, line_items,
               metadata, expires_at, approved_at, submitted_at, cancelled_at, created_at, updated_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)",
        )
        .bind(o.id.to_string())
        .bind(o.org.to_string())
        .bind(o.customer_id.to_string())
        .bind(&o.status)
        .bind(&o.currency)
        .bind(&o.reference_id)
        .bind(o.approval_required as i64)
        .bind(o.doc.to_string())
        .bind(metadata_text(&o.metadata))
        .bind(ts(o.expires_at))
        .bind(o.approved_at.map(ts))
        .bind(o.submitted_at.map(ts))
        .bind(o.cancelled_at.map(ts))
        .bind(ts(o.created_at))
        .bind(ts(o.updated_at))
        .execute(&mut *tx.tx)
        .await?;
        Ok(())
    }

    /// Writes `o` over the stored order if it still has status `from`
    /// (false when another request moved it first).
    pub async fn update_order(tx: &mut Tx<'_>, o: &OrderRow, from: &str) -> Result<bool> {
        let done = sqlx::query(
            "UPDATE orders SET status = $1, reference_id = $2, approval_required = $3, line_items = $4, metadata = $5,
               approved_at = $6, submitted_at = $7, cancelled_at = $8, updated_at = $9
             WHERE id = $10 AND org_id = $11 AND status = $12",
        )
        .bind(&o.status)
        .bind(&o.reference_id)
        .bind(o.approval_required as i64)
        .bind(o.doc.to_string())
        .bind(metadata_text(&o.metadata))
        .bind(o.approved_at.map(ts))
        .bind(o.submitted_at.map(ts))
        .bind(o.cancelled_at.map(ts))
        .bind(ts(o.updated_at))
        .bind(o.id.to_string())
        .bind(o.org.to_string())
        .bind(from)
        .execute(&mut *tx.tx)
        .await?;
        Ok(done.rows_affected() == 1)
    }

    pub async fn order(&self, org: Uuid, id: Uuid) -> Result<Option<OrderRow>> {
        let sql = format!("SELECT {COLUMNS} FROM orders o JOIN customers c ON c.id = o.customer_id WHERE o.org_id = $1 AND o.id = $2");
        let row = sqlx::query(AssertSqlSafe(sql)).bind(org.to_string()).bind(id.to_string()).fetch_optional(&self.pool).await?;
        Ok(row.as_ref().map(from_row).transpose()?.map(|(_, o)| o))
    }

    /// Ids of open orders of `org` whose expiry has passed.
    pub async fn orders_due_to_expire(&self, org: Uuid, now: DateTime<Utc>) -> Result<Vec<Uuid>> {
        let rows = sqlx::query("SELECT id FROM orders WHERE org_id = $1 AND status IN ('DRAFT', 'APPROVED') AND expires_at <= $2")
            .bind(org.to_string())
            .bind(ts(now))
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(|r| parse_uuid(&r.try_get::<String, _>("id")?)).collect()
    }

    pub async fn orders(&self, org: Uuid, f: &OrderFilter, after: Option<Cursor>, limit: usize) -> Result<Page<OrderRow>> {
        let mut sql = format!("SELECT {COLUMNS} FROM orders o JOIN customers c ON c.id = o.customer_id WHERE o.org_id = $1 AND o.seq > $2");
        let mut binds: Vec<String> = vec![];
        let any_of = |sql: &mut String, col: &str, values: Vec<String>, binds: &mut Vec<String>| {
            let start = binds.len() + 3;
            let list: Vec<String> = (0..values.len()).map(|i| format!("${}", start + i)).collect();
            binds.extend(values);
            sql.push_str(&format!(" AND {col} IN ({})", if list.is_empty() { "NULL".to_string() } else { list.join(", ") }));
        };
        if let Some(c) = &f.customers {
            any_of(&mut sql, "o.customer_id", c.iter().map(Uuid::to_string).collect(), &mut binds);
        }
        if !f.statuses.is_empty() {
            any_of(&mut sql, "o.status", f.statuses.clone(), &mut binds);
        }
        if let Some(viewer) = f.visible_to {
            binds.push(viewer.to_string());
            sql.push_str(&format!(" AND o.customer_id IN (SELECT customer_id FROM customer_users WHERE user_id = ${})", binds.len() + 2));
        }
        sql.push_str(&format!(" ORDER BY o.seq LIMIT {}", limit + 1));
        let mut q = sqlx::query(AssertSqlSafe(sql)).bind(org.to_string()).bind(after.map_or(0, |c| c.after_seq));
        for b in binds {
            q = q.bind(b);
        }
        let rows = q.fetch_all(&self.pool).await?;
        Ok(Page::from_rows(rows.iter().map(from_row).collect::<Result<_>>()?, limit))
    }

    pub async fn order_reference_taken(&self, org: Uuid, reference_id: &str, except: Option<Uuid>) -> Result<bool> {
        let row = sqlx::query("SELECT id FROM orders WHERE org_id = $1 AND reference_id = $2 AND id <> $3")
            .bind(org.to_string())
            .bind(reference_id)
            .bind(except.map(|u| u.to_string()).unwrap_or_default())
            .fetch_optional(&self.pool)
            .await?;
        Ok(row.is_some())
    }

    /// A subscription of `org` by id or `rid_` reference.
    pub async fn subscription_ref(&self, org: Uuid, key: &IdOrRef<'_>) -> Result<Option<SubscriptionRef>> {
        let (col, val) = key.column();
        let sql = format!("SELECT id, customer_id, offering_id, status, msisdn, display_name FROM subscriptions WHERE org_id = $1 AND {col} = $2");
        let row = sqlx::query(AssertSqlSafe(sql)).bind(org.to_string()).bind(val).fetch_optional(&self.pool).await?;
        row.map(|r| {
            Ok(SubscriptionRef {
                id: parse_uuid(&r.try_get::<String, _>("id")?)?,
                customer_id: parse_uuid(&r.try_get::<String, _>("customer_id")?)?,
                offering_id: parse_uuid(&r.try_get::<String, _>("offering_id")?)?,
                status: r.try_get("status")?,
                msisdn: r.try_get("msisdn")?,
                display_name: r.try_get("display_name")?,
            })
        })
        .transpose()
    }

    /// Whether a subscription of `org` that is not cancelled has `msisdn`.
    pub async fn msisdn_in_use(&self, org: Uuid, msisdn: &str) -> Result<bool> {
        let row = sqlx::query("SELECT id FROM subscriptions WHERE org_id = $1 AND msisdn = $2 AND status <> 'CANCELLED'")
            .bind(org.to_string())
            .bind(msisdn)
            .fetch_optional(&self.pool)
            .await?;
        Ok(row.is_some())
    }

    pub async fn subscription_reference_taken(&self, org: Uuid, reference_id: &str) -> Result<bool> {
        let row = sqlx::query("SELECT id FROM subscriptions WHERE org_id = $1 AND reference_id = $2")
            .bind(org.to_string())
            .bind(reference_id)
            .fetch_optional(&self.pool)
            .await?;
        Ok(row.is_some())
    }

    pub async fn insert_subscription(tx: &mut Tx<'_>, s: &NewSubscription) -> Result<()> {
        sqlx::query(
            "INSERT INTO subscriptions (id, org_id, customer_id, order_id, offering_id, status, subscription_type, msisdn,
               display_name, sim_type, reference_id, created_at, updated_at)
             VALUES ($1, $2, $3, $4, $5, 'PENDING', $6, $7, $8, $9, $10, $11, $11)",
        )
        .bind(s.id.to_string())
        .bind(s.org.to_string())
        .bind(s.customer_id.to_string())
        .bind(s.order_id.to_string())
        .bind(s.offering_id.to_string())
        .bind(&s.subscription_type)
        .bind(&s.msisdn)
        .bind(&s.display_name)
        .bind(&s.sim_type)
        .bind(&s.reference_id)
        .bind(ts(s.now))
        .execute(&mut *tx.tx)
        .await?;
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    pub async fn insert_subscription_addon(
        tx: &mut Tx<'_>,
        id: Uuid,
        org: Uuid,
        subscription: Uuid,
        order: Uuid,
        offering: Uuid,
        now: DateTime<Utc>,
    ) -> Result<()> {
        sqlx::query(
            "INSERT INTO subscription_addons (id, org_id, subscription_id, order_id, offering_id, status, created_at, updated_at)
             VALUES ($1, $2, $3, $4, $5, 'PENDING', $6, $6)",
        )
        .bind(id.to_string())
        .bind(org.to_string())
        .bind(subscription.to_string())
        .bind(order.to_string())
        .bind(offering.to_string())
        .bind(ts(now))
        .execute(&mut *tx.tx)
        .await?;
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    pub async fn insert_license(
        tx: &mut Tx<'_>,
        id: Uuid,
        org: Uuid,
        customer: Uuid,
        order: Uuid,
        offering: Uuid,
        license_type: &str,
        subscription: Option<Uuid>,
        now: DateTime<Utc>,
    ) -> Result<()> {
        sqlx::query(
            "INSERT INTO licenses (id, org_id, customer_id, order_id, offering_id, license_type, status, subscription_id, created_at, updated_at)
             VALUES ($1, $2, $3, $4, $5, $6, 'PENDING', $7, $8, $8)",
        )
        .bind(id.to_string())
        .bind(org.to_string())
        .bind(customer.to_string())
        .bind(order.to_string())
        .bind(offering.to_string())
        .bind(license_type)
        .bind(subscription.map(|s| s.to_string()))
        .bind(ts(now))
        .execute(&mut *tx.tx)
        .await?;
        Ok(())
    }

    /// A SIM card order replaces the subscription's SIM.
    pub async fn set_subscription_sim(tx: &mut Tx<'_>, subscription: Uuid, sim_type: &str, now: DateTime<Utc>) -> Result<()> {
        sqlx::query("UPDATE subscriptions SET sim_type = $1, updated_at = $2 WHERE id = $3")
            .bind(sim_type)
            .bind(ts(now))
            .bind(subscription.to_string())
            .execute(&mut *tx.tx)
            .await?;
        Ok(())
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
