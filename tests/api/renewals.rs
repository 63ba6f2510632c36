//! What a subscription was bought at and its billing cycles, on both
//! databases: buying one directly (POST /subscriptions, a submitted
//! one-line order), renewals across month ends and a leap day (PAUSED ones
//! pass unrenewed, SUSPENDED ones renew), upfront cycles, and offering
//! changes on every schedule with the rules of upgrades, downgrades and
//! binding contracts. The clock is moved, never waited for.

use crate::harness::*;
use crate::orders::{offering, setup};
use serde_json::{Value, json};

/// Buys `offering_key` for Acme directly with `extra` fields; the answer.
async fn buy(app: &TestApp, offering_key: &str, msisdn: &str, extra: Value) -> Raw {
    let mut body = json!({"customerId": "rid_acme", "productOfferingId": offering(app, offering_key),
                          "subscription": {"simType": "ESIM", "msisdn": msisdn}});
    body.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
    app.call("POST", "/subscriptions", Some(body)).await
}

/// Bought and activated now: the subscription after activation.
async fn active(app: &TestApp, offering_key: &str, msisdn: &str, extra: Value) -> Value {
    let r = buy(app, offering_key, msisdn, extra).await;
    assert_eq!(r.status, 201, "{:#}", r.body);
    let id = r.body["subscriptionId"].as_str().unwrap();
    let r = app.call("POST", &format!("/subscriptions/{id}/activate"), Some(json!({}))).await;
    assert_eq!(r.status, 200, "{:#}", r.body);
    r.body
}

async fn read(app: &TestApp, id: &Value) -> Value {
    app.call("GET", &format!("/subscriptions/{}", id.as_str().unwrap()), None).await.body
}

async fn events(app: &TestApp) -> Vec<(String, Value)> {
    app.store.event_types(app.org).await.unwrap()
}

