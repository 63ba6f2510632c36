//! Payment sessions on both databases: a saved card charged off-session
//! by the session's job (rule 1: the order submitted with the payment),
//! the card that pays on a page but fails off-session, what creation
//! refuses, a session whose order no longer submits (refunded), the job
//! run again (charged once) and tenancy.

use crate::harness::*;
use crate::orders::setup;
use crate::payments::{intent, link, order, submit};
use serde_json::{Value, json};

/// A profile of `rid_acme` saved by paying a link on its page with `card`.
async fn saved_profile(app: &TestApp, msisdn: &str, card: &str) -> String {
    let l = link(app, json!({"orderId": order(app, msisdn).await, "savePaymentProfile": true})).await;
    let (status, _, html) = submit(l["hostedUrl"].as_str().unwrap(), &[("action", "pay"), ("cardNumber", card), ("expiry", "12/30"), ("cvc", "123")]).await;
    assert!(status == 200 && html.contains("complete"), "{html}");
    let profiles = app.call("GET", "/payment-profiles?customerId=rid_acme", None).await;
    profiles.body["items"].as_array().unwrap().last().unwrap()["paymentProfileId"].as_str().unwrap().to_string()
}

async fn session(app: &TestApp, body: Value) -> Value {
    let req: bullfinch::types::CreatePaymentSessionRequest = serde_json::from_value(body).unwrap();
    json_of(&app.bullfinch().payment_session_create(None, &req).await.unwrap().into_inner())
}

