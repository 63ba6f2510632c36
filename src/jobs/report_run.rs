//! report.run (subject: a report run's id): its file is written, a page at
//! a time, under a claim renewed as it goes (`domain::reports::run`);
//! report.expiry: 30 days after it was asked for, a run and its file are
//! deleted (both by the organisation's clock).

use super::{Outcome, Worker};
use crate::domain::reports::run::{Ended, Runner, expire};
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
                    Ended::Recorded => Outcome::Recorded,
                    Ended::Retry { held, error } => Outcome::Held { held, outcome: Box::new(Outcome::Retry { after: chrono::Duration::seconds(60), error }) },
                }
            })
        }),
    }
}

pub fn expiry(files: ReportFiles) -> Worker {
    super::per_subject(JobKind::ReportExpiry, files, |store, files, org, id, now| Box::pin(async move { expire(&store, &files, org, id, now).await }))
}
