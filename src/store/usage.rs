//! Usage: the records the network reported (each once), what each
//! subscription's billing periods add up to with the quota thresholds
//! reached, and what each add-on package has given (migrations/*/0013).

use super::{Store, Tx, parse_ts, parse_uuid, ts};
use crate::error::Result;
use chrono::{DateTime, NaiveDate, Utc};
use sqlx::Row;
use sqlx::any::AnyRow;
use std::collections::HashMap;
use uuid::Uuid;

/// One record of usage, as the network reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsageRecord {
    /// the network's id of the record: a record sent again is the same one
    pub record_id: String,
    pub kind: UsageKind,
    /// kilobytes (DATA), seconds (VOICE, VOICE_ILD) or messages (SMS)
    pub quantity: i64,
    /// what a VOICE_ILD call cost, in minor units of the subscription's currency
    pub charge_minor: i64,
    /// VOICE_ILD: the country called (ISO 3166-1 alpha-3)
    pub country: Option<String>,
    pub occurred_at: DateTime<Utc>,
}

/// What a record counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UsageKind {
    Data,
    Voice,
    Sms,
    VoiceIld,
}

impl UsageKind {
    pub const ALL: [UsageKind; 4] = [UsageKind::Data, UsageKind::Voice, UsageKind::Sms, UsageKind::VoiceIld];

    pub fn as_str(self) -> &'static str {
        match self {
            UsageKind::Data => "DATA",
            UsageKind::Voice => "VOICE",
            UsageKind::Sms => "SMS",
            UsageKind::VoiceIld => "VOICE_ILD",
        }
    }
}

impl std::str::FromStr for UsageKind {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        UsageKind::ALL.into_iter().find(|k| k.as_str() == s).ok_or_else(|| format!("{s:?} is not one of DATA, VOICE, SMS, VOICE_ILD"))
    }
}

/// The amounts usage adds to a period or a package.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Amounts {
    pub data_kb: i64,
    pub voice_seconds: i64,
    pub sms: i64,
    pub ild_seconds: i64,
    /// of a period: what calls abroad cost beyond package credit; of a
    /// package: the credit it paid
    pub ild_minor: i64,
}

/// A billing period's usage so far.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PeriodUsage {
    pub amounts: Amounts,
    /// the quota thresholds reached ("DATA:80")
    pub notices: Vec<String>,
    pub updated_at: Option<DateTime<Utc>>,
}

fn amounts(r: &AnyRow, ild: &str) -> Result<Amounts> {
    Ok(Amounts {
        data_kb: r.try_get("data_kb")?,
        voice_seconds: r.try_get("voice_seconds")?,
        sms: r.try_get("sms")?,
        ild_seconds: r.try_get("ild_seconds")?,
        ild_minor: r.try_get(ild)?,
    })
}

fn period_usage(r: &AnyRow) -> Result<PeriodUsage> {
    let notices: String = r.try_get("notices")?;
    Ok(PeriodUsage {
        amounts: amounts(r, "ild_charged_minor")?,
        notices: notices.split_whitespace().map(str::to_string).collect(),
        updated_at: Some(parse_ts(&r.try_get::<String, _>("updated_at")?)?),
    })
}

const PERIOD_COLUMNS: &str = "data_kb, voice_seconds, sms, ild_seconds, ild_charged_minor, notices, updated_at";

impl Store {
    /// How far the server has read the network's feed `feed` (0: nothing
    /// yet).
    pub async fn feed_position(&self, feed: &str) -> Result<u64> {
        let row = sqlx::query("SELECT position FROM feed_positions WHERE feed = $1").bind(feed).fetch_optional(&self.pool).await?;
        let position: i64 = match row {
            Some(r) => r.try_get("position")?,
            None => 0,
        };
        Ok(u64::try_from(position).unwrap_or(0))
    }

