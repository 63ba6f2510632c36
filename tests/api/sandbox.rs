//! Sandbox organisations and their test clocks, on both databases: an
//! advance moves the organisation's time at once and runs what falls due
//! (an add-on's expiry, a scheduled offering change, renewals, the end of a
//! binding contract), each dated at its own due time; nothing of another
//! organisation moves; a normal organisation, a user's token and a second
//! advance at once are refused.

use crate::harness::*;
use crate::orders::{offering, setup};
use serde_json::{Value, json};

async fn clock(app: &TestApp) -> Value {
    json_of(&app.bullfinch().sandbox_clock_view().await.unwrap().into_inner())
}

/// Advances the clock to `to` (jobs stopped: the advance waits for
/// `run_jobs`), runs it, and checks it is READY at `to` or a moment after.
async fn advance(app: &TestApp, to: &str) {
    let body = serde_json::from_value(json!({"to": to})).unwrap();
    let key = uuid::Uuid::new_v4().to_string().parse().unwrap();
    let answered = json_of(&app.bullfinch().sandbox_clock_advance(Some(&key), &body).await.unwrap().into_inner());
    assert_eq!((answered["status"].as_str(), second(&answered["now"])), (Some("ADVANCING"), &to[..19]), "{answered:#}");
    assert_eq!(clock(app).await["status"], "ADVANCING", "nothing ran yet: the jobs are stopped");
    app.run_jobs().await;
    let shown = clock(app).await;
    assert_eq!(shown["status"], "READY", "{shown:#}");
    assert!(time(&shown["now"]) >= time(&json!(to)), "{shown:#} at or after {to}");
}

fn time(v: &Value) -> chrono::DateTime<chrono::Utc> {
    v.as_str().unwrap_or_else(|| panic!("not a date-time: {v}")).parse().unwrap()
}

/// A date-time to the second.
fn second(v: &Value) -> &str {
    &v.as_str().unwrap_or_else(|| panic!("not a date-time: {v}"))[..19]
}

