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

/// How long a claim on an advance, and on each item it runs, holds. The
/// advance renews its own as it goes (every third of a lease), so an
/// advance of any length keeps it, and one whose instance died (SIGKILL)
/// is taken over within a minute rather than leaving the clock ADVANCING.
/// An advance taken over while it still ran (a stall longer than the
/// lease) is run by both, its items each once by their claims; the one
/// that finds its claim gone stops.
const LEASE: chrono::Duration = chrono::Duration::seconds(60);

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
                let mut held = job;
                let outcome = match advance(&store, &clock, &work, &mut held).await {
                    Ok(true) => Outcome::Done,
                    Ok(false) => Outcome::Recorded,
                    Err(e) => Outcome::Retry { after: chrono::Duration::seconds(5), error: e.to_string() },
                };
                Outcome::Held { held, outcome: Box::new(outcome) }
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

/// Runs the advance `job` (renewing its claim as it goes): true when the
/// clock is READY, false when another instance took the advance over.
async fn advance(store: &Store, clock: &Arc<Clock>, work: &[Arc<Worker>], job: &mut Job) -> Result<bool> {
    let Some(org) = job.org else { return Ok(true) };
    let Some(to) = store.clock_of(org).await?.and_then(|c| c.advancing_to) else { return Ok(true) };
    let mut renewed = std::time::Instant::now();
    loop {
        if renewed.elapsed() >= (LEASE / 3).to_std().unwrap_or_default() {
            match store.renew_job(job, clock.now() + LEASE).await? {
                Some(held) => *job = held,
                None => return Ok(false),
            }
            renewed = std::time::Instant::now();
        }
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
    store.end_advance(org, to).await?;
    Ok(true)
}
