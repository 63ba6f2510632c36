//! Subscription add-ons: what order submission creates, their moves
//! (optimistic, like a subscription's) and the reads of them
//! (migrations/*/0005, 0013, 0014).

use super::subscriptions::uuid_col;
use super::{PendingOffering, Store, Tx, opt_ts, parse_ts, state_col, ts};
use crate::error::Result;
use crate::states::subscription_addons::AddonStatus as SubscriptionAddonStatus;
use chrono::{DateTime, Utc};
use sqlx::Row;
use sqlx::any::AnyRow;
use uuid::Uuid;

/// An add-on as stored.
#[derive(Debug, Clone)]
pub struct AddonRow {
    pub id: Uuid,
    pub subscription_id: Uuid,
    pub order_id: Uuid,
    pub offering_id: Uuid,
    pub status: SubscriptionAddonStatus,
    pub reference_id: Option<String>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    /// when it became ACTIVE
    pub activated_at: Option<DateTime<Utc>>,
    /// until when an ACTIVE add-on is valid: its activation plus its
    /// offering's validityDays (never before an offering change)
    pub expires_at: Option<DateTime<Utc>>,
    /// when its cancellation was asked for
    pub cancelled_at: Option<DateTime<Utc>>,
    /// when it became CANCELLED or EXPIRED
    pub ended_at: Option<DateTime<Utc>>,
    /// a move scheduled for later: the state, and when
    pub pending: Option<(SubscriptionAddonStatus, DateTime<Utc>)>,
    /// an offering change scheduled for later
    pub pending_offering: Option<PendingOffering>,
    /// the license it carries, when its product names a licenseType
    pub license_id: Option<Uuid>,
}

impl AddonRow {
    /// When something of it falls due next: a scheduled move or its expiry.
    pub fn due_at(&self) -> Option<DateTime<Utc>> {
        let expiry = self.expires_at.filter(|_| self.status == SubscriptionAddonStatus::Active);
        [self.pending.map(|(_, at)| at), self.pending_offering.as_ref().map(|p| p.at), expiry].into_iter().flatten().min()
    }
}

const COLUMNS: &str = "id, subscription_id, order_id, offering_id, status, reference_id, created_at, updated_at, activated_at, \
     expires_at, cancelled_at, ended_at, pending_status, pending_at, pending_offering_id, pending_offering_schedule, pending_offering_at, license_id";

fn addon_row(r: &AnyRow) -> Result<AddonRow> {
    let pending = match (r.try_get::<Option<String>, _>("pending_status")?, opt_ts(r, "pending_at")?) {
        (Some(_), Some(at)) => Some((state_col(r, "pending_status")?, at)),
        _ => None,
    };
    Ok(AddonRow {
        id: uuid_col(r, "id")?,
        subscription_id: uuid_col(r, "subscription_id")?,
        order_id: uuid_col(r, "order_id")?,
        offering_id: uuid_col(r, "offering_id")?,
        status: state_col(r, "status")?,
        reference_id: r.try_get("reference_id")?,
        created_at: parse_ts(&r.try_get::<String, _>("created_at")?)?,
        updated_at: parse_ts(&r.try_get::<String, _>("updated_at")?)?,
        activated_at: opt_ts(r, "activated_at")?,
        expires_at: opt_ts(r, "expires_at")?,
        cancelled_at: opt_ts(r, "cancelled_at")?,
        ended_at: opt_ts(r, "ended_at")?,
        pending,
        pending_offering: match (r.try_get::<Option<String>, _>("pending_offering_id")?, opt_ts(r, "pending_offering_at")?) {
            (Some(id), Some(at)) => Some(PendingOffering {
                offering_id: super::parse_uuid(&id)?,
                schedule: r.try_get::<Option<String>, _>("pending_offering_schedule")?.unwrap_or_default(),
                at,
            }),
            _ => None,
        },
        license_id: r.try_get::<Option<String>, _>("license_id")?.map(|id| super::parse_uuid(&id)).transpose()?,
    })
}

