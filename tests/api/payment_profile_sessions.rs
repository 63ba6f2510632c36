//! Payment profile sessions on both databases: a setup page saves a card
//! without charging it (the profile, its event, the customer's default,
//! the redirect to returnUrl), the card declined at setup, the
//! authentication step approved and failed, SEPA at PROVIDER_2 only,
//! rule 4 (a cancelled session takes no attempt), expiry by the clock,
//! what creation refuses, two submissions at once (one profile), the
//! roles a bearer needs for payments, and tenancy.

use crate::harness::*;
use crate::orders::setup;
use crate::payments::{order, page, submit};
use serde_json::{Value, json};

async fn session(app: &TestApp, body: Value) -> Value {
    let req: bullfinch::types::CreatePaymentProfileSessionRequest = serde_json::from_value(body).unwrap();
    json_of(&app.bullfinch().payment_profile_session_create(None, &req).await.unwrap().into_inner())
}

async fn session_now(app: &TestApp, s: &Value) -> Value {
    json_of(&app.bullfinch().payment_profile_session_view(&s["paymentProfileSessionId"].as_str().unwrap().parse().unwrap()).await.unwrap().into_inner())
}

async fn enter_card(url: &str, number: &str) -> (u16, Option<String>, String) {
    submit(url, &[("action", "save"), ("cardNumber", number), ("expiry", "12/30"), ("cvc", "123")]).await
}

async fn profiles(app: &TestApp) -> Vec<Value> {
    app.call("GET", "/payment-profiles?customerId=rid_acme", None).await.body["items"].as_array().unwrap().clone()
}

async fn count(app: &TestApp, event: &str) -> usize {
    app.store.event_types(app.org).await.unwrap().iter().filter(|(t, _)| t == event).count()
}

