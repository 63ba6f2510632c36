//! Orders: from the catalog to a submitted order for every kind of line
//! item, on both revisions; pricing of a worked example by hand; every
//! refusal (archived offering, offering outside the catalog, add-on not
//! among the options, wrong state, expiry); what submission creates and
//! the events it records.

use crate::harness::*;
use serde_json::{Value, json};
use switchboard::domain::catalog::entity_id;

pub fn offering(app: &TestApp, key: &str) -> String {
    entity_id(app.org, "offering", key).to_string()
}

/// A business customer billed in SEK from Sweden (VAT 25 %), ordering from
/// the business catalog of the demo.
pub async fn setup(app: &TestApp) -> String {
    app.demo_catalog(app.org).await;
    let r = app
        .call(
            "POST",
            "/customers",
            Some(json!({
                "customerType": "BUSINESS", "name": "Acme AB", "referenceId": "acme", "contact": {},
                "billing": {"method": "PAPER_INVOICE", "currency": "SEK",
                            "address": {"street1": "Storgatan 1", "city": "Stockholm", "zip": "111 22", "country": "SE",
                                        "region": "Stockholms län", "attention": "Accounts payable"}}
            })),
        )
        .await;
    assert_eq!(r.status, 201, "{:#}", r.body);
    app.import_catalog(app.org, "assignments: [{customer: rid_acme, catalog: business}]").await;
    r.body["customerId"].as_str().unwrap().to_string()
}

fn create_request(v: Value) -> bullfinch::types::CreateOrderRequest {
    serde_json::from_value(v).unwrap()
}