    /// The feed `feed` has been read up to `position`: kept unless another
    /// instance has read further.
    pub async fn set_feed_position(&self, feed: &str, position: u64, now: DateTime<Utc>) -> Result<()> {
        let position = i64::try_from(position).unwrap_or(i64::MAX);
        let mut tx = self.begin().await?;
        tx.execute(
            sqlx::query(
                "INSERT INTO feed_positions (feed, position, updated_at) VALUES ($1, $2, $3)
                 ON CONFLICT (feed) DO UPDATE SET position = excluded.position, updated_at = excluded.updated_at
                 WHERE feed_positions.position < excluded.position",
            )
            .bind(feed)
            .bind(position)
            .bind(ts(now)),
        )
        .await?;
        tx.commit().await
    }

    /// Keeps `record` of `subscription`, counted in the period beginning
    /// `period`; false when it was kept already (nothing changes then).
    pub async fn insert_usage_record(tx: &mut Tx, org: Uuid, subscription: Uuid, record: &UsageRecord, period: NaiveDate, now: DateTime<Utc>) -> Result<bool> {
        let done = sqlx::query(
            "INSERT INTO usage_records (subscription_id, record_id, org_id, kind, quantity, charge_minor, country, occurred_at, period_start, recorded_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT (subscription_id, record_id) DO NOTHING",
        )
        .bind(subscription.to_string())
        .bind(&record.record_id)
        .bind(org.to_string())
        .bind(record.kind.as_str())
        .bind(record.quantity)
        .bind(record.charge_minor)
        .bind(&record.country)
        .bind(ts(record.occurred_at))
        .bind(period.to_string())
        .bind(ts(now))
        .execute(tx.conn().await?)
        .await?;
        Ok(done.rows_affected() == 1)
    }

    /// Adds `add` to the period beginning `period`; its usage after.
    pub async fn add_period_usage(tx: &mut Tx, org: Uuid, subscription: Uuid, period: NaiveDate, add: Amounts, now: DateTime<Utc>) -> Result<PeriodUsage> {
        let sql = format!(
            "INSERT INTO usage_periods (subscription_id, period_start, org_id, data_kb, voice_seconds, sms, ild_seconds, ild_charged_minor, notices, updated_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, '', $9)
             ON CONFLICT (subscription_id, period_start) DO UPDATE SET
               data_kb = usage_periods.data_kb + excluded.data_kb, voice_seconds = usage_periods.voice_seconds + excluded.voice_seconds,
               sms = usage_periods.sms + excluded.sms, ild_seconds = usage_periods.ild_seconds + excluded.ild_seconds,
               ild_charged_minor = usage_periods.ild_charged_minor + excluded.ild_charged_minor, updated_at = excluded.updated_at
             RETURNING {PERIOD_COLUMNS}"
        );
        let row = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(subscription.to_string())
            .bind(period.to_string())
            .bind(org.to_string())
            .bind(add.data_kb)
            .bind(add.voice_seconds)
            .bind(add.sms)
            .bind(add.ild_seconds)
            .bind(add.ild_minor)
            .bind(ts(now))
            .fetch_one(tx.conn().await?)
            .await?;
        period_usage(&row)
    }

    /// The quota thresholds the period beginning `period` has reached are now `notices`.
    pub async fn set_usage_notices(tx: &mut Tx, subscription: Uuid, period: NaiveDate, notices: &[String]) -> Result<()> {
        tx.execute(
            sqlx::query("UPDATE usage_periods SET notices = $1 WHERE subscription_id = $2 AND period_start = $3")
                .bind(notices.join(" "))
                .bind(subscription.to_string())
                .bind(period.to_string()),
        )
        .await
    }

