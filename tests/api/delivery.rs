//! Webhook delivery against a real receiver on 127.0.0.1: the envelope and
//! Standard Webhooks headers, signatures checked here and by each SDK,
//! retries on the moved clock (500, a timeout, `Retry-After`) with one
//! `webhook-id`, disabling after 5 days of failures and resuming, payloads
//! in the webhook revision, walls between organisations, two instances on
//! one database, and a flaky receiver across restarts.

use crate::harness::*;
use crate::receiver::{Received, Receiver, Reply};
use base64::Engine;
use chrono::Duration;
use hmac::{Hmac, Mac};
use serde_json::{Value, json};
use std::collections::HashMap;

pub fn local_webhooks(s: &mut switchboard::config::Settings) {
    s.webhooks.allow_private = true;
    s.webhooks.allow_http = true;
    // reached only by a receiver that hangs (`failed_attempts_...` sets
    // its own, shorter), never by a slow machine (an attempt that timed
    // out is tried again only when the test's clock moves)
    s.webhook_timeout = std::time::Duration::from_secs(15);
}

/// Registers `url` for `events`; its id and secret.
pub async fn register(app: &TestApp, url: &str, events: Value) -> (String, String) {
    let r = app.call("POST", "/webhook-endpoints", Some(json!({"url": url, "events": events}))).await;
    assert_eq!(r.status, 201, "{:#}", r.body);
    (r.body["webhookEndpointId"].as_str().unwrap().to_string(), r.body["secret"].as_str().unwrap().to_string())
}

pub async fn new_customer(app: &TestApp, key: &str, name: &str) -> String {
    let r = app.call_as(Some(key), "POST", "/customers", Some(json!({"customerType": "BUSINESS", "name": name, "contact": {}})), &[]).await;
    assert_eq!(r.status, 201, "{:#}", r.body);
    r.body["customerId"].as_str().unwrap().to_string()
}

/// Waits until the server has dispatched every event and made and
/// recorded every attempt due now (the background workers run on their
/// own): looks again each time a worker finishes a round.
pub async fn settle(app: &TestApp) {
    let mut rounds = app.job_rounds();
    let settled = async {
        loop {
            rounds.mark_unchanged();
            let now = app.clock.now().to_rfc3339_opts(chrono::SecondsFormat::Micros, true);
            let busy: i64 = sqlx::query_scalar(
                "SELECT (SELECT COUNT(*) FROM events WHERE dispatched_at IS NULL)
                      + (SELECT COUNT(*) FROM jobs WHERE kind = 'webhook.delivery' AND (lease_until IS NOT NULL OR due_at <= $1))",
            )
            .bind(now)
            .fetch_one(app.store.pool())
            .await
            .unwrap();
            if busy == 0 {
                return;
            }
            rounds.changed().await.expect("the server's workers run");
        }
    };
    // (a bound on a hang, not a wait for time)
    tokio::time::timeout(std::time::Duration::from_secs(20), settled).await.expect("deliveries did not settle in 20 s");
}

/// Moves the clock by `d` and runs what fell due.
async fn later(app: &TestApp, d: Duration) {
    app.clock.advance(d);
    app.run_jobs().await;
    settle(app).await;
}

/// The signature a receiver computes with the endpoint's secret.
pub fn expected_signature(secret: &str, r: &Received) -> String {
    let key = base64::engine::general_purpose::STANDARD.decode(secret.strip_prefix("whsec_").unwrap()).unwrap();
    let mut mac = Hmac::<sha2::Sha256>::new_from_slice(&key).unwrap();
    mac.update(format!("{}.{}.{}", r.header("webhook-id"), r.header("webhook-timestamp"), r.body).as_bytes());
    format!("v1,{}", base64::engine::general_purpose::STANDARD.encode(mac.finalize().into_bytes()))
}

