//! Organisations: the tenants, whether each is a sandbox, and a sandbox
//! organisation's test clock (its offset from the server's time, and
//! whether an advance is running), and the payment providers each does
//! not collect with.

use super::{Store, Tx, parse_ts, parse_uuid, ts};
use crate::error::Result;
use chrono::{DateTime, Duration, Utc};
use sqlx::Row;
use sqlx::any::AnyRow;
use uuid::Uuid;

/// An organisation as the operator lists it.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OrganisationRow {
    pub organisation_id: Uuid,
    pub name: String,
    pub sandbox: bool,
    pub created_at: DateTime<Utc>,
}

/// A test clock as stored: the organisation's time is the server's plus
/// `offset`.
#[derive(Debug, Clone, PartialEq)]
pub struct ClockRow {
    pub sandbox: bool,
    pub offset: Duration,
    /// while an advance runs: the time it runs the work up to
    pub advancing_to: Option<DateTime<Utc>>,
    /// when the last advance was asked for (the server's time)
    pub advanced_at: Option<DateTime<Utc>>,
}

fn clock_row(r: &AnyRow) -> Result<ClockRow> {
    let advancing_to: Option<String> = r.try_get("clock_advancing_to")?;
    let advanced_at: Option<String> = r.try_get("clock_advanced_at")?;
    Ok(ClockRow {
        sandbox: r.try_get::<i64, _>("sandbox")? != 0,
        offset: Duration::milliseconds(r.try_get("clock_offset_ms")?),
        advancing_to: advancing_to.as_deref().map(parse_ts).transpose()?,
        advanced_at: advanced_at.as_deref().map(parse_ts).transpose()?,
    })
}

const CLOCK_COLUMNS: &str = "sandbox, clock_offset_ms, clock_advancing_to, clock_advanced_at";

impl Store {
    pub async fn create_organisation(&self, name: &str, sandbox: bool, now: DateTime<Utc>) -> Result<Uuid> {
        let id = Uuid::new_v4();
        let mut tx = self.begin().await?;
        tx.execute(
            sqlx::query("INSERT INTO organisations (id, name, sandbox, created_at) VALUES ($1, $2, $3, $4)")
                .bind(id.to_string())
                .bind(name)
                .bind(sandbox as i64)
                .bind(ts(now)),
        )
        .await?;
        tx.commit().await?;
        Ok(id)
    }

    /// Every organisation, oldest first.
    pub async fn organisations(&self) -> Result<Vec<OrganisationRow>> {
        let rows = sqlx::query("SELECT id, name, sandbox, created_at FROM organisations ORDER BY created_at, id").fetch_all(&self.pool).await?;
        rows.iter()
            .map(|r| {
                Ok(OrganisationRow {
                    organisation_id: parse_uuid(&r.try_get::<String, _>("id")?)?,
                    name: r.try_get("name")?,
                    sandbox: r.try_get::<i64, _>("sandbox")? != 0,
                    created_at: parse_ts(&r.try_get::<String, _>("created_at")?)?,
                })
            })
            .collect()
    }

    pub async fn organisation_count(&self) -> Result<i64> {
        Ok(sqlx::query("SELECT COUNT(*) AS n FROM organisations").fetch_one(&self.pool).await?.try_get("n")?)
    }

    pub async fn has_organisations(&self) -> Result<bool> {
        let row = sqlx::query("SELECT id FROM organisations LIMIT 1").fetch_optional(&self.pool).await?;
        Ok(row.is_some())
    }

    pub async fn organisation_exists(&self, id: Uuid) -> Result<bool> {
        let row = sqlx::query("SELECT id FROM organisations WHERE id = $1").bind(id.to_string()).fetch_optional(&self.pool).await?;
        Ok(row.is_some())
    }

    /// `org`'s name (a hosted page shows who asks to be paid).
    pub async fn organisation_name(&self, id: Uuid) -> Result<Option<String>> {
        let row = sqlx::query("SELECT name FROM organisations WHERE id = $1").bind(id.to_string()).fetch_optional(&self.pool).await?;
        Ok(row.map(|r| r.try_get("name")).transpose()?)
    }

    /// `org`'s clock; None when there is no such organisation.
    pub async fn clock_of(&self, org: Uuid) -> Result<Option<ClockRow>> {
        let row = sqlx::query(sqlx::AssertSqlSafe(format!("SELECT {CLOCK_COLUMNS} FROM organisations WHERE id = $1")))
            .bind(org.to_string())
            .fetch_optional(&self.pool)
            .await?;
        row.as_ref().map(clock_row).transpose()
    }

