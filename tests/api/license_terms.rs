//! A license's billing cycles and offering changes, on both databases:
//! it renews on its day each cycle (`license.renewed`) while ACTIVE, its
//! cycle passing unrenewed while PAUSED; it changes to another tier of its
//! kind now (an upgrade) or on its renewal day (a downgrade), showing the
//! scheduled change only in pendingProductOffering until then (SERVICE
//! rule 7).

use crate::harness::*;
use crate::lifecycle::new_subscription;
use crate::orders::{offering, setup};
use serde_json::{Value, json};

async fn license_events(app: &TestApp, from: usize) -> Vec<(String, Value)> {
    app.store.event_types(app.org).await.unwrap().into_iter().skip(from).filter(|(t, _)| t.starts_with("license.")).collect()
}

async fn seen(app: &TestApp) -> usize {
    app.store.event_types(app.org).await.unwrap().len()
}

async fn read(app: &TestApp, id: &str) -> Value {
    json_of(&app.bullfinch().license_view(&id.parse().unwrap()).await.unwrap().into_inner())
}

/// POST /licenses of `key` for Acme, assigned to `subscription` when given.
async fn buy(app: &TestApp, key: &str, subscription: Option<&str>) -> Value {
    let mut body = json!({"customerId": "rid_acme", "productOfferingId": offering(app, key)});
    if let Some(s) = subscription {
        body["subscriptionId"] = json!(s);
    }
    let r = app.call("POST", "/licenses", Some(body)).await;
    assert_eq!(r.status, 201, "{:#}", r.body);
    r.body
}

