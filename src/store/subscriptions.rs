//! Subscriptions: what order submission creates, and the reads of them.

use super::{Cursor, IdOrRef, ListQuery, Page, Store, Tx, opt_ts, parse_ts, parse_uuid, state_col, ts};
use crate::error::Result;
use crate::kinds::SimType as SimCardType;
use crate::states::subscriptions::SubscriptionStatus;
use chrono::{DateTime, NaiveDate, Utc};
use sqlx::any::AnyRow;
use sqlx::{AssertSqlSafe, Row};
use uuid::Uuid;

/// A subscription as stored, with its customer's name.
#[derive(Debug, Clone)]
pub struct SubscriptionRow {
    pub id: Uuid,
    pub customer_id: Uuid,
    pub customer_name: String,
    pub order_id: Uuid,
    pub offering_id: Uuid,
    pub status: SubscriptionStatus,
    pub subscription_type: String,
    pub msisdn: String,
    pub display_name: Option<String>,
    pub sim_type: SimCardType,
    pub reference_id: Option<String>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    /// its subscriber (one per subscription, from its creation)
    pub subscriber_id: Uuid,
    /// what it was bought at (see migrations/*/0012)
    pub terms: Terms,
    /// what the lifecycle sets (see migrations/*/0011 and 0012)
    pub life: Life,
}

/// What a subscription was bought at: its currency, the offering's price
/// document then (or at its last offering change), and the choices made.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Terms {
    pub currency: String,
    pub price: serde_json::Value,
    pub binding_contract: bool,
    pub upfront_cycles: u32,
}

/// An offering change scheduled for later.
#[derive(Debug, Clone, PartialEq)]
pub struct PendingOffering {
    pub offering_id: Uuid,
    /// the ChangeSchedule asked for
    pub schedule: String,
    pub at: DateTime<Utc>,
}

/// What a subscription's moves set: its SIM, the last move's reason, a
/// move scheduled for later, when each state began, its binding contract.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Life {
    pub iccid: Option<String>,
    pub esim_activation_code: Option<String>,
    pub status_reason: Option<String>,
    /// (the status it moves to, when)
    pub pending: Option<(SubscriptionStatus, DateTime<Utc>)>,
    pub activated_at: Option<DateTime<Utc>>,
    pub paused_at: Option<DateTime<Utc>>,
    pub suspended_at: Option<DateTime<Utc>>,
    pub blocked_at: Option<DateTime<Utc>>,
    pub cancelled_at: Option<DateTime<Utc>>,
    pub ended_at: Option<DateTime<Utc>>,
    /// months of binding chosen on the order line
    pub binding_months: Option<i64>,
    pub binding_ends_on: Option<NaiveDate>,
    /// the day of the month its billing cycles begin (its first activation's)
    pub billing_day: Option<u32>,
    /// when the current billing cycle ends (00:00 UTC)
    pub renews_on: Option<NaiveDate>,
    /// the end of the cycles paid for on the initial invoice
    pub paid_through: Option<NaiveDate>,
    pub pending_offering: Option<PendingOffering>,
    /// the invoice whose dunning SUSPENDED it (paying that invoice restores
    /// it; any other move forgets it)
    pub suspended_for_invoice: Option<Uuid>,
    /// its latest port-in (`portings`), read only: the porting's own
    /// writes move it
    pub port_in: Option<Uuid>,
}

impl Life {
    /// The earliest time something falls due: a scheduled move, an
    /// offering change, a renewal.
    pub fn due_at(&self) -> Option<DateTime<Utc>> {
        let renewal = self.renews_on.map(|d| d.and_time(chrono::NaiveTime::MIN).and_utc());
        [self.pending.map(|(_, at)| at), self.pending_offering.as_ref().map(|p| p.at), renewal].into_iter().flatten().min()
    }
}

#[derive(Debug, Default)]
pub struct SubscriptionFilter {
    pub customers: Option<Vec<Uuid>>,
    pub statuses: Vec<SubscriptionStatus>,
    pub types: Vec<String>,
    pub msisdn: Option<String>,
    /// only subscriptions of customers this user is assigned to
    pub visible_to: Option<Uuid>,
    /// only subscriptions activated at least once
    pub activated: bool,
    /// only subscriptions created within this period
    pub created: super::Period,
}

pub(super) fn uuid_col(r: &AnyRow, col: &str) -> Result<Uuid> {
    parse_uuid(&r.try_get::<String, _>(col)?)
}

pub(super) fn ts_col(r: &AnyRow, col: &str) -> Result<DateTime<Utc>> {
    parse_ts(&r.try_get::<String, _>(col)?)
}

