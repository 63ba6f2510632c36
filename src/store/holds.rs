//! What the one mobile network is addressed by, held installation-wide: a
//! live number (until its subscription is cancelled) and a SIM (for good);
//! and whether a number is in use anywhere (held, or in another pool).
//! The primary key makes two organisations' claims on one value race to a
//! single winner; the loser's write fails as a concurrent conflict.

use super::{Store, Tx, parse_uuid, ts};
use crate::error::Result;
use chrono::{DateTime, Utc};
use sqlx::Row;
use uuid::Uuid;

/// What a hold is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Held {
    /// a number, while a subscription not cancelled has it
    Msisdn,
    /// a SIM, for good
    Iccid,
}

impl Held {
    fn as_str(self) -> &'static str {
        match self {
            Held::Msisdn => "msisdn",
            Held::Iccid => "iccid",
        }
    }
}

impl Store {
    /// Whether anyone in the installation holds `value`.
    pub async fn held(&self, kind: Held, value: &str) -> Result<bool> {
        let row =
            sqlx::query("SELECT org_id FROM network_holds WHERE kind = $1 AND value = $2").bind(kind.as_str()).bind(value).fetch_optional(&self.pool).await?;
        Ok(row.is_some())
    }

    /// Whether `msisdn` is in use for `org`: held by a live subscription of
    /// any organisation, or in another organisation's pool (in any state
    /// but PORTED_OUT: an AVAILABLE, LEASED or QUARANTINED number is that
    /// pool's to give). Who has it is never said.
    pub async fn number_in_use(&self, org: Uuid, msisdn: &str) -> Result<bool> {
        let row = sqlx::query(
            "SELECT 1 AS one FROM network_holds WHERE kind = 'msisdn' AND value = $1
             UNION ALL SELECT 1 AS one FROM numbers WHERE msisdn = $1 AND org_id <> $2 AND status <> 'PORTED_OUT'
             LIMIT 1",
        )
        .bind(msisdn)
        .bind(org.to_string())
        .fetch_optional(&self.pool)
        .await?;
        Ok(row.is_some())
    }

    /// Whether `subscription` of `org` holds the number `msisdn`.
    pub async fn holds_number(&self, org: Uuid, subscription: Uuid, msisdn: &str) -> Result<bool> {
        let row = sqlx::query("SELECT org_id FROM network_holds WHERE kind = 'msisdn' AND value = $1 AND org_id = $2 AND subscription_id = $3")
            .bind(msisdn)
            .bind(org.to_string())
            .bind(subscription.to_string())
            .fetch_optional(&self.pool)
            .await?;
        Ok(row.is_some())
    }

    /// `subscription` of `org` takes `value`; fails (a concurrent conflict)
    /// when someone holds it already.
    pub async fn hold(tx: &mut Tx, kind: Held, value: &str, org: Uuid, subscription: Uuid, now: DateTime<Utc>) -> Result<()> {
        tx.execute(
            sqlx::query("INSERT INTO network_holds (kind, value, org_id, subscription_id, held_since) VALUES ($1, $2, $3, $4, $5)")
                .bind(kind.as_str())
                .bind(value.to_string())
                .bind(org.to_string())
                .bind(subscription.to_string())
                .bind(ts(now)),
        )
        .await
    }

    /// `subscription` was cancelled: its number is free for anyone again
    /// (its SIMs stay held: they are blocked for good).
    pub async fn release_number(tx: &mut Tx, subscription: Uuid) -> Result<()> {
        tx.execute(sqlx::query("DELETE FROM network_holds WHERE kind = 'msisdn' AND subscription_id = $1").bind(subscription.to_string())).await
    }

    /// The subscription (organisation, id) that holds the SIM `iccid` and
    /// is on it now with the number `msisdn`, if any: usage is matched
    /// within the organisation that holds the SIM.
    pub async fn subscription_on_sim(&self, iccid: &str, msisdn: &str) -> Result<Option<(Uuid, Uuid)>> {
        let row = sqlx::query(
            "SELECT s.org_id, s.id FROM network_holds h JOIN subscriptions s ON s.id = h.subscription_id AND s.org_id = h.org_id
             WHERE h.kind = 'iccid' AND h.value = $1 AND s.iccid = $1 AND s.msisdn = $2",
        )
        .bind(iccid)
        .bind(msisdn)
        .fetch_optional(&self.pool)
        .await?;
        row.map(|r| Ok((parse_uuid(&r.try_get::<String, _>("org_id")?)?, parse_uuid(&r.try_get::<String, _>("id")?)?))).transpose()
    }
}
