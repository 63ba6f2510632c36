//! Payment links end to end, on both databases: a link's hosted page paid
//! with each test value (rule 1: the order submitted in the link's
//! completion, once, also when the page is sent twice at once), SEPA
//! settling by the clock, the authentication step, what creation refuses
//! (rule 2), cancelling, expiring, a payment whose order no longer
//! submits (refunded), refunds, saved profiles and tenancy.

use crate::harness::*;
use crate::orders::{offering, setup};
use serde_json::{Value, json};

/// An order of the customer `rid_acme` for a subscription on `msisdn`.
pub async fn order(app: &TestApp, msisdn: &str) -> String {
    let r = app
        .call("POST", "/orders", Some(json!({
            "customerId": "rid_acme",
            "lineItems": [{"type": "SUBSCRIPTION", "productOfferingId": offering(app, "mobile-10gb"), "subscription": {"simType": "ESIM", "msisdn": msisdn}}]
        })))
        .await;
    assert_eq!(r.status, 201, "{:#}", r.body);
    r.body["orderId"].as_str().unwrap().to_string()
}

/// A link made through the generated client, as JSON.
pub async fn link(app: &TestApp, body: Value) -> Value {
    let req: bullfinch::types::CreatePaymentLinkRequest = serde_json::from_value(body).unwrap();
    json_of(&app.bullfinch().payment_link_create(None, &req).await.unwrap().into_inner())
}

pub async fn link_now(app: &TestApp, id: &Value) -> Value {
    json_of(&app.bullfinch().payment_link_view(&id.as_str().unwrap().parse().unwrap()).await.unwrap().into_inner())
}

pub async fn intent(app: &TestApp, id: &str) -> Value {
    json_of(&app.bullfinch().payment_intent_view(&id.parse().unwrap()).await.unwrap().into_inner())
}

/// The intent a link collects with (its id is shown once paid; before,
/// the customer's intents list it).
pub async fn intent_of(app: &TestApp, link: &Value) -> Value {
    if let Some(id) = link["paymentIntentId"].as_str() {
        return intent(app, id).await;
    }
    let listed = app.bullfinch().payment_intent_list(None, None, None, None).await.unwrap().into_inner();
    let order = link["orderId"].as_str().unwrap();
    for i in listed.items {
        let full = intent(app, &i.payment_intent_id.to_string()).await;
        if full["orderId"] == order && full["paymentLinkId"] == link["paymentLinkId"] {
            return full;
        }
    }
    panic!("no intent of link {link:#}")
}

fn browser() -> reqwest::Client {
    reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap()
}

/// The page at `url`: status and HTML.
pub async fn page(url: &str) -> (u16, String) {
    let r = browser().get(url).send().await.unwrap();
    (r.status().as_u16(), r.text().await.unwrap())
}

/// The form sent to `url`: status, Location and HTML.
pub async fn submit(url: &str, fields: &[(&str, &str)]) -> (u16, Option<String>, String) {
    let body: String = url::form_urlencoded::Serializer::new(String::new()).extend_pairs(fields).finish();
    let r = browser().post(url).header("content-type", "application/x-www-form-urlencoded").body(body).send().await.unwrap();
    let location = r.headers().get("location").map(|v| v.to_str().unwrap().to_string());
    (r.status().as_u16(), location, r.text().await.unwrap())
}

pub async fn pay_card(url: &str, number: &str) -> (u16, Option<String>, String) {
    submit(url, &[("action", "pay"), ("cardNumber", number), ("expiry", "12/30"), ("cvc", "123")]).await
}

