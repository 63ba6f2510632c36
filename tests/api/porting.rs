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
    app_events
        .iter()
        .filter(|(t, d)| t.starts_with("subscription.portIn.") && d["subscriptionId"] == id)
        .map(|(t, d)| format!("{t} {}", d["portIn"]["status"].as_str().unwrap_or("-")))
        .collect()
}

async fn started(mut app: TestApp) -> TestApp {
    app.become_sandbox().await;
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
        assert_eq!(
            port_events(&events, &id),
            [
                "subscription.portIn.created PENDING",
                "subscription.portIn.updated IN_PROGRESS",
                "subscription.portIn.updated SCHEDULED",
                "subscription.portIn.completed COMPLETED"
            ]
        );
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
        assert_eq!(
            (&again.body["subscription"]["portIn"]["status"], &again.body["subscription"]["portIn"]["msisdn"]),
            (&json!("PENDING"), &json!("+46709870001"))
        );
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
        let s = app
            .call(
                "POST",
                "/subscriptions",
                Some(json!({"customerId": "rid_acme", "productOfferingId": offering(&app, "mobile-10gb"), "subscription": {"simType": "ESIM"}})),
            )
            .await;
        let plain = s.body["subscriptionId"].as_str().unwrap().to_string();
        app.call("GET", &format!("/subscriptions/{plain}/in-porting"), None).await.assert_error(404, "porting_not_found");
        for (body, field, code) in [
            (json!({"details": {"identity": SWEDE}}), "msisdn", "required"),
            (json!({"msisdn": "+46709870005", "details": {"identity": "19900101-0018"}}), "details.identity", "invalid_identity"),
            (json!({"msisdn": "+46709870005", "details": us_details()}), "details.identity", "required"),
            (json!({"msisdn": "+12127360005", "details": {"identity": SWEDE}}), "details.firstName", "required"),
            (json!({"msisdn": "+447700900123", "details": {"identity": SWEDE}}), "msisdn", "porting_country_unsupported"),
            // a body that is both forms is refused: oneOf is exactly one
            (
                json!({"msisdn": "+46709870005", "details": {"identity": SWEDE, "firstName": "Ann", "lastName": "Lee", "address": us_details()["address"]}}),
                "details",
                "ambiguous",
            ),
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
        let r = app
            .call(
                "POST",
                "/subscriptions",
                Some(json!({"customerId": "rid_acme", "productOfferingId": line["productOfferingId"], "subscription": line["subscription"]})),
            )
            .await;
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
        let events: Vec<String> =
            app.store.event_types(app.org).await.unwrap().into_iter().filter(|(_, d)| d["subscriptionId"] == id).map(|(t, _)| t).collect();
        assert!(events.ends_with(&["subscription.cancelled".to_string(), "subscription.ended".to_string()]), "{events:?}");
        let number = app.store.pool_number(app.org, "+46701000000").await.unwrap().unwrap();
        assert_eq!(number.status, switchboard::store::NumberStatus::PortedOut);
        app
    })
    .await;
}

