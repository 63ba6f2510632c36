//! Subscribers on both databases: one per subscription from its creation,
//! empty until set; PUT replaces every field and records
//! `subscription.subscriber_set` (nothing when already so); the checks of
//! its fields; who may read and set one; another organisation's is 404.

use crate::harness::*;
use crate::lifecycle::new_subscription;
use crate::orders::setup;
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subscriber_is_found_from_its_subscription_and_set_whole() {
    each_backend(|app| async move {
        setup(&app).await;
        let sub = new_subscription(&app, "mobile-10gb", "ESIM", "+46701234567", false).await;
        let s = app.call("GET", &format!("/subscriptions/{sub}"), None).await.body;
        let id: uuid::Uuid = s["subscriberId"].as_str().unwrap().parse().unwrap();
        let c = app.bullfinch();
        let empty = json_of(&c.subscriber_view(&id).await.unwrap().into_inner());
        assert_eq!(
            empty,
            json!({"subscriberId": id, "subscriptionId": sub, "customerId": s["customer"]["customerId"],
                                  "createdAt": s["createdAt"], "updatedAt": s["createdAt"]})
        );

        let whole = json!({"firstName": "Erik", "lastName": "Lind", "contact": {"email": "erik@acme.example", "msisdn": "+46709876543"},
                           "dateOfBirth": "1980-01-01", "identity": {"type": "PASSPORT", "number": "AB123456", "country": "SE"},
                           "address": {"street1": "Storgatan 1", "city": "Stockholm", "zip": "111 22", "country": "SE"},
                           "locale": "sv-SE", "metadata": {"crm": "42"}});
        let from = app.store.event_types(app.org).await.unwrap().len();
        let set = json_of(&c.subscriber_set(&id, &serde_json::from_value(whole.clone()).unwrap()).await.unwrap().into_inner());
        for (k, v) in whole.as_object().unwrap() {
            assert_eq!(&set[k], v, "{k}");
        }
        assert_ne!(set["updatedAt"], set["createdAt"]);
        assert_eq!(app.call("GET", &format!("/subscribers/{id}"), None).await.body, set, "a read equals the answer");
        let recorded = app.store.event_types(app.org).await.unwrap().split_off(from);
        assert_eq!(recorded.len(), 1);
        assert_eq!(recorded[0].0, "subscription.subscriber_set");
        assert_eq!(recorded[0].1, app.call("GET", &format!("/subscriptions/{sub}"), None).await.body, "the event carries the subscription");

        // the same again: nothing recorded; fewer fields: the rest cleared
        assert_eq!(app.call("PUT", &format!("/subscribers/{id}"), Some(whole)).await.body, set);
        assert_eq!(app.store.event_types(app.org).await.unwrap().len(), from + 1);
        let less = app.call("PUT", &format!("/subscribers/{id}"), Some(json!({"firstName": "Eva"}))).await;
        assert_eq!(less.status, 200, "{:#}", less.body);
        assert!(less.body.get("lastName").is_none() && less.body.get("identity").is_none());

        // fields checked beyond the schema; a refusal changes nothing
        for (body, property) in [
            (json!({"dateOfBirth": "2999-01-01"}), "dateOfBirth"),
            (json!({"contact": {"msisdn": "+46000"}}), "contact.msisdn"),
            (json!({"identity": {"type": "PASSPORT", "number": "X1", "country": "XX"}}), "identity.country"),
            (json!({"locale": "not a locale"}), "locale"),
            (json!({"identity": {"type": "BADGE", "number": "X1", "country": "SE"}}), "identity.type"),
        ] {
            let r = app.call("PUT", &format!("/subscribers/{id}"), Some(body)).await;
            r.assert_error(400, "validation_failed");
            assert!(r.details().iter().any(|(p, _)| p == property), "{property}: {:?}", r.details());
        }
        assert_eq!(app.call("GET", &format!("/subscribers/{id}"), None).await.body, less.body);

        // who: a MEMBER reads, a MANAGER sets; another organisation sees nothing
        for (role, email) in [("MEMBER", "m@acme.example"), ("MANAGER", "boss@acme.example")] {
            assert_eq!(app.call("POST", "/users", Some(json!({"name": role, "email": email, "customerId": "rid_acme", "role": role}))).await.status, 201);
        }
        let member = app.bullfinch_as(&app.key, &app.login("m@acme.example", Some(&app.key)).await);
        assert_eq!(json_of(&member.subscriber_view(&id).await.unwrap().into_inner().first_name), "Eva");
        let req = serde_json::from_value(json!({"firstName": "Nils"})).unwrap();
        assert_eq!(status_of(&member.subscriber_set(&id, &req).await.unwrap_err()), 403);
        let manager = app.bullfinch_as(&app.key, &app.login("boss@acme.example", Some(&app.key)).await);
        assert_eq!(json_of(&manager.subscriber_set(&id, &req).await.unwrap().into_inner().first_name), "Nils");
        let (_, other) = app.other_org().await;
        app.call_as(Some(&other), "GET", &format!("/subscribers/{id}"), None, &[]).await.assert_error(404, "subscriber_not_found");
        app.call_as(Some(&other), "PUT", &format!("/subscribers/{id}"), Some(json!({})), &[]).await.assert_error(404, "subscriber_not_found");
        app.call("GET", &format!("/subscribers/{}", uuid::Uuid::new_v4()), None).await.assert_error(404, "subscriber_not_found");

        // a cancelled subscription's subscriber stays as it was
        assert_eq!(app.call("POST", &format!("/subscriptions/{sub}/cancel"), Some(json!({}))).await.status, 200);
        app.call("PUT", &format!("/subscribers/{id}"), Some(json!({"firstName": "Olle"}))).await.assert_error(409, "subscription_cancelled");
        assert_eq!(app.call("GET", &format!("/subscribers/{id}"), None).await.body["firstName"], "Nils");
        app
    })
    .await;
}