fn events(types: &[(String, Value)], name: &str) -> usize {
    types.iter().filter(|(t, _)| t == name).count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn from_catalog_to_submitted_order_for_every_line_item_kind() {
    each_backend(|app| async move {
        setup(&app).await;
        let client = app.bullfinch();
        let catalog = client.customer_product_catalog_view(&"rid_acme".parse().unwrap()).await.unwrap().into_inner();
        assert!(catalog.items.iter().any(|o| o.product_offering_id.to_string() == offering(&app, "mobile-10gb")));

        // 1. a subscription, a license and an external product (bullfinch)
        let order = client
            .order_create(None, &create_request(json!({
                "customerId": "rid_acme", "referenceId": "web-1",
                "lineItems": [
                    {"type": "SUBSCRIPTION", "productOfferingId": offering(&app, "mobile-10gb"), "bindingContract": true, "upfrontPayment": true,
                     "subscription": {"simType": "ESIM", "msisdn": "+46701234567", "referenceId": "sub-1"}},
                    {"type": "LICENSE", "productOfferingId": offering(&app, "pbx-user")},
                    {"type": "EXTERNAL_PRODUCT", "productOfferingId": offering(&app, "device-management")}
                ]
            })))
            .await
            .unwrap();
        assert_eq!(order.status().as_u16(), 201);
        let order = json_of(&order.into_inner());
        assert_eq!(order["status"], "DRAFT");
        assert!(order["expiresAt"].is_string());
        let id = order["orderId"].as_str().unwrap().to_string();
        let submitted = json_of(&client.order_submit(&id.parse().unwrap(), None).await.unwrap().into_inner());
        assert_eq!(submitted["status"], "SUBMITTED");
        assert!(submitted.get("expiresAt").is_none());
        let lines = submitted["lineItems"].as_array().unwrap();
        assert!(lines.iter().all(|l| l["status"] == "SUBMITTED"));
        let subscription = lines[0]["createdSubscriptionId"].as_str().unwrap().to_string();
        assert!(lines[1]["createdLicenseId"].is_string() && lines[2]["createdLicenseId"].is_string());
        assert_eq!(app.store.order_results(id.parse().unwrap()).await.unwrap(), (1, 0, 2));

        // 2. an add-on, a SIM card and an assigned license for that
        // subscription, named by its rid_ (auk)
        let auk_key = app.new_key(app.org, Some(AUK), false).await;
        let auk = app.auk_with(&auk_key);
        let req: auk::types::CreateOrderRequest = serde_json::from_value(json!({
            "customerId": "rid_acme",
            "lineItems": [
                {"type": "SUBSCRIPTION_ADDON", "productOfferingId": offering(&app, "extra-data-5gb"), "subscriptionId": "rid_sub-1"},
                {"type": "SIM_CARD", "productOfferingId": offering(&app, "sim-card"), "subscriptionId": subscription, "simType": "PSIM", "bindingContract": true},
                {"type": "LICENSE", "productOfferingId": offering(&app, "pbx-queue"), "subscriptionId": "rid_sub-1"}
            ]
        }))
        .unwrap();
        let second = auk.order_create(None, &req).await.unwrap().into_inner();
        let second_id = second.order_id.to_string();
        let done = json_of(&auk.order_submit(&second_id.parse().unwrap(), None).await.unwrap().into_inner());
        assert_eq!(done["status"], "SUBMITTED");
        assert_eq!(done["lineItems"][0]["subscriptionId"], subscription.as_str());
        assert!(done["lineItems"][0]["createdSubscriptionAddonId"].is_string());
        assert_eq!(app.store.order_results(second_id.parse().unwrap()).await.unwrap(), (0, 1, 1));

        // both orders are listed, newest last; filters by customer and status
        let all = client.order_list(None, Some(&vec!["rid_acme".parse().unwrap()]), None, Some(&vec![bullfinch::types::OrderListStatusItem::Submitted])).await.unwrap().into_inner();
        assert_eq!(all.items.iter().map(|o| o.order_id.to_string()).collect::<Vec<_>>(), [id.clone(), second_id.clone()]);
        let drafts = client.order_list(None, None, None, Some(&vec![bullfinch::types::OrderListStatusItem::Draft])).await.unwrap().into_inner();
        assert!(drafts.items.is_empty());

        // the outbox holds every change's events
        let recorded = app.store.event_types(app.org).await.unwrap();
        assert_eq!(events(&recorded, "order.created"), 2);
        assert_eq!(events(&recorded, "order.submitted"), 2);
        assert_eq!(events(&recorded, "order.statusChanged"), 2);
        assert_eq!(events(&recorded, "order.lineItemStatusChanged"), 6);
        assert_eq!(events(&recorded, "subscription.created"), 1);
        assert_eq!(events(&recorded, "license.created"), 3);
        let (_, created) = recorded.iter().find(|(t, _)| t == "subscription.created").unwrap();
        assert_eq!((created["status"].as_str(), created["type"].as_str(), created["display"].as_str()), (Some("PENDING"), Some("CELL"), Some("+46 70 123 45 67")));
        let (_, assigned) = recorded.iter().rfind(|(t, _)| t == "license.created").unwrap();
        assert_eq!(assigned["type"], "PBX_ROUTE_QUEUE");
        assert_eq!(assigned["assignedTo"]["subscriptionId"], subscription.as_str());
        // rendered for auk, an event carries auk's shapes, by the same
        // conversions: the second order.created is what auk's create answered
        let (t, data) = recorded.iter().rfind(|(t, _)| t == "order.created").unwrap();
        let rendered = switchboard::events::Event::parse(t, data.clone()).unwrap().render(AUK).unwrap();
        assert_eq!(rendered, json_of(&second));
        assert!(rendered["pricing"]["total"].is_number(), "{rendered:#}");
        app
    })
    .await;
}

/// The worked example, by hand (VAT 25 %, SEK):
///
/// Mobile 10 GB, 299.00/month, binding (24 months, 50.00 off per month)
/// and upfront (12 cycles, 20.00 off per cycle), welcome offer 100.00 off
/// for 3 months:
///   initial: 12 x 299.00 = 3588.00; discounts 3 x 100 + 12 x 50 + 12 x 20
///   = 1140.00; taxed 2448.00, VAT 612.00; total 3060.00.
///   recurring (cycle 13): 299 - 50 - 20 = 229.00 + 57.25 = 286.25.
/// PBX user 79.00/month: 79.00 + 19.75 = 98.75 now and every month.
/// Device management 39.00/month: 39.00 + 9.75 = 48.75 now and every month.
/// Order initial: subtotal 3706.00, discounts 1140.00, VAT 641.50, total
/// 3207.50. Order recurring: 417.00 - 70.00 + 86.75 = 433.75.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pricing_of_a_worked_example_on_both_revisions() {
    each_backend(|app| async move {
        setup(&app).await;
        let order = app
            .bullfinch()
            .order_create(
                None,
                &create_request(json!({
                    "customerId": "rid_acme",
                    "lineItems": [
                        {"type": "SUBSCRIPTION", "productOfferingId": offering(&app, "mobile-10gb"), "bindingContract": true, "upfrontPayment": true,
                         "subscription": {"simType": "ESIM", "msisdn": "+46701234567"}},
                        {"type": "LICENSE", "productOfferingId": offering(&app, "pbx-user")},
                        {"type": "EXTERNAL_PRODUCT", "productOfferingId": offering(&app, "device-management")}
                    ]
                })),
            )
            .await
            .unwrap()
            .into_inner();
        let o = json_of(&order);
        let p = &o["pricing"];
        assert_eq!(
            (p["subtotalMinor"].as_i64(), p["totalDiscountsMinor"].as_i64(), p["taxAmountMinor"].as_i64(), p["totalMinor"].as_i64()),
            (Some(370600), Some(114000), Some(64150), Some(320750))
        );
        assert_eq!(p["initialInvoice"]["totalMinor"], 320750);
        let r = &p["recurringCosts"];
        assert_eq!(
            (r["subtotalMinor"].as_i64(), r["totalDiscountsMinor"].as_i64(), r["taxAmountMinor"].as_i64(), r["totalMinor"].as_i64()),
            (Some(41700), Some(7000), Some(8675), Some(43375))
        );
        assert_eq!(p["taxes"], json!([{"description": "VAT 25%", "rateBasisPoints": 2500, "amountMinor": 64150}]));
        assert_eq!(
            p["discounts"],
            json!([
                {"source": "STANDARD", "description": "Welcome offer", "amountMinor": 30000},
                {"source": "BINDING_CONTRACT", "description": "24-month binding", "amountMinor": 60000},
                {"source": "UPFRONT_PAYMENT", "description": "Paid a year ahead", "amountMinor": 24000}
            ])
        );
        let line = &o["lineItems"][0]["pricing"];
        assert_eq!(
            (line["subtotalMinor"].as_i64(), line["totalMinor"].as_i64(), line["initialInvoiceAmountMinor"].as_i64(), line["recurringAmountMinor"].as_i64()),
            (Some(358800), Some(306000), Some(306000), Some(28625))
        );
        assert!(p.get("total").is_none() && line.get("total").is_none(), "bullfinch has no major units");

        // auk: the same order with the major-unit twins; calculate-price too
        let auk_key = app.new_key(app.org, Some(AUK), false).await;
        let auk = app.auk_with(&auk_key);
        let seen = json_of(&auk.order_view(&order.order_id.to_string().parse().unwrap()).await.unwrap().into_inner());
        assert_eq!(
            (seen["pricing"]["total"].as_f64(), seen["pricing"]["subtotal"].as_f64(), seen["pricing"]["taxAmount"].as_f64()),
            (Some(3207.5), Some(3706.0), Some(641.5))
        );
        assert_eq!(seen["pricing"]["recurringCosts"]["total"].as_f64(), Some(433.75));
        assert_eq!(seen["pricing"]["discounts"][0]["amount"].as_f64(), Some(300.0));
        let l = &seen["lineItems"][0]["pricing"];
        assert_eq!(
            (l["recurringAmount"].as_f64(), l["initialInvoiceAmount"].as_f64(), l["totalDiscounts"].as_f64()),
            (Some(286.25), Some(3060.0), Some(1140.0))
        );
        // every twin anywhere in the order is its minor amount in SEK's
        // major units (a twin the conversion forgot would be a 0)
        let twins: Vec<_> = minor_twins(&seen).into_iter().filter_map(|(field, minor, twin)| Some((field, minor, twin?))).collect();
        assert!(twins.len() > 20, "{twins:?}");
        for (field, minor, twin) in twins {
            assert_eq!(twin, minor as f64 / 100.0, "{field}");
        }
        let calculated = json_of(&auk.order_calculate_price(&order.order_id.to_string().parse().unwrap()).await.unwrap().into_inner());
        assert_eq!(calculated, seen["pricing"]);
        let listed = auk.order_list(None, None, None, None).await.unwrap().into_inner();
        assert_eq!(json_of(&listed.items[0].pricing), json!({"currency": "SEK", "totalMinor": 320750, "total": 3207.5}));
        // calculate-price is gone in bullfinch
        app.call("POST", &format!("/orders/{}/calculate-price", order.order_id), None).await.assert_error(404, "endpoint_removed");

        // a change recalculates: drop the upfront payment
        let update: bullfinch::types::UpdateOrderRequest = serde_json::from_value(json!({"lineItems": [
            {"type": "SUBSCRIPTION", "productOfferingId": offering(&app, "mobile-10gb"), "bindingContract": true,
             "subscription": {"simType": "ESIM", "msisdn": "+46701234567"}}
        ]}))
        .unwrap();
        let seen_before = app.store.order(app.org, order.order_id).await.unwrap().unwrap();
        let changed = json_of(&app.bullfinch().order_update(&order.order_id.to_string().parse().unwrap(), &update).await.unwrap().into_inner());
        // 299.00 - 100.00 - 50.00 = 149.00 + 37.25 VAT
        assert_eq!(changed["pricing"]["totalMinor"], 18625);
        let recorded = app.store.event_types(app.org).await.unwrap();
        assert_eq!(events(&recorded, "order.updated"), 1);
        // a write based on the order as it was before that change (a submit
        // that read it first) no longer applies: it cannot overwrite it
        let mut stale = seen_before.clone();
        stale.status = switchboard::states::orders::OrderStatus::Submitted;
        let mut tx = app.store.begin().await.unwrap();
        assert!(!switchboard::store::Store::update_order(&mut tx, &stale, &seen_before).await.unwrap());
        drop(tx);
        app
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refusals_name_each_failing_line_item() {
    each_backend(|app| async move {
        let customer = setup(&app).await;
        let consumer = app.call("POST", "/customers", Some(json!({"customerType": "CONSUMER", "name": "Maria", "contact": {},
            "billing": {"method": "E_INVOICE", "currency": "SEK"}}))).await;
        let consumer = consumer.body["customerId"].as_str().unwrap().to_string();
        let client = app.bullfinch();
        let sub = |msisdn: &str| json!({"type": "SUBSCRIPTION", "productOfferingId": offering(&app, "mobile-10gb"), "subscription": {"simType": "PSIM", "msisdn": msisdn}});

        // archived, outside the catalog, wrong type, a choice not offered, no such offering
        let r = app.call("POST", "/orders", Some(json!({"customerId": consumer, "lineItems": [
            {"type": "SUBSCRIPTION", "productOfferingId": offering(&app, "mobile-5gb-2025"), "subscription": {"simType": "PSIM", "msisdn": "+46701234560"}},
            {"type": "LICENSE", "productOfferingId": offering(&app, "pbx-user")},
            {"type": "LICENSE", "productOfferingId": offering(&app, "device-management")},
            {"type": "SUBSCRIPTION", "productOfferingId": offering(&app, "data-sim-20gb"), "upfrontPayment": true, "subscription": {"simType": "PSIM", "msisdn": "+46701234561"}},
            {"type": "SUBSCRIPTION", "productOfferingId": uuid::Uuid::new_v4().to_string(), "subscription": {"simType": "PSIM", "msisdn": "+46701234562"}}
        ]}))).await;
        // a line naming no offering makes it a 404; every failing field is named
        r.assert_error(404, "product_offering_not_found");
        assert_eq!(
            r.details(),
            [
                ("lineItems[0].productOfferingId".to_string(), "product_offering_archived".to_string()),
                ("lineItems[1].productOfferingId".into(), "not_in_catalog".into()),
                ("lineItems[2].productOfferingId".into(), "not_in_catalog".into()),
                ("lineItems[2].type".into(), "line_item_type_mismatch".into()),
                ("lineItems[3].upfrontPayment".into(), "upfront_payment_not_offered".into()),
                ("lineItems[4].productOfferingId".into(), "product_offering_not_found".into()),
            ]
        );

        // an add-on not among the subscription's options: a travel package
        // for a mobile subscription
        let first = client.order_create(None, &create_request(json!({"customerId": customer, "lineItems": [sub("+46701234567")]}))).await.unwrap().into_inner();
        let first_id = first.order_id.to_string();
        client.order_submit(&first_id.parse().unwrap(), None).await.unwrap();
        let subscription = json_of(&client.order_view(&first_id.parse().unwrap()).await.unwrap().into_inner())["lineItems"][0]["createdSubscriptionId"].as_str().unwrap().to_string();
        let r = app.call("POST", "/orders", Some(json!({"customerId": customer, "lineItems": [
            {"type": "SUBSCRIPTION_ADDON", "productOfferingId": offering(&app, "travel-eu-5gb"), "subscriptionId": subscription},
            {"type": "SUBSCRIPTION_ADDON", "productOfferingId": offering(&app, "extra-data-5gb"), "subscriptionId": uuid::Uuid::new_v4().to_string()}
        ]}))).await;
        r.assert_error(404, "subscription_not_found");
        assert_eq!(r.details(), [
            ("lineItems[0].productOfferingId".to_string(), "addon_not_allowed".to_string()),
            ("lineItems[1].subscriptionId".into(), "subscription_not_found".into()),
        ]);
        // without a missing object, lines that do not fit are a 409, as at submission
        let r = app.call("POST", "/orders", Some(json!({"customerId": customer, "lineItems": [
            {"type": "SUBSCRIPTION_ADDON", "productOfferingId": offering(&app, "travel-eu-5gb"), "subscriptionId": subscription}
        ]}))).await;
        r.assert_error(409, "order_validation_failed");
        // a customer without a billing currency needs the order's currency
        let bare = app.call("POST", "/customers", Some(json!({"customerType": "CONSUMER", "name": "Bo", "contact": {}}))).await;
        app.call("POST", "/orders", Some(json!({"customerId": bare.body["customerId"], "lineItems": [sub("+46701234569")]})))
            .await
            .assert_error(409, "currency_required");

        // submission checks again: an offering archived after the order was
        // made, and a number another subscription already has
        let order = client.order_create(None, &create_request(json!({"customerId": customer, "lineItems": [
            sub("+46701234567"),
            {"type": "SUBSCRIPTION", "productOfferingId": offering(&app, "data-sim-20gb"), "subscription": {"simType": "PSIM", "msisdn": "+46701234568"}}
        ]}))).await.unwrap().into_inner();
        let archived = switchboard::demo::CATALOG
            .split("\nassignments:")
            .next()
            .unwrap()
            .replace("  - key: data-sim-20gb\n", "  - key: data-sim-20gb\n    status: ARCHIVED\n");
        app.import_catalog(app.org, &archived).await;
        let r = app.call("POST", &format!("/orders/{}/submit", order.order_id), None).await;
        r.assert_error(409, "order_validation_failed");
        assert_eq!(r.details(), [
            ("lineItems[0].subscription.msisdn".to_string(), "msisdn_in_use".to_string()),
            ("lineItems[1].productOfferingId".into(), "product_offering_archived".into()),
        ]);
        let still = client.order_view(&order.order_id.to_string().parse().unwrap()).await.unwrap().into_inner();
        assert_eq!(json_of(&still)["status"], "DRAFT", "a refused submission changes nothing");

        // wrong states
        let e = client.order_approve(&first_id.parse().unwrap(), None).await.unwrap_err();
        assert_refused(&e, 409, "order_state_conflict");
        app.call("POST", &format!("/orders/{first_id}/cancel"), None).await.assert_error(409, "order_state_conflict");
        app.call("PUT", &format!("/orders/{first_id}"), Some(json!({"referenceId": "late"}))).await.assert_error(409, "order_state_conflict");
        let cancelled = client.order_cancel(&order.order_id.to_string().parse().unwrap(), None).await.unwrap().into_inner();
        let cancelled = json_of(&cancelled);
        assert_eq!(cancelled["status"], "CANCELLED");
        assert!(cancelled["lineItems"].as_array().unwrap().iter().all(|l| l["status"] == "CANCELLED"));
        app.call("POST", &format!("/orders/{}/submit", order.order_id), None).await.assert_error(409, "order_state_conflict");
        app.call("POST", &format!("/orders/{}/approve", order.order_id), None).await.assert_error(409, "order_state_conflict");
        app.call("GET", &format!("/orders/{}", uuid::Uuid::new_v4()), None).await.assert_error(404, "order_not_found");
        app
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unsubmitted_order_expires_by_the_clock() {
    each_backend_with(
        |s| s.order_expiry_seconds = 3600,
        |app| async move {
            setup(&app).await;
            let client = app.bullfinch();
            let line = json!({"type": "EXTERNAL_PRODUCT", "productOfferingId": offering(&app, "device-management")});
            let order = client.order_create(None, &create_request(json!({"customerId": "rid_acme", "lineItems": [line]}))).await.unwrap().into_inner();
            let id = order.order_id.to_string();
            let approved = json_of(&client.order_approve(&id.parse().unwrap(), None).await.unwrap().into_inner());
            assert_eq!(approved["status"], "APPROVED");
            let expires: chrono::DateTime<chrono::Utc> = approved["expiresAt"].as_str().unwrap().parse().unwrap();
            assert_eq!(expires - order.created_at, chrono::Duration::seconds(3600));

            app.clock.advance(chrono::Duration::seconds(3599));
            assert_eq!(json_of(&client.order_view(&id.parse().unwrap()).await.unwrap().into_inner())["status"], "APPROVED");
            app.clock.advance(chrono::Duration::seconds(1));
            let listed = client.order_list(None, None, None, None).await.unwrap().into_inner();
            assert_eq!(json_of(&listed.items[0])["status"], "EXPIRED");
            app.call("POST", &format!("/orders/{id}/submit"), None).await.assert_error(409, "order_expired");
            app.call("POST", &format!("/orders/{id}/cancel"), None).await.assert_error(409, "order_expired");
            let recorded = app.store.event_types(app.org).await.unwrap();
            assert_eq!(events(&recorded, "order.expired"), 1, "expired once, however often it is read");
            app
        },
    )
    .await;
}

/// Each order has an order.expiry job due at its expiresAt; here the test
/// runs the due jobs after moving the clock, so no order is ever read.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_order_nobody_reads_expires_by_the_sweep() {
    each_backend_with(
        |s| s.order_expiry_seconds = 3600,
        |app| async move {
            setup(&app).await;
            let line = json!({"type": "EXTERNAL_PRODUCT", "productOfferingId": offering(&app, "device-management")});
            let request = create_request(json!({"customerId": "rid_acme", "lineItems": [line]}));
            let old = app.bullfinch().order_create(None, &request).await.unwrap().into_inner();
            app.clock.advance(chrono::Duration::seconds(1800));
            let young = app.bullfinch().order_create(None, &request).await.unwrap().into_inner();
            app.clock.advance(chrono::Duration::seconds(1800));
            // the server's own worker may have got there first (a slow
            // run): either way the order expires once, unread (the events
            // below tell; the count includes the hourly idempotency sweep)
            app.run_jobs().await;
            assert_eq!(app.run_jobs().await, 0, "and only once");
            let recorded = app.store.event_types(app.org).await.unwrap();
            let expired: Vec<&Value> = recorded.iter().filter(|(t, _)| t == "order.expired").map(|(_, d)| d).collect();
            assert_eq!(expired.len(), 1);
            assert_eq!(expired[0]["orderId"], old.order_id.to_string());
            assert_eq!(expired[0]["status"], "EXPIRED");
            let young_now = app.bullfinch().order_view(&young.order_id.to_string().parse().unwrap()).await.unwrap().into_inner();
            assert_eq!(json_of(&young_now)["status"], "DRAFT");
            app
        },
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_members_order_needs_approval() {
    each_backend(|app| async move {
        let customer = setup(&app).await;
        for (name, email, role) in [("Mo", "mo@acme.example", "MEMBER"), ("Ma", "ma@acme.example", "MANAGER")] {
            let r = app.call("POST", "/users", Some(json!({"name": name, "email": email, "customerId": customer, "role": role}))).await;
            assert_eq!(r.status, 201, "{:#}", r.body);
        }
        let member = app.bullfinch_as(&app.key, &app.login("mo@acme.example", Some(&app.key)).await);
        let manager = app.bullfinch_as(&app.key, &app.login("ma@acme.example", Some(&app.key)).await);
        let line = json!({"type": "EXTERNAL_PRODUCT", "productOfferingId": offering(&app, "device-management")});
        let order = member.order_create(None, &create_request(json!({"customerId": customer, "lineItems": [line]}))).await.unwrap().into_inner();
        let id: bullfinch::types::OrderSubmitOrderId = order.order_id.to_string().parse().unwrap();
        let e = member.order_submit(&id, None).await.unwrap_err();
        assert_refused(&e, 409, "order_not_approved");
        let e = member.order_approve(&order.order_id.to_string().parse().unwrap(), None).await.unwrap_err();
        assert_refused(&e, 403, "insufficient_role"); // a MEMBER cannot approve
        manager.order_approve(&order.order_id.to_string().parse().unwrap(), None).await.unwrap();
        let done = member.order_submit(&id, None).await.unwrap().into_inner();
        assert_eq!(json_of(&done)["status"], "SUBMITTED");
        app
    })
    .await;
}

/// Each `xMinor` integer in `v` (at any depth) with its major-unit twin `x`.
fn minor_twins(v: &serde_json::Value) -> Vec<(String, i64, Option<f64>)> {
    let mut out = vec![];
    match v {
        serde_json::Value::Object(m) => {
            for (k, x) in m {
                if let (Some(name), Some(minor)) = (k.strip_suffix("Minor"), x.as_i64()) {
                    out.push((k.clone(), minor, m.get(name).and_then(serde_json::Value::as_f64)));
                }
                out.extend(minor_twins(x));
            }
        }
        serde_json::Value::Array(a) => a.iter().for_each(|x| out.extend(minor_twins(x))),
        _ => {}
    }
    out
}
