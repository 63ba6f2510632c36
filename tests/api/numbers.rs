//! The number pool and its leases on both databases, in a sandbox
//! organisation whose clock is moved: without a pool any valid number is
//! taken as before; with one, a line without a number is given the lowest
//! free one of its type, a chosen number must be the pool's, AVAILABLE or
//! leased with the line's token, on an offering that offers the choice; a
//! lease holds its numbers for an hour, is used up by a submission (of
//! two orders on one leased number, one wins) and then refused; a
//! cancelled subscription's number rests 90 days.

use crate::harness::*;
use crate::orders::{offering, setup};
use serde_json::{Value, json};

/// Adds `range` of `kind` to the pool of `app`'s organisation.
pub async fn pool(app: &TestApp, range: &str, kind: &str) {
    let numbers = switchboard::admin::numbers::parse_range(range, kind.parse().unwrap()).unwrap();
    app.store.import_numbers(app.org, &numbers, app.clock.now()).await.unwrap();
}

/// An order of `customer` with one SUBSCRIPTION line on `offering_key`
/// (its `subscription` as given); the answer.
async fn order(app: &TestApp, customer: &str, offering_key: &str, subscription: Value) -> Raw {
    let line = json!({"type": "SUBSCRIPTION", "productOfferingId": offering(app, offering_key), "subscription": subscription});
    app.call("POST", "/orders", Some(json!({"customerId": customer, "lineItems": [line]}))).await
}

/// Creates and submits an order as `order` does; the submitted order.
async fn bought(app: &TestApp, customer: &str, offering_key: &str, subscription: Value) -> Value {
    let made = order(app, customer, offering_key, subscription).await;
    assert_eq!(made.status, 201, "{:#}", made.body);
    let r = app.call("POST", &format!("/orders/{}/submit", made.body["orderId"].as_str().unwrap()), None).await;
    assert_eq!(r.status, 200, "{:#}", r.body);
    r.body
}

async fn lease(app: &TestApp, body: Value) -> Raw {
    app.call("POST", "/inventory/lease-numbers", Some(body)).await
}

