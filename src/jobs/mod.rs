//! Background work, one file per job, all started by `start`, over one
//! mechanism: work is rows of the `jobs` table, scheduled in the
//! transaction of the change that calls for it, claimed by one instance at
//! a time with a lease (so several instances share the work and each item
//! runs once at a time), deleted when done, tried again later when it
//! fails. A job whose instance dies mid-item is taken over when its lease
//! runs out, so every job's work must be safe to run again (each checks
//! the state it moves). Work whose items are best run many at once (the
//! webhook sender's HTTP requests) drains what is due itself, over the same
//! claims (`Drain`).

pub mod clock_advance;
pub mod idempotency_expiry;
pub mod mail;
pub mod mail_cleanup;
pub mod order_expiry;
pub mod payment_charge;
pub mod payment_link_expiry;
pub mod payment_profile_expiry;
pub mod payment_refund;
pub mod report_run;
pub mod scheduled;
pub mod usage_collect;
pub mod webhook_delivery;
pub mod webhook_dispatch;

use crate::clock::Clock;
use crate::config::Settings;
use crate::store::{Claim, Job, JobKind, Store};
use futures::future::BoxFuture;
use std::sync::Arc;
use tokio::sync::Notify;
use tokio::task::JoinHandle;
use tracing::Instrument;

/// How one item ended.
pub enum Outcome {
    Done,
    /// failed for now: due again after `after`
    Retry {
        after: chrono::Duration,
        error: String,
    },
    /// the item recorded its own end in the transaction of its work, under
    /// its claim (or found the claim taken over): nothing more to do
    Recorded,
    /// `outcome`, for an item whose claim was renewed as it ran (a report
    /// run): `held` is the item as now held
    Held {
        held: Job,
        outcome: Box<Outcome>,
    },
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

/// Work that runs everything due itself, many items at once; the number
/// of items run. Told to stop, it takes no new item and returns once the
/// items it has started end.
pub struct Drain {
    pub name: &'static str,
    pub run: Arc<dyn Fn(Store, Arc<Clock>, Stop) -> BoxFuture<'static, crate::error::Result<usize>> + Send + Sync>,
    /// how often it looks for due work without being woken
    pub poll: std::time::Duration,
}

/// How often a worker looks for due work without being woken (work
/// scheduled by another instance, retries falling due).
const POLL: std::time::Duration = std::time::Duration::from_secs(5);

/// One background task: a `Worker` of one kind of item, or a `Drain`.
#[derive(Clone)]
enum Task {
    Each(Arc<Worker>),
    Drain(Arc<Drain>),
}

impl Task {
    async fn run_due(&self, store: &Store, clock: &Arc<Clock>, stop: &Stop) -> crate::error::Result<usize> {
        match self {
            Task::Each(w) => w.run_due(store, clock, stop).await,
            Task::Drain(d) => (d.run)(store.clone(), clock.clone(), stop.clone()).await,
        }
    }

    /// Runs what is due, round after round, until told to stop.
    async fn serve(self, store: Store, clock: Arc<Clock>, wake: Arc<Notify>, rounds: Arc<tokio::sync::watch::Sender<u64>>, mut stop: Stop) {
        let (name, poll) = match &self {
            Task::Each(w) => (w.kind.as_str(), POLL),
            Task::Drain(d) => (d.name, d.poll),
        };
        while !*stop.borrow() {
            if let Err(e) = self.run_due(&store, &clock, &stop).await {
                tracing::warn!(job = name, error = %e, "jobs unreadable");
            }
            rounds.send_modify(|n| *n += 1);
            tokio::select! {
                _ = wake.notified() => {}
                _ = tokio::time::sleep(poll) => {}
                // (an error: the jobs were dropped without `stop`)
                changed = stop.changed() => if changed.is_err() { break },
            }
        }
    }
}

/// Set when the instance stops: a worker ends after the item it is on.
pub type Stop = tokio::sync::watch::Receiver<bool>;

impl Worker {
    /// Claims and runs every item due now, until told to stop (what it
    /// claimed and has not started is released with the instance's other
    /// claims); the number run.
    async fn run_due(&self, store: &Store, clock: &Arc<Clock>, stop: &Stop) -> crate::error::Result<usize> {
        let mut done = 0;
        while !*stop.borrow() {
            let claimed = self.claim_due(store, clock.now()).await?;
            if claimed.is_empty() {
                break;
            }
            for job in claimed {
                if *stop.borrow() {
                    break;
                }
                self.run_one(store, clock, job, None).await?;
                done += 1;
            }
        }
        Ok(done)
    }

