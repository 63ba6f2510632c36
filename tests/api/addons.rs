//! Add-ons on both revisions and both databases: the add-on options of a
//! subscription, and that an order refuses an add-on exactly when the
//! options leave it out (a property over generated catalogs).

use crate::harness::*;
use crate::lifecycle::new_subscription;
use crate::orders::{offering, setup};
use proptest::prelude::*;
use serde_json::{Value, json};

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
        let price = if g.in_sek { "{netPriceMinor: 100, currency: SEK, priceType: ONE_TIME}" } else { "{netPriceMinor: 10, currency: EUR, priceType: ONE_TIME}" };
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
    let body = json!({"customerId": r.body["customerId"], "productOfferingId": plan, "subscription": {"simType": "ESIM", "msisdn": "+46701239100"}});
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
