//! Licenses: what order submission creates, their moves (optimistic, like
//! a subscription's) and the reads of them (migrations/*/0005, 0016, 0017).

use super::subscriptions::{PendingOffering, opt_date, ts_col, uuid_col};
use super::{Cursor, ListQuery, Page, Store, Tx, opt_ts, parse_uuid, state_col, ts};
use crate::error::Result;
use crate::states::licenses::LicenseStatus;
use chrono::{DateTime, NaiveDate, Utc};
use sqlx::any::AnyRow;
use sqlx::{AssertSqlSafe, Row};
use uuid::Uuid;

/// A license as stored, with its customer's name and the number and
/// display name of the subscription it is assigned to.
#[derive(Debug, Clone)]
pub struct LicenseRow {
    pub id: Uuid,
    pub customer_id: Uuid,
    pub customer_name: String,
    pub order_id: Uuid,
    pub offering_id: Uuid,
    pub license_type: String,
    pub status: LicenseStatus,
    /// (subscription id, msisdn, display name)
    pub assigned_to: Option<(Uuid, String, Option<String>)>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    /// when it became ACTIVE
    pub activated_at: Option<DateTime<Utc>>,
    /// when it was paused with its subscription (while PAUSED)
    pub paused_at: Option<DateTime<Utc>>,
    /// when its cancellation was asked for
    pub cancelled_at: Option<DateTime<Utc>>,
    /// when it became CANCELLED
    pub ended_at: Option<DateTime<Utc>>,
    /// a move scheduled for later: the state, and when
    pub pending: Option<(LicenseStatus, DateTime<Utc>)>,
    /// free properties (a JSON object)
    pub details: Option<serde_json::Value>,
    /// the client's metadata (a JSON object)
    pub metadata: Option<serde_json::Value>,
    /// what it is billed at: the currency it was bought in (None: bought
    /// before licenses kept it), the months per cycle of its price (None:
    /// one-time), the day of the month its cycles begin, the day the
    /// current one ends
    pub currency: Option<String>,
    pub cycle_months: Option<u32>,
    pub billing_day: Option<u32>,
    pub renews_on: Option<NaiveDate>,
    /// an offering change scheduled for later
    pub pending_offering: Option<PendingOffering>,
    /// how many times it was written (the optimistic version)
    pub version: i64,
}

impl LicenseRow {
    /// When it next has something due: a scheduled cancellation, an
    /// offering change, a renewal (00:00 UTC of its day).
    pub fn due_at(&self) -> Option<DateTime<Utc>> {
        let renewal = self.renews_on.map(|d| d.and_time(chrono::NaiveTime::MIN).and_utc());
        [self.pending.map(|(_, at)| at), self.pending_offering.as_ref().map(|p| p.at), renewal].into_iter().flatten().min()
    }
}

#[derive(Debug, Default)]
pub struct LicenseFilter {
    pub customers: Option<Vec<Uuid>>,
    pub statuses: Vec<LicenseStatus>,
    pub subscriptions: Option<Vec<Uuid>>,
    /// only licenses of customers this user is assigned to
    pub visible_to: Option<Uuid>,
}

const LICENSE_COLUMNS: &str = "l.seq, l.id, l.customer_id, c.name AS customer_name, l.order_id, l.offering_id, l.license_type, \
     l.status, l.subscription_id, s.msisdn AS subscription_msisdn, s.display_name AS subscription_display_name, l.created_at, l.updated_at, \
     l.activated_at, l.paused_at, l.cancelled_at, l.ended_at, l.pending_status, l.pending_at, l.details, l.metadata, \
     l.currency, l.cycle_months, l.billing_day, l.renews_on, l.pending_offering_id, l.pending_offering_schedule, l.pending_offering_at, l.version";
const LICENSES: &str = "licenses l JOIN customers c ON c.id = l.customer_id LEFT JOIN subscriptions s ON s.id = l.subscription_id";

fn opt_json(r: &AnyRow, col: &str) -> Result<Option<serde_json::Value>> {
    let text: Option<String> = r.try_get(col)?;
    text.map(|t| serde_json::from_str(&t).map_err(|e| crate::error::Error::Internal(format!("stored {col}: {e}")))).transpose()
}