    /// The items due at the server's time `now`. The organisation's own
    /// work is due by its organisation's time: a sandbox organisation whose
    /// clock was moved has its items claimed by its own time, and none
    /// while an advance runs them (`clock_advance`).
    async fn claim_due(&self, store: &Store, now: chrono::DateTime<chrono::Utc>) -> crate::error::Result<Vec<Job>> {
        if !self.kind.on_organisation_time() {
            return store.claim(self.claim(now, now, None, &[])).await;
        }
        let moved = store.moved_clocks().await?;
        let except: Vec<uuid::Uuid> = moved.iter().map(|(org, _)| *org).collect();
        let mut claimed = store.claim(self.claim(now, now, None, &except)).await?;
        for (org, c) in moved.iter().filter(|(_, c)| c.advancing_to.is_none()) {
            claimed.extend(store.claim(self.claim(now + c.offset, now, Some(*org), &[])).await?);
        }
        Ok(claimed)
    }

    /// A claim of up to `batch` items of this kind due by `due_by`.
    fn claim<'a>(
        &'a self,
        due_by: chrono::DateTime<chrono::Utc>,
        now: chrono::DateTime<chrono::Utc>,
        only: Option<uuid::Uuid>,
        except: &'a [uuid::Uuid],
    ) -> Claim<'a> {
        Claim { kinds: std::slice::from_ref(&self.kind), due_by, now, lease_until: now + self.lease, limit: self.batch, only, except }
    }

    /// Runs one claimed item and records how it ended; a failure is tried
    /// again `after` it failed (in the item's time: `job.now` and what has
    /// passed since its claim), or `after` `retry_from` when given.
    async fn run_one(&self, store: &Store, clock: &Arc<Clock>, job: Job, retry_from: Option<chrono::DateTime<chrono::Utc>>) -> crate::error::Result<()> {
        let span = crate::telemetry::job_span(job.kind.as_str(), &job.subject, job.org, job.attempts);
        let ran = (self.run)(store.clone(), clock.clone(), job.clone()).instrument(span.clone()).await;
        let (held, outcome) = match ran {
            Outcome::Held { held, outcome } => (held, *outcome),
            outcome => (job.clone(), outcome),
        };
        crate::metrics::job_run(job.kind.as_str(), matches!(outcome, Outcome::Retry { .. }));
        crate::telemetry::job_ended(
            &span,
            match outcome {
                Outcome::Done => "done",
                Outcome::Recorded | Outcome::Held { .. } => "recorded",
                Outcome::Retry { .. } => "retry",
            },
        );
        match outcome {
            Outcome::Done => store.finish_job(&held).await,
            Outcome::Recorded | Outcome::Held { .. } => Ok(()),
            Outcome::Retry { after, error } => {
                tracing::warn!(parent: &span, kind = ?job.kind, subject = %job.subject, %error, "job failed; will retry");
                // (the claim as first taken: how long the item has run)
                let claimed_at = job.lease_until - self.lease;
                let failed_at = retry_from.unwrap_or(job.now + (clock.now() - claimed_at));
                store.retry_job(&held, &error, failed_at + after).await
            }
        }
    }
}

/// Does what is due by a time for one subject (org, id), with what the
/// worker holds (`C`: the network, a carrier, ...).
type Run<C> = fn(Store, C, uuid::Uuid, uuid::Uuid, chrono::DateTime<chrono::Utc>) -> BoxFuture<'static, crate::error::Result<()>>;

/// A worker of `kind` whose items each name one subject of an
/// organisation (`job.subject` its id), run at the item's time with
/// `with`; a failure is tried again a minute later.
pub(crate) fn per_subject<C: Clone + Send + Sync + 'static>(kind: JobKind, with: C, run: Run<C>) -> Worker {
    Worker {
        kind,
        lease: chrono::Duration::seconds(60),
        batch: 16,
        run: Arc::new(move |store, _clock, job| {
            let with = with.clone();
            Box::pin(async move {
                let (Some(org), Ok(id)) = (job.org, job.subject.parse()) else { return Outcome::Done };
                match run(store, with, org, id, job.now).await {
                    Ok(()) => Outcome::Done,
                    Err(e) => Outcome::Retry { after: chrono::Duration::seconds(60), error: e.to_string() },
                }
            })
        }),
    }
}

