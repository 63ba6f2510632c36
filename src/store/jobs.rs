//! The jobs table: work stored as rows, scheduled in the transaction that
//! makes it due, claimed by one instance at a time with a lease (`FOR
//! UPDATE SKIP LOCKED` on PostgreSQL; SQLite has one writer), and deleted
//! when done.

use super::{Backend, Store, Tx, parse_ts, ts};
use crate::error::Result;
use chrono::{DateTime, Utc};
use sqlx::any::AnyRow;
use sqlx::{AssertSqlSafe, Row};
use uuid::Uuid;

/// Every kind of stored work.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum JobKind {
    /// an order not submitted by its `expiresAt` expires (subject: order id)
    OrderExpiry,
    /// a message of the mail outbox goes out by SMTP (subject: mail id)
    MailDelivery,
    /// a discarded stand-in of the mail outbox is deleted (subject: its id)
    MailCleanup,
    /// idempotency keys past their lifetime are deleted (one item, `*`,
    /// that schedules itself again)
    IdempotencyExpiry,
    /// an event is sent to a webhook endpoint (subject: `endpoint/event`)
    WebhookDelivery,
    /// something of a subscription falls due: a delayed activation
    /// completes, a cancellation takes effect, a scheduled offering change,
    /// a renewal (subject: subscription id)
    SubscriptionScheduled,
    /// something of an add-on falls due: a cancellation at the end of its
    /// period, a scheduled offering change, its expiry (subject: add-on id)
    AddonScheduled,
    /// a license's scheduled cancellation takes effect (subject: license id)
    LicenseScheduled,
    /// a sandbox organisation's test clock was advanced: its work due up
    /// to the new time runs, in due order (subject: organisation id)
    ClockAdvance,
    /// a charge attempt still PROCESSING is resolved by asking its
    /// provider (a SEPA debit settles; a crash left it unrecorded)
    /// (subject: charge id)
    PaymentCharge,
    /// a PENDING refund is sent to its provider (subject: refund id)
    PaymentRefund,
    /// an unpaid payment link expires (subject: link id)
    PaymentLinkExpiry,
    /// a saved card's expiry passes (subject: profile id)
    PaymentProfileExpiry,
    /// something of an invoice falls due: a DRAFT is finalised at the end
    /// of its billing day, autopay tries again, dunning suspends or gives
    /// it up (subject: invoice id)
    InvoiceDue,
    /// a porting's next step: submitted to the losing carrier, its answer
    /// asked for, its date arrived (subject: porting id)
    PortingStep,
    /// a report run's file is written (subject: report run id)
    ReportRun,
    /// a report run and its file are deleted, 30 days after it was asked
    /// for (subject: report run id)
    ReportExpiry,
}

/// The organisation's own work: due by the organisation's time, which a
/// sandbox organisation's test clock moves. Everything else (mail, webhook
/// deliveries, the idempotency keys' expiry, an advance itself) talks to
/// the real world or protects the server, and runs on the server's time.
pub const ORGANISATION_WORK: [JobKind; 12] = [
    JobKind::OrderExpiry,
    JobKind::SubscriptionScheduled,
    JobKind::AddonScheduled,
    JobKind::LicenseScheduled,
    JobKind::PaymentCharge,
    JobKind::PaymentRefund,
    JobKind::PaymentLinkExpiry,
    JobKind::PaymentProfileExpiry,
    JobKind::InvoiceDue,
    JobKind::PortingStep,
    JobKind::ReportRun,
    JobKind::ReportExpiry,
];

impl JobKind {
    /// Every kind (the metrics show each, also with no items).
    pub const ALL: [JobKind; 17] = [
        JobKind::OrderExpiry,
        JobKind::MailDelivery,
        JobKind::MailCleanup,
        JobKind::IdempotencyExpiry,
        JobKind::WebhookDelivery,
        JobKind::SubscriptionScheduled,
        JobKind::AddonScheduled,
        JobKind::LicenseScheduled,
        JobKind::ClockAdvance,
        JobKind::PaymentCharge,
        JobKind::PaymentRefund,
        JobKind::PaymentLinkExpiry,
        JobKind::PaymentProfileExpiry,
        JobKind::InvoiceDue,
        JobKind::PortingStep,
        JobKind::ReportRun,
        JobKind::ReportExpiry,
    ];

