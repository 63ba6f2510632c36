//! The organisation's number pool and its leases. A lease or a quarantine
//! ends by the organisation's clock without a write: a LEASED or
//! QUARANTINED number whose `held_until` has passed is free, and every
//! query that takes a number says so with `free`.

use super::{Store, Tx, opt_ts, opt_uuid, parse_ts, ts};
use crate::error::Result;
use crate::kinds::NumberType;
use chrono::{DateTime, Utc};
use sqlx::{AssertSqlSafe, Row};
use uuid::Uuid;

/// Where a number of the pool is (`numbers.status`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NumberStatus {
    Available,
    Leased,
    Assigned,
    Quarantined,
    PortedOut,
}

impl NumberStatus {
    pub fn stored(self) -> &'static str {
        match self {
            NumberStatus::Available => "AVAILABLE",
            NumberStatus::Leased => "LEASED",
            NumberStatus::Assigned => "ASSIGNED",
            NumberStatus::Quarantined => "QUARANTINED",
            NumberStatus::PortedOut => "PORTED_OUT",
        }
    }

    fn from_stored(s: &str) -> Result<NumberStatus> {
        Ok(match s {
            "AVAILABLE" => NumberStatus::Available,
            "LEASED" => NumberStatus::Leased,
            "ASSIGNED" => NumberStatus::Assigned,
            "QUARANTINED" => NumberStatus::Quarantined,
            "PORTED_OUT" => NumberStatus::PortedOut,
            other => return Err(crate::error::Error::Internal(format!("{other:?} is no number status"))),
        })
    }
}

/// A number of the pool as stored.
/// A lease to write: its id, its token's hash, who holds it
/// (`user:{id}` or `key:{id}`) and until when.
pub struct NewLease<'a> {
    pub id: Uuid,
    pub token_hash: &'a str,
    pub holder: &'a str,
    pub until: DateTime<Utc>,
}

/// What an import did: the numbers it added, and those it left out as in
/// use at this operator (another organisation's; whose is not said).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Imported {
    pub added: u64,
    pub in_use: Vec<String>,
}

#[derive(Debug, Clone)]
pub struct NumberRow {
    pub msisdn: String,
    pub number_type: NumberType,
    pub status: NumberStatus,
    pub subscription_id: Option<Uuid>,
    pub lease_id: Option<Uuid>,
    pub held_until: Option<DateTime<Utc>>,
}

impl NumberRow {
    /// Where it is at `now`: a lease or quarantine past its end is over.
    pub fn status_at(&self, now: DateTime<Utc>) -> NumberStatus {
        match (self.status, self.held_until) {
            (NumberStatus::Leased | NumberStatus::Quarantined, Some(until)) if until <= now => NumberStatus::Available,
            (status, _) => status,
        }
    }
}

/// A lease of numbers as stored.
#[derive(Debug, Clone)]
pub struct LeaseRow {
    pub id: Uuid,
    pub expires_at: DateTime<Utc>,
    pub used_at: Option<DateTime<Utc>>,
}

/// The condition of a number free to take at the time bound to
/// placeholder `$now_param` of the query that uses it: neither held by
/// the pool's states nor, at the network, by a subscription (one made
/// before the number was imported, or another organisation's).
fn free(now_param: usize) -> String {
    format!(
        "((status = 'AVAILABLE' OR (status IN ('LEASED', 'QUARANTINED') AND held_until <= ${now_param}))
    AND NOT EXISTS (SELECT 1 FROM network_holds h WHERE h.kind = 'msisdn' AND h.value = numbers.msisdn))"
    )
}

fn number_row(r: &sqlx::any::AnyRow) -> Result<NumberRow> {
    Ok(NumberRow {
        msisdn: r.try_get("msisdn")?,
        number_type: super::state_col(r, "number_type")?,
        status: NumberStatus::from_stored(&r.try_get::<String, _>("status")?)?,
        subscription_id: opt_uuid(r, "subscription_id")?,
        lease_id: opt_uuid(r, "lease_id")?,
        held_until: opt_ts(r, "held_until")?,
    })
}

