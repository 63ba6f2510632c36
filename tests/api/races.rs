//! Requests that race each other. A retry racing its own original under
//! one `X-Idempotency-Key`, on every idempotent operation whose work has a
//! unique field (a referenceId, an email, a number), is answered as a retry
//! is (the first answer replayed, or `idempotency_key_locked`), never with
//! the `conflict` its original's unique value would give a stranger. Two
//! moves of one subscription, two submissions (or a submission and a
//! cancellation) of one order, one login code verified twice, and creates
//! racing for the last webhook endpoints: one wins, and each other gets
//! the refusal of the state it met.

use crate::harness::*;
use crate::orders::{offering, setup};
use serde_json::{Value, json};

/// How many identical requests race in one round, and how many rounds.
const RACERS: usize = 20;
const ROUNDS: usize = 3;

/// `RACERS` identical POSTs of `body` to `path` at once under `key`:
/// exactly one executes and succeeds; every other answer is its replay or
/// `idempotency_key_locked`. The first answer's body.
async fn race(app: &TestApp, path: &str, body: &Value, key: &str) -> Value {
    let tasks: Vec<_> = (0..RACERS)
        .map(|_| {
            let request = TestApp::http(Some(&app.key)).post(format!("{}{path}", app.base)).header("x-idempotency-key", key).json(body);
            tokio::spawn(async move {
                let r = request.send().await.unwrap();
                let (status, replayed) = (r.status().as_u16(), r.headers().contains_key("idempotent-replayed"));
                (status, replayed, r.json::<Value>().await.unwrap())
            })
        })
        .collect();
    let (mut first, mut replays, mut locked) = (None, vec![], 0);
    for task in tasks {
        match task.await.unwrap() {
            (status, true, body) => replays.push((status, body)),
            (409, false, body) if body["internalCode"] == "idempotency_key_locked" => locked += 1,
            (status, false, body) => {
                assert!((200..300).contains(&status), "{path}: a retry was told {status}: {body:#}");
                assert!(first.is_none(), "{path}: a second execution: {body:#}");
                first = Some((status, body));
            }
        }
    }
    let first = first.unwrap_or_else(|| panic!("{path}: no execution ({} replays, {locked} locked)", replays.len()));
    assert!(replays.iter().all(|r| *r == first), "{path}: every replay is the first answer");
    first.1
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retry_racing_its_original_gets_the_originals_answer() {
    each_backend_with(|s| s.per_key_per_second = 100_000, |app| async move {
        let customer = setup(&app).await;
        let mobile = offering(&app, "mobile-10gb");
        for round in 0..ROUNDS {
            let created = race(&app, "/customers", &json!({"customerType": "CONSUMER", "name": "Race", "referenceId": format!("race-{round}"), "contact": {}}), &format!("customer-{round}")).await;
            assert_eq!(created["referenceId"], format!("race-{round}"));

            let user = json!({"name": "Racer", "email": format!("racer{round}@acme.example"), "customerId": customer, "referenceId": format!("racer-{round}"), "role": "MEMBER"});
            race(&app, "/users", &user, &format!("user-{round}")).await;

            let line = json!({"type": "SUBSCRIPTION", "productOfferingId": mobile, "subscription": {"simType": "ESIM", "msisdn": format!("+4670123{round:04}")}});
            let order = race(&app, "/orders", &json!({"customerId": customer, "referenceId": format!("order-{round}"), "lineItems": [line]}), &format!("order-{round}")).await;
            // submitting creates the subscription and its number
            let submitted = race(&app, &format!("/orders/{}/submit", order["orderId"].as_str().unwrap()), &json!({}), &format!("submit-{round}")).await;
            assert_eq!(submitted["status"], "SUBMITTED", "{submitted:#}");

            let bought = json!({"customerId": customer, "productOfferingId": mobile,
                                "subscription": {"simType": "ESIM", "msisdn": format!("+4670124{round:04}"), "referenceId": format!("line-{round}")}});
            race(&app, "/subscriptions", &bought, &format!("subscription-{round}")).await;
        }
        // each executed once: one of each per round
        let customers = app.call("GET", "/customers?limit=1000", None).await;
        assert_eq!(customers.body["items"].as_array().unwrap().len(), ROUNDS + 1);
        let subscriptions = app.call("GET", "/subscriptions?limit=1000", None).await;
        assert_eq!(subscriptions.body["items"].as_array().unwrap().len(), 2 * ROUNDS);
        app
    })
    .await;
}

/// The same race made certain: the database holds the first request's
/// write back, so every other copy arrives while it is in flight, and each
/// answers `idempotency_key_locked` at once, running nothing; once the
/// write goes through, the first answers 201 and a retry replays it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn copies_of_a_request_in_flight_answer_locked_at_once() {
    each_backend(|app| async move {
        let body = json!({"customerType": "CONSUMER", "name": "Held", "referenceId": "held", "contact": {}});
        let send = || TestApp::http(Some(&app.key)).post(format!("{}/customers", app.base)).header("x-idempotency-key", "held").json(&body);
        let mut held = app.hold_customer_writes().await;
        let (tell, mut answers) = tokio::sync::mpsc::unbounded_channel();
        for _ in 0..RACERS {
            let (request, tell) = (send(), tell.clone());
            tokio::spawn(async move {
                let r = request.send().await.unwrap();
                let (status, replayed) = (r.status().as_u16(), r.headers().contains_key("idempotent-replayed"));
                tell.send((status, replayed, r.json::<Value>().await.unwrap())).unwrap();
            });
        }
        let within = std::time::Duration::from_secs(30);
        for _ in 1..RACERS {
            let (status, replayed, body) = tokio::time::timeout(within, answers.recv()).await.expect("the copies answer while the first waits").unwrap();
            assert_eq!((status, replayed, body["internalCode"].as_str()), (409, false, Some("idempotency_key_locked")), "{body:#}");
        }
        sqlx::query("ROLLBACK").execute(&mut held).await.unwrap();
        let (status, replayed, first) = tokio::time::timeout(within, answers.recv()).await.unwrap().unwrap();
        assert_eq!((status, replayed), (201, false), "{first:#}");
        let retry = send().send().await.unwrap();
        assert_eq!((retry.status().as_u16(), retry.headers().contains_key("idempotent-replayed")), (201, true));
        assert_eq!(retry.json::<Value>().await.unwrap(), first);
        app
    })
    .await;
}