    pub(crate) fn as_str(self) -> &'static str {
        match self {
            JobKind::OrderExpiry => "order.expiry",
            JobKind::MailDelivery => "mail.delivery",
            JobKind::MailCleanup => "mail.cleanup",
            JobKind::IdempotencyExpiry => "idempotency.expiry",
            JobKind::WebhookDelivery => "webhook.delivery",
            JobKind::SubscriptionScheduled => "subscription.scheduled",
            JobKind::AddonScheduled => "addon.scheduled",
            JobKind::LicenseScheduled => "license.scheduled",
            JobKind::ClockAdvance => "clock.advance",
            JobKind::PaymentCharge => "payment.charge",
            JobKind::PaymentRefund => "payment.refund",
            JobKind::PaymentLinkExpiry => "payment.link_expiry",
            JobKind::PaymentProfileExpiry => "payment.profile_expiry",
            JobKind::InvoiceDue => "invoice.due",
            JobKind::PortingStep => "porting.step",
            JobKind::ReportRun => "report.run",
            JobKind::ReportExpiry => "report.expiry",
        }
    }

    /// The kind stored as `s` (`as_str`'s inverse).
    fn parse(s: &str) -> Option<JobKind> {
        JobKind::ALL.iter().copied().find(|k| k.as_str() == s)
    }

    /// Due by the organisation's time (see `ORGANISATION_WORK`).
    pub fn on_organisation_time(self) -> bool {
        ORGANISATION_WORK.contains(&self)
    }
}

/// One claimed item.
#[derive(Debug, Clone)]
pub struct Job {
    pub kind: JobKind,
    /// what the work is about: an order's id, a mail's id
    pub subject: String,
    pub org: Option<Uuid>,
    pub due_at: DateTime<Utc>,
    /// tries so far, this one included
    pub attempts: i64,
    /// the claim: the item is this instance's until then
    pub lease_until: DateTime<Utc>,
    /// the time the work runs at: the server's, or, for the organisation's
    /// own work, the organisation's (in an advance, the item's due time)
    pub now: DateTime<Utc>,
}

/// Which items a claim takes: due by `due_by`, held by no live lease
/// (leases are in the server's time, `now`).
pub struct Claim<'a> {
    pub kinds: &'a [JobKind],
    pub due_by: DateTime<Utc>,
    pub now: DateTime<Utc>,
    pub lease_until: DateTime<Utc>,
    pub limit: i64,
    /// only this organisation's items
    pub only: Option<Uuid>,
    /// none of these organisations' items
    pub except: &'a [Uuid],
}

fn job_row(r: &AnyRow, lease_until: DateTime<Utc>, now: DateTime<Utc>) -> Result<Job> {
    let org: Option<String> = r.try_get("org_id")?;
    let kind: String = r.try_get("kind")?;
    Ok(Job {
        kind: JobKind::parse(&kind).ok_or_else(|| crate::error::Error::Internal(format!("unknown job kind {kind:?}")))?,
        subject: r.try_get("subject")?,
        org: org.as_deref().map(super::parse_uuid).transpose()?,
        due_at: parse_ts(&r.try_get::<String, _>("due_at")?)?,
        attempts: r.try_get::<i64, _>("attempts")? + 1,
        lease_until,
        now,
    })
}

impl Store {
    /// Makes `kind` of work on `subject` due at `due_at`, in the
    /// transaction of the change that calls for it. Scheduling an item
    /// that exists moves it to the new time; if an instance holds it now,
    /// it keeps it, and its `finish_job` leaves the item due again then.
    pub async fn schedule_job(tx: &mut Tx, kind: JobKind, subject: &str, org: Option<Uuid>, due_at: DateTime<Utc>, now: DateTime<Utc>) -> Result<()> {
        tx.execute(
            sqlx::query(
                "INSERT INTO jobs (kind, subject, org_id, due_at, created_at) VALUES ($1, $2, $3, $4, $5)
                 ON CONFLICT (kind, subject) DO UPDATE SET due_at = excluded.due_at",
            )
            .bind(kind.as_str())
            .bind(subject)
            .bind(org.map(|o| o.to_string()))
            .bind(ts(due_at))
            .bind(ts(now)),
        )
        .await?;
        Ok(())
    }

