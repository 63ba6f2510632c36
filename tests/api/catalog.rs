//! The product catalog: offerings and their filters, prices on each
//! revision (major units by currency exponent), customer catalogs, and
//! importing a catalog file.

use crate::harness::*;
use serde_json::json;
use switchboard::domain::catalog::entity_id;

fn offering_id(app: &TestApp, key: &str) -> String {
    entity_id(app.org, "offering", key).to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn offerings_list_filter_and_page() {
    each_backend(|app| async move {
        app.demo_catalog(app.org).await;
        let client = app.bullfinch();
        let all = client.product_offering_list(None, None, None, None, None, None).await.unwrap().into_inner();
        assert_eq!(all.items.len(), 15, "every demo offering, archived one included");
        assert!(all.pagination.next_cursor.is_none());
        // every product type and every category is in the demo catalog
        let types: std::collections::BTreeSet<String> = all.items.iter().map(|o| o.product.type_.to_string()).collect();
        assert_eq!(types.len(), 5, "{types:?}");
        let categories: std::collections::BTreeSet<String> = all.items.iter().map(|o| o.product.category.to_string()).collect();
        assert_eq!(categories.len(), 10, "{categories:?}");

        let archived =
            client.product_offering_list(None, None, None, None, None, Some(bullfinch::types::ProductOfferingListStatus::Archived)).await.unwrap().into_inner();
        assert_eq!(archived.items.iter().map(|o| o.name.as_str()).collect::<Vec<_>>(), ["Mobile 5 GB (2025)"]);

        let addons = client
            .product_offering_list(None, None, None, None, Some(bullfinch::types::ProductOfferingListProductType::SubscriptionAddon), None)
            .await
            .unwrap()
            .into_inner();
        assert_eq!(addons.items.len(), 3);

        let cell = client
            .product_offering_list(
                Some(bullfinch::types::ProductOfferingListCategory::ProductCategorySubscriptionCell),
                None,
                None,
                None,
                None,
                Some(bullfinch::types::ProductOfferingListStatus::Available),
            )
            .await
            .unwrap()
            .into_inner();
        assert_eq!(cell.items.iter().map(|o| o.name.as_str()).collect::<Vec<_>>(), ["Mobile 10 GB", "Mobile Unlimited"]);

        let group = entity_id(app.org, "group", "mobile-addons").to_string();
        let in_group = client.product_offering_list(None, None, Some(&group.parse().unwrap()), None, None, None).await.unwrap().into_inner();
        assert_eq!(in_group.items.iter().map(|o| o.name.as_str()).collect::<Vec<_>>(), ["Extra data 5 GB", "USA week pass"]);
        let nowhere = client.product_offering_list(None, None, Some(&"not-a-group".parse().unwrap()), None, None, None).await.unwrap();
        assert!(nowhere.into_inner().items.is_empty());

        // pages of 5 walk all 14 once
        let mut seen = vec![];
        let mut cursor: Option<String> = None;
        loop {
            let page = client
                .product_offering_list(None, cursor.as_ref().map(|c| c.parse().unwrap()).as_ref(), None, std::num::NonZeroU32::new(5), None, None)
                .await
                .unwrap()
                .into_inner();
            seen.extend(page.items.into_iter().map(|o| o.product_offering_id));
            match page.pagination.next_cursor {
                Some(c) => cursor = Some(c),
                None => break,
            }
        }
        assert_eq!(seen, all.items.iter().map(|o| o.product_offering_id).collect::<Vec<_>>());

        // one offering, archived ones too; unknown and malformed ids are 404
        let one = client.product_offering_view(&offering_id(&app, "mobile-5gb-2025").parse().unwrap()).await.unwrap().into_inner();
        assert_eq!(one.status, bullfinch::types::ProductOfferingStatus::Archived);
        for missing in [uuid::Uuid::new_v4().to_string(), "not-a-uuid".to_string()] {
            app.call("GET", &format!("/product-offerings/{missing}"), None).await.assert_error(404, "product_offering_not_found");
        }
        app
    })
    .await;
}

/// The mobile plan of the demo catalog, as each revision sends it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prices_on_each_revision() {
    each_backend(|app| async move {
        app.demo_catalog(app.org).await;
        let id = offering_id(&app, "mobile-10gb");
        let bullfinch = app.call("GET", &format!("/product-offerings/{id}"), None).await;
        let price = &bullfinch.body["price"];
        assert_eq!(price["netPriceMinor"], 29900);
        assert_eq!(price["currencyOptionsMinor"], json!({"EUR": 2700, "USD": 2900}));
        assert_eq!(price["bindingContract"]["duration"], json!({"unit": "MONTHS", "value": 24}));
        assert_eq!(price["bindingContract"]["discount"]["source"], "BINDING_CONTRACT");
        assert_eq!(price["customUpfrontPayment"]["billingCycles"], 12);
        assert_eq!(price["standardDiscount"]["source"], "STANDARD");
        for gone in ["netPrice", "currencyOptions", "boundMonths", "discount", "discountMinor"] {
            assert!(price.get(gone).is_none(), "bullfinch sends no {gone}: {price:#}");
        }

        let auk_key = app.new_key(app.org, Some(AUK), false).await;
        let auk = app.auk_with(&auk_key).product_offering_view(&id.parse().unwrap()).await.unwrap().into_inner();
        assert_eq!(auk.price.net_price_minor, Some(29900));
        assert_eq!(auk.price.net_price, Some(299.0));
        assert_eq!(auk.price.currency_options.get("EUR"), Some(&27.0));
        assert_eq!(auk.price.bound_months, Some(24));
        let raw = app.call_as(Some(&auk_key), "GET", &format!("/product-offerings/{id}"), None, &[]).await;
        assert!(raw.body["price"].get("discount").is_none() && raw.body["price"].get("discountMinor").is_none());
        // no binding period: no boundMonths
        let plain = app.call_as(Some(&auk_key), "GET", &format!("/product-offerings/{}", offering_id(&app, "data-sim-20gb")), None, &[]).await;
        assert!(plain.body["price"].get("boundMonths").is_none(), "{:#}", plain.body);
        app
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn major_units_follow_each_currencys_exponent() {
    each_backend(|app| async move {
        app.import_catalog(
            app.org,
            r#"
products: [{key: p, internalName: P, type: SUBSCRIPTION, category: PRODUCT_CATEGORY_SUBSCRIPTION_CELL}]
offerings:
  - {key: yen, name: Yen, product: p, price: {netPriceMinor: 1500, currency: JPY, priceType: ONE_TIME,
     currencyOptionsMinor: {BHD: 12345, SEK: 1999}}}
"#,
        )
        .await;
        let auk_key = app.new_key(app.org, Some(AUK), false).await;
        let r = app.call_as(Some(&auk_key), "GET", &format!("/product-offerings/{}", offering_id(&app, "yen")), None, &[]).await;
        // JPY has no decimals, BHD three, SEK two
        assert_eq!(r.body["price"]["netPrice"], json!(1500.0));
        assert_eq!(r.body["price"]["currencyOptions"], json!({"BHD": 12.345, "SEK": 19.99}));
        app
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_customer_orders_from_its_catalog_or_the_default() {
    each_backend(|app| async move {
        let business = app.call("POST", "/customers", Some(json!({"customerType": "BUSINESS", "name": "Acme AB", "referenceId": "acme", "contact": {}}))).await;
        let consumer = app.call("POST", "/customers", Some(json!({"customerType": "CONSUMER", "name": "Maria", "contact": {}}))).await;
        let (business_id, consumer_id) = (business.body["customerId"].as_str().unwrap(), consumer.body["customerId"].as_str().unwrap());
        let client = app.bullfinch();

        // before any catalog exists, a customer has none
        let none = client.customer_product_catalog_view(&consumer_id.parse().unwrap()).await.unwrap_err();
        assert_refused(&none, 404, "product_catalog_not_found");
        app.call("GET", &format!("/customers/{consumer_id}/product-catalog"), None).await.assert_error(404, "product_catalog_not_found");

        // the demo catalog, and rid_acme assigned the business catalog
        app.import_catalog(app.org, switchboard::demo::CATALOG.split("\nassignments:").next().unwrap()).await;
        app.import_catalog(app.org, "assignments: [{customer: rid_acme, catalog: business}]").await;

        let mine = client.customer_product_catalog_view(&"rid_acme".parse().unwrap()).await.unwrap().into_inner();
        assert_eq!(mine.name.as_str(), "Business");
        assert_eq!(mine.customer_id.to_string(), business_id);
        assert_eq!(mine.items.len(), 14);
        assert!(mine.items.iter().any(|o| o.product.type_ == bullfinch::types::ProductType::License));

        // the default catalog, in its own order, without the archived offering
        let default = client.customer_product_catalog_view(&consumer_id.parse().unwrap()).await.unwrap().into_inner();
        assert_eq!(default.name.as_str(), "Consumer");
        assert_eq!(
            default.items.iter().map(|o| o.name.as_str()).collect::<Vec<_>>(),
            [
                "Mobile 10 GB",
                "Data SIM 20 GB",
                "Mobile Broadband 100",
                "Travel eSIM",
                "Europe 5 GB, 30 days",
                "Extra data 5 GB",
                "USA week pass",
                "Replacement SIM card"
            ]
        );
        // the auk form carries major units
        let auk_key = app.new_key(app.org, Some(AUK), false).await;
        let auk = app.auk_with(&auk_key).customer_product_catalog_view(&consumer_id.parse().unwrap()).await.unwrap().into_inner();
        assert_eq!(auk.items[0].price.net_price, Some(299.0));

        // a user sees only the catalogs of customers assigned to them
        let user = app.call("POST", "/users", Some(json!({"name": "Anna", "email": "anna@acme.example", "customerId": business_id}))).await;
        assert_eq!(user.status, 201, "{:#}", user.body);
        let token = app.login("anna@acme.example", Some(&app.key)).await;
        let as_anna = app.bullfinch_as(&app.key, &token);
        assert_eq!(as_anna.customer_product_catalog_view(&business_id.parse().unwrap()).await.unwrap().into_inner().name.as_str(), "Business");
        let hidden = as_anna.customer_product_catalog_view(&consumer_id.parse().unwrap()).await.unwrap_err();
        assert_refused(&hidden, 404, "customer_not_found");
        app
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn importing_the_same_file_again_changes_nothing() {
    each_backend(|app| async move {
        let text = switchboard::demo::CATALOG.split("\nassignments:").next().unwrap();
        let first = app.import_catalog(app.org, text).await;
        assert_eq!((first.updated, first.unchanged), (0, 0));
        assert_eq!(first.created, 9 + 14 + 15 + 2 + 2 + 1, "groups, products, offerings, catalogs, tax countries, settings");
        let second = app.import_catalog(app.org, text).await;
        assert_eq!((second.created, second.updated, second.unchanged), (0, 0, first.created));

        // a changed price updates that offering only, and keeps its id
        let id = offering_id(&app, "sim-card");
        let before = app.call("GET", &format!("/product-offerings/{id}"), None).await;
        let changed = text.replace("name: Replacement SIM card", "name: Replacement SIM");
        let third = app.import_catalog(app.org, &changed).await;
        assert_eq!((third.created, third.updated), (0, 1));
        let after = app.call("GET", &format!("/product-offerings/{id}"), None).await;
        assert_eq!(after.body["name"], "Replacement SIM");
        assert_eq!(after.body["price"], before.body["price"]);

        // archiving is a status change; the offering stays readable
        let archived = changed.replace("  - key: sim-card\n", "  - key: sim-card\n    status: ARCHIVED\n");
        assert_eq!(app.import_catalog(app.org, &archived).await.updated, 1);
        assert_eq!(app.call("GET", &format!("/product-offerings/{id}"), None).await.body["status"], "ARCHIVED");

        // another organisation's import of the same file gets its own ids
        let (other, _) = app.other_org().await;
        app.import_catalog(other, text).await;
        assert_ne!(entity_id(other, "offering", "sim-card").to_string(), id);
        app
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_invalid_file_stores_nothing_and_names_every_problem() {
    each_backend(|app| async move {
        use switchboard::domain::catalog::{file, import};
        let text = r#"
products: [{key: p, internalName: P, type: SUBSCRIPTION, category: PRODUCT_CATEGORY_SUBSCRIPTION_CELL}]
offerings:
  - {key: good, name: Good, product: p, price: {netPriceMinor: 100, currency: SEK, priceType: ONE_TIME}}
  - {key: bad, name: Bad, product: p, price: {netPriceMinor: 100, currency: SEK, priceType: RECURRING}}
assignments: [{customer: rid_nobody, catalog: nowhere}]
"#;
        let parsed = file::parse(text, false).unwrap();
        let Err(import::ImportError::Invalid(problems)) = import::import(&app.store, app.org, parsed).await else { panic!("accepted") };
        let paths: Vec<&str> = problems.iter().map(|p| p.path.as_str()).collect();
        assert_eq!(paths, ["offerings[1].price.billingCycle", "assignments[0].catalog", "assignments[0].customer"]);
        let none = app.bullfinch().product_offering_list(None, None, None, None, None, None).await.unwrap().into_inner();
        assert!(none.items.is_empty(), "nothing of an invalid file is stored");
        app
    })
    .await;
}
