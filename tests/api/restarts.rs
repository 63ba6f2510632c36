//! Readiness and stopping: `/ready` says whether an instance should get
//! requests, and a stopping instance lets go of the jobs it claimed at
//! once. (A whole server restarted under load: tests/cli.rs.)

use crate::delivery::{local_webhooks, new_customer, register, settle};
use crate::harness::*;
use crate::receiver::{Receiver, Reply};
use serde_json::{Value, json};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ready_while_the_database_and_jobs_serve_and_not_once_the_jobs_stop() {
    each_backend(|app| async move {
        let ready = app.bullfinch_open().ready_view().await.unwrap();
        assert_eq!(ready.headers()["api-revision"], BULLFINCH);
        let ready = serde_json::to_value(ready.into_inner()).unwrap();
        assert_eq!(ready, json!({"status": "ready", "database": "ok", "migrations": "ok", "jobs": "ok"}));
        // (the older revision has it too)
        assert_eq!(app.auk_builder().build().ready_view().await.unwrap().status(), 200);

        // the workers gone (as when the instance shuts down): 503, naming the check
        app.stop_jobs();
        let r = app.call_as(None, "GET", "/ready", None, &[]).await;
        assert_eq!(r.status, 503, "{:#}", r.body);
        assert_eq!((&r.body["internalCode"], &r.body["code"]), (&json!("not_ready"), &json!("service_unavailable")));
        let failing: Vec<&Value> = r.body["details"].as_array().unwrap().iter().map(|d| &d["code"]).collect();
        assert_eq!(failing, [&json!("jobs_stopped")], "{:#}", r.body);
        assert!(r.body["traceId"].as_str().is_some_and(|t| !t.is_empty()));
        // /health only says the server answers
        assert_eq!(app.call_as(None, "GET", "/health", None, &[]).await.status, 200);
        app
    })
    .await;
}

/// No grace: a stopping instance cuts its jobs off at once.
fn no_grace(s: &mut switchboard::config::Settings) {
    local_webhooks(s);
    s.shutdown_grace_seconds = 0;
}

/// An instance that stops while an attempt hangs releases the delivery it
/// claimed: another instance sends it again at once, with its webhook-id,
/// instead of waiting out the lease.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopping_instance_releases_what_it_claimed() {
    each_backend_with(no_grace, |app| async move {
        let mut receiver = Receiver::start().await;
        receiver.always(Reply::Hang);
        register(&app, &receiver.url, json!(["customer.created"])).await;
        // only the second instance works in the background
        app.stop_jobs();
        let (second, _) = app.second_instance().await;
        new_customer(&app, &app.key, "Held Ltd").await;
        let first = receiver.next().await;
        let held = |app: &TestApp| {
            let pool = app.store.pool().clone();
            async move {
                sqlx::query_scalar::<_, i64>("SELECT COUNT(*) FROM jobs WHERE kind = 'webhook.delivery' AND lease_until IS NOT NULL")
                    .fetch_one(&pool)
                    .await
                    .unwrap()
            }
        };
        assert_eq!(held(&app).await, 1, "the hanging attempt's delivery is claimed");
        second.close().await.unwrap();
        assert_eq!(held(&app).await, 0, "released as the instance stopped");
        // the clock has not moved past any lease: due again now, here
        receiver.always(Reply::Status(200));
        app.run_jobs().await;
        let again = receiver.next().await;
        assert_eq!(again.header("webhook-id"), first.header("webhook-id"));
        assert_eq!(again.answered, Some(200));
        settle(&app).await;
        app
    })
    .await;
}