    /// Makes sure a job that is always there (it schedules itself again
    /// each time it runs) exists: due at `due_at` unless already scheduled.
    pub async fn schedule_standing_job(&self, kind: JobKind, subject: &str, due_at: DateTime<Utc>) -> Result<()> {
        let mut tx = self.begin().await?;
        tx.execute(
            sqlx::query("INSERT INTO jobs (kind, subject, due_at, created_at) VALUES ($1, $2, $3, $3) ON CONFLICT (kind, subject) DO NOTHING")
                .bind(kind.as_str())
                .bind(subject)
                .bind(ts(due_at)),
        )
        .await?;
        tx.commit().await
    }

    /// Claims up to `limit` items of `kind` due by `now` that no live lease
    /// holds, oldest due first, until `lease_until`. Two instances never
    /// hold one item at once.
    pub async fn claim_jobs(&self, kind: JobKind, now: DateTime<Utc>, lease_until: DateTime<Utc>, limit: i64) -> Result<Vec<Job>> {
        self.claim_jobs_except(kind, now, lease_until, limit, &[]).await
    }

    /// `claim_jobs`, leaving the items of the organisations `busy` where
    /// they are (the webhook sender's: those with all their places taken).
    pub async fn claim_jobs_except(&self, kind: JobKind, now: DateTime<Utc>, lease_until: DateTime<Utc>, limit: i64, busy: &[uuid::Uuid]) -> Result<Vec<Job>> {
        self.claim(Claim { kinds: &[kind], due_by: now, now, lease_until, limit, only: None, except: busy }).await
    }

    /// The items `c` describes, oldest due first, each claimed until
    /// `c.lease_until`, to run at `c.due_by`. Two instances never hold one
    /// item at once.
    pub async fn claim(&self, c: Claim<'_>) -> Result<Vec<Job>> {
        let lock = match self.backend {
            Backend::Postgres => " FOR UPDATE SKIP LOCKED",
            Backend::Sqlite => "",
        };
        // $1 due by, $2 now, $3 limit, then the kinds, the organisation, the exceptions
        let mut next = 4;
        let mut list = |n: usize| {
            let p = super::placeholders(next, n);
            next += n;
            p
        };
        let mut filter = format!("kind IN ({})", list(c.kinds.len()));
        if c.only.is_some() {
            filter += &format!(" AND org_id = {}", list(1));
        }
        if !c.except.is_empty() {
            filter += &format!(" AND (org_id IS NULL OR org_id NOT IN ({}))", list(c.except.len()));
        }
        let due = |sql: String| {
            let mut q = sqlx::query(AssertSqlSafe(sql)).bind(ts(c.due_by)).bind(ts(c.now)).bind(c.limit);
            for kind in c.kinds {
                q = q.bind(kind.as_str());
            }
            for org in c.only.iter().chain(c.except) {
                q = q.bind(org.to_string());
            }
            q
        };
        let live = "due_at <= $1 AND (lease_until IS NULL OR lease_until < $2)";
        // a look before the write transaction: an idle worker (the common
        // case) then costs a read, not SQLite's one write lock
        let any = due(format!("SELECT 1 FROM jobs WHERE {filter} AND {live} LIMIT $3")).fetch_optional(&self.pool).await?;
        if any.is_none() {
            return Ok(vec![]);
        }
        // report runs take turns across organisations, the one whose last
        // run started longest ago (or never) first, so one organisation's
        // queue does not hold up the others' (deliveries take turns by their
        // places: `except`); the rest, oldest due first
        let order = match c.kinds {
            [JobKind::ReportRun] => {
                let last = "(SELECT MAX(r.started_at) FROM report_runs r WHERE r.org_id = jobs.org_id)";
                format!("{last} IS NOT NULL, {last}, due_at, kind, subject")
            }
            _ => "due_at, kind, subject".to_string(),
        };
        let mut tx = self.begin().await?;
        let rows = due(format!(
            "SELECT kind, subject, org_id, due_at, attempts FROM jobs WHERE {filter} AND {live}
             ORDER BY {order} LIMIT $3{lock}"
        ))
        .fetch_all(tx.conn().await?)
        .await?;
        let jobs: Vec<Job> = rows.iter().map(|r| job_row(r, c.lease_until, c.due_by)).collect::<Result<_>>()?;
        for kind in c.kinds {
            let subjects: Vec<&str> = jobs.iter().filter(|j| j.kind == *kind).map(|j| j.subject.as_str()).collect();
            if subjects.is_empty() {
                continue;
            }
            let mut claim = sqlx::query(AssertSqlSafe(format!(
                "UPDATE jobs SET lease_until = $1, attempts = attempts + 1, claimed_by = $2 WHERE kind = $3 AND subject IN ({})",
                super::placeholders(4, subjects.len())
            )))
            .bind(ts(c.lease_until))
            .bind(self.claimer.map(|i| i.to_string()))
            .bind(kind.as_str());
            for subject in subjects {
                claim = claim.bind(subject.to_string());
            }
            tx.execute(claim).await?;
        }
        tx.commit().await?;
        Ok(jobs)
    }

