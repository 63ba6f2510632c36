//! The `report.run` job's work: a run is taken (RUNNING), its rows are
//! read a page at a time (keyset pages, never one long cursor: on SQLite a
//! long read would hold the write-ahead log's snapshot and the log would
//! grow) and streamed to a new file of the report store, then the run
//! SUCCEEDED with `report_run.succeeded`, in one transaction that also
//! ends the job's item, if the claim is still this instance's. The claim
//! is renewed while the file is written (every third of a lease, between
//! pages), so another instance does not take a long run over; an instance
//! that finds its claim taken stops and drops its file. A file that cannot
//! be written is tried again (as any job, a minute on), and after
//! `ATTEMPTS` the run FAILED with `report_run.failed`.

use super::rows::{self, Source};
use super::write;
use crate::clock::Clock;
use crate::error::{Error, Result};
use crate::events::{self, Event};
use crate::kinds::ReportFormat;
use crate::report_files::ReportFiles;
use crate::states::reports::{REPORT_RUN, ReportRunStatus, RunOp};
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

/// Where the run `id`'s files are in the report store.
fn prefix(org: Uuid, id: Uuid) -> String {
    format!("reports/{org}/{id}")
}

/// A run's file's name in the report store: each try writes its own, so a
/// try cut off never leaves half a file where another try's is.
fn object_key(row: &ReportRunRow, attempt: i64) -> String {
    let ext = match row.format {
        ReportFormat::Csv => "csv",
        ReportFormat::Jsonl => "jsonl",
    };
    format!("{}/{attempt}.{ext}", prefix(row.org_id, row.id))
}

/// How a run's item ended.
pub enum Ended {
    /// recorded in the transaction of its work (done), or the claim was
    /// found taken over: nothing more to do
    Recorded,
    /// to be tried again, under the claim as now held
    Retry { held: Job, error: String },
}

