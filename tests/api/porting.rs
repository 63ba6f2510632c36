//! Number porting on both databases and revisions, in a sandbox
//! organisation whose clock is advanced: a port-in asked for by an order
//! line runs on a temporary pool number, is submitted to the sandbox
//! losing carrier, answered a few minutes later (every row of its table),
//! and completes on its working day at 06:00; details are updated while
//! PENDING or IN_PROGRESS (rule 3) and refused after; each country's form
//! is checked; a cancelled subscription's port-in fails; a port-out
//! cancels its subscription; another organisation sees nothing.

use crate::harness::*;
use crate::invoices::advance;
use crate::numbers::pool;
use crate::orders::{offering, setup};
use serde_json::{Value, json};

const SWEDE: &str = "19900101-0017";

fn us_details() -> Value {
    json!({"firstName": "Ada", "lastName": "Lovelace", "address": {"street1": "1 Main St", "city": "New York", "zip": "10001", "country": "US", "state": "NY"}})
}

/// Submits a Mobile 10 GB line of Acme bringing `msisdn` with `details`;
/// the new subscription's id.
async fn ported(app: &TestApp, msisdn: &str, details: Value) -> String {
    let line = json!({"type": "SUBSCRIPTION", "productOfferingId": offering(app, "mobile-10gb"),
                      "subscription": {"simType": "ESIM", "msisdn": msisdn, "portIn": {"details": details}}});
    let r = app.call("POST", "/orders", Some(json!({"customerId": "rid_acme", "lineItems": [line]}))).await;
    assert_eq!(r.status, 201, "{:#}", r.body);
    let r = app.call("POST", &format!("/orders/{}/submit", r.body["orderId"].as_str().unwrap()), None).await;
    assert_eq!(r.status, 200, "{:#}", r.body);
    assert_eq!(r.body["lineItems"][0]["subscription"]["msisdn"], msisdn, "the line shows the number brought");
    r.body["lineItems"][0]["createdSubscriptionId"].as_str().unwrap().to_string()
}

async fn subscription(app: &TestApp, id: &str) -> Value {
    app.call("GET", &format!("/subscriptions/{id}"), None).await.body
}

async fn port_in(app: &TestApp, id: &str) -> Value {
    let r = app.call("GET", &format!("/subscriptions/{id}/in-porting"), None).await;
    assert_eq!(r.status, 200, "{:#}", r.body);
    r.body
}

async fn update(app: &TestApp, id: &str, body: Value) -> Raw {
    app.call("POST", &format!("/subscriptions/{id}/in-porting"), Some(body)).await
}

/// Moves the organisation's clock `minutes` on and runs what falls due.
async fn later(app: &TestApp, minutes: i64) {
    let now: chrono::DateTime<chrono::Utc> = app.call("GET", "/sandbox/clock", None).await.body["now"].as_str().unwrap().parse().unwrap();
    advance(app, &(now + chrono::Duration::minutes(minutes)).to_rfc3339()).await;
}

/// Submits what is PENDING, then lets the losing carrier's few minutes
/// pass: `id`'s port-in as answered.
async fn answered(app: &TestApp, id: &str) -> Value {
    app.run_jobs().await;
    later(app, 5).await;
    port_in(app, id).await
}

fn port_events(app_events: &[(String, Value)], id: &str) -> Vec<String> {
    app_events.iter().filter(|(t, d)| t.starts_with("subscription.portIn.") && d["subscriptionId"] == id).map(|(t, d)| format!("{t} {}", d["portIn"]["status"].as_str().unwrap_or("-"))).collect()
}

