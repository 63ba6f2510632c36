//! What order submission creates, read back: subscriptions (by id and
//! `rid_`), their add-ons and licenses, with their filters and pages, on
//! both revisions; each read equals the event that told of it; users see
//! only their own customers' rows.

use crate::harness::*;
use crate::orders::{offering, setup};
use serde_json::{Value, json};

/// Submits an order of `lines` for Acme; its line items as answered.
async fn submit(app: &TestApp, lines: Value) -> Vec<Value> {
    let r = app.call("POST", "/orders", Some(json!({"customerId": "rid_acme", "lineItems": lines}))).await;
    assert_eq!(r.status, 201, "{:#}", r.body);
    let r = app.call("POST", &format!("/orders/{}/submit", r.body["orderId"].as_str().unwrap()), None).await;
    assert_eq!(r.status, 200, "{:#}", r.body);
    r.body["lineItems"].as_array().unwrap().clone()
}

/// The last recorded event of this type.
async fn last_event(app: &TestApp, event: &str) -> Value {
    let recorded = app.store.event_types(app.org).await.unwrap();
    recorded.into_iter().rfind(|(t, _)| t == event).unwrap_or_else(|| panic!("no {event}")).1
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn submitted_orders_are_readable_as_subscriptions_add_ons_and_licenses() {
    each_backend(|app| async move {
        setup(&app).await;
        let first = submit(
            &app,
            json!([
                {"type": "SUBSCRIPTION", "productOfferingId": offering(&app, "mobile-10gb"),
                 "subscription": {"simType": "ESIM", "msisdn": "+46701234567", "referenceId": "sub-1"}},
                {"type": "SUBSCRIPTION", "productOfferingId": offering(&app, "data-sim-20gb"),
                 "subscription": {"simType": "PSIM", "msisdn": "+46709876543", "displayName": "Sensor hub"}},
                {"type": "LICENSE", "productOfferingId": offering(&app, "pbx-user")},
            ]),
        )
        .await;
        let mobile = first[0]["createdSubscriptionId"].as_str().unwrap().to_string();
        let data = first[1]["createdSubscriptionId"].as_str().unwrap().to_string();
        let user_license = first[2]["createdLicenseId"].as_str().unwrap().to_string();
        let created = last_event(&app, "license.created").await;
        let second = submit(
            &app,
            json!([
                {"type": "SUBSCRIPTION_ADDON", "productOfferingId": offering(&app, "extra-data-5gb"), "subscriptionId": "rid_sub-1"},
                {"type": "LICENSE", "productOfferingId": offering(&app, "pbx-queue"), "subscriptionId": "rid_sub-1"},
                {"type": "SIM_CARD", "productOfferingId": offering(&app, "sim-card"), "subscriptionId": mobile, "simType": "PSIM"},
            ]),
        )
        .await;
        let addon = second[0]["createdSubscriptionAddonId"].as_str().unwrap().to_string();
        let queue_license = second[1]["createdLicenseId"].as_str().unwrap().to_string();
        let client = app.bullfinch();

        // a subscription, by id and by rid_: as the SIM card left it, and
        // exactly what its last event told
        let by_ref = client.subscription_view(&"rid_sub-1".parse().unwrap()).await.unwrap().into_inner();
        let by_id = client.subscription_view(&mobile.parse().unwrap()).await.unwrap().into_inner();
        assert_eq!(by_ref, by_id);
        let s = json_of(&by_id);
        assert_eq!(s, last_event(&app, "subscription.updated").await);
        assert_eq!(
            (&s["status"], &s["type"], &s["display"], &s["msisdn"], &s["simType"], &s["referenceId"]),
            (&json!("PENDING"), &json!("CELL"), &json!("+46 70 123 45 67"), &json!("+46701234567"), &json!("PSIM"), &json!("sub-1"))
        );
        assert_eq!(s["customer"]["name"], "Acme AB");
        assert_eq!(s["productOffering"]["productOfferingId"], offering(&app, "mobile-10gb"));
        assert_eq!(s["productOffering"]["group"]["category"], "PRODUCT_CATEGORY_SUBSCRIPTION_CELL");
        assert_eq!(s["productOffering"]["price"]["netPriceMinor"], 29900);
        assert!(s["productOffering"]["price"].get("netPrice").is_none(), "bullfinch has no major-unit price");
        assert!(s["createdAt"].is_string() && s["orderId"].is_string());
        let d = json_of(&client.subscription_view(&data.parse().unwrap()).await.unwrap().into_inner());
        assert_eq!((&d["type"], &d["display"], &d["simType"]), (&json!("DATA"), &json!("Sensor hub"), &json!("PSIM")));
        assert!(d.get("referenceId").is_none());

        // auk names the same offering with its major-unit price
        let auk_key = app.new_key(app.org, Some(AUK), false).await;
        let auk = app.auk_with(&auk_key);
        let a = json_of(&auk.subscription_view(&mobile.parse().unwrap()).await.unwrap().into_inner());
        assert_eq!(a["productOffering"]["price"]["netPrice"], 299.0);
        assert_eq!(a["productOffering"]["price"]["boundMonths"], 24);
        assert_eq!(a["display"], s["display"]);

        // lists: oldest first, filters combine, pages follow the cursor
        type Status = bullfinch::types::SubscriptionListStatusItem;
        let all = client.subscription_list(None, None, None, None, None, None).await.unwrap().into_inner();
        assert_eq!(all.items.iter().map(|s| s.subscription_id.to_string()).collect::<Vec<_>>(), [mobile.clone(), data.clone()]);
        let pending = client.subscription_list(None, Some(&vec!["rid_acme".parse().unwrap()]), None, None, Some(&vec![Status::Pending]), None).await.unwrap();
        assert_eq!(pending.items.len(), 2);
        let active = client.subscription_list(None, None, None, None, Some(&vec![Status::Activated, Status::Paused]), None).await.unwrap();
        assert!(active.items.is_empty());
        let datas = client.subscription_list(None, None, None, None, None, Some(&vec!["DATA".parse().unwrap()])).await.unwrap();
        assert_eq!(datas.items.iter().map(|s| s.subscription_id.to_string()).collect::<Vec<_>>(), std::slice::from_ref(&data));
        let number = client.subscription_list(None, None, None, Some(&"+46701234567".parse().unwrap()), None, None).await.unwrap();
        assert_eq!(number.items.iter().map(|s| s.subscription_id.to_string()).collect::<Vec<_>>(), std::slice::from_ref(&mobile));
        let page1 = client.subscription_list(None, None, std::num::NonZeroU32::new(1), None, None, None).await.unwrap().into_inner();
        assert_eq!(page1.items[0].subscription_id.to_string(), mobile);
        let cursor = page1.pagination.next_cursor.expect("a second page");
        let page2 = client.subscription_list(Some(&cursor.parse().unwrap()), None, std::num::NonZeroU32::new(1), None, None, None).await.unwrap().into_inner();
        assert_eq!(page2.items[0].subscription_id.to_string(), data);
        assert_eq!(page2.pagination.next_cursor, None);
        let auk_list = auk.subscription_list(None, None, None, None, None, None).await.unwrap().into_inner();
        assert_eq!(json_of(&auk_list.items[0]), a);

        // add-ons of a subscription (none on the data SIM)
        let addons = client.subscription_addon_list(&"rid_sub-1".parse().unwrap()).await.unwrap().into_inner();
        let x = json_of(&addons.items);
        assert_eq!(x.as_array().unwrap().len(), 1);
        assert_eq!((&x[0]["subscriptionAddonId"], &x[0]["subscriptionId"], &x[0]["status"]), (&json!(addon), &json!(mobile), &json!("PENDING")));
        assert_eq!(x[0]["productOffering"]["productOfferingId"], offering(&app, "extra-data-5gb"));
        assert_eq!(x[0]["group"]["category"], "PRODUCT_CATEGORY_SUBSCRIPTION_CELL");
        let auk_addons = json_of(&auk.subscription_addon_list(&mobile.parse().unwrap()).await.unwrap().into_inner());
        assert!(auk_addons["items"][0]["productOffering"]["price"]["netPrice"].is_number());
        assert!(client.subscription_addon_list(&data.parse().unwrap()).await.unwrap().items.is_empty());

        // licenses: the unassigned one equals its license.created event
        let l = json_of(&client.license_view(&user_license.parse().unwrap()).await.unwrap().into_inner());
        assert_eq!(l, created);
        // assigned to no subscription: provisioned at once
        let today = app.clock.now().date_naive().to_string();
        assert_eq!((&l["status"], &l["type"], &l["activatedAt"]), (&json!("ACTIVE"), &json!("PBX_USER_LEVEL"), &json!(today)));
        assert!(l.get("assignedTo").is_none());
        let q = json_of(&client.license_view(&queue_license.parse().unwrap()).await.unwrap().into_inner());
        assert_eq!(q["assignedTo"], json!({"type": "SUBSCRIPTION", "subscriptionId": mobile, "subscriptionDisplay": "+46 70 123 45 67"}));
        let licenses = client.license_list(None, None, None, None, None).await.unwrap().into_inner();
        assert_eq!(licenses.items.iter().map(|l| l.license_id.to_string()).collect::<Vec<_>>(), [user_license.clone(), queue_license.clone()]);
        let assigned = client.license_list(None, None, None, None, Some(&vec!["rid_sub-1".parse().unwrap()])).await.unwrap().into_inner();
        assert_eq!(assigned.items.iter().map(|l| l.license_id.to_string()).collect::<Vec<_>>(), std::slice::from_ref(&queue_license));
        type LicenseStatus = bullfinch::types::LicenseListStatusItem;
        let active = client.license_list(None, None, None, Some(&vec![LicenseStatus::Active]), None).await.unwrap();
        assert_eq!(active.items.iter().map(|l| l.license_id.to_string()).collect::<Vec<_>>(), std::slice::from_ref(&user_license));
        assert_eq!(q["status"], "PENDING", "an assigned one waits for its subscription's activation");
        let auk_license = json_of(&auk.license_view(&queue_license.parse().unwrap()).await.unwrap().into_inner());
        assert!(auk_license["productOffering"]["price"]["netPrice"].is_number());
        assert_eq!(json_of(&auk.license_list(None, None, None, None, None).await.unwrap().into_inner().items[1]), auk_license);
        app
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn missing_foreign_and_unseen_subscriptions_and_licenses_are_404() {
    each_backend(|app| async move {
        setup(&app).await;
        let bought = submit(
            &app,
            json!([
                {"type": "SUBSCRIPTION", "productOfferingId": offering(&app, "mobile-10gb"),
                 "subscription": {"simType": "ESIM", "msisdn": "+46701234567", "referenceId": "sub-1"}},
                {"type": "LICENSE", "productOfferingId": offering(&app, "pbx-user")},
            ]),
        )
        .await;
        let subscription = bought[0]["createdSubscriptionId"].as_str().unwrap().to_string();
        let license = bought[1]["createdLicenseId"].as_str().unwrap().to_string();

        // names that exist nowhere
        for path in ["/subscriptions/rid_nowhere", "/subscriptions/not-an-id", "/subscriptions/rid_", "/subscriptions/rid_nowhere/addons"] {
            app.call("GET", path, None).await.assert_error(404, "subscription_not_found");
        }
        app.call("GET", &format!("/licenses/{}", uuid::Uuid::new_v4()), None).await.assert_error(404, "license_not_found");
        app.call("GET", "/licenses/rid_sub-1", None).await.assert_error(404, "license_not_found");
        app.call("GET", "/subscriptions?customerId=rid_nobody", None).await.assert_error(404, "customer_not_found");
        app.call("GET", "/licenses?subscriptionId=rid_nowhere", None).await.assert_error(404, "subscription_not_found");
        // bad input is 400 naming the parameter
        let r = app.call("GET", "/subscriptions?status=ACTIVE", None).await;
        r.assert_error(400, "validation_failed");
        assert_eq!(r.details().first().map(|d| d.0.as_str()), Some("status[0]"), "{:#}", r.body);
        app.call("GET", "/licenses?limit=0", None).await.assert_error(400, "validation_failed");
        app.call("GET", "/subscriptions?cursor=nonsense", None).await.assert_error(400, "invalid_cursor");

        // another organisation's key sees none of it
        let (_, their_key) = app.other_org().await;
        let theirs = app.bullfinch_with(&their_key);
        assert_eq!(status_of(&theirs.subscription_view(&subscription.parse().unwrap()).await.unwrap_err()), 404);
        assert_eq!(status_of(&theirs.subscription_view(&"rid_sub-1".parse().unwrap()).await.unwrap_err()), 404);
        assert_eq!(status_of(&theirs.license_view(&license.parse().unwrap()).await.unwrap_err()), 404);
        assert!(theirs.subscription_list(None, None, None, None, None, None).await.unwrap().items.is_empty());
        assert!(theirs.license_list(None, None, None, None, None).await.unwrap().items.is_empty());

        // a user of another customer of ours sees none of Acme's; Acme's
        // own user sees them
        let globex = app.call("POST", "/customers", Some(json!({"customerType": "BUSINESS", "name": "Globex", "contact": {}}))).await;
        for (email, customer) in [("gus@globex.example", globex.body["customerId"].clone()), ("ada@acme.example", json!("rid_acme"))] {
            let r = app.call("POST", "/users", Some(json!({"name": email, "email": email, "customerId": customer, "role": "MEMBER"}))).await;
            assert_eq!(r.status, 201, "{:#}", r.body);
        }
        let gus = app.bullfinch_as(&app.key, &app.login("gus@globex.example", Some(&app.key)).await);
        assert_eq!(status_of(&gus.subscription_view(&subscription.parse().unwrap()).await.unwrap_err()), 404);
        assert_eq!(status_of(&gus.subscription_addon_list(&subscription.parse().unwrap()).await.unwrap_err()), 404);
        assert_eq!(status_of(&gus.license_view(&license.parse().unwrap()).await.unwrap_err()), 404);
        assert!(gus.subscription_list(None, None, None, None, None, None).await.unwrap().items.is_empty());
        assert!(gus.license_list(None, None, None, None, None).await.unwrap().items.is_empty());
        let ada = app.bullfinch_as(&app.key, &app.login("ada@acme.example", Some(&app.key)).await);
        assert_eq!(ada.subscription_list(None, None, None, None, None, None).await.unwrap().items.len(), 1);
        assert_eq!(ada.license_list(None, None, None, None, None).await.unwrap().items.len(), 1);
        assert_eq!(ada.subscription_view(&"rid_sub-1".parse().unwrap()).await.unwrap().subscription_id.to_string(), subscription);
        app
    })
    .await;
}
