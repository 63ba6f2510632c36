//! Subscribers: the person who uses a subscription, one per subscription
//! (`subscriptions.subscriber_id`), with what was set for them as a JSON
//! document (absent until first set).

use super::subscriptions::{SUBSCRIPTION_COLUMNS, SUBSCRIPTIONS, subscription_row};
use super::{Store, SubscriptionRow, Tx, parse_ts, ts};
use crate::error::{Error, Result};
use chrono::{DateTime, Utc};
use sqlx::{AssertSqlSafe, Row};
use uuid::Uuid;

impl Store {
    /// The subscription whose subscriber is `subscriber`.
    pub async fn subscription_of_subscriber(&self, org: Uuid, subscriber: Uuid) -> Result<Option<SubscriptionRow>> {
        let sql = format!("SELECT {SUBSCRIPTION_COLUMNS} FROM {SUBSCRIPTIONS} WHERE s.org_id = $1 AND s.subscriber_id = $2");
        let row = sqlx::query(AssertSqlSafe(sql)).bind(org.to_string()).bind(subscriber.to_string()).fetch_optional(&self.pool).await?;
        Ok(row.as_ref().map(subscription_row).transpose()?.map(|(_, s)| s))
    }

    /// What subscriber `id` was last set to, and when.
    pub async fn subscriber(&self, org: Uuid, id: Uuid) -> Result<Option<(serde_json::Value, DateTime<Utc>)>> {
        let row = sqlx::query("SELECT doc, updated_at FROM subscribers WHERE org_id = $1 AND id = $2")
            .bind(org.to_string())
            .bind(id.to_string())
            .fetch_optional(&self.pool)
            .await?;
        let Some(r) = row else { return Ok(None) };
        let doc = serde_json::from_str(&r.try_get::<String, _>("doc")?).map_err(|e| Error::Internal(format!("subscriber {id}: {e}")))?;
        Ok(Some((doc, parse_ts(&r.try_get::<String, _>("updated_at")?)?)))
    }

    /// Subscriber `id` of `subscription` is now `doc`.
    pub async fn set_subscriber(tx: &mut Tx, org: Uuid, id: Uuid, subscription: Uuid, doc: &serde_json::Value, now: DateTime<Utc>) -> Result<()> {
        tx.execute(
            sqlx::query(
                "INSERT INTO subscribers (id, org_id, subscription_id, doc, updated_at) VALUES ($1, $2, $3, $4, $5)
                 ON CONFLICT (id) DO UPDATE SET doc = excluded.doc, updated_at = excluded.updated_at",
            )
            .bind(id.to_string())
            .bind(org.to_string())
            .bind(subscription.to_string())
            .bind(doc.to_string())
            .bind(ts(now)),
        )
        .await
    }
}