impl Runner<'_> {
    /// Runs the run `job` names: its end is recorded here (Recorded), or it
    /// is to be tried again under the claim as last renewed.
    pub async fn run(&self, job: Job) -> Ended {
        let mut held = job;
        match self.attempt(&mut held).await {
            Ok(ended) => ended,
            Err(e) => Ended::Retry { held, error: e.to_string() },
        }
    }

    async fn attempt(&self, job: &mut Job) -> Result<Ended> {
        let claimed = Instant::now();
        let done = |job: &Job| {
            let job = job.clone();
            async move { self.store.finish_job(&job).await.map(|()| Ended::Recorded) }
        };
        let (Some(org), Ok(id)) = (job.org, job.subject.parse::<Uuid>()) else { return done(job).await };
        let Some(row) = self.store.report_run(org, id).await? else { return done(job).await };
        let Some(status) = REPORT_RUN.target(RunOp::Start, row.status) else { return done(job).await };
        // the organisation's time: the item's, and what has passed since
        let job_now = job.now;
        let now = move || job_now + Duration::from_std(claimed.elapsed()).unwrap_or_default();
        let started = ReportRunRow { status, started_at: Some(job.now), updated_at: job.now, ..row.clone() };
        let mut tx = self.store.begin().await?;
        if !Store::move_report_run(&mut tx, &started, row.status).await? {
            // ended meanwhile (the claim is ours, so not by another writer)
            drop(tx);
            return done(job).await;
        }
        tx.commit().await?;
        let key = object_key(&started, job.attempts);
        let written = self.write(job, claimed, &started, &key).await;
        let (after, event) = match written {
            Ok(Some(count)) => {
                let at = now();
                let done = ReportRunRow {
                    status: REPORT_RUN.next(RunOp::Succeed, started.status)?,
                    object_key: Some(key.clone()),
                    row_count: Some(count),
                    completed_at: Some(at),
                    updated_at: at,
                    ..started.clone()
                };
                let event = Event::ReportRunSucceeded(super::to_wire(&done, None)?);
                (done, event)
            }
            // another instance took the run over
            Ok(None) => {
                self.files.delete(&key).await?;
                return Ok(Ended::Recorded);
            }
            Err(e) if job.attempts < ATTEMPTS => {
                tracing::warn!(report_run = %id, error = %e, "report run failed; will try again");
                return Ok(Ended::Retry { held: job.clone(), error: e.to_string() });
            }
            Err(e) => {
                tracing::error!(report_run = %id, error = %e, "report run failed");
                let at = now();
                let failed = ReportRunRow {
                    status: REPORT_RUN.next(RunOp::Fail, started.status)?,
                    failure_message: Some("The report's file could not be written; run it again.".into()),
                    completed_at: Some(at),
                    updated_at: at,
                    ..started.clone()
                };
                let event = Event::ReportRunFailed(super::to_wire(&failed, None)?);
                (failed, event)
            }
        };
        if !self.end(job, &after, started.status, event).await? {
            // the claim was taken over meanwhile: the other instance's file counts
            self.files.delete(&key).await?;
        }
        Ok(Ended::Recorded)
    }

    /// Moves the run to its end, records `event` and ends the job's item,
    /// in one transaction, if this instance still holds the item's claim
    /// (and the run was not moved meanwhile); whether it did.
    async fn end(&self, job: &Job, after: &ReportRunRow, before: ReportRunStatus, event: Event) -> Result<bool> {
        let mut tx = self.store.begin().await?;
        if !Store::holds_job_in(&mut tx, job).await? || !Store::move_report_run(&mut tx, after, before).await? {
            return Ok(false);
        }
        events::record(&mut tx, after.org_id, after.updated_at, &event).await?;
        Store::finish_job_in(&mut tx, job).await?;
        tx.commit().await?;
        Ok(true)
    }

    /// Renews the claim if a third of the lease has passed since `renewed`;
    /// false when another instance took the item over.
    async fn keep(&self, job: &mut Job, renewed: &mut Instant) -> Result<bool> {
        if renewed.elapsed() < (self.lease / 3).to_std().unwrap_or_default() {
            return Ok(true);
        }
        match self.store.renew_job(job, self.clock.now() + self.lease).await? {
            Some(held) => *job = held,
            None => return Ok(false),
        }
        *renewed = Instant::now();
        Ok(true)
    }

    /// Writes the run's file at `key`: its rows' count, or None when the
    /// claim (taken at `claimed`) was lost (the file is dropped).
    async fn write(&self, job: &mut Job, claimed: Instant, run: &ReportRunRow, key: &str) -> Result<Option<i64>> {
        let parameters: crate::wire::latest::ReportParameters =
            serde_json::from_value(run.parameters.clone()).map_err(|e| Error::Internal(format!("report run {}: parameters: {e}", run.id)))?;
        let source = Source { key: run.report_key, period: Period { from: parameters.from, to: parameters.to }, customer: run.customer_id };
        let caller = crate::domain::Caller::system(self.store, run.org_id, job.now);
        let mut renewed = claimed;
        source.prepare(&caller).await?;
        if !self.keep(job, &mut renewed).await? {
            return Ok(None);
        }
        let columns = rows::columns(run.report_key);
        let mut file = self.files.create(key);
        let written = async {
            let mut buf = write::header(run.format, columns);
            let (mut after, mut count) = (None, 0);
            loop {
                let page = source.page(&caller, after).await?;
                for item in &page.items {
                    write::line(run.format, columns, item, &mut buf);
                    count += 1;
                }
                if buf.len() >= FLUSH_BYTES {
                    file.write(std::mem::take(&mut buf).into()).await?;
                }
                if !self.keep(job, &mut renewed).await? {
                    return Ok(None);
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
    // every file of the run: its own, and any a cut-off try left
    files.delete_all(&prefix(org, id)).await?;
    store.delete_report_run(org, id).await
}
