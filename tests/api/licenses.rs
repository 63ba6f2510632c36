//! Licenses on both revisions and both databases: one assigned to no
//! subscription is ACTIVE at once; one assigned to a subscription follows
//! it through activation, pause, suspension, block, restore and
//! cancellation, each move with its events equal to the license as read.

use crate::harness::*;
use crate::lifecycle::new_subscription;
use crate::orders::{offering, setup};
use serde_json::{Value, json};

const AUK: &str = "2026-08-21.auk";

/// The licenses' events recorded since `from`, as (type, data).
async fn license_events(app: &TestApp, from: usize) -> Vec<(String, Value)> {
    app.store.event_types(app.org).await.unwrap().into_iter().skip(from).filter(|(t, _)| t.starts_with("license.")).collect()
}

async fn read(app: &TestApp, id: &str) -> Value {
    json_of(&app.bullfinch().license_view(&id.parse().unwrap()).await.unwrap().into_inner())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_license_follows_its_subscription_with_its_events() {
    each_backend(|app| async move {
        setup(&app).await;
        let s = new_subscription(&app, "mobile-10gb", "ESIM", "+46701239701", false).await;
        let start = app.store.event_types(app.org).await.unwrap().len();
        let lines = json!([
            {"type": "LICENSE", "productOfferingId": offering(&app, "pbx-user"), "subscriptionId": s},
            {"type": "LICENSE", "productOfferingId": offering(&app, "pbx-queue")},
        ]);
        let r = app.call("POST", "/orders", Some(json!({"customerId": "rid_acme", "lineItems": lines}))).await;
        assert_eq!(r.status, 201, "{:#}", r.body);
        let r = app.call("POST", &format!("/orders/{}/submit", r.body["orderId"].as_str().unwrap()), None).await;
        assert_eq!(r.status, 200, "{:#}", r.body);
        let (user, queue) = (r.body["lineItems"][0]["createdLicenseId"].as_str().unwrap().to_string(), r.body["lineItems"][1]["createdLicenseId"].as_str().unwrap().to_string());

        // unassigned: provisioned at once; assigned: waits for its subscription
        let q = read(&app, &queue).await;
        let today = app.clock.now().date_naive().to_string();
        assert_eq!((q["status"].as_str(), q["activatedAt"].as_str()), (Some("ACTIVE"), Some(today.as_str())));
        let u = read(&app, &user).await;
        assert_eq!((u["status"].as_str(), &u["activatedAt"]), (Some("PENDING"), &Value::Null));
        let told = license_events(&app, start).await;
        let types: Vec<&str> = told.iter().map(|(t, _)| t.as_str()).collect();
        assert_eq!(types, ["license.created", "license.created", "license.activated"]);
        assert_eq!((&told[0].1, &told[2].1), (&u, &q), "each payload is the license as read");

        // the subscription's moves move it, each told once
        let mut seen = app.store.event_types(app.org).await.unwrap().len();
        let steps = [
            ("activate", json!({}), "ACTIVE", "license.activated"),
            ("pause", json!({}), "PAUSED", "license.updated"),
            ("restore", json!({}), "ACTIVE", "license.updated"),
            ("suspend", json!({}), "PAUSED", "license.updated"),
            ("block-sim", json!({}), "BLOCKED", "license.updated"),
            ("restore", json!({}), "ACTIVE", "license.updated"),
        ];
        for (op, body, status, event) in steps {
            let r = app.call("POST", &format!("/subscriptions/{s}/{op}"), Some(body)).await;
            assert_eq!(r.status, 200, "{op}: {:#}", r.body);
            let now = read(&app, &user).await;
            assert_eq!(now["status"], status, "after {op}: {now:#}");
            assert_eq!(now.get("pausedAt").is_some(), status == "PAUSED", "after {op}: {now:#}");
            let told = license_events(&app, seen).await;
            assert_eq!(told, [(event.to_string(), now.clone())], "after {op}");
            seen = app.store.event_types(app.org).await.unwrap().len();
        }
        let activated = read(&app, &user).await["activatedAt"].clone();
        assert_eq!(activated, json!(today));

        // auk reads the same license (auk retires on 2026-12-01 by the clock)
        let auk = app.auk_with(&app.new_key(app.org, Some(AUK), false).await);
        let old = json_of(&auk.license_view(&user.parse().unwrap()).await.unwrap().into_inner());
        assert_eq!((&old["status"], &old["activatedAt"]), (&json!("ACTIVE"), &activated));

        // it ends with its subscription; the unassigned one does not
        let r = app.call("POST", &format!("/subscriptions/{s}/cancel"), Some(json!({}))).await;
        assert_eq!(r.status, 200, "{:#}", r.body);
        let ended = read(&app, &user).await;
        assert_eq!((ended["status"].as_str(), ended["cancelledAt"].as_str()), (Some("CANCELLED"), Some(today.as_str())));
        let told = license_events(&app, seen).await;
        assert_eq!(told, [("license.cancelled".to_string(), ended.clone()), ("license.ended".to_string(), ended)]);
        assert_eq!(read(&app, &queue).await["status"], "ACTIVE");
        app
    })
    .await;
}

/// Submits one LICENSE line for Acme (assigned to `subscription` when
/// given); the license's id.
async fn license(app: &TestApp, key: &str, subscription: Option<&str>) -> String {
    let mut line = json!({"type": "LICENSE", "productOfferingId": offering(app, key)});
    if let Some(s) = subscription {
        line["subscriptionId"] = json!(s);
    }
    let r = app.call("POST", "/orders", Some(json!({"customerId": "rid_acme", "lineItems": [line]}))).await;
    assert_eq!(r.status, 201, "{:#}", r.body);
    let r = app.call("POST", &format!("/orders/{}/submit", r.body["orderId"].as_str().unwrap()), None).await;
    assert_eq!(r.status, 200, "{:#}", r.body);
    r.body["lineItems"][0]["createdLicenseId"].as_str().unwrap().to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_license_is_cancelled_now_or_at_a_later_date() {
    each_backend(|app| async move {
        setup(&app).await;
        at(&app, "2030-03-10T09:00:01Z");
        let seat = license(&app, "pbx-user", None).await;
        let queue = license(&app, "pbx-queue", None).await;

        // at a later date: ACTIVE until then, told now
        let seen = app.store.event_types(app.org).await.unwrap().len();
        let request: bullfinch::types::CancelLicenseRequest = serde_json::from_value(json!({"effectiveDate": "2030-03-20"})).unwrap();
        let later = json_of(&app.bullfinch().license_cancel(&seat.parse().unwrap(), None, &request).await.unwrap().into_inner());
        assert_eq!((later["status"].as_str(), &later["pendingStatus"]), (Some("ACTIVE"), &json!({"status": "CANCELLED", "scheduledAt": "2030-03-20"})));
        assert_eq!(later["cancelledAt"], "2030-03-10");
        assert_eq!(license_events(&app, seen).await, [("license.cancelled".to_string(), later.clone())]);
        // asked again for another date: replaced
        let r = app.call("POST", &format!("/licenses/{seat}/cancel"), Some(json!({"effectiveDate": "2030-03-25"}))).await;
        assert_eq!((r.status, &r.body["pendingStatus"]["scheduledAt"]), (200, &json!("2030-03-25")), "{:#}", r.body);

        // the date comes: CANCELLED for whoever reads it, told once by the job or the read
        at(&app, "2030-03-25T00:00:01Z");
        let seen = app.store.event_types(app.org).await.unwrap().len();
        let ended = read(&app, &seat).await;
        assert_eq!((ended["status"].as_str(), ended.get("pendingStatus")), (Some("CANCELLED"), None), "{ended:#}");
        app.run_jobs().await;
        assert_eq!(license_events(&app, seen).await, [("license.ended".to_string(), ended)]);
        app.call("POST", &format!("/licenses/{seat}/cancel"), Some(json!({}))).await.assert_error(409, "license_cancelled");

        // now: both events at once
        let seen = app.store.event_types(app.org).await.unwrap().len();
        let r = app.call("POST", &format!("/licenses/{queue}/cancel"), Some(json!({"reason": "No more queues"}))).await;
        assert_eq!((r.status, r.body["status"].as_str()), (200, Some("CANCELLED")), "{:#}", r.body);
        let told: Vec<String> = license_events(&app, seen).await.into_iter().map(|(t, _)| t).collect();
        assert_eq!(told, ["license.cancelled", "license.ended"]);

        // a PENDING license (its subscription not activated) ends only now
        let s = new_subscription(&app, "mobile-10gb", "ESIM", "+46701239801", false).await;
        let pending = license(&app, "pbx-user", Some(&s)).await;
        app.call("POST", &format!("/licenses/{pending}/cancel"), Some(json!({"effectiveDate": "2030-04-01"}))).await.assert_error(409, "license_pending");
        let (_, other) = app.other_org().await;
        app.call_as(Some(&other), "POST", &format!("/licenses/{pending}/cancel"), Some(json!({})), &[]).await.assert_error(404, "license_not_found");
        let email = "manager@acme.example";
        let r = app.call("POST", "/users", Some(json!({"name": "M", "email": email, "customerId": "rid_acme", "role": "MANAGER"}))).await;
        assert_eq!(r.status, 201, "{:#}", r.body);
        let bearer = format!("Bearer {}", app.login(email, Some(&app.key)).await);
        app.call_as(Some(&app.key), "POST", &format!("/licenses/{pending}/cancel"), Some(json!({})), &[("Authorization", bearer.as_str())])
            .await
            .assert_error(403, "insufficient_role");
        let r = app.call("POST", &format!("/licenses/{pending}/cancel"), Some(json!({}))).await;
        assert_eq!((r.status, r.body["status"].as_str()), (200, Some("CANCELLED")));
        app
    })
    .await;
}
