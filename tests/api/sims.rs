//! SIMs on both databases and revisions: without an inventory a move takes
//! the SIM it names (or a new eSIM profile) as before; with one, activate
//! and change-sim take AVAILABLE inventory SIMs of the kind (an eSIM
//! getting a fresh profile), a replaced SIM is BLOCKED and an ended
//! subscription's RETIRED; `GET /inventory/sims/{iccid}` shows each with
//! the network's live installation status, its activation code only to
//! those who may see it (audited), and nothing to another organisation.

use crate::harness::*;
use crate::lifecycle::new_subscription;
use crate::orders::setup;
use serde_json::{Value, json};

/// The `n`th ICCID of the tests: 8946, 14 digits, and the Luhn check digit.
pub fn iccid(n: usize) -> String {
    let body = format!("8946{:014}", 77_000_000 + n);
    let sum: u32 = body
        .chars()
        .rev()
        .enumerate()
        .map(|(i, c)| {
            let d = c.to_digit(10).unwrap();
            if i % 2 == 0 { if d * 2 > 9 { d * 2 - 9 } else { d * 2 } } else { d }
        })
        .sum();
    format!("{body}{}", (10 - sum % 10) % 10)
}

async fn sim(app: &TestApp, iccid: &str) -> Raw {
    app.call("GET", &format!("/inventory/sims/{iccid}"), None).await
}

async fn mv(app: &TestApp, id: &str, op: &str, body: Value) -> Raw {
    app.call("POST", &format!("/subscriptions/{id}/{op}"), Some(body)).await
}

async fn ok(app: &TestApp, id: &str, op: &str, body: Value) -> Value {
    let r = mv(app, id, op, body).await;
    assert_eq!(r.status, 200, "{op}: {:#}", r.body);
    r.body
}