pub(super) const SUBSCRIPTION_COLUMNS: &str = "s.seq, s.id, s.customer_id, c.name AS customer_name, s.order_id, s.offering_id, s.status, \
     s.subscription_type, s.msisdn, s.display_name, s.sim_type, s.reference_id, s.created_at, s.updated_at, \
     s.iccid, s.esim_activation_code, s.status_reason, s.pending_status, s.pending_status_at, s.activated_at, s.paused_at, \
     s.suspended_at, s.blocked_at, s.cancelled_at, s.ended_at, s.binding_months, s.binding_ends_on, \
     s.subscriber_id, s.terms, s.billing_day, s.renews_on, s.paid_through, s.pending_offering_id, s.pending_offering_schedule, \
     s.pending_offering_at, s.suspended_for_invoice, \
     (SELECT p.id FROM portings p WHERE p.subscription_id = s.id AND p.direction = 'INBOUND' ORDER BY p.seq DESC LIMIT 1) AS port_in_id";

pub(super) fn opt_date(r: &AnyRow, col: &str) -> Result<Option<NaiveDate>> {
    r.try_get::<Option<String>, _>(col)?.map(|d| d.parse().map_err(|_| crate::error::Error::Internal(format!("{col} {d:?}")))).transpose()
}

fn life(r: &AnyRow) -> Result<Life> {
    let pending = match (r.try_get::<Option<String>, _>("pending_status")?, opt_ts(r, "pending_status_at")?) {
        (Some(s), Some(at)) => Some((s.parse().map_err(|_| crate::error::Error::Internal(format!("pending_status {s:?}")))?, at)),
        _ => None,
    };
    let pending_offering = match (r.try_get::<Option<String>, _>("pending_offering_id")?, opt_ts(r, "pending_offering_at")?) {
        (Some(id), Some(at)) => Some(PendingOffering { offering_id: parse_uuid(&id)?, schedule: r.try_get("pending_offering_schedule")?, at }),
        _ => None,
    };
    Ok(Life {
        iccid: r.try_get("iccid")?,
        esim_activation_code: r.try_get("esim_activation_code")?,
        status_reason: r.try_get("status_reason")?,
        pending,
        activated_at: opt_ts(r, "activated_at")?,
        paused_at: opt_ts(r, "paused_at")?,
        suspended_at: opt_ts(r, "suspended_at")?,
        blocked_at: opt_ts(r, "blocked_at")?,
        cancelled_at: opt_ts(r, "cancelled_at")?,
        ended_at: opt_ts(r, "ended_at")?,
        binding_months: r.try_get("binding_months")?,
        binding_ends_on: opt_date(r, "binding_ends_on")?,
        billing_day: r.try_get::<Option<i64>, _>("billing_day")?.map(|d| d as u32),
        renews_on: opt_date(r, "renews_on")?,
        paid_through: opt_date(r, "paid_through")?,
        pending_offering,
        suspended_for_invoice: super::opt_uuid(r, "suspended_for_invoice")?,
        port_in: super::opt_uuid(r, "port_in_id")?,
    })
}
pub(super) const SUBSCRIPTIONS: &str = "subscriptions s JOIN customers c ON c.id = s.customer_id";

pub(super) fn subscription_row(r: &AnyRow) -> Result<(i64, SubscriptionRow)> {
    Ok((
        r.try_get("seq")?,
        SubscriptionRow {
            id: uuid_col(r, "id")?,
            customer_id: uuid_col(r, "customer_id")?,
            customer_name: r.try_get("customer_name")?,
            order_id: uuid_col(r, "order_id")?,
            offering_id: uuid_col(r, "offering_id")?,
            status: state_col(r, "status")?,
            subscription_type: r.try_get("subscription_type")?,
            msisdn: r.try_get("msisdn")?,
            display_name: r.try_get("display_name")?,
            sim_type: state_col(r, "sim_type")?,
            reference_id: r.try_get("reference_id")?,
            created_at: ts_col(r, "created_at")?,
            updated_at: ts_col(r, "updated_at")?,
            subscriber_id: uuid_col(r, "subscriber_id")?,
            terms: serde_json::from_str(&r.try_get::<String, _>("terms")?).map_err(|e| crate::error::Error::Internal(format!("column terms: {e}")))?,
            life: life(r)?,
        },
    ))
}

