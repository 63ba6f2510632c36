//! The subscription lifecycle on both revisions and both databases: every
//! move of the transition table and its refusals (each 409 naming the
//! state), the events each records (equal to a read of the subscription),
//! SIMs and the sandbox network's refusals, a delayed activation and a
//! cancellation taking effect on the clock, and who may make which move.

use crate::harness::*;
use crate::orders::{offering, setup};
use serde_json::{Value, json};

/// Submits one SUBSCRIPTION line for Acme; the new subscription's id.
pub async fn new_subscription(app: &TestApp, offering_key: &str, sim: &str, msisdn: &str, binding: bool) -> String {
    let line = json!({"type": "SUBSCRIPTION", "productOfferingId": offering(app, offering_key), "bindingContract": binding,
                      "subscription": {"simType": sim, "msisdn": msisdn}});
    let r = app.call("POST", "/orders", Some(json!({"customerId": "rid_acme", "lineItems": [line]}))).await;
    assert_eq!(r.status, 201, "{:#}", r.body);
    let r = app.call("POST", &format!("/orders/{}/submit", r.body["orderId"].as_str().unwrap()), None).await;
    assert_eq!(r.status, 200, "{:#}", r.body);
    r.body["lineItems"][0]["createdSubscriptionId"].as_str().unwrap().to_string()
}

/// POST /subscriptions/{id}/{op} with `body`, by the key alone.
async fn mv(app: &TestApp, id: &str, op: &str, body: Value) -> Raw {
    app.call("POST", &format!("/subscriptions/{id}/{op}"), Some(body)).await
}

/// A move sent with no body at all.
async fn mv_bodiless(app: &TestApp, id: &str, op: &str) -> Raw {
    app.call("POST", &format!("/subscriptions/{id}/{op}"), None).await
}

/// A move that must succeed: the subscription it answers.
async fn ok(app: &TestApp, id: &str, op: &str, body: Value) -> Value {
    let r = mv(app, id, op, body).await;
    assert_eq!(r.status, 200, "{op}: {:#}", r.body);
    r.body
}

/// The events recorded since `from` (an index into the log), as (type, data).
/// The lifecycle's events recorded after the first `from` (the invoices
/// its renewals bill are finalised by jobs beside it: tests/api/invoices.rs).
async fn events_since(app: &TestApp, from: usize) -> Vec<(String, Value)> {
    app.store.event_types(app.org).await.unwrap().into_iter().skip(from).filter(|(t, _)| !t.starts_with("invoice.")).collect()
}

async fn event_count(app: &TestApp) -> usize {
    app.store.event_types(app.org).await.unwrap().len()
}

/// A valid ICCID ending in `tail` (the check digit computed).
fn iccid(tail: u32) -> String {
    let body = format!("894600000000{tail:07}");
    let digits: Vec<u32> = body.chars().map(|c| c.to_digit(10).unwrap()).collect();
    let sum: u32 = digits
        .iter()
        .rev()
        .enumerate()
        .map(|(i, d)| {
            if i % 2 == 0 {
                let x = d * 2;
                if x > 9 { x - 9 } else { x }
            } else {
                *d
            }
        })
        .sum();
    format!("{body}{}", (10 - sum % 10) % 10)
}