/// `requests` (method, path, body) sent at once; their answers in order.
async fn at_once(app: &TestApp, requests: &[(&str, String, Option<Value>)]) -> Vec<Raw> {
    futures::future::join_all(requests.iter().map(|(method, path, body)| app.call(method, path, body.clone()))).await
}

/// One answer is the success, the rest are this refusal.
fn one_wins(answers: &[Raw], status: u16, internal_code: &str) -> usize {
    let won: Vec<usize> = (0..answers.len()).filter(|i| (200..300).contains(&answers[*i].status)).collect();
    assert_eq!(won.len(), 1, "exactly one wins: {answers:#?}");
    for (i, a) in answers.iter().enumerate().filter(|(i, _)| *i != won[0]) {
        assert_eq!((a.status, a.body["internalCode"].as_str()), (status, Some(internal_code)), "answer {i}: {:#}", a.body);
    }
    won[0]
}

/// A submitted order's new subscription, activated: its id.
async fn active_subscription(app: &TestApp, customer: &str, msisdn: &str) -> String {
    let line = json!({"type": "SUBSCRIPTION", "productOfferingId": offering(app, "mobile-10gb"), "subscription": {"simType": "ESIM", "msisdn": msisdn}});
    let order = app.call("POST", "/orders", Some(json!({"customerId": customer, "lineItems": [line]}))).await;
    let submitted = app.call("POST", &format!("/orders/{}/submit", order.body["orderId"].as_str().unwrap()), None).await;
    assert_eq!(submitted.status, 200, "{:#}", submitted.body);
    let id = submitted.body["lineItems"][0]["createdSubscriptionId"].as_str().unwrap().to_string();
    assert_eq!(app.call("POST", &format!("/subscriptions/{id}/activate"), Some(json!({}))).await.status, 200);
    id
}

fn events_of(recorded: &[(String, Value)], name: &str) -> usize {
    recorded.iter().filter(|(t, _)| t == name).count()
}

