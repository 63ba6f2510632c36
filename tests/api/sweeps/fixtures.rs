//! The objects the sweeps name: one organisation's fixtures (an object of
//! every kind an operation takes the id of), example bodies naming them,
//! and subscriptions and add-ons brought to the state an operation moves.

use super::Operation;
use crate::harness::*;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use uuid::Uuid;

/// Existing objects of one organisation, by the parameter names that take
/// their ids. A new kind of id in spec/ fails the tenancy sweep until it
/// has a fixture here.
pub struct Fixtures {
    pub ids: BTreeMap<&'static str, (String, String)>,
}

impl Fixtures {
    pub async fn create(app: &TestApp, org: Uuid, key: &str, tag: &str) -> Fixtures {
        app.demo_catalog(org).await;
        let offering = switchboard::domain::catalog::entity_id(org, "offering", "mobile-10gb").to_string();
        let customer = app
            .call_as(Some(key), "POST", "/customers", Some(json!({
                "customerType": "BUSINESS", "name": format!("{tag} AB"), "referenceId": format!("{tag}-customer"),
                "contact": {"email": format!("office@{tag}.example")},
                "billing": {"method": "PAPER_INVOICE", "currency": "SEK",
                            "address": {"street1": "Storgatan 1", "city": "Stockholm", "zip": "111 22", "country": "SE"}}
            })), &[])
            .await;
        assert_eq!(customer.status, 201, "{:#}", customer.body);
        let customer_id = customer.body["customerId"].as_str().unwrap().to_string();
        app.import_catalog(org, &format!("assignments: [{{customer: rid_{tag}-customer, catalog: business}}]")).await;
        let user = app
            .call_as(Some(key), "POST", "/users", Some(json!({
                "name": format!("{tag} person"), "email": format!("person@{tag}.example"),
                "customerId": customer_id, "referenceId": format!("{tag}-user"), "role": "ADMIN"
            })), &[])
            .await;
        assert_eq!(user.status, 201, "{:#}", user.body);
        let user_id = user.body["userId"].as_str().unwrap().to_string();
        let line = json!({"type": "SUBSCRIPTION", "productOfferingId": offering, "subscription": {"simType": "ESIM", "msisdn": "+46701234567"}});
        let order = app.call_as(Some(key), "POST", "/orders", Some(json!({"customerId": customer_id, "currency": "SEK", "lineItems": [line]})), &[]).await;
        assert_eq!(order.status, 201, "{:#}", order.body);
        let order_id = order.body["orderId"].as_str().unwrap().to_string();
        // a submitted order: a subscription and a license assigned to it
        let lines = json!([
            {"type": "SUBSCRIPTION", "productOfferingId": offering,
             "subscription": {"simType": "ESIM", "msisdn": "+46701234568", "referenceId": format!("{tag}-subscription")}},
        ]);
        let bought = app.call_as(Some(key), "POST", "/orders", Some(json!({"customerId": customer_id, "lineItems": lines})), &[]).await;
        let bought = app.call_as(Some(key), "POST", &format!("/orders/{}/submit", bought.body["orderId"].as_str().unwrap()), None, &[]).await;
        assert_eq!(bought.status, 200, "{:#}", bought.body);
        let subscription_id = bought.body["lineItems"][0]["createdSubscriptionId"].as_str().unwrap().to_string();
        let subscription = app.call_as(Some(key), "GET", &format!("/subscriptions/{subscription_id}"), None, &[]).await;
        let subscriber_id = subscription.body["subscriberId"].as_str().unwrap().to_string();
        let pbx = switchboard::domain::catalog::entity_id(org, "offering", "pbx-user").to_string();
        let lines = json!([{"type": "LICENSE", "productOfferingId": pbx, "subscriptionId": subscription_id}]);
        let bought = app.call_as(Some(key), "POST", "/orders", Some(json!({"customerId": customer_id, "lineItems": lines})), &[]).await;
        let bought = app.call_as(Some(key), "POST", &format!("/orders/{}/submit", bought.body["orderId"].as_str().unwrap()), None, &[]).await;
        assert_eq!(bought.status, 200, "{:#}", bought.body);
        let license_id = bought.body["lineItems"][0]["createdLicenseId"].as_str().unwrap().to_string();
        let endpoint = app.call_as(Some(key), "POST", "/webhook-endpoints", Some(json!({"url": format!("https://hooks.acme.example/{tag}")})), &[]).await;
        assert_eq!(endpoint.status, 201, "{:#}", endpoint.body);
        let endpoint_id = endpoint.body["webhookEndpointId"].as_str().unwrap().to_string();
        let events = app.call_as(Some(key), "GET", "/events?limit=1", None, &[]).await;
        let event_id = events.body["items"][0]["eventId"].as_str().unwrap().to_string();
        let ids = BTreeMap::from([
            ("customerId", (customer_id, format!("rid_{tag}-customer"))),
            ("userId", (user_id, format!("rid_{tag}-user"))),
            // offerings have no reference ids: the id stands in for both
            ("productOfferingId", (offering.clone(), offering.clone())),
            // the add-on options of an add-on on an offering
            ("currentProductOfferingId", (offering.clone(), offering)),
            ("orderId", (order_id.clone(), order_id)),
            ("subscriptionId", (subscription_id, format!("rid_{tag}-subscription"))),
            // subscribers are found from their subscription: no reference ids
            ("subscriberId", (subscriber_id.clone(), subscriber_id)),
            // licenses have no reference ids either
            ("licenseId", (license_id.clone(), license_id)),
            // nor do webhook endpoints
            ("webhookEndpointId", (endpoint_id.clone(), endpoint_id)),
            ("eventId", (event_id.clone(), event_id)),
        ]);
        Fixtures { ids }
    }

