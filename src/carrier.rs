//! The losing carrier of a port-in: the operator a number is brought
//! from. One `Carrier` trait, and the sandbox that stands in for the
//! carriers (a real integration implements the trait; the porting job
//! never sees which), answering as a real one does: not at once, a few
//! minutes after a submission, for a working day ahead.
//!
//! The sandbox's answers follow documented test values, by the ported
//! number's last four digits (docs/porting.md):
//!
//! | ends in | the carrier |
//! |---|---|
//! | 0001 | rejects: the identity (SE) or account (US) does not match its records |
//! | 0002 | waits for a passcode (US) or a re-submitted identity (SE), then accepts |
//! | 0003 | accepts for 5 working days ahead |
//! | other | accepts for the next working day |

use async_trait::async_trait;
use chrono::{DateTime, Datelike, Duration, NaiveDate, Utc, Weekday};

/// A port-in as submitted: its id and how many times it was submitted
/// (together the carrier's idempotency key: a submission sent again after
/// a crash is the same submission), the number and the details.
#[derive(Debug, Clone)]
pub struct PortRequest {
    pub id: uuid::Uuid,
    pub submission: i64,
    pub msisdn: String,
    pub details: serde_json::Value,
}

/// The losing carrier's answer to a submission.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// accepted: the number moves on this day
    Accepted(NaiveDate),
    /// rejected, for this reason
    Rejected(String),
    /// it waits for the details to be updated (this reason)
    Waiting(String),
}

/// The carrier failed to take a request (it is tried again).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unreachable(pub String);

/// What Switchboard asks of a losing carrier.
#[async_trait]
pub trait Carrier: Send + Sync + std::fmt::Debug {
    /// Submits `request` (again, after an update of its details: a new
    /// `submission`); the same submission sent twice is taken once.
    async fn submit(&self, request: &PortRequest, now: DateTime<Utc>) -> Result<(), Unreachable>;
    /// Its answer to `request`, submitted at `submitted_at`, as of `now`;
    /// None while it has not answered yet.
    async fn answer(&self, request: &PortRequest, submitted_at: DateTime<Utc>, now: DateTime<Utc>) -> Result<Option<Answer>, Unreachable>;
}

/// A carrier's answers, checked before the porting job uses them (the
/// job puts every carrier it is given behind it: `jobs::scheduled::portings`): what a carrier says is outside
/// input. An acceptance for a day before the submission or more than
/// `ACCEPTED_WITHIN_DAYS` after it is not taken (as if the carrier had
/// not answered: asked again later, and logged); a reason, stored and
/// shown in the API, keeps no control characters and at most
/// `REASON_CHARS` characters.
#[derive(Debug)]
pub struct Checked(pub std::sync::Arc<dyn Carrier>);

/// How far ahead an acceptance may move a number.
pub const ACCEPTED_WITHIN_DAYS: i64 = 90;
const REASON_CHARS: usize = 500;

/// `reason` as it is kept.
fn kept(reason: &str) -> String {
    let clean: String = reason.chars().map(|c| if c.is_control() { ' ' } else { c }).collect::<String>().trim().chars().take(REASON_CHARS).collect();
    if clean.is_empty() { "The losing carrier gave no reason.".into() } else { clean }
}

#[async_trait]
impl Carrier for Checked {
    async fn submit(&self, request: &PortRequest, now: DateTime<Utc>) -> Result<(), Unreachable> {
        self.0.submit(request, now).await
    }

    async fn answer(&self, request: &PortRequest, submitted_at: DateTime<Utc>, now: DateTime<Utc>) -> Result<Option<Answer>, Unreachable> {
        Ok(match self.0.answer(request, submitted_at, now).await? {
            Some(Answer::Accepted(day)) => {
                let from = submitted_at.date_naive();
                if day < from || day > from + Duration::days(ACCEPTED_WITHIN_DAYS) {
                    tracing::warn!(porting = %request.id, %day, "the losing carrier accepted for a day out of bounds: not taken");
                    return Err(Unreachable(format!("an acceptance for {day}, not within {ACCEPTED_WITHIN_DAYS} days of the submission")));
                }
                Some(Answer::Accepted(day))
            }
            Some(Answer::Rejected(reason)) => Some(Answer::Rejected(kept(&reason))),
            Some(Answer::Waiting(reason)) => Some(Answer::Waiting(kept(&reason))),
            None => None,
        })
    }
}

/// How long the sandbox takes to answer a submission.
pub const ANSWER_AFTER_MINUTES: i64 = 5;