/// A US port-in's transfer PIN and account number are write-only: given on an order line or with POST in-porting, no answer, read, event,
/// stored answer or stored row shows them (`passcodeProvided`, `accountNumberLast4` instead); the losing carrier still gets them, also after
/// details sent again without them; they are gone once the port has ended.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_port_ins_passcode_and_account_number_are_write_only() {
    each_backend(|app| async move {
        let app = started(app).await;
        const PIN: &str = "98765432";
        const ACCOUNT: &str = "ACCT-55501234";
        let mut with_secrets = us_details();
        (with_secrets["passcode"], with_secrets["accountNumber"]) = (json!(PIN), json!(ACCOUNT));
        let shows_none = |what: &str, v: &Value| {
            let text = v.to_string();
            assert!(
                !text.contains(PIN) && !text.contains(ACCOUNT) && !text.contains("\"passcode\"") && !text.contains("\"accountNumber\""),
                "{what} shows a secret: {v:#}"
            );
        };
        let shown = |details: &Value| (details["passcodeProvided"].clone(), details["accountNumberLast4"].clone());

        // on an order line: not in the order's answers or reads
        let line = json!({"type": "SUBSCRIPTION", "productOfferingId": offering(&app, "mobile-10gb"),
                          "subscription": {"simType": "ESIM", "msisdn": "+12127360002", "portIn": {"details": with_secrets}}});
        let o = app
            .call_as(
                Some(&app.key),
                "POST",
                "/orders",
                Some(json!({"customerId": "rid_acme", "lineItems": [line]})),
                &[("x-idempotency-key", "order-with-pin")],
            )
            .await;
        assert_eq!(o.status, 201, "{:#}", o.body);
        shows_none("the order's answer", &o.body);
        let order = o.body["orderId"].as_str().unwrap().to_string();
        assert_eq!(shown(&o.body["lineItems"][0]["subscription"]["portIn"]["details"]), (json!(true), json!("1234")));
        shows_none("an order read", &app.call("GET", &format!("/orders/{order}"), None).await.body);
        let r = app.call("POST", &format!("/orders/{order}/submit"), None).await;
        assert_eq!(r.status, 200, "{:#}", r.body);
        shows_none("the submission's answer", &r.body);
        let id = r.body["lineItems"][0]["createdSubscriptionId"].as_str().unwrap().to_string();

        // the carrier waits for the passcode (0002), then takes the same details sent again without it: it kept them
        let p = answered(&app, &id).await;
        assert_eq!(p["status"], "IN_PROGRESS", "{p:#}");
        assert_eq!(shown(&p["details"]), (json!(true), json!("1234")));
        let again = update(&app, &id, json!({"details": us_details()})).await;
        assert_eq!(again.status, 200, "{:#}", again.body);
        shows_none("the update's answer", &again.body);
        assert_eq!(shown(&again.body["subscription"]["portIn"]["details"]), (json!(true), json!("1234")));
        assert_eq!(answered(&app, &id).await["status"], "SCHEDULED", "the carrier got the passcode kept");
        shows_none("a subscription read", &subscription(&app, &id).await);
        // a read-only field sent is the server's to say, not the caller's
        let sent =
            update(&app, &id, json!({"details": {"firstName": "Ada", "lastName": "L", "address": us_details()["address"], "passcodeProvided": false}})).await;
        assert_eq!(sent.status, 409, "SCHEDULED takes no details: {:#}", sent.body);

        // nowhere at rest in plain: not the rows, events, stored answers or the events report
        for (what, sql) in [
            ("portings", "SELECT details FROM portings"),
            ("orders", "SELECT line_items FROM orders"),
            ("events", "SELECT data FROM events"),
            ("stored answers", "SELECT COALESCE(body, '') FROM idempotency_keys"),
        ] {
            let rows: Vec<(String,)> = sqlx::query_as(sql).fetch_all(app.store.pool()).await.unwrap();
            assert!(rows.iter().all(|(t,)| !t.contains(PIN) && !t.contains(ACCOUNT)), "{what} keep a secret");
        }
        let kept: Vec<(String,)> = sqlx::query_as("SELECT secrets FROM port_in_secrets").fetch_all(app.store.pool()).await.unwrap();
        assert_eq!(kept.len(), 1, "the porting's, the order's gone with its submission");

        // the port ends (its subscription cancelled: FAILED): its secrets go
        let r = app.call("POST", &format!("/subscriptions/{id}/cancel"), Some(json!({"force": true}))).await;
        assert_eq!(r.status, 200, "{:#}", r.body);
        app.run_jobs().await;
        assert_eq!(port_in(&app, &id).await["status"], "FAILED");
        let kept: Vec<(String,)> = sqlx::query_as("SELECT secrets FROM port_in_secrets").fetch_all(app.store.pool()).await.unwrap();
        assert!(kept.is_empty(), "an ended port keeps its secrets");
        app
    })
    .await;
}