async fn started(mut app: TestApp) -> TestApp {
    app.into_sandbox().await;
    app.stop_jobs();
    app.without_dunning().await;
    setup(&app).await;
    pool(&app, "+46701000000..+46701000009", "CELL").await;
    app
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_port_in_is_submitted_answered_and_completed_on_its_day() {
    each_backend(|app| async move {
        let app = started(app).await;
        // Monday 2026-11-02 09:00: accepted for the next working day
        let id = ported(&app, "+46709870000", json!({"identity": SWEDE})).await;
        let s = subscription(&app, &id).await;
        assert_eq!((&s["msisdn"], &s["portIn"]["status"], &s["portIn"]["direction"]), (&json!("+46701000000"), &json!("PENDING"), &json!("INBOUND")), "{s:#}");
        let shown = json_of(&app.bullfinch().porting_in_view(&id.parse().unwrap()).await.unwrap().into_inner());
        assert_eq!((&shown["msisdn"], &shown["details"]), (&json!("+46709870000"), &json!({"identity": SWEDE})));
        app.run_jobs().await;
        assert_eq!(port_in(&app, &id).await["status"], "IN_PROGRESS", "submitted to the losing carrier");
        later(&app, 5).await;
        let p = port_in(&app, &id).await;
        assert_eq!((&p["status"], &p["scheduledAt"]), (&json!("SCHEDULED"), &json!("2026-11-03")), "{p:#}");
        // rule 3: details are not updated once accepted
        update(&app, &id, json!({"details": {"identity": SWEDE}})).await.assert_error(409, "porting_state_conflict");
        advance(&app, "2026-11-03T06:00:00Z").await;
        let s = subscription(&app, &id).await;
        assert_eq!((&s["msisdn"], &s["portIn"]["status"]), (&json!("+46709870000"), &json!("COMPLETED")), "{s:#}");
        let events = app.store.event_types(app.org).await.unwrap();
        assert_eq!(port_events(&events, &id), ["subscription.portIn.created PENDING", "subscription.portIn.updated IN_PROGRESS",
                                              "subscription.portIn.updated SCHEDULED", "subscription.portIn.completed COMPLETED"]);
        // the temporary number is back in the pool
        let lease = app.call("POST", "/inventory/lease-numbers", Some(json!({"types": ["CELL"], "count": 1}))).await;
        assert_eq!(lease.body["numbers"][0]["msisdn"], "+46701000000", "{:#}", lease.body);
        // the older revision reads it too; another organisation does not
        let auk = app.call_as(Some(&app.key), "GET", &format!("/subscriptions/{id}/in-porting"), None, &[("Api-Revision", AUK)]).await;
        assert_eq!((auk.status, &auk.body["status"]), (200, &json!("COMPLETED")));
        let (_, theirs) = app.other_org().await;
        app.call_as(Some(&theirs), "GET", &format!("/subscriptions/{id}/in-porting"), None, &[]).await.assert_error(404, "subscription_not_found");
        app
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sandbox_carrier_answers_by_the_number_and_details_are_checked() {
    each_backend(|app| async move {
        let app = started(app).await;
        // 0001: rejected; a new port-in after it starts over
        let rejected = ported(&app, "+46709870001", json!({"identity": SWEDE})).await;
        let p = answered(&app, &rejected).await;
        assert_eq!((&p["status"], &p["failureReason"]), (&json!("FAILED"), &json!("The identity does not match the losing carrier's records.")));
        let again = update(&app, &rejected, json!({"details": {"identity": "900101-0017"}})).await;
        assert_eq!(again.status, 200, "{:#}", again.body);
        assert_eq!((&again.body["subscription"]["portIn"]["status"], &again.body["subscription"]["portIn"]["msisdn"]), (&json!("PENDING"), &json!("+46709870001")));
        assert_ne!(again.body["subscription"]["portIn"]["portingId"], p["portingId"], "a new port-in");

        // 0002 (Sweden): waits for the identity again, then accepts
        let waiting = ported(&app, "+46709870002", json!({"identity": SWEDE})).await;
        let p = answered(&app, &waiting).await;
        assert_eq!((&p["status"], &p["waitingFor"]), (&json!("IN_PROGRESS"), &json!("The losing carrier asks for the identity to be submitted again.")));
        // (through the generated client)
        let body = serde_json::from_value(json!({"details": {"identity": SWEDE}})).unwrap();
        let updated = json_of(&app.bullfinch().porting_in_start(&waiting.parse().unwrap(), None, &body).await.unwrap().into_inner());
        assert_eq!(updated["subscription"]["portIn"]["status"], "PENDING", "{updated:#}");
        assert_eq!(answered(&app, &waiting).await["status"], "SCHEDULED");

        // 0003: five working days ahead (from Monday 2026-11-02: Monday 2026-11-09)
        let slow = ported(&app, "+46709870003", json!({"identity": "556036-0793"})).await;
        assert_eq!(answered(&app, &slow).await["scheduledAt"], "2026-11-09");

        // 0002 (US): waits for the passcode; an update with it is accepted
        let us = ported(&app, "+12127360002", us_details()).await;
        assert_eq!(answered(&app, &us).await["waitingFor"], "The losing carrier waits for the account's passcode.");
        let mut with_passcode = us_details();
        with_passcode["passcode"] = json!("4321");
        assert_eq!(update(&app, &us, json!({"details": with_passcode})).await.status, 200);
        assert_eq!(answered(&app, &us).await["status"], "SCHEDULED");

        // each country's form, and only those countries
        let s = app.call("POST", "/subscriptions", Some(json!({"customerId": "rid_acme", "productOfferingId": offering(&app, "mobile-10gb"), "subscription": {"simType": "ESIM"}}))).await;
        let plain = s.body["subscriptionId"].as_str().unwrap().to_string();
        app.call("GET", &format!("/subscriptions/{plain}/in-porting"), None).await.assert_error(404, "porting_not_found");
        for (body, field, code) in [
            (json!({"details": {"identity": SWEDE}}), "msisdn", "required"),
            (json!({"msisdn": "+46709870005", "details": {"identity": "19900101-0018"}}), "details.identity", "invalid_identity"),
            (json!({"msisdn": "+46709870005", "details": us_details()}), "details.identity", "required"),
            (json!({"msisdn": "+12127360005", "details": {"identity": SWEDE}}), "details.firstName", "required"),
            (json!({"msisdn": "+447700900123", "details": {"identity": SWEDE}}), "msisdn", "porting_country_unsupported"),
        ] {
            let r = update(&app, &plain, body.clone()).await;
            r.assert_error(400, "validation_failed");
            assert!(r.details().contains(&(field.to_string(), code.to_string())), "{body}: {:#}", r.body);
        }
        update(&app, &plain, json!({"msisdn": "+46701000001", "details": {"identity": SWEDE}})).await.assert_error(400, "validation_failed");
        update(&app, &plain, json!({"msisdn": "+46709870002", "details": {"identity": SWEDE}})).await.assert_error(409, "msisdn_in_use");

        // a cancelled subscription's port-in fails at its next step
        let dropped = ported(&app, "+46709870007", json!({"identity": SWEDE})).await;
        let r = app.call("POST", &format!("/subscriptions/{dropped}/cancel"), Some(json!({}))).await;
        assert_eq!(r.status, 200, "{:#}", r.body);
        app.run_jobs().await;
        assert_eq!(port_in(&app, &dropped).await["failureReason"], "The subscription was cancelled.");
        app
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_port_out_cancels_its_subscription_on_its_day() {
    each_backend(|app| async move {
        let app = started(app).await;
        let line = json!({"type": "SUBSCRIPTION", "productOfferingId": offering(&app, "mobile-10gb"), "subscription": {"simType": "ESIM"}});
        let r = app.call("POST", "/subscriptions", Some(json!({"customerId": "rid_acme", "productOfferingId": line["productOfferingId"], "subscription": line["subscription"]}))).await;
        let id = r.body["subscriptionId"].as_str().unwrap().to_string();
        let r = app.call("POST", &format!("/subscriptions/{id}/activate"), Some(json!({}))).await;
        assert_eq!(r.status, 200, "{:#}", r.body);
        let command = switchboard::admin::sandbox::SandboxCommand::PortOut { org: app.org, msisdn: "+46701000000".into() };
        let out = switchboard::admin::sandbox::run(&app.store, &app.clock, command).await.unwrap();
        assert_eq!((&out["direction"], &out["status"], &out["scheduledAt"]), (&json!("OUTBOUND"), &json!("SCHEDULED"), &json!("2026-11-03")), "{out:#}");
        let missing = switchboard::admin::sandbox::SandboxCommand::PortOut { org: app.org, msisdn: "+46701000009".into() };
        assert!(switchboard::admin::sandbox::run(&app.store, &app.clock, missing).await.is_err(), "no live subscription has it");
        advance(&app, "2026-11-03T06:00:00Z").await;
        let s = subscription(&app, &id).await;
        assert_eq!((&s["status"], &s["statusReason"]), (&json!("CANCELLED"), &json!("The number was ported out to another operator.")), "{s:#}");
        let events: Vec<String> = app.store.event_types(app.org).await.unwrap().into_iter().filter(|(_, d)| d["subscriptionId"] == id).map(|(t, _)| t).collect();
        assert!(events.ends_with(&["subscription.cancelled".to_string(), "subscription.ended".to_string()]), "{events:?}");
        let number = app.store.pool_number(app.org, "+46701000000").await.unwrap().unwrap();
        assert_eq!(number.status, switchboard::store::NumberStatus::PortedOut);
        app
    })
    .await;
}