fn viewed(app_events: &[(String, Value)]) -> usize {
    app_events.iter().filter(|(t, _)| t == "subscription.esim_activation_code_viewed").count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_an_inventory_a_sim_is_shown_as_its_subscription_took_it() {
    each_backend(|app| async move {
        setup(&app).await;
        let id = new_subscription(&app, "mobile-10gb", "ESIM", "+46709100001", false).await;
        let activated = ok(&app, &id, "activate", json!({})).await;
        let on = activated["iccid"].as_str().unwrap().to_string();
        let before = viewed(&app.store.event_types(app.org).await.unwrap());
        // through the generated client: the key alone sees the code, and the read is audited
        let shown = json_of(&app.bullfinch().inventory_sim_view(&on.parse().unwrap()).await.unwrap().into_inner());
        assert_eq!(
            (&shown["status"], &shown["type"], &shown["subscriptionId"], &shown["msisdn"], &shown["installationStatus"]),
            (&json!("ACTIVE"), &json!("ESIM"), &json!(id), &json!("+46709100001"), &json!("ENABLED")),
            "{shown:#}"
        );
        assert_eq!(shown["esimActivationCode"], activated["esimActivationCode"]);
        assert_eq!(viewed(&app.store.event_types(app.org).await.unwrap()), before + 1);
        ok(&app, &id, "pause", json!({})).await;
        assert_eq!(sim(&app, &on).await.body["installationStatus"], "DISABLED", "the network switched it off");

        // a member of the customer sees the SIM, not its code, and records nothing
        let before = viewed(&app.store.event_types(app.org).await.unwrap());
        let user = app.call("POST", "/users", Some(json!({"name": "Mo", "email": "mo@acme.example", "customerId": "rid_acme", "role": "MEMBER"}))).await;
        assert_eq!(user.status, 201, "{:#}", user.body);
        let token = app.login("mo@acme.example", Some(&app.key)).await;
        let bearer = format!("Bearer {token}");
        let as_member = app.call_as(Some(&app.key), "GET", &format!("/inventory/sims/{on}"), None, &[("authorization", &bearer)]).await;
        assert_eq!(as_member.status, 200, "{:#}", as_member.body);
        assert!(as_member.body.get("esimActivationCode").is_none(), "{:#}", as_member.body);
        assert_eq!(viewed(&app.store.event_types(app.org).await.unwrap()), before);

        // refusals: not an ICCID, none of ours, another organisation's
        let r = sim(&app, "89460000000000012345").await;
        r.assert_error(400, "validation_failed");
        assert_eq!(r.details(), [("iccid".to_string(), "invalid_iccid".to_string())], "{:#}", r.body);
        sim(&app, &iccid(1)).await.assert_error(404, "sim_not_found");
        let (_, theirs) = app.other_org().await;
        app.call_as(Some(&theirs), "GET", &format!("/inventory/sims/{on}"), None, &[]).await.assert_error(404, "sim_not_found");
        // the older revision reads it too
        let auk = app.call_as(Some(&app.key), "GET", &format!("/inventory/sims/{on}"), None, &[("Api-Revision", AUK)]).await;
        assert_eq!((auk.status, &auk.body["status"]), (200, &json!("ACTIVE")));
        app
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_an_inventory_moves_take_its_available_sims() {
    each_backend(|app| async move {
        setup(&app).await;
        let esims: Vec<String> = (100..103).map(iccid).collect();
        let psims: Vec<String> = (200..202).map(iccid).collect();
        let sims: Vec<(String, switchboard::kinds::SimType)> = esims
            .iter()
            .map(|i| (i.clone(), switchboard::kinds::SimType::Esim))
            .chain(psims.iter().map(|i| (i.clone(), switchboard::kinds::SimType::Psim)))
            .collect();
        assert_eq!(app.store.import_sims(app.org, &sims, app.clock.now()).await.unwrap(), 5);
        assert_eq!(app.store.import_sims(app.org, &sims, app.clock.now()).await.unwrap(), 0, "importing again adds nothing");
        let stock = sim(&app, &esims[0]).await;
        assert_eq!((&stock.body["status"], stock.body.get("subscriptionId"), stock.body.get("installationStatus")), (&json!("AVAILABLE"), None, None));

        // an eSIM takes the lowest AVAILABLE one, with a fresh profile
        let a = new_subscription(&app, "mobile-10gb", "ESIM", "+46709100002", false).await;
        let activated = ok(&app, &a, "activate", json!({})).await;
        assert_eq!(activated["iccid"], json!(esims[0]));
        assert!(activated["esimActivationCode"].as_str().unwrap().starts_with("LPA:1$"), "{activated:#}");
        let taken = sim(&app, &esims[0]).await.body;
        assert_eq!((&taken["status"], &taken["subscriptionId"], &taken["installationStatus"]), (&json!("ACTIVE"), &json!(a), &json!("ENABLED")));

        // a PSIM names an AVAILABLE card of the inventory
        let p = new_subscription(&app, "mobile-10gb", "PSIM", "+46709100003", false).await;
        let outside = iccid(300);
        for (named, code) in [(&outside, "sim_not_in_inventory"), (&esims[1], "sim_type_mismatch"), (&esims[0], "sim_type_mismatch")] {
            mv(&app, &p, "activate", json!({"iccid": named})).await.assert_error(409, code);
        }
        assert_eq!(ok(&app, &p, "activate", json!({"iccid": psims[0]})).await["iccid"], json!(psims[0]));
        mv(&app, &p, "change-sim", json!({"simType": "PSIM", "iccid": psims[0]})).await.assert_error(409, "sim_not_available");

        // change-sim: the next eSIM; the replaced one is BLOCKED, its profile deleted
        let changed = ok(&app, &a, "change-sim", json!({"simType": "ESIM"})).await;
        assert_eq!(changed["iccid"], json!(esims[1]));
        let old = sim(&app, &esims[0]).await.body;
        assert_eq!((&old["status"], &old["installationStatus"]), (&json!("BLOCKED"), &json!("DELETED")), "{old:#}");
        // the PSIM moves to an eSIM named from the inventory
        assert_eq!(ok(&app, &p, "change-sim", json!({"simType": "ESIM", "iccid": esims[2]})).await["iccid"], json!(esims[2]));
        assert_eq!(sim(&app, &psims[0]).await.body["status"], "BLOCKED");
        let c = new_subscription(&app, "mobile-10gb", "ESIM", "+46709100004", false).await;
        mv(&app, &c, "activate", json!({})).await.assert_error(409, "sims_unavailable");

        // an ended subscription's SIM is RETIRED
        ok(&app, &a, "cancel", json!({})).await;
        assert_eq!(sim(&app, &esims[1]).await.body["status"], "RETIRED");
        app
    })
    .await;
}

/// Orders (submitted) of `n` ESIM subscriptions of rid_acme on numbers
/// from `first` on, ten lines an order; their ids.
async fn pending_esims(app: &TestApp, n: usize, first: u64) -> Vec<String> {
    let offering = crate::orders::offering(app, "mobile-10gb");
    let mut ids = vec![];
    for chunk in (0..n).collect::<Vec<_>>().chunks(10) {
        let lines: Vec<Value> = chunk
            .iter()
            .map(|i| json!({"type": "SUBSCRIPTION", "productOfferingId": offering, "subscription": {"simType": "ESIM", "msisdn": format!("+4670{}", first + *i as u64)}}))
            .collect();
        let made = app.call("POST", "/orders", Some(json!({"customerId": "rid_acme", "lineItems": lines}))).await;
        assert_eq!(made.status, 201, "{:#}", made.body);
        let submitted = app.call("POST", &format!("/orders/{}/submit", made.body["orderId"].as_str().unwrap()), None).await;
        assert_eq!(submitted.status, 200, "{:#}", submitted.body);
        ids.extend(submitted.body["lineItems"].as_array().unwrap().iter().map(|l| l["createdSubscriptionId"].as_str().unwrap().to_string()));
    }
    ids
}

/// Eight clients activate sixty subscriptions at once from an inventory of
/// two hundred eSIMs: each takes a SIM of its own (a claim made before the
/// network is asked), so none refuses another while one is free.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn eight_clients_activating_sixty_subscriptions_at_once_each_take_a_sim_of_their_own() {
    each_backend(|app| async move {
        setup(&app).await;
        let stock: Vec<(String, switchboard::kinds::SimType)> = (1000..1200).map(|n| (iccid(n), switchboard::kinds::SimType::Esim)).collect();
        assert_eq!(app.store.import_sims(app.org, &stock, app.clock.now()).await.unwrap(), 200);
        let ids = pending_esims(&app, 60, 9_200_000).await;
        let clients: Vec<bullfinch::Client> = (0..8).map(|_| app.bullfinch()).collect();
        let activations = ids.iter().enumerate().map(|(i, id)| {
            let client = &clients[i % clients.len()];
            async move {
                let id = id.parse().unwrap();
                client.subscription_activate(&id, None, &Default::default()).await
            }
        });
        let answers = futures::future::join_all(activations).await;
        let mut statuses = std::collections::BTreeMap::<u16, usize>::new();
        let mut taken = std::collections::BTreeSet::new();
        for answer in answers {
            match answer {
                Ok(activated) => {
                    *statuses.entry(200).or_default() += 1;
                    let activated = activated.into_inner();
                    assert!(activated.esim_activation_code.is_some(), "the answer of the move that issued the profile shows its code");
                    taken.insert(activated.iccid.expect("activated on a SIM").to_string());
                }
                Err(e) => *statuses.entry(e.status().map_or(0, |s| s.as_u16())).or_default() += 1,
            }
        }
        assert_eq!(statuses, [(200, 60)].into(), "every activation answered 200");
        assert_eq!(taken.len(), 60, "sixty distinct ICCIDs");
        let stock: std::collections::BTreeSet<String> = stock.into_iter().map(|(i, _)| i).collect();
        assert!(taken.is_subset(&stock), "each from the inventory");
        for iccid in &taken {
            assert_eq!(sim(&app, iccid).await.body["status"], "ACTIVE");
        }
        app
    })
    .await;
}
