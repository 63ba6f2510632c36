//! Report runs: `POST /reports` queues one, the `report.run` job writes
//! its file (`run`) in the report store, `GET /reports[/{id}]` shows runs
//! with a fresh signed download URL (`download`). A run and its file are
//! kept 30 days by the organisation's clock (`report.expiry`). Only the
//! organisation's key alone runs and reads reports: they hold every
//! customer's data.

pub mod download;
pub mod rows;
pub mod run;
mod write;

use crate::domain::{Caller, customers};
use crate::error::{Error, InternalCode, Result};
use crate::kinds::{ReportFormat, ReportKey};
use crate::states::reports::ReportRunStatus;
use crate::store::{Cursor, JobKind, Period, ReportRunRow, Store, limit_or_default};
use crate::wire::latest as wire;
use download::Signer;

/// How long a run and its file are kept, and listed (SERVICE.md: the last
/// 30 days), by the organisation's clock.
pub const KEPT_DAYS: i64 = 30;

fn missing() -> Error {
    Error::not_found(InternalCode::ReportRunNotFound, "report run")
}

/// The run as the API shows it; with `signer`, a fresh download URL once
/// it has SUCCEEDED (SERVICE.md rule 6: none before, none if it FAILED).
pub fn to_wire(row: &ReportRunRow, signer: Option<&Signer>) -> Result<wire::ReportRun> {
    let parameters: wire::ReportParameters =
        serde_json::from_value(row.parameters.clone()).map_err(|e| Error::Internal(format!("report run {}: parameters: {e}", row.id)))?;
    let download = match (row.status, signer) {
        (ReportRunStatus::Succeeded, Some(s)) => Some(s.url(row.id)),
        _ => None,
    };
    Ok(wire::ReportRun {
        report_run_id: row.id,
        report_key: wire::ReportKey(row.report_key.stored().into()),
        status: row.status.into(),
        format: row.format.into(),
        parameters,
        download_url: download.as_ref().map(|(url, _)| url.clone()),
        download_expires_at: download.map(|(_, at)| at),
        row_count: row.row_count,
        failure_message: row.failure_message.clone(),
        created_at: row.created_at,
        completed_at: row.completed_at,
    })
}

/// The period `p` asks for: `to` after `from` (400 otherwise).
fn period(p: &wire::ReportParameters) -> Result<Period> {
    if let (Some(from), Some(to)) = (p.from, p.to)
        && to <= from
    {
        return Err(Error::invalid("parameters.to", "before_from", "must be after parameters.from"));
    }
    Ok(Period { from: p.from, to: p.to })
}

/// The report a key names: the documents leave ReportKey an open string
/// (keys are added in any revision), so one the server has no report of
/// is 400 naming those it has.
fn known_key(key: &str) -> Result<ReportKey> {
    ReportKey::from_stored(key).ok_or_else(|| {
        let known: Vec<&str> = ReportKey::ALL.iter().map(|k| k.stored()).collect();
        Error::invalid("reportKey", "invalid_value", format!("must be one of {}", known.join(", ")))
    })
}

pub async fn create(caller: &Caller, body: wire::NewReportRun) -> Result<wire::ReportRun> {
    caller.require_organisation("run reports")?;
    let key = known_key(&body.report_key)?;
    let parameters = body.parameters.unwrap_or_default();
    period(&parameters)?;
    let customer = match parameters.customer_id.as_deref() {
        Some(_) if key == ReportKey::Events => {
            return Err(Error::invalid(
                "parameters.customerId",
                "not_applicable",
                "the events report holds the whole organisation's log: leave customerId out",
            ));
        }
        Some(c) => Some(customers::find(caller, c).await.map_err(|e| match e {
            Error::NotFound { .. } => {
                Error::missing_reference(InternalCode::CustomerNotFound, "parameters.customerId", "No customer of this organisation has this id or reference.")
            }
            other => other,
        })?),
        None => None,
    };
    let row = ReportRunRow {
        id: crate::store::new_id(),
        org_id: caller.org,
        report_key: key,
        format: body.format.map_or(ReportFormat::Csv, ReportFormat::from),
        parameters: crate::wire::to_json(&parameters),
        customer_id: customer.map(|c| c.id),
        status: ReportRunStatus::Queued,
        object_key: None,
        row_count: None,
        failure_message: None,
        created_at: caller.now,
        started_at: None,
        completed_at: None,
        updated_at: caller.now,
    };
    // one organisation's runs never hold up the others' behind a long queue
    let at_most = caller.store.setting(caller.org, crate::store::settings::REPORTS_QUEUED).await?;
    let mut tx = caller.store.begin().await?;
    let queued = Store::queued_report_runs(&mut tx, caller.org).await?;
    if queued >= at_most {
        let message = format!(
            "The organisation has {queued} report runs QUEUED, the most it allows ({}); ask again once some have run.",
            crate::store::settings::REPORTS_QUEUED.name
        );
        return Err(Error::Conflict { code: InternalCode::ReportQueueFull, message, property: "status" });
    }
    Store::insert_report_run(&mut tx, &row).await?;
    Store::schedule_job(&mut tx, JobKind::ReportRun, &row.id.to_string(), Some(caller.org), caller.now, caller.now).await?;
    Store::schedule_job(&mut tx, JobKind::ReportExpiry, &row.id.to_string(), Some(caller.org), expires(&row), caller.now).await?;
    tx.commit().await?;
    to_wire(&row, None)
}

/// When `row` and its file are deleted.
pub fn expires(row: &ReportRunRow) -> chrono::DateTime<chrono::Utc> {
    row.created_at + chrono::Duration::days(KEPT_DAYS)
}

/// The run `id` names, if the caller's organisation has it and it is not
/// past its 30 days.
async fn find(caller: &Caller, id: &str) -> Result<ReportRunRow> {
    let id = uuid::Uuid::parse_str(id).map_err(|_| Error::invalid("reportRunId", "invalid_format", "must be a uuid"))?;
    let row = caller.store.report_run(caller.org, id).await?.ok_or_else(missing)?;
    if expires(&row) <= caller.now {
        return Err(missing());
    }
    Ok(row)
}

pub async fn view(caller: &Caller, signer: &Signer, id: &str) -> Result<wire::ReportRun> {
    caller.require_organisation("read reports")?;
    to_wire(&find(caller, id).await?, Some(signer))
}

pub async fn list(caller: &Caller, signer: &Signer, q: crate::wire::latest::params::ReportListQuery) -> Result<wire::ReportRunList> {
    caller.require_organisation("read reports")?;
    let key = known_key(&q.report_key)?;
    let after = q.cursor.as_deref().map(Cursor::decode).transpose()?;
    let since = caller.now - chrono::Duration::days(KEPT_DAYS);
    let page = caller.store.report_runs(caller.org, key, since, after, limit_or_default(q.limit)).await?;
    Ok(wire::ReportRunList {
        items: page.items.iter().map(|r| to_wire(r, Some(signer))).collect::<Result<_>>()?,
        pagination: wire::Pagination { next_cursor: page.next.map(Cursor::encode) },
    })
}