const COLUMNS: &str = "msisdn, number_type, status, subscription_id, lease_id, held_until";

impl Store {
    /// Whether `org` has a number pool (has imported any number).
    pub async fn has_number_pool(&self, org: Uuid) -> Result<bool> {
        let row = sqlx::query("SELECT 1 AS one FROM numbers WHERE org_id = $1 LIMIT 1").bind(org.to_string()).fetch_optional(&self.pool).await?;
        Ok(row.is_some())
    }

    /// The number `msisdn` of `org`'s pool.
    pub async fn pool_number(&self, org: Uuid, msisdn: &str) -> Result<Option<NumberRow>> {
        let sql = format!("SELECT {COLUMNS} FROM numbers WHERE org_id = $1 AND msisdn = $2");
        let row = sqlx::query(AssertSqlSafe(sql)).bind(org.to_string()).bind(msisdn).fetch_optional(&self.pool).await?;
        row.as_ref().map(number_row).transpose()
    }

    /// How many numbers of `kind` are free at `now`.
    pub async fn free_numbers(&self, org: Uuid, kind: NumberType, now: DateTime<Utc>) -> Result<i64> {
        let sql = format!("SELECT COUNT(*) AS n FROM numbers WHERE org_id = $1 AND number_type = $2 AND {}", free(3));
        let row = sqlx::query(AssertSqlSafe(sql)).bind(org.to_string()).bind(kind.stored()).bind(ts(now)).fetch_one(&self.pool).await?;
        Ok(row.try_get("n")?)
    }

    /// Like `free_numbers`, counting no further than `at_most`: what an
    /// order's check needs (are there enough for its lines?), without
    /// reading a pool of a hundred thousand numbers on every order.
    pub async fn free_numbers_up_to(&self, org: Uuid, kind: NumberType, now: DateTime<Utc>, at_most: i64) -> Result<i64> {
        let sql = format!("SELECT COUNT(*) AS n FROM (SELECT 1 AS one FROM numbers WHERE org_id = $1 AND number_type = $2 AND {} LIMIT $4) AS f", free(3));
        let row = sqlx::query(AssertSqlSafe(sql)).bind(org.to_string()).bind(kind.stored()).bind(ts(now)).bind(at_most).fetch_one(&self.pool).await?;
        Ok(row.try_get("n")?)
    }

    /// Up to `limit` of `org`'s numbers, by number, after `after`.
    pub async fn pool_numbers(&self, org: Uuid, after: Option<&str>, limit: i64) -> Result<Vec<NumberRow>> {
        let sql = format!("SELECT {COLUMNS} FROM numbers WHERE org_id = $1 AND msisdn > $2 ORDER BY msisdn LIMIT $3");
        let rows = sqlx::query(AssertSqlSafe(sql)).bind(org.to_string()).bind(after.unwrap_or("")).bind(limit).fetch_all(&self.pool).await?;
        rows.iter().map(number_row).collect()
    }

