//! The discarded stand-ins of the mail outbox (written, with this job, so
//! that a login for an unknown address costs what one for a user does) are
//! deleted a day after they were written, whether or not SMTP is
//! configured; a sent message's (blanked) record a day after it was sent.

use super::{Outcome, Worker};
use crate::store::JobKind;
use std::sync::Arc;

pub fn worker() -> Worker {
    Worker {
        kind: JobKind::MailCleanup,
        lease: chrono::Duration::seconds(60),
        batch: 16,
        run: Arc::new(|store, _clock, job| {
            Box::pin(async move {
                match store.forget_discarded_mail(&job.subject).await {
                    Ok(()) => Outcome::Done,
                    Err(e) => Outcome::Retry { after: chrono::Duration::minutes(5), error: e.to_string() },
                }
            })
        }),
    }
}