    /// The claimed item is done: it is deleted, or, when it was scheduled
    /// again while held (its due time moved), released to run then. Nothing
    /// happens when another instance took it over after the lease ran out.
    pub async fn finish_job(&self, job: &Job) -> Result<()> {
        let mut tx = self.begin().await?;
        Store::finish_job_in(&mut tx, job).await?;
        tx.commit().await
    }

    /// `finish_job`, in the transaction that records the item's outcome.
    /// Write-only (no answer read back), so on SQLite it travels with the
    /// rest of the transaction: the item is deleted unless it was
    /// scheduled again while held, and what is left under this claim (that
    /// rescheduled item) is released.
    pub(crate) async fn finish_job_in(tx: &mut Tx, job: &Job) -> Result<()> {
        tx.execute(
            sqlx::query("DELETE FROM jobs WHERE kind = $1 AND subject = $2 AND lease_until = $3 AND due_at = $4")
                .bind(job.kind.as_str())
                .bind(job.subject.clone())
                .bind(ts(job.lease_until))
                .bind(ts(job.due_at)),
        )
        .await?;
        tx.execute(
            sqlx::query("UPDATE jobs SET lease_until = NULL, claimed_by = NULL WHERE kind = $1 AND subject = $2 AND lease_until = $3")
                .bind(job.kind.as_str())
                .bind(job.subject.clone())
                .bind(ts(job.lease_until)),
        )
        .await
    }

    /// Holds the claimed item until `until` (work that takes longer than
    /// one lease renews it as it goes): the item as now held, or None when
    /// another instance took it over after the lease ran out.
    pub async fn renew_job(&self, job: &Job, until: DateTime<Utc>) -> Result<Option<Job>> {
        let done = sqlx::query("UPDATE jobs SET lease_until = $1 WHERE kind = $2 AND subject = $3 AND lease_until = $4")
            .bind(ts(until))
            .bind(job.kind.as_str())
            .bind(job.subject.clone())
            .bind(ts(job.lease_until))
            .execute(&self.pool)
            .await?;
        Ok((done.rows_affected() == 1).then(|| Job { lease_until: until, ..job.clone() }))
    }

    /// Whether this instance still holds `job` under its claim, asked in
    /// the transaction that records the item's outcome (on PostgreSQL the
    /// item's row is then locked until it commits, so a takeover waits).
    pub async fn holds_job_in(tx: &mut Tx, job: &Job) -> Result<bool> {
        let done = sqlx::query("UPDATE jobs SET lease_until = lease_until WHERE kind = $1 AND subject = $2 AND lease_until = $3")
            .bind(job.kind.as_str())
            .bind(job.subject.clone())
            .bind(ts(job.lease_until))
            .execute(tx.conn().await?)
            .await?;
        Ok(done.rows_affected() == 1)
    }

