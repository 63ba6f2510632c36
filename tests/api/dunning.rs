//! Collecting invoices on both databases, the sandbox clock advanced:
//! autopay's failures tried again 1, 3 and 7 days later and mailed with a
//! payment link; dunning suspending the customer's ACTIVATED subscriptions
//! and paying restoring only those; an invoice given up after 60 days
//! cancelling what it suspended; an invoice paid on its payment link's
//! page; priced usage billed; voiding.

use crate::harness::*;
use crate::invoices::{activate, advance, assert_summed, bought, bought_with_autopay, customer, invoice, invoices_of, mark_paid, swedish};
use crate::payments::{intent, pay_card};
use serde_json::{Value, json};

async fn subscription(app: &TestApp, id: &str) -> Value {
    app.call("GET", &format!("/subscriptions/{id}"), None).await.body
}

fn events_of<'a>(events: &'a [(String, Value)], kind: &str, key: &str, id: &Value) -> Vec<&'a Value> {
    events.iter().filter(|(t, d)| t == kind && d[key] == *id).map(|(_, d)| d).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn autopay_failures_are_retried_and_dunning_suspends_until_paid() {
    each_backend(|mut app| async move {
        app.become_sandbox().await;
        app.stop_jobs();
        app.demo_catalog(app.org).await;
        let c = customer(&app, "failing", swedish("E_INVOICE", "failing")).await;
        // the card pays on a page and fails every charge off-session
        let auto = bought_with_autopay(&app, "failing", "+46702000101", "4000000000000341").await;
        let held = bought(&app, "failing", "+46702000102").await;
        advance(&app, "2026-11-03T06:00:00Z").await;
        let first = invoices_of(&app, &c).await.remove(0);
        assert_eq!((&first["status"], &first["paymentAttempts"]), (&json!("OPEN"), &json!(1)), "autopay's first charge failed: {first:#}");
        mark_paid(&app, &first["invoiceId"], json!({})).await;
        // the operator suspends the second subscription for a reason of its own
        let r = app.call("POST", &format!("/subscriptions/{held}/suspend"), Some(json!({"reason": "Fraud check"}))).await;
        assert_eq!(r.status, 200, "{:#}", r.body);

        // the renewal's invoice (both subscriptions: a SUSPENDED one renews)
        advance(&app, "2026-12-03T06:00:00Z").await;
        let i = invoices_of(&app, &c).await.remove(1);
        assert_summed(&i);
        assert_eq!(i["lines"].as_array().unwrap().len(), 2, "{i:#}");
        assert_eq!(
            (&i["status"], &i["number"], &i["paymentAttempts"], &i["nextPaymentAttemptAt"]),
            (&json!("OPEN"), &json!("INV-000002"), &json!(1), &json!("2026-12-03T23:59:59Z"))
        );
        let paying = intent(&app, i["paymentIntentId"].as_str().unwrap()).await;
        assert_eq!(
            (&paying["status"], &paying["invoiceId"], &paying["charges"][0]["failureCode"]),
            (&json!("REQUIRES_PAYMENT_METHOD"), &i["invoiceId"], &json!("card_declined"))
        );
        let mails = app.store.mails(Some("invoices@failing.example")).await.unwrap();
        let failed = mails.iter().find(|m| m.subject == "Payment of invoice INV-000002 failed").expect("a mail about the failure");
        assert!(failed.body.contains("/pay/") && failed.body.contains("2026-12-03"), "{}", failed.body);

        // tried again 1, 3 and 7 days after each failure; then no more
        advance(&app, "2026-12-15T06:00:00Z").await;
        let i = invoice(&app, &i["invoiceId"]).await;
        assert_eq!((&i["status"], &i["paymentAttempts"], i.get("nextPaymentAttemptAt")), (&json!("OPEN"), &json!(4), None), "{i:#}");
        let paying = intent(&app, i["paymentIntentId"].as_str().unwrap()).await;
        let charges = paying["charges"].as_array().unwrap();
        assert_eq!(charges.len(), 4);
        let tried: Vec<&str> = charges.iter().map(|c| &c["createdAt"].as_str().unwrap()[..10]).collect();
        assert_eq!(tried, ["2026-12-02", "2026-12-03", "2026-12-06", "2026-12-13"]);
        let events = app.store.event_types(app.org).await.unwrap();
        assert_eq!(events_of(&events, "invoice.payment_failed", "invoiceId", &i["invoiceId"]).len(), 4);
        assert_eq!(subscription(&app, &auto).await["status"], "ACTIVATED", "not yet: due on 12-16, suspended 14 days after");

        // 14 days after its due date: the ACTIVATED subscription is suspended for it
        advance(&app, "2026-12-31T06:00:00Z").await;
        let s = subscription(&app, &auto).await;
        assert_eq!((&s["status"], &s["statusReason"]), (&json!("SUSPENDED"), &json!("Invoice INV-000002 is overdue.")));
        let other = subscription(&app, &held).await;
        assert_eq!((&other["status"], &other["statusReason"]), (&json!("SUSPENDED"), &json!("Fraud check")));
        let events = app.store.event_types(app.org).await.unwrap();
        let json_auto = json!(auto);
        assert_eq!(events_of(&events, "subscription.suspended", "subscriptionId", &json_auto).len(), 1);

        // paying it restores what it suspended, and only that
        let paid = mark_paid(&app, &i["invoiceId"], json!({"reference": "OCR 1234"})).await;
        assert_eq!(paid["status"], "PAID");
        assert_eq!(subscription(&app, &auto).await["status"], "ACTIVATED");
        assert_eq!(subscription(&app, &held).await["status"], "SUSPENDED", "the operator's suspension stays");
        let events = app.store.event_types(app.org).await.unwrap();
        assert_eq!(events_of(&events, "subscription.restored", "subscriptionId", &json_auto).len(), 1);
        assert_eq!(events_of(&events, "subscription.restored", "subscriptionId", &json!(held)).len(), 0);
        assert_eq!(intent(&app, i["paymentIntentId"].as_str().unwrap()).await["status"], "CANCELED", "autopay's intent closes");
        let links = app.call("GET", &format!("/payment-links?customerId={c}"), None).await.body;
        let of_invoice: Vec<&Value> = links["items"].as_array().unwrap().iter().filter(|l| l["invoiceId"] == i["invoiceId"]).collect();
        assert!(!of_invoice.is_empty() && of_invoice.iter().all(|l| l["status"] == "CANCELED"), "{of_invoice:#?}");
        app
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_invoice_unpaid_sixty_days_is_uncollectible_and_cancels_what_it_suspended() {
    each_backend(|mut app| async move {
        app.become_sandbox().await;
        app.stop_jobs();
        app.demo_catalog(app.org).await;
        let c = customer(&app, "lapsed", swedish("PAPER_INVOICE", "lapsed")).await;
        // bound for 24 months: only dunning's end cancels it now
        let r = app
            .call(
                "POST",
                "/subscriptions",
                Some(json!({"customerId": "rid_lapsed", "productOfferingId": crate::orders::offering(&app, "mobile-10gb"),
                                                        "bindingContract": true, "subscription": {"simType": "ESIM", "msisdn": "+46702000201"}})),
            )
            .await;
        assert_eq!(r.status, 201, "{:#}", r.body);
        let s = r.body["subscriptionId"].as_str().unwrap().to_string();
        activate(&app, &s).await;
        advance(&app, "2026-12-01T06:00:00Z").await;
        assert_eq!(subscription(&app, &s).await["status"], "SUSPENDED");
        advance(&app, "2027-02-15T06:00:00Z").await;
        let all = invoices_of(&app, &c).await;
        let states: Vec<&str> = all.iter().map(|i| i["status"].as_str().unwrap()).collect();
        // 11-02's and 12-02's given up (60 days after 11-16 and 12-16); 01-02's
        // still open; cancelled on 01-15, it renews no more
        assert_eq!(states, ["UNCOLLECTIBLE", "UNCOLLECTIBLE", "OPEN"]);
        let ended = subscription(&app, &s).await;
        assert_eq!((&ended["status"], &ended["statusReason"]), (&json!("CANCELLED"), &json!("Invoice INV-000001 is uncollectible.")));
        assert!(ended.get("renewsOn").is_none(), "no more renewals: {ended:#}");
        let events = app.store.event_types(app.org).await.unwrap();
        assert_eq!(events.iter().filter(|(t, _)| t == "invoice.uncollectible").count(), 2);
        assert_eq!(events_of(&events, "subscription.ended", "subscriptionId", &json!(s)).len(), 1);
        // an uncollectible invoice is paid no more
        app.call("POST", &format!("/invoices/{}/mark-paid", all[0]["invoiceId"].as_str().unwrap()), Some(json!({})))
            .await
            .assert_error(409, "invoice_state_conflict");
        app
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_invoice_is_paid_on_its_payment_links_page_and_restores_what_dunning_suspended() {
    each_backend(|mut app| async move {
        app.become_sandbox().await;
        app.stop_jobs();
        app.demo_catalog(app.org).await;
        let c = customer(&app, "late", swedish("EMAIL_INVOICE", "late")).await;
        let s = bought(&app, "late", "+46702000301").await;
        let draft = invoices_of(&app, &c).await.remove(0);
        let r = app.call("POST", "/payment-links", Some(json!({"invoiceId": draft["invoiceId"]}))).await;
        r.assert_error(409, "invoice_state_conflict");
        app.call("POST", "/payment-links", Some(json!({"invoiceId": "9b1d2c3e-4f5a-4b6c-8d7e-1f2a3b4c5d6e"}))).await.assert_error(404, "invoice_not_found");

        // finalised and mailed with a link to pay it; unpaid, dunning suspends
        advance(&app, "2026-12-01T06:00:00Z").await;
        let mails = app.store.mails(Some("invoices@late.example")).await.unwrap();
        let mailed = mails.iter().find(|m| m.subject == "Invoice INV-000001").expect("the invoice mailed");
        assert!(mailed.body.contains("Total: 248.75 SEK") && mailed.body.contains("Pay it here: "), "{}", mailed.body);
        assert_eq!(subscription(&app, &s).await["status"], "SUSPENDED");
        // the mailed link is the invoice's ACTIVE one: another is refused
        app.call("POST", "/payment-links", Some(json!({"invoiceId": draft["invoiceId"]}))).await.assert_error(409, "payment_link_exists");
        let links = app.call("GET", &format!("/payment-links?customerId={c}&status=ACTIVE"), None).await.body;
        let l = links["items"][0].clone();
        assert_eq!((&l["invoiceId"], &l["amountMinor"], l.get("orderId")), (&draft["invoiceId"], &json!(24875), None));
        assert!(mailed.body.contains(l["hostedUrl"].as_str().unwrap()));

        let (status, _, html) = pay_card(l["hostedUrl"].as_str().unwrap(), "4242424242424242").await;
        assert!(status == 200 && html.contains("the invoice is paid"), "{html}");
        let paid = invoice(&app, &draft["invoiceId"]).await;
        assert_eq!((&paid["status"], &paid["paymentMethod"]), (&json!("PAID"), &json!("PAYMENT_LINK")));
        let i = intent(&app, paid["paymentIntentId"].as_str().unwrap()).await;
        assert_eq!((&i["status"], &i["paymentLinkId"], &i["invoiceId"]), (&json!("SUCCEEDED"), &l["paymentLinkId"], &draft["invoiceId"]));
        assert_eq!(subscription(&app, &s).await["status"], "ACTIVATED", "paying restores it");
        // a PAID invoice takes no link
        app.call("POST", "/payment-links", Some(json!({"invoiceId": draft["invoiceId"]}))).await.assert_error(409, "invoice_state_conflict");
        // a link of one's own for the next invoice, 30 days at most
        advance(&app, "2026-12-03T06:00:00Z").await;
        let next = invoices_of(&app, &c).await.remove(1);
        let far = (chrono::Utc::now() + chrono::Duration::days(400)).to_rfc3339();
        let r = app.call("POST", "/payment-links", Some(json!({"invoiceId": next["invoiceId"], "expiresAt": far}))).await;
        r.assert_error(400, "validation_failed");
        // the next invoice's mailed link was made with it
        assert_eq!(app.call("GET", &format!("/payment-links?customerId={c}&status=ACTIVE"), None).await.body["items"].as_array().unwrap().len(), 1);
        app
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_abroad_are_billed_and_a_voided_invoice_owes_nothing() {
    each_backend(|mut app| async move {
        app.become_sandbox().await;
        app.stop_jobs();
        app.demo_catalog(app.org).await;
        let c = customer(&app, "caller", swedish("PAPER_INVOICE", "caller")).await;
        let s = bought(&app, "caller", "+46702000401").await;
        let sub = subscription(&app, &s).await;
        // two calls to Norway (no package pays them): one line, taxed once
        let report = |id: &'static str, charge: i64| {
            let sub = sub.clone();
            let app = &app;
            async move { crate::usage::report(app, &sub, id, switchboard::store::UsageKind::VoiceIld, 60, (charge, Some("NOR"))).await }
        };
        report("n1", 1501).await;
        report("n2", 1502).await;
        let draft = invoices_of(&app, &c).await.remove(0);
        assert_summed(&draft);
        let usage: Vec<&Value> = draft["lines"].as_array().unwrap().iter().filter(|l| l["type"] == "USAGE").collect();
        assert_eq!(usage.len(), 1, "{draft:#}");
        assert_eq!((&usage[0]["amountMinor"], &usage[0]["taxes"][0]["amountMinor"], &usage[0]["subscriptionId"]), (&json!(3003), &json!(751), &json!(s)));

        // voided by the operator: it owes nothing, and is paid no more
        advance(&app, "2026-11-03T06:00:00Z").await;
        let clock = app.clock.clone();
        let voided = switchboard::admin::invoices::run(
            &app.store,
            &clock,
            switchboard::admin::invoices::InvoiceCommand::Void { org: app.org, invoice: draft["invoiceId"].as_str().unwrap().parse().unwrap() },
        )
        .await
        .unwrap();
        assert_eq!(voided["status"], "VOID");
        let events = app.store.event_types(app.org).await.unwrap();
        assert_eq!(events_of(&events, "invoice.voided", "invoiceId", &draft["invoiceId"]).len(), 1);
        assert_eq!(invoice(&app, &draft["invoiceId"]).await["status"], "VOID");
        app.call("POST", &format!("/invoices/{}/mark-paid", draft["invoiceId"].as_str().unwrap()), Some(json!({})))
            .await
            .assert_error(409, "invoice_state_conflict");
        let again = switchboard::admin::invoices::run(
            &app.store,
            &clock,
            switchboard::admin::invoices::InvoiceCommand::Void { org: app.org, invoice: draft["invoiceId"].as_str().unwrap().parse().unwrap() },
        )
        .await;
        assert!(again.unwrap_err().to_string().contains("VOID"));
        app
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_default_profile_fails_autopay_at_once() {
    each_backend(|mut app| async move {
        app.become_sandbox().await;
        app.stop_jobs();
        app.demo_catalog(app.org).await;
        let c = customer(&app, "expiring", swedish("EMAIL_INVOICE", "expiring")).await;
        // a card valid through December: saved as the default, with autopay
        let r = app
            .call("POST", "/orders", Some(json!({"customerId": "rid_expiring",
                "lineItems": [{"type": "SUBSCRIPTION", "productOfferingId": crate::orders::offering(&app, "mobile-10gb"), "subscription": {"simType": "ESIM", "msisdn": "+46702000501"}}]})))
            .await;
        let l = crate::payments::link(&app, json!({"orderId": r.body["orderId"], "savePaymentProfile": true, "setAsDefaultPaymentProfile": true, "grantAutopayConsent": true})).await;
        let (status, _, html) = crate::payments::submit(l["hostedUrl"].as_str().unwrap(), &[("action", "pay"), ("cardNumber", "4242424242424242"), ("expiry", "12/26"), ("cvc", "123")]).await;
        assert!(status == 200 && html.contains("complete"), "{html}");
        let order = app.call("GET", &format!("/orders/{}", r.body["orderId"].as_str().unwrap()), None).await.body;
        activate(&app, order["lineItems"][0]["createdSubscriptionId"].as_str().unwrap()).await;
        // December's renewal is charged; by January's the card has expired
        advance(&app, "2027-01-03T06:00:00Z").await;
        let all = invoices_of(&app, &c).await;
        assert_eq!((&all[0]["status"], &all[0]["paymentMethod"]), (&json!("PAID"), &json!("AUTOPAY")));
        let january = &all[1];
        assert_eq!((&january["status"], &january["paymentAttempts"], january.get("paymentIntentId")), (&json!("OPEN"), &json!(1), None), "{january:#}");
        let profiles = app.call("GET", &format!("/payment-profiles?customerId={c}"), None).await.body;
        assert_eq!(profiles["items"][0]["status"], "EXPIRED");
        let mails = app.store.mails(Some("invoices@expiring.example")).await.unwrap();
        assert!(mails.iter().any(|m| m.subject == format!("Payment of invoice {} failed", january["number"].as_str().unwrap())), "{mails:#?}");
        app
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn paying_one_of_two_overdue_invoices_keeps_the_suspension_for_the_other() {
    each_backend(|mut app| async move {
        app.become_sandbox().await;
        app.stop_jobs();
        app.demo_catalog(app.org).await;
        let c = customer(&app, "twice", swedish("PAPER_INVOICE", "twice")).await;
        let s = bought(&app, "twice", "+46702000601").await;
        // 11-02's invoice suspends it on 11-30; 12-02's is overdue too by 12-30
        advance(&app, "2026-12-31T06:00:00Z").await;
        let all = invoices_of(&app, &c).await;
        assert_eq!(subscription(&app, &s).await["statusReason"], "Invoice INV-000001 is overdue.");
        mark_paid(&app, &all[0]["invoiceId"], json!({})).await;
        let kept = subscription(&app, &s).await;
        assert_eq!((&kept["status"], &kept["statusReason"]), (&json!("SUSPENDED"), &json!("Invoice INV-000002 is overdue.")));
        mark_paid(&app, &all[1]["invoiceId"], json!({})).await;
        let restored = subscription(&app, &s).await;
        assert_eq!((&restored["status"], &restored["statusReason"]), (&json!("ACTIVATED"), &json!("Invoice INV-000002 is paid.")));
        let events = app.store.event_types(app.org).await.unwrap();
        assert_eq!(events_of(&events, "subscription.restored", "subscriptionId", &json!(s)).len(), 1);
        app
    })
    .await;
}
