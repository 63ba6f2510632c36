//! The `report.run` job's work: a run is taken (RUNNING), its rows are
//! read a page at a time (keyset pages, never one long cursor: on SQLite a
//! long read would hold the write-ahead log's snapshot and the log would
//! grow) and streamed to a new file of the report store, then the run
//! SUCCEEDED with `report_run.succeeded`, in one transaction that also
//! ends the job's item. The item's claim is renewed while the file is
//! written, so another instance does not take a long run over; an
//! instance that lost its claim stops and drops its file. A file that
//! cannot be written is tried again, and after `ATTEMPTS` the run FAILED
//! with `report_run.failed`.

use super::rows::{self, Source};
use super::states::{REPORT_RUN, RunOp};
use super::write;
use crate::clock::Clock;
use crate::error::{Error, Result};
use crate::events::{self, Event};
use crate::kinds::{ReportFormat, ReportRunStatus};
use crate::report_files::ReportFiles;
use crate::store::{Job, Period, ReportRunRow, Store};
use chrono::{DateTime, Duration, Utc};
use std::time::Instant;
use uuid::Uuid;

/// Tries of a run whose file cannot be written before it FAILED.
pub const ATTEMPTS: i64 = 3;

/// What a file holds before it is handed to the report store (which sends
/// parts of 5 MiB).
const FLUSH_BYTES: usize = 1 << 20;

/// What the job runs with.
pub struct Runner<'a> {
    pub store: &'a Store,
    pub files: &'a ReportFiles,
    pub clock: &'a Clock,
    /// how long a claim (and each renewal) holds
    pub lease: Duration,
}

/// A run's file's name in the report store: each try writes its own, so a
/// try cut off never leaves half a file where another try's is.
fn object_key(row: &ReportRunRow, attempt: i64) -> String {
    let ext = match row.format {
        ReportFormat::Csv => "csv",
        ReportFormat::Jsonl => "jsonl",
    };
    format!("reports/{}/{}/{attempt}.{ext}", row.org_id, row.id)
}

impl Runner<'_> {
    /// Runs the run `job` names. The item's end (done, or due again) is
    /// recorded here, under the claim as last renewed.
    pub async fn run(&self, mut job: Job) -> Result<()> {
        let claimed = Instant::now();
        let (Some(org), Ok(id)) = (job.org, job.subject.parse::<Uuid>()) else { return self.store.finish_job(&job).await };
        let Some(row) = self.store.report_run(org, id).await? else { return self.store.finish_job(&job).await };
        let Some(status) = REPORT_RUN.target(RunOp::Start, row.status) else { return self.store.finish_job(&job).await };
        // the organisation's time: the item's, and what has passed since
        let job_now = job.now;
        let now = |at: Instant| job_now + Duration::from_std(at.elapsed()).unwrap_or_default();
        let started = ReportRunRow { status, started_at: Some(job.now), updated_at: job.now, ..row.clone() };
        let mut tx = self.store.begin().await?;
        if !Store::move_report_run(&mut tx, &started, row.status).await? {
            // moved meanwhile: the next claim looks again
            return Ok(());
        }
        tx.commit().await?;
        let key = object_key(&started, job.attempts);
        match self.write(&mut job, &started, &key).await {
            Ok(Some(count)) => {
                let at = now(claimed);
                let done = ReportRunRow {
                    status: REPORT_RUN.next(RunOp::Succeed, started.status)?,
                    object_key: Some(key.clone()),
                    row_count: Some(count),
                    completed_at: Some(at),
                    updated_at: at,
                    ..started.clone()
                };
                if !self.end(&job, &done, started.status, Event::ReportRunSucceeded(super::to_wire(&done, None)?)).await? {
                    self.files.delete(&key).await?;
                }
                Ok(())
            }
            // another instance took the run over
            Ok(None) => self.files.delete(&key).await,
            Err(e) if job.attempts < ATTEMPTS => {
                tracing::warn!(report_run = %id, error = %e, "report run failed; will try again");
                // due again in the item's time, as any retry
                self.store.retry_job(&job, &e.to_string(), now(claimed) + Duration::seconds(60)).await
            }
            Err(e) => {
                tracing::error!(report_run = %id, error = %e, "report run failed");
                let at = now(claimed);
                let failed = ReportRunRow {
                    status: REPORT_RUN.next(RunOp::Fail, started.status)?,
                    failure_message: Some("The report's file could not be written; run it again.".into()),
                    completed_at: Some(at),
                    updated_at: at,
                    ..started.clone()
                };
                self.end(&job, &failed, started.status, Event::ReportRunFailed(super::to_wire(&failed, None)?)).await?;
                Ok(())
            }
        }
    }

    /// Moves the run to its end, records `event` and ends the job's item,
    /// in one transaction; false when the run had moved meanwhile.
    async fn end(&self, job: &Job, after: &ReportRunRow, before: ReportRunStatus, event: Event) -> Result<bool> {
        let mut tx = self.store.begin().await?;
        let moved = Store::move_report_run(&mut tx, after, before).await?;
        if moved {
            events::record(&mut tx, after.org_id, after.updated_at, &event).await?;
        }
        Store::finish_job_in(&mut tx, job).await?;
        tx.commit().await?;
        Ok(moved)
    }

    /// Writes the run's file at `key`: its rows' count, or None when the
    /// claim was lost (the file is dropped).
    async fn write(&self, job: &mut Job, run: &ReportRunRow, key: &str) -> Result<Option<i64>> {
        let parameters: crate::wire::latest::ReportParameters =
            serde_json::from_value(run.parameters.clone()).map_err(|e| Error::Internal(format!("report run {}: parameters: {e}", run.id)))?;
        let source = Source { key: run.report_key, period: Period { from: parameters.from, to: parameters.to }, customer: run.customer_id };
        let caller = crate::domain::payments::system(self.store, run.org_id, job.now);
        source.prepare(&caller).await?;
        let columns = rows::columns(run.report_key);
        let mut file = self.files.create(key);
        let written = async {
            let mut buf = write::header(run.format, columns);
            let (mut after, mut count, mut renewed) = (None, 0, Instant::now());
            loop {
                let page = source.page(&caller, after).await?;
                for item in &page.items {
                    write::line(run.format, columns, item, &mut buf);
                    count += 1;
                }
                if buf.len() >= FLUSH_BYTES {
                    file.write(std::mem::take(&mut buf).into()).await?;
                }
                if renewed.elapsed() >= (self.lease / 3).to_std().unwrap_or_default() {
                    match self.store.renew_job(job, self.clock.now() + self.lease).await? {
                        Some(held) => *job = held,
                        None => return Ok(None),
                    }
                    renewed = Instant::now();
                }
                match page.next {
                    Some(next) => after = Some(next),
                    None => break,
                }
            }
            if !buf.is_empty() {
                file.write(buf.into()).await?;
            }
            Ok(Some(count))
        }
        .await;
        match written {
            Ok(Some(count)) => {
                file.finish().await?;
                Ok(Some(count))
            }
            other => {
                file.abort().await;
                other
            }
        }
    }
}

/// The `report.expiry` job's work: the run `id` of `org`, 30 days old by
/// the organisation's clock at `now`, is deleted with its file.
pub async fn expire(store: &Store, files: &ReportFiles, org: Uuid, id: Uuid, now: DateTime<Utc>) -> Result<()> {
    let Some(row) = store.report_run(org, id).await? else { return Ok(()) };
    if super::expires(&row) > now {
        return Ok(());
    }
    if let Some(key) = &row.object_key {
        files.delete(key).await?;
    }
    store.delete_report_run(org, id).await
}
