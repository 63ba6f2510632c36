//! X-Idempotency-Key: replay, mismatch, lock, what is stored and what is
//! not, lifetime, scope, and 50 concurrent identical requests (on SQLite,
//! and on two instances over one PostgreSQL database).

use crate::harness::*;
use bullfinch::types::{CreateCustomerRequest, CustomerCreateXIdempotencyKey};
use serde_json::{Value, json};

fn customer(name: &str) -> Value {
    json!({"customerType": "BUSINESS", "name": name, "contact": {"email": "office@acme.example"}})
}

fn typed(v: Value) -> CreateCustomerRequest {
    serde_json::from_value(v).unwrap()
}

fn key(k: &str) -> CustomerCreateXIdempotencyKey {
    k.parse().unwrap()
}

/// A raw POST /customers with an idempotency key; the whole answer.
async fn post(base: &str, api_key: &str, idem: &str, body: &Value, extra: &[(&str, &str)]) -> (u16, reqwest::header::HeaderMap, String) {
    let mut req = TestApp::http(Some(api_key)).post(format!("{base}/customers")).header("x-idempotency-key", idem).json(body);
    for (k, v) in extra {
        req = req.header(*k, *v);
    }
    let r = req.send().await.unwrap();
    let (status, headers) = (r.status().as_u16(), r.headers().clone());
    (status, headers, r.text().await.unwrap())
}

async fn customer_count(app: &TestApp) -> usize {
    app.call("GET", "/customers", None).await.body["items"].as_array().unwrap().len()
}