    /// Each kind's items in the database at `now` (the server's time):
    /// `(kind, due and held by none, held, when the oldest due one fell
    /// due)`. For a scrape of the metrics: one pass over the table.
    pub async fn jobs_now(&self, now: DateTime<Utc>) -> Result<Vec<(JobKind, i64, i64, Option<DateTime<Utc>>)>> {
        let waiting = "due_at <= $1 AND (lease_until IS NULL OR lease_until < $1)";
        let rows = sqlx::query(AssertSqlSafe(format!(
            "SELECT kind,
                    CAST(SUM(CASE WHEN {waiting} THEN 1 ELSE 0 END) AS BIGINT) AS due,
                    CAST(SUM(CASE WHEN lease_until >= $1 THEN 1 ELSE 0 END) AS BIGINT) AS held,
                    MIN(CASE WHEN {waiting} THEN due_at END) AS oldest
             FROM jobs WHERE due_at <= $1 OR lease_until IS NOT NULL GROUP BY kind"
        )))
        .bind(ts(now))
        .fetch_all(&self.pool)
        .await?;
        let mut found = std::collections::HashMap::new();
        for r in &rows {
            let kind: String = r.try_get("kind")?;
            let oldest: Option<String> = r.try_get("oldest")?;
            let row = (
                r.try_get::<Option<i64>, _>("due")?.unwrap_or(0),
                r.try_get::<Option<i64>, _>("held")?.unwrap_or(0),
                oldest.as_deref().map(parse_ts).transpose()?,
            );
            found.insert(kind, row);
        }
        Ok(JobKind::ALL
            .iter()
            .map(|k| {
                let (due, held, oldest) = found.remove(k.as_str()).unwrap_or((0, 0, None));
                (*k, due, held, oldest)
            })
            .collect())
    }

    /// Lets go of every item this instance holds (see `claiming_as`), as it
    /// stops: other instances take them at once instead of when their
    /// leases run out. Only once nothing of this instance runs them any
    /// more.
    pub async fn release_claims(&self) -> Result<()> {
        let Some(instance) = self.claimer else { return Ok(()) };
        let mut tx = self.begin().await?;
        tx.execute(
            sqlx::query("UPDATE jobs SET lease_until = NULL, claimed_by = NULL WHERE claimed_by = $1 AND lease_until IS NOT NULL").bind(instance.to_string()),
        )
        .await?;
        tx.commit().await
    }

    /// The claimed item failed for now: it is due again at `retry_at`.
    pub async fn retry_job(&self, job: &Job, error: &str, retry_at: DateTime<Utc>) -> Result<()> {
        let mut tx = self.begin().await?;
        Store::retry_job_in(&mut tx, job, error, retry_at).await?;
        tx.commit().await
    }

    /// `retry_job`, in the transaction that records the item's outcome.
    pub(crate) async fn retry_job_in(tx: &mut Tx, job: &Job, error: &str, retry_at: DateTime<Utc>) -> Result<()> {
        tx.execute(
            sqlx::query(
                "UPDATE jobs SET due_at = $1, lease_until = NULL, claimed_by = NULL, last_error = $2 WHERE kind = $3 AND subject = $4 AND lease_until = $5",
            )
            .bind(ts(retry_at))
            .bind(error.to_string())
            .bind(job.kind.as_str())
            .bind(job.subject.clone())
            .bind(ts(job.lease_until)),
        )
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::JobKind;

    /// A kind added to the enum fails this match: add it to `ALL` as well.
    fn in_all(kind: JobKind) -> bool {
        match kind {
            JobKind::OrderExpiry
            | JobKind::MailDelivery
            | JobKind::MailCleanup
            | JobKind::IdempotencyExpiry
            | JobKind::WebhookDelivery
            | JobKind::SubscriptionScheduled
            | JobKind::AddonScheduled
            | JobKind::LicenseScheduled
            | JobKind::ClockAdvance
            | JobKind::PaymentCharge
            | JobKind::PaymentRefund
            | JobKind::PaymentLinkExpiry
            | JobKind::PaymentProfileExpiry
            | JobKind::InvoiceDue
            | JobKind::PortingStep
            | JobKind::ReportRun
            | JobKind::ReportExpiry => JobKind::ALL.contains(&kind),
        }
    }

    #[test]
    fn every_kind_is_listed_and_reads_back_from_its_name() {
        for kind in JobKind::ALL {
            assert!(in_all(kind));
            assert_eq!(JobKind::parse(kind.as_str()), Some(kind));
        }
        assert_eq!(JobKind::parse("no.such"), None);
    }
}
