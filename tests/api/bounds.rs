//! What one tenant may take of what all share, on both databases: number
//! leases per holder (a customer's user, or the key alone) and the numbers
//! they hold, report runs queued per organisation, each refusal a 409 of
//! its own, exact under clients at once; report runs claimed in turns
//! across organisations; the settings that bound them (`admin org set`).

use crate::harness::*;
use serde_json::json;
use switchboard::store::{Claim, JobKind};

async fn lease(app: &TestApp, key: &str, bearer: Option<&str>, count: u32) -> Raw {
    let auth = bearer.map(|t| format!("Bearer {t}"));
    let headers: Vec<(&str, &str)> = auth.iter().map(|a| ("authorization", a.as_str())).collect();
    app.call_as(Some(key), "POST", "/inventory/lease-numbers", Some(json!({"types": ["CELL"], "count": count})), &headers).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn leases_are_bounded_per_holder_exactly_and_free_again_when_they_expire() {
    each_backend(|app| async move {
        crate::orders::setup(&app).await;
        crate::numbers::pool(&app, "+46702100000..+46702100099", "CELL").await;
        // eight at once from the key alone: three leases, no more
        let tries = futures::future::join_all((0..8).map(|_| lease(&app, &app.key, None, 1))).await;
        let (ok, refused): (Vec<&Raw>, Vec<&Raw>) = tries.iter().partition(|r| r.status == 200);
        assert_eq!(ok.len(), 3, "{:?}", tries.iter().map(|r| r.status).collect::<Vec<_>>());
        for r in refused {
            r.assert_error(409, "number_lease_limit");
        }
        // a customer's user holds leases of its own, bounded in numbers too
        let u = app.call("POST", "/users", Some(json!({"name": "Mo", "email": "mo@acme.example", "customerId": "rid_acme", "role": "MEMBER"}))).await;
        assert_eq!(u.status, 201, "{:#}", u.body);
        let token = app.login("mo@acme.example", Some(&app.key)).await;
        switchboard::admin::org_set(&app.store, app.org, &["leases.numbersPerHolder=12".into()]).await.unwrap();
        for _ in 0..3 {
            assert_eq!(lease(&app, &app.key, Some(&token), 4).await.status, 200);
        }
        lease(&app, &app.key, Some(&token), 1).await.assert_error(409, "number_lease_limit");
        switchboard::admin::org_set(&app.store, app.org, &["leases.perHolder=5".into()]).await.unwrap();
        lease(&app, &app.key, Some(&token), 1).await.assert_error(409, "leased_numbers_limit");
        // an hour on, the leases have expired: the holder may lease again
        app.clock.advance(chrono::Duration::minutes(61));
        assert_eq!(lease(&app, &app.key, None, 1).await.status, 200);
        let token = app.login("mo@acme.example", Some(&app.key)).await;
        assert_eq!(lease(&app, &app.key, Some(&token), 10).await.status, 200);
        app
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn report_runs_queued_are_bounded_per_organisation_exactly() {
    each_backend(|app| async move {
        app.stop_jobs();
        switchboard::admin::org_set(&app.store, app.org, &["reports.queuedAtMost=4".into()]).await.unwrap();
        let ask = || app.call("POST", "/reports", Some(json!({"reportKey": "events"})));
        let tries = futures::future::join_all((0..10).map(|_| ask())).await;
        let statuses: Vec<u16> = tries.iter().map(|r| r.status).collect();
        assert_eq!(statuses.iter().filter(|s| **s == 201).count(), 4, "{statuses:?}");
        for r in tries.iter().filter(|r| r.status != 201) {
            r.assert_error(409, "report_queue_full");
        }
        // another organisation queues its own
        let (_, other) = app.other_org().await;
        assert_eq!(app.call_as(Some(&other), "POST", "/reports", Some(json!({"reportKey": "events"})), &[]).await.status, 201);
        app
    })
    .await;
}

/// A report run queued with `key`: its id.
async fn queue(app: &TestApp, key: &str) -> String {
    let r = app.call_as(Some(key), "POST", "/reports", Some(json!({"reportKey": "events"})), &[]).await;
    assert_eq!(r.status, 201, "{:#}", r.body);
    r.body["reportRunId"].as_str().unwrap().to_string()
}

/// A report run of an organisation that has had none goes before a queue another organisation filled first.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn report_runs_are_claimed_in_turns_across_organisations() {
    each_backend(|app| async move {
        app.stop_jobs();
        let ours = [queue(&app, &app.key).await, queue(&app, &app.key).await];
        let (_, other) = app.other_org().await;
        let theirs = queue(&app, &other).await;
        let next = || async {
            let now = app.clock.now();
            let claim =
                Claim { kinds: &[JobKind::ReportRun], due_by: now, now, lease_until: now + chrono::Duration::minutes(1), limit: 1, only: None, except: &[] };
            app.store.claim(claim).await.unwrap().pop().expect("a run due")
        };
        // the first: the oldest; it starts
        let first = next().await;
        assert_eq!(first.subject, ours[0]);
        sqlx::query("UPDATE report_runs SET status = 'RUNNING', started_at = $1 WHERE id = $2")
            .bind(app.clock.now().to_rfc3339())
            .bind(&ours[0])
            .execute(app.store.pool())
            .await
            .unwrap();
        app.store.finish_job(&first).await.unwrap();
        // then the other organisation's, older than ours[1] or not
        assert_eq!(next().await.subject, theirs, "one organisation's queue held up another's");
        app
    })
    .await;
}