/// The events recorded after the first `from`, of subscription `id`.
async fn events_of(app: &TestApp, from: usize, id: &Value) -> Vec<(String, Value)> {
    events(app).await.into_iter().skip(from).filter(|(_, d)| d["subscriptionId"] == *id).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subscription_bought_directly_is_a_submitted_one_line_order() {
    each_backend(|app| async move {
        setup(&app).await;
        // renewals bill invoices left unpaid here: no dunning
        app.without_dunning().await;
        let from = events(&app).await.len();
        let body = serde_json::from_value(json!({
            "customerId": "rid_acme", "productOfferingId": offering(&app, "mobile-10gb"), "bindingContract": true,
            "upfrontPayment": true, "orderReferenceId": "crm-order-1", "metadata": {"channel": "shop"},
            "subscription": {"simType": "ESIM", "msisdn": "+46701234567", "referenceId": "line-1"}
        }))
        .unwrap();
        let s = json_of(&app.bullfinch().subscription_create(None, &body).await.unwrap().into_inner());
        assert_eq!((&s["status"], &s["currency"], &s["bindingContract"], &s["upfrontPaidCycles"]), (&json!("PENDING"), &json!("SEK"), &json!(true), &json!(12)));
        assert_eq!(s["contractedPrice"], s["productOffering"]["price"], "bought at the catalog's price");
        assert!(s.get("renewsOn").is_none() && s.get("billingDay").is_none(), "no cycles before activation");
        assert_eq!(read(&app, &s["subscriptionId"]).await, s);

        // the order it was bought through: SUBMITTED, one line, priced
        let order = app.call("GET", &format!("/orders/{}", s["orderId"].as_str().unwrap()), None).await.body;
        assert_eq!((&order["status"], &order["referenceId"]), (&json!("SUBMITTED"), &json!("crm-order-1")));
        assert_eq!(order["lineItems"].as_array().unwrap().len(), 1);
        assert_eq!((&order["lineItems"][0]["createdSubscriptionId"], &order["lineItems"][0]["metadata"]), (&s["subscriptionId"], &json!({"channel": "shop"})));
        assert!(order["pricing"]["initialInvoice"]["totalMinor"].as_i64().unwrap() > 0);
        let recorded = events(&app).await.split_off(from);
        let types: Vec<&str> = recorded.iter().map(|(t, _)| t.as_str()).collect();
        for t in ["order.created", "order.submitted", "subscription.created"] {
            assert!(types.contains(&t), "{t} recorded: {types:?}");
        }
        assert_eq!(recorded.iter().find(|(t, _)| t == "subscription.created").unwrap().1, s);

        // refusals name this request's fields, and change nothing
        let count = events(&app).await.len();
        let r = buy(&app, "mobile-10gb", "+46701234567", json!({})).await;
        r.assert_error(409, "order_validation_failed");
        assert!(r.details().iter().any(|(p, _)| p == "subscription.msisdn"), "{:?}", r.details());
        buy(&app, "mobile-10gb", "+46701234568", json!({"orderReferenceId": "crm-order-1"})).await.assert_error(409, "reference_id_taken");
        let r = buy(&app, "data-sim-20gb", "+46701234568", json!({"bindingContract": true})).await;
        r.assert_error(409, "order_validation_failed");
        assert!(r.details().iter().any(|(p, _)| p == "bindingContract"), "{:?}", r.details());
        let r = app
            .call("POST", "/subscriptions", Some(json!({"customerId": "rid_acme", "productOfferingId": uuid::Uuid::new_v4().to_string(),
                                                        "subscription": {"simType": "ESIM", "msisdn": "+46701234569"}})))
            .await;
        r.assert_error(404, "product_offering_not_found");
        let (_, other) = app.other_org().await;
        let theirs = app.call_as(Some(&other), "POST", "/subscriptions", Some(json!({"customerId": "rid_acme", "productOfferingId": offering(&app, "mobile-10gb"),
                                                                                  "subscription": {"simType": "ESIM", "msisdn": "+46701234569"}})), &[]).await;
        theirs.assert_error(404, "customer_not_found");
        assert_eq!(events(&app).await.len(), count, "a refused purchase records nothing");

        // a MEMBER orders through /orders (approval); a MANAGER buys directly
        for (role, email) in [("MEMBER", "m@acme.example"), ("MANAGER", "boss@acme.example")] {
            let r = app.call("POST", "/users", Some(json!({"name": role, "email": email, "customerId": "rid_acme", "role": role}))).await;
            assert_eq!(r.status, 201, "{:#}", r.body);
        }
        let body = json!({"customerId": "rid_acme", "productOfferingId": offering(&app, "data-sim-20gb"), "subscription": {"simType": "PSIM", "msisdn": "+46701234570"}});
        let member = format!("Bearer {}", app.login("m@acme.example", Some(&app.key)).await);
        app.call_as(Some(&app.key), "POST", "/subscriptions", Some(body.clone()), &[("Authorization", member.as_str())]).await.assert_error(403, "insufficient_role");
        let manager = format!("Bearer {}", app.login("boss@acme.example", Some(&app.key)).await);
        assert_eq!(app.call_as(Some(&app.key), "POST", "/subscriptions", Some(body), &[("Authorization", manager.as_str())]).await.status, 201);
        app
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn billing_cycles_renew_across_month_ends_and_a_leap_day() {
    each_backend(|app| async move {
        setup(&app).await;
        // renewals bill invoices left unpaid here: no dunning
        app.without_dunning().await;
        at(&app, "2028-01-31T10:00:00Z");
        let a = active(&app, "mobile-10gb", "+46701234567", json!({})).await;
        assert_eq!((&a["billingDay"], &a["renewsOn"], &a["nextPaymentOn"]), (&json!(31), &json!("2028-02-29"), &json!("2028-02-29")));
        let upfront = active(&app, "mobile-10gb", "+46701234568", json!({"upfrontPayment": true, "bindingContract": true})).await;
        assert_eq!(
            (&upfront["renewsOn"], &upfront["nextPaymentOn"], &upfront["bindingEndsOn"]),
            (&json!("2028-02-29"), &json!("2029-01-31"), &json!("2030-01-31"))
        );
        let quarterly = active(&app, "mobile-unlimited", "+46701234569", json!({})).await;
        assert_eq!(quarterly["renewsOn"], "2028-04-30");
        let once = active(&app, "travel-esim", "+46701234560", json!({})).await;
        assert!(once.get("renewsOn").is_none(), "a one-time price has no cycles");

        // the leap day: the job renews without anyone reading
        let from = events(&app).await.len();
        at(&app, "2028-02-29T00:00:01Z");
        assert!(app.run_jobs().await >= 1);
        let renewed = events_of(&app, from, &a["subscriptionId"]).await;
        assert_eq!(renewed.iter().map(|(t, _)| t.as_str()).collect::<Vec<_>>(), ["subscription.renewed"]);
        let now = read(&app, &a["subscriptionId"]).await;
        assert_eq!((&now["renewsOn"], &now["updatedAt"]), (&json!("2028-03-31"), &json!("2028-02-29T00:00:00Z")));
        assert_eq!(renewed[0].1, now, "the event carries the subscription as read");
        assert_eq!(read(&app, &upfront["subscriptionId"]).await["nextPaymentOn"], "2029-01-31", "paid upfront through January");

        // a 30-day month, then PAUSED passes unrenewed and SUSPENDED renews
        at(&app, "2028-04-02T08:00:00Z");
        let now = read(&app, &a["subscriptionId"]).await;
        assert_eq!(now["renewsOn"], "2028-04-30");
        assert_eq!(read(&app, &quarterly["subscriptionId"]).await["renewsOn"], "2028-04-30");
        let id = a["subscriptionId"].as_str().unwrap();
        assert_eq!(app.call("POST", &format!("/subscriptions/{id}/pause"), Some(json!({}))).await.status, 200);
        let from = events(&app).await.len();
        at(&app, "2028-05-01T08:00:00Z");
        let paused = read(&app, &a["subscriptionId"]).await;
        assert_eq!((&paused["status"], &paused["renewsOn"]), (&json!("PAUSED"), &json!("2028-05-31")));
        assert!(events_of(&app, from, &a["subscriptionId"]).await.is_empty(), "a PAUSED subscription does not renew");
        assert_eq!(read(&app, &quarterly["subscriptionId"]).await["renewsOn"], "2028-07-31", "quarterly: the 31st again");
        for op in ["restore", "suspend"] {
            assert_eq!(app.call("POST", &format!("/subscriptions/{id}/{op}"), Some(json!({}))).await.status, 200);
        }
        let from = events(&app).await.len();
        at(&app, "2028-06-01T08:00:00Z");
        let suspended = read(&app, &a["subscriptionId"]).await;
        assert_eq!((&suspended["status"], &suspended["renewsOn"]), (&json!("SUSPENDED"), &json!("2028-06-30")));
        let types: Vec<String> = events_of(&app, from, &a["subscriptionId"]).await.into_iter().map(|(t, _)| t).collect();
        assert_eq!(types, ["subscription.renewed"], "billing continues while SUSPENDED");

        // cancelled: no more renewals
        let gone = app.call("POST", &format!("/subscriptions/{id}/cancel"), Some(json!({}))).await.body;
        assert!(gone.get("renewsOn").is_none() && gone.get("nextPaymentOn").is_none());
        app
    })
    .await;
}

/// A cheaper mobile offering in the business catalog, for downgrades.
async fn with_cheaper_plan(app: &TestApp) {
    app.import_catalog(app.org, "offerings:\n  - {key: mobile-3gb, name: Mobile 3 GB, product: cell-10gb, group: mobile,\n     price: {netPriceMinor: 14900, currency: SEK, priceType: RECURRING, billingCycle: {period: MONTHLY, interval: 1}}}\ncatalogs:\n  - {key: business, name: Business, offerings: [mobile-10gb, mobile-unlimited, mobile-3gb, data-sim-20gb, travel-esim]}\n").await;
}

async fn change(app: &TestApp, id: &Value, body: Value) -> Raw {
    app.call("PUT", &format!("/subscriptions/{}/product-offering-change", id.as_str().unwrap()), Some(body)).await
}

/// (offering key, schedule, date) of each option.
async fn options(app: &TestApp, id: &Value) -> Vec<(String, String, String)> {
    let r = app.call("GET", &format!("/subscriptions/{}/product-offering-options", id.as_str().unwrap()), None).await;
    assert_eq!(r.status, 200, "{:#}", r.body);
    r.body["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            (
                o["productOffering"]["name"].as_str().unwrap().to_string(),
                o["changeSchedule"].as_str().unwrap().to_string(),
                o["changeScheduleDate"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn opt(name: &str, schedule: &str, date: &str) -> (String, String, String) {
    (name.into(), schedule.into(), date.into())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn offering_changes_on_every_schedule() {
    each_backend(|app| async move {
        setup(&app).await;
        // renewals bill invoices left unpaid here: no dunning
        app.without_dunning().await;
        with_cheaper_plan(&app).await;
        at(&app, "2028-01-31T10:00:00Z");
        let (three, unlimited) = (offering(&app, "mobile-3gb"), offering(&app, "mobile-unlimited"));

        // before activation every change is INSTANT; not another category, not the archived plan
        let p = buy(&app, "mobile-10gb", "+46701234500", json!({})).await.body;
        assert_eq!(options(&app, &p["subscriptionId"]).await, [opt("Mobile 3 GB", "INSTANT", "2028-01-31"), opt("Mobile Unlimited", "INSTANT", "2028-01-31")]);

        // after it: an upgrade now, a downgrade on the renewal day
        let a = active(&app, "mobile-10gb", "+46701234567", json!({})).await;
        let id = &a["subscriptionId"];
        assert_eq!(options(&app, id).await, [opt("Mobile 3 GB", "NEXT_RENEWAL_DAY", "2028-02-29"), opt("Mobile Unlimited", "INSTANT", "2028-01-31")]);
        change(&app, id, json!({"productOfferingId": three, "changeSchedule": "INSTANT"})).await.assert_error(409, "change_schedule_not_allowed");
        change(&app, id, json!({"productOfferingId": three, "changeSchedule": "FIRST_OF_NEXT_MONTH"})).await.assert_error(409, "change_schedule_not_allowed");
        change(&app, id, json!({"productOfferingId": offering(&app, "data-sim-20gb")})).await.assert_error(409, "offering_change_not_allowed");
        let r = change(&app, id, json!({"productOfferingId": uuid::Uuid::new_v4().to_string()})).await;
        r.assert_error(404, "product_offering_not_found");
        let from = events(&app).await.len();
        let s = change(&app, id, json!({"productOfferingId": three})).await.body;
        assert_eq!((&s["productOffering"]["name"], &s["pendingProductOffering"]["productOffering"]["name"]), (&json!("Mobile 10 GB"), &json!("Mobile 3 GB")));
        assert_eq!(
            (&s["pendingProductOffering"]["changeSchedule"], &s["pendingProductOffering"]["scheduledAt"]),
            (&json!("NEXT_RENEWAL_DAY"), &json!("2028-02-29T00:00:00Z"))
        );
        assert_eq!(change(&app, id, json!({"productOfferingId": three})).await.body, s, "asked again: already so");
        // withdrawn by naming the current offering, then scheduled again
        let kept = change(&app, id, json!({"productOfferingId": offering(&app, "mobile-10gb")})).await.body;
        assert!(kept.get("pendingProductOffering").is_none());
        let s = change(&app, id, json!({"productOfferingId": three})).await.body;
        let recorded = events_of(&app, from, id).await;
        assert_eq!(recorded.iter().map(|(t, _)| t.as_str()).collect::<Vec<_>>(), ["subscription.updated"; 3]);
        assert_eq!(recorded[2].1, s);

        // the renewal day: the change first, then the new cycle on the new offering
        let from = events(&app).await.len();
        at(&app, "2028-02-29T00:00:01Z");
        let now = read(&app, id).await;
        assert_eq!(
            (&now["productOffering"]["name"], &now["contractedPrice"]["netPriceMinor"], &now["renewsOn"]),
            (&json!("Mobile 3 GB"), &json!(14900), &json!("2028-03-31"))
        );
        assert!(now.get("pendingProductOffering").is_none());
        let recorded = events_of(&app, from, id).await;
        assert_eq!(recorded.iter().map(|(t, _)| t.as_str()).collect::<Vec<_>>(), ["subscription.updated", "subscription.renewed"]);
        assert_eq!(recorded[1].1, now);

        // an upgrade is INSTANT: the current cycle runs on, the next are quarterly
        let up = change(&app, id, json!({"productOfferingId": unlimited})).await.body;
        assert_eq!(
            (&up["productOffering"]["name"], &up["contractedPrice"]["netPriceMinor"], &up["renewsOn"]),
            (&json!("Mobile Unlimited"), &json!(119700), &json!("2028-03-31"))
        );
        at(&app, "2028-04-01T00:00:01Z");
        assert_eq!(read(&app, id).await["renewsOn"], "2028-06-30");

        // a binding contract allows upgrades only; cycles paid upfront hold a downgrade to the payment day
        let bound = active(&app, "mobile-10gb", "+46701234568", json!({"bindingContract": true})).await;
        assert_eq!(options(&app, &bound["subscriptionId"]).await, [opt("Mobile Unlimited", "INSTANT", "2028-04-01")]);
        change(&app, &bound["subscriptionId"], json!({"productOfferingId": three})).await.assert_error(409, "binding_contract_active");
        let paid = active(&app, "mobile-10gb", "+46701234569", json!({"upfrontPayment": true})).await;
        assert_eq!(options(&app, &paid["subscriptionId"]).await[0], opt("Mobile 3 GB", "NEXT_PAYMENT_DAY", "2029-04-01"));
        change(&app, &paid["subscriptionId"], json!({"productOfferingId": three, "changeSchedule": "NEXT_RENEWAL_DAY"}))
            .await
            .assert_error(409, "change_schedule_not_allowed");

        // a later schedule than the earliest, applied by the job
        let later = change(&app, &bound["subscriptionId"], json!({"productOfferingId": unlimited, "changeSchedule": "FIRST_OF_NEXT_MONTH"})).await.body;
        assert_eq!(later["pendingProductOffering"]["scheduledAt"], "2028-05-01T00:00:00Z");
        let from = events(&app).await.len();
        at(&app, "2028-05-01T00:00:01Z");
        assert!(app.run_jobs().await >= 1);
        let types: Vec<String> = events_of(&app, from, &bound["subscriptionId"]).await.into_iter().map(|(t, _)| t).collect();
        assert_eq!(types[0], "subscription.updated", "the job applied the change: {types:?}");
        assert_eq!(read(&app, &bound["subscriptionId"]).await["productOffering"]["name"], "Mobile Unlimited");

        // a cancellation that takes effect drops a scheduled change; a cancelled subscription has no options
        let c = change(&app, &paid["subscriptionId"], json!({"productOfferingId": three})).await.body;
        assert!(c.get("pendingProductOffering").is_some());
        let pid = paid["subscriptionId"].as_str().unwrap();
        let r = app.call("POST", &format!("/subscriptions/{pid}/cancel"), Some(json!({}))).await;
        assert_eq!(r.status, 200, "{:#}", r.body);
        assert!(r.body.get("pendingProductOffering").is_none());
        assert!(options(&app, &paid["subscriptionId"]).await.is_empty());
        change(&app, &paid["subscriptionId"], json!({"productOfferingId": unlimited})).await.assert_error(409, "subscription_cancelled");

        // the generated client: a MEMBER reads the options, only a MANAGER changes
        let r = app.call("POST", "/users", Some(json!({"name": "M", "email": "m@acme.example", "customerId": "rid_acme", "role": "MEMBER"}))).await;
        assert_eq!(r.status, 201);
        let member = app.bullfinch_as(&app.key, &app.login("m@acme.example", Some(&app.key)).await);
        let pending = p["subscriptionId"].as_str().unwrap().parse().unwrap();
        let listed = member.subscription_product_offering_options(&pending).await.unwrap().into_inner();
        assert_eq!(listed.items.len(), 2);
        let req = serde_json::from_value(json!({"productOfferingId": three})).unwrap();
        let pending2 = p["subscriptionId"].as_str().unwrap().parse().unwrap();
        assert_eq!(status_of(&member.subscription_product_offering_change(&pending2, &req).await.unwrap_err()), 403);
        let changed = app.bullfinch().subscription_product_offering_change(&pending2, &req).await.unwrap().into_inner();
        assert_eq!(json_of(&changed.product_offering.unwrap().name), "Mobile 3 GB", "PENDING: at once");
        app
    })
    .await;
}