    /// Adds `numbers` (msisdn, type) to `org`'s pool, AVAILABLE; a number
    /// already there is left as it is. How many were added.
    pub async fn import_numbers(&self, org: Uuid, numbers: &[(String, NumberType)], now: DateTime<Utc>) -> Result<Imported> {
        let mut tx = self.begin().await?;
        let mut imported = Imported::default();
        for (msisdn, kind) in numbers {
            // a number in another organisation's pool, or held by another
            // organisation's live subscription, is theirs (the unique index
            // numbers_one_organisation holds it against a race)
            let done = sqlx::query(
                "INSERT INTO numbers (org_id, msisdn, number_type, status, created_at, updated_at)
                 SELECT $1, $2, $3, 'AVAILABLE', $4, $4
                 WHERE NOT EXISTS (SELECT 1 FROM numbers o WHERE o.msisdn = $2 AND o.org_id <> $1 AND o.status <> 'PORTED_OUT')
                   AND NOT EXISTS (SELECT 1 FROM network_holds h WHERE h.kind = 'msisdn' AND h.value = $2 AND h.org_id <> $1)
                 ON CONFLICT (org_id, msisdn) DO NOTHING",
            )
            .bind(org.to_string())
            .bind(msisdn.as_str())
            .bind(kind.stored())
            .bind(ts(now))
            .execute(tx.conn().await?)
            .await?;
            imported.added += done.rows_affected();
            if done.rows_affected() == 0 {
                let ours = sqlx::query("SELECT 1 AS one FROM numbers WHERE org_id = $1 AND msisdn = $2")
                    .bind(org.to_string())
                    .bind(msisdn.as_str())
                    .fetch_optional(tx.conn().await?)
                    .await?;
                if ours.is_none() {
                    imported.in_use.push(msisdn.clone());
                }
            }
        }
        // a number this organisation's subscriptions had before the pool
        // is theirs: ASSIGNED, and quarantined when it is released
        tx.execute(
            sqlx::query(
                "UPDATE numbers SET status = 'ASSIGNED', updated_at = $2, subscription_id =
                     (SELECT h.subscription_id FROM network_holds h WHERE h.kind = 'msisdn' AND h.value = numbers.msisdn AND h.org_id = numbers.org_id)
                 WHERE org_id = $1 AND status = 'AVAILABLE'
                   AND EXISTS (SELECT 1 FROM network_holds h WHERE h.kind = 'msisdn' AND h.value = numbers.msisdn AND h.org_id = numbers.org_id)",
            )
            .bind(org.to_string())
            .bind(ts(now)),
        )
        .await?;
        tx.commit().await?;
        Ok(imported)
    }

    /// The live leases (neither used nor expired at `now`) `holder` has of
    /// `org`, and the numbers they hold, as `tx` sees them; on PostgreSQL
    /// the organisation's leases are taken one at a time from here to the
    /// commit, so two at once never both pass a bound.
    pub async fn live_leases_of(tx: &mut Tx, org: Uuid, holder: &str, now: DateTime<Utc>) -> Result<(i64, i64)> {
        tx.one_at_a_time_in(org).await?;
        let row = sqlx::query(
            "SELECT COUNT(DISTINCT l.id) AS leases, COUNT(n.msisdn) AS numbers
             FROM number_leases l LEFT JOIN numbers n ON n.org_id = l.org_id AND n.lease_id = l.id AND n.status = 'LEASED'
             WHERE l.org_id = $1 AND l.holder = $2 AND l.used_at IS NULL AND l.expires_at > $3",
        )
        .bind(org.to_string())
        .bind(holder.to_string())
        .bind(ts(now))
        .fetch_one(tx.conn().await?)
        .await?;
        Ok((row.try_get("leases")?, row.try_get("numbers")?))
    }

    /// A new lease of `org` holding, until `lease.until`, up to `count`
    /// free numbers of `kinds` (in that order of preference, then by
    /// number). The numbers held, with their types.
    pub async fn lease_numbers(
        tx: &mut Tx,
        org: Uuid,
        lease: &NewLease<'_>,
        kinds: &[NumberType],
        count: i64,
        now: DateTime<Utc>,
    ) -> Result<Vec<(String, NumberType)>> {
        let (id, until) = (lease.id, lease.until);
        // two leases at once take different numbers: PostgreSQL skips rows
        // another holds; SQLite has one writer
        let lock = if tx.is_postgres() { " FOR UPDATE SKIP LOCKED" } else { "" };
        let mut held = vec![];
        for kind in kinds {
            let left = count - held.len() as i64;
            if left <= 0 {
                break;
            }
            let sql = format!("SELECT msisdn FROM numbers WHERE org_id = $1 AND number_type = $2 AND {} ORDER BY msisdn LIMIT $4{lock}", free(3));
            let rows = sqlx::query(AssertSqlSafe(sql)).bind(org.to_string()).bind(kind.stored()).bind(ts(now)).bind(left).fetch_all(tx.conn().await?).await?;
            for r in rows {
                let msisdn: String = r.try_get("msisdn")?;
                let sql = format!(
                    "UPDATE numbers SET status = 'LEASED', lease_id = $3, subscription_id = NULL, held_until = $4, updated_at = $5 WHERE org_id = $1 AND msisdn = $2 AND {}",
                    free(5)
                );
                let done = sqlx::query(AssertSqlSafe(sql))
                    .bind(org.to_string())
                    .bind(msisdn.as_str())
                    .bind(id.to_string())
                    .bind(ts(until))
                    .bind(ts(now))
                    .execute(tx.conn().await?)
                    .await?;
                if done.rows_affected() == 1 {
                    held.push((msisdn, *kind));
                }
            }
        }
        if !held.is_empty() {
            tx.execute(
                sqlx::query("INSERT INTO number_leases (id, org_id, token_hash, expires_at, created_at, holder) VALUES ($1, $2, $3, $4, $5, $6)")
                    .bind(id.to_string())
                    .bind(org.to_string())
                    .bind(lease.token_hash.to_string())
                    .bind(ts(until))
                    .bind(ts(now))
                    .bind(lease.holder.to_string()),
            )
            .await?;
        }
        Ok(held)
    }

