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
        let (user, queue) = (
            r.body["lineItems"][0]["createdLicenseId"].as_str().unwrap().to_string(),
            r.body["lineItems"][1]["createdLicenseId"].as_str().unwrap().to_string(),
        );

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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_license_is_bought_directly_with_its_details() {
    each_backend(|app| async move {
        setup(&app).await;
        // (auk retires on 2026-12-01 by the clock)
        at(&app, "2026-11-26T09:00:00Z");
        let s = new_subscription(&app, "mobile-10gb", "ESIM", "+46701239901", false).await;
        let start = app.store.event_types(app.org).await.unwrap().len();
        let details = json!({"extension": "2041", "seat": {"floor": 3, "desk": "A7"}});
        let body: bullfinch::types::CreateLicenseRequest = serde_json::from_value(json!({
            "customerId": "rid_acme", "productOfferingId": offering(&app, "pbx-user"), "subscriptionId": s,
            "details": details, "metadata": {"crm": "A-17"}
        }))
        .unwrap();
        let seat = json_of(&app.bullfinch().license_create(None, &body).await.unwrap().into_inner());
        // assigned to a subscription not yet activated: PENDING until it is
        assert_eq!((seat["status"].as_str(), &seat["activatedAt"], seat.get("renewsOn")), (Some("PENDING"), &Value::Null, None), "{seat:#}");
        assert_eq!((&seat["details"], &seat["metadata"], &seat["assignedTo"]["subscriptionId"]), (&details, &json!({"crm": "A-17"}), &json!(s)));
        let id = seat["licenseId"].as_str().unwrap().to_string();
        assert_eq!(read(&app, &id).await, seat);
        let told: Vec<String> = app.store.event_types(app.org).await.unwrap().into_iter().skip(start).map(|(t, _)| t).collect();
        assert_eq!(told, ["order.created", "order.statusChanged", "order.submitted", "order.lineItemStatusChanged", "license.created"]);
        assert_eq!(license_events(&app, start).await, [("license.created".to_string(), seat.clone())]);
        // the order shows what was bought, with the license's details
        let order = app.call("GET", &format!("/orders/{}", seat["orderId"].as_str().unwrap()), None).await.body;
        assert_eq!((order["status"].as_str(), &order["lineItems"][0]["createdLicenseId"]), (Some("SUBMITTED"), &json!(id)));
        assert_eq!(order["lineItems"][0]["license"], json!({"details": details, "metadata": {"crm": "A-17"}}));
        // the subscription's activation activates it, and its cycles begin
        let r = app.call("POST", &format!("/subscriptions/{s}/activate"), Some(json!({}))).await;
        assert_eq!(r.status, 200, "{:#}", r.body);
        let active = read(&app, &id).await;
        assert_eq!((active["status"].as_str(), active["renewsOn"].as_str()), (Some("ACTIVE"), Some("2026-12-26")), "{active:#}");

        // on auk, an EXTERNAL_PRODUCT assigned to nothing: ACTIVE at once
        let auk = app.auk_with(&app.new_key(app.org, Some(AUK), false).await);
        let body: auk::types::CreateLicenseRequest =
            serde_json::from_value(json!({"customerId": "rid_acme", "productOfferingId": offering(&app, "device-management")})).unwrap();
        let mdm = json_of(&auk.license_create(None, &body).await.unwrap().into_inner());
        assert_eq!((mdm["status"].as_str(), mdm["type"].as_str()), (Some("ACTIVE"), Some("EXTERNAL_PRODUCT")), "{mdm:#}");
        assert_eq!((mdm["activatedAt"].as_str(), mdm["renewsOn"].as_str()), (Some("2026-11-26"), Some("2026-12-26")));

        // refusals name this body's fields, and change nothing
        let before = app.store.event_types(app.org).await.unwrap().len();
        let post = |body: Value| {
            let app = &app;
            async move { app.call("POST", "/licenses", Some(body)).await }
        };
        let mdm_offering = offering(&app, "device-management");
        let r = post(json!({"customerId": "rid_acme", "productOfferingId": mdm_offering, "subscriptionId": s})).await;
        assert_eq!(r.assert_error(409, "order_validation_failed").details(), [("subscriptionId".to_string(), "not_allowed".to_string())]);
        let r = post(json!({"customerId": "rid_acme", "productOfferingId": offering(&app, "mobile-10gb")})).await;
        assert_eq!(r.assert_error(409, "order_validation_failed").details(), [("productOfferingId".to_string(), "line_item_type_mismatch".to_string())]);
        post(json!({"customerId": "rid_acme", "productOfferingId": uuid::Uuid::new_v4()})).await.assert_error(404, "product_offering_not_found");
        let r = post(json!({"customerId": "rid_acme", "productOfferingId": offering(&app, "pbx-user"), "subscriptionId": "rid_nobody"})).await;
        r.assert_error(404, "subscription_not_found");
        post(json!({"customerId": "rid_nobody", "productOfferingId": mdm_offering})).await.assert_error(404, "customer_not_found");
        let many: serde_json::Map<String, Value> = (0..51).map(|i| (format!("k{i}"), json!(i))).collect();
        let r = post(json!({"customerId": "rid_acme", "productOfferingId": mdm_offering, "details": many})).await;
        assert_eq!(r.assert_error(400, "validation_failed").details(), [("details".to_string(), "too_many_properties".to_string())]);
        post(json!({"customerId": "rid_acme", "productOfferingId": mdm_offering, "currency": "EUR"})).await.assert_error(409, "order_validation_failed");
        assert_eq!(app.store.event_types(app.org).await.unwrap().len(), before, "a refusal records nothing");

        // idempotent: the same key buys once and answers the same
        let key = [("X-Idempotency-Key", "buy-seat-1")];
        let body = json!({"customerId": "rid_acme", "productOfferingId": offering(&app, "pbx-queue")});
        let first = app.call_as(Some(&app.key), "POST", "/licenses", Some(body.clone()), &key).await;
        let again = app.call_as(Some(&app.key), "POST", "/licenses", Some(body), &key).await;
        assert_eq!((first.status, again.status, &first.body), (201, 201, &again.body));
        app
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn roles_decide_who_buys_changes_and_cancels_licenses() {
    each_backend(|app| async move {
        setup(&app).await;
        let seat = license(&app, "pbx-user", None).await;
        let mut users = vec![];
        for role in ["MEMBER", "MANAGER", "ADMIN"] {
            let email = format!("{}@acme.example", role.to_lowercase());
            let r = app.call("POST", "/users", Some(json!({"name": role, "email": email, "customerId": "rid_acme", "role": role}))).await;
            assert_eq!(r.status, 201, "{:#}", r.body);
            users.push(format!("Bearer {}", app.login(&email, Some(&app.key)).await));
        }
        let as_user = |user: &str, method: &'static str, path: String, body: Option<Value>| {
            let (app, bearer) = (&app, user.to_string());
            async move { app.call_as(Some(&app.key), method, &path, body, &[("Authorization", bearer.as_str())]).await }
        };
        let buy = json!({"customerId": "rid_acme", "productOfferingId": offering(&app, "pbx-queue")});
        let pro = json!({"productOfferingId": offering(&app, "pbx-user-pro")});
        let (member, manager, admin) = (&users[0], &users[1], &users[2]);
        // MEMBER reads, and nothing more
        assert_eq!(as_user(member, "GET", format!("/licenses/{seat}"), None).await.status, 200);
        assert_eq!(as_user(member, "GET", format!("/licenses/{seat}/product-offering-options"), None).await.status, 200);
        as_user(member, "POST", "/licenses".into(), Some(buy.clone())).await.assert_error(403, "insufficient_role");
        as_user(member, "PUT", format!("/licenses/{seat}/product-offering-change"), Some(pro.clone())).await.assert_error(403, "insufficient_role");
        // MANAGER buys and changes, does not cancel
        assert_eq!(as_user(manager, "POST", "/licenses".into(), Some(buy)).await.status, 201);
        let r = as_user(manager, "PUT", format!("/licenses/{seat}/product-offering-change"), Some(pro.clone())).await;
        assert_eq!((r.status, r.body["productOffering"]["name"].as_str()), (200, Some("PBX user pro")), "{:#}", r.body);
        as_user(manager, "POST", format!("/licenses/{seat}/cancel"), Some(json!({}))).await.assert_error(403, "insufficient_role");
        // ADMIN cancels
        let r = as_user(admin, "POST", format!("/licenses/{seat}/cancel"), Some(json!({}))).await;
        assert_eq!((r.status, r.body["status"].as_str()), (200, Some("CANCELLED")));
        // another organisation's key finds none of it
        let (_, other) = app.other_org().await;
        for (method, path, body) in
            [("GET", format!("/licenses/{seat}/product-offering-options"), None), ("PUT", format!("/licenses/{seat}/product-offering-change"), Some(pro))]
        {
            app.call_as(Some(&other), method, &path, body, &[]).await.assert_error(404, "license_not_found");
        }
        app
    })
    .await;
}

/// A softphone add-on that carries a PBX seat, in a catalog of its own.
const SOFTPHONE: &str = "
products:
  - {key: softphone, internalName: PBX_SOFTPHONE_ADDON, type: SUBSCRIPTION_ADDON, category: PRODUCT_CATEGORY_EXTERNAL_PRODUCT_ADDON,
     licenseType: PBX_SOFTPHONE}
offerings:
  - {key: softphone, name: Softphone, product: softphone, group: mobile-addons,
     price: {netPriceMinor: 4900, currency: SEK, priceType: RECURRING, billingCycle: {period: MONTHLY, interval: 1}}}
catalogs:
  - {key: telephony, name: Telephony, offerings: [mobile-10gb, softphone]}
assignments:
  - {customer: rid_acme, catalog: telephony}
";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_addon_carries_its_license_and_ends_it() {
    each_backend(|app| async move {
        setup(&app).await;
        app.import_catalog(app.org, SOFTPHONE).await;
        let s = new_subscription(&app, "mobile-10gb", "ESIM", "+46701239931", false).await;
        let r = app.call("POST", &format!("/subscriptions/{s}/activate"), Some(json!({}))).await;
        assert_eq!(r.status, 200, "{:#}", r.body);

        // bought, it carries an ACTIVE license of its product's type, assigned to its subscription
        let from = app.store.event_types(app.org).await.unwrap().len();
        let r = app.call("POST", &format!("/subscriptions/{s}/addons"), Some(json!({"addons": [{"productOfferingId": offering(&app, "softphone")}]}))).await;
        assert_eq!(r.status, 201, "{:#}", r.body);
        let addon = r.body["items"][0].clone();
        let carried = &addon["license"];
        assert_eq!(
            (carried["status"].as_str(), carried["type"].as_str(), carried["productOffering"]["name"].as_str()),
            (Some("ACTIVE"), Some("PBX_SOFTPHONE"), Some("Softphone"))
        );
        let id = carried["licenseId"].as_str().unwrap().to_string();
        let seat = read(&app, &id).await;
        assert_eq!((&seat["assignedTo"]["subscriptionId"], &seat["orderId"]), (&json!(s), &addon["orderId"]));
        assert_eq!(license_events(&app, from).await, [("license.created".to_string(), seat.clone()), ("license.activated".to_string(), seat)]);
        let listed = app.call("GET", &format!("/subscriptions/{s}/addons"), None).await;
        assert_eq!(&listed.body["items"][0]["license"], carried);
        // an add-on line takes no license of its own making
        let r = app
            .call(
                "POST",
                "/orders",
                Some(json!({"customerId": "rid_acme", "lineItems": [
                    {"type": "SUBSCRIPTION_ADDON", "productOfferingId": offering(&app, "softphone"), "subscriptionId": s, "license": {"details": {}}}
                ]})),
            )
            .await;
        assert_eq!(r.assert_error(409, "order_validation_failed").details(), [("lineItems[0].license".to_string(), "not_allowed".to_string())]);

        // cancelled now, it ends its license in the same request
        let from = app.store.event_types(app.org).await.unwrap().len();
        let addon_id = addon["subscriptionAddonId"].as_str().unwrap();
        let r = app.call("POST", &format!("/subscriptions/{s}/addons/cancel"), Some(json!({"subscriptionAddonIds": [addon_id]}))).await;
        assert_eq!((r.status, r.body["items"][0]["license"]["status"].as_str()), (200, Some("CANCELLED")), "{:#}", r.body);
        let ended = read(&app, &id).await;
        assert_eq!(ended["status"], "CANCELLED");
        assert_eq!(license_events(&app, from).await, [("license.cancelled".to_string(), ended.clone()), ("license.ended".to_string(), ended)]);
        // the order line names the license it created
        let order = app.call("GET", &format!("/orders/{}", addon["orderId"].as_str().unwrap()), None).await.body;
        assert_eq!(order["lineItems"][0]["createdLicenseId"], json!(id));

        // the subscription's cancellation ends a live one's license once, and moves the ended one no more
        let r = app.call("POST", &format!("/subscriptions/{s}/addons"), Some(json!({"addons": [{"productOfferingId": offering(&app, "softphone")}]}))).await;
        assert_eq!(r.status, 201, "{:#}", r.body);
        let second = r.body["items"][0]["license"]["licenseId"].as_str().unwrap().to_string();
        let from = app.store.event_types(app.org).await.unwrap().len();
        let r = app.call("POST", &format!("/subscriptions/{s}/cancel"), Some(json!({}))).await;
        assert_eq!(r.status, 200, "{:#}", r.body);
        let gone = read(&app, &second).await;
        assert_eq!(gone["status"], "CANCELLED");
        assert_eq!(license_events(&app, from).await, [("license.cancelled".to_string(), gone.clone()), ("license.ended".to_string(), gone)]);
        assert_eq!(read(&app, &id).await["status"], "CANCELLED");
        app
    })
    .await;
}