/// The jobs of one server instance.
pub struct Jobs {
    tasks_run: Vec<Task>,
    tasks: Vec<JoinHandle<()>>,
    /// the store the workers claim through, as this instance
    store: Store,
    clock: Arc<Clock>,
    /// how many rounds the workers have finished, all together
    rounds: Arc<tokio::sync::watch::Sender<u64>>,
    stop: tokio::sync::watch::Sender<bool>,
    state: Arc<State>,
    /// how long `stop` waits for the workers to finish their items
    grace: std::time::Duration,
}

/// Whether an instance's jobs run, as `/ready` reports it.
#[derive(Debug, Default)]
pub struct State {
    /// workers started, and those still running
    started: std::sync::atomic::AtomicUsize,
    running: std::sync::atomic::AtomicUsize,
    stopping: std::sync::atomic::AtomicBool,
}

impl State {
    /// Every worker started runs, and none was told to stop.
    pub fn running(&self) -> bool {
        use std::sync::atomic::Ordering::SeqCst;
        let started = self.started.load(SeqCst);
        started > 0 && self.running.load(SeqCst) == started && !self.stopping.load(SeqCst)
    }
}

/// Counts a worker as running while it lives (ended, aborted or panicked).
struct Alive(Arc<State>);

impl Alive {
    fn new(state: &Arc<State>) -> Alive {
        state.running.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Alive(state.clone())
    }
}

impl Drop for Alive {
    fn drop(&mut self) {
        self.0.running.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
    }
}

impl Jobs {
    /// Changes each time a worker has finished a round: a test waiting for
    /// the background work to settle looks again then, instead of polling.
    pub fn rounds(&self) -> tokio::sync::watch::Receiver<u64> {
        self.rounds.subscribe()
    }

    /// Runs every item of every kind that is due now, once, here (the
    /// workers do the same on each round): tests move the clock and call
    /// this instead of waiting. The number run.
    pub async fn run_due(&self) -> crate::error::Result<usize> {
        let mut n = 0;
        let stop = self.stop.subscribe();
        for t in &self.tasks_run {
            n += t.run_due(&self.store, &self.clock, &stop).await?;
        }
        Ok(n)
    }

    /// `/ready` answers 503 from now on (the instance is about to stop).
    pub fn mark_stopping(&self) {
        self.state.stopping.store(true, std::sync::atomic::Ordering::SeqCst);
    }

    /// Cuts every worker off where it is, as a crash would: what they had
    /// claimed is taken again when its lease runs out. (`run_due` still
    /// runs what is due, here.)
    pub fn abort(&self) {
        self.state.stopping.store(true, std::sync::atomic::Ordering::SeqCst);
        self.tasks.iter().for_each(JoinHandle::abort);
    }

    /// Stops every worker: each finishes the item it is on, for up to the
    /// grace period; those still running then are cut short. Then every
    /// item this instance claimed is released, so that other instances
    /// take it at once rather than when its lease runs out (an item cut
    /// short runs again there, as after a crash: every job is safe to run
    /// again).
    pub async fn stop(mut self) {
        self.state.stopping.store(true, std::sync::atomic::Ordering::SeqCst);
        let _ = self.stop.send(true);
        let aborts: Vec<_> = self.tasks.iter().map(JoinHandle::abort_handle).collect();
        let mut finished = futures::future::join_all(std::mem::take(&mut self.tasks));
        if tokio::time::timeout(self.grace, &mut finished).await.is_err() {
            tracing::warn!(grace = ?self.grace, "jobs still running after the grace period: stopping them");
            aborts.iter().for_each(tokio::task::AbortHandle::abort);
            finished.await;
        }
        if let Err(e) = self.store.release_claims().await {
            tracing::warn!(error = %e, "could not release this instance's job claims; they are taken again when their leases run out");
        }
    }
}