async fn session_now(app: &TestApp, s: &Value) -> Value {
    json_of(&app.bullfinch().payment_session_view(&s["paymentSessionId"].as_str().unwrap().parse().unwrap()).await.unwrap().into_inner())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_saved_card_pays_an_order_off_session_and_submits_it() {
    each_backend(|app| async move {
        setup(&app).await;
        let profile = saved_profile(&app, "+46701190001", "4242424242424242").await;
        // the session's job runs when the test says
        app.stop_jobs();
        let o = order(&app, "+46701190002").await;
        let s = session(&app, json!({"orderId": o, "paymentProfileId": profile, "metadata": {"cart": "42"}})).await;
        assert_eq!(s["status"], "PROCESSING");
        assert_eq!(intent(&app, s["paymentIntentId"].as_str().unwrap()).await["status"], "PROCESSING");
        // a second session for the order while the first is processing
        app.call("POST", "/payment-sessions", Some(json!({"orderId": o, "paymentProfileId": profile}))).await.assert_error(409, "payment_in_progress");
        app.run_jobs().await;
        // the job run again charges nothing more
        app.run_jobs().await;
        let s = session_now(&app, &s).await;
        assert_eq!(s["status"], "SUCCEEDED", "{s:#}");
        assert!(s["completedAt"].is_string());
        assert_eq!(s["metadata"]["cart"], "42");
        let i = intent(&app, s["paymentIntentId"].as_str().unwrap()).await;
        assert_eq!((i["status"].as_str(), i["paymentSessionId"].as_str()), (Some("SUCCEEDED"), s["paymentSessionId"].as_str()));
        assert_eq!(i["charges"].as_array().unwrap().len(), 1);
        assert_eq!(i["charges"][0]["paymentProfileId"], profile);
        assert!(i["lineItems"][0]["subscriptionId"].is_string(), "{i:#}");
        assert_eq!(app.call("GET", &format!("/orders/{o}"), None).await.body["status"], "SUBMITTED");
        // the sandbox charged once for the attempt
        let charged: i64 = {
            use sqlx::Row;
            let r = sqlx::query("SELECT COUNT(*) AS n FROM sandbox_payment_charges WHERE attempt_id = $1")
                .bind(i["charges"][0]["chargeId"].as_str().unwrap())
                .fetch_one(app.store.pool())
                .await
                .unwrap();
            r.get("n")
        };
        assert_eq!(charged, 1);
        app
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_card_that_fails_off_session_fails_the_session_and_closes_its_intent() {
    each_backend(|app| async move {
        setup(&app).await;
        let profile = saved_profile(&app, "+46701190011", "4000000000000341").await;
        // the session's job runs when the test says
        app.stop_jobs();
        let o = order(&app, "+46701190012").await;
        let s = session(&app, json!({"orderId": o, "paymentProfileId": profile})).await;
        app.run_jobs().await;
        let s = session_now(&app, &s).await;
        assert_eq!((s["status"].as_str(), s["failureCode"].as_str()), (Some("FAILED"), Some("card_declined")), "{s:#}");
        let i = intent(&app, s["paymentIntentId"].as_str().unwrap()).await;
        assert_eq!(i["status"], "CANCELED");
        assert_eq!(i["charges"][0]["status"], "FAILED");
        assert_eq!(app.call("GET", &format!("/orders/{o}"), None).await.body["status"], "DRAFT");
        // the order may be collected again, with another method
        let good = saved_profile(&app, "+46701190013", "4242424242424242").await;
        let again = session(&app, json!({"orderId": o, "paymentProfileId": good})).await;
        app.run_jobs().await;
        assert_eq!(session_now(&app, &again).await["status"], "SUCCEEDED");
        app
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn creation_refuses_what_cannot_be_collected_and_a_refused_order_is_refunded() {
    each_backend(|app| async move {
        setup(&app).await;
        let profile = saved_profile(&app, "+46701190021", "4242424242424242").await;
        let o = order(&app, "+46701190022").await;
        let refused = |body: Value| {
            let app = &app;
            async move { app.call("POST", "/payment-sessions", Some(body)).await }
        };
        refused(json!({"orderId": o})).await.assert_error(400, "validation_failed");
        refused(json!({"orderId": o, "paymentProfileId": "0190f5a0-0000-7000-8000-000000000000"})).await.assert_error(404, "payment_profile_not_found");
        refused(json!({"orderId": "0190f5a0-0000-7000-8000-000000000000", "paymentProfileId": profile})).await.assert_error(404, "order_not_found");
        // an order with an ACTIVE link is paid through it
        let l = link(&app, json!({"orderId": o})).await;
        refused(json!({"orderId": o, "paymentProfileId": profile})).await.assert_error(409, "payment_link_exists");
        app.call("POST", &format!("/payment-links/{}/cancel", l["paymentLinkId"].as_str().unwrap()), None).await;
        // rule 2 as for links
        let twin = order(&app, "+46701190022").await;
        assert_eq!(app.call("POST", &format!("/orders/{twin}/submit"), None).await.status, 200);
        refused(json!({"orderId": o, "paymentProfileId": profile})).await.assert_error(409, "order_validation_failed");
        // paid, but the order stopped submitting meanwhile: FAILED, refunded
        app.stop_jobs();
        let late = order(&app, "+46701190023").await;
        let s = session(&app, json!({"orderId": late, "paymentProfileId": profile})).await;
        let rival = order(&app, "+46701190023").await;
        assert_eq!(app.call("POST", &format!("/orders/{rival}/submit"), None).await.status, 200);
        app.run_jobs().await;
        let s = session_now(&app, &s).await;
        assert_eq!(s["status"], "FAILED", "{s:#}");
        assert!(s["failureReason"].as_str().unwrap().contains("could no longer be submitted"), "{s:#}");
        app.run_jobs().await;
        let i = intent(&app, s["paymentIntentId"].as_str().unwrap()).await;
        assert_eq!((i["status"].as_str(), i["refunds"][0]["status"].as_str()), (Some("SUCCEEDED"), Some("SUCCEEDED")), "{i:#}");
        // another organisation's session is not found
        let (_, key) = app.other_org().await;
        app.call_as(Some(&key), "GET", &format!("/payment-sessions/{}", s["paymentSessionId"].as_str().unwrap()), None, &[])
            .await
            .assert_error(404, "payment_session_not_found");
        app
    })
    .await;
}