    /// `org`'s lease whose token hashes to `token_hash`.
    pub async fn number_lease(&self, org: Uuid, token_hash: &str) -> Result<Option<LeaseRow>> {
        let row = sqlx::query("SELECT id, expires_at, used_at FROM number_leases WHERE org_id = $1 AND token_hash = $2")
            .bind(org.to_string())
            .bind(token_hash)
            .fetch_optional(&self.pool)
            .await?;
        row.map(|r| {
            Ok(LeaseRow {
                id: super::parse_uuid(&r.try_get::<String, _>("id")?)?,
                expires_at: parse_ts(&r.try_get::<String, _>("expires_at")?)?,
                used_at: opt_ts(&r, "used_at")?,
            })
        })
        .transpose()
    }

    /// `subscription` takes `msisdn` of `org`'s pool: a free number, or one
    /// `lease` holds until after `now`. Whether it did (false: another took
    /// it first).
    pub async fn assign_number(tx: &mut Tx, org: Uuid, msisdn: &str, lease: Option<Uuid>, subscription: Uuid, now: DateTime<Utc>) -> Result<bool> {
        let sql = format!(
            "UPDATE numbers SET status = 'ASSIGNED', subscription_id = $3, lease_id = NULL, held_until = NULL, updated_at = $4
             WHERE org_id = $1 AND msisdn = $2 AND ({} OR (status = 'LEASED' AND lease_id = $5 AND held_until > $4))",
            free(4)
        );
        let lease = lease.map(|l| l.to_string()).unwrap_or_default();
        let done = sqlx::query(AssertSqlSafe(sql))
            .bind(org.to_string())
            .bind(msisdn)
            .bind(subscription.to_string())
            .bind(ts(now))
            .bind(lease)
            .execute(tx.conn().await?)
            .await?;
        Ok(done.rows_affected() == 1)
    }

    /// `subscription` takes the lowest free number of `kind` in `org`'s
    /// pool; None when there is none.
    pub async fn assign_any_number(tx: &mut Tx, org: Uuid, kind: NumberType, subscription: Uuid, now: DateTime<Utc>) -> Result<Option<String>> {
        let lock = match tx.is_postgres() {
            true => " FOR UPDATE SKIP LOCKED",
            false => "",
        };
        // a number another took between the two statements is passed over
        for _ in 0..8 {
            let sql = format!("SELECT msisdn FROM numbers WHERE org_id = $1 AND number_type = $2 AND {} ORDER BY msisdn LIMIT 1{lock}", free(3));
            let row = sqlx::query(AssertSqlSafe(sql)).bind(org.to_string()).bind(kind.stored()).bind(ts(now)).fetch_optional(tx.conn().await?).await?;
            let Some(row) = row else { return Ok(None) };
            let msisdn: String = row.try_get("msisdn")?;
            if Store::assign_number(tx, org, &msisdn, None, subscription, now).await? {
                return Ok(Some(msisdn));
            }
        }
        Ok(None)
    }