fn header_map(r: &Received) -> reqwest::header::HeaderMap {
    r.headers.iter().map(|(k, v)| (k.parse().unwrap(), v.parse().unwrap())).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_event_reaches_its_endpoint_signed() {
    each_backend_with(local_webhooks, |app| async move {
        let mut receiver = Receiver::start().await;
        let (_, secret) = register(&app, &receiver.url, json!(["customer.created"])).await;
        let customer = new_customer(&app, &app.key, "Acme AB").await;

        let r = receiver.next().await;
        assert_eq!(r.path, "/hooks");
        assert_eq!(r.header("content-type"), "application/json");
        let envelope = r.json();
        assert_eq!(envelope["type"], "customer.created");
        assert_eq!(envelope["data"]["customerId"], customer.as_str());
        assert_eq!(r.header("webhook-id"), envelope["eventId"].as_str().unwrap());
        let oldest = switchboard::api::revision::Revision::oldest_supported(app.clock.now().date_naive()).name;
        assert_eq!(envelope["apiRevision"], oldest);
        let stamp: i64 = r.header("webhook-timestamp").parse().unwrap();
        assert!((app.clock.now().timestamp() - stamp).abs() <= 2, "sent at once, stamped when sent");
        assert_eq!(r.header("webhook-signature"), expected_signature(&secret, &r));
        // as the event log shows it
        let logged = app.call("GET", &format!("/events/{}", envelope["eventId"].as_str().unwrap()), None).await;
        assert_eq!(logged.body, envelope);

        // each SDK's check accepts it, and refuses it changed or late
        let headers = header_map(&r);
        let now = app.clock.now().timestamp();
        let tolerance = std::time::Duration::from_secs(300);
        let event = bullfinch::webhooks::verify_at(&secret, &headers, r.body.as_bytes(), tolerance, now).unwrap();
        assert_eq!(event.event_id.to_string(), r.header("webhook-id"));
        auk::webhooks::verify_at(&secret, &headers, r.body.as_bytes(), tolerance, now).unwrap();
        let tampered = r.body.replace("Acme AB", "Evil AB");
        assert!(bullfinch::webhooks::verify_at(&secret, &headers, tampered.as_bytes(), tolerance, now).is_err());
        assert!(bullfinch::webhooks::verify_at(&secret, &headers, r.body.as_bytes(), tolerance, now + 301).is_err());

        // a type the endpoint did not ask for is not sent
        let renamed = app.call("PUT", &format!("/customers/{customer}"), Some(json!({"name": "Acme Sverige AB"}))).await;
        assert_eq!(renamed.status, 200);
        settle(&app).await;
        assert!(receiver.taken().is_empty());
        app
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failed_attempts_are_retried_on_the_clock_with_one_webhook_id() {
    fn hang_up_soon(s: &mut switchboard::config::Settings) {
        local_webhooks(s);
        s.webhook_timeout = std::time::Duration::from_millis(300);
    }
    each_backend_with(hang_up_soon, |app| async move {
        let mut receiver = Receiver::start().await;
        receiver.then(Reply::Status(500));
        receiver.then(Reply::Hang);
        receiver.then(Reply::RetryAfter(503, "120".into()));
        register(&app, &receiver.url, json!(["*"])).await;
        new_customer(&app, &app.key, "Acme AB").await;

        let first = receiver.next().await;
        assert_eq!(first.answered, Some(500));
        let id = first.header("webhook-id").to_string();
        settle(&app).await;
        // not due before the first delay (5 s, a tenth either way)
        later(&app, Duration::seconds(4)).await;
        assert!(receiver.taken().is_empty());
        later(&app, Duration::milliseconds(1700)).await;
        let second = receiver.next().await;
        assert_eq!((second.header("webhook-id"), second.answered), (id.as_str(), None));
        // the server gives up waiting after its timeout (300 ms here)
        settle(&app).await;
        later(&app, Duration::seconds(260)).await;
        assert!(receiver.taken().is_empty(), "the second delay is 5 min");
        later(&app, Duration::seconds(80)).await;
        let third = receiver.next().await;
        assert_eq!((third.header("webhook-id"), third.answered), (id.as_str(), Some(503)));
        settle(&app).await;
        // Retry-After: 120 replaces the schedule's 30 min
        later(&app, Duration::seconds(110)).await;
        assert!(receiver.taken().is_empty());
        later(&app, Duration::seconds(15)).await;
        let fourth = receiver.next().await;
        assert_eq!((fourth.header("webhook-id"), fourth.answered), (id.as_str(), Some(200)));
        let stamps: Vec<i64> = [&first, &second, &third, &fourth].iter().map(|r| r.header("webhook-timestamp").parse().unwrap()).collect();
        assert!(stamps.windows(2).all(|w| w[0] < w[1]), "each attempt is stamped when made: {stamps:?}");
        settle(&app).await;

        // acknowledged: never sent again
        later(&app, Duration::days(4)).await;
        assert!(receiver.taken().is_empty());
        app
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_delivery_that_never_succeeds_fails_after_about_three_days() {
    each_backend_with(local_webhooks, |app| async move {
        let mut receiver = Receiver::start().await;
        receiver.always(Reply::Status(500));
        register(&app, &receiver.url, json!(["customer.created"])).await;
        new_customer(&app, &app.key, "Acme AB").await;
        receiver.next().await;
        settle(&app).await;
        // follow the schedule: to each next attempt's time, no later
        let mut attempts = 1;
        loop {
            let next: Option<String> = sqlx::query_scalar("SELECT next_attempt_at FROM webhook_deliveries").fetch_one(app.store.pool()).await.unwrap();
            let Some(next) = next else { break };
            let next: chrono::DateTime<chrono::Utc> = next.parse().unwrap();
            later(&app, next - app.clock.now() + Duration::milliseconds(1)).await;
            attempts += receiver.taken().len();
        }
        assert_eq!(attempts, 11, "eleven attempts in about three days, then it fails");
        let status: String = sqlx::query_scalar("SELECT status FROM webhook_deliveries").fetch_one(app.store.pool()).await.unwrap();
        assert_eq!(status, "FAILED");
        app
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_endpoint_failing_for_five_days_is_disabled_and_resumes_when_enabled() {
    each_backend_with(local_webhooks, |app| async move {
        let mut receiver = Receiver::start().await;
        receiver.always(Reply::Status(500));
        let (id, _) = register(&app, &receiver.url, json!(["*"])).await;
        new_customer(&app, &app.key, "First AB").await;
        receiver.next().await;
        settle(&app).await;
        for day in 1..=6 {
            // a new event each day keeps attempts coming
            for _ in 0..4 {
                later(&app, Duration::hours(6)).await;
            }
            let endpoint = app.call("GET", &format!("/webhook-endpoints/{id}"), None).await.body;
            // disabled some time on day 5 (by the last attempt after five
            // days of failures), so checked on day 6
            if day < 5 {
                assert_eq!(endpoint["status"], "ENABLED", "day {day}");
                new_customer(&app, &app.key, &format!("Day {day} AB")).await;
                settle(&app).await;
            } else if day == 6 {
                assert_eq!((&endpoint["status"], &endpoint["disabledReason"]), (&json!("DISABLED"), &json!("FAILING")), "day {day}");
            }
        }
        // disabled: nothing is sent, new events are not queued for it
        receiver.taken();
        new_customer(&app, &app.key, "Unseen AB").await;
        later(&app, Duration::hours(13)).await;
        assert!(receiver.taken().is_empty());

        // enabled: what was pending goes out at once
        receiver.always(Reply::Status(200));
        let enabled = app.call("PUT", &format!("/webhook-endpoints/{id}"), Some(json!({"status": "ENABLED"}))).await;
        assert_eq!(enabled.body["status"], "ENABLED");
        app.run_jobs().await;
        settle(&app).await;
        let resumed: Vec<String> = receiver.taken().iter().map(|r| r.json()["data"]["name"].as_str().unwrap_or_default().to_string()).collect();
        assert!(!resumed.is_empty() && !resumed.contains(&"Unseen AB".to_string()), "{resumed:?}");
        app
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn payloads_have_the_shape_of_the_webhook_revision() {
    each_backend_with(local_webhooks, |app| async move {
        let mut receiver = Receiver::start().await;
        register(&app, &receiver.url, json!(["order.created"])).await;
        let customer = crate::orders::setup(&app).await;
        let line = json!({"type": "SUBSCRIPTION", "productOfferingId": crate::orders::offering(&app, "mobile-10gb"),
                          "subscription": {"simType": "ESIM", "msisdn": "+46701234567"}});
        let order = json!({"customerId": customer, "lineItems": [line]});
        for revision in [AUK, BULLFINCH] {
            switchboard::domain::webhooks::revision::set(&app.store, app.org, revision, app.clock.now().date_naive()).await.unwrap();
            assert_eq!(app.call("POST", "/orders", Some(order.clone())).await.status, 201);
            let sent = receiver.next().await.json();
            assert_eq!(sent["apiRevision"], revision);
            let pricing = &sent["data"]["lineItems"][0]["pricing"];
            assert_eq!(pricing["totalMinor"], 24875);
            if revision == AUK {
                assert_eq!(pricing["total"], 248.75, "auk carries the major-unit twins: {pricing:#}");
            } else {
                assert!(pricing.get("total").is_none(), "{pricing:#}");
            }
        }
        app
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_organisations_events_never_reach_this_endpoint() {
    each_backend_with(local_webhooks, |app| async move {
        let mut ours = Receiver::start().await;
        let mut theirs = Receiver::start().await;
        register(&app, &ours.url, json!(["*"])).await;
        let (_, other) = app.other_org().await;
        let r = app.call_as(Some(&other), "POST", "/webhook-endpoints", Some(json!({"url": theirs.url})), &[]).await;
        assert_eq!(r.status, 201);
        let mine = new_customer(&app, &app.key, "Ours AB").await;
        let their = new_customer(&app, &other, "Theirs AB").await;
        settle(&app).await;
        let got: Vec<Value> = ours.taken().iter().map(|r| r.json()["data"]["customerId"].clone()).collect();
        assert_eq!(got, [json!(mine)]);
        let got: Vec<Value> = theirs.taken().iter().map(|r| r.json()["data"]["customerId"].clone()).collect();
        assert_eq!(got, [json!(their)]);
        app
    })
    .await;
}

/// Each attempt is made by one instance: two servers over one PostgreSQL
/// (or one SQLite file) send every event once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_instances_make_each_attempt_once() {
    each_backend_with(local_webhooks, |app| async move {
        let mut receiver = Receiver::start().await;
        register(&app, &receiver.url, json!(["customer.created"])).await;
        let (second, second_base) = app.second_instance().await;
        let bases = [app.base.clone(), second_base];
        let mut created = vec![];
        for i in 0..40 {
            let r = TestApp::http(Some(&app.key))
                .post(format!("{}/customers", bases[i % 2]))
                .json(&json!({"customerType": "BUSINESS", "name": format!("Customer {i}"), "contact": {}}))
                .send()
                .await
                .unwrap();
            assert_eq!(r.status(), 201);
            created.push(r.json::<Value>().await.unwrap()["customerId"].as_str().unwrap().to_string());
        }
        let mut seen: HashMap<String, usize> = HashMap::new();
        while seen.len() < created.len() {
            *seen.entry(receiver.next().await.json()["data"]["customerId"].as_str().unwrap().to_string()).or_default() += 1;
        }
        settle(&app).await;
        for r in receiver.taken() {
            *seen.entry(r.json()["data"]["customerId"].as_str().unwrap().to_string()).or_default() += 1;
        }
        assert!(seen.values().all(|n| *n == 1), "each event sent once: {seen:?}");
        second.close().await.unwrap();
        app
    })
    .await;
}

/// A receiver failing 30 % of attempts at random, the server restarted
/// (its in-flight attempts cut off) while events keep coming: every event
/// is acknowledged in the end, none lost.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flaky_receiver_across_restarts_gets_every_event() {
    each_backend_with(local_webhooks, |mut app| async move {
        let mut receiver = Receiver::start().await;
        receiver.always(Reply::Flaky(0.3));
        register(&app, &receiver.url, json!(["customer.created"])).await;
        let mut created = vec![];
        for round in 0..4 {
            for i in 0..15 {
                created.push(new_customer(&app, &app.key, &format!("Round {round} customer {i}")).await);
            }
            app.restart().await;
        }
        let mut acknowledged = std::collections::HashSet::new();
        for _ in 0..40 {
            for r in receiver.taken() {
                if r.answered == Some(200) {
                    acknowledged.insert(r.json()["data"]["customerId"].as_str().unwrap().to_string());
                }
            }
            if acknowledged.len() == created.len() {
                break;
            }
            // past any lease cut off by a restart, and the next retry
            later(&app, Duration::hours(7)).await;
        }
        let missing: Vec<&String> = created.iter().filter(|c| !acknowledged.contains(*c)).collect();
        assert!(missing.is_empty(), "never acknowledged: {missing:?}");
        app
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_delivery_log_redelivery_and_replay() {
    each_backend_with(local_webhooks, |app| async move {
        let mut receiver = Receiver::start().await;
        let start = app.clock.now();
        let (a, _) = register(&app, &receiver.url, json!(["customer.created"])).await;
        let a: uuid::Uuid = a.parse().unwrap();
        new_customer(&app, &app.key, "First AB").await;
        let first = receiver.next().await;
        settle(&app).await;
        let event: uuid::Uuid = first.header("webhook-id").parse().unwrap();

        // the log: one delivery, acknowledged at the first attempt, as the receiver answered
        let client = app.bullfinch();
        let log = client.webhook_delivery_list(&a, None, None, None).await.unwrap().into_inner();
        assert_eq!(log.items.len(), 1);
        let d = &log.items[0];
        assert_eq!((d.event_id, d.event_type.as_str(), d.attempt_count), (event, "customer.created", 1));
        assert_eq!(json_of(&d.status), json!("SUCCEEDED"));
        assert!(d.next_attempt_at.is_none() && d.delivered_at.is_some());
        assert_eq!(d.attempts[0].status_code, Some(200));
        assert_eq!(d.attempts[0].response_body.as_deref(), Some("answered 200"));
        assert!(d.attempts[0].error.is_none());
        let auk_log = app.auk_with(&app.key).webhook_delivery_list(&a, None, None, None).await.unwrap().into_inner();
        assert_eq!(json_of(&auk_log), json_of(&log));

        // sent again though delivered: the same webhook-id, a new attempt kept beside the first
        let to_a: bullfinch::types::RedeliverEventRequest = serde_json::from_value(json!({"webhookEndpointId": a})).unwrap();
        let queued = client.event_redeliver(&event, None, &to_a).await.unwrap();
        assert_eq!(queued.status().as_u16(), 202);
        let queued = queued.into_inner();
        assert_eq!(queued.items.len(), 1);
        assert_eq!(json_of(&queued.items[0].status), json!("PENDING"));
        assert_eq!(receiver.next().await.header("webhook-id"), event.to_string());
        settle(&app).await;
        let d = client.webhook_delivery_list(&a, None, None, None).await.unwrap().into_inner().items.remove(0);
        assert_eq!((d.attempt_count, d.attempts.len()), (2, 2));
        assert_eq!(json_of(&d.status), json!("SUCCEEDED"));

        // with an idempotency key: the answer shows the new round, and a retry replays it without sending again
        let key = [("X-Idempotency-Key", "redeliver-1")];
        let path = format!("/events/{event}/redeliver");
        let answered = app.call_as(Some(&app.key), "POST", &path, Some(json!({"webhookEndpointId": a})), &key).await;
        assert_eq!(answered.status, 202, "{:#}", answered.body);
        assert_eq!((&answered.body["items"][0]["status"], &answered.body["items"][0]["attemptCount"]), (&json!("PENDING"), &json!(2)));
        assert_eq!(receiver.next().await.header("webhook-id"), event.to_string());
        settle(&app).await;
        let retried = app.call_as(Some(&app.key), "POST", &path, Some(json!({"webhookEndpointId": a})), &key).await;
        assert_eq!((retried.status, &retried.body), (202, &answered.body));
        settle(&app).await;
        assert!(receiver.taken().is_empty(), "a replayed answer sends nothing");
        let d = client.webhook_delivery_list(&a, None, None, None).await.unwrap().into_inner().items.remove(0);
        assert_eq!(d.attempt_count, 3);

        // to every enabled endpoint that selects the type
        let (b, _) = register(&app, &format!("{}?b", receiver.url), json!(["*"])).await;
        let (c, _) = register(&app, &receiver.url, json!(["order.created"])).await;
        let all = app.call("POST", &format!("/events/{event}/redeliver"), Some(json!({}))).await;
        assert_eq!(all.status, 202, "{:#}", all.body);
        let endpoints: Vec<&str> = all.body["items"].as_array().unwrap().iter().map(|d| d["webhookEndpointId"].as_str().unwrap()).collect();
        assert_eq!(endpoints, [a.to_string(), b.clone()]);
        receiver.next().await;
        receiver.next().await;
        settle(&app).await;

        // refusals
        app.call("POST", &format!("/events/{}/redeliver", uuid::Uuid::new_v4()), Some(json!({}))).await.assert_error(404, "event_not_found");
        app.call("POST", &format!("/events/{event}/redeliver"), Some(json!({"webhookEndpointId": uuid::Uuid::new_v4()})))
            .await
            .assert_error(404, "webhook_endpoint_not_found");
        assert_eq!(app.call("PUT", &format!("/webhook-endpoints/{c}"), Some(json!({"status": "DISABLED"}))).await.status, 200);
        app.call("POST", &format!("/events/{event}/redeliver"), Some(json!({"webhookEndpointId": c}))).await.assert_error(409, "webhook_endpoint_disabled");
        let since = start.to_rfc3339();
        app.call("POST", &format!("/webhook-endpoints/{c}/replay"), Some(json!({"since": since}))).await.assert_error(409, "webhook_endpoint_disabled");
        let empty = app.call("POST", &format!("/webhook-endpoints/{a}/replay"), Some(json!({"since": since, "until": since}))).await;
        assert_eq!((empty.status, &empty.body["queued"]), (202, &json!(0)), "an empty window queues nothing");
        app.call("GET", &format!("/webhook-endpoints/{a}/deliveries?status=LOST"), None).await.assert_error(400, "validation_failed");

        // replay: what an endpoint missed in a window, and nothing it acknowledged
        receiver.always(Reply::Status(500));
        new_customer(&app, &app.key, "Second AB").await;
        receiver.next().await;
        settle(&app).await;
        let failing = client.webhook_delivery_list(&a, None, None, Some(bullfinch::types::WebhookDeliveryListStatus::Pending)).await.unwrap();
        assert_eq!(failing.into_inner().items.len(), 1);
        receiver.always(Reply::Status(200));
        receiver.taken();
        let (d, _) = register(&app, &format!("{}?d", receiver.url), json!(["customer.created"])).await;
        let d: uuid::Uuid = d.parse().unwrap();
        let window: bullfinch::types::ReplayWebhookEndpointRequest = serde_json::from_value(json!({"since": since})).unwrap();
        let replayed = client.webhook_endpoint_replay(&d, None, &window).await.unwrap();
        assert_eq!(replayed.status().as_u16(), 202);
        assert_eq!(replayed.into_inner().queued, 2, "both customers, registered after them");
        let replayed = client.webhook_endpoint_replay(&a, None, &window).await.unwrap().into_inner();
        assert_eq!(replayed.queued, 1, "only the one it did not acknowledge");
        settle(&app).await;
        let mut got: Vec<String> = receiver.taken().iter().map(|r| format!("{} {}", r.path, r.json()["data"]["name"].as_str().unwrap())).collect();
        got.sort();
        assert_eq!(got, ["/hooks Second AB", "/hooks?d First AB", "/hooks?d Second AB"]);
        let again = client.webhook_endpoint_replay(&d, None, &window).await.unwrap().into_inner();
        assert_eq!(again.queued, 0);

        // one replay takes at most 31 days and 10,000 events, cutting its
        // window where either ends (the store answers where the events
        // end, here for a limit of 1)
        let long_ago = app.clock.now() - Duration::days(40);
        let r = app.call("POST", &format!("/webhook-endpoints/{d}/replay"), Some(json!({"since": long_ago.to_rfc3339()}))).await;
        assert_eq!((r.status, &r.body["queued"]), (202, &json!(0)), "{:#}", r.body);
        let until: chrono::DateTime<chrono::Utc> = r.body["until"].as_str().unwrap().parse().unwrap();
        assert_eq!(until, long_ago + Duration::days(31), "cut after 31 days");
        let all = ["*".to_string()];
        let (from, to) = (start, app.clock.now() + Duration::seconds(1));
        let cut = app.store.replay_cut(app.org, uuid::Uuid::new_v4(), from, to, &all, 1).await.unwrap();
        assert!(cut.is_some_and(|c| c > from && c < to), "{cut:?}");
        assert_eq!(app.store.replay_cut(app.org, uuid::Uuid::new_v4(), from, to, &all, 10_000).await.unwrap(), None);

        // the key alone; another organisation sees none of it
        app.call(
            "POST",
            "/users",
            Some(json!({"name": "Anna", "email": "anna@acme.example", "role": "ADMIN",
            "customerId": new_customer(&app, &app.key, "Third AB").await})),
        )
        .await;
        let token = app.login("anna@acme.example", Some(&app.key)).await;
        let auth = format!("Bearer {token}");
        let bearer = [("Authorization", auth.as_str())];
        app.call_as(Some(&app.key), "GET", &format!("/webhook-endpoints/{a}/deliveries"), None, &bearer).await.assert_error(403, "insufficient_role");
        app.call_as(Some(&app.key), "POST", &format!("/events/{event}/redeliver"), Some(json!({})), &bearer).await.assert_error(403, "insufficient_role");
        let (_, other) = app.other_org().await;
        app.call_as(Some(&other), "GET", &format!("/webhook-endpoints/{a}/deliveries"), None, &[]).await.assert_error(404, "webhook_endpoint_not_found");
        app.call_as(Some(&other), "POST", &format!("/events/{event}/redeliver"), Some(json!({})), &[]).await.assert_error(404, "event_not_found");
        app.call_as(Some(&other), "POST", &format!("/webhook-endpoints/{a}/replay"), Some(json!({"since": since})), &[])
            .await
            .assert_error(404, "webhook_endpoint_not_found");
        let read_only = app.new_key(app.org, None, true).await;
        assert_eq!(app.call_as(Some(&read_only), "GET", &format!("/webhook-endpoints/{a}/deliveries"), None, &[]).await.status, 200);
        app.call_as(Some(&read_only), "POST", &format!("/events/{event}/redeliver"), Some(json!({})), &[]).await.assert_error(403, "read_only_api_key");
        app
    })
    .await;
}

/// On a server that takes public receivers only (the default), a name is
/// checked as it resolves at registration and again at each attempt: a
/// public one is delivered to (here the test internet routes its address to
/// a local receiver); one refused at the connection is a failed attempt
/// naming why; a name that does not resolve is refused at registration.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn public_receivers_by_name_through_the_test_internet() {
    fn public_over_http(s: &mut switchboard::config::Settings) {
        s.webhooks.allow_http = true;
        // the receiver listens on an ephemeral port: the operator lists them all
        s.webhooks.allow_ports = (1024..=u16::MAX).collect();
        s.webhook_timeout = std::time::Duration::from_secs(5);
    }
    each_backend_with(public_over_http, |app| async move {
        let mut receiver = Receiver::start().await;
        let port = receiver.url.trim_start_matches("http://127.0.0.1:").split('/').next().unwrap().to_string();
        app.internet.route(TEST_PUBLIC[0]);
        let (routed, _) = register(&app, &format!("http://hooks.acme.example:{port}/hooks"), json!(["customer.created"])).await;
        let (unrouted, _) = register(&app, "http://hooks.globex.example/hooks", json!(["customer.created"])).await;
        let r = app.call("POST", "/webhook-endpoints", Some(json!({"url": "https://hooks.nowhere.example/hooks"}))).await;
        r.assert_error(400, "validation_failed");
        assert_eq!(r.details(), [("url".to_string(), "unresolvable_host".to_string())]);
        let customer = new_customer(&app, &app.key, "Public AB").await;
        assert_eq!(receiver.next().await.json()["data"]["customerId"], customer.as_str());
        settle(&app).await;
        let client = app.bullfinch();
        let log = |id: &str| {
            let (client, id) = (client.clone(), id.parse::<uuid::Uuid>().unwrap());
            async move { client.webhook_delivery_list(&id, None, None, None).await.unwrap().into_inner().items.remove(0) }
        };
        assert_eq!(log(&routed).await.attempts[0].status_code, Some(200));
        let refused = log(&unrouted).await;
        let error = refused.attempts[0].error.clone().unwrap_or_default();
        assert!(error.contains("has no receiver"), "{error}");
        assert_eq!(app.internet.refused.lock().unwrap().iter().map(|a| a.ip().to_string()).collect::<Vec<_>>(), [TEST_PUBLIC[1]]);
        app
    })
    .await;
}

/// Through an egress proxy (`--webhooks-proxy`, named here by a name that
/// resolves to loopback), a delivery goes to the proxy, naming its
/// receiver; the server resolves no receiver's name itself, not even at
/// registration (a name only the proxy knows is taken).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deliveries_go_through_the_webhooks_proxy() {
    for backend in backends() {
        let mut proxy = Receiver::start().await;
        let mut settings = TestApp::settings_of_tests();
        settings.webhooks.allow_http = true;
        settings.webhooks.proxy = Some(proxy.url.trim_end_matches("/hooks").replace("127.0.0.1", "localhost"));
        let app = TestApp::start_with_settings(backend, settings).await;
        register(&app, "http://hooks.inside-the-proxy.example/hooks", json!(["customer.created"])).await;
        new_customer(&app, &app.key, "Proxied AB").await;
        let through = proxy.next().await;
        assert_eq!(through.path, "http://hooks.inside-the-proxy.example/hooks", "the absolute URL, for the proxy to reach");
        assert_eq!(through.json()["type"], "customer.created");
        assert!(app.internet.refused.lock().unwrap().is_empty());
        app.finish().await;
    }
}