const RETURN: &str = "https://shop.example/card-saved";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_setup_page_saves_a_card_without_charging_it() {
    each_backend(|app| async move {
        setup(&app).await;
        let o = order(&app, "+46701210001").await;
        let s = session(
            &app,
            json!({"orderId": o, "paymentProvider": "PROVIDER_1", "returnUrl": RETURN, "setAsDefaultPaymentProfile": true, "metadata": {"cart": "7"}}),
        )
        .await;
        assert_eq!((s["status"].as_str(), s["setAsDefaultPaymentProfile"].as_bool()), (Some("ACTIVE"), Some(true)));
        assert!(s["paymentProfileId"].is_null() && s["metadata"]["cart"] == "7", "{s:#}");
        let url = s["hostedUrl"].as_str().unwrap();
        assert!(url.contains("/setup/") && !url.contains(s["paymentProfileSessionId"].as_str().unwrap()), "{url}");
        let (status, html) = page(url).await;
        assert!(status == 200 && html.contains("Nothing is charged now") && !html.contains("iban"), "{html}");
        // a number that fails the Luhn check is refused on the page
        let (status, _, html) = enter_card(url, "4242424242424241").await;
        assert!(status == 200 && html.contains("id=\"notice\""), "{html}");
        let (status, location, _) = enter_card(url, "4242424242424242").await;
        assert_eq!((status, location.as_deref()), (303, Some(RETURN)));
        let s = session_now(&app, &s).await;
        assert_eq!(s["status"], "COMPLETED", "{s:#}");
        assert!(s["completedAt"].is_string());
        let saved = profiles(&app).await;
        assert_eq!(saved.len(), 1);
        assert_eq!(saved[0]["paymentProfileId"], s["paymentProfileId"]);
        assert_eq!(
            (saved[0]["displayName"].as_str(), saved[0]["isDefault"].as_bool(), saved[0]["status"].as_str()),
            (Some("Visa •••• 4242"), Some(true), Some("ACTIVE"))
        );
        assert_eq!(app.call("GET", "/customers/rid_acme", None).await.body["billing"]["defaultPaymentProfileId"], s["paymentProfileId"]);
        assert_eq!(count(&app, "payment_profile.created").await, 1);
        // nothing was charged, and the order is where it was
        assert!(app.call("GET", "/payment-intents", None).await.body["items"].as_array().unwrap().is_empty());
        assert_eq!(app.call("GET", &format!("/orders/{o}"), None).await.body["status"], "DRAFT");
        // the page says it is done and takes no second method
        let (_, _, html) = enter_card(url, "4242424242424242").await;
        assert!(html.contains("saved"), "{html}");
        assert_eq!(profiles(&app).await.len(), 1);
        // the saved card pays the order off-session
        let r = app.call("POST", "/payment-sessions", Some(json!({"orderId": o, "paymentProfileId": s["paymentProfileId"]}))).await;
        assert_eq!(r.status, 201, "{:#}", r.body);
        app
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_declined_card_and_a_failed_authentication_save_nothing_and_the_page_lets_the_payer_try_again() {
    each_backend(|app| async move {
        setup(&app).await;
        let s = session(&app, json!({"orderId": order(&app, "+46701220001").await, "paymentProvider": "PROVIDER_1", "returnUrl": RETURN})).await;
        let url = s["hostedUrl"].as_str().unwrap();
        let (status, _, html) = enter_card(url, "4000000000000002").await;
        assert!(status == 200 && html.contains("card_declined"), "{html}");
        // also on a reload, and on the session
        assert!(page(url).await.1.contains("card_declined"));
        assert_eq!(session_now(&app, &s).await["lastFailureCode"], "card_declined");
        // funds are checked when charged, not at setup
        for card in ["4000000000009995", "4000000000000341"] {
            let t = session(&app, json!({"orderId": order(&app, "+46701220002").await, "paymentProvider": "PROVIDER_1", "returnUrl": RETURN})).await;
            assert_eq!(enter_card(t["hostedUrl"].as_str().unwrap(), card).await.0, 303, "{card}");
        }
        assert_eq!(profiles(&app).await.len(), 2);
        // 3155 asks for authentication first: failed, then approved
        let (status, _, html) = enter_card(url, "4000002500003155").await;
        assert!(status == 200 && html.contains("id=\"approve\""), "{html}");
        assert_eq!(session_now(&app, &s).await["status"], "ACTIVE");
        let (_, _, html) = submit(url, &[("action", "fail")]).await;
        assert!(html.contains("authentication_failed") && html.contains("cardNumber"), "{html}");
        // an answer to no step asked is no approval
        let (_, _, html) = submit(url, &[("action", "approve")]).await;
        assert!(html.contains("cardNumber"), "{html}");
        assert_eq!(profiles(&app).await.len(), 2);
        enter_card(url, "4000002500003155").await;
        let (status, location, _) = submit(url, &[("action", "approve")]).await;
        assert_eq!((status, location.as_deref()), (303, Some(RETURN)));
        let s = session_now(&app, &s).await;
        assert!(s["status"] == "COMPLETED" && s["lastFailureCode"].is_null(), "{s:#}");
        assert_eq!(profiles(&app).await.len(), 3);
        app
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sepa_mandate_is_saved_at_provider_2_only() {
    each_backend(|app| async move {
        setup(&app).await;
        let one = session(&app, json!({"orderId": order(&app, "+46701230001").await, "paymentProvider": "PROVIDER_1", "returnUrl": RETURN})).await;
        let (status, _, html) = submit(one["hostedUrl"].as_str().unwrap(), &[("action", "save"), ("iban", "DE89 3704 0044 0532 0130 00")]).await;
        assert!(status == 200 && html.contains("PROVIDER_1 takes cards only"), "{html}");
        let two = session(&app, json!({"orderId": order(&app, "+46701230002").await, "paymentProvider": "PROVIDER_2", "returnUrl": RETURN})).await;
        let url = two["hostedUrl"].as_str().unwrap();
        assert!(page(url).await.1.contains("iban"));
        let (status, _, _) = submit(url, &[("action", "save"), ("iban", "DE89 3704 0044 0532 0130 00")]).await;
        assert_eq!(status, 303);
        let saved = profiles(&app).await;
        assert_eq!((saved.len(), saved[0]["type"].as_str(), saved[0]["paymentProvider"].as_str()), (1, Some("SEPA_DEBIT"), Some("PROVIDER_2")));
        assert_eq!(saved[0]["isDefault"], false);
        app
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_session_takes_no_attempt_and_an_unfinished_one_expires_by_the_clock() {
    each_backend(|app| async move {
        setup(&app).await;
        let client = app.bullfinch();
        let s =
            session(&app, json!({"orderId": order(&app, "+46701240001").await, "paymentProvider": "PROVIDER_1", "returnUrl": RETURN, "metadata": {"a": "1"}}))
                .await;
        let id = s["paymentProfileSessionId"].as_str().unwrap().to_string();
        let cancel: bullfinch::types::CancelPaymentProfileSessionRequest = serde_json::from_value(json!({"reason": "Pays by invoice"})).unwrap();
        let c = json_of(&client.payment_profile_session_cancel(&id.parse().unwrap(), None, &cancel).await.unwrap().into_inner());
        assert_eq!(
            (c["status"].as_str(), c["cancellationReason"].as_str(), c["metadata"]["a"].as_str()),
            (Some("CANCELED"), Some("Pays by invoice"), Some("1"))
        );
        assert!(c["canceledAt"].is_string());
        // rule 4: the page takes no further attempt
        let url = s["hostedUrl"].as_str().unwrap();
        let (status, _, html) = enter_card(url, "4242424242424242").await;
        assert!(status == 200 && html.contains("cancelled") && !html.contains("cardNumber"), "{html}");
        assert!(profiles(&app).await.is_empty());
        // cancelling again: 409 naming the state; a bodiless cancel is fine
        let path = format!("/payment-profiles/sessions/{id}/cancel");
        let r = app.call("POST", &path, None).await;
        r.assert_error(409, "payment_profile_session_state_conflict");
        assert!(r.body["message"].as_str().unwrap().contains("CANCELED"), "{:#}", r.body);
        // 24 hours by the organisation's clock
        let t = session(&app, json!({"orderId": order(&app, "+46701240002").await, "paymentProvider": "PROVIDER_1", "returnUrl": RETURN})).await;
        app.clock.advance(chrono::Duration::hours(25));
        let (_, html) = page(t["hostedUrl"].as_str().unwrap()).await;
        assert!(html.contains("expired") && !html.contains("cardNumber"), "{html}");
        assert_eq!(session_now(&app, &t).await["status"], "EXPIRED");
        let (status, _, html) = enter_card(t["hostedUrl"].as_str().unwrap(), "4242424242424242").await;
        assert!(status == 200 && html.contains("expired") && !html.contains("cardNumber"), "{html}");
        assert!(profiles(&app).await.is_empty());
        let r = app.call("POST", &format!("/payment-profiles/sessions/{}/cancel", t["paymentProfileSessionId"].as_str().unwrap()), Some(json!({}))).await;
        r.assert_error(409, "payment_profile_session_state_conflict");
        app
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn creation_refuses_what_a_setup_cannot_serve() {
    each_backend(|app| async move {
        setup(&app).await;
        let refused = |body: Value| {
            let app = &app;
            async move { app.call("POST", "/payment-profiles/sessions", Some(body)).await }
        };
        let o = order(&app, "+46701250001").await;
        refused(json!({"orderId": o, "paymentProvider": "PROVIDER_1"})).await.assert_error(400, "validation_failed");
        refused(json!({"orderId": o, "paymentProvider": "PROVIDER_3", "returnUrl": RETURN})).await.assert_error(400, "validation_failed");
        let r = refused(json!({"orderId": o, "paymentProvider": "PROVIDER_1", "returnUrl": "ftp://shop.example/x"})).await;
        r.assert_error(400, "validation_failed");
        assert!(r.details().iter().any(|(p, _)| p == "returnUrl"), "{:#}", r.body);
        refused(json!({"orderId": "0190f5a0-0000-7000-8000-000000000000", "paymentProvider": "PROVIDER_1", "returnUrl": RETURN}))
            .await
            .assert_error(404, "order_not_found");
        // a cancelled order: 409 naming its state
        app.call("POST", &format!("/orders/{o}/cancel"), None).await;
        let r = refused(json!({"orderId": o, "paymentProvider": "PROVIDER_1", "returnUrl": RETURN})).await;
        r.assert_error(409, "order_state_conflict");
        assert!(r.body["message"].as_str().unwrap().contains("CANCELLED"), "{:#}", r.body);
        // a disabled provider: 412
        switchboard::admin::org_providers(&app.store, &app.clock, app.org, &[], &[switchboard::payment_providers::ProviderName::Provider2]).await.unwrap();
        let other = order(&app, "+46701250002").await;
        refused(json!({"orderId": other, "paymentProvider": "PROVIDER_2", "returnUrl": RETURN})).await.assert_error(412, "payment_provider_disabled");
        // unknown ids, and what the shared routes answer beside them
        app.call("GET", "/payment-profiles/sessions/0190f5a0-0000-7000-8000-000000000000", None).await.assert_error(404, "payment_profile_session_not_found");
        app.call("GET", "/payment-profiles/sessions/nope", None).await.assert_error(404, "payment_profile_session_not_found");
        app.call("GET", "/payment-profiles/sessions", None).await.assert_error(404, "payment_profile_not_found");
        // (the version policy answers a method no document routes)
        assert_eq!(app.call("PUT", "/payment-profiles/sessions", None).await.status, 405);
        assert_eq!(app.call("POST", "/payment-profiles/other", Some(json!({}))).await.status, 405);
        app
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_submissions_at_once_save_one_profile_and_a_cancel_racing_one_is_refused_or_wins() {
    each_backend(|app| async move {
        setup(&app).await;
        let s = session(
            &app,
            json!({"orderId": order(&app, "+46701260001").await, "paymentProvider": "PROVIDER_1", "returnUrl": RETURN, "setAsDefaultPaymentProfile": true}),
        )
        .await;
        let url = s["hostedUrl"].as_str().unwrap();
        let (a, b) = tokio::join!(enter_card(url, "4242424242424242"), enter_card(url, "4242424242424242"));
        // one saves and is sent on; the other is told it is done
        let (won, lost) = if a.0 == 303 { (a, b) } else { (b, a) };
        assert_eq!(won.1.as_deref(), Some(RETURN));
        assert!(lost.0 == 200 && lost.2.contains("saved") && !lost.2.contains("cardNumber"), "{lost:?}");
        assert_eq!(profiles(&app).await.len(), 1);
        assert_eq!(count(&app, "payment_profile.created").await, 1);
        assert_eq!(count(&app, "customer.updated").await, 1);
        // a cancel racing a submission: one of them moves the session
        let t = session(&app, json!({"orderId": order(&app, "+46701260002").await, "paymentProvider": "PROVIDER_1", "returnUrl": RETURN})).await;
        let cancel = format!("/payment-profiles/sessions/{}/cancel", t["paymentProfileSessionId"].as_str().unwrap());
        let (saved, cancelled) = tokio::join!(enter_card(t["hostedUrl"].as_str().unwrap(), "4242424242424242"), app.call("POST", &cancel, None));
        let now = session_now(&app, &t).await;
        match now["status"].as_str().unwrap() {
            "COMPLETED" => {
                assert_eq!(saved.0, 303);
                cancelled.assert_error(409, "payment_profile_session_state_conflict");
                assert!(cancelled.body["message"].as_str().unwrap().contains("COMPLETED"), "{:#}", cancelled.body);
                assert_eq!(profiles(&app).await.len(), 2);
            }
            "CANCELED" => {
                assert_eq!(cancelled.status, 200);
                assert!(saved.0 == 200 && saved.2.contains("cancelled"), "{saved:?}");
                assert_eq!(profiles(&app).await.len(), 1);
            }
            other => panic!("{other}: {now:#}"),
        }
        app
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bearer_needs_the_manager_role_to_start_or_stop_collecting_and_a_member_reads() {
    each_backend(|app| async move {
        setup(&app).await;
        // a manager of another customer of the organisation
        let other = app.call("POST", "/customers", Some(json!({"customerType": "BUSINESS", "name": "Other AB", "contact": {}}))).await;
        assert_eq!(other.status, 201, "{:#}", other.body);
        let mut tokens = std::collections::HashMap::new();
        for (role, customer, email) in [
            ("MEMBER", "rid_acme", "member@acme.example"),
            ("MANAGER", "rid_acme", "manager@acme.example"),
            ("ADMIN", "rid_acme", "admin@acme.example"),
            ("OTHER", other.body["customerId"].as_str().unwrap(), "manager@other.example"),
        ] {
            let given = if role == "OTHER" { "MANAGER" } else { role };
            let r = app.call("POST", "/users", Some(json!({"name": role, "email": email, "customerId": customer, "role": given}))).await;
            assert_eq!(r.status, 201, "{:#}", r.body);
            tokens.insert(role, app.login(email, Some(&app.key)).await);
        }
        let as_user = |role: &'static str, method: &'static str, path: String, body: Option<Value>| {
            let app = &app;
            let bearer = format!("Bearer {}", tokens[role]);
            async move { app.call_as(Some(&app.key), method, &path, body, &[("authorization", &bearer)]).await }
        };
        let o = order(&app, "+46701270001").await;
        let setup_body = json!({"orderId": o, "paymentProvider": "PROVIDER_1", "returnUrl": RETURN});
        as_user("MEMBER", "POST", "/payment-profiles/sessions".into(), Some(setup_body.clone())).await.assert_error(403, "insufficient_role");
        let s = as_user("MANAGER", "POST", "/payment-profiles/sessions".into(), Some(setup_body.clone())).await;
        assert_eq!(s.status, 201, "{:#}", s.body);
        let id = s.body["paymentProfileSessionId"].as_str().unwrap().to_string();
        assert_eq!(as_user("MEMBER", "GET", format!("/payment-profiles/sessions/{id}"), None).await.status, 200);
        // another customer's manager does not see it, nor may start one for its order
        as_user("OTHER", "GET", format!("/payment-profiles/sessions/{id}"), None).await.assert_error(404, "payment_profile_session_not_found");
        as_user("OTHER", "POST", format!("/payment-profiles/sessions/{id}/cancel"), None).await.assert_error(404, "payment_profile_session_not_found");
        as_user("OTHER", "POST", "/payment-profiles/sessions".into(), Some(setup_body.clone())).await.assert_error(404, "order_not_found");
        as_user("MEMBER", "POST", format!("/payment-profiles/sessions/{id}/cancel"), None).await.assert_error(403, "insufficient_role");
        assert_eq!(as_user("ADMIN", "POST", format!("/payment-profiles/sessions/{id}/cancel"), None).await.status, 200);
        // links: the same roles
        as_user("MEMBER", "POST", "/payment-links".into(), Some(json!({"orderId": o}))).await.assert_error(403, "insufficient_role");
        let l = as_user("MANAGER", "POST", "/payment-links".into(), Some(json!({"orderId": o}))).await;
        assert_eq!(l.status, 201, "{:#}", l.body);
        let link = l.body["paymentLinkId"].as_str().unwrap().to_string();
        assert_eq!(as_user("MEMBER", "GET", format!("/payment-links/{link}"), None).await.status, 200);
        assert_eq!(as_user("MEMBER", "GET", "/payment-intents".into(), None).await.body["items"].as_array().unwrap().len(), 1);
        as_user("MEMBER", "POST", format!("/payment-links/{link}/cancel"), None).await.assert_error(403, "insufficient_role");
        // a refund of the paid link
        crate::payments::pay_card(l.body["hostedUrl"].as_str().unwrap(), "4242424242424242").await;
        let intent = app.call("GET", &format!("/payment-links/{link}"), None).await.body["paymentIntentId"].as_str().unwrap().to_string();
        let refund = json!({"amountMinor": 100, "reason": "goodwill"});
        // refunds are the operator's back office: no user of the customer gives its own money back, whatever its role
        for role in ["MEMBER", "MANAGER", "ADMIN"] {
            as_user(role, "POST", format!("/payment-intents/{intent}/refunds"), Some(refund.clone())).await.assert_error(403, "insufficient_role");
        }
        let r = app.call("POST", &format!("/payment-intents/{intent}/refunds"), Some(refund)).await;
        assert!(r.status < 300, "{:#}", r.body);
        app
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_organisations_session_is_not_found_and_its_page_only_opens_by_token() {
    each_backend(|app| async move {
        setup(&app).await;
        let s = session(&app, json!({"orderId": order(&app, "+46701280001").await, "paymentProvider": "PROVIDER_1", "returnUrl": RETURN})).await;
        let id = s["paymentProfileSessionId"].as_str().unwrap();
        let (_, key) = app.other_org().await;
        app.call_as(Some(&key), "GET", &format!("/payment-profiles/sessions/{id}"), None, &[]).await.assert_error(404, "payment_profile_session_not_found");
        app.call_as(Some(&key), "POST", &format!("/payment-profiles/sessions/{id}/cancel"), None, &[])
            .await
            .assert_error(404, "payment_profile_session_not_found");
        assert_eq!(session_now(&app, &s).await["status"], "ACTIVE");
        // the page's address is its token, not the session's id
        let url = s["hostedUrl"].as_str().unwrap();
        let by_id = format!("{}{}", &url[..url.rfind('/').unwrap() + 1], id);
        assert_eq!(page(&by_id).await.0, 404);
        app
    })
    .await;
}

/// The older revision's client collects and saves the same way.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_older_revisions_client_saves_a_method_and_pays_a_link() {
    each_backend(|app| async move {
        setup(&app).await;
        let auk = app.auk_with(&app.key);
        let o = order(&app, "+46701290001").await;
        let req: auk::types::CreatePaymentProfileSessionRequest =
            serde_json::from_value(json!({"orderId": o, "paymentProvider": "PROVIDER_2", "returnUrl": RETURN, "setAsDefaultPaymentProfile": true})).unwrap();
        let s = auk.payment_profile_session_create(None, &req).await.unwrap().into_inner();
        let (status, _, _) = submit(&s.hosted_url, &[("action", "save"), ("iban", "DE89370400440532013000")]).await;
        assert_eq!(status, 303);
        let id = s.payment_profile_session_id.to_string();
        let s = auk.payment_profile_session_view(&id.parse().unwrap()).await.unwrap().into_inner();
        assert_eq!(json_of(&s.status), "COMPLETED");
        let profile = auk.payment_profile_view(&s.payment_profile_id.unwrap().to_string().parse().unwrap()).await.unwrap().into_inner();
        assert_eq!((json_of(&profile.type_), profile.is_default), (json!("SEPA_DEBIT"), Some(true)));
        // a link paid on its page, read back through the older client
        let req: auk::types::CreatePaymentLinkRequest = serde_json::from_value(json!({"orderId": o})).unwrap();
        let l = auk.payment_link_create(None, &req).await.unwrap().into_inner();
        assert_eq!(crate::payments::pay_card(&l.hosted_url, "4242424242424242").await.0, 200);
        let l = auk.payment_link_view(&l.payment_link_id.to_string().parse().unwrap()).await.unwrap().into_inner();
        assert_eq!(json_of(&l.status), "COMPLETED");
        let i = auk.payment_intent_view(&l.payment_intent_id.unwrap().to_string().parse().unwrap()).await.unwrap().into_inner();
        assert_eq!((json_of(&i.status), i.charges.len()), (json!("SUCCEEDED"), 1));
        let cancel: auk::types::CancelPaymentProfileSessionRequest = serde_json::from_value(json!({})).unwrap();
        let err = auk.payment_profile_session_cancel(&id.parse().unwrap(), None, &cancel).await.unwrap_err();
        assert_eq!(err.status().map(|s| s.as_u16()), Some(409));
        app
    })
    .await;
}