fn license_row(r: &AnyRow) -> Result<(i64, LicenseRow)> {
    let assigned_to = match r.try_get::<Option<String>, _>("subscription_id")? {
        Some(id) => Some((parse_uuid(&id)?, r.try_get("subscription_msisdn")?, r.try_get("subscription_display_name")?)),
        None => None,
    };
    let pending = match (r.try_get::<Option<String>, _>("pending_status")?, opt_ts(r, "pending_at")?) {
        (Some(_), Some(at)) => Some((state_col(r, "pending_status")?, at)),
        _ => None,
    };
    let pending_offering = match (r.try_get::<Option<String>, _>("pending_offering_id")?, opt_ts(r, "pending_offering_at")?) {
        (Some(id), Some(at)) => Some(PendingOffering { offering_id: parse_uuid(&id)?, schedule: r.try_get("pending_offering_schedule")?, at }),
        _ => None,
    };
    let small = |col: &str| -> Result<Option<u32>> { Ok(r.try_get::<Option<i64>, _>(col)?.map(|n| n as u32)) };
    Ok((
        r.try_get("seq")?,
        LicenseRow {
            id: uuid_col(r, "id")?,
            customer_id: uuid_col(r, "customer_id")?,
            customer_name: r.try_get("customer_name")?,
            order_id: uuid_col(r, "order_id")?,
            offering_id: uuid_col(r, "offering_id")?,
            license_type: r.try_get("license_type")?,
            status: state_col(r, "status")?,
            assigned_to,
            created_at: ts_col(r, "created_at")?,
            updated_at: ts_col(r, "updated_at")?,
            activated_at: opt_ts(r, "activated_at")?,
            paused_at: opt_ts(r, "paused_at")?,
            cancelled_at: opt_ts(r, "cancelled_at")?,
            ended_at: opt_ts(r, "ended_at")?,
            pending,
            details: opt_json(r, "details")?,
            metadata: opt_json(r, "metadata")?,
            currency: r.try_get("currency")?,
            cycle_months: small("cycle_months")?,
            billing_day: small("billing_day")?,
            renews_on: opt_date(r, "renews_on")?,
            pending_offering,
            version: r.try_get("version")?,
        },
    ))
}

impl Store {
    pub async fn license(&self, org: Uuid, id: Uuid) -> Result<Option<LicenseRow>> {
        let sql = format!("SELECT {LICENSE_COLUMNS} FROM {LICENSES} WHERE l.org_id = $1 AND l.id = $2");
        let row = sqlx::query(AssertSqlSafe(sql)).bind(org.to_string()).bind(id.to_string()).fetch_optional(&self.pool).await?;
        Ok(row.as_ref().map(license_row).transpose()?.map(|(_, l)| l))
    }

    pub async fn licenses(&self, org: Uuid, f: &LicenseFilter, after: Option<Cursor>, limit: usize) -> Result<Page<LicenseRow>> {
        let mut q = ListQuery::new(format!("SELECT {LICENSE_COLUMNS} FROM {LICENSES} WHERE l.org_id = $1 AND l.seq > $2"));
        if let Some(c) = &f.customers {
            q.any_of("l.customer_id", c.iter().map(Uuid::to_string));
        }
        if !f.statuses.is_empty() {
            q.any_of("l.status", f.statuses.iter().map(|s| s.stored().to_string()));
        }
        if let Some(s) = &f.subscriptions {
            q.any_of("l.subscription_id", s.iter().map(Uuid::to_string));
        }
        q.visible_to("l.customer_id", f.visible_to);
        let rows = q.fetch(&self.pool, org, after, "l.seq", limit).await?;
        Ok(Page::from_rows(rows.iter().map(license_row).collect::<Result<_>>()?, limit))
    }