    /// Whether the objects a parameter names have `rid_` references.
    pub fn has_reference(&self, name: &str) -> bool {
        self.ids.get(name).is_some_and(|(id, rid)| id != rid)
    }

    /// The id (or `rid_` reference) for a parameter, or a failure naming
    /// the operation that needs a new fixture.
    pub fn get(&self, op: &Operation, name: &str, by_reference: bool) -> String {
        let (id, rid) = self.ids.get(name).unwrap_or_else(|| panic!("{}: no tenancy fixture for `{name}`; add one to Fixtures in tests/api/sweeps.rs", op.label()));
        if by_reference { rid.clone() } else { id.clone() }
    }
}

/// An example body naming this organisation's fixtures instead of the
/// document's example ids: a field named like a fixture (`customerId`,
/// `productOfferingId`, ...), or ending in `UserId`, at any depth.
pub fn with_fixtures(body: &Value, fixtures: &Fixtures) -> Value {
    match body {
        Value::Object(fields) => Value::Object(
            fields
                .iter()
                .map(|(k, v)| {
                    let fixture = if k.ends_with("UserId") { Some("userId") } else { fixtures.ids.get_key_value(k.as_str()).map(|(n, _)| *n) };
                    let v = match (fixture.and_then(|n| fixtures.ids.get(n)), v) {
                        (Some((id, _)), Value::String(_)) => Value::String(id.clone()),
                        _ => with_fixtures(v, fixtures),
                    };
                    (k.clone(), v)
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(|i| with_fixtures(i, fixtures)).collect()),
        other => other.clone(),
    }
}

/// A new subscription of our customer (the `n`th, numbered for its
/// number), in a state from which `operation` moves it.
pub async fn moved_subscription(app: &TestApp, ours: &Fixtures, n: usize, operation: &str) -> String {
    let line = json!({"type": "SUBSCRIPTION", "productOfferingId": ours.ids["productOfferingId"].0,
                      "subscription": {"simType": "ESIM", "msisdn": format!("+4670666{n:04}")}});
    let order = app.call("POST", "/orders", Some(json!({"customerId": ours.ids["customerId"].0, "lineItems": [line]}))).await;
    let order = app.call("POST", &format!("/orders/{}/submit", order.body["orderId"].as_str().unwrap()), None).await;
    assert_eq!(order.status, 200, "{:#}", order.body);
    let id = order.body["lineItems"][0]["createdSubscriptionId"].as_str().unwrap().to_string();
    let before: &[(&str, Value)] = match operation {
        "activate" => &[],
        "restore" => &[("activate", json!({})), ("pause", json!({}))],
        "withdraw-cancellation" => &[("activate", json!({})), ("cancel", json!({"effectiveDate": "2999-01-01"}))],
        _ => &[("activate", json!({}))],
    };
    for (op, body) in before {
        let r = app.call("POST", &format!("/subscriptions/{id}/{op}"), Some(body.clone())).await;
        assert_eq!(r.status, 200, "{op}: {:#}", r.body);
    }
    id
}

/// For an operation on a subscription's add-ons: a subscription of its
/// own (ACTIVATED, with an extra-data add-on where the operation needs
/// one) and a body that succeeds.
pub async fn addon_case(app: &TestApp, ours: &Fixtures, op: &Operation, n: &mut usize) -> Option<(String, Value)> {
    let offering = |key: &str| switchboard::domain::catalog::entity_id(app.org, "offering", key).to_string();
    if !matches!(op.id.as_str(), "subscription_addon_create" | "subscription_addon_cancel" | "subscription_addon_product_offering_change") {
        return None;
    }
    *n += 1;
    let id = moved_subscription(app, ours, *n, "activate").await;
    let r = app.call("POST", &format!("/subscriptions/{id}/activate"), Some(json!({}))).await;
    assert_eq!(r.status, 200, "{:#}", r.body);
    let data = json!({"addons": [{"productOfferingId": offering("extra-data-5gb")}]});
    if op.id == "subscription_addon_create" {
        return Some((id, data));
    }
    let r = app.call("POST", &format!("/subscriptions/{id}/addons"), Some(data)).await;
    assert_eq!(r.status, 201, "{:#}", r.body);
    let addon = r.body["items"][0]["subscriptionAddonId"].clone();
    if op.id == "subscription_addon_cancel" {
        return Some((id, json!({"subscriptionAddonIds": [addon]})));
    }
    app.import_catalog(app.org, crate::addons::MORE_DATA).await;
    Some((id, json!({"subscriptionAddonId": addon, "productOfferingId": offering("extra-data-20gb")})))
}