async fn change(app: &TestApp, id: &str, body: Value) -> Raw {
    app.call("PUT", &format!("/licenses/{id}/product-offering-change"), Some(body)).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_license_renews_on_its_day_while_active() {
    each_backend(|app| async move {
        setup(&app).await;
        at(&app, "2030-01-31T10:00:00Z");
        let seat = buy(&app, "pbx-user", None).await;
        let id = seat["licenseId"].as_str().unwrap().to_string();
        assert_eq!(seat["renewsOn"], "2030-02-28", "a cycle ends on its day, or the month's last");
        let s = new_subscription(&app, "mobile-10gb", "ESIM", "+46701239911", false).await;
        app.call("POST", &format!("/subscriptions/{s}/activate"), Some(json!({}))).await;
        let assigned = buy(&app, "pbx-user", Some(&s)).await;
        let assigned_id = assigned["licenseId"].as_str().unwrap().to_string();
        assert_eq!((assigned["status"].as_str(), assigned["renewsOn"].as_str()), (Some("ACTIVE"), Some("2030-02-28")));
        let r = app.call("POST", &format!("/subscriptions/{s}/pause"), Some(json!({}))).await;
        assert_eq!(r.status, 200, "{:#}", r.body);

        // the day comes: the job renews it, once, told with the next day
        at(&app, "2030-02-28T00:00:01Z");
        let from = seen(&app).await;
        app.run_jobs().await;
        // (told by the job, before any read could renew it)
        let told = license_events(&app, from).await;
        let renewed = read(&app, &id).await;
        assert_eq!(renewed["renewsOn"], "2030-03-31", "{renewed:#}");
        assert_eq!(told, [("license.renewed".to_string(), renewed.clone())]);
        // a PAUSED license's cycle passes unrenewed, told nothing; the job
        // moved it on to its next day
        let stored = app.store.license(app.org, assigned_id.parse().unwrap()).await.unwrap().unwrap();
        assert_eq!(stored.renews_on.map(|d| d.to_string()).as_deref(), Some("2030-03-31"));
        let paused = read(&app, &assigned_id).await;
        assert_eq!((paused["status"].as_str(), paused["renewsOn"].as_str()), (Some("PAUSED"), Some("2030-03-31")));
        app.run_jobs().await;
        assert_eq!(license_events(&app, from).await.len(), 1, "nothing runs twice");

        // nobody's job ran: a read after the day renews it, every cycle missed in turn
        at(&app, "2030-05-01T08:00:00Z");
        let from = seen(&app).await;
        let now = read(&app, &id).await;
        assert_eq!(now["renewsOn"], "2030-05-31", "{now:#}");
        let told: Vec<String> = license_events(&app, from).await.into_iter().map(|(t, _)| t).collect();
        assert_eq!(told, ["license.renewed", "license.renewed"]);
        app.run_jobs().await;
        assert_eq!(license_events(&app, from).await.len(), 2);

        // a cancelled license renews no more
        let r = app.call("POST", &format!("/licenses/{id}/cancel"), Some(json!({}))).await;
        assert_eq!((r.status, r.body.get("renewsOn")), (200, None), "{:#}", r.body);
        at(&app, "2030-06-01T00:00:01Z");
        let from = seen(&app).await;
        app.run_jobs().await;
        assert_eq!(read(&app, &id).await["status"], "CANCELLED");
        assert!(license_events(&app, from).await.iter().all(|(t, _)| t != "license.renewed"));
        app
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_license_changes_offering_now_or_on_its_renewal_day() {
    each_backend(|app| async move {
        setup(&app).await;
        at(&app, "2030-03-10T09:00:00Z");
        let seat = buy(&app, "pbx-user", None).await;
        let id = seat["licenseId"].as_str().unwrap().to_string();
        let (user, pro, queue) = (offering(&app, "pbx-user"), offering(&app, "pbx-user-pro"), offering(&app, "pbx-queue"));

        // the options: other tiers of its kind only; an upgrade is INSTANT
        let options = json_of(&app.bullfinch().license_product_offering_options(&id.parse().unwrap()).await.unwrap().into_inner());
        let listed: Vec<(&str, &str, &str)> = options["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| (o["productOffering"]["name"].as_str().unwrap(), o["changeSchedule"].as_str().unwrap(), o["changeScheduleDate"].as_str().unwrap()))
            .collect();
        assert_eq!(listed, [("PBX user pro", "INSTANT", "2030-03-10")]);
        change(&app, &id, json!({"productOfferingId": queue})).await.assert_error(409, "offering_change_not_allowed");
        change(&app, &id, json!({"productOfferingId": uuid::Uuid::new_v4()})).await.assert_error(404, "product_offering_not_found");

        // upgrade now: on the new offering at once, told once
        let from = seen(&app).await;
        let body: bullfinch::types::ProductOfferingChangeRequest = serde_json::from_value(json!({"productOfferingId": pro})).unwrap();
        let upgraded = json_of(&app.bullfinch().license_product_offering_change(&id.parse().unwrap(), &body).await.unwrap().into_inner());
        assert_eq!((upgraded["productOffering"]["name"].as_str(), upgraded.get("pendingProductOffering")), (Some("PBX user pro"), None));
        assert_eq!(upgraded["renewsOn"], "2030-04-10", "its cycles keep their day");
        assert_eq!(license_events(&app, from).await, [("license.updated".to_string(), upgraded.clone())]);

        // a downgrade waits for the renewal day: rule 7 until then
        let options = json_of(&app.bullfinch().license_product_offering_options(&id.parse().unwrap()).await.unwrap().into_inner());
        assert_eq!((&options["items"][0]["changeSchedule"], &options["items"][0]["changeScheduleDate"]), (&json!("NEXT_RENEWAL_DAY"), &json!("2030-04-10")));
        change(&app, &id, json!({"productOfferingId": user, "changeSchedule": "INSTANT"})).await.assert_error(409, "change_schedule_not_allowed");
        let from = seen(&app).await;
        let r = change(&app, &id, json!({"productOfferingId": user})).await;
        assert_eq!(r.status, 200, "{:#}", r.body);
        assert_eq!(r.body["productOffering"]["name"], "PBX user pro", "the current offering stays until the date");
        let pending = &r.body["pendingProductOffering"];
        assert_eq!(
            (&pending["scheduledAt"], &pending["product"]["name"], &pending["changeSchedule"]),
            (&json!("2030-04-10"), &json!("PBX user"), &json!("NEXT_RENEWAL_DAY"))
        );
        assert_eq!(read(&app, &id).await, r.body);
        assert_eq!(license_events(&app, from).await, [("license.updated".to_string(), r.body.clone())]);
        // asked again: already so, nothing recorded; its own offering withdraws it
        let from = seen(&app).await;
        assert_eq!(change(&app, &id, json!({"productOfferingId": user})).await.body, r.body);
        assert_eq!(seen(&app).await, from);
        let withdrawn = change(&app, &id, json!({"productOfferingId": pro})).await.body;
        assert_eq!((withdrawn.get("pendingProductOffering"), license_events(&app, from).await.len()), (None, 1), "{withdrawn:#}");
        let r = change(&app, &id, json!({"productOfferingId": user, "changeSchedule": "FIRST_OF_NEXT_MONTH"})).await;
        r.assert_error(409, "change_schedule_not_allowed"); // the 1st of April is before the renewal day
        change(&app, &id, json!({"productOfferingId": user})).await;

        // the day comes: on the new offering, renewed on it, nothing pending
        at(&app, "2030-04-10T00:00:01Z");
        let from = seen(&app).await;
        app.run_jobs().await;
        let stored = app.store.license(app.org, id.parse().unwrap()).await.unwrap().unwrap();
        assert_eq!((stored.offering_id.to_string(), stored.pending_offering.is_none()), (user.clone(), true), "the job applied it");
        let after = read(&app, &id).await;
        assert_eq!((after["productOffering"]["name"].as_str(), after.get("pendingProductOffering")), (Some("PBX user"), None), "{after:#}");
        assert_eq!(after["renewsOn"], "2030-05-10");
        let told: Vec<String> = license_events(&app, from).await.into_iter().map(|(t, _)| t).collect();
        assert_eq!(told, ["license.updated", "license.renewed"], "the change, then the renewal on the new offering");

        // a PENDING license changes at once; a CANCELLED one not at all
        let s = new_subscription(&app, "mobile-10gb", "ESIM", "+46701239921", false).await;
        let waiting = buy(&app, "pbx-user-pro", Some(&s)).await["licenseId"].as_str().unwrap().to_string();
        let options = json_of(&app.bullfinch().license_product_offering_options(&waiting.parse().unwrap()).await.unwrap().into_inner());
        assert_eq!(options["items"][0]["changeSchedule"], "INSTANT");
        let r = change(&app, &waiting, json!({"productOfferingId": user, "changeSchedule": "FIRST_OF_NEXT_MONTH"})).await;
        assert_eq!((r.status, &r.body["pendingProductOffering"]["scheduledAt"]), (200, &json!("2030-05-01")), "{:#}", r.body);
        at(&app, "2030-05-01T00:00:01Z");
        app.run_jobs().await;
        let r = read(&app, &waiting).await;
        assert_eq!((r["productOffering"]["name"].as_str(), r["status"].as_str(), r.get("pendingProductOffering")), (Some("PBX user"), Some("PENDING"), None));
        app.call("POST", &format!("/licenses/{id}/cancel"), Some(json!({}))).await;
        assert!(app.bullfinch().license_product_offering_options(&id.parse().unwrap()).await.unwrap().into_inner().items.is_empty());
        change(&app, &id, json!({"productOfferingId": pro})).await.assert_error(409, "license_cancelled");
        app
    })
    .await;
}
