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
            .call_as(
                Some(key),
                "POST",
                "/customers",
                Some(json!({
                    "customerType": "BUSINESS", "name": format!("{tag} AB"), "referenceId": format!("{tag}-customer"),
                    "contact": {"email": format!("office@{tag}.example")},
                    "billing": {"method": "PAPER_INVOICE", "currency": "SEK",
                                "address": {"street1": "Storgatan 1", "city": "Stockholm", "zip": "111 22", "country": "SE"}}
                })),
                &[],
            )
            .await;
        assert_eq!(customer.status, 201, "{:#}", customer.body);
        let customer_id = customer.body["customerId"].as_str().unwrap().to_string();
        app.import_catalog(org, &format!("assignments: [{{customer: rid_{tag}-customer, catalog: business}}]")).await;
        let user = app
            .call_as(
                Some(key),
                "POST",
                "/users",
                Some(json!({
                    "name": format!("{tag} person"), "email": format!("person@{tag}.example"),
                    "customerId": customer_id, "referenceId": format!("{tag}-user"), "role": "ADMIN"
                })),
                &[],
            )
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
             "subscription": {"simType": "ESIM", "msisdn": number_of(tag), "referenceId": format!("{tag}-subscription")}},
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
        // a link paid with a saved card: its link, its intent (SUCCEEDED,
        // so refundable) and the profile it saved
        let (link_id, intent_id, profile_id) = paid_link(app, key, &customer_id, &offering, tag).await;
        let line = json!({"type": "SUBSCRIPTION", "productOfferingId": offering, "subscription": {"simType": "ESIM", "msisdn": format!("{}8", &number_of(tag)[..11])}});
        let paid = app.call_as(Some(key), "POST", "/orders", Some(json!({"customerId": customer_id, "lineItems": [line]})), &[]).await;
        let session =
            app.call_as(Some(key), "POST", "/payment-sessions", Some(json!({"orderId": paid.body["orderId"], "paymentProfileId": profile_id})), &[]).await;
        assert_eq!(session.status, 201, "{:#}", session.body);
        let session_id = session.body["paymentSessionId"].as_str().unwrap().to_string();
        settled_until(app, key, &format!("/payment-sessions/{session_id}"), |s| s["status"] != "PROCESSING").await;
        let setup = json!({"orderId": order_id, "paymentProvider": "PROVIDER_1", "returnUrl": "https://shop.example/card-saved"});
        let setup = app.call_as(Some(key), "POST", "/payment-profiles/sessions", Some(setup), &[]).await;
        assert_eq!(setup.status, 201, "{:#}", setup.body);
        let setup_id = setup.body["paymentProfileSessionId"].as_str().unwrap().to_string();
        let invoice_id = open_invoice(app, org, key, &customer_id).await;
        let iccid = sim_in_use(app, key, &customer_id, &offering, tag).await;
        let run = app.call_as(Some(key), "POST", "/reports", Some(json!({"reportKey": "events"})), &[]).await;
        assert_eq!(run.status, 201, "{:#}", run.body);
        let run_id = run.body["reportRunId"].as_str().unwrap().to_string();
        settled_until(app, key, &format!("/reports/{run_id}"), |r| r["status"] == "SUCCEEDED").await;
        let ids = BTreeMap::from([
            // report runs have no reference ids
            ("reportRunId", (run_id.clone(), run_id)),
            // SIMs are named by their ICCIDs alone
            ("iccid", (iccid.clone(), iccid)),
            ("invoiceId", (invoice_id.clone(), invoice_id)),
            ("customerId", (customer_id, format!("rid_{tag}-customer"))),
            ("paymentLinkId", (link_id.clone(), link_id)),
            ("paymentIntentId", (intent_id.clone(), intent_id)),
            ("paymentProfileId", (profile_id.clone(), profile_id)),
            ("paymentSessionId", (session_id.clone(), session_id)),
            ("paymentProfileSessionId", (setup_id.clone(), setup_id)),
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
        let (id, rid) =
            self.ids.get(name).unwrap_or_else(|| panic!("{}: no tenancy fixture for `{name}`; add one to Fixtures in tests/api/sweeps.rs", op.label()));
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

/// A payment link of `customer` paid on its page with a saved card: the
/// ids of the link, its intent and the profile.
async fn paid_link(app: &TestApp, key: &str, customer: &str, offering: &str, tag: &str) -> (String, String, String) {
    let line =
        json!({"type": "SUBSCRIPTION", "productOfferingId": offering, "subscription": {"simType": "ESIM", "msisdn": format!("{}9", &number_of(tag)[..11])}});
    let order = app.call_as(Some(key), "POST", "/orders", Some(json!({"customerId": customer, "lineItems": [line]})), &[]).await;
    assert_eq!(order.status, 201, "{:#}", order.body);
    let link = app.call_as(Some(key), "POST", "/payment-links", Some(json!({"orderId": order.body["orderId"], "savePaymentProfile": true})), &[]).await;
    assert_eq!(link.status, 201, "{:#}", link.body);
    let (status, _, _) = crate::payments::pay_card(link.body["hostedUrl"].as_str().unwrap(), "4242424242424242").await;
    assert_eq!(status, 200);
    let link = app.call_as(Some(key), "GET", &format!("/payment-links/{}", link.body["paymentLinkId"].as_str().unwrap()), None, &[]).await;
    assert_eq!(link.body["status"], "COMPLETED", "{:#}", link.body);
    let profiles = app.call_as(Some(key), "GET", &format!("/payment-profiles?customerId={customer}"), None, &[]).await;
    let id = |v: &Value| v.as_str().unwrap().to_string();
    (id(&link.body["paymentLinkId"]), id(&link.body["paymentIntentId"]), id(&profiles.body["items"][0]["paymentProfileId"]))
}

/// The ICCID of the card a new subscription of `customer` was activated
/// on (a PSIM: an eSIM's activation code would be shown to each read, and
/// each showing recorded).
async fn sim_in_use(app: &TestApp, key: &str, customer: &str, offering: &str, tag: &str) -> String {
    let line =
        json!({"type": "SUBSCRIPTION", "productOfferingId": offering, "subscription": {"simType": "PSIM", "msisdn": format!("{}6", &number_of(tag)[..11])}});
    let order = app.call_as(Some(key), "POST", "/orders", Some(json!({"customerId": customer, "lineItems": [line]})), &[]).await;
    let submitted = app.call_as(Some(key), "POST", &format!("/orders/{}/submit", order.body["orderId"].as_str().unwrap()), None, &[]).await;
    assert_eq!(submitted.status, 200, "{:#}", submitted.body);
    let id = submitted.body["lineItems"][0]["createdSubscriptionId"].as_str().unwrap();
    let card = crate::sims::iccid(900_000 + tag.bytes().map(usize::from).sum::<usize>());
    let activated = app.call_as(Some(key), "POST", &format!("/subscriptions/{id}/activate"), Some(json!({"iccid": card})), &[]).await;
    assert_eq!(activated.status, 200, "{:#}", activated.body);
    activated.body["iccid"].as_str().unwrap().to_string()
}

/// The customer's DRAFT invoice (its submitted orders' lines), finalised
/// as its job does once its day has ended: OPEN.
pub async fn open_invoice(app: &TestApp, org: Uuid, key: &str, customer: &str) -> String {
    let listed = app.call_as(Some(key), "GET", &format!("/invoices?customerId={customer}&status=DRAFT"), None, &[]).await;
    let draft = &listed.body["items"][0];
    let id = draft["invoiceId"].as_str().unwrap_or_else(|| panic!("a draft: {:#}", listed.body)).to_string();
    let day: chrono::NaiveDate = draft["billingDate"].as_str().unwrap().parse().unwrap();
    let ended = day.succ_opt().unwrap().and_hms_opt(0, 0, 0).unwrap().and_utc();
    let public = app.base.trim_end_matches("/api/v2");
    switchboard::domain::invoices::due::run(&app.store, app.network(), public, org, id.parse().unwrap(), ended).await.unwrap();
    let open = app.call_as(Some(key), "GET", &format!("/invoices/{id}"), None, &[]).await;
    assert_eq!(open.body["status"], "OPEN", "{:#}", open.body);
    id
}

/// The number of the subscription of the fixtures tagged `tag`: each
/// organisation's its own, as a live number is held installation-wide.
fn number_of(tag: &str) -> String {
    format!("+467012{:05}", tag.bytes().map(u32::from).sum::<u32>())
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
    if !matches!(
        op.id.as_str(),
        "subscription_addon_create"
            | "subscription_addon_cancel"
            | "subscription_addon_product_offering_change"
            | "subscription_addon_product_offering_options"
    ) {
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
    if op.id == "subscription_addon_product_offering_options" {
        return Some((id, Value::Null));
    }
    if op.id == "subscription_addon_cancel" {
        return Some((id, json!({"subscriptionAddonIds": [addon]})));
    }
    // (the business catalog keeps the license tier other operations use)
    app.import_catalog(app.org, &crate::addons::MORE_DATA.replace("pbx-user, ", "pbx-user, pbx-user-pro, ")).await;
    Some((id, json!({"subscriptionAddonId": addon, "productOfferingId": offering("extra-data-20gb")})))
}

/// The operation's path naming objects that exist: fixtures for ids, and
/// for parameters that are not ids (the document name, the revision of a
/// reference page), a real value.
pub fn existing_path(op: &Operation, fixtures: &Fixtures) -> String {
    op.fill(|name| match name {
        "document" => format!("{}.json", op.revision),
        "revision" => op.revision.clone(),
        _ => fixtures.get(op, name, false),
    })
}

/// Gives our organisation a number pool for the lease's own request, and
/// takes it away before any other: with a pool every order would have to
/// name its numbers from it, and the sweeps' orders name their own.
async fn number_pool(app: &TestApp, wanted: bool) {
    let cleared = ["DELETE FROM numbers WHERE org_id = $1", "DELETE FROM number_leases WHERE org_id = $1"];
    for sql in cleared {
        sqlx::query(sql).bind(app.org.to_string()).execute(app.store.pool()).await.unwrap();
    }
    if wanted {
        crate::numbers::pool(app, "+46701900000..+46701900009", "CELL").await;
    }
}

/// A request of `op` built to succeed on our organisation: its document's
/// example body naming our fixtures, on objects that exist, and for an
/// operation that moves or uses up an object, on one of its own in a
/// state the move leaves (`n` numbers the objects made so far).
pub async fn succeeding(app: &TestApp, ours: &Fixtures, op: &Operation, n: &mut usize) -> (String, Option<Value>) {
    *n += 1;
    number_pool(app, op.id == "number_lease").await;
    let mut body = op.body.as_ref().map(|b| fresh(&with_fixtures(b, ours), *n));
    // a login code is verified as mailed for a login started now
    if op.id == "auth_email_verify" {
        let email = "person@ours.example".to_string();
        let started = app.call_as(None, "POST", "/auth/email/start", Some(json!({"email": email})), &[]).await;
        assert_eq!(started.status, 202, "{:#}", started.body);
        body = Some(json!({"email": email, "nonce": started.body["nonce"], "code": app.mailed_code(&email).await}));
    }
    // a refresh spends the refresh token of a login made now
    if op.id == "auth_token_refresh" {
        let signed_in = app.login_answer("person@ours.example", None).await;
        body = Some(json!({"refreshToken": signed_in.refresh_token}));
    }
    // the sandbox clock moves a minute on, from a clock READY again
    if op.id == "sandbox_clock_advance" {
        let now = ready_clock(app).await;
        body = Some(json!({"to": (now + chrono::Duration::minutes(1)).to_rfc3339()}));
    }
    // a license is cancelled with no reason given
    if op.id == "license_cancel" {
        body = Some(json!({}));
    }
    // a license is bought from a license offering; its offering
    // change, on a license of its own, names another tier
    let offering = |key: &str| switchboard::domain::catalog::entity_id(app.org, "offering", key).to_string();
    if op.id == "license_create" {
        body = Some(json!({"customerId": ours.ids["customerId"].0, "productOfferingId": offering("pbx-user")}));
    }
    let mut own_license = None;
    if matches!(op.id.as_str(), "license_product_offering_change" | "license_cancel") {
        let bought = app.call("POST", "/licenses", Some(json!({"customerId": ours.ids["customerId"].0, "productOfferingId": offering("pbx-user")}))).await;
        assert_eq!(bought.status, 201, "{:#}", bought.body);
        own_license = Some(bought.body["licenseId"].as_str().unwrap().to_string());
        if op.id == "license_product_offering_change" {
            body = Some(json!({"productOfferingId": offering("pbx-user-pro")}));
        }
    }
    // a SIM read shows (and records the showing of) an eSIM's activation code
    if op.id == "inventory_sim_view" {
        let line = json!({"type": "SUBSCRIPTION", "productOfferingId": ours.ids["productOfferingId"].0, "subscription": {"simType": "ESIM", "msisdn": format!("+4670444{:04}", *n)}});
        let order = app.call("POST", "/orders", Some(json!({"customerId": ours.ids["customerId"].0, "lineItems": [line]}))).await;
        let submitted = app.call("POST", &format!("/orders/{}/submit", order.body["orderId"].as_str().unwrap()), None).await;
        let id = submitted.body["lineItems"][0]["createdSubscriptionId"].as_str().unwrap_or_else(|| panic!("{:#}", submitted.body)).to_string();
        let activated = app.call("POST", &format!("/subscriptions/{id}/activate"), Some(json!({}))).await;
        let iccid = activated.body["iccid"].as_str().unwrap_or_else(|| panic!("{:#}", activated.body)).to_string();
        return (op.fill(|_| iccid.clone()), None);
    }
    // a port-in is read of a subscription that has one
    if op.id == "porting_in_view" {
        let subscription = &ours.ids["subscriptionId"].0;
        let started = app
            .call(
                "POST",
                &format!("/subscriptions/{subscription}/in-porting"),
                Some(json!({"msisdn": format!("+4670333{:04}", *n), "details": {"identity": "19900101-0017"}})),
            )
            .await;
        assert_eq!(started.status, 200, "{:#}", started.body);
        // submitted to the carrier by its job before the read: what that
        // records is not the read's
        settled_until(app, &app.key, &format!("/subscriptions/{subscription}/in-porting"), |p| p["status"] != "PENDING").await;
    }
    // an endpoint deleted is one of its own
    if op.id == "webhook_endpoint_delete" {
        let made = app.call("POST", "/webhook-endpoints", Some(json!({"url": format!("https://hooks.acme.example/delete-{n}")}))).await;
        assert_eq!(made.status, 201, "{:#}", made.body);
        let id = made.body["webhookEndpointId"].as_str().unwrap().to_string();
        return (op.fill(|_| id.clone()), body);
    }
    // the runs of one report, which the list must name
    if op.id == "report_list" {
        return (format!("{}?reportKey=events", op.fill(|_| String::new())), None);
    }
    // an offering change names an offering other than the fixture's own
    if op.id == "subscription_product_offering_change" {
        let unlimited = switchboard::domain::catalog::entity_id(app.org, "offering", "mobile-unlimited").to_string();
        body = Some(json!({"productOfferingId": unlimited}));
    }
    // each order operation on an order of its own, still a DRAFT
    let mut path = existing_path(op, ours);
    if let Some(id) = &own_license {
        path = op.fill(|_| id.clone());
    }
    // the add-on operations on add-ons of their own (bodies naming
    // add-on offerings, not the fixture's plan)
    let addon = addon_case(app, ours, op, n).await;
    if let Some((id, addon)) = &addon {
        path = op.fill(|_| id.clone());
        body = Some(addon.clone());
        // the offerings its add-on may change to
        if op.id == "subscription_addon_product_offering_options" {
            return (format!("{path}?currentProductOfferingId={}", offering("extra-data-5gb")), None);
        }
    }
    if op.path_params().any(|p| p == "orderId") {
        let order = own_order(app, ours, n).await;
        path = op.fill(|_| order.clone());
    }
    // a link for an order of its own (an order has one ACTIVE link);
    // one cancelled is its own too
    if op.id == "payment_link_create" {
        body = Some(json!({"orderId": own_order(app, ours, n).await, "savePaymentProfile": true, "returnUrl": "https://shop.example/thanks"}));
    }
    if op.id == "payment_link_cancel" {
        let order = own_order(app, ours, n).await;
        let link = app.call("POST", "/payment-links", Some(json!({"orderId": order}))).await;
        assert_eq!(link.status, 201, "{:#}", link.body);
        path = op.fill(|_| link.body["paymentLinkId"].as_str().unwrap().to_string());
    }
    // a refund of a minor unit: the paid fixture is refunded many times
    if op.id == "payment_intent_refund" {
        body = Some(json!({"amountMinor": 1, "reason": "sweep"}));
    }
    if op.id == "payment_session_create" {
        body = Some(json!({"orderId": own_order(app, ours, n).await, "paymentProfileId": ours.ids["paymentProfileId"].0}));
    }
    // a setup session for an order of its own; one cancelled is its own too
    if op.id == "payment_profile_session_create" {
        body = Some(json!({"orderId": own_order(app, ours, n).await, "paymentProvider": "PROVIDER_1", "returnUrl": "https://shop.example/card-saved"}));
    }
    if op.id == "payment_profile_session_cancel" {
        let order = own_order(app, ours, n).await;
        let setup = app
            .call(
                "POST",
                "/payment-profiles/sessions",
                Some(json!({"orderId": order, "paymentProvider": "PROVIDER_1", "returnUrl": "https://shop.example/card-saved"})),
            )
            .await;
        assert_eq!(setup.status, 201, "{:#}", setup.body);
        path = op.fill(|_| setup.body["paymentProfileSessionId"].as_str().unwrap().to_string());
    }
    // an invoice marked paid is one of its own: an order's lines, finalised
    if op.id == "invoice_mark_paid" {
        let order = own_order(app, ours, n).await;
        let submitted = app.call("POST", &format!("/orders/{order}/submit"), None).await;
        assert_eq!(submitted.status, 200, "{:#}", submitted.body);
        let id = open_invoice(app, app.org, &app.key, &ours.ids["customerId"].0).await;
        path = op.fill(|_| id.clone());
    }
    if op.id == "payment_profile_list" {
        return (format!("{path}?customerId={}", ours.ids["customerId"].0), None);
    }
    // an eSIM's activation code: one of its own that has a profile
    if op.path.ends_with("/esim-activation-code") {
        *n += 1;
        let id = moved_subscription(app, ours, *n, "pause").await;
        path = op.fill(|_| id.clone());
    }
    // each move of a subscription on one of its own, brought to a
    // state the move leaves
    if addon.is_none() && op.method == "POST" && op.path.starts_with("/subscriptions/{subscriptionId}/") && op.path_params().count() == 1 {
        *n += 1;
        let id = moved_subscription(app, ours, *n, op.path.rsplit('/').next().unwrap()).await;
        path = op.fill(|_| id.clone());
    }
    (path, body)
}

/// A new DRAFT order of our customer (the `n`th object made).
async fn own_order(app: &TestApp, ours: &Fixtures, n: &mut usize) -> String {
    *n += 1;
    let msisdn = format!("+4670555{:04}", *n);
    let line = json!({"type": "SUBSCRIPTION", "productOfferingId": ours.ids["productOfferingId"].0, "subscription": {"simType": "ESIM", "msisdn": msisdn}});
    let order = app.call("POST", "/orders", Some(json!({"customerId": ours.ids["customerId"].0, "lineItems": [line]}))).await;
    assert_eq!(order.status, 201, "{:#}", order.body);
    order.body["orderId"].as_str().unwrap().to_string()
}

/// `body` with the values that must be unique (a referenceId, a number, an
/// email address) made new for the `n`th request, so that one example
/// body can succeed many times.
fn fresh(body: &Value, n: usize) -> Value {
    match body {
        Value::Object(fields) => Value::Object(
            fields
                .iter()
                .map(|(k, v)| {
                    let v = match (k.as_str(), v) {
                        ("referenceId", Value::String(_)) => json!(format!("sweep-{n}")),
                        ("msisdn", Value::String(_)) => json!(format!("+4670777{n:04}")),
                        ("email", Value::String(_)) => json!(format!("sweep{n}@ours.example")),
                        ("iccid", Value::String(_)) => json!(crate::sims::iccid(n)),
                        _ => fresh(v, n),
                    };
                    (k.clone(), v)
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(|i| fresh(i, n)).collect()),
        other => other.clone(),
    }
}

/// Waits, running the jobs, until what `path` shows is `done`.
async fn settled_until(app: &TestApp, key: &str, path: &str, done: impl Fn(&Value) -> bool) {
    let mut rounds = app.job_rounds();
    loop {
        app.run_jobs().await;
        let now = app.call_as(Some(key), "GET", path, None, &[]).await;
        assert_eq!(now.status, 200, "{:#}", now.body);
        if done(&now.body) {
            return;
        }
        // a worker holds the job: look again when it has finished a round
        tokio::time::timeout(std::time::Duration::from_secs(20), rounds.changed()).await.expect("the background work settles").unwrap();
    }
}

/// Waits until what `op` (answered `body`) left to a job has run: a
/// payment session's charge, a refund.
pub async fn settled(app: &TestApp, op: &Operation, body: &Value) {
    match op.id.as_str() {
        "payment_session_create" => {
            let path = format!("/payment-sessions/{}", body["paymentSessionId"].as_str().unwrap());
            settled_until(app, &app.key, &path, |s| s["status"] != "PROCESSING").await
        }
        "payment_intent_refund" => {
            let path = format!("/payment-intents/{}", body["paymentIntentId"].as_str().unwrap());
            settled_until(app, &app.key, &path, |i| i["refunds"].as_array().into_iter().flatten().all(|r| r["status"] != "PENDING")).await
        }
        // a report's run is its job's
        "report_create" => {
            let path = format!("/reports/{}", body["reportRunId"].as_str().unwrap());
            settled_until(app, &app.key, &path, |r| r["status"] == "SUCCEEDED" || r["status"] == "FAILED").await
        }
        // a port-in's submission to the carrier is its job's
        "porting_in_start" => {
            let path = format!("/subscriptions/{}/in-porting", body["subscription"]["subscriptionId"].as_str().unwrap());
            settled_until(app, &app.key, &path, |p| p["status"] != "PENDING").await
        }
        _ => {}
    }
}

/// The sandbox clock's now, once an advance before it has run (the jobs
/// run it; a second advance meanwhile would be 409 clock_advancing).
async fn ready_clock(app: &TestApp) -> chrono::DateTime<chrono::Utc> {
    let mut rounds = app.job_rounds();
    loop {
        app.run_jobs().await;
        let clock = app.call("GET", "/sandbox/clock", None).await;
        assert_eq!(clock.status, 200, "{:#}", clock.body);
        if clock.body["status"] == "READY" {
            return clock.body["now"].as_str().unwrap().parse().unwrap();
        }
        // a worker holds the advance: look again when it has finished a round
        tokio::time::timeout(std::time::Duration::from_secs(20), rounds.changed()).await.expect("the advance finishes").unwrap();
    }
}