/// What was stored in plain before the secrets were write-only is sealed apart (a port not ended) or erased (events, stored answers), once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn port_in_secrets_stored_in_plain_before_are_sealed_or_erased_once() {
    each_backend(|app| async move {
        let app = started(app).await;
        let id = ported(&app, "+12127360004", us_details()).await;
        let porting = port_in(&app, &id).await["portingId"].as_str().unwrap().to_string();
        // as an older version kept them
        let mut plain = us_details();
        (plain["passcode"], plain["accountNumber"]) = (json!("11112222"), json!("OLD-0000777"));
        sqlx::query("UPDATE portings SET details = $1").bind(plain.to_string()).execute(app.store.pool()).await.unwrap();
        let (data,): (String,) =
            sqlx::query_as("SELECT data FROM events WHERE event_type = 'subscription.portIn.created'").fetch_one(app.store.pool()).await.unwrap();
        let mut data: Value = serde_json::from_str(&data).unwrap();
        data["portIn"]["details"] = plain.clone();
        sqlx::query("UPDATE events SET data = $1 WHERE event_type = 'subscription.portIn.created'")
            .bind(data.to_string())
            .execute(app.store.pool())
            .await
            .unwrap();
        sqlx::query("DELETE FROM data_fixes").execute(app.store.pool()).await.unwrap();
        app.store.seal_plain_port_in_details(app.clock.now()).await.unwrap();
        for sql in ["SELECT details FROM portings", "SELECT data FROM events"] {
            let rows: Vec<(String,)> = sqlx::query_as(sql).fetch_all(app.store.pool()).await.unwrap();
            assert!(rows.iter().all(|(t,)| !t.contains("11112222") && !t.contains("OLD-0000777")), "{sql}: {rows:?}");
        }
        assert_eq!(port_in(&app, &id).await["details"]["accountNumberLast4"], "0777");
        let kept = app.store.port_in_secrets(app.org, &porting).await.unwrap();
        assert_eq!(kept, Some(json!({"passcode": "11112222", "accountNumber": "OLD-0000777"})), "the open port keeps them, sealed apart");
        // once: a second start changes nothing
        sqlx::query("UPDATE portings SET details = $1").bind(plain.to_string()).execute(app.store.pool()).await.unwrap();
        app.store.seal_plain_port_in_details(app.clock.now()).await.unwrap();
        let (details,): (String,) = sqlx::query_as("SELECT details FROM portings").fetch_one(app.store.pool()).await.unwrap();
        assert!(details.contains("11112222"), "the fix ran twice");
        app
    })
    .await;
}

/// Eight callers at once give a port-in's secrets, with POST in-porting and by changing an open order's line: each is answered (200, or
/// 409 for one that another moved first), never a 500, and the secrets kept are those of the one whose details stand.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn eight_callers_giving_port_in_secrets_at_once_leave_the_standing_ones_kept() {
    each_backend(|app| async move {
        let app = started(app).await;
        let given = |i: usize| {
            let mut d = us_details();
            (d["firstName"], d["passcode"], d["accountNumber"]) = (json!(format!("Caller{i}")), json!(format!("1000000{i}")), json!(format!("ACCT-000{i}")));
            d
        };
        let kept_are = |i: usize| json!({"passcode": format!("1000000{i}"), "accountNumber": format!("ACCT-000{i}")});
        let caller_of = |details: &Value| details["firstName"].as_str().and_then(|n| n.strip_prefix("Caller")).and_then(|i| i.parse::<usize>().ok());
        let answered_each = |answers: &[Raw]| {
            for r in answers {
                assert!(r.status == 200 || r.status == 409, "{} {:#}", r.status, r.body);
            }
            assert!(answers.iter().any(|r| r.status == 200), "none of eight got through");
        };

        // the porting's: POST in-porting while it is PENDING
        let id = ported(&app, "+12127360006", us_details()).await;
        let porting = port_in(&app, &id).await["portingId"].as_str().unwrap().to_string();
        let answers = futures::future::join_all((0..8).map(|i| update(&app, &id, json!({"details": given(i)})))).await;
        answered_each(&answers);
        let standing = caller_of(&port_in(&app, &id).await["details"]).expect("details of one of the eight");
        assert_eq!(app.store.port_in_secrets(app.org, &porting).await.unwrap(), Some(kept_are(standing)));

        // an open order's line: PUT /orders/{id} with the line changed
        let line = |details: Value| {
            json!({"type": "SUBSCRIPTION", "productOfferingId": offering(&app, "mobile-10gb"),
                                           "subscription": {"simType": "ESIM", "msisdn": "+12127360008", "portIn": {"details": details}}})
        };
        let o = app.call("POST", "/orders", Some(json!({"customerId": "rid_acme", "lineItems": [line(us_details())]}))).await;
        assert_eq!(o.status, 201, "{:#}", o.body);
        let order = o.body["orderId"].as_str().unwrap().to_string();
        let path = format!("/orders/{order}");
        let answers = futures::future::join_all((0..8).map(|i| app.call("PUT", &path, Some(json!({"lineItems": [line(given(i))]}))))).await;
        answered_each(&answers);
        let read = app.call("GET", &path, None).await.body;
        let standing = caller_of(&read["lineItems"][0]["subscription"]["portIn"]["details"]).expect("details of one of the eight");
        let key = format!("order:{order}:+12127360008");
        assert_eq!(app.store.port_in_secrets(app.org, &key).await.unwrap(), Some(kept_are(standing)));
        let rows: Vec<(String,)> = sqlx::query_as("SELECT id FROM port_in_secrets WHERE id LIKE 'order:%'").fetch_all(app.store.pool()).await.unwrap();
        assert_eq!(rows, vec![(key,)], "one line, one set of secrets");
        app
    })
    .await;
}
