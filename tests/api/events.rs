//! The event log: GET /events and /events/{eventId} show each recorded
//! event as a delivery carries it, in the organisation's webhook revision
//! (auk's order payloads with their major-unit twins), filtered by type and
//! time, paged, for the organisation's key alone.

use crate::harness::*;
use crate::orders::{offering, setup};
use serde_json::{Value, json};

async fn log(app: &TestApp, query: &str) -> Vec<Value> {
    let r = app.call("GET", &format!("/events{query}"), None).await;
    assert_eq!(r.status, 200, "{:#}", r.body);
    r.body["items"].as_array().unwrap().clone()
}

fn types(items: &[Value]) -> Vec<&str> {
    items.iter().map(|e| e["type"].as_str().unwrap()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_log_in_the_webhook_revision_filtered_and_paged() {
    each_backend(|app| async move {
        let customer = setup(&app).await;
        let start = app.clock.now();
        app.clock.advance(chrono::Duration::hours(1));
        let line =
            json!({"type": "SUBSCRIPTION", "productOfferingId": offering(&app, "mobile-10gb"), "subscription": {"simType": "ESIM", "msisdn": "+46701234567"}});
        let order = app.call("POST", "/orders", Some(json!({"customerId": customer, "lineItems": [line]}))).await;
        assert_eq!(order.status, 201, "{:#}", order.body);
        app.clock.advance(chrono::Duration::hours(1));
        let renamed = app.call("PUT", &format!("/customers/{customer}"), Some(json!({"name": "Acme Sverige AB"}))).await;
        assert_eq!(renamed.status, 200);

        // oldest first, in the oldest supported revision until the integrator moves it
        let all = log(&app, "").await;
        assert_eq!(types(&all), ["customer.created", "order.created", "customer.updated"]);
        // (the test clock starts before auk retires: `TEST_START`)
        assert!(all.iter().all(|e| e["apiRevision"] == AUK), "{all:#?}");
        assert_eq!(all[0]["data"]["customerId"], customer.as_str());
        assert_eq!(all[2]["data"]["name"], "Acme Sverige AB");
        let order_event = all[1].clone();
        assert_eq!(order_event["data"]["orderId"], order.body["orderId"]);
        assert_eq!(order_event["data"]["lineItems"][0]["pricing"]["total"], 248.75, "auk carries the major-unit twins: {order_event:#}");

        // the request's revision does not matter: the organisation's webhook revision does
        let auk = app.auk_with(&app.key).event_list(None, None, None, None, None, None).await.unwrap().into_inner();
        assert_eq!(json_of(&auk.items), json!(all));
        switchboard::domain::webhooks::revision::set(&app.store, app.org, BULLFINCH, app.clock.now().date_naive()).await.unwrap();
        let moved = log(&app, "?type=order.created").await;
        assert_eq!(moved.len(), 1);
        assert_eq!(moved[0]["apiRevision"], BULLFINCH);
        let pricing = &moved[0]["data"]["lineItems"][0]["pricing"];
        assert!(pricing.get("total").is_none(), "{pricing:#}");
        assert_eq!(pricing["totalMinor"], 24875);

        // filters: types, and a window of time (each bound exclusive)
        assert_eq!(types(&log(&app, "?type=customer.created&type=customer.updated").await), ["customer.created", "customer.updated"]);
        let t = |h: i64| (start + chrono::Duration::minutes(h * 60 + 30)).to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
        assert_eq!(types(&log(&app, &format!("?createdAfter={}", t(0))).await), ["order.created", "customer.updated"]);
        assert_eq!(types(&log(&app, &format!("?createdBefore={}", t(0))).await), ["customer.created"]);
        assert_eq!(types(&log(&app, &format!("?createdAfter={}&createdBefore={}", t(0), t(1))).await), ["order.created"]);
        app.call("GET", "/events?createdAfter=yesterday", None).await.assert_error(400, "validation_failed");
        app.call("GET", "/events?type=order.shipped", None).await.assert_error(400, "validation_failed");
        // a type of our own filters too (none of these happened here)
        assert_eq!(types(&log(&app, "?type=invoice.paid&type=payment_link.completed").await), Vec::<&str>::new());

        // pages
        let first = app.call("GET", "/events?limit=2", None).await;
        assert_eq!(types(first.body["items"].as_array().unwrap()), ["customer.created", "order.created"]);
        let next = first.body["pagination"]["nextCursor"].as_str().unwrap();
        let second = app.call("GET", &format!("/events?limit=2&cursor={next}"), None).await;
        assert_eq!(types(second.body["items"].as_array().unwrap()), ["customer.updated"]);
        assert!(second.body["pagination"]["nextCursor"].is_null());

        // one event, through the client, as listed
        let id: uuid::Uuid = all[1]["eventId"].as_str().unwrap().parse().unwrap();
        let viewed = app.bullfinch().event_view(&id).await.unwrap().into_inner();
        assert_eq!(json_of(&viewed), moved[0]);
        app.call("GET", &format!("/events/{}", uuid::Uuid::new_v4()), None).await.assert_error(404, "event_not_found");
        app
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_key_alone_reads_its_own_organisations_log() {
    each_backend(|app| async move {
        let c = app.call("POST", "/customers", Some(json!({"customerType": "BUSINESS", "name": "Acme", "contact": {}}))).await;
        let customer = c.body["customerId"].as_str().unwrap();
        app.call("POST", "/users", Some(json!({"name": "Anna", "email": "anna@acme.example", "customerId": customer, "role": "ADMIN"}))).await;
        let all = log(&app, "").await;
        let id = all[0]["eventId"].as_str().unwrap().to_string();

        let read_only = app.new_key(app.org, None, true).await;
        assert_eq!(app.call_as(Some(&read_only), "GET", &format!("/events/{id}"), None, &[]).await.status, 200);
        let token = app.login("anna@acme.example", Some(&app.key)).await;
        let auth = format!("Bearer {token}");
        let bearer = [("Authorization", auth.as_str())];
        app.call_as(Some(&app.key), "GET", "/events", None, &bearer).await.assert_error(403, "insufficient_role");
        app.call_as(Some(&app.key), "GET", &format!("/events/{id}"), None, &bearer).await.assert_error(403, "insufficient_role");

        let (_, other) = app.other_org().await;
        let theirs = app.call_as(Some(&other), "GET", "/events", None, &[]).await;
        assert_eq!(theirs.body["items"], json!([]));
        app.call_as(Some(&other), "GET", &format!("/events/{id}"), None, &[]).await.assert_error(404, "event_not_found");
        app
    })
    .await;
}

/// `after` follows the log in the order recorded: `end` says where it
/// ends, an eventId goes on after it, `start` from the beginning; a
/// position of no event of the organisation, a bad one, or one given with
/// `cursor` is refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_log_followed_in_the_order_recorded() {
    each_backend(|app| async move {
        let follow = |after: String| {
            let app = &app;
            async move {
                let r = app.call("GET", &format!("/events?after={after}&limit=2"), None).await;
                assert_eq!(r.status, 200, "{:#}", r.body);
                (
                    types(r.body["items"].as_array().unwrap()).into_iter().map(String::from).collect::<Vec<_>>(),
                    r.body["pagination"]["nextCursor"].as_str().unwrap().to_string(),
                )
            }
        };
        // an empty log ends at its start
        assert_eq!(follow("end".into()).await, (vec![], "start".to_string()));
        let customer = setup(&app).await;
        let renamed = app.call("PUT", &format!("/customers/{customer}"), Some(json!({"name": "Acme Sverige AB"}))).await;
        assert_eq!(renamed.status, 200);
        app.run_jobs().await;
        let (first, next) = follow("start".into()).await;
        assert_eq!(first, ["customer.created", "customer.updated"]);
        assert_eq!(follow(next.clone()).await, (vec![], next.clone()), "nothing new: the same position");
        assert_eq!(follow("end".into()).await.1, next, "the end is the last event");
        app.call("POST", "/customers", Some(json!({"customerType": "CONSUMER", "name": "Maria", "contact": {}}))).await;
        app.run_jobs().await;
        assert_eq!(follow(next).await.0, ["customer.created"]);

        for (query, status, code) in [
            (format!("after={}", uuid::Uuid::new_v4()), 404, "event_not_found"),
            ("after=latest".to_string(), 400, "validation_failed"),
            ("after=start&cursor=abc".to_string(), 400, "validation_failed"),
        ] {
            app.call("GET", &format!("/events?{query}"), None).await.assert_error(status, code);
        }
        app
    })
    .await;
}