    /// The lease `id` is used up at `now`: the numbers it still holds are
    /// free again.
    pub async fn use_lease(tx: &mut Tx, id: Uuid, now: DateTime<Utc>) -> Result<()> {
        tx.execute(sqlx::query("UPDATE number_leases SET used_at = $2 WHERE id = $1").bind(id.to_string()).bind(ts(now))).await?;
        tx.execute(
            sqlx::query(
                "UPDATE numbers SET status = 'AVAILABLE', lease_id = NULL, held_until = NULL, updated_at = $2 WHERE lease_id = $1 AND status = 'LEASED'",
            )
            .bind(id.to_string())
            .bind(ts(now)),
        )
        .await
    }

    /// `msisdn` of `org`'s pool, which a subscription let go at `now` for a
    /// number it brought, is AVAILABLE again (a port-in's temporary number),
    /// or QUARANTINED until `rests_until`.
    pub async fn let_number_go(tx: &mut Tx, org: Uuid, msisdn: &str, rests_until: Option<DateTime<Utc>>, now: DateTime<Utc>) -> Result<()> {
        let status = if rests_until.is_some() { "QUARANTINED" } else { "AVAILABLE" };
        tx.execute(
            sqlx::query("UPDATE numbers SET status = $4, subscription_id = NULL, held_until = $5, updated_at = $3 WHERE org_id = $1 AND msisdn = $2 AND status = 'ASSIGNED'")
                .bind(org.to_string())
                .bind(msisdn.to_string())
                .bind(ts(now))
                .bind(status)
                .bind(rests_until.map(ts)),
        )
        .await
    }

    /// `msisdn`, brought by a port-in, is `org`'s number now, ASSIGNED to
    /// `subscription`, when the organisation has a pool (one without stays
    /// without: its order lines keep naming any number).
    pub async fn adopt_number(tx: &mut Tx, org: Uuid, msisdn: &str, kind: NumberType, subscription: Uuid, now: DateTime<Utc>) -> Result<()> {
        tx.execute(
            sqlx::query(
                "INSERT INTO numbers (org_id, msisdn, number_type, status, subscription_id, created_at, updated_at)
                 SELECT $1, $2, $3, 'ASSIGNED', $4, $5, $5 WHERE EXISTS (SELECT 1 FROM numbers WHERE org_id = $1)
                 ON CONFLICT (org_id, msisdn) DO UPDATE SET status = 'ASSIGNED', subscription_id = excluded.subscription_id, lease_id = NULL, held_until = NULL,
                     updated_at = excluded.updated_at",
            )
            .bind(org.to_string())
            .bind(msisdn.to_string())
            .bind(kind.stored())
            .bind(subscription.to_string())
            .bind(ts(now)),
        )
        .await
    }

    /// `msisdn` of `org` was ported out to another operator at `now`.
    pub async fn number_ported_out(tx: &mut Tx, org: Uuid, msisdn: &str, now: DateTime<Utc>) -> Result<()> {
        tx.execute(
            sqlx::query("UPDATE numbers SET status = 'PORTED_OUT', subscription_id = NULL, lease_id = NULL, held_until = NULL, updated_at = $3 WHERE org_id = $1 AND msisdn = $2")
                .bind(org.to_string())
                .bind(msisdn.to_string())
                .bind(ts(now)),
        )
        .await
    }

    /// `subscription` was cancelled at `now`: its pool number is
    /// quarantined until `until`.
    pub async fn quarantine_number(tx: &mut Tx, subscription: Uuid, until: DateTime<Utc>, now: DateTime<Utc>) -> Result<()> {
        tx.execute(
            sqlx::query("UPDATE numbers SET status = 'QUARANTINED', subscription_id = NULL, held_until = $2, updated_at = $3 WHERE subscription_id = $1 AND status = 'ASSIGNED'")
                .bind(subscription.to_string())
                .bind(ts(until))
                .bind(ts(now)),
        )
        .await
    }
}