/// Two moves of one subscription at once: the table is asked once per
/// move, in turn, so one moves it and the other meets the state it left.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_moves_of_one_subscription_at_once() {
    each_backend(|app| async move {
        let customer = setup(&app).await;
        let s = active_subscription(&app, &customer, "+46701235001").await;
        let pause = ("POST", format!("/subscriptions/{s}/pause"), Some(json!({})));
        one_wins(&at_once(&app, &[pause.clone(), pause.clone(), pause]).await, 409, "subscription_paused");
        assert_eq!(events_of(&app.store.event_types(app.org).await.unwrap(), "subscription.paused"), 1);

        // two different moves: whichever goes first, the other meets its state
        let t = active_subscription(&app, &customer, "+46701235002").await;
        let answers = at_once(
            &app,
            &[("POST", format!("/subscriptions/{t}/suspend"), Some(json!({}))), ("POST", format!("/subscriptions/{t}/block-sim"), Some(json!({})))],
        )
        .await;
        let state = app.call("GET", &format!("/subscriptions/{t}"), None).await.body["status"].clone();
        let won = answers.iter().filter(|a| a.status == 200).count();
        assert!(won >= 1, "{answers:#?}");
        // the last one to move it set the state it stands in
        let last = answers.iter().rfind(|a| a.status == 200).unwrap();
        assert_eq!(last.body["status"], state, "{answers:#?}");
        // the other met that state: the table's 409 for it, or, where the
        // table allows its move from there too, 409 conflict: read and retry
        for refused in answers.iter().filter(|a| a.status != 200) {
            if refused.body["internalCode"] == "conflict" {
                refused.assert_error(409, "conflict");
                assert!(refused.body["message"].as_str().unwrap().contains("read it again and retry"), "{:#}", refused.body);
            } else {
                refused.assert_error(409, &format!("subscription_{}", state.as_str().unwrap().to_lowercase()));
            }
        }
        app
    })
    .await;
}

/// One order submitted twice at once makes its subscription once; submitted
/// and cancelled at once, it ends one way, with what that way makes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_order_submitted_twice_or_submitted_and_cancelled_at_once() {
    each_backend(|app| async move {
        let customer = setup(&app).await;
        submit_races(&app, &customer).await;
        app
    })
    .await;
}

async fn submit_races(app: &TestApp, customer: &str) {
    {
        let draft = |msisdn: &str| {
            let line =
                json!({"type": "SUBSCRIPTION", "productOfferingId": offering(app, "mobile-10gb"), "subscription": {"simType": "ESIM", "msisdn": msisdn}});
            let body = json!({"customerId": customer, "lineItems": [line]});
            async move { app.call("POST", "/orders", Some(body)).await.body["orderId"].as_str().unwrap().to_string() }
        };
        let order = draft("+46701236001").await;
        let submit = ("POST", format!("/orders/{order}/submit"), None);
        one_wins(&at_once(app, &[submit.clone(), submit]).await, 409, "order_state_conflict");
        let subscriptions = app.call("GET", "/subscriptions", None).await;
        assert_eq!(subscriptions.body["items"].as_array().unwrap().len(), 1, "one subscription made");

        let order = draft("+46701236002").await;
        let answers = at_once(app, &[("POST", format!("/orders/{order}/submit"), None), ("POST", format!("/orders/{order}/cancel"), None)]).await;
        let won = one_wins(&answers, 409, "order_state_conflict");
        let status = app.call("GET", &format!("/orders/{order}"), None).await.body["status"].clone();
        let subscriptions = app.call("GET", "/subscriptions", None).await.body["items"].as_array().unwrap().len();
        match won {
            0 => assert_eq!((status, subscriptions), (json!("SUBMITTED"), 2)),
            _ => assert_eq!((status, subscriptions), (json!("CANCELLED"), 1)),
        }
    }
}

/// One login code verified twice at once signs in once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_login_code_verified_twice_at_once() {
    each_backend(|app| async move {
        let customer = setup(&app).await;
        let user = app.call("POST", "/users", Some(json!({"name": "Twice", "email": "twice@acme.example", "customerId": customer, "role": "ADMIN"}))).await;
        assert_eq!(user.status, 201, "{:#}", user.body);
        let started = app.call_as(None, "POST", "/auth/email/start", Some(json!({"email": "twice@acme.example"})), &[]).await;
        let body = json!({"email": "twice@acme.example", "nonce": started.body["nonce"], "code": app.mailed_code("twice@acme.example").await});
        let verify = || app.call_as(None, "POST", "/auth/email/verify", Some(body.clone()), &[]);
        let answers = futures::future::join_all([verify(), verify(), verify()]).await;
        one_wins(&answers, 401, "invalid_login_code");
        app
    })
    .await;
}