    /// The usage of `subscription` in the period beginning `period`; None while there is none.
    pub async fn period_usage(&self, org: Uuid, subscription: Uuid, period: NaiveDate) -> Result<Option<PeriodUsage>> {
        let sql = format!("SELECT {PERIOD_COLUMNS} FROM usage_periods WHERE org_id = $1 AND subscription_id = $2 AND period_start = $3");
        let row = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(org.to_string())
            .bind(subscription.to_string())
            .bind(period.to_string())
            .fetch_optional(&self.pool)
            .await?;
        row.as_ref().map(period_usage).transpose()
    }

    /// The recorded periods of the subscriptions `of` (one page of a
    /// report) beginning on or after `from` and before `to`, by
    /// subscription and then period.
    pub async fn periods_of(&self, org: Uuid, of: &[Uuid], from: Option<NaiveDate>, to: Option<NaiveDate>) -> Result<Vec<(Uuid, NaiveDate, PeriodUsage)>> {
        if of.is_empty() {
            return Ok(vec![]);
        }
        let sql = format!(
            "SELECT subscription_id, period_start, {PERIOD_COLUMNS} FROM usage_periods
             WHERE org_id = $1 AND period_start >= $2 AND period_start < $3 AND subscription_id IN ({})
             ORDER BY subscription_id, period_start",
            super::placeholders(4, of.len())
        );
        let mut q = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(org.to_string())
            .bind(from.map_or_else(|| "0000-01-01".to_string(), |d| d.to_string()))
            .bind(to.map_or_else(|| "9999-12-31".to_string(), |d| d.to_string()));
        for id in of {
            q = q.bind(id.to_string());
        }
        let rows = q.fetch_all(&self.pool).await?;
        rows.iter()
            .map(|r| {
                let start: String = r.try_get("period_start")?;
                let start = start.parse().map_err(|e| crate::error::Error::Internal(format!("usage_periods.period_start: {e}")))?;
                Ok((parse_uuid(&r.try_get::<String, _>("subscription_id")?)?, start, period_usage(r)?))
            })
            .collect()
    }

    /// What each package of `subscription` has given, by add-on; read in
    /// `tx` when it is recording usage (so it sees its own batch).
    pub async fn package_usage(&self, tx: Option<&mut Tx>, org: Uuid, subscription: Uuid) -> Result<HashMap<Uuid, Amounts>> {
        let q = sqlx::query(
            "SELECT addon_id, data_kb, voice_seconds, sms, ild_seconds, ild_charge_minor FROM usage_packages WHERE org_id = $1 AND subscription_id = $2",
        )
        .bind(org.to_string())
        .bind(subscription.to_string());
        let rows = match tx {
            Some(tx) => q.fetch_all(tx.conn().await?).await?,
            None => q.fetch_all(&self.pool).await?,
        };
        rows.iter().map(|r| Ok((parse_uuid(&r.try_get::<String, _>("addon_id")?)?, amounts(r, "ild_charge_minor")?))).collect()
    }

    /// Package `addon` of `subscription` gave `add` more.
    pub async fn add_package_usage(tx: &mut Tx, org: Uuid, subscription: Uuid, addon: Uuid, add: Amounts) -> Result<()> {
        tx.execute(
            sqlx::query(
                "INSERT INTO usage_packages (addon_id, org_id, subscription_id, data_kb, voice_seconds, sms, ild_seconds, ild_charge_minor)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
                 ON CONFLICT (addon_id) DO UPDATE SET
                   data_kb = usage_packages.data_kb + excluded.data_kb, voice_seconds = usage_packages.voice_seconds + excluded.voice_seconds,
                   sms = usage_packages.sms + excluded.sms, ild_seconds = usage_packages.ild_seconds + excluded.ild_seconds,
                   ild_charge_minor = usage_packages.ild_charge_minor + excluded.ild_charge_minor",
            )
            .bind(addon.to_string())
            .bind(org.to_string())
            .bind(subscription.to_string())
            .bind(add.data_kb)
            .bind(add.voice_seconds)
            .bind(add.sms)
            .bind(add.ild_seconds)
            .bind(add.ild_minor),
        )
        .await
    }
}
