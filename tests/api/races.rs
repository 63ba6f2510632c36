//! Requests that race each other: a retry racing its own original under
//! one `X-Idempotency-Key`, on every idempotent operation whose work has a
//! unique field (a referenceId, an email, a number), is answered as a retry
//! is (the first answer replayed, or `idempotency_key_locked`), never with
//! the `conflict` its original's unique value would give a stranger.

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