/// The organisation's events of `types` as the log lists them: (type, occurredAt to the second, data).
async fn logged(app: &TestApp, types: &[&str]) -> Vec<(String, String, Value)> {
    let query: Vec<String> = types.iter().map(|t| format!("type={t}")).collect();
    let r = app.call("GET", &format!("/events?limit=100&{}", query.join("&")), None).await;
    assert_eq!(r.status, 200, "{:#}", r.body);
    let items = r.body["items"].as_array().unwrap();
    items.iter().map(|e| (e["type"].as_str().unwrap().to_string(), second(&e["occurredAt"]).to_string(), e["data"].clone())).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_advance_runs_what_falls_due_each_at_its_own_time() {
    each_backend(|mut app| async move {
        let (normal, normal_key) = (app.org, app.key.clone());
        app.become_sandbox().await;
        app.stop_jobs();
        setup(&app).await;
        // renewals bill invoices left unpaid here: no dunning
        app.without_dunning().await;
        let untouched = app.org_fingerprint(normal).await;
        let start = clock(&app).await;
        assert_eq!((&start["status"], &start["advancedAt"]), (&json!("READY"), &Value::Null));
        assert_eq!(&second(&start["now"])[..13], "2026-11-02T09", "a new clock reads the server's time: {start:#}");

        // a bound subscription, a week's add-on, an upgrade on the first of next month
        let r = app
            .call(
                "POST",
                "/subscriptions",
                Some(json!({"customerId": "rid_acme", "productOfferingId": offering(&app, "mobile-10gb"),
                                                               "bindingContract": true, "subscription": {"simType": "ESIM", "msisdn": "+46701234567"}})),
            )
            .await;
        assert_eq!(r.status, 201, "{:#}", r.body);
        let id = r.body["subscriptionId"].as_str().unwrap().to_string();
        let r = app.call("POST", &format!("/subscriptions/{id}/activate"), Some(json!({}))).await;
        assert_eq!((r.status, &r.body["renewsOn"], &r.body["bindingEndsOn"]), (200, &json!("2026-12-02"), &json!("2028-11-02")), "{:#}", r.body);
        let lines = json!([{"type": "SUBSCRIPTION_ADDON", "productOfferingId": offering(&app, "abroad-usa"), "subscriptionId": id}]);
        let order = app.call("POST", "/orders", Some(json!({"customerId": "rid_acme", "lineItems": lines}))).await;
        let r = app.call("POST", &format!("/orders/{}/submit", order.body["orderId"].as_str().unwrap()), None).await;
        assert_eq!(r.status, 200, "{:#}", r.body);
        let addons = app.call("GET", &format!("/subscriptions/{id}/addons"), None).await.body;
        let week = addons["items"][0].clone();
        assert_eq!((&week["status"], &second(&week["expiresAt"])[..13]), (&json!("ACTIVE"), "2026-11-09T09"), "{week:#}");
        let r = app
            .call(
                "PUT",
                &format!("/subscriptions/{id}/product-offering-change"),
                Some(json!({"productOfferingId": offering(&app, "mobile-unlimited"), "changeSchedule": "FIRST_OF_NEXT_MONTH"})),
            )
            .await;
        assert_eq!(r.body["pendingProductOffering"]["scheduledAt"], "2026-12-01T00:00:00Z", "{:#}", r.body);

        // a week on: the add-on expired at its own time, told then
        advance(&app, "2026-11-10T00:00:00Z").await;
        let addons = app.call("GET", &format!("/subscriptions/{id}/addons"), None).await.body;
        assert_eq!((&addons["items"][0]["status"], second(&addons["items"][0]["endedAt"])), (&json!("EXPIRED"), second(&week["expiresAt"])));
        let told = logged(&app, &["subscription.updated", "subscription.renewed"]).await;
        let dated: Vec<(&str, &str)> = told.iter().map(|(t, at, _)| (t.as_str(), at.as_str())).collect();
        assert_eq!(dated.last(), Some(&("subscription.updated", second(&week["expiresAt"]))), "the expiry, told at its time: {dated:?}");
        assert!(told.iter().all(|(t, _, _)| t != "subscription.renewed"), "no renewal yet");

        // past the first of the month and the renewal day: the change first, then the renewal, each at its time
        let from = told.len();
        advance(&app, "2026-12-02T12:00:00Z").await;
        let told = logged(&app, &["subscription.updated", "subscription.renewed"]).await;
        let new: Vec<(&str, &str)> = told[from..].iter().map(|(t, at, _)| (t.as_str(), at.as_str())).collect();
        assert_eq!(new, [("subscription.updated", "2026-12-01T00:00:00"), ("subscription.renewed", "2026-12-02T00:00:00")]);
        let now = app.call("GET", &format!("/subscriptions/{id}"), None).await.body;
        assert_eq!((&now["productOffering"]["name"], &now["renewsOn"]), (&json!("Mobile Unlimited"), &json!("2027-03-02")), "{now:#}");
        assert_eq!(second(&now["updatedAt"]), "2026-12-02T00:00:00", "stamped by its last due work, not the advance");

        // the binding contract holds until its end, then the subscription may be cancelled
        app.call("POST", &format!("/subscriptions/{id}/cancel"), Some(json!({}))).await.assert_error(409, "binding_contract_active");
        advance(&app, "2028-11-02T12:00:00Z").await;
        let renewals: Vec<String> = logged(&app, &["subscription.renewed"]).await.into_iter().map(|(_, at, _)| at).collect();
        let quarterly = ["2026-12-02", "2027-03-02", "2027-06-02", "2027-09-02", "2027-12-02", "2028-03-02", "2028-06-02", "2028-09-02"];
        assert_eq!(renewals, quarterly.map(|d| format!("{d}T00:00:00")), "every renewal, in order, at its day");
        let r = app.call("POST", &format!("/subscriptions/{id}/cancel"), Some(json!({}))).await;
        assert_eq!((r.status, &r.body["status"]), (200, &json!("CANCELLED")), "{:#}", r.body);
        assert_eq!(second(&r.body["cancelledAt"])[..10], *"2028-11-02", "the request reads the moved clock: {:#}", r.body);

        // the other organisation did not move
        assert_eq!(app.org_fingerprint(normal).await, untouched);
        let theirs = app.call_as(Some(&normal_key), "GET", "/sandbox/clock", None, &[]).await;
        theirs.assert_error(403, "sandbox_only");
        app
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_clock_refuses_what_it_cannot_do() {
    each_backend(|mut app| async move {
        let normal_key = app.key.clone();
        app.become_sandbox().await;
        app.stop_jobs();
        setup(&app).await;
        // renewals bill invoices left unpaid here: no dunning
        app.without_dunning().await;
        let to = |t: &str| Some(json!({"to": t}));

        // only a sandbox organisation has a clock
        for (method, path, body) in [("GET", "/sandbox/clock", None), ("POST", "/sandbox/clock/advance", to("2026-12-01T00:00:00Z"))] {
            app.call_as(Some(&normal_key), method, path, body, &[]).await.assert_error(403, "sandbox_only");
        }
        // its key alone: not a user's token
        let r = app.call("POST", "/users", Some(json!({"name": "Anna", "email": "anna@acme.example", "customerId": "rid_acme", "role": "ADMIN"}))).await;
        assert_eq!(r.status, 201, "{:#}", r.body);
        let bearer = format!("Bearer {}", app.login("anna@acme.example", Some(&app.key)).await);
        app.call_as(Some(&app.key), "GET", "/sandbox/clock", None, &[("Authorization", &bearer)]).await.assert_error(403, "insufficient_role");
        // not backwards, not more than two years on
        let now = clock(&app).await["now"].as_str().unwrap().to_string();
        let r = app.call("POST", "/sandbox/clock/advance", to("2026-11-01T00:00:00Z")).await;
        r.assert_error(400, "validation_failed");
        assert_eq!(r.details(), [("to".to_string(), "before_now".to_string())]);
        let r = app.call("POST", "/sandbox/clock/advance", to("2028-11-03T00:00:00Z")).await;
        assert_eq!(r.details(), [("to".to_string(), "too_far".to_string())]);
        assert_eq!(clock(&app).await["advancedAt"], Value::Null, "a refused advance changes nothing");

        // two at once: one moves the clock, the other meets it ADVANCING
        let (a, b) = tokio::join!(
            app.call("POST", "/sandbox/clock/advance", to("2026-12-01T00:00:00Z")),
            app.call("POST", "/sandbox/clock/advance", to("2026-12-05T00:00:00Z"))
        );
        let mut statuses = [a.status, b.status];
        statuses.sort();
        assert_eq!(statuses, [202, 409], "{:#} {:#}", a.body, b.body);
        let refused = if a.status == 409 { &a } else { &b };
        refused.assert_error(409, "clock_advancing");
        app.call("POST", "/sandbox/clock/advance", to("2027-01-01T00:00:00Z")).await.assert_error(409, "clock_advancing");
        app.run_jobs().await;
        let shown = clock(&app).await;
        assert_eq!(shown["status"], "READY");
        assert!(time(&shown["now"]) > time(&json!(now)) && shown["advancedAt"].is_string(), "{shown:#}");
        app
    })
    .await;
}