/// The built-in losing carrier.
#[derive(Debug, Clone, Default)]
pub struct Sandbox;

/// `days` working days (Monday to Friday; holidays are not modelled) after
/// the day of `from`.
pub fn working_days_after(from: NaiveDate, days: u32) -> NaiveDate {
    let mut day = from;
    let mut left = days;
    while left > 0 {
        day = day.succ_opt().expect("a date before the end of time");
        if !matches!(day.weekday(), Weekday::Sat | Weekday::Sun) {
            left -= 1;
        }
    }
    day
}

#[async_trait]
impl Carrier for Sandbox {
    async fn submit(&self, _request: &PortRequest, _now: DateTime<Utc>) -> Result<(), Unreachable> {
        Ok(())
    }

    async fn answer(&self, request: &PortRequest, submitted_at: DateTime<Utc>, now: DateTime<Utc>) -> Result<Option<Answer>, Unreachable> {
        if now < submitted_at + Duration::minutes(ANSWER_AFTER_MINUTES) {
            return Ok(None);
        }
        let us = request.details.get("firstName").is_some();
        let answered = submitted_at.date_naive();
        Ok(Some(match &request.msisdn[request.msisdn.len().saturating_sub(4)..] {
            "0001" if us => Answer::Rejected("The account does not match the losing carrier's records.".into()),
            "0001" => Answer::Rejected("The identity does not match the losing carrier's records.".into()),
            // a first submission waits; an updated one (with its passcode, in the US) is taken
            "0002" if us && (request.submission < 2 || request.details.get("passcode").is_none()) => {
                Answer::Waiting("The losing carrier waits for the account's passcode.".into())
            }
            "0002" if request.submission < 2 => Answer::Waiting("The losing carrier asks for the identity to be submitted again.".into()),
            "0003" => Answer::Accepted(working_days_after(answered, 5)),
            _ => Answer::Accepted(working_days_after(answered, 1)),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A carrier that answers what it is told to.
    #[derive(Debug)]
    struct Says(Answer);

    #[async_trait]
    impl Carrier for Says {
        async fn submit(&self, _: &PortRequest, _: DateTime<Utc>) -> Result<(), Unreachable> {
            Ok(())
        }
        async fn answer(&self, _: &PortRequest, _: DateTime<Utc>, _: DateTime<Utc>) -> Result<Option<Answer>, Unreachable> {
            Ok(Some(self.0.clone()))
        }
    }

    #[tokio::test]
    async fn a_carriers_answer_is_checked_before_it_is_used() {
        let submitted: DateTime<Utc> = "2026-10-01T10:00:00Z".parse().unwrap();
        let said = |a: Answer| async move {
            let request = PortRequest { id: uuid::Uuid::nil(), submission: 1, msisdn: "+46701234567".into(), details: serde_json::json!({}) };
            Checked(std::sync::Arc::new(Says(a))).answer(&request, submitted, submitted).await
        };
        let day = |s: &str| s.parse::<NaiveDate>().unwrap();
        for ok in ["2026-10-01", "2026-10-02", "2026-12-30"] {
            assert_eq!(said(Answer::Accepted(day(ok))).await, Ok(Some(Answer::Accepted(day(ok)))), "{ok}");
        }
        for out in ["2026-09-30", "2026-12-31", "2199-01-01"] {
            assert!(said(Answer::Accepted(day(out))).await.is_err(), "{out}");
        }
        let long = "r".repeat(600);
        assert_eq!(said(Answer::Rejected(long)).await, Ok(Some(Answer::Rejected("r".repeat(500)))));
        assert_eq!(said(Answer::Waiting(" \u{7}Send\nthe passcode\u{0} ".into())).await, Ok(Some(Answer::Waiting("Send the passcode".into()))));
        assert_eq!(said(Answer::Rejected("\u{0}".into())).await, Ok(Some(Answer::Rejected("The losing carrier gave no reason.".into()))));
    }

    #[test]
    fn working_days_skip_weekends() {
        let friday = NaiveDate::from_ymd_opt(2026, 10, 2).unwrap();
        assert_eq!(working_days_after(friday, 1), NaiveDate::from_ymd_opt(2026, 10, 5).unwrap(), "Monday");
        assert_eq!(working_days_after(friday, 5), NaiveDate::from_ymd_opt(2026, 10, 9).unwrap(), "the next Friday");
        let saturday = NaiveDate::from_ymd_opt(2026, 10, 3).unwrap();
        assert_eq!(working_days_after(saturday, 1), NaiveDate::from_ymd_opt(2026, 10, 5).unwrap());
    }
}