/// A move whose request fields are all optional needs no body (the
/// documents mark those bodies optional); an operation with a required
/// field still answers 400 without one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_move_needs_no_body_where_every_field_is_optional() {
    each_backend(|app| async move {
        setup(&app).await;
        let a = new_subscription(&app, "mobile-10gb", "ESIM", "+46701234567", false).await;
        let moves = [
            ("activate", "ACTIVATED"),
            ("pause", "PAUSED"),
            ("restore", "ACTIVATED"),
            ("suspend", "SUSPENDED"),
            ("block-sim", "BLOCKED"),
            ("cancel", "CANCELLED"),
        ];
        for (op, now) in moves {
            let r = app.call("POST", &format!("/subscriptions/{a}/{op}"), None).await;
            assert_eq!((r.status, r.body["status"].as_str()), (200, Some(now)), "{op}: {:#}", r.body);
        }
        // read as `{}`: the table answers, not the body check
        mv_bodiless(&app, &a, "withdraw-cancellation").await.assert_error(409, "subscription_cancelled");
        app.call("POST", "/customers", None).await.assert_error(400, "validation_failed");
        app
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_move_of_the_table_with_its_events() {
    each_backend(|app| async move {
        setup(&app).await;
        // two years pass unpaid here: no dunning
        app.without_dunning().await;
        let a = new_subscription(&app, "mobile-10gb", "ESIM", "+46701234567", true).await;
        let b = new_subscription(&app, "data-sim-20gb", "PSIM", "+46709876543", false).await;
        let today = app.clock.now().date_naive();

        // auk answers in its own shape (before the clock passes its retirement)
        let d = new_subscription(&app, "mobile-10gb", "ESIM", "+46705550102", false).await;
        let auk_key = app.new_key(app.org, Some(AUK), false).await;
        let r = app.call_as(Some(&auk_key), "POST", &format!("/subscriptions/{d}/activate"), Some(json!({})), &[]).await;
        assert_eq!((r.status, &r.body["productOffering"]["price"]["netPrice"]), (200, &json!(299.0)));

        // activate: an eSIM gets its profile from the network; the first time
        // also first_activated; the binding contract runs 24 months from today
        let from = event_count(&app).await;
        let s = ok(&app, &a, "activate", json!({})).await;
        assert_eq!(s["status"], "ACTIVATED");
        assert!(s["iccid"].as_str().unwrap().starts_with("8946") && s["esimActivationCode"].as_str().unwrap().starts_with("LPA:1$"));
        assert_eq!(s["activatedAt"], s["updatedAt"]);
        assert_eq!(s["bindingEndsOn"], json!(today.checked_add_months(chrono::Months::new(24)).unwrap().to_string()));
        let recorded = events_since(&app, from).await;
        let types: Vec<&str> = recorded.iter().map(|(t, _)| t.as_str()).collect();
        assert_eq!(types, ["subscription.activated", "subscription.first_activated"]);
        // the activation code is a secret: the answer shows it, reads and events do not
        let mut without_code = s.clone();
        without_code.as_object_mut().unwrap().remove("esimActivationCode");
        assert!(recorded.iter().all(|(_, d)| *d == without_code), "each event carries the subscription as answered, less its code");
        assert_eq!(app.call("GET", &format!("/subscriptions/{a}"), None).await.body, without_code, "a read equals the answer, less its code");
        mv(&app, &a, "activate", json!({})).await.assert_error(409, "subscription_activated");

        // a PSIM names its card: checked, free, and not a refused test value
        mv(&app, &b, "activate", json!({})).await.assert_error(409, "iccid_required");
        let mut bad = iccid(1);
        bad.replace_range(19.., if bad.ends_with('0') { "1" } else { "0" });
        mv(&app, &b, "activate", json!({"iccid": bad})).await.assert_error(400, "validation_failed");
        mv(&app, &b, "activate", json!({"iccid": "89460000000000006668"})).await.assert_error(409, "network_refused");
        mv(&app, &b, "activate", json!({"iccid": s["iccid"]})).await.assert_error(409, "iccid_taken");
        let card = iccid(1);
        let sb = ok(&app, &b, "activate", json!({"iccid": card, "reason": "Welcome"})).await;
        assert_eq!((&sb["status"], &sb["iccid"], &sb["statusReason"]), (&json!("ACTIVATED"), &json!(card), &json!("Welcome")));
        assert!(sb.get("bindingEndsOn").is_none(), "no binding contract was chosen");

        // pause, suspend, block and restore each; every other move of a state is its 409
        let from = event_count(&app).await;
        let p = ok(&app, &a, "pause", json!({"reason": "Travelling"})).await;
        assert_eq!((&p["status"], &p["statusReason"], &p["pausedAt"]), (&json!("PAUSED"), &json!("Travelling"), &p["updatedAt"]));
        for op in ["pause", "suspend", "activate"] {
            mv(&app, &a, op, json!({})).await.assert_error(409, "subscription_paused");
        }
        let r = ok(&app, &a, "restore", json!({})).await;
        assert_eq!(r["status"], "ACTIVATED");
        assert!(r.get("pausedAt").is_none());
        assert_eq!(ok(&app, &a, "suspend", json!({"reason": "Unpaid"})).await["status"], "SUSPENDED");
        mv(&app, &a, "pause", json!({})).await.assert_error(409, "subscription_suspended");
        assert_eq!(ok(&app, &a, "block-sim", json!({"reason": "Stolen"})).await["status"], "BLOCKED");
        mv(&app, &a, "block-sim", json!({})).await.assert_error(409, "subscription_blocked");
        ok(&app, &a, "restore", json!({})).await;
        mv(&app, &a, "restore", json!({})).await.assert_error(409, "subscription_activated");
        let types: Vec<String> = events_since(&app, from).await.into_iter().map(|(t, _)| t).collect();
        let restored = "subscription.restored";
        assert_eq!(types, ["subscription.paused", restored, "subscription.suspended", "subscription.updated", restored]);

        // a new SIM keeps the number and state; an old one is never taken again
        mv(&app, &a, "change-sim", json!({"simType": "PSIM"})).await.assert_error(400, "validation_failed");
        let old = ok(&app, &a, "change-sim", json!({"simType": "ESIM"})).await;
        assert_ne!(old["iccid"], s["iccid"]);
        let new_card = iccid(2);
        let c = ok(&app, &a, "change-sim", json!({"simType": "PSIM", "iccid": new_card})).await;
        assert_eq!((&c["status"], &c["simType"], &c["iccid"], &c["msisdn"]), (&json!("ACTIVATED"), &json!("PSIM"), &json!(new_card), &s["msisdn"]));
        assert!(c.get("esimActivationCode").is_none());
        mv(&app, &a, "change-sim", json!({"simType": "PSIM", "iccid": old["iccid"]})).await.assert_error(409, "iccid_taken");
        mv(&app, &a, "change-sim", json!({"simType": "PSIM", "iccid": "89460000000000006668"})).await.assert_error(409, "network_refused");
        assert_eq!(events_since(&app, event_count(&app).await - 1).await[0], ("subscription.updated".to_string(), c.clone()));

        // cancel: not before the binding contract ends; at its end date, withdrawn, again, then on the clock
        let ends = c["bindingEndsOn"].as_str().unwrap().to_string();
        mv(&app, &a, "cancel", json!({})).await.assert_error(409, "binding_contract_active");
        mv(&app, &a, "cancel", json!({"effectiveDate": today.succ_opt().unwrap().to_string()})).await.assert_error(409, "binding_contract_active");
        mv(&app, &a, "withdraw-cancellation", json!({})).await.assert_error(409, "no_cancellation_scheduled");
        let from = event_count(&app).await;
        let x = ok(&app, &a, "cancel", json!({"effectiveDate": ends, "reason": "Moving"})).await;
        assert_eq!((&x["status"], &x["pendingStatus"], &x["pendingStatusAt"]), (&json!("ACTIVATED"), &json!("CANCELLED"), &json!(format!("{ends}T00:00:00Z"))));
        assert_eq!(events_since(&app, from).await, [("subscription.cancelled".to_string(), x.clone())]);
        let w = ok(&app, &a, "withdraw-cancellation", json!({})).await;
        assert!(w.get("pendingStatus").is_none() && w.get("cancelledAt").is_none());
        ok(&app, &a, "cancel", json!({"effectiveDate": ends})).await;
        assert_eq!(ok(&app, &a, "pause", json!({})).await["pendingStatus"], "CANCELLED", "a move keeps what is scheduled");
        let due = chrono::DateTime::parse_from_rfc3339(&format!("{ends}T00:00:00Z")).unwrap().with_timezone(&chrono::Utc);
        // (counted before the clock moves: the read below or the job racing
        // it ends a; b and d renew monthly meanwhile, events of their own)
        let from = event_count(&app).await;
        app.clock.advance(due - app.clock.now() + chrono::Duration::seconds(1));
        // b and d renew monthly over the two years the clock moved: read,
        // so their renewals are all in before the events counted below
        for s in [&b, &d] {
            let caught_up = app.call("GET", &format!("/subscriptions/{s}"), None).await;
            assert_eq!(caught_up.status, 200, "{}", caught_up.body);
        }
        let ended = app.call("GET", &format!("/subscriptions/{a}"), None).await.body;
        assert_eq!((&ended["status"], &ended["endedAt"]), (&json!("CANCELLED"), &json!(format!("{ends}T00:00:00Z"))));
        assert!(ended.get("pendingStatus").is_none());
        let of_a: Vec<(String, Value)> = events_since(&app, from).await.into_iter().filter(|(_, data)| data["subscriptionId"] == json!(a)).collect();
        assert_eq!(of_a, [("subscription.ended".to_string(), ended.clone())]);
        let log = app.call("GET", "/events?type=subscription.ended", None).await.body;
        assert_eq!(log["items"][0]["occurredAt"], json!(format!("{ends}T00:00:00Z")), "dated when it took effect");

        // a cancelled subscription refuses everything; its number is free again
        for (op, body) in [
            ("activate", json!({})),
            ("pause", json!({})),
            ("restore", json!({})),
            ("cancel", json!({})),
            ("withdraw-cancellation", json!({})),
            ("change-sim", json!({"simType": "ESIM"})),
        ] {
            mv(&app, &a, op, body).await.assert_error(409, "subscription_cancelled");
        }
        new_subscription(&app, "mobile-10gb", "ESIM", "+46701234567", false).await;

        // without a binding contract, now: cancelled and ended at once
        let from = event_count(&app).await;
        let gone = ok(&app, &b, "cancel", json!({"effectiveDate": "2020-01-01"})).await;
        assert_eq!((&gone["status"], &gone["endedAt"]), (&json!("CANCELLED"), &gone["cancelledAt"]));
        let types: Vec<String> = events_since(&app, from).await.into_iter().map(|(t, _)| t).collect();
        assert_eq!(types, ["subscription.cancelled", "subscription.ended"]);

        // PENDING: not paused, not cancelled later, cancelled now
        let c = new_subscription(&app, "data-sim-20gb", "PSIM", "+46705550101", false).await;
        mv(&app, &c, "pause", json!({})).await.assert_error(409, "subscription_pending");
        mv(&app, &c, "cancel", json!({"effectiveDate": "2099-01-01"})).await.assert_error(409, "subscription_pending");
        assert_eq!(ok(&app, &c, "change-sim", json!({"simType": "PSIM", "iccid": iccid(3)})).await["status"], "PENDING");
        assert_eq!(ok(&app, &c, "cancel", json!({})).await["status"], "CANCELLED");
        mv(&app, &uuid::Uuid::new_v4().to_string(), "pause", json!({})).await.assert_error(404, "subscription_not_found");

        app
    })
    .await;
}

fn delayed(s: &mut switchboard::config::Settings) {
    s.network_activation_delay_seconds = 60;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_delayed_activation_completes_on_the_clock() {
    each_backend_with(delayed, |app| async move {
        setup(&app).await;
        let a = new_subscription(&app, "mobile-10gb", "ESIM", "+46701234567", false).await;
        let from = event_count(&app).await;
        let s = ok(&app, &a, "activate", json!({})).await;
        assert_eq!((&s["status"], &s["pendingStatus"]), (&json!("PENDING"), &json!("ACTIVATED")));
        let mut without_code = s.clone();
        assert!(without_code.as_object_mut().unwrap().remove("esimActivationCode").is_some(), "the answer shows the new profile's code");
        assert_eq!(events_since(&app, from).await, [("subscription.updated".to_string(), without_code)]);
        mv(&app, &a, "activate", json!({})).await.assert_error(409, "activation_in_progress");
        app.clock.advance(chrono::Duration::seconds(61));
        assert!(app.run_jobs().await >= 1, "the subscription.scheduled job ran");
        let types: Vec<String> = events_since(&app, from + 1).await.into_iter().map(|(t, _)| t).collect();
        assert_eq!(types, ["subscription.activated", "subscription.first_activated"]);
        let now = app.call("GET", &format!("/subscriptions/{a}"), None).await.body;
        assert_eq!((&now["status"], &now["activatedAt"]), (&json!("ACTIVATED"), &s["pendingStatusAt"]));
        assert!(now.get("pendingStatus").is_none());
        app
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn who_may_make_which_move() {
    each_backend(|app| async move {
        setup(&app).await;
        let sub = new_subscription(&app, "mobile-10gb", "ESIM", "+46701234567", true).await;
        let mut tokens = std::collections::HashMap::new();
        for role in ["MEMBER", "MANAGER", "ADMIN", "SUPPORT"] {
            let email = format!("{}@acme.example", role.to_lowercase());
            let r = app
                .call(
                    "POST",
                    "/users",
                    Some(json!({"name": role, "email": email, "customerId": "rid_acme",
                                                             "role": if role == "SUPPORT" { "MEMBER" } else { role }})),
                )
                .await;
            assert_eq!(r.status, 201, "{:#}", r.body);
            if role == "SUPPORT" {
                switchboard::admin::user_support(&app.store, r.body["userId"].as_str().unwrap().parse().unwrap(), true).await.unwrap();
            }
            tokens.insert(role, format!("Bearer {}", app.login(&email, Some(&app.key)).await));
        }
        let as_user = |role: &'static str, op: &'static str, body: Value| {
            let auth = tokens[role].clone();
            let (app, sub) = (&app, sub.clone());
            async move { app.call_as(Some(&app.key), "POST", &format!("/subscriptions/{sub}/{op}"), Some(body), &[("Authorization", auth.as_str())]).await }
        };
        as_user("MEMBER", "activate", json!({})).await.assert_error(403, "insufficient_role");
        as_user("SUPPORT", "activate", json!({})).await.assert_error(403, "support_user_read_only");
        assert_eq!(as_user("MANAGER", "activate", json!({})).await.status, 200);
        assert_eq!(
            app.call_as(Some(&app.key), "GET", &format!("/subscriptions/{sub}"), None, &[("Authorization", tokens["MEMBER"].as_str())]).await.status,
            200
        );
        as_user("MEMBER", "pause", json!({})).await.assert_error(403, "insufficient_role");
        assert_eq!(as_user("MANAGER", "pause", json!({})).await.status, 200);
        assert_eq!(as_user("MANAGER", "restore", json!({})).await.status, 200, "a MANAGER ends a pause");
        for op in ["suspend", "block-sim"] {
            as_user("ADMIN", op, json!({})).await.assert_error(403, "insufficient_role");
        }
        ok(&app, &sub, "suspend", json!({})).await;
        as_user("ADMIN", "restore", json!({})).await.assert_error(403, "insufficient_role");
        ok(&app, &sub, "restore", json!({})).await;
        ok(&app, &sub, "block-sim", json!({})).await;
        as_user("ADMIN", "restore", json!({})).await.assert_error(403, "insufficient_role");
        ok(&app, &sub, "restore", json!({})).await;
        as_user("MANAGER", "change-sim", json!({"simType": "ESIM"})).await.assert_error(403, "insufficient_role");
        assert_eq!(as_user("ADMIN", "change-sim", json!({"simType": "ESIM"})).await.status, 200);
        as_user("MANAGER", "cancel", json!({})).await.assert_error(403, "insufficient_role");
        as_user("ADMIN", "cancel", json!({"force": true})).await.assert_error(403, "insufficient_role");
        as_user("ADMIN", "cancel", json!({})).await.assert_error(409, "binding_contract_active");
        let read_only = app.new_key(app.org, None, true).await;
        app.call_as(Some(&read_only), "POST", &format!("/subscriptions/{sub}/pause"), Some(json!({})), &[]).await.assert_error(403, "read_only_api_key");
        let (_, other) = app.other_org().await;
        app.call_as(Some(&other), "POST", &format!("/subscriptions/{sub}/pause"), Some(json!({})), &[]).await.assert_error(404, "subscription_not_found");
        let forced = ok(&app, &sub, "cancel", json!({"force": true})).await;
        assert_eq!(forced["status"], "CANCELLED", "the key alone forces a cancellation within the binding contract");
        app
    })
    .await;
}

fn body<T: serde::de::DeserializeOwned>(v: Value) -> T {
    serde_json::from_value(v).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_generated_client_makes_every_move() {
    each_backend(|app| async move {
        setup(&app).await;
        let id = new_subscription(&app, "data-sim-20gb", "PSIM", "+46701234567", false).await;
        let c = app.bullfinch();
        let status = |s: bullfinch::types::Subscription| json_of(&s.status);
        let none = body::<bullfinch::types::SubscriptionStatusChangeRequest>(json!({}));
        let s = c.subscription_activate(&id.parse().unwrap(), None, &body(json!({"iccid": iccid(7)}))).await.unwrap().into_inner();
        assert_eq!((json_of(&s.status), s.iccid.as_deref().map(|i| i.to_string())), (json!("ACTIVATED"), Some(iccid(7))));
        assert_eq!(status(c.subscription_pause(&id.parse().unwrap(), None, &none).await.unwrap().into_inner()), "PAUSED");
        assert_eq!(status(c.subscription_restore(&id.parse().unwrap(), None, &none).await.unwrap().into_inner()), "ACTIVATED");
        assert_eq!(status(c.subscription_suspend(&id.parse().unwrap(), None, &none).await.unwrap().into_inner()), "SUSPENDED");
        assert_eq!(status(c.subscription_block_sim(&id.parse().unwrap(), None, &none).await.unwrap().into_inner()), "BLOCKED");
        let swapped = c.subscription_change_sim(&id.parse().unwrap(), None, &body(json!({"simType": "ESIM"}))).await.unwrap().into_inner();
        assert_eq!((json_of(&swapped.status), json_of(&swapped.sim_type)), (json!("BLOCKED"), json!("ESIM")));
        let later = c.subscription_cancel(&id.parse().unwrap(), None, &body(json!({"effectiveDate": "2099-01-01"}))).await.unwrap().into_inner();
        assert_eq!(json_of(&later.pending_status), json!("CANCELLED"));
        let kept = c.subscription_withdraw_cancellation(&id.parse().unwrap(), None, &none).await.unwrap().into_inner();
        assert!(kept.pending_status.is_none());
        let refused = c.subscription_withdraw_cancellation(&id.parse().unwrap(), None, &none).await.unwrap_err();
        assert_refused(&refused, 409, "no_cancellation_scheduled");
        app
    })
    .await;
}