    /// `org`'s time when the server's is `server_now`: moved by a sandbox
    /// organisation's test clock. For work done outside a request (a
    /// request reads it with its key, `api::request`).
    pub async fn organisation_time(&self, org: Uuid, server_now: DateTime<Utc>) -> Result<DateTime<Utc>> {
        Ok(server_now + self.clock_of(org).await?.map_or(Duration::zero(), |c| c.offset))
    }

    /// The sandbox organisations whose clocks differ from the server's: the
    /// job runner claims their work by their own time.
    pub async fn moved_clocks(&self) -> Result<Vec<(Uuid, ClockRow)>> {
        let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT id, {CLOCK_COLUMNS} FROM organisations
             WHERE sandbox = 1 AND (clock_offset_ms <> 0 OR clock_advancing_to IS NOT NULL)"
        )))
        .fetch_all(&self.pool)
        .await?;
        rows.iter().map(|r| Ok((parse_uuid(&r.try_get::<String, _>("id")?)?, clock_row(r)?))).collect()
    }

    /// Ends `org`'s advance to `to`: everything due up to it has run. Only
    /// that advance (an instance that took a stale advance over never ends
    /// the next one).
    pub async fn end_advance(&self, org: Uuid, to: DateTime<Utc>) -> Result<()> {
        let mut tx = self.begin().await?;
        tx.execute(
            sqlx::query("UPDATE organisations SET clock_advancing_to = NULL WHERE id = $1 AND clock_advancing_to = $2").bind(org.to_string()).bind(ts(to)),
        )
        .await?;
        tx.commit().await
    }

    /// How many of `org`'s own items due by `to` are left, held or not.
    pub async fn due_work_left(&self, org: Uuid, to: DateTime<Utc>) -> Result<i64> {
        let mut q = sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT COUNT(*) AS n FROM jobs WHERE org_id = $1 AND due_at <= $2 AND kind IN ({})",
            super::placeholders(3, super::ORGANISATION_WORK.len())
        )))
        .bind(org.to_string())
        .bind(ts(to));
        for kind in super::ORGANISATION_WORK {
            q = q.bind(kind.as_str());
        }
        Ok(q.fetch_one(&self.pool).await?.try_get("n")?)
    }
}

impl Tx {
    /// Starts an advance of `org`'s clock, in the request's transaction,
    /// from the clock as the caller read it (`from`: its offset then) to
    /// `offset`, running the work up to `to`. False when that is no longer
    /// the clock (an advance began, or ran, since it was read), or `org` is
    /// not a sandbox: nothing changed. So two advances never both move the
    /// clock, and it never moves back.
    pub async fn begin_advance(&mut self, org: Uuid, from: Duration, offset: Duration, to: DateTime<Utc>, asked_at: DateTime<Utc>) -> Result<bool> {
        let done = sqlx::query(
            "UPDATE organisations SET clock_offset_ms = $2, clock_advancing_to = $3, clock_advanced_at = $4
             WHERE id = $1 AND sandbox = 1 AND clock_advancing_to IS NULL AND clock_offset_ms = $5",
        )
        .bind(org.to_string())
        .bind(offset.num_milliseconds())
        .bind(ts(to))
        .bind(ts(asked_at))
        .bind(from.num_milliseconds())
        .execute(self.conn().await?)
        .await?;
        Ok(done.rows_affected() == 1)
    }
}

impl Store {
    /// The payment providers `org` does not collect with.
    pub async fn disabled_payment_providers(&self, org: Uuid) -> Result<Vec<String>> {
        let rows = sqlx::query("SELECT provider FROM disabled_payment_providers WHERE org_id = $1 ORDER BY provider")
            .bind(org.to_string())
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(|r| Ok(r.try_get("provider")?)).collect()
    }

    /// Lets `org` collect with `provider`, or stops it.
    pub async fn set_payment_provider_enabled(&self, org: Uuid, provider: &str, enabled: bool, now: DateTime<Utc>) -> Result<()> {
        let mut tx = self.begin().await?;
        let statement = if enabled {
            sqlx::query("DELETE FROM disabled_payment_providers WHERE org_id = $1 AND provider = $2").bind(org.to_string()).bind(provider)
        } else {
            sqlx::query("INSERT INTO disabled_payment_providers (org_id, provider, disabled_at) VALUES ($1, $2, $3) ON CONFLICT (org_id, provider) DO NOTHING")
                .bind(org.to_string())
                .bind(provider)
                .bind(ts(now))
        };
        tx.execute(statement).await?;
        tx.commit().await
    }
}
