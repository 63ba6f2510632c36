//! `GET /metrics` on `--metrics-listen`, scraped after traffic: requests
//! by operation, revision and status with their latencies, replays and
//! rate-limit refusals, jobs due with their lag, job runs, webhook
//! deliveries and the pool. (Counters are the process's, shared by the
//! tests running beside this one: they are checked by how much they grew.)

use crate::delivery::{local_webhooks, new_customer, register, settle};
use crate::harness::*;
use crate::receiver::{Receiver, Reply};
use serde_json::json;
use switchboard::store::{JobKind, Store};

fn with_metrics(s: &mut switchboard::config::Settings) {
    local_webhooks(s);
    s.metrics_listen = Some("127.0.0.1:0".parse().unwrap());
    // refused from the fourth unknown key on
    s.auth_failures_per_minute = 3;
}

/// The value of the sample `series` (name and labels, as rendered), 0 when absent.
fn sample(text: &str, series: &str) -> f64 {
    text.lines().find_map(|l| l.strip_prefix(series).and_then(|rest| rest.strip_prefix(' '))).map_or(0.0, |v| v.trim().parse().unwrap())
}

/// The sum of the samples whose series start with `prefix`.
fn total(text: &str, prefix: &str) -> f64 {
    text.lines().filter(|l| l.starts_with(prefix)).map(|l| l.rsplit(' ').next().unwrap().parse::<f64>().unwrap()).sum()
}

async fn scrape(app: &TestApp) -> String {
    let addr = app.server().metrics.as_ref().expect("--metrics-listen").local_addr();
    let r = reqwest::get(format!("http://{addr}/metrics")).await.unwrap();
    assert_eq!(r.status(), 200);
    assert!(r.headers()["content-type"].to_str().unwrap().starts_with("application/openmetrics-text"));
    let text = r.text().await.unwrap();
    assert!(text.ends_with("# EOF\n"), "a whole OpenMetrics exposition");
    text
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scrape_after_traffic_shows_requests_jobs_deliveries_and_the_pool() {
    each_backend_with(with_metrics, |app| async move {
        let before = scrape(&app).await;
        let created = r#"switchboard_http_requests_total{operation="customer_create",revision="2026-09-01.bullfinch",status="201"}"#;
        let not_found = r#"switchboard_http_requests_total{operation="customer_view",revision="2026-09-01.bullfinch",status="404"}"#;
        let replayed = r#"switchboard_idempotent_replays_total{operation="customer_create",revision="2026-09-01.bullfinch"}"#;
        // (in the revision an unknown key gets: the oldest supported)
        let limited = r#"switchboard_rate_limited_total{operation="customer_list","#;
        let latency = r#"switchboard_http_request_duration_seconds_count{operation="customer_create",revision="2026-09-01.bullfinch"}"#;
        let acknowledged = r#"switchboard_webhook_deliveries_total{outcome="acknowledged"}"#;
        let cleanups = r#"switchboard_job_runs_total{kind="mail.cleanup"}"#;

        // a create, its replay, a 404, unknown keys until refused
        let receiver = Receiver::start().await;
        receiver.always(Reply::Status(204));
        register(&app, &receiver.url, json!(["customer.created"])).await;
        let body = json!({"customerType": "BUSINESS", "name": "Metered AB", "contact": {}});
        for _ in 0..2 {
            let r = app.call_as(Some(&app.key), "POST", "/customers", Some(body.clone()), &[("x-idempotency-key", "metrics-1")]).await;
            assert_eq!(r.status, 201);
        }
        new_customer(&app, &app.key, "Second AB").await;
        assert_eq!(app.call("GET", &format!("/customers/{}", uuid::Uuid::new_v4()), None).await.status, 404);
        // the fourth unknown key is refused
        let statuses: Vec<u16> = unknown_key_statuses(&app).await;
        assert_eq!(statuses, [401, 401, 401, 429]);
        settle(&app).await;
        // a job run here, and one waiting 90 s that no worker takes (no SMTP)
        let now = app.clock.now();
        let mut tx = app.store.begin().await.unwrap();
        Store::schedule_job(&mut tx, JobKind::MailCleanup, &uuid::Uuid::new_v4().to_string(), None, now, now).await.unwrap();
        Store::schedule_job(&mut tx, JobKind::MailDelivery, "waiting", None, now - chrono::Duration::seconds(90), now).await.unwrap();
        tx.commit().await.unwrap();
        app.run_jobs().await;

        let after = scrape(&app).await;
        let grew = |series: &str| sample(&after, series) - sample(&before, series);
        assert!(grew(created) >= 2.0, "{created}: {}", grew(created));
        assert!(grew(not_found) >= 1.0);
        assert!(grew(replayed) >= 1.0);
        assert!(total(&after, limited) - total(&before, limited) >= 1.0);
        assert!(grew(latency) >= 3.0);
        assert!(grew(acknowledged) >= 2.0, "every customer.created delivered");
        assert!(grew(cleanups) >= 1.0);
        // read from this server's database
        assert_eq!(sample(&after, r#"switchboard_jobs_due{kind="mail.delivery"}"#), 1.0);
        // (the test clock runs on from where the test set it)
        let lag = sample(&after, r#"switchboard_jobs_oldest_due_seconds{kind="mail.delivery"}"#);
        assert!((90.0..150.0).contains(&lag), "{lag}");
        assert_eq!(sample(&after, r#"switchboard_jobs_due{kind="webhook.delivery"}"#), 0.0);
        for kind in ["order.expiry", "report.run", "clock.advance"] {
            assert!(after.contains(&format!(r#"switchboard_jobs_held{{kind="{kind}"}} "#)), "every kind is shown: {kind}");
        }
        assert!(sample(&after, "switchboard_db_connections_max") >= 1.0);
        assert!(after.contains(r#"switchboard_db_connections{state="in_use"} "#));
        assert!(after.contains("# TYPE switchboard_http_request_duration_seconds histogram"));
        app
    })
    .await;
}

/// Four requests with an unknown key, one after the other: their statuses.
async fn unknown_key_statuses(app: &TestApp) -> Vec<u16> {
    let mut statuses = vec![];
    for _ in 0..4 {
        statuses.push(app.call_as(Some("sbk_unknown"), "GET", "/customers", None, &[]).await.status);
    }
    statuses
}
