//! Report runs (`report_runs`): what was asked for, where its run is, and
//! where its file is in the report store. A move is guarded by the state
//! it read, so two instances never both finish one run.

use super::{Cursor, Page, Store, Tx, opt_ts, parse_ts, parse_uuid, state_col, ts};
use crate::error::Result;
use crate::kinds::{ReportFormat, ReportKey};
use crate::states::reports::ReportRunStatus;
use chrono::{DateTime, Utc};
use sqlx::{AssertSqlSafe, Row};
use uuid::Uuid;

/// A report run as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct ReportRunRow {
    pub id: Uuid,
    pub org_id: Uuid,
    pub report_key: ReportKey,
    pub format: ReportFormat,
    /// as asked (`from`, `to`, `customerId`)
    pub parameters: serde_json::Value,
    /// the customer `parameters.customerId` named
    pub customer_id: Option<Uuid>,
    pub status: ReportRunStatus,
    /// its file in the report store, once written
    pub object_key: Option<String>,
    pub row_count: Option<i64>,
    pub failure_message: Option<String>,
    pub created_at: DateTime<Utc>,
    pub started_at: Option<DateTime<Utc>>,
    pub completed_at: Option<DateTime<Utc>>,
    pub updated_at: DateTime<Utc>,
}

const COLUMNS: &str = "seq, id, org_id, report_key, format, parameters, customer_id, status, object_key, row_count, failure_message, created_at, started_at, completed_at, updated_at";

fn report_row(r: &sqlx::any::AnyRow) -> Result<(i64, ReportRunRow)> {
    let parameters: String = r.try_get("parameters")?;
    Ok((
        r.try_get("seq")?,
        ReportRunRow {
            id: parse_uuid(&r.try_get::<String, _>("id")?)?,
            org_id: parse_uuid(&r.try_get::<String, _>("org_id")?)?,
            report_key: state_col(r, "report_key")?,
            format: state_col(r, "format")?,
            parameters: super::parse_json("parameters", Some(&parameters))?.unwrap_or_default(),
            customer_id: super::opt_uuid(r, "customer_id")?,
            status: state_col(r, "status")?,
            object_key: r.try_get("object_key")?,
            row_count: r.try_get("row_count")?,
            failure_message: r.try_get("failure_message")?,
            created_at: parse_ts(&r.try_get::<String, _>("created_at")?)?,
            started_at: opt_ts(r, "started_at")?,
            completed_at: opt_ts(r, "completed_at")?,
            updated_at: parse_ts(&r.try_get::<String, _>("updated_at")?)?,
        },
    ))
}

impl Store {
    /// How many runs `org` has QUEUED, as `tx` sees them; on PostgreSQL the
    /// organisation's new runs are taken one at a time from here to the
    /// commit, so two at once never both pass its bound.
    pub async fn queued_report_runs(tx: &mut Tx, org: Uuid) -> Result<i64> {
        tx.one_at_a_time_in(org).await?;
        let row = sqlx::query("SELECT COUNT(*) AS queued FROM report_runs WHERE org_id = $1 AND status = 'QUEUED'")
            .bind(org.to_string())
            .fetch_one(tx.conn().await?)
            .await?;
        Ok(row.try_get("queued")?)
    }

    pub async fn insert_report_run(tx: &mut Tx, r: &ReportRunRow) -> Result<()> {
        tx.execute(
            sqlx::query(
                "INSERT INTO report_runs (id, org_id, report_key, format, parameters, customer_id, status, object_key, row_count, failure_message,
                                          created_at, started_at, completed_at, updated_at)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)",
            )
            .bind(r.id.to_string())
            .bind(r.org_id.to_string())
            .bind(r.report_key.stored())
            .bind(r.format.stored())
            .bind(r.parameters.to_string())
            .bind(r.customer_id.map(|c| c.to_string()))
            .bind(r.status.stored())
            .bind(r.object_key.clone())
            .bind(r.row_count)
            .bind(r.failure_message.clone())
            .bind(ts(r.created_at))
            .bind(r.started_at.map(ts))
            .bind(r.completed_at.map(ts))
            .bind(ts(r.updated_at)),
        )
        .await
    }

    /// The run `id` of `org`.
    pub async fn report_run(&self, org: Uuid, id: Uuid) -> Result<Option<ReportRunRow>> {
        let sql = format!("SELECT {COLUMNS} FROM report_runs WHERE org_id = $1 AND id = $2");
        let row = sqlx::query(AssertSqlSafe(sql)).bind(org.to_string()).bind(id.to_string()).fetch_optional(&self.pool).await?;
        Ok(row.as_ref().map(report_row).transpose()?.map(|(_, r)| r))
    }

    /// The run `id` of whichever organisation (a signed download URL names
    /// it alone).
    pub async fn report_run_by_id(&self, id: Uuid) -> Result<Option<ReportRunRow>> {
        let sql = format!("SELECT {COLUMNS} FROM report_runs WHERE id = $1");
        let row = sqlx::query(AssertSqlSafe(sql)).bind(id.to_string()).fetch_optional(&self.pool).await?;
        Ok(row.as_ref().map(report_row).transpose()?.map(|(_, r)| r))
    }

    /// One page of `org`'s runs of `key` asked for after `since`, newest
    /// first (the cursor names the last run shown; older ones follow).
    pub async fn report_runs(&self, org: Uuid, key: ReportKey, since: DateTime<Utc>, after: Option<Cursor>, limit: usize) -> Result<Page<ReportRunRow>> {
        let sql =
            format!("SELECT {COLUMNS} FROM report_runs WHERE org_id = $1 AND report_key = $2 AND created_at > $3 AND seq < $4 ORDER BY seq DESC LIMIT $5");
        let rows = sqlx::query(AssertSqlSafe(sql))
            .bind(org.to_string())
            .bind(key.stored())
            .bind(ts(since))
            .bind(after.map_or(i64::MAX, |c| c.after_seq))
            .bind(limit as i64 + 1)
            .fetch_all(&self.pool)
            .await?;
        Ok(Page::from_rows(rows.iter().map(report_row).collect::<Result<_>>()?, limit))
    }

    /// Writes `after` over the run, if it is still in the state `before`
    /// read; whether it was.
    pub async fn move_report_run(tx: &mut Tx, after: &ReportRunRow, before: ReportRunStatus) -> Result<bool> {
        let done = sqlx::query(
            "UPDATE report_runs SET status = $3, object_key = $4, row_count = $5, failure_message = $6, started_at = $7, completed_at = $8, updated_at = $9
             WHERE org_id = $1 AND id = $2 AND status = $10",
        )
        .bind(after.org_id.to_string())
        .bind(after.id.to_string())
        .bind(after.status.stored())
        .bind(after.object_key.clone())
        .bind(after.row_count)
        .bind(after.failure_message.clone())
        .bind(after.started_at.map(ts))
        .bind(after.completed_at.map(ts))
        .bind(ts(after.updated_at))
        .bind(before.stored())
        .execute(tx.conn().await?)
        .await?;
        Ok(done.rows_affected() == 1)
    }

    /// Deletes the run `id` of `org` (its file is deleted first).
    pub async fn delete_report_run(&self, org: Uuid, id: Uuid) -> Result<()> {
        sqlx::query("DELETE FROM report_runs WHERE org_id = $1 AND id = $2").bind(org.to_string()).bind(id.to_string()).execute(&self.pool).await?;
        Ok(())
    }
}
