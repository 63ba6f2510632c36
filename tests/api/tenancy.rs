//! Tenants are walls where the mobile network is one: a live number and a
//! SIM are held by one organisation in the whole installation (refused to
//! another without saying whose), moves at the network go only to the
//! subscription that holds its number, and usage is counted for the
//! organisation that holds the SIM. One organisation's webhook receivers
//! that hang do not hold up another's deliveries.

use crate::delivery::{local_webhooks, new_customer, register};
use crate::harness::*;
use crate::receiver::{Receiver, Reply};
use crate::usage::{active, report, usage};
use serde_json::{Value, json};
use switchboard::store::UsageKind;
use uuid::Uuid;

const NUMBER: &str = "+46701230001";

/// A second organisation with the demo catalog and a customer (Beta AB,
/// `rid_beta`) it may order for: its key.
async fn second_operator(app: &TestApp) -> (Uuid, String) {
    let (org, key) = app.other_org().await;
    app.demo_catalog(org).await;
    let r = app
        .call_as(
            Some(&key),
            "POST",
            "/customers",
            Some(json!({
                "customerType": "BUSINESS", "name": "Beta AB", "referenceId": "beta", "contact": {},
                "billing": {"method": "PAPER_INVOICE", "currency": "SEK",
                            "address": {"street1": "Storgatan 2", "city": "Stockholm", "zip": "111 22", "country": "SE"}}
            })),
            &[],
        )
        .await;
    assert_eq!(r.status, 201, "{:#}", r.body);
    app.import_catalog(org, "assignments: [{customer: rid_beta, catalog: business}]").await;
    (org, key)
}

/// `key`'s organisation buys `msisdn` for Beta AB on a `sim` SIM.
async fn buy(app: &TestApp, org: Uuid, key: &str, msisdn: &str, sim: &str) -> Raw {
    let offering = switchboard::domain::catalog::entity_id(org, "offering", "mobile-10gb").to_string();
    let body = json!({"customerId": "rid_beta", "productOfferingId": offering, "subscription": {"simType": sim, "msisdn": msisdn}});
    app.call_as(Some(key), "POST", "/subscriptions", Some(body), &[]).await
}

