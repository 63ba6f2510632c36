//! Background work, one file per job, all started by `start`, over one
//! mechanism: work is rows of the `jobs` table, scheduled in the
//! transaction of the change that calls for it, claimed by one instance at
//! a time with a lease (so several instances share the work and each item
//! runs once at a time), deleted when done, tried again later when it
//! fails. A job whose instance dies mid-item is taken over when its lease
//! runs out, so every job's work must be safe to run again (each checks
//! the state it moves).

pub mod idempotency_expiry;
pub mod mail;
pub mod mail_cleanup;
pub mod order_expiry;

use crate::clock::Clock;
use crate::config::Settings;
use crate::store::{Job, JobKind, Store};
use futures::future::BoxFuture;
use std::sync::Arc;
use tokio::sync::Notify;
use tokio::task::JoinHandle;

/// How one item ended.
pub enum Outcome {
    Done,
    /// failed for now: due again after `after`
    Retry { after: chrono::Duration, error: String },
}

/// One kind of work: what runs an item, and how long a claim holds.
pub struct Worker {
    pub kind: JobKind,
    /// longer than an item can take: another instance may take the item
    /// over when it passes
    pub lease: chrono::Duration,
    /// how many items one claim takes: they share one lease, so a job
    /// whose items take long (a send) claims them one at a time
    pub batch: i64,
    pub run: Arc<dyn Fn(Store, Arc<Clock>, Job) -> BoxFuture<'static, Outcome> + Send + Sync>,
}

/// How often a worker looks for due work without being woken (work
/// scheduled by another instance, retries falling due).
const POLL: std::time::Duration = std::time::Duration::from_secs(5);

impl Worker {
    /// Claims and runs every item due now; the number run.
    async fn run_due(&self, store: &Store, clock: &Arc<Clock>) -> crate::error::Result<usize> {
        let mut done = 0;
        loop {
            let now = clock.now();
            let claimed = store.claim_jobs(self.kind, now, now + self.lease, self.batch).await?;
            if claimed.is_empty() {
                return Ok(done);
            }
            for job in claimed {
                match (self.run)(store.clone(), clock.clone(), job.clone()).await {
                    Outcome::Done => store.finish_job(&job).await?,
                    Outcome::Retry { after, error } => {
                        tracing::warn!(kind = ?job.kind, subject = %job.subject, %error, "job failed; will retry");
                        store.retry_job(&job, &error, clock.now() + after).await?
                    }
                }
                done += 1;
            }
        }
    }

    async fn serve(self: Arc<Self>, store: Store, clock: Arc<Clock>, wake: Arc<Notify>) {
        loop {
            if let Err(e) = self.run_due(&store, &clock).await {
                tracing::warn!(kind = ?self.kind, error = %e, "jobs unreadable");
            }
            tokio::select! {
                _ = wake.notified() => {}
                _ = tokio::time::sleep(POLL) => {}
            }
        }
    }
}

/// The jobs of one server instance.
pub struct Jobs {
    workers: Vec<Arc<Worker>>,
    tasks: Vec<JoinHandle<()>>,
    store: Store,
    clock: Arc<Clock>,
}

impl Jobs {
    /// Runs every item of every kind that is due now, once, here (the
    /// workers do the same on each round): tests move the clock and call
    /// this instead of waiting. The number run.
    pub async fn run_due(&self) -> crate::error::Result<usize> {
        let mut n = 0;
        for w in &self.workers {
            n += w.run_due(&self.store, &self.clock).await?;
        }
        Ok(n)
    }

    /// Stops every worker; what they had claimed is taken again when its
    /// lease runs out.
    pub fn stop(&self) {
        self.tasks.iter().for_each(JoinHandle::abort);
    }
}

/// Starts every job `settings` ask for; `mail_wake` wakes the mail sender
/// when a request queues mail.
pub async fn start(store: &Store, clock: &Arc<Clock>, settings: &Settings, mail_wake: Arc<Notify>) -> anyhow::Result<Jobs> {
    // the standing jobs, due now unless already scheduled
    let now = clock.now();
    store.schedule_standing_job(JobKind::IdempotencyExpiry, crate::store::EXPIRY_SUBJECT, now).await?;
    let mut workers = vec![
        (Arc::new(idempotency_expiry::worker()), Arc::new(Notify::new())),
        (Arc::new(order_expiry::worker()), Arc::new(Notify::new())),
        (Arc::new(mail_cleanup::worker()), Arc::new(Notify::new())),
    ];
    if let Some(url) = &settings.smtp_url {
        workers.push((Arc::new(mail::worker(mail::Sender::new(url, &settings.mail_from)?)), mail_wake));
    }
    let tasks = workers.iter().map(|(w, wake)| tokio::spawn(w.clone().serve(store.clone(), clock.clone(), wake.clone()))).collect();
    Ok(Jobs { workers: workers.into_iter().map(|(w, _)| w).collect(), tasks, store: store.clone(), clock: clock.clone() })
}