fn detail_of(r: &Raw) -> String {
    r.details().first().map(|(_, code)| code.clone()).unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pool_assigns_numbers_and_checks_the_ones_chosen() {
    each_backend(|mut app| async move {
        app.become_sandbox().await;
        app.stop_jobs();
        app.without_dunning().await;
        let c = setup(&app).await;
        // no pool: any valid number, and nothing to assign or lease from
        bought(&app, &c, "mobile-10gb", json!({"simType": "ESIM", "msisdn": "+46709000001"})).await;
        let r = order(&app, &c, "mobile-10gb", json!({"simType": "ESIM"})).await;
        r.assert_error(409, "order_validation_failed");
        assert_eq!(r.details(), [("lineItems[0].subscription.msisdn".to_string(), "numbers_unavailable".to_string())]);
        lease(&app, json!({"types": ["CELL"], "count": 1})).await.assert_error(409, "numbers_unavailable");

        pool(&app, "+46701000000..+46701000002", "CELL").await;
        pool(&app, "+46731000000..+46731000000", "DATA").await;
        // the lowest free number of the subscription's type, shown on the line from then on
        let o = bought(&app, &c, "mobile-10gb", json!({"simType": "ESIM"})).await;
        assert_eq!(o["lineItems"][0]["subscription"]["msisdn"], "+46701000000");
        let s = app.call("GET", &format!("/subscriptions/{}", o["lineItems"][0]["createdSubscriptionId"].as_str().unwrap()), None).await.body;
        assert_eq!((&s["msisdn"], &s["display"]), (&json!("+46701000000"), &json!("+46 70 100 00 00")));
        let data = bought(&app, &c, "data-sim-20gb", json!({"simType": "ESIM"})).await;
        assert_eq!(data["lineItems"][0]["subscription"]["msisdn"], "+46731000000", "a DATA subscription takes a DATA number");
        let r = order(&app, &c, "data-sim-20gb", json!({"simType": "ESIM"})).await;
        assert_eq!(detail_of(&r), "numbers_unavailable", "{:#}", r.body);

        // choosing: only on an offering that offers it, only the pool's free numbers of the type
        for (offering_key, msisdn, code) in [
            ("mobile-10gb", "+46701000001", "number_selection_not_offered"),
            ("mobile-unlimited", "+46709000002", "number_not_in_pool"),
            ("mobile-unlimited", "+46701000000", "msisdn_in_use"),
            ("mobile-unlimited", "+46731000000", "number_type_mismatch"),
        ] {
            let r = order(&app, &c, offering_key, json!({"simType": "ESIM", "msisdn": msisdn})).await;
            r.assert_error(409, "order_validation_failed");
            assert_eq!(r.details(), [("lineItems[0].subscription.msisdn".to_string(), code.to_string())], "{msisdn} on {offering_key}");
        }
        let chosen = bought(&app, &c, "mobile-unlimited", json!({"simType": "ESIM", "msisdn": "+46701000002"})).await;
        assert_eq!(chosen["lineItems"][0]["subscription"]["msisdn"], "+46701000002");

        // two lines left without a number, one free: the second is refused at submission
        let two = json!({"customerId": c, "lineItems": [
            {"type": "SUBSCRIPTION", "productOfferingId": offering(&app, "mobile-10gb"), "subscription": {"simType": "ESIM"}},
            {"type": "SUBSCRIPTION", "productOfferingId": offering(&app, "mobile-10gb"), "subscription": {"simType": "PSIM"}}]});
        let made = app.call("POST", "/orders", Some(two)).await;
        assert_eq!(made.status, 201, "{:#}", made.body);
        let r = app.call("POST", &format!("/orders/{}/submit", made.body["orderId"].as_str().unwrap()), None).await;
        r.assert_error(409, "order_validation_failed");
        assert_eq!(r.details(), [("lineItems[1].subscription.msisdn".to_string(), "numbers_unavailable".to_string())]);

        // a cancelled subscription's number rests 90 days, then is offered again
        let id = o["lineItems"][0]["createdSubscriptionId"].as_str().unwrap();
        let r = app.call("POST", &format!("/subscriptions/{id}/cancel"), Some(json!({}))).await;
        assert_eq!(r.status, 200, "{:#}", r.body);
        let r = order(&app, &c, "mobile-unlimited", json!({"simType": "ESIM", "msisdn": "+46701000000"})).await;
        assert_eq!(detail_of(&r), "number_quarantined", "{:#}", r.body);
        let offered = lease(&app, json!({"types": ["CELL"], "count": 10})).await;
        assert_eq!(offered.body["numbers"].as_array().unwrap().len(), 1, "only +46701000001 is free: {:#}", offered.body);
        let cancelled_at = app.clock.now();
        crate::invoices::advance(&app, &(cancelled_at + chrono::Duration::days(91)).to_rfc3339()).await;
        let offered = lease(&app, json!({"types": ["CELL"], "count": 10})).await;
        let numbers: Vec<&str> = offered.body["numbers"].as_array().unwrap().iter().map(|n| n["msisdn"].as_str().unwrap()).collect();
        assert_eq!(numbers, ["+46701000000", "+46701000001"], "the lease of 91 days ago expired; the rested number is back");
        app
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lease_holds_numbers_for_an_hour_and_one_order_uses_it() {
    each_backend(|mut app| async move {
        app.become_sandbox().await;
        app.stop_jobs();
        let c = setup(&app).await;
        pool(&app, "+46701000000..+46701000004", "CELL").await;
        pool(&app, "+46721000000..+46721000001", "M2M").await;
        let unlimited = offering(&app, "mobile-unlimited");

        // what a lease refuses
        for body in [
            json!({"types": ["CELL"], "count": 0}),
            json!({"types": ["CELL"], "count": 11}),
            json!({"types": ["VOICE"], "count": 1}),
            json!({"types": [], "count": 1}),
            json!({"count": 1}),
        ] {
            lease(&app, body.clone()).await.assert_error(400, "validation_failed");
        }
        lease(&app, json!({"types": ["CELL"], "count": 1, "productOfferingId": offering(&app, "mobile-10gb")}))
            .await
            .assert_error(409, "number_selection_not_offered");
        lease(&app, json!({"types": ["CELL"], "count": 1, "productOfferingId": uuid::Uuid::new_v4()})).await.assert_error(404, "product_offering_not_found");
        lease(&app, json!({"types": ["MBB"], "count": 1})).await.assert_error(409, "numbers_unavailable");

        // through the generated client, on the offering that offers the choice: the types in order of preference
        let body = serde_json::from_value(json!({"types": ["M2M", "CELL"], "count": 3, "productOfferingId": unlimited})).unwrap();
        let held = json_of(&app.bullfinch().number_lease(None, &body).await.unwrap().into_inner());
        let numbers: Vec<(&str, &str)> =
            held["numbers"].as_array().unwrap().iter().map(|n| (n["msisdn"].as_str().unwrap(), n["type"].as_str().unwrap())).collect();
        assert_eq!(numbers, [("+46721000000", "M2M"), ("+46721000001", "M2M"), ("+46701000000", "CELL")]);
        assert_eq!(held["availability"], json!([{"type": "M2M", "available": 0}, {"type": "CELL", "available": 4}]));
        let expires: chrono::DateTime<chrono::Utc> = held["expiresAt"].as_str().unwrap().parse().unwrap();
        let left = expires - app.clock.now();
        assert!(left <= chrono::Duration::hours(1) && left > chrono::Duration::minutes(59), "an hour from the lease: {expires}");
        let token = held["leaseToken"].as_str().unwrap().to_string();
        assert!(token.starts_with("nlt_"), "{token}");
        // offered to no one else; a short supply gives what there is (on the older revision too)
        let auk =
            app.call_as(Some(&app.key), "POST", "/inventory/lease-numbers", Some(json!({"types": ["CELL"], "count": 10})), &[("Api-Revision", AUK)]).await;
        assert_eq!(auk.status, 200, "{:#}", auk.body);
        assert_eq!(auk.body["numbers"].as_array().unwrap().len(), 4);
        assert!(!auk.body["numbers"].to_string().contains("+46701000000"));

        // a leased number needs its lease's token
        let take = |token: Option<&str>| {
            let mut s = json!({"simType": "ESIM", "msisdn": "+46701000000"});
            if let Some(t) = token {
                s["numberLeaseToken"] = json!(t);
            }
            s
        };
        assert_eq!(detail_of(&order(&app, &c, "mobile-unlimited", take(None)).await), "number_leased");
        assert_eq!(detail_of(&order(&app, &c, "mobile-unlimited", take(Some("nlt_not-a-lease"))).await), "number_lease_not_found");
        let other = auk.body["leaseToken"].as_str().unwrap();
        assert_eq!(detail_of(&order(&app, &c, "mobile-unlimited", take(Some(other))).await), "number_leased", "held by the other lease");
        let no_number = order(&app, &c, "mobile-unlimited", json!({"simType": "ESIM", "numberLeaseToken": token})).await;
        assert_eq!(no_number.details(), [("lineItems[0].subscription.msisdn".to_string(), "required".to_string())]);

        // two orders on one leased number: the first submitted wins, the other is refused
        let a = order(&app, &c, "mobile-unlimited", take(Some(&token))).await;
        let b = order(&app, &c, "mobile-unlimited", take(Some(&token))).await;
        assert_eq!((a.status, b.status), (201, 201), "{:#} {:#}", a.body, b.body);
        let paths = [&a, &b].map(|o| format!("/orders/{}/submit", o.body["orderId"].as_str().unwrap()));
        let (first, second) = tokio::join!(app.call("POST", &paths[0], None), app.call("POST", &paths[1], None));
        let mut statuses = [first.status, second.status];
        statuses.sort();
        assert_eq!(statuses, [200, 409], "{:#} {:#}", first.body, second.body);
        let lost = if first.status == 409 { &first } else { &second };
        assert!(["lease_used", "msisdn_in_use"].contains(&detail_of(lost).as_str()), "{:#}", lost.body);
        // the lease is used up: its other numbers are free again, its token refused
        assert_eq!(
            detail_of(&order(&app, &c, "mobile-unlimited", json!({"simType": "ESIM", "msisdn": "+46701000001", "numberLeaseToken": token})).await),
            "lease_used"
        );
        let m2m = lease(&app, json!({"types": ["M2M"], "count": 2})).await;
        assert_eq!(m2m.body["numbers"].as_array().unwrap().len(), 2, "{:#}", m2m.body);

        // an hour later the other lease has expired: its token is refused, its numbers free
        let held_line = json!({"simType": "ESIM", "msisdn": auk.body["numbers"][0]["msisdn"], "numberLeaseToken": other});
        let pending = order(&app, &c, "mobile-unlimited", held_line.clone()).await;
        assert_eq!(pending.status, 201, "{:#}", pending.body);
        crate::invoices::advance(&app, &(app.clock.now() + chrono::Duration::minutes(61)).to_rfc3339()).await;
        let r = app.call("POST", &format!("/orders/{}/submit", pending.body["orderId"].as_str().unwrap()), None).await;
        r.assert_error(409, "order_validation_failed");
        assert_eq!(detail_of(&r), "lease_expired");
        let again = lease(&app, json!({"types": ["CELL"], "count": 10, "productOfferingId": unlimited})).await;
        assert_eq!(again.body["numbers"].as_array().unwrap().len(), 4, "{:#}", again.body);

        // another organisation has no pool and knows no lease of this one
        let (_, theirs) = app.other_org().await;
        let r = app.call_as(Some(&theirs), "POST", "/inventory/lease-numbers", Some(json!({"types": ["CELL"], "count": 1})), &[]).await;
        r.assert_error(409, "numbers_unavailable");
        app
    })
    .await;
}

/// What every "next free number" hands out, raced: eight clients submit
/// orders at once whose lines take the pool's lowest free number (one
/// asking for none, one bringing its own number and so starting on a
/// temporary one), while eight more lease two numbers each. Every request
/// succeeds and no number is handed out twice.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn submissions_and_leases_at_once_each_get_numbers_of_their_own() {
    each_backend(|mut app| async move {
        app.become_sandbox().await;
        app.stop_jobs();
        app.without_dunning().await;
        let c = setup(&app).await;
        pool(&app, "+46701000000..+46701000039", "CELL").await;
        // the key alone holds all eight leases
        assert!(app.store.set_settings(app.org, &[(switchboard::store::settings::LEASES_PER_HOLDER, 8)]).await.unwrap());
        let on = offering(&app, "mobile-10gb");
        let mut orders = vec![];
        for i in 0..8 {
            let lines = json!([
                {"type": "SUBSCRIPTION", "productOfferingId": on, "subscription": {"simType": "ESIM"}},
                {"type": "SUBSCRIPTION", "productOfferingId": on,
                 "subscription": {"simType": "ESIM", "msisdn": format!("+4670987000{i}"), "portIn": {"details": {"identity": "19900101-0017"}}}},
            ]);
            let made = app.call("POST", "/orders", Some(json!({"customerId": c, "lineItems": lines}))).await;
            assert_eq!(made.status, 201, "{:#}", made.body);
            orders.push(made.body["orderId"].as_str().unwrap().parse().unwrap());
        }
        let clients: Vec<bullfinch::Client> = (0..16).map(|_| app.bullfinch()).collect();
        let lease_body: bullfinch::types::LeaseNumbersRequest = serde_json::from_value(json!({"types": ["CELL"], "count": 2})).unwrap();
        let submissions = orders
            .iter()
            .zip(&clients[..8])
            .map(|(id, client)| async move { client.order_submit(id, None).await.map(|o| json_of(&o.into_inner())).map_err(|e| e.status()) });
        let leases = clients[8..].iter().map(|client| {
            let body = &lease_body;
            async move { client.number_lease(None, body).await.map(|l| json_of(&l.into_inner())).map_err(|e| e.status()) }
        });
        let (submitted, leased) = futures::join!(futures::future::join_all(submissions), futures::future::join_all(leases));
        let mut handed_out = vec![];
        for order in submitted {
            let order = order.expect("every submission succeeds");
            for line in order["lineItems"].as_array().unwrap() {
                let id = line["createdSubscriptionId"].as_str().unwrap();
                // the subscription's own number: the pool's, or the temporary one a port-in runs on
                let s = app.call("GET", &format!("/subscriptions/{id}"), None).await.body;
                handed_out.push(s["msisdn"].as_str().unwrap().to_string());
            }
        }
        for lease in leased {
            let lease = lease.expect("every lease succeeds");
            let numbers = lease["numbers"].as_array().unwrap();
            assert_eq!(numbers.len(), 2, "{lease:#}");
            handed_out.extend(numbers.iter().map(|n| n["msisdn"].as_str().unwrap().to_string()));
        }
        assert_eq!(handed_out.len(), 32);
        let distinct: std::collections::BTreeSet<&String> = handed_out.iter().collect();
        assert_eq!(distinct.len(), 32, "a number handed out twice: {handed_out:?}");
        assert!(handed_out.iter().all(|n| n.starts_with("+467010000")), "all from the pool: {handed_out:?}");
        app
    })
    .await;
}