/// The workers of the organisation's own work (`store::ORGANISATION_WORK`),
/// which an advance of a sandbox clock also runs.
fn organisation_work(
    providers: &crate::payment_providers::Providers,
    network: &Arc<dyn crate::network::Network>,
    public_url: &str,
    files: &crate::report_files::ReportFiles,
) -> Vec<Arc<Worker>> {
    vec![
        Arc::new(order_expiry::worker()),
        Arc::new(scheduled::subscriptions()),
        Arc::new(scheduled::addons()),
        Arc::new(scheduled::licenses()),
        Arc::new(payment_charge::worker(providers.clone())),
        Arc::new(payment_refund::worker(providers.clone())),
        Arc::new(payment_link_expiry::worker()),
        Arc::new(payment_profile_expiry::worker()),
        Arc::new(scheduled::invoices(network.clone(), public_url)),
        Arc::new(scheduled::portings(network.clone(), Arc::new(crate::carrier::Sandbox))),
        Arc::new(report_run::runs(files.clone())),
        Arc::new(report_run::expiry(files.clone())),
    ]
}

/// What requests wake at once instead of waiting for the next poll.
pub struct Wakes {
    /// the mail sender, when a request queues mail
    pub mail: Arc<Notify>,
    /// the sandbox clock's advance, when one commits
    pub advance: Arc<Notify>,
    /// the sender of payment sessions' charges, when one commits
    pub payments: Arc<Notify>,
    /// the report writer, when a run is asked for
    pub reports: Arc<Notify>,
}

/// Starts every job `settings` ask for, `state` saying whether they run.
#[expect(clippy::too_many_arguments, reason = "each is a handle the jobs share with the server; a struct of them would only be unpacked here")]
pub async fn start(
    state: Arc<State>,
    store: &Store,
    clock: &Arc<Clock>,
    settings: &Settings,
    wakes: Wakes,
    network: Arc<dyn crate::network::Network>,
    providers: &crate::payment_providers::Providers,
    public_url: &str,
    files: &crate::report_files::ReportFiles,
) -> anyhow::Result<Jobs> {
    // this start's claims, released together when it stops
    let store = &store.claiming_as(uuid::Uuid::new_v4());
    // the standing jobs, due now unless already scheduled
    let now = clock.now();
    store.schedule_standing_job(JobKind::IdempotencyExpiry, crate::store::EXPIRY_SUBJECT, now).await?;
    let each = |w: Worker| Task::Each(Arc::new(w));
    let send_wake = Arc::new(Notify::new());
    let work = organisation_work(providers, &network, public_url, files);
    let mut tasks = vec![(each(idempotency_expiry::worker()), Arc::new(Notify::new()))];
    // a payment session's charge is sent, and a report written, as soon as
    // its request commits
    let wake_of = |w: &Arc<Worker>| match w.kind {
        JobKind::PaymentCharge => wakes.payments.clone(),
        JobKind::ReportRun => wakes.reports.clone(),
        _ => Arc::new(Notify::new()),
    };
    tasks.extend(work.iter().map(|w| (Task::Each(w.clone()), wake_of(w))));
    tasks.extend([
        (each(clock_advance::worker(work)), wakes.advance),
        (each(mail_cleanup::worker()), Arc::new(Notify::new())),
        // usage before the dispatcher: its quota notifications go out in the same round
        (Task::Drain(Arc::new(usage_collect::drain(network))), Arc::new(Notify::new())),
        // the dispatcher before the sender: one `run_due` dispatches and sends
        (Task::Drain(Arc::new(webhook_dispatch::drain(send_wake.clone()))), store.events_recorded()),
        (Task::Drain(Arc::new(webhook_delivery::drain(webhook_delivery::Sender::new(settings)?, send_wake.clone()))), send_wake),
    ]);
    if let Some(url) = &settings.smtp_url {
        tasks.push((each(mail::worker(mail::Sender::new(url, &settings.mail_from)?)), wakes.mail));
    }
    let rounds = Arc::new(tokio::sync::watch::channel(0).0);
    let (stop, stopped) = tokio::sync::watch::channel(false);
    state.started.store(tasks.len(), std::sync::atomic::Ordering::SeqCst);
    let handles = tasks
        .iter()
        .map(|(t, wake)| {
            let alive = Alive::new(&state);
            let serve = t.clone().serve(store.clone(), clock.clone(), wake.clone(), rounds.clone(), stopped.clone());
            tokio::spawn(async move {
                let _alive = alive;
                serve.await
            })
        })
        .collect();
    let grace = std::time::Duration::from_secs(settings.shutdown_grace_seconds.into());
    Ok(Jobs { tasks_run: tasks.into_iter().map(|(t, _)| t).collect(), tasks: handles, store: store.clone(), clock: clock.clone(), rounds, stop, state, grace })
}
