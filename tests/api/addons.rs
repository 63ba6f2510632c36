//! Add-ons on both revisions and both databases: the add-on options of a
//! subscription, and that an order refuses an add-on exactly when the
//! options leave it out (a property over generated catalogs); the
//! lifecycle: ACTIVE with the subscription (INSTANT) or at first use
//! (FIRST_USE), EXPIRED by the clock, CANCELLED with the subscription;
//! adding add-ons directly, cancelling them now or at period end, and
//! changing their offering now or at the subscription's renewal.

use crate::harness::*;
use crate::lifecycle::new_subscription;
use crate::orders::{offering, setup};
use crate::usage::{active, report, usage};
use proptest::prelude::*;
use serde_json::{Value, json};
use switchboard::store::UsageKind;

const AUK: &str = "2026-08-21.auk";

/// An order of Acme adding the offering `offering_id` to subscription `id`.
async fn order_addon(app: &TestApp, id: &str, offering_id: &str) -> Raw {
    let line = json!({"type": "SUBSCRIPTION_ADDON", "productOfferingId": offering_id, "subscriptionId": id});
    app.call("POST", "/orders", Some(json!({"customerId": "rid_acme", "lineItems": [line]}))).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn add_on_options_are_the_add_ons_of_the_subscriptions_category_in_the_customers_catalog() {
    each_backend(|app| async move {
        setup(&app).await;
        let mobile = new_subscription(&app, "mobile-10gb", "ESIM", "+46701239001", false).await;
        let bullfinch = app.bullfinch().subscription_addon_options(&mobile.parse().unwrap()).await.unwrap().into_inner();
        let listed: Vec<String> = bullfinch.items.iter().map(|o| o.name.to_string()).collect();
        // the travel package's group is of travel eSIMs: not for a mobile plan
        assert_eq!(listed, ["Extra data 5 GB", "USA week pass"]);
        assert!(bullfinch.items.iter().all(|o| o.product.type_ == bullfinch::types::ProductType::SubscriptionAddon));
        let auk = app.auk_with(&app.new_key(app.org, Some(AUK), false).await);
        let old = auk.subscription_addon_options(&mobile.parse().unwrap()).await.unwrap().into_inner();
        assert_eq!(old.items.iter().map(|o| o.name.to_string()).collect::<Vec<_>>(), listed);
        assert_eq!(json_of(&old)["items"][0]["price"]["netPrice"], 49.0, "auk's prices in major units too");

        // an order refuses what the list leaves out, and takes what it lists
        let refused = order_addon(&app, &mobile, &offering(&app, "travel-eu-5gb")).await;
        refused.assert_error(409, "order_validation_failed");
        assert!(refused.details().contains(&("lineItems[0].productOfferingId".into(), "addon_not_allowed".into())), "{:?}", refused.details());
        assert_eq!(order_addon(&app, &mobile, &offering(&app, "extra-data-5gb")).await.status, 201);

        // a data SIM has no add-on group; a cancelled subscription has none
        let data = new_subscription(&app, "data-sim-20gb", "ESIM", "+46701239002", false).await;
        let r = app.call("GET", &format!("/subscriptions/{data}/addon-options"), None).await;
        assert_eq!((r.status, &r.body), (200, &json!({"items": []})));
        let r = app.call("POST", &format!("/subscriptions/{mobile}/cancel"), Some(json!({}))).await;
        assert_eq!(r.status, 200, "{:#}", r.body);
        let r = app.call("GET", &format!("/subscriptions/{mobile}/addon-options"), None).await;
        assert_eq!((r.status, &r.body), (200, &json!({"items": []})));

        // another organisation's key: 404; none: 401
        let (_, other) = app.other_org().await;
        app.call_as(Some(&other), "GET", &format!("/subscriptions/{data}/addon-options"), None, &[]).await.assert_error(404, "subscription_not_found");
        app.call_as(None, "GET", &format!("/subscriptions/{data}/addon-options"), None, &[]).await.assert_error(401, "unauthorized");
        app
    })
    .await;
}

/// Orders and submits add-ons `keys` for subscription `id`; their ids.
async fn add(app: &TestApp, id: &str, keys: &[&str]) -> Vec<String> {
    let lines: Vec<Value> = keys.iter().map(|k| json!({"type": "SUBSCRIPTION_ADDON", "productOfferingId": offering(app, k), "subscriptionId": id})).collect();
    let r = app.call("POST", "/orders", Some(json!({"customerId": "rid_acme", "lineItems": lines}))).await;
    assert_eq!(r.status, 201, "{:#}", r.body);
    let r = app.call("POST", &format!("/orders/{}/submit", r.body["orderId"].as_str().unwrap()), None).await;
    assert_eq!(r.status, 200, "{:#}", r.body);
    r.body["lineItems"].as_array().unwrap().iter().map(|l| l["createdSubscriptionAddonId"].as_str().unwrap().to_string()).collect()
}

/// The add-ons of subscription `id`, by add-on id.
async fn addons(app: &TestApp, id: &str) -> std::collections::HashMap<String, Value> {
    let r = app.call("GET", &format!("/subscriptions/{id}/addons"), None).await;
    assert_eq!(r.status, 200, "{:#}", r.body);
    r.body["items"].as_array().unwrap().iter().map(|a| (a["subscriptionAddonId"].as_str().unwrap().to_string(), a.clone())).collect()
}

/// A date-time to the second.
fn second(v: &Value) -> &str {
    &v.as_str().unwrap_or_else(|| panic!("not a date-time: {v}"))[..19]
}

fn updated_events(events: &[(String, Value)]) -> Vec<Value> {
    events.iter().filter(|(t, _)| t == "subscription.updated").map(|(_, d)| d.clone()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_add_on_lives_with_its_subscription_until_its_validity_runs_out() {
    each_backend(|app| async move {
        setup(&app).await;
        at(&app, "2030-01-10T10:00:01Z");
        let s = new_subscription(&app, "mobile-10gb", "ESIM", "+46701239201", false).await;
        let ids = add(&app, &s, &["extra-data-5gb", "abroad-usa"]).await;
        let (extra, abroad) = (&ids[0], &ids[1]);
        let before = addons(&app, &s).await;
        assert_eq!((&before[extra]["status"], &before[abroad]["status"]), (&json!("PENDING"), &json!("PENDING")));
        assert!(before[extra].get("activatedAt").is_none());

        // the subscription's activation activates its INSTANT add-ons, told by its own events
        let events = app.store.event_types(app.org).await.unwrap().len();
        let r = app.call("POST", &format!("/subscriptions/{s}/activate"), Some(json!({}))).await;
        assert_eq!(r.status, 200, "{:#}", r.body);
        let now = addons(&app, &s).await;
        assert_eq!(now[extra]["status"], "ACTIVE");
        assert_eq!(second(&now[extra]["activatedAt"]), "2030-01-10T10:00:01");
        assert_eq!(second(&now[extra]["expiresAt"]), "2030-02-09T10:00:01", "30 validity days");
        assert_eq!(second(&now[abroad]["expiresAt"]), "2030-01-17T10:00:01", "7 validity days");
        let told: Vec<String> = app.store.event_types(app.org).await.unwrap().into_iter().skip(events).map(|(t, _)| t).collect();
        assert_eq!(told, ["subscription.activated", "subscription.first_activated"]);

        // seven days on, the job expires the week pass and tells it once,
        // before anyone reads it
        at(&app, "2030-01-17T10:00:02Z");
        app.run_jobs().await;
        let all = app.store.event_types(app.org).await.unwrap();
        let updated = updated_events(&all[events..]);
        assert_eq!(updated.len(), 1, "{updated:#?}");
        let now = addons(&app, &s).await;
        assert_eq!((now[abroad]["status"].as_str(), second(&now[abroad]["endedAt"])), (Some("EXPIRED"), "2030-01-17T10:00:01"));
        assert_eq!(now[extra]["status"], "ACTIVE");
        assert_eq!(updated_events(&app.store.event_types(app.org).await.unwrap()[events..]).len(), 1, "the read tells nothing more");
        let read = json_of(&app.bullfinch().subscription_view(&s.parse().unwrap()).await.unwrap().into_inner());
        assert_eq!(updated[0], read, "the payload is the subscription as read");

        // the subscription's cancellation ends the add-ons still in use; expired ones stay so
        let r = app.call("POST", &format!("/subscriptions/{s}/cancel"), Some(json!({}))).await;
        assert_eq!(r.status, 200, "{:#}", r.body);
        let now = addons(&app, &s).await;
        assert_eq!((now[extra]["status"].as_str(), second(&now[extra]["endedAt"])), (Some("CANCELLED"), "2030-01-17T10:00:02"));
        assert_eq!(now[abroad]["status"], "EXPIRED");
        // and a cancelled add-on does not expire later
        at(&app, "2030-03-01T00:00:01Z");
        app.run_jobs().await;
        assert_eq!(addons(&app, &s).await[extra]["status"], "CANCELLED");
        app
    })
    .await;
}

/// An add-on's own due work before its subscription's move happens
/// first: a pass whose validity ran out before the subscription ended
/// (no job or read came between) stays EXPIRED, dated at its expiry.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_add_on_expired_before_its_subscription_ended_stays_expired() {
    each_backend(|app| async move {
        setup(&app).await;
        at(&app, "2030-01-10T10:00:01Z");
        let s = new_subscription(&app, "mobile-10gb", "ESIM", "+46701239202", false).await;
        let ids = add(&app, &s, &["extra-data-5gb", "abroad-usa"]).await;
        let (extra, abroad) = (&ids[0], &ids[1]);
        let r = app.call("POST", &format!("/subscriptions/{s}/activate"), Some(json!({}))).await;
        assert_eq!(r.status, 200, "{:#}", r.body);
        // (a second or so after 10:00:01 on a busy machine)
        let activated: chrono::DateTime<chrono::Utc> = addons(&app, &s).await[abroad]["activatedAt"].as_str().unwrap().parse().unwrap();
        let expiry = (activated + chrono::Duration::days(7)).format("%Y-%m-%dT%H:%M:%S").to_string();
        assert!(expiry.starts_with("2030-01-17T10:00:0"), "{expiry}");
        // the week pass runs out on the 17th; nothing runs or reads it
        // until the subscription is cancelled on the 20th
        at(&app, "2030-01-20T09:00:00Z");
        let r = app.call("POST", &format!("/subscriptions/{s}/cancel"), Some(json!({}))).await;
        assert_eq!(r.status, 200, "{:#}", r.body);
        let stored = app.store.addon(app.org, abroad.parse().unwrap()).await.unwrap().unwrap();
        assert_eq!(stored.ended_at.map(|t| t.format("%Y-%m-%dT%H:%M:%S").to_string()).as_deref(), Some(expiry.as_str()), "ended at its expiry");
        let now = addons(&app, &s).await;
        assert_eq!((now[abroad]["status"].as_str(), second(&now[abroad]["endedAt"])), (Some("EXPIRED"), expiry.as_str()));
        assert_eq!((now[extra]["status"].as_str(), second(&now[extra]["endedAt"])), (Some("CANCELLED"), "2030-01-20T09:00:00"));
        app
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_first_use_add_on_becomes_active_with_the_first_usage_and_counts_it() {
    each_backend(|app| async move {
        setup(&app).await;
        // (auk, retired on 2026-12-01 by the clock, still answers now)
        let s = active(&app, "travel-esim", "+46701239301").await;
        let sid = s["subscriptionId"].as_str().unwrap();
        let ids = add(&app, sid, &["travel-eu-5gb"]).await;
        let auk = app.auk_with(&app.new_key(app.org, Some(AUK), false).await);
        let old = json_of(&auk.subscription_addon_list(&sid.parse().unwrap()).await.unwrap().into_inner());
        // FIRST_USE waits for usage, though the subscription is ACTIVATED
        assert_eq!(old["items"][0]["status"], "PENDING", "{old:#}");
        assert_eq!(old["items"][0]["productOffering"]["name"], "Europe 5 GB, 30 days");

        let events = app.store.event_types(app.org).await.unwrap().len();
        app.clock.advance(chrono::Duration::hours(2));
        let used_at = app.clock.now();
        report(&app, &s, "u1", UsageKind::Data, 100 * 1024, (0, None)).await;
        let now = addons(&app, sid).await;
        let package = &now[&ids[0]];
        assert_eq!(package["status"], "ACTIVE");
        let activated: chrono::DateTime<chrono::Utc> = package["activatedAt"].as_str().unwrap().parse().unwrap();
        // (the test clock runs on from where it is set)
        assert!(activated >= used_at && activated - used_at < chrono::Duration::seconds(5), "active from the usage's time: {activated}");
        let u = usage(&app, &s, None).await;
        assert_eq!(u["packages"][0]["data"], json!({"unit": "MB", "used": 100.0, "included": 5120.0, "remaining": 5020.0}));
        let all = app.store.event_types(app.org).await.unwrap();
        assert_eq!(updated_events(&all[events..]).len(), 1, "the activation is told");
        // a second record activates nothing more
        report(&app, &s, "u2", UsageKind::Data, 1024, (0, None)).await;
        assert_eq!(updated_events(&app.store.event_types(app.org).await.unwrap()[events..]).len(), 1);
        app
    })
    .await;
}

/// POST /subscriptions/{id}/addons/cancel by the key alone.
async fn cancel(app: &TestApp, id: &str, addons: &[&String], at_period_end: bool) -> Raw {
    app.call("POST", &format!("/subscriptions/{id}/addons/cancel"), Some(json!({"subscriptionAddonIds": addons, "atPeriodEnd": at_period_end}))).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn add_ons_are_added_directly_and_cancelled_now_or_at_the_end_of_their_period() {
    each_backend(|app| async move {
        setup(&app).await;
        let pending = new_subscription(&app, "mobile-10gb", "ESIM", "+46701239401", false).await;
        // bought as an order is, once per idempotency key
        let body = json!({"addons": [{"productOfferingId": offering(&app, "extra-data-5gb")}, {"productOfferingId": offering(&app, "abroad-usa")}]});
        let key = [("X-Idempotency-Key", "add-1")];
        let path = format!("/subscriptions/{pending}/addons");
        let first = app.call_as(Some(&app.key), "POST", &path, Some(body.clone()), &key).await;
        assert_eq!(first.status, 201, "{:#}", first.body);
        let again = app.call_as(Some(&app.key), "POST", &path, Some(body), &key).await;
        assert_eq!((again.status, &again.body), (201, &first.body), "a replay");
        let items = first.body["items"].as_array().unwrap();
        assert_eq!(items.iter().map(|a| a["status"].as_str().unwrap()).collect::<Vec<_>>(), ["PENDING", "PENDING"]);
        let order = app.call("GET", &format!("/orders/{}", items[0]["orderId"].as_str().unwrap()), None).await;
        assert_eq!((order.body["status"].as_str(), order.body["lineItems"].as_array().unwrap().len()), (Some("SUBMITTED"), 2), "{:#}", order.body);
        assert_eq!(addons(&app, &pending).await.len(), 2, "once");
        let (extra, abroad) = (items[0]["subscriptionAddonId"].as_str().unwrap().to_string(), items[1]["subscriptionAddonId"].as_str().unwrap().to_string());
        let refused = app.call("POST", &path, Some(json!({"addons": [{"productOfferingId": offering(&app, "travel-eu-5gb")}]}))).await;
        refused.assert_error(409, "order_validation_failed");
        assert_eq!(refused.details(), [("addons[0].productOfferingId".to_string(), "addon_not_allowed".to_string())]);
        let (_, other) = app.other_org().await;
        app.call_as(Some(&other), "POST", &path, Some(json!({"addons": [{"productOfferingId": offering(&app, "extra-data-5gb")}]})), &[])
            .await
            .assert_error(404, "subscription_not_found");

        // a PENDING add-on has no period: cancelled now only
        cancel(&app, &pending, &[&abroad], true).await.assert_error(409, "addon_pending");
        let r = cancel(&app, &pending, &[&abroad], false).await;
        assert_eq!((r.status, r.body["items"][0]["status"].as_str()), (200, Some("CANCELLED")), "{:#}", r.body);

        // on an ACTIVATED subscription an INSTANT add-on is ACTIVE at once
        let r = app.call("POST", &format!("/subscriptions/{pending}/activate"), Some(json!({}))).await;
        assert_eq!(r.status, 200, "{:#}", r.body);
        let s = pending;
        let request: bullfinch::types::CreateSubscriptionAddonsRequest =
            serde_json::from_value(json!({"addons": [{"productOfferingId": offering(&app, "abroad-usa")}]})).unwrap();
        let more = app.bullfinch().subscription_addon_create(&s.parse().unwrap(), None, &request).await.unwrap();
        assert_eq!(more.status().as_u16(), 201);
        let more = json_of(&more.into_inner());
        assert_eq!(more["items"][0]["status"], "ACTIVE", "{more:#}");
        let week = more["items"][0]["subscriptionAddonId"].as_str().unwrap().to_string();

        // at period end: ACTIVE until its expiry, told now by subscription.updated
        let events = app.store.event_types(app.org).await.unwrap().len();
        let request: bullfinch::types::CancelSubscriptionAddonsRequest =
            serde_json::from_value(json!({"subscriptionAddonIds": [extra], "atPeriodEnd": true})).unwrap();
        let later = app.bullfinch().subscription_addon_cancel(&s.parse().unwrap(), None, &request).await.unwrap().into_inner();
        let later = json_of(&later.items[0]);
        assert_eq!((later["status"].as_str(), later["pendingStatus"].as_str()), (Some("ACTIVE"), Some("CANCELLED")), "{later:#}");
        assert_eq!(later["pendingStatusAt"], later["expiresAt"]);
        assert!(later["cancelledAt"].is_string());
        let all = app.store.event_types(app.org).await.unwrap();
        assert_eq!(updated_events(&all[events..]).len(), 1);
        // auk shows the same (auk retires on 2026-12-01 by the clock)
        let auk = app.auk_with(&app.new_key(app.org, Some(AUK), false).await);
        let old = json_of(&auk.subscription_addon_list(&s.parse().unwrap()).await.unwrap().into_inner());
        assert_eq!(old["items"][0]["pendingStatus"], "CANCELLED", "{old:#}");

        // all or none: one refused add-on refuses the request
        cancel(&app, &s, &[&week, &abroad], false).await.assert_error(409, "addon_cancelled");
        assert_eq!(addons(&app, &s).await[&week]["status"], "ACTIVE");
        cancel(&app, &s, &[&week, &week], false).await.assert_error(400, "validation_failed");
        let stranger = uuid::Uuid::new_v4().to_string();
        cancel(&app, &s, &[&stranger], false).await.assert_error(404, "subscription_addon_not_found");

        // the week pass expires; the data package is cancelled at its period's end
        app.clock.advance(chrono::Duration::days(31));
        app.run_jobs().await;
        let now = addons(&app, &s).await;
        assert_eq!(now[&week]["status"], "EXPIRED");
        assert_eq!((now[&extra]["status"].as_str(), &now[&extra]["endedAt"]), (Some("CANCELLED"), &later["pendingStatusAt"]), "{:#}", now[&extra]);
        assert!(now[&extra].get("pendingStatus").is_none());
        app
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn members_read_managers_add_admins_cancel() {
    each_backend(|app| async move {
        setup(&app).await;
        let s = new_subscription(&app, "mobile-10gb", "ESIM", "+46701239501", false).await;
        let mut tokens = std::collections::HashMap::new();
        for role in ["MEMBER", "MANAGER", "ADMIN"] {
            let email = format!("{}@acme.example", role.to_lowercase());
            let r = app.call("POST", "/users", Some(json!({"name": role, "email": email, "customerId": "rid_acme", "role": role}))).await;
            assert_eq!(r.status, 201, "{:#}", r.body);
            tokens.insert(role, format!("Bearer {}", app.login(&email, Some(&app.key)).await));
        }
        let as_user = |role: &'static str, method: &'static str, op: &'static str, body: Option<Value>| {
            let auth = tokens[role].clone();
            let (app, s) = (&app, s.clone());
            async move { app.call_as(Some(&app.key), method, &format!("/subscriptions/{s}/{op}"), body, &[("Authorization", auth.as_str())]).await }
        };
        let add = json!({"addons": [{"productOfferingId": offering(&app, "extra-data-5gb")}]});
        for op in ["addons", "addon-options"] {
            assert_eq!(as_user("MEMBER", "GET", op, None).await.status, 200);
        }
        as_user("MEMBER", "POST", "addons", Some(add.clone())).await.assert_error(403, "insufficient_role");
        let added = as_user("MANAGER", "POST", "addons", Some(add)).await;
        assert_eq!(added.status, 201, "{:#}", added.body);
        let cancel = json!({"subscriptionAddonIds": [added.body["items"][0]["subscriptionAddonId"]]});
        as_user("MANAGER", "POST", "addons/cancel", Some(cancel.clone())).await.assert_error(403, "insufficient_role");
        assert_eq!(as_user("ADMIN", "POST", "addons/cancel", Some(cancel)).await.status, 200);
        app
    })
    .await;
}

/// Two more extra-data packages, cheaper and pricier than the demo's.
pub const MORE_DATA: &str = "products:
  - {key: extra-2gb, internalName: EXTRA_DATA_2GB, type: SUBSCRIPTION_ADDON, category: PRODUCT_CATEGORY_EXTRA_DATA, features: {dataMb: 2048, validityDays: 60}}
  - {key: extra-20gb, internalName: EXTRA_DATA_20GB, type: SUBSCRIPTION_ADDON, category: PRODUCT_CATEGORY_EXTRA_DATA, features: {dataMb: 20480, validityDays: 60}}
offerings:
  - {key: extra-data-2gb, name: Extra data 2 GB, product: extra-2gb, group: mobile-addons, price: {netPriceMinor: 2900, currency: SEK, priceType: ONE_TIME}}
  - {key: extra-data-20gb, name: Extra data 20 GB, product: extra-20gb, group: mobile-addons, price: {netPriceMinor: 14900, currency: SEK, priceType: ONE_TIME}}
catalogs:
  - {key: business, name: Business, offerings: [mobile-10gb, mobile-unlimited, data-sim-20gb, broadband-100, iot-basic, travel-esim, travel-eu-5gb,
                extra-data-5gb, abroad-usa, pbx-user, pbx-queue, device-management, sim-card, extra-data-2gb, extra-data-20gb]}
";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_add_on_changes_offering_at_once_when_pricier_and_at_the_renewal_when_cheaper() {
    each_backend(|app| async move {
        setup(&app).await;
        app.import_catalog(app.org, MORE_DATA).await;
        at(&app, "2030-01-10T10:00:01Z");
        let s = active(&app, "mobile-10gb", "+46701239601").await;
        let sid = s["subscriptionId"].as_str().unwrap().to_string();
        let x = add(&app, &sid, &["extra-data-5gb"]).await.remove(0);
        let current = offering(&app, "extra-data-5gb");

        let listed = app.bullfinch().subscription_addon_product_offering_options(&sid.parse().unwrap(), &current.parse().unwrap()).await.unwrap();
        let listed = json_of(&listed.into_inner());
        let options: Vec<(String, String, String)> = listed["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| {
                (
                    o["productOffering"]["name"].as_str().unwrap().into(),
                    o["changeSchedule"].as_str().unwrap().into(),
                    o["changeScheduleDate"].as_str().unwrap().into(),
                )
            })
            .collect();
        assert_eq!(
            options,
            [
                ("Extra data 2 GB".to_string(), "NEXT_RENEWAL_DAY".to_string(), "2030-02-10".to_string()),
                ("Extra data 20 GB".into(), "INSTANT".into(), "2030-01-10".into()),
            ]
        );
        app.call("GET", &format!("/subscriptions/{sid}/addons/product-offering-options"), None).await.assert_error(400, "validation_failed");
        let other = offering(&app, "abroad-usa");
        app.call("GET", &format!("/subscriptions/{sid}/addons/product-offering-options?currentProductOfferingId={other}"), None)
            .await
            .assert_error(404, "subscription_addon_not_found");

        let change = |to: &str, schedule: Option<&str>| {
            let mut body = json!({"subscriptionAddonId": x, "productOfferingId": offering(&app, to)});
            if let Some(s) = schedule {
                body["changeSchedule"] = json!(s);
            }
            let (app, sid) = (&app, sid.clone());
            async move { app.call("PUT", &format!("/subscriptions/{sid}/addons/product-offering-change"), Some(body)).await }
        };
        // a cheaper one waits for the renewal, told by subscription.updated
        let events = app.store.event_types(app.org).await.unwrap().len();
        let r = change("extra-data-2gb", None).await;
        assert_eq!(r.status, 200, "{:#}", r.body);
        assert_eq!(r.body["productOffering"]["name"], "Extra data 5 GB");
        assert_eq!(r.body["pendingProductOffering"]["productOffering"]["name"], "Extra data 2 GB");
        assert_eq!(
            (r.body["pendingProductOffering"]["changeSchedule"].as_str(), r.body["pendingProductOffering"]["scheduledAt"].as_str()),
            (Some("NEXT_RENEWAL_DAY"), Some("2030-02-10T00:00:00Z"))
        );
        assert_eq!(updated_events(&app.store.event_types(app.org).await.unwrap()[events..]).len(), 1);
        let again = change("extra-data-2gb", None).await;
        assert_eq!(again.body, r.body, "asked again: already so");
        assert_eq!(updated_events(&app.store.event_types(app.org).await.unwrap()[events..]).len(), 1, "and nothing recorded");
        change("extra-data-2gb", Some("INSTANT")).await.assert_error(409, "change_schedule_not_allowed");
        change("travel-eu-5gb", None).await.assert_error(409, "offering_change_not_allowed");
        // its own offering withdraws the change
        let r = change("extra-data-5gb", None).await;
        assert!(r.body.get("pendingProductOffering").is_none(), "{:#}", r.body);
        // a pricier one at once; its validity follows the new offering from the activation
        let request: bullfinch::types::AddonOfferingChangeRequest =
            serde_json::from_value(json!({"subscriptionAddonId": x, "productOfferingId": offering(&app, "extra-data-20gb")})).unwrap();
        let r = json_of(&app.bullfinch().subscription_addon_product_offering_change(&sid.parse().unwrap(), &request).await.unwrap().into_inner());
        assert_eq!((r["productOffering"]["name"].as_str(), second(&r["expiresAt"])), (Some("Extra data 20 GB"), "2030-03-11T10:00:01"));

        // the scheduled change is applied on its date
        let r = change("extra-data-2gb", None).await;
        assert_eq!(r.body["pendingProductOffering"]["productOffering"]["name"], "Extra data 2 GB", "{:#}", r.body);
        at(&app, "2030-02-10T00:00:01Z");
        app.run_jobs().await;
        let now = addons(&app, &sid).await;
        assert_eq!((now[&x]["productOffering"]["name"].as_str(), now[&x]["status"].as_str()), (Some("Extra data 2 GB"), Some("ACTIVE")));
        assert!(now[&x].get("pendingProductOffering").is_none());
        app
    })
    .await;
}

/// One offering of a generated catalog: what decides whether a mobile
/// subscription billed in SEK may be given it.
#[derive(Debug, Clone)]
struct Generated {
    addon: bool,
    mobile_group: bool,
    available: bool,
    in_catalog: bool,
    in_sek: bool,
}

fn generated() -> impl Strategy<Value = Vec<Generated>> {
    let one = (any::<bool>(), any::<bool>(), any::<bool>(), any::<bool>(), any::<bool>())
        .prop_map(|(addon, mobile_group, available, in_catalog, in_sek)| Generated { addon, mobile_group, available, in_catalog, in_sek });
    proptest::collection::vec(one, 1..8)
}

/// The catalog file of `offerings`, beside a mobile plan `plan` in the
/// default catalog.
fn catalog(offerings: &[Generated]) -> String {
    let mut products = String::new();
    let mut entries = String::new();
    let mut listed = vec!["plan".to_string()];
    for (i, g) in offerings.iter().enumerate() {
        products += &if g.addon {
            format!("  - {{key: p{i}, internalName: P{i}, type: SUBSCRIPTION_ADDON, category: PRODUCT_CATEGORY_EXTRA_DATA}}\n")
        } else {
            format!("  - {{key: p{i}, internalName: P{i}, type: LICENSE, category: PRODUCT_CATEGORY_EXTERNAL_PRODUCT, licenseType: PBX_USER_LEVEL}}\n")
        };
        let (group, status) = (if g.mobile_group { "mobile-addons" } else { "travel" }, if g.available { "AVAILABLE" } else { "ARCHIVED" });
        let price =
            if g.in_sek { "{netPriceMinor: 100, currency: SEK, priceType: ONE_TIME}" } else { "{netPriceMinor: 10, currency: EUR, priceType: ONE_TIME}" };
        entries += &format!("  - {{key: o{i}, name: Offering {i}, status: {status}, product: p{i}, group: {group}, price: {price}}}\n");
        if g.in_catalog {
            listed.push(format!("o{i}"));
        }
    }
    format!(
        "groups:\n  - {{key: mobile, name: Mobile, category: PRODUCT_CATEGORY_SUBSCRIPTION_CELL}}\n\
         \x20 - {{key: mobile-addons, name: Mobile add-ons, category: PRODUCT_CATEGORY_SUBSCRIPTION_CELL}}\n\
         \x20 - {{key: travel, name: Travel, category: PRODUCT_CATEGORY_TRAVEL_ESIM}}\n\
         products:\n  - {{key: cell, internalName: CELL, type: SUBSCRIPTION, category: PRODUCT_CATEGORY_SUBSCRIPTION_CELL}}\n{products}\
         offerings:\n  - {{key: plan, name: Plan, product: cell, group: mobile,\n\
         \x20   price: {{netPriceMinor: 100, currency: SEK, priceType: RECURRING, billingCycle: {{period: MONTHLY, interval: 1}}}}}}\n{entries}\
         catalogs:\n  - {{key: all, name: All, default: true, offerings: [{}]}}\n",
        listed.join(", ")
    )
}

/// For a generated catalog: the options listed for a subscription, and
/// for each generated offering whether an order may add it.
async fn listed_and_orderable(app: &TestApp, offerings: &[Generated]) -> (Vec<bool>, Vec<bool>) {
    let (org, key) = app.other_org().await;
    app.import_catalog(org, &catalog(offerings)).await;
    let call = |method: &'static str, path: String, body: Option<Value>| {
        let key = key.clone();
        async move { app.call_as(Some(&key), method, &path, body, &[]).await }
    };
    let customer = json!({"customerType": "CONSUMER", "name": "Eva", "contact": {}, "billing": {"method": "EMAIL_INVOICE", "email": "eva@example.com", "currency": "SEK"}});
    let r = call("POST", "/customers".into(), Some(customer)).await;
    assert_eq!(r.status, 201, "{:#}", r.body);
    let plan = switchboard::domain::catalog::entity_id(org, "offering", "plan");
    // a number of its own each time: a live number is held installation-wide
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(9100);
    let msisdn = format!("+4670123{:04}", NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed));
    let body = json!({"customerId": r.body["customerId"], "productOfferingId": plan, "subscription": {"simType": "ESIM", "msisdn": msisdn}});
    let r = call("POST", "/subscriptions".into(), Some(body)).await;
    assert_eq!(r.status, 201, "{:#}", r.body);
    let (subscription, customer) = (r.body["subscriptionId"].clone(), r.body["customer"]["customerId"].clone());
    let options = call("GET", format!("/subscriptions/{}/addon-options", subscription.as_str().unwrap()), None).await;
    let ids: Vec<&str> = options.body["items"].as_array().unwrap().iter().map(|o| o["productOfferingId"].as_str().unwrap()).collect();
    let mut listed = vec![];
    let mut orderable = vec![];
    for i in 0..offerings.len() {
        let id = switchboard::domain::catalog::entity_id(org, "offering", &format!("o{i}")).to_string();
        listed.push(ids.contains(&id.as_str()));
        let line = json!({"type": "SUBSCRIPTION_ADDON", "productOfferingId": id, "subscriptionId": subscription});
        let r = call("POST", "/orders".into(), Some(json!({"customerId": customer, "lineItems": [line]}))).await;
        assert!(r.status == 201 || r.body["internalCode"] == "order_validation_failed", "{:#}", r.body);
        orderable.push(r.status == 201);
    }
    (listed, orderable)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_order_refuses_an_add_on_exactly_when_the_options_leave_it_out() {
    each_backend(|app| async move {
        let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig { cases: 12, ..ProptestConfig::default() });
        let handle = tokio::runtime::Handle::current();
        let result = tokio::task::block_in_place(|| {
            runner.run(&generated(), |offerings| {
                let (listed, orderable) = handle.block_on(listed_and_orderable(&app, &offerings));
                prop_assert_eq!(&listed, &orderable, "{:?}", offerings);
                // and the rule is the one documented
                let expected: Vec<bool> = offerings.iter().map(|g| g.addon && g.mobile_group && g.available && g.in_catalog && g.in_sek).collect();
                prop_assert_eq!(listed, expected);
                Ok(())
            })
        });
        result.unwrap();
        app
    })
    .await;
}