impl Store {
    /// Every add-on of a subscription, oldest first; read in `tx` when
    /// given (to see what it wrote), and then held until it commits (on
    /// PostgreSQL `FOR UPDATE`; SQLite has one writer), so the moves it
    /// writes meet no concurrent one.
    pub async fn subscription_addons(&self, tx: Option<&mut Tx>, org: Uuid, subscription: Uuid) -> Result<Vec<AddonRow>> {
        let lock = match (&tx, self.backend) {
            (Some(_), super::Backend::Postgres) => " FOR UPDATE",
            _ => "",
        };
        let sql = format!("SELECT {COLUMNS} FROM subscription_addons WHERE org_id = $1 AND subscription_id = $2 ORDER BY seq{lock}");
        let q = sqlx::query(sqlx::AssertSqlSafe(sql)).bind(org.to_string()).bind(subscription.to_string());
        let rows = match tx {
            Some(tx) => q.fetch_all(tx.conn().await?).await?,
            None => q.fetch_all(&self.pool).await?,
        };
        rows.iter().map(addon_row).collect()
    }

    /// The add-on `id` of `org`.
    pub async fn addon(&self, org: Uuid, id: Uuid) -> Result<Option<AddonRow>> {
        let sql = format!("SELECT {COLUMNS} FROM subscription_addons WHERE org_id = $1 AND id = $2");
        let row = sqlx::query(sqlx::AssertSqlSafe(sql)).bind(org.to_string()).bind(id.to_string()).fetch_optional(&self.pool).await?;
        row.as_ref().map(addon_row).transpose()
    }

    pub async fn insert_subscription_addon(tx: &mut Tx, org: Uuid, a: &AddonRow) -> Result<()> {
        tx.execute(
            sqlx::query(
                "INSERT INTO subscription_addons (id, org_id, subscription_id, order_id, offering_id, status, reference_id, created_at, updated_at,
                   activated_at, expires_at, license_id)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)",
            )
            .bind(a.id.to_string())
            .bind(org.to_string())
            .bind(a.subscription_id.to_string())
            .bind(a.order_id.to_string())
            .bind(a.offering_id.to_string())
            .bind(a.status.stored())
            .bind(&a.reference_id)
            .bind(ts(a.created_at))
            .bind(ts(a.updated_at))
            .bind(a.activated_at.map(ts))
            .bind(a.expires_at.map(ts))
            .bind(a.license_id.map(|l| l.to_string())),
        )
        .await?;
        Ok(())
    }

    /// Writes `a` over the stored add-on if it is still as `before` was
    /// read (same status, same `updatedAt`): false when another request or
    /// job moved it first.
    pub async fn update_addon(tx: &mut Tx, org: Uuid, a: &AddonRow, before: &AddonRow) -> Result<bool> {
        let done = sqlx::query(
            "UPDATE subscription_addons SET status = $1, offering_id = $2, activated_at = $3, expires_at = $4, cancelled_at = $5,
               ended_at = $6, pending_status = $7, pending_at = $8, updated_at = $9, pending_offering_id = $14,
               pending_offering_schedule = $15, pending_offering_at = $16
             WHERE id = $10 AND org_id = $11 AND status = $12 AND updated_at = $13",
        )
        .bind(a.status.stored())
        .bind(a.offering_id.to_string())
        .bind(a.activated_at.map(ts))
        .bind(a.expires_at.map(ts))
        .bind(a.cancelled_at.map(ts))
        .bind(a.ended_at.map(ts))
        .bind(a.pending.map(|(s, _)| s.stored()))
        .bind(a.pending.map(|(_, at)| ts(at)))
        .bind(ts(a.updated_at))
        .bind(a.id.to_string())
        .bind(org.to_string())
        .bind(before.status.stored())
        .bind(ts(before.updated_at))
        .bind(a.pending_offering.as_ref().map(|p| p.offering_id.to_string()))
        .bind(a.pending_offering.as_ref().map(|p| p.schedule.clone()))
        .bind(a.pending_offering.as_ref().map(|p| ts(p.at)))
        .execute(tx.conn().await?)
        .await?;
        Ok(done.rows_affected() == 1)
    }
}