async fn event_count(app: &TestApp, name: &str) -> usize {
    app.store.event_types(app.org).await.unwrap().iter().filter(|(t, _)| t == name).count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_link_paid_with_a_card_submits_its_order_and_saves_the_default_profile() {
    each_backend(|app| async move {
        setup(&app).await;
        let order_id = order(&app, "+46701110001").await;
        let l = link(
            &app,
            json!({"orderId": order_id, "savePaymentProfile": true, "setAsDefaultPaymentProfile": true,
                                  "returnUrl": "https://shop.example/thanks", "description": "Mobile, first month"}),
        )
        .await;
        assert_eq!(l["status"], "ACTIVE");
        assert_eq!(l["paymentProvider"], "PROVIDER_1");
        assert!(l.get("paymentIntentId").is_none(), "shown once paid: {l:#}");
        let url = l["hostedUrl"].as_str().unwrap().to_string();
        assert!(url.starts_with(app.base.trim_end_matches("/api/v2")) && url.contains("/pay/"), "{url}");
        assert!(!url.contains(l["paymentLinkId"].as_str().unwrap()), "the page's token is not the link's id");
        let before = intent_of(&app, &l).await;
        assert_eq!(before["status"], "PENDING");
        assert_eq!(before["amountMinor"], l["amountMinor"]);
        let (status, html) = page(&url).await;
        assert_eq!(status, 200);
        assert!(html.contains("Mobile, first month") && html.contains("SEK") && html.contains("<form"), "{html}");
        assert!(!html.contains("<script"), "no script");

        let (status, location, _) = pay_card(&url, "4242 4242 4242 4242").await;
        assert_eq!((status, location.as_deref()), (303, Some("https://shop.example/thanks")));
        let l = link_now(&app, &l["paymentLinkId"]).await;
        assert_eq!(l["status"], "COMPLETED");
        assert!(l["completedAt"].is_string());
        let paid = intent(&app, l["paymentIntentId"].as_str().unwrap()).await;
        assert_eq!(paid["status"], "SUCCEEDED");
        assert_eq!(paid["charges"].as_array().unwrap().len(), 1);
        assert_eq!(paid["charges"][0]["status"], "SUCCEEDED");
        assert_eq!(paid["charges"][0]["paymentMethod"]["displayName"], "Visa •••• 4242");
        assert!(paid["lineItems"][0]["subscriptionId"].is_string(), "the line names what submitting made: {paid:#}");
        // rule 1: the order was submitted in the link's completion
        let o = app.call("GET", &format!("/orders/{order_id}"), None).await;
        assert_eq!(o.body["status"], "SUBMITTED");
        // the method is saved, and is the customer's default
        let profiles = app.bullfinch().payment_profile_list(&"rid_acme".parse().unwrap()).await.unwrap().into_inner();
        assert_eq!(profiles.items.len(), 1);
        let p = &profiles.items[0];
        assert_eq!((p.type_.as_str(), p.is_default), ("CARD", Some(true)));
        let full = json_of(&app.bullfinch().payment_profile_view(&p.payment_profile_id.to_string().parse().unwrap()).await.unwrap().into_inner());
        // the customer's billing address as it was, the Address's every field
        let address = &full["billingDetails"]["address"];
        assert_eq!(
            (&address["street"], &address["street1"], &address["region"], &address["attention"]),
            (&json!("Storgatan 1"), &json!("Storgatan 1"), &json!("Stockholms län"), &json!("Accounts payable")),
            "{address:#}"
        );
        let customer = app.call("GET", "/customers/rid_acme", None).await;
        assert_eq!(customer.body["billing"]["defaultPaymentProfileId"], p.payment_profile_id.to_string());
        for (event, n) in
            [("payment_intent.succeeded", 1), ("payment_link.completed", 1), ("order.submitted", 1), ("payment_profile.created", 1), ("customer.updated", 1)]
        {
            assert_eq!(event_count(&app, event).await, n, "{event}");
        }
        // the page of a completed link says so and takes no payment
        let (_, _, html) = pay_card(&url, "4242 4242 4242 4242").await;
        assert!(html.contains("complete"), "{html}");
        assert_eq!(intent(&app, l["paymentIntentId"].as_str().unwrap()).await["charges"].as_array().unwrap().len(), 1);
        // the next link offers the saved card first, and pays with it
        let next = link(&app, json!({"orderId": order(&app, "+46701110009").await, "paymentProfileId": p.payment_profile_id.to_string()})).await;
        let next_url = next["hostedUrl"].as_str().unwrap();
        assert!(page(next_url).await.1.contains("Pay with Visa •••• 4242"));
        let (status, _, html) = submit(next_url, &[("action", "saved")]).await;
        assert!(status == 200 && html.contains("complete"), "{html}");
        let next = link_now(&app, &next["paymentLinkId"]).await;
        assert_eq!(next["status"], "COMPLETED");
        let paid = intent(&app, next["paymentIntentId"].as_str().unwrap()).await;
        assert_eq!(paid["charges"][0]["paymentProfileId"], p.payment_profile_id.to_string());
        app
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn declines_and_refused_entries_let_the_payer_try_again() {
    each_backend(|app| async move {
        setup(&app).await;
        let l = link(&app, json!({"orderId": order(&app, "+46701110002").await})).await;
        let url = l["hostedUrl"].as_str().unwrap().to_string();
        // refused on the page, nothing charged
        let (status, _, html) = pay_card(&url, "4242 4242 4242 4241").await;
        assert_eq!(status, 200);
        assert!(html.contains("id=\"notice\""), "{html}");
        let (_, _, html) = submit(&url, &[("action", "pay"), ("cardNumber", "4242424242424242"), ("expiry", "01/20"), ("cvc", "123")]).await;
        assert!(html.contains("id=\"notice\""), "{html}");
        assert_eq!(intent_of(&app, &l).await["charges"].as_array().unwrap().len(), 0);
        // declined: the intent waits for another method
        for (number, code) in [("4000 0000 0000 0002", "card_declined"), ("4000000000009995", "insufficient_funds")] {
            let (status, _, html) = pay_card(&url, number).await;
            assert_eq!(status, 200);
            assert!(html.contains(code), "{html}");
            let i = intent_of(&app, &l).await;
            assert_eq!(i["status"], "REQUIRES_PAYMENT_METHOD");
            assert_eq!(i["charges"].as_array().unwrap().last().unwrap()["failureCode"], code);
        }
        assert_eq!(event_count(&app, "payment_intent.payment_failed").await, 2);
        // then a card that pays (no returnUrl: a receipt)
        let (status, location, html) = pay_card(&url, "4242424242424242").await;
        assert_eq!((status, location), (200, None));
        assert!(html.contains("complete"), "{html}");
        assert_eq!(link_now(&app, &l["paymentLinkId"]).await["status"], "COMPLETED");
        app
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_card_that_asks_for_authentication_is_approved_or_failed_on_the_page() {
    each_backend(|app| async move {
        setup(&app).await;
        let l = link(&app, json!({"orderId": order(&app, "+46701110003").await})).await;
        let url = l["hostedUrl"].as_str().unwrap().to_string();
        let (_, _, html) = pay_card(&url, "4000 0025 0000 3155").await;
        assert!(html.contains("id=\"approve\"") && html.contains("id=\"fail\""), "{html}");
        assert_eq!(intent_of(&app, &l).await["status"], "REQUIRES_ACTION");
        assert!(page(&url).await.1.contains("id=\"approve\""), "the step is shown again on a reload");
        let (_, _, html) = submit(&url, &[("action", "fail")]).await;
        assert!(html.contains("authentication_failed"), "{html}");
        let i = intent_of(&app, &l).await;
        assert_eq!(i["status"], "REQUIRES_PAYMENT_METHOD");
        // an approval not waited for is not taken
        let (_, _, html) = submit(&url, &[("action", "approve")]).await;
        assert!(html.contains("id=\"notice\""), "{html}");
        pay_card(&url, "4000002500003155").await;
        // approved twice at once: one approval goes through, no error
        let (a, b) = tokio::join!(submit(&url, &[("action", "approve")]), submit(&url, &[("action", "approve")]));
        assert_eq!((a.0, b.0), (200, 200));
        let l = link_now(&app, &l["paymentLinkId"]).await;
        assert_eq!(l["status"], "COMPLETED");
        let charges: Vec<String> = intent_of(&app, &l).await["charges"].as_array().unwrap().iter().map(|c| c["status"].as_str().unwrap().to_string()).collect();
        assert_eq!(charges, ["FAILED", "SUCCEEDED"]);
        app
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sepa_debit_settles_or_fails_by_the_clock() {
    each_backend(|app| async move {
        setup(&app).await;
        let l = link(&app, json!({"orderId": order(&app, "+46701110004").await, "paymentProvider": "PROVIDER_2"})).await;
        let url = l["hostedUrl"].as_str().unwrap().to_string();
        assert!(page(&url).await.1.contains("name=\"iban\""));
        let (_, _, html) = submit(&url, &[("action", "pay"), ("iban", "DE62 3704 0044 0532 0130 01")]).await;
        assert!(html.contains("processing"), "{html}");
        assert_eq!(intent_of(&app, &l).await["status"], "PROCESSING");
        // a link whose payment is processing is not cancelled under it
        app.call("POST", &format!("/payment-links/{}/cancel", l["paymentLinkId"].as_str().unwrap()), None).await.assert_error(409, "payment_in_progress");
        app.clock.advance(chrono::Duration::minutes(6));
        app.run_jobs().await;
        let i = intent_of(&app, &l).await;
        assert_eq!(i["status"], "REQUIRES_PAYMENT_METHOD");
        assert_eq!(i["charges"][0]["failureCode"], "debit_failed");
        submit(&url, &[("action", "pay"), ("iban", "DE89370400440532013000")]).await;
        assert_eq!(link_now(&app, &l["paymentLinkId"]).await["status"], "ACTIVE");
        app.clock.advance(chrono::Duration::minutes(6));
        app.run_jobs().await;
        let l = link_now(&app, &l["paymentLinkId"]).await;
        assert_eq!(l["status"], "COMPLETED", "{l:#}");
        assert_eq!(app.call("GET", &format!("/orders/{}", l["orderId"].as_str().unwrap()), None).await.body["status"], "SUBMITTED");
        // PROVIDER_1 takes no SEPA debit
        let l1 = link(&app, json!({"orderId": order(&app, "+46701110005").await})).await;
        let (_, _, html) = submit(l1["hostedUrl"].as_str().unwrap(), &[("action", "pay"), ("iban", "DE89370400440532013000")]).await;
        assert!(html.contains("cards only"), "{html}");
        app
    })
    .await;
}
