//! What a payment link refuses and how it ends, on both databases: the
//! creation refusals (rule 2 among them), cancel and its 409s, the order's
//! change cancelling its link, expiry by the clock, a payment whose order
//! no longer submits (FAILED, refunded), the page sent twice at once
//! (rule 1: one submission), refunds, a card profile's expiry, a disabled
//! provider (412) and tenancy.

use crate::harness::*;
use crate::orders::setup;
use crate::payments::{intent, intent_of, link, link_now, order, page, pay_card};
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn creation_refuses_what_would_not_submit_or_does_not_fit() {
    each_backend(|app| async move {
        setup(&app).await;
        let o = order(&app, "+46701120001").await;
        let refused = |body: serde_json::Value| {
            let app = &app;
            async move { app.call("POST", "/payment-links", Some(body)).await }
        };
        // exactly one of orderId and invoiceId: the schema's oneOf
        let r = refused(json!({})).await;
        assert_eq!(r.assert_error(400, "validation_failed").details(), [("orderId".to_string(), "required".to_string())]);
        let r = refused(json!({"orderId": o, "invoiceId": "inv-1"})).await;
        assert_eq!(r.assert_error(400, "validation_failed").details(), [("invoiceId".to_string(), "exactly_one".to_string())]);
        refused(json!({"invoiceId": "inv-1"})).await.assert_error(404, "invoice_not_found");
        let r = refused(json!({"orderId": o, "setAsDefaultPaymentProfile": true, "grantAutopayConsent": true})).await;
        assert_eq!(r.assert_error(400, "validation_failed").details().len(), 2);
        refused(json!({"orderId": o, "returnUrl": "ftp://shop.example/"})).await.assert_error(400, "validation_failed");
        refused(json!({"orderId": o, "expiresAt": "2020-01-01T00:00:00Z"})).await.assert_error(400, "validation_failed");
        refused(json!({"orderId": "0190f5a0-0000-7000-8000-000000000000"})).await.assert_error(404, "order_not_found");
        refused(json!({"orderId": o, "paymentProfileId": "0190f5a0-0000-7000-8000-000000000000"})).await.assert_error(404, "payment_profile_not_found");
        // autopay consent needs a usable default profile
        refused(json!({"orderId": o, "savePaymentProfile": true, "grantAutopayConsent": true})).await.assert_error(409, "default_payment_profile_required");
        // rule 2: an order submission would refuse gets no link
        let taken = order(&app, "+46701120002").await;
        let twin = order(&app, "+46701120002").await;
        app.call("POST", &format!("/orders/{taken}/submit"), None).await;
        let r = refused(json!({"orderId": twin})).await;
        r.assert_error(409, "order_validation_failed");
        assert!(r.details().iter().any(|(p, c)| p == "lineItems[0].subscription.msisdn" && c == "msisdn_in_use"), "{:#}", r.body);
        refused(json!({"orderId": taken})).await.assert_error(409, "order_state_conflict");
        // one ACTIVE link per order
        link(&app, json!({"orderId": o})).await;
        refused(json!({"orderId": o})).await.assert_error(409, "payment_link_exists");
        // a disabled provider: 412
        switchboard::admin::org_providers(&app.store, &app.clock, app.org, &[], &[switchboard::payment_providers::ProviderName::Provider2]).await.unwrap();
        let other = order(&app, "+46701120003").await;
        refused(json!({"orderId": other, "paymentProvider": "PROVIDER_2"})).await.assert_error(412, "payment_provider_disabled");
        assert!(app.call("GET", "/payment-intents?status=PENDING", None).await.body["items"].as_array().unwrap().len() == 1, "refusals collect nothing");
        app
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_link_is_cancelled_by_request_or_by_its_orders_change_and_expires_by_the_clock() {
    each_backend(|app| async move {
        setup(&app).await;
        let client = app.bullfinch();
        // cancelled: its intent too, and its page takes no payment
        let l = link(&app, json!({"orderId": order(&app, "+46701130001").await})).await;
        let id = l["paymentLinkId"].as_str().unwrap().to_string();
        let cancelled = client.payment_link_cancel(&id.parse().unwrap(), None).await.unwrap().into_inner();
        assert_eq!(json_of(&cancelled)["status"], "CANCELED");
        assert_eq!(intent_of(&app, &l).await["status"], "CANCELED");
        app.call("POST", &format!("/payment-links/{id}/cancel"), None).await.assert_error(409, "payment_link_state_conflict");
        let (_, _, html) = pay_card(l["hostedUrl"].as_str().unwrap(), "4242424242424242").await;
        assert!(html.contains("cancelled"), "{html}");
        // the order's lines changed: what its link collects no longer
        // holds (a change of its referenceId leaves the link)
        let o = order(&app, "+46701130002").await;
        let l = link(&app, json!({"orderId": o})).await;
        let put = app.call("PUT", &format!("/orders/{o}"), Some(json!({"referenceId": "changed"}))).await;
        assert_eq!(put.status, 200, "{:#}", put.body);
        assert_eq!(link_now(&app, &l["paymentLinkId"]).await["status"], "ACTIVE");
        let lines = json!([{"type": "SUBSCRIPTION", "productOfferingId": crate::orders::offering(&app, "mobile-unlimited"), "subscription": {"simType": "ESIM", "msisdn": "+46701130002"}}]);
        let put = app.call("PUT", &format!("/orders/{o}"), Some(json!({"lineItems": lines}))).await;
        assert_eq!(put.status, 200, "{:#}", put.body);
        assert_eq!(link_now(&app, &l["paymentLinkId"]).await["status"], "CANCELED");
        // the order submitted without paying: its link collects no more
        let o = order(&app, "+46701130005").await;
        let l = link(&app, json!({"orderId": o})).await;
        assert_eq!(app.call("POST", &format!("/orders/{o}/submit"), None).await.status, 200);
        assert_eq!(link_now(&app, &l["paymentLinkId"]).await["status"], "CANCELED");
        // not paid by its expiry: EXPIRED, told once, by a read or by its job
        let l = link(&app, json!({"orderId": order(&app, "+46701130003").await, "expiresAt": (app.clock.now() + chrono::Duration::hours(1)).to_rfc3339()})).await;
        let other = link(&app, json!({"orderId": order(&app, "+46701130004").await})).await;
        app.clock.advance(chrono::Duration::hours(2));
        assert_eq!(link_now(&app, &l["paymentLinkId"]).await["status"], "EXPIRED");
        assert_eq!(intent_of(&app, &l).await["status"], "CANCELED");
        assert!(page(l["hostedUrl"].as_str().unwrap()).await.1.contains("expired"));
        app.clock.advance(chrono::Duration::hours(23));
        app.run_jobs().await;
        let listed = client.payment_link_list(None, None, None, None, Some(&vec!["EXPIRED".parse().unwrap()])).await.unwrap().into_inner();
        assert_eq!(listed.items.len(), 2);
        assert!(listed.items.iter().any(|i| i.payment_link_id.to_string() == other["paymentLinkId"].as_str().unwrap()));
        let told = app.store.event_types(app.org).await.unwrap().iter().filter(|(t, _)| t == "payment_link.expired").count();
        assert_eq!(told, 2);
        app
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_payment_whose_order_no_longer_submits_is_refunded_and_the_link_failed() {
    each_backend(|app| async move {
        setup(&app).await;
        let o = order(&app, "+46701140001").await;
        let l = link(&app, json!({"orderId": o})).await;
        // another order takes the number after the link was made
        let rival = order(&app, "+46701140001").await;
        assert_eq!(app.call("POST", &format!("/orders/{rival}/submit"), None).await.status, 200);
        let (_, _, html) = pay_card(l["hostedUrl"].as_str().unwrap(), "4242424242424242").await;
        assert!(html.contains("refunded"), "{html}");
        let l = link_now(&app, &l["paymentLinkId"]).await;
        assert_eq!(l["status"], "FAILED");
        assert!(l["failureReason"].as_str().unwrap().contains("could no longer be submitted"), "{l:#}");
        let i = intent(&app, l["paymentIntentId"].as_str().unwrap()).await;
        assert_eq!(i["status"], "SUCCEEDED");
        assert_eq!(i["refunds"][0]["status"], "PENDING");
        assert_eq!(i["amountRefundedMinor"], i["amountMinor"]);
        app.run_jobs().await;
        let i = intent(&app, l["paymentIntentId"].as_str().unwrap()).await;
        assert_eq!(i["refunds"][0]["status"], "SUCCEEDED");
        assert_eq!(app.call("GET", &format!("/orders/{o}"), None).await.body["status"], "DRAFT");
        app
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_page_sent_twice_at_once_charges_and_submits_once() {
    each_backend(|app| async move {
        setup(&app).await;
        let o = order(&app, "+46701150001").await;
        let l = link(&app, json!({"orderId": o})).await;
        let url = l["hostedUrl"].as_str().unwrap();
        let (a, b) = tokio::join!(pay_card(url, "4242424242424242"), pay_card(url, "4242424242424242"));
        assert_eq!((a.0, b.0), (200, 200));
        app.run_jobs().await;
        let l = link_now(&app, &l["paymentLinkId"]).await;
        assert_eq!(l["status"], "COMPLETED");
        let i = intent(&app, l["paymentIntentId"].as_str().unwrap()).await;
        let succeeded = i["charges"].as_array().unwrap().iter().filter(|c| c["status"] == "SUCCEEDED").count();
        assert_eq!(succeeded, 1, "{i:#}");
        let submitted = app.store.event_types(app.org).await.unwrap().iter().filter(|(t, _)| t == "order.submitted").count();
        assert_eq!(submitted, 1);
        app
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refunds_give_back_at_most_what_was_paid() {
    each_backend(|app| async move {
        setup(&app).await;
        let client = app.bullfinch();
        let l = link(&app, json!({"orderId": order(&app, "+46701160001").await})).await;
        let unpaid = intent_of(&app, &l).await;
        let unpaid_id = unpaid["paymentIntentId"].as_str().unwrap();
        app.call("POST", &format!("/payment-intents/{unpaid_id}/refunds"), Some(json!({}))).await.assert_error(409, "payment_intent_state_conflict");
        pay_card(l["hostedUrl"].as_str().unwrap(), "4242424242424242").await;
        let paid = intent_of(&app, &link_now(&app, &l["paymentLinkId"]).await).await;
        let id = paid["paymentIntentId"].as_str().unwrap().to_string();
        let total = paid["amountMinor"].as_i64().unwrap();
        let body: bullfinch::types::CreatePaymentRefundRequest = serde_json::from_value(json!({"amountMinor": 1000, "reason": "Goodwill"})).unwrap();
        let refunded = json_of(&client.payment_intent_refund(&id.parse().unwrap(), None, &body).await.unwrap().into_inner());
        assert_eq!(refunded["refunds"][0]["status"], "PENDING");
        assert_eq!(refunded["amountRefundedMinor"], 1000);
        app.call("POST", &format!("/payment-intents/{id}/refunds"), Some(json!({"amountMinor": total}))).await.assert_error(409, "refund_exceeds_payment");
        // the rest, by leaving the amount out
        let rest = app.call("POST", &format!("/payment-intents/{id}/refunds"), Some(json!({}))).await;
        assert_eq!(rest.status, 201, "{:#}", rest.body);
        assert_eq!(rest.body["amountRefundedMinor"], total);
        app.call("POST", &format!("/payment-intents/{id}/refunds"), Some(json!({"amountMinor": 1}))).await.assert_error(409, "refund_exceeds_payment");
        app.run_jobs().await;
        let i = intent(&app, &id).await;
        assert!(i["refunds"].as_array().unwrap().iter().all(|r| r["status"] == "SUCCEEDED"), "{i:#}");
        let told = app.store.event_types(app.org).await.unwrap().iter().filter(|(t, _)| t == "payment_intent.refunded").count();
        assert_eq!(told, 2);
        app
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_saved_card_expires_with_its_card_by_the_clock() {
    each_backend(|app| async move {
        setup(&app).await;
        let l = link(&app, json!({"orderId": order(&app, "+46701170001").await, "savePaymentProfile": true})).await;
        crate::payments::submit(
            l["hostedUrl"].as_str().unwrap(),
            &[("action", "pay"), ("cardNumber", "4242424242424242"), ("expiry", "12/26"), ("cvc", "123")],
        )
        .await;
        let profiles = app.call("GET", "/payment-profiles?customerId=rid_acme", None).await;
        let p = &profiles.body["items"][0];
        assert_eq!((p["status"].as_str(), p["expiresAt"].as_str(), p["isDefault"].as_bool()), (Some("ACTIVE"), Some("2026-12-31"), Some(false)));
        at(&app, "2027-01-01T12:00:00Z");
        app.run_jobs().await;
        let profiles = app.call("GET", "/payment-profiles?customerId=rid_acme", None).await;
        assert_eq!(profiles.body["items"][0]["status"], "EXPIRED");
        app.call("GET", "/payment-profiles", None).await.assert_error(400, "validation_failed");
        // an expired profile is no default for autopay
        let r = app
            .call(
                "PUT",
                "/customers/rid_acme",
                Some(json!({"billing": {"method": "PAPER_INVOICE", "currency": "SEK",
                "address": {"street1": "Storgatan 1", "city": "Stockholm", "zip": "111 22", "country": "SE"},
                "defaultPaymentProfileId": p["paymentProfileId"]}})),
            )
            .await;
        assert_eq!(r.status, 200, "a customer's own profile may be named: {:#}", r.body);
        let o = order(&app, "+46701170002").await;
        app.call("POST", "/payment-links", Some(json!({"orderId": o, "savePaymentProfile": true, "grantAutopayConsent": true})))
            .await
            .assert_error(409, "default_payment_profile_required");
        app
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_organisations_links_intents_and_profiles_are_not_found() {
    each_backend(|app| async move {
        setup(&app).await;
        let l = link(&app, json!({"orderId": order(&app, "+46701180001").await, "savePaymentProfile": true})).await;
        pay_card(l["hostedUrl"].as_str().unwrap(), "4242424242424242").await;
        let l = link_now(&app, &l["paymentLinkId"]).await;
        let profile = app.call("GET", "/payment-profiles?customerId=rid_acme", None).await.body["items"][0]["paymentProfileId"].clone();
        let (_, key) = app.other_org().await;
        let as_other = |path: String| {
            let app = &app;
            let key = key.clone();
            async move { app.call_as(Some(&key), "GET", &path, None, &[]).await }
        };
        as_other(format!("/payment-links/{}", l["paymentLinkId"].as_str().unwrap())).await.assert_error(404, "payment_link_not_found");
        as_other(format!("/payment-intents/{}", l["paymentIntentId"].as_str().unwrap())).await.assert_error(404, "payment_intent_not_found");
        as_other(format!("/payment-profiles/{}", profile.as_str().unwrap())).await.assert_error(404, "payment_profile_not_found");
        assert_eq!(as_other("/payment-links".into()).await.body["items"].as_array().unwrap().len(), 0);
        assert_eq!(as_other("/payment-intents".into()).await.body["items"].as_array().unwrap().len(), 0);
        app.call_as(Some(&key), "POST", &format!("/payment-links/{}/cancel", l["paymentLinkId"].as_str().unwrap()), None, &[])
            .await
            .assert_error(404, "payment_link_not_found");
        // a page's address is its token alone
        let base = l["hostedUrl"].as_str().unwrap().rsplit_once('/').unwrap().0.to_string();
        assert_eq!(page(&format!("{base}/{}", l["paymentLinkId"].as_str().unwrap())).await.0, 404);
        app
    })
    .await;
}