    /// The license `id` of `org`, read in `tx` (to see what it wrote).
    pub async fn license_in(&self, tx: &mut Tx, org: Uuid, id: Uuid) -> Result<Option<LicenseRow>> {
        let sql = format!("SELECT {LICENSE_COLUMNS} FROM {LICENSES} WHERE l.org_id = $1 AND l.id = $2");
        let row = sqlx::query(AssertSqlSafe(sql)).bind(org.to_string()).bind(id.to_string()).fetch_optional(tx.conn().await?).await?;
        Ok(row.as_ref().map(license_row).transpose()?.map(|(_, l)| l))
    }

    /// The licenses assigned to `subscription`, oldest first, read in `tx`.
    pub async fn subscription_licenses(&self, tx: &mut Tx, org: Uuid, subscription: Uuid) -> Result<Vec<LicenseRow>> {
        let sql = format!("SELECT {LICENSE_COLUMNS} FROM {LICENSES} WHERE l.org_id = $1 AND l.subscription_id = $2 ORDER BY l.seq");
        let rows = sqlx::query(AssertSqlSafe(sql)).bind(org.to_string()).bind(subscription.to_string()).fetch_all(tx.conn().await?).await?;
        rows.iter().map(|r| license_row(r).map(|(_, l)| l)).collect()
    }

    pub async fn insert_license(tx: &mut Tx, org: Uuid, l: &LicenseRow) -> Result<()> {
        tx.execute(
            sqlx::query(
                "INSERT INTO licenses (id, org_id, customer_id, order_id, offering_id, license_type, status, subscription_id, created_at, updated_at,
                   activated_at, details, metadata, currency, cycle_months, billing_day, renews_on)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)",
            )
            .bind(l.id.to_string())
            .bind(org.to_string())
            .bind(l.customer_id.to_string())
            .bind(l.order_id.to_string())
            .bind(l.offering_id.to_string())
            .bind(&l.license_type)
            .bind(l.status.stored())
            .bind(l.assigned_to.as_ref().map(|(s, _, _)| s.to_string()))
            .bind(ts(l.created_at))
            .bind(ts(l.updated_at))
            .bind(l.activated_at.map(ts))
            .bind(l.details.as_ref().map(|d| d.to_string()))
            .bind(l.metadata.as_ref().map(|m| m.to_string()))
            .bind(l.currency.clone())
            .bind(l.cycle_months.map(i64::from))
            .bind(l.billing_day.map(i64::from))
            .bind(l.renews_on.map(|d| d.to_string())),
        )
        .await?;
        Ok(())
    }

    /// Writes `l`'s state over the stored license if it is still as
    /// `before` was read (same version): false when another request or job
    /// moved it first.
    pub async fn update_license(tx: &mut Tx, org: Uuid, l: &LicenseRow, before: &LicenseRow) -> Result<bool> {
        let done = sqlx::query(
            "UPDATE licenses SET status = $1, offering_id = $2, activated_at = $3, paused_at = $4, cancelled_at = $5, ended_at = $6,
               pending_status = $7, pending_at = $8, updated_at = $9, cycle_months = $10, billing_day = $11, renews_on = $12,
               pending_offering_id = $13, pending_offering_schedule = $14, pending_offering_at = $15, version = version + 1
             WHERE id = $16 AND org_id = $17 AND version = $18",
        )
        .bind(l.status.stored())
        .bind(l.offering_id.to_string())
        .bind(l.activated_at.map(ts))
        .bind(l.paused_at.map(ts))
        .bind(l.cancelled_at.map(ts))
        .bind(l.ended_at.map(ts))
        .bind(l.pending.map(|(s, _)| s.stored()))
        .bind(l.pending.map(|(_, at)| ts(at)))
        .bind(ts(l.updated_at))
        .bind(l.cycle_months.map(i64::from))
        .bind(l.billing_day.map(i64::from))
        .bind(l.renews_on.map(|d| d.to_string()))
        .bind(l.pending_offering.as_ref().map(|p| p.offering_id.to_string()))
        .bind(l.pending_offering.as_ref().map(|p| p.schedule.clone()))
        .bind(l.pending_offering.as_ref().map(|p| ts(p.at)))
        .bind(l.id.to_string())
        .bind(org.to_string())
        .bind(before.version)
        .execute(tx.conn().await?)
        .await?;
        Ok(done.rows_affected() == 1)
    }
}
