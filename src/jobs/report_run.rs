//! report.run (subject: a report run's id): its file is written, a page at
//! a time, under a claim renewed as it goes (`domain::reports::run`);
//! report.expiry: 30 days after it was asked for, a run and its file are
//! deleted (both by the organisation's clock).

use super::{Outcome, Worker};
use crate::domain::reports::run::{Runner, expire};
use crate::report_files::ReportFiles;
use crate::store::JobKind;
use std::sync::Arc;

/// How long a claim of a run holds; renewed every third of it while the
/// file is written.
const LEASE_SECONDS: i64 = 60;

pub fn runs(files: ReportFiles) -> Worker {
    let lease = chrono::Duration::seconds(LEASE_SECONDS);
    Worker {
        kind: JobKind::ReportRun,
        lease,
        // one at a time: a run may take minutes, and holds its claim alone
        batch: 1,
        run: Arc::new(move |store, clock, job| {
            let files = files.clone();
            Box::pin(async move {
                match (Runner { store: &store, files: &files, clock: &clock, lease }).run(job).await {
                    Ok(()) => Outcome::Recorded,
                    Err(e) => Outcome::Retry { after: chrono::Duration::seconds(60), error: e.to_string() },
                }
            })
        }),
    }
}

pub fn expiry(files: ReportFiles) -> Worker {
    Worker {
        kind: JobKind::ReportExpiry,
        lease: chrono::Duration::seconds(60),
        batch: 16,
        run: Arc::new(move |store, _clock, job| {
            let files = files.clone();
            Box::pin(async move {
                let (Some(org), Ok(id)) = (job.org, job.subject.parse()) else { return Outcome::Done };
                match expire(&store, &files, org, id, job.now).await {
                    Ok(()) => Outcome::Done,
                    Err(e) => Outcome::Retry { after: chrono::Duration::seconds(60), error: e.to_string() },
                }
            })
        }),
    }
}