/// Says nothing of who holds what: no name, id or value of the holder.
fn says_nothing_of(answer: &Value, holder: &Value) {
    let text = answer.to_string();
    for what in ["Acme", holder["subscriptionId"].as_str().unwrap(), holder["customer"]["customerId"].as_str().unwrap()] {
        assert!(!text.contains(what), "the answer names {what}: {text}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_number_and_a_sim_are_held_by_one_organisation_of_the_installation() {
    each_backend(|app| async move {
        crate::orders::setup(&app).await;
        let acme = active(&app, "mobile-10gb", NUMBER).await;
        let (beta_org, beta) = second_operator(&app).await;

        // another organisation can neither order the live number...
        let r = buy(&app, beta_org, &beta, NUMBER, "ESIM").await;
        r.assert_error(409, "order_validation_failed");
        assert_eq!(r.details(), [("subscription.msisdn".to_string(), "msisdn_in_use".to_string())]);
        says_nothing_of(&r.body, &acme);

        // ...nor activate one of its own on the SIM the number is on
        let r = buy(&app, beta_org, &beta, "+46701230002", "PSIM").await;
        assert_eq!(r.status, 201, "{:#}", r.body);
        let own = r.body["subscriptionId"].as_str().unwrap().to_string();
        let r = app.call_as(Some(&beta), "POST", &format!("/subscriptions/{own}/activate"), Some(json!({"iccid": acme["iccid"]})), &[]).await;
        r.assert_error(409, "iccid_taken");
        says_nothing_of(&r.body, &acme);

        // usage of the SIM counts for the organisation that holds it
        report(&app, &acme, "r1", UsageKind::Sms, 3, (0, None)).await;
        assert_eq!(usage(&app, &acme, None).await["sms"]["used"], 3.0);

        // once cancelled, the number is free for anyone; the SIM is not
        let id = acme["subscriptionId"].as_str().unwrap();
        let r = app.call("POST", &format!("/subscriptions/{id}/cancel"), Some(json!({"force": true}))).await;
        assert_eq!((r.status, r.body["status"].as_str()), (200, Some("CANCELLED")), "{:#}", r.body);
        let r = buy(&app, beta_org, &beta, NUMBER, "PSIM").await;
        assert_eq!(r.status, 201, "{:#}", r.body);
        let again = r.body["subscriptionId"].as_str().unwrap().to_string();
        let r = app.call_as(Some(&beta), "POST", &format!("/subscriptions/{again}/activate"), Some(json!({"iccid": acme["iccid"]})), &[]).await;
        r.assert_error(409, "iccid_taken");
        app
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subscription_that_does_not_hold_its_number_is_not_moved_at_the_network() {
    each_backend(|app| async move {
        crate::orders::setup(&app).await;
        let s = active(&app, "mobile-10gb", NUMBER).await;
        // as data from before numbers were held installation-wide can be:
        // another organisation's subscription holds the number
        sqlx::query("DELETE FROM network_holds WHERE kind = 'msisdn' AND value = $1").bind(NUMBER).execute(app.store.pool()).await.unwrap();
        let id = s["subscriptionId"].as_str().unwrap();
        for (op, body) in [("pause", json!({})), ("block-sim", json!({})), ("cancel", json!({"force": true})), ("change-sim", json!({"simType": "ESIM"}))] {
            let r = app.call("POST", &format!("/subscriptions/{id}/{op}"), Some(body)).await;
            r.assert_error(409, "number_not_held");
        }
        let r = app.call("GET", &format!("/subscriptions/{id}"), None).await;
        assert_eq!((r.body["status"].as_str(), &r.body["iccid"]), (Some("ACTIVATED"), &s["iccid"]));
        app
    })
    .await;
}

/// A receiver that never answers takes at most 64 of the sender's 256
/// places: another organisation's event goes at once, not after the
/// attempts that hang have timed out.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hanging_receiver_does_not_hold_up_another_organisations_deliveries() {
    fn hang_long(s: &mut switchboard::config::Settings) {
        local_webhooks(s);
        // longer than `Receiver::next` waits: a delivery held up behind
        // the hanging attempts fails the test
        s.webhook_timeout = std::time::Duration::from_secs(60);
    }
    each_backend_with(hang_long, |app| async move {
        let mut hanging = Receiver::start().await;
        hanging.always(Reply::Hang);
        register(&app, &hanging.url, json!(["customer.created"])).await;
        for i in 0..70 {
            new_customer(&app, &app.key, &format!("Customer {i} AB")).await;
        }
        for _ in 0..64 {
            hanging.next().await;
        }

        let (_, other) = app.other_org().await;
        let mut theirs = Receiver::start().await;
        let r = app.call_as(Some(&other), "POST", "/webhook-endpoints", Some(json!({"url": theirs.url})), &[]).await;
        assert_eq!(r.status, 201, "{:#}", r.body);
        let their = new_customer(&app, &other, "Theirs AB").await;
        assert_eq!(theirs.next().await.json()["data"]["customerId"], their.as_str());
        assert!(hanging.taken().is_empty(), "no more than 64 attempts in flight to one organisation");
        app
    })
    .await;
}

/// A number of one organisation's pool, AVAILABLE, LEASED or QUARANTINED, is in use for every other organisation: its orders, its port-ins
/// and its import leave it alone, saying nothing of whose it is, and one unique index across organisations holds it on both databases.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pool_number_is_its_organisations_in_every_state() {
    each_backend(|app| async move {
        crate::orders::setup(&app).await;
        crate::numbers::pool(&app, "+46702000000..+46702000009", "CELL").await;
        // the lowest is taken by a subscription, then released: QUARANTINED for 90 days
        let offering = crate::orders::offering(&app, "mobile-10gb");
        let r = app
            .call("POST", "/subscriptions", Some(json!({"customerId": "rid_acme", "productOfferingId": offering, "subscription": {"simType": "ESIM"}})))
            .await;
        assert_eq!(r.status, 201, "{:#}", r.body);
        let quarantined = r.body["msisdn"].as_str().unwrap().to_string();
        let r = app.call("POST", &format!("/subscriptions/{}/cancel", r.body["subscriptionId"].as_str().unwrap()), Some(json!({"force": true}))).await;
        assert_eq!((r.status, r.body["status"].as_str()), (200, Some("CANCELLED")), "{:#}", r.body);
        let r = app.call("POST", "/inventory/lease-numbers", Some(json!({"types": ["CELL"], "count": 1}))).await;
        assert_eq!(r.status, 200, "{:#}", r.body);
        let leased = r.body["numbers"][0]["msisdn"].as_str().unwrap().to_string();
        let available = "+46702000009".to_string();
        let ours = [available, leased, quarantined];

        let (beta_org, beta) = second_operator(&app).await;
        let own = buy(&app, beta_org, &beta, "+46701239999", "ESIM").await;
        assert_eq!(own.status, 201, "{:#}", own.body);
        let own = own.body["subscriptionId"].as_str().unwrap().to_string();
        for number in &ours {
            let r = buy(&app, beta_org, &beta, number, "ESIM").await;
            r.assert_error(409, "order_validation_failed");
            assert_eq!(r.details(), [("subscription.msisdn".to_string(), "msisdn_in_use".to_string())], "{number}");
            assert!(!r.body.to_string().contains("Acme"), "{:#}", r.body);
            // nor brought in from "another operator"
            let body = json!({"msisdn": number, "details": {"identity": "19900101-0017"}});
            let r = app.call_as(Some(&beta), "POST", &format!("/subscriptions/{own}/in-porting"), Some(body), &[]).await;
            r.assert_error(409, "msisdn_in_use");
        }
        // nor imported into a pool of its own: the rest of the range is
        let numbers = switchboard::admin::numbers::parse_range("+46702000005..+46702000014", "CELL".parse().unwrap()).unwrap();
        let imported = app.store.import_numbers(beta_org, &numbers, app.clock.now()).await.unwrap();
        assert_eq!(imported.added, 5);
        assert_eq!(imported.in_use, (5..10).map(|n| format!("+4670200000{n}")).collect::<Vec<_>>());
        for number in &ours {
            let r = buy(&app, beta_org, &beta, number, "ESIM").await;
            r.assert_error(409, "order_validation_failed");
        }
        // the database holds it whatever the code does
        let now = app.clock.now().to_rfc3339();
        let twice =
            sqlx::query("INSERT INTO numbers (org_id, msisdn, number_type, status, created_at, updated_at) VALUES ($1, $2, 'CELL', 'AVAILABLE', $3, $3)")
                .bind(beta_org.to_string())
                .bind(&ours[0])
                .bind(&now)
                .execute(app.store.pool())
                .await;
        assert!(twice.is_err(), "a second pool took {}", ours[0]);
        app
    })
    .await;
}
