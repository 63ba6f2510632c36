//! A sandbox organisation's advance (clock.advance, subject: the
//! organisation's id): every piece of the organisation's own work due up
//! to the new time runs, in due order across every kind, each at its own
//! due time (a renewal due on the 3rd is dated the 3rd), and then the clock
//! is READY again. While it runs, the other workers leave the
//! organisation's items to it (`Worker::claim_due`).

use super::{Outcome, Worker};
use crate::clock::Clock;
use crate::error::Result;
use crate::store::{Claim, Job, JobKind, ORGANISATION_WORK, Store};
use std::sync::Arc;

/// Longer than an advance of two years over a few hundred subscriptions
/// takes (seconds; docs/sandbox.md). An advance that outlasts it is taken
/// over by another instance: both then run its items (each once, by their
/// claims), and the first to find none left ends it.
const LEASE: chrono::Duration = chrono::Duration::minutes(10);

/// `work`: the workers of every kind of the organisation's own work.
pub fn worker(work: Vec<Arc<Worker>>) -> Worker {
    let work = Arc::new(work);
    Worker {
        kind: JobKind::ClockAdvance,
        lease: LEASE,
        batch: 1,
        run: Arc::new(move |store, clock, job| {
            let work = work.clone();
            Box::pin(async move {
                match advance(&store, &clock, &work, &job).await {
                    Ok(()) => Outcome::Done,
                    Err(e) => Outcome::Retry { after: chrono::Duration::seconds(5), error: e.to_string() },
                }
            })
        }),
    }
}

/// Runs `org`'s advance here and now, unless another instance holds it
/// (`switchboard admin clock advance`, which has no workers of its own);
/// whether it ran here. It talks to the sandbox's providers and network,
/// as the server does.
pub async fn run_now(
    store: &Store,
    clock: &Arc<Clock>,
    org: uuid::Uuid,
    providers: &crate::payment_providers::Providers,
    public_url: &str,
    files: &crate::report_files::ReportFiles,
) -> Result<bool> {
    let now = clock.now();
    let claim = Claim { kinds: &[JobKind::ClockAdvance], due_by: now, now, lease_until: now + LEASE, limit: 1, only: Some(org), except: &[] };
    let Some(job) = store.claim(claim).await?.pop() else { return Ok(false) };
    let network: Arc<dyn crate::network::Network> = Arc::new(crate::network::Sandbox::new(chrono::Duration::zero()));
    worker(super::organisation_work(providers, &network, public_url, files)).run_one(store, clock, job, None).await?;
    Ok(true)
}

async fn advance(store: &Store, clock: &Arc<Clock>, work: &[Arc<Worker>], job: &Job) -> Result<()> {
    let Some(org) = job.org else { return Ok(()) };
    let Some(to) = store.clock_of(org).await?.and_then(|c| c.advancing_to) else { return Ok(()) };
    loop {
        let now = clock.now();
        let claim = Claim { kinds: &ORGANISATION_WORK, due_by: to, now, lease_until: now + LEASE, limit: 1, only: Some(org), except: &[] };
        let Some(mut item) = store.claim(claim).await?.pop() else { break };
        item.now = item.due_at;
        let worker = work.iter().find(|w| w.kind == item.kind);
        let worker = worker.ok_or_else(|| crate::error::Error::Internal(format!("no worker of {:?}", item.kind)))?;
        // a failure is tried again after the advance, as a normal retry, so
        // one failing item cannot hold the clock ADVANCING
        worker.run_one(store, clock, item, Some(to)).await?;
    }
    // an item another worker claimed just before the advance began is
    // still held: READY waits for it (the advance is tried again shortly)
    let left = store.due_work_left(org, to).await?;
    if left > 0 {
        return Err(crate::error::Error::Internal(format!("{left} items due by the advance's time are still held")));
    }
    store.end_advance(org, to).await
}
