//! `switchboard listen`: the event log followed with the organisation's
//! key and forwarded to a local receiver, signed with the secret it prints,
//! filtered by type, retried on the server's schedule (the clock moved),
//! and resumed after a stop from where it was.

use crate::delivery::{new_customer, settle};
use crate::harness::*;
use crate::receiver::{Receiver, Reply};
use serde_json::json;
use switchboard::listen::{Options, run};
use tokio::sync::{mpsc, oneshot};

struct Listening {
    lines: mpsc::UnboundedReceiver<String>,
    stop: oneshot::Sender<()>,
    task: tokio::task::JoinHandle<anyhow::Result<()>>,
}

impl Listening {
    fn start(app: &TestApp, opts: &Options) -> Listening {
        let (tx, lines) = mpsc::unbounded_channel();
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(run(
            opts.clone(),
            app.clock.clone(),
            move |line| {
                let _ = tx.send(line);
            },
            async move {
                let _ = stopped.await;
            },
        ));
        Listening { lines, stop, task }
    }

    async fn line(&mut self) -> String {
        tokio::time::timeout(std::time::Duration::from_secs(20), self.lines.recv()).await.expect("a line within 20 s").expect("listening")
    }

    async fn stop(self) {
        self.stop.send(()).unwrap();
        self.task.await.unwrap().unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn listen_forwards_new_events_signed_retries_and_resumes() {
    each_backend(|app| async move {
        let mut receiver = Receiver::start().await;
        let state = std::env::temp_dir().join(format!("switchboard-listen-{}.json", uuid::Uuid::new_v4().simple()));
        let opts = Options {
            api_url: app.base.clone(),
            api_key: app.key.clone(),
            forward_to: receiver.url.clone(),
            events: vec!["customer.created".into()],
            state: state.clone(),
            poll_ms: 20,
        };
        new_customer(&app, &app.key, "Before AB").await;
        // (an event joins the log's order when it is dispatched: one not yet
        // dispatched as listen first reads where the log ends comes after it)
        settle(&app).await;
        let mut listening = Listening::start(&app, &opts);
        let banner = listening.line().await;
        let secret = banner.split_whitespace().find(|w| w.starts_with("whsec_")).expect("the secret is printed").to_string();
        // the state file (the secret, events' data) is its owner's alone
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(std::fs::metadata(&state).unwrap().permissions().mode() & 0o777, 0o600);

        // new events only, as the server would deliver them, of the types asked for
        let customer = new_customer(&app, &app.key, "Listened AB").await;
        let renamed = app.call("PUT", &format!("/customers/{customer}"), Some(json!({"name": "Renamed AB"}))).await;
        assert_eq!(renamed.status, 200);
        let r = receiver.next().await;
        assert_eq!(r.json()["data"]["name"], "Listened AB");
        let headers: reqwest::header::HeaderMap = r.headers.iter().map(|(k, v)| (k.parse().unwrap(), v.parse().unwrap())).collect();
        let tolerance = std::time::Duration::from_secs(300);
        let event = bullfinch::webhooks::verify_at(&secret, &headers, r.body.as_bytes(), tolerance, app.clock.now().timestamp()).unwrap();
        let logged = app.call("GET", &format!("/events/{}", event.event_id), None).await;
        assert_eq!(logged.body, r.json(), "the body is the event as the log has it");
        let line = listening.line().await;
        assert!(line.contains("customer.created") && line.contains(&event.event_id.to_string()) && line.ends_with("-> 200"), "{line}");

        // a failure is tried again on the schedule: 5 s later by the clock
        receiver.then(Reply::Status(503));
        new_customer(&app, &app.key, "Retried AB").await;
        let failed = receiver.next().await;
        assert_eq!(failed.answered, Some(503));
        let line = listening.line().await;
        assert!(line.contains("-> 503 (attempt 1; again in"), "{line}");
        app.clock.advance(chrono::Duration::seconds(6));
        let retried = receiver.next().await;
        assert_eq!((retried.header("webhook-id"), retried.answered), (failed.header("webhook-id"), Some(200)));
        assert!(listening.line().await.ends_with("-> 200"));
        listening.stop().await;

        // stopped, then started again: what happened meanwhile, once, same secret
        new_customer(&app, &app.key, "While stopped AB").await;
        let mut listening = Listening::start(&app, &opts);
        let banner = listening.line().await;
        assert!(!banner.contains(&secret) && banner.contains("kept in"), "the secret is shown once: {banner}");
        assert_eq!(receiver.next().await.json()["data"]["name"], "While stopped AB");
        listening.line().await;
        new_customer(&app, &app.key, "After AB").await;
        assert_eq!(receiver.next().await.json()["data"]["name"], "After AB");
        listening.line().await;
        assert!(receiver.taken().is_empty(), "nothing twice");

        // a wrong key ends it with the log's answer
        let wrong = Options { api_key: "sk_nope".into(), state: state.with_extension("other"), ..opts.clone() };
        let refused = run(wrong, app.clock.clone(), |_| {}, std::future::pending()).await.unwrap_err();
        assert!(refused.to_string().contains("401"), "{refused}");
        // the key goes only over https, or to this machine
        let plain = Options { api_url: "http://switchboard.example.invalid/api/v2".into(), state: state.with_extension("plain"), ..opts.clone() };
        let refused = run(plain, app.clock.clone(), |_| {}, std::future::pending()).await.unwrap_err();
        assert!(refused.to_string().contains("must be https"), "{refused}");
        assert!(!state.with_extension("plain").exists(), "refused before anything was written");
        listening.stop().await;
        let _ = std::fs::remove_file(&state);
        app
    })
    .await;
}

/// Events an advance of a sandbox clock records after listen has read
/// later-dated ones (renewals due months before the clock's new time) are
/// forwarded all the same, in the order they were recorded.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn listen_forwards_events_an_advance_dates_in_the_past() {
    use switchboard::store::{Claim, JobKind};
    each_backend(|mut app| async move {
        app.become_sandbox().await;
        app.stop_jobs();
        crate::orders::setup(&app).await;
        let bought = app
            .call(
                "POST",
                "/subscriptions",
                Some(json!({"customerId": "rid_acme", "productOfferingId": crate::orders::offering(&app, "mobile-10gb"),
                                                                    "subscription": {"simType": "ESIM", "msisdn": "+46701234567"}})),
            )
            .await;
        let id = bought.body["subscriptionId"].as_str().unwrap().to_string();
        let active = app.call("POST", &format!("/subscriptions/{id}/activate"), Some(json!({}))).await;
        assert_eq!(active.body["renewsOn"], "2026-12-02", "{:#}", active.body);
        app.run_jobs().await;
        let mut receiver = Receiver::start().await;
        let state = std::env::temp_dir().join(format!("switchboard-listen-{}.json", uuid::Uuid::new_v4().simple()));
        let opts = Options {
            api_url: app.base.clone(),
            api_key: app.key.clone(),
            forward_to: receiver.url.clone(),
            events: vec!["customer.created".into(), "subscription.renewed".into()],
            state: state.clone(),
            poll_ms: 20,
        };
        let mut listening = Listening::start(&app, &opts);
        listening.line().await;

        // the clock moves two months on; the advance is held while a
        // customer is created at the new time and forwarded
        let r = app.call("POST", "/sandbox/clock/advance", Some(json!({"to": "2027-01-03T09:00:00Z"}))).await;
        assert_eq!(r.status, 202, "{:#}", r.body);
        let now = app.clock.now();
        let claim = Claim {
            kinds: &[JobKind::ClockAdvance],
            due_by: now,
            now,
            lease_until: now + chrono::Duration::minutes(10),
            limit: 1,
            only: Some(app.org),
            except: &[],
        };
        let held = app.store.claim(claim).await.unwrap().pop().expect("the advance's job");
        new_customer(&app, &app.key, "During AB").await;
        app.run_jobs().await;
        let during = receiver.next().await.json();
        assert_eq!((&during["data"]["name"], &during["occurredAt"].as_str().unwrap()[..10]), (&json!("During AB"), "2027-01-03"));
        listening.line().await;

        // then the advance runs: two renewals dated before that customer
        app.store.retry_job(&held, "held by the test", app.clock.now()).await.unwrap();
        app.run_jobs().await;
        let mut renewed = vec![];
        for _ in 0..2 {
            let r = receiver.next().await.json();
            assert_eq!(r["type"], "subscription.renewed");
            renewed.push(r["occurredAt"].as_str().unwrap()[..10].to_string());
            listening.line().await;
        }
        assert_eq!(renewed, ["2026-12-02", "2027-01-02"], "each, in the order recorded");
        assert!(receiver.taken().is_empty(), "nothing twice");
        listening.stop().await;
        let _ = std::fs::remove_file(&state);
        app
    })
    .await;
}
