//! The jobs mechanism: every item claimed by one instance at a time, taken
//! over when its lease runs out, tried again when it fails.

use crate::harness::*;
use chrono::Duration;
use switchboard::store::{JobKind, Store};

/// Mail delivery: no test server runs its worker (no SMTP), so only the
/// test claims these items.
const KIND: JobKind = JobKind::MailDelivery;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_instances_never_claim_one_item() {
    each_backend(|app| async move {
        let now = app.clock.now();
        let mut tx = app.store.begin().await.unwrap();
        for i in 0..40 {
            Store::schedule_job(&mut tx, KIND, &format!("item-{i}"), None, now, now).await.unwrap();
        }
        tx.commit().await.unwrap();
        let other = Store::connect(&app.url).await.unwrap();
        let drain = |store: Store| async move {
            let mut got = vec![];
            loop {
                let claimed = store.claim_jobs(KIND, now, now + Duration::seconds(60), 3).await.unwrap();
                if claimed.is_empty() {
                    return got;
                }
                got.extend(claimed.into_iter().map(|j| j.subject));
            }
        };
        let (a, b) = tokio::join!(tokio::spawn(drain(app.store.clone())), tokio::spawn(drain(other.clone())));
        let (a, b) = (a.unwrap(), b.unwrap());
        let mut all: Vec<String> = a.iter().chain(&b).cloned().collect();
        all.sort();
        all.dedup();
        assert_eq!(all.len(), 40, "every item claimed");
        assert_eq!(a.len() + b.len(), 40, "no item claimed twice: {a:?} / {b:?}");
        other.close().await;
        app
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lapsed_lease_is_taken_over_and_a_failure_is_retried() {
    each_backend(|app| async move {
        let t = app.clock.now();
        let s = |secs| t + Duration::seconds(secs);
        let mut tx = app.store.begin().await.unwrap();
        Store::schedule_job(&mut tx, KIND, "one", None, t, t).await.unwrap();
        tx.commit().await.unwrap();

        let first = app.store.claim_jobs(KIND, t, s(60), 10).await.unwrap();
        assert_eq!((first.len(), first[0].attempts), (1, 1));
        assert!(app.store.claim_jobs(KIND, s(30), s(90), 10).await.unwrap().is_empty(), "held by its lease");
        // the first holder died: after its lease another takes the item over
        let second = app.store.claim_jobs(KIND, s(61), s(121), 10).await.unwrap();
        assert_eq!((second.len(), second[0].attempts), (1, 2));
        // the late first holder's word no longer counts
        app.store.finish_job(&first[0]).await.unwrap();
        assert!(app.store.claim_jobs(KIND, s(122), s(182), 10).await.unwrap().len() == 1, "still there after a stale finish");

        // a failure makes it due again later, not before
        let third = app.store.claim_jobs(KIND, s(200), s(260), 10).await.unwrap();
        app.store.retry_job(&third[0], "refused", s(300)).await.unwrap();
        assert!(app.store.claim_jobs(KIND, s(299), s(359), 10).await.unwrap().is_empty());
        let fourth = app.store.claim_jobs(KIND, s(300), s(360), 10).await.unwrap();
        assert_eq!(fourth[0].attempts, 5);
        app.store.finish_job(&fourth[0]).await.unwrap();
        assert!(app.store.claim_jobs(KIND, s(10_000), s(10_060), 10).await.unwrap().is_empty(), "done is gone");
        app
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_item_scheduled_again_while_held_runs_again_then() {
    each_backend(|app| async move {
        let t = app.clock.now();
        let s = |secs| t + Duration::seconds(secs);
        let schedule = |due| {
            let store = app.store.clone();
            async move {
                let mut tx = store.begin().await.unwrap();
                Store::schedule_job(&mut tx, KIND, "again", None, due, t).await.unwrap();
                tx.commit().await.unwrap();
            }
        };
        schedule(t).await;
        let held = app.store.claim_jobs(KIND, t, s(60), 10).await.unwrap();
        // the change it runs for moved its time while it runs: still held
        schedule(s(30)).await;
        assert!(app.store.claim_jobs(KIND, s(31), s(91), 10).await.unwrap().is_empty(), "still held");
        // finishing the old run leaves it due at the new time
        app.store.finish_job(&held[0]).await.unwrap();
        let again = app.store.claim_jobs(KIND, s(32), s(92), 10).await.unwrap();
        assert_eq!(again.len(), 1);
        app.store.finish_job(&again[0]).await.unwrap();
        assert!(app.store.claim_jobs(KIND, s(1000), s(1060), 10).await.unwrap().is_empty());
        app
    })
    .await;
}

/// A login for an unknown address writes a discarded stand-in (so it costs
/// what one for a user does); the mail.cleanup job deletes it a day later.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn discarded_stand_ins_are_deleted_a_day_later() {
    each_backend(|app| async move {
        let stand_ins = || async {
            let n: (i64,) = sqlx::query_as("SELECT COUNT(*) FROM mail_outbox WHERE status = 'discarded'").fetch_one(app.store.pool()).await.unwrap();
            n.0
        };
        let start = bullfinch::types::EmailLoginStartRequest { email: "nobody@example.com".parse().unwrap() };
        app.bullfinch_open().auth_email_start(None, &start).await.unwrap();
        app.bullfinch_open().auth_email_start(None, &start).await.unwrap();
        assert_eq!(stand_ins().await, 2);
        app.clock.advance(Duration::hours(23));
        app.run_jobs().await;
        assert_eq!(stand_ins().await, 2, "kept for a day");
        app.clock.advance(Duration::hours(2));
        app.run_jobs().await;
        assert_eq!(stand_ins().await, 0);
        app
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_renewed_claim_holds_and_one_taken_over_is_refused() {
    each_backend(|app| async move {
        let t = app.clock.now();
        let s = |n: i64| t + Duration::seconds(n);
        let mut tx = app.store.begin().await.unwrap();
        Store::schedule_job(&mut tx, KIND, "long", None, t, t).await.unwrap();
        tx.commit().await.unwrap();
        let first = app.store.claim_jobs(KIND, t, s(60), 1).await.unwrap().pop().unwrap();
        // renewed before it lapses: no one else takes it
        let first = app.store.renew_job(&first, s(110)).await.unwrap().expect("still held");
        assert!(app.store.claim_jobs(KIND, s(90), s(150), 1).await.unwrap().is_empty(), "held by its renewal");
        let mut tx = app.store.begin().await.unwrap();
        assert!(Store::holds_job_in(&mut tx, &first).await.unwrap());
        // ended before the takeover (it changed nothing): a transaction
        // merely dropped may still lock the row on PostgreSQL when the next
        // claim looks, which then skips it (SKIP LOCKED)
        tx.commit().await.unwrap();
        // lapsed: taken over; the first holder can neither renew nor end it
        let second = app.store.claim_jobs(KIND, s(111), s(171), 1).await.unwrap().pop().expect("taken over");
        assert!(app.store.renew_job(&first, s(200)).await.unwrap().is_none());
        let mut tx = app.store.begin().await.unwrap();
        assert!(!Store::holds_job_in(&mut tx, &first).await.unwrap());
        assert!(Store::holds_job_in(&mut tx, &second).await.unwrap());
        tx.commit().await.unwrap();
        app.store.finish_job(&second).await.unwrap();
        assert!(app.store.claim_jobs(KIND, s(10_000), s(10_060), 1).await.unwrap().is_empty(), "done is gone");
        app
    })
    .await;
}