impl Store {
    /// The organisation's subscriptions whose column `col` (a fixed name,
    /// never input) holds `id`, as `tx` sees them.
    pub(super) async fn subscriptions_where_in(tx: &mut Tx, org: Uuid, col: &'static str, id: Uuid) -> Result<Vec<SubscriptionRow>> {
        let sql = format!("SELECT {SUBSCRIPTION_COLUMNS} FROM {SUBSCRIPTIONS} WHERE s.org_id = $1 AND {col} = $2 ORDER BY s.seq");
        let rows = sqlx::query(AssertSqlSafe(sql)).bind(org.to_string()).bind(id.to_string()).fetch_all(tx.conn().await?).await?;
        rows.iter().map(|r| subscription_row(r).map(|(_, s)| s)).collect()
    }

    /// A subscription of `org` by id or `rid_` reference.
    pub async fn subscription(&self, org: Uuid, key: &IdOrRef<'_>) -> Result<Option<SubscriptionRow>> {
        let (col, val) = key.column();
        let sql = format!("SELECT {SUBSCRIPTION_COLUMNS} FROM {SUBSCRIPTIONS} WHERE s.org_id = $1 AND s.{col} = $2");
        let row = sqlx::query(AssertSqlSafe(sql)).bind(org.to_string()).bind(val).fetch_optional(&self.pool).await?;
        Ok(row.as_ref().map(subscription_row).transpose()?.map(|(_, s)| s))
    }

    pub async fn subscriptions(&self, org: Uuid, f: &SubscriptionFilter, after: Option<Cursor>, limit: usize) -> Result<Page<SubscriptionRow>> {
        let mut q = ListQuery::new(format!("SELECT {SUBSCRIPTION_COLUMNS} FROM {SUBSCRIPTIONS} WHERE s.org_id = $1 AND s.seq > $2"));
        if let Some(c) = &f.customers {
            q.any_of("s.customer_id", c.iter().map(Uuid::to_string));
        }
        if !f.statuses.is_empty() {
            q.any_of("s.status", f.statuses.iter().map(|s| s.stored().to_string()));
        }
        if !f.types.is_empty() {
            q.any_of("s.subscription_type", f.types.iter().cloned());
        }
        if let Some(m) = &f.msisdn {
            q.eq("s.msisdn", m.clone());
        }
        q.visible_to("s.customer_id", f.visible_to);
        if f.activated {
            q.fixed("s.activated_at IS NOT NULL");
        }
        q.within("s.created_at", &f.created);
        let rows = q.fetch(&self.pool, org, after, "s.seq", limit).await?;
        Ok(Page::from_rows(rows.iter().map(subscription_row).collect::<Result<_>>()?, limit))
    }

    pub async fn subscription_reference_taken(&self, org: Uuid, reference_id: &str) -> Result<bool> {
        let row = sqlx::query("SELECT id FROM subscriptions WHERE org_id = $1 AND reference_id = $2")
            .bind(org.to_string())
            .bind(reference_id)
            .fetch_optional(&self.pool)
            .await?;
        Ok(row.is_some())
    }

    pub async fn insert_subscription(tx: &mut Tx, org: Uuid, s: &SubscriptionRow) -> Result<()> {
        tx.execute(
            sqlx::query(
                "INSERT INTO subscriptions (id, org_id, customer_id, order_id, offering_id, status, subscription_type, msisdn,
                   display_name, sim_type, reference_id, created_at, updated_at, binding_months, subscriber_id, terms)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)",
            )
            .bind(s.id.to_string())
            .bind(org.to_string())
            .bind(s.customer_id.to_string())
            .bind(s.order_id.to_string())
            .bind(s.offering_id.to_string())
            .bind(s.status.stored())
            .bind(&s.subscription_type)
            .bind(&s.msisdn)
            .bind(&s.display_name)
            .bind(s.sim_type.stored())
            .bind(&s.reference_id)
            .bind(ts(s.created_at))
            .bind(ts(s.updated_at))
            .bind(s.life.binding_months)
            .bind(s.subscriber_id.to_string())
            .bind(serde_json::to_string(&s.terms).expect("terms are plain data")),
        )
        .await?;
        Ok(())
    }

    /// A SIM card order replaces the subscription's SIM.
    pub async fn set_subscription_sim(tx: &mut Tx, org: Uuid, subscription: Uuid, sim_type: SimCardType, now: DateTime<Utc>) -> Result<()> {
        tx.execute(
            sqlx::query("UPDATE subscriptions SET sim_type = $1, updated_at = $2 WHERE id = $3 AND org_id = $4")
                .bind(sim_type.stored())
                .bind(ts(now))
                .bind(subscription.to_string())
                .bind(org.to_string()),
        )
        .await?;
        Ok(())
    }
}