fn internal_code(body: &str) -> String {
    serde_json::from_str::<Value>(body).unwrap()["internalCode"].as_str().unwrap_or("").to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retry_replays_the_first_answer_byte_for_byte() {
    each_backend(|app| async move {
        let client = app.bullfinch();
        let first = client.customer_create(Some(&key("k-1")), &typed(customer("Acme AB"))).await.unwrap();
        assert_eq!(first.status().as_u16(), 201);
        assert!(first.headers().get("idempotent-replayed").is_none(), "the first answer is no replay");
        let again = client.customer_create(Some(&key("k-1")), &typed(customer("Acme AB"))).await.unwrap();
        assert_eq!(again.headers()["idempotent-replayed"], "true");
        assert_eq!(again.headers()["api-revision"], first.headers()["api-revision"]);
        assert_eq!(again.headers()["content-type"], first.headers()["content-type"]);
        assert_eq!(*again, *first, "same customer, same id");
        // byte for byte, raw
        let (s1, _, b1) = post(&app.base, &app.key, "k-2", &customer("Globex"), &[]).await;
        let (s2, h2, b2) = post(&app.base, &app.key, "k-2", &customer("Globex"), &[]).await;
        assert_eq!((s1, &b1), (s2, &b2));
        assert_eq!(h2["idempotent-replayed"], "true");
        assert_eq!(customer_count(&app).await, 2, "each key executed once");
        let created = app.store.event_types(app.org).await.unwrap().iter().filter(|(t, _)| t == "customer.created").count();
        assert_eq!(created, 2, "one event per execution");
        app
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_reused_on_another_request_is_a_mismatch() {
    each_backend(|app| async move {
        let body = customer("Acme AB");
        assert_eq!(post(&app.base, &app.key, "k", &body, &[]).await.0, 201);
        let other_key = app.new_key(app.org, None, false).await;
        let variants: [(&str, Value, &[(&str, &str)]); 3] = [
            ("a different body", customer("Acme Sverige AB"), &[]),
            ("another revision", body.clone(), &[("api-revision", AUK)]),
            ("another caller", body.clone(), &[]),
        ];
        for (why, b, extra) in variants {
            let as_key = if why == "another caller" { other_key.as_str() } else { app.key.as_str() };
            let (status, _, text) = post(&app.base, as_key, "k", &b, extra).await;
            assert_eq!((status, internal_code(&text).as_str()), (409, "idempotency_key_mismatch"), "{why}: {text}");
        }
        // another path with the same key: POST /users
        let r = app
            .call_as(
                Some(&app.key),
                "POST",
                "/users",
                Some(json!({"name": "A", "email": "a@acme.example", "customerId": "rid_x"})),
                &[("x-idempotency-key", "k")],
            )
            .await;
        r.assert_error(409, "idempotency_key_mismatch");
        assert_eq!(customer_count(&app).await, 1);
        app
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn business_refusals_are_stored_and_refusals_before_executing_are_not() {
    each_backend(|app| async move {
        let mut taken = customer("Acme AB");
        taken["referenceId"] = json!("crm-1");
        assert_eq!(post(&app.base, &app.key, "first", &taken, &[]).await.0, 201);
        // a business-rule 409 is stored: it replays even once the rule passes
        let (status, _, text) = post(&app.base, &app.key, "dup", &taken, &[]).await;
        assert_eq!((status, internal_code(&text).as_str()), (409, "reference_id_taken"));
        let id = app.call("GET", "/customers/rid_crm-1", None).await.body["customerId"].as_str().unwrap().to_string();
        assert_eq!(app.call("PUT", &format!("/customers/{id}"), Some(json!({"referenceId": "crm-2"}))).await.status, 200);
        let (status, headers, again) = post(&app.base, &app.key, "dup", &taken, &[]).await;
        assert_eq!((status, &again, &headers["idempotent-replayed"]), (409, &text, &"true".parse().unwrap()));

        // refused before executing: the key stays unused
        let (status, _, text) = post(&app.base, "sbk_wrong", "later", &customer("Globex"), &[]).await;
        assert_eq!((status, internal_code(&text).as_str()), (401, "invalid_api_key"));
        let (status, _, text) = post(&app.base, &app.key, "later", &json!({"name": ""}), &[]).await;
        assert_eq!((status, internal_code(&text).as_str()), (400, "validation_failed"));
        let (status, headers, _) = post(&app.base, &app.key, "later", &customer("Globex"), &[]).await;
        assert_eq!(status, 201, "the key was not used up by the refused requests");
        assert!(headers.get("idempotent-replayed").is_none());
        // too long a key is refused
        let long = "k".repeat(257);
        let (status, _, text) = post(&app.base, &app.key, &long, &customer("Initech"), &[]).await;
        assert_eq!((status, internal_code(&text).as_str()), (400, "validation_failed"));
        let (status, _, _) = post(&app.base, &app.key, &"k".repeat(256), &customer("Initech"), &[]).await;
        assert_eq!(status, 201);
        app
    })
    .await;
}

/// A failure on the server's side (the database refusing mid-way) is not
/// stored and commits nothing: the retry executes, once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_failure_is_not_stored_and_its_retry_executes() {
    each_backend(|app| async move {
        let mut body = customer("Acme AB");
        body["referenceId"] = json!("crm-9");
        let rename = |from: &str, to: &str| format!("ALTER TABLE {from} RENAME TO {to}");
        sqlx::query(sqlx::AssertSqlSafe(rename("customers", "customers_away"))).execute(app.store.pool()).await.unwrap();
        let (status, _, text) = post(&app.base, &app.key, "fails", &body, &[]).await;
        sqlx::query(sqlx::AssertSqlSafe(rename("customers_away", "customers"))).execute(app.store.pool()).await.unwrap();
        assert_eq!((status, internal_code(&text).as_str()), (500, "internal_error"), "{text}");
        let (status, headers, text) = post(&app.base, &app.key, "fails", &body, &[]).await;
        assert_eq!(status, 201, "{text}");
        assert!(headers.get("idempotent-replayed").is_none());
        assert_eq!(post(&app.base, &app.key, "fails", &body, &[]).await.0, 201, "then replayed");
        assert_eq!(customer_count(&app).await, 1);
        app
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keys_live_24_hours_per_organisation() {
    each_backend(|app| async move {
        let body = customer("Acme AB");
        assert_eq!(post(&app.base, &app.key, "day", &body, &[]).await.0, 201);
        // another organisation's key space is its own
        let (_, theirs) = app.other_org().await;
        let (status, headers, _) = post(&app.base, &theirs, "day", &body, &[]).await;
        assert_eq!(status, 201);
        assert!(headers.get("idempotent-replayed").is_none());
        // 23 hours later: still a replay; 24 hours after first use: a new operation
        app.clock.advance(chrono::Duration::hours(23));
        let (_, headers, _) = post(&app.base, &app.key, "day", &body, &[]).await;
        assert_eq!(headers["idempotent-replayed"], "true");
        app.clock.advance(chrono::Duration::hours(1));
        let (status, headers, _) = post(&app.base, &app.key, "day", &body, &[]).await;
        assert_eq!(status, 201);
        assert!(headers.get("idempotent-replayed").is_none(), "expired keys start a new operation");
        assert_eq!(customer_count(&app).await, 2);
        app
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifty_concurrent_identical_requests_execute_once() {
    each_backend_with(
        |s| s.per_key_per_second = 10_000,
        |app| async move {
            // on PostgreSQL, half of the requests go to a second instance
            let second = match app.backend {
                Backend::Postgres => Some(app.second_instance().await),
                Backend::Sqlite => None,
            };
            let bases = [app.base.clone(), second.as_ref().map_or(app.base.clone(), |(_, b)| b.clone())];
            let body = typed(customer("Race AB"));
            let tasks: Vec<_> = (0..50)
                .map(|i| {
                    let client = bullfinch_client(&bases[i % 2]).api_key(&app.key).build();
                    let body = body.clone();
                    tokio::spawn(async move { client.customer_create(Some(&key("race")), &body).await })
                })
                .collect();
            let mut first = vec![];
            let mut replays = vec![];
            let mut locked = 0;
            for t in tasks {
                match t.await.unwrap() {
                    Ok(r) if r.headers().get("idempotent-replayed").is_some() => replays.push(r.into_inner()),
                    Ok(r) => first.push(r.into_inner()),
                    Err(e) => {
                        assert_refused(&e, 409, "idempotency_key_locked");
                        locked += 1;
                    }
                }
            }
            assert_eq!(first.len(), 1, "exactly one execution ({} replays, {locked} locked)", replays.len());
            assert!(replays.iter().all(|r| *r == first[0]), "every replay is the first answer");
            assert_eq!(first.len() + replays.len() + locked, 50);
            eprintln!("{:?}: 1 execution, {} replays, {locked} locked", app.backend, replays.len());
            assert_eq!(customer_count(&app).await, 1);
            if let Some((running, _)) = second {
                running.close().await.unwrap();
            }
            app
        },
    )
    .await;
}