/// The limit of 16 endpoints holds when creates race for the last places.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sixteen_endpoint_limit_raced() {
    each_backend(|app| async move {
        for i in 0..14 {
            let r = app.call("POST", "/webhook-endpoints", Some(json!({"url": format!("https://hooks.acme.example/{i}")}))).await;
            assert_eq!(r.status, 201, "{:#}", r.body);
        }
        let create = |i: usize| ("POST", "/webhook-endpoints".to_string(), Some(json!({"url": format!("https://hooks.acme.example/race-{i}")})));
        let answers = at_once(&app, &(0..6).map(create).collect::<Vec<_>>()).await;
        let created = answers.iter().filter(|a| a.status == 201).count();
        assert_eq!(created, 2, "{answers:#?}");
        for refused in answers.iter().filter(|a| a.status != 201) {
            refused.assert_error(409, "webhook_endpoint_limit_reached");
        }
        let listed = app.call("GET", "/webhook-endpoints?limit=100", None).await;
        assert_eq!(listed.body["items"].as_array().unwrap().len(), 16);
        app
    })
    .await;
}

/// PUTs of one customer that all read it before any of them writes, each
/// changing another field: every field holds what its PUT wrote (a PUT
/// whose read another write overtook writes its own fields over that
/// write, not the customer it read). PostgreSQL only: there the test sees
/// that every PUT waits on the held table (`pg_locks`) before it lets them
/// go; SQLite's writers queue inside the server, where nothing shows that
/// they have read.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn puts_of_one_customer_that_read_it_before_any_writes_lose_no_field() {
    each_backend(|app| async move {
        if !matches!(app.backend, Backend::Postgres) {
            return app;
        }
        let r = app.call("POST", "/customers", Some(json!({"customerType": "CONSUMER", "name": "Before", "contact": {}}))).await;
        assert_eq!(r.status, 201, "{:#}", r.body);
        let path = format!("/customers/{}", r.body["customerId"].as_str().unwrap());
        let changes = [
            json!({"name": "After"}),
            json!({"preferredLocale": "sv-SE"}),
            json!({"metadata": {"k": "v"}}),
            json!({"referenceId": "lost-update"}),
            json!({"contact": {"email": "after@example.com"}}),
        ];
        let mut held = app.hold_customer_writes().await;
        let puts: Vec<_> = changes
            .iter()
            .map(|body| {
                let request = TestApp::http(Some(&app.key)).put(format!("{}{path}", app.base)).json(body);
                tokio::spawn(async move { request.send().await.unwrap().status().as_u16() })
            })
            .collect();
        // every PUT has read the customer and waits to write it
        let mut watch = <sqlx::AnyConnection as sqlx::Connection>::connect(&app.url).await.unwrap();
        let waiting = "SELECT COUNT(*) AS n FROM pg_locks l JOIN pg_class c ON l.relation = c.oid WHERE c.relname = 'customers' AND NOT l.granted";
        let mut rounds = 0;
        loop {
            use sqlx::Row;
            let n: i64 = sqlx::query(waiting).fetch_one(&mut watch).await.unwrap().get("n");
            if n as usize == changes.len() {
                break;
            }
            rounds += 1;
            assert!(rounds < 10_000, "{n} of {} PUTs wait on the held table", changes.len());
            tokio::task::yield_now().await;
        }
        sqlx::query("ROLLBACK").execute(&mut held).await.unwrap();
        for put in puts {
            assert_eq!(put.await.unwrap(), 200);
        }
        let now = app.call("GET", &path, None).await.body;
        assert_eq!((now["name"].as_str(), now["preferredLocale"].as_str()), (Some("After"), Some("sv-SE")), "{now:#}");
        assert_eq!((now["metadata"]["k"].as_str(), now["referenceId"].as_str()), (Some("v"), Some("lost-update")), "{now:#}");
        assert_eq!(now["contact"]["email"], "after@example.com", "{now:#}");
        app
    })
    .await;
}
