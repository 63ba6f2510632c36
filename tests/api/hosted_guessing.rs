//! Guessing at the hosted pages, on both databases: a page's token is its
//! only key, so addresses whose tokens find nothing are limited as unknown
//! API keys are (a budget of their own per client address); and a page
//! takes ten attempts (cards or accounts tried) at most, also sent at once,
//! so it cannot serve to test stolen cards one after another.

use crate::harness::*;
use crate::orders::setup;
use crate::payments::{intent_of, link, link_now, order, page, pay_card, submit};
use chrono::Duration;
use serde_json::{Value, json};

fn three_failures_a_minute(s: &mut switchboard::config::Settings) {
    s.auth_failures_per_minute = 3;
}

/// `url` with its last path segment (the token) replaced.
fn other_token(url: &str, token: &str) -> String {
    format!("{}{token}", &url[..url.rfind('/').unwrap() + 1])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tokens_that_find_nothing_are_limited_per_client_address() {
    each_backend_with(three_failures_a_minute, |app| async move {
        setup(&app).await;
        let l = link(&app, json!({"orderId": order(&app, "+46701130001").await})).await;
        let url = l["hostedUrl"].as_str().unwrap().to_string();
        assert_eq!(page(&url).await.0, 200);
        // a payment page, a setup page and an invoice's document whose
        // tokens (of a token's length) find nothing
        let invented = "A".repeat(43);
        for guess in [
            other_token(&url, &invented),
            other_token(&url.replace("/pay/", "/setup/"), &invented),
            other_token(&url.replace("/pay/", "/invoice-documents/"), &invented),
        ] {
            assert_eq!(page(&guess).await.0, 404, "{guess}");
        }
        // the fourth guess, and then any page from the address, its own
        // link's too, before its token is looked up
        let r = reqwest::get(other_token(&url, &"B".repeat(43))).await.unwrap();
        assert_eq!(r.status().as_u16(), 429);
        let wait: u64 = r.headers()["retry-after"].to_str().unwrap().parse().unwrap();
        assert!((1..=60).contains(&wait), "{wait}");
        assert_eq!(r.headers()["content-security-policy"].to_str().unwrap().split(';').next(), Some("default-src 'none'"));
        assert!(r.text().await.unwrap().contains("Too many attempts"));
        let (status, html) = page(&url).await;
        assert_eq!(status, 429, "{html}");
        let (status, _, _) = pay_card(&url, "4242424242424242").await;
        assert_eq!(status, 429);
        // a budget apart from the API keys': the API still answers the address
        assert_eq!(link_now(&app, &l["paymentLinkId"]).await["status"], "ACTIVE", "the refused form paid nothing");
        // one failure every 20 seconds
        app.clock.advance(Duration::seconds(20));
        assert_eq!(page(&url).await.0, 200);
        app
    })
    .await;
}

/// Ten declined cards, whatever a page is.
const DECLINED: &str = "4000 0000 0000 0002";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_payment_page_takes_ten_attempts_then_no_more() {
    each_backend(|app| async move {
        setup(&app).await;
        let cancel = "https://shop.example/cancelled";
        let l = link(&app, json!({"orderId": order(&app, "+46701130002").await, "cancelUrl": cancel})).await;
        let url = l["hostedUrl"].as_str().unwrap().to_string();
        // a mistyped card is no attempt: the provider is never asked
        let (status, _, _) = pay_card(&url, "4242 4242 4242 4241").await;
        assert_eq!(status, 200);
        for _ in 0..9 {
            let (status, _, html) = pay_card(&url, DECLINED).await;
            assert!(status == 200 && html.contains("card_declined") && html.contains("<form"), "{status} {html}");
        }
        // the tenth says why it was declined, and no more: no form, no
        // invitation to try again, the way back to the seller
        let spent = |html: &str| {
            html.contains("card_declined")
                && html.contains("as many attempts as it allows")
                && !html.contains("<form")
                && !html.contains("try again")
                && html.contains(cancel)
        };
        let (status, _, html) = pay_card(&url, DECLINED).await;
        assert!(status == 200 && spent(&html), "{status} {html}");
        // the eleventh, a card that would pay, is not tried: the provider
        // is not even asked to keep it
        let methods = sandbox_methods(&app).await;
        let (status, _, html) = pay_card(&url, "4242424242424242").await;
        assert!(status == 429 && spent(&html), "{status} {html}");
        assert_eq!(sandbox_methods(&app).await, methods);
        let i = intent_of(&app, &l).await;
        assert_eq!((i["status"].as_str(), i["charges"].as_array().unwrap().len()), (Some("REQUIRES_PAYMENT_METHOD"), 10), "{i:#}");
        assert_eq!(link_now(&app, &l["paymentLinkId"]).await["status"], "ACTIVE");
        // the page itself still shows so, also on a reload
        let (status, html) = page(&url).await;
        assert!(status == 200 && spent(&html), "{status} {html}");
        app
    })
    .await;
}

/// The methods the sandbox providers were asked to keep.
async fn sandbox_methods(app: &TestApp) -> i64 {
    use sqlx::Row;
    sqlx::query("SELECT COUNT(*) AS n FROM sandbox_payment_methods").fetch_one(app.store.pool()).await.unwrap().get("n")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_payment_page_sent_cards_at_once_charges_ten_at_most() {
    each_backend(|app| async move {
        setup(&app).await;
        let l = link(&app, json!({"orderId": order(&app, "+46701130006").await})).await;
        let url = l["hostedUrl"].as_str().unwrap().to_string();
        // bursts of twelve at once, then one at a time until refused: a
        // request that finds the intent busy with another's charge tries
        // nothing ("being processed"), and no burst gets past ten charges
        let mut refused = false;
        for _ in 0..3 {
            let answers = futures::future::join_all((0..12).map(|_| pay_card(&url, DECLINED))).await;
            refused |= answers.iter().any(|a| a.0 == 429);
        }
        for _ in 0..12 {
            if refused {
                break;
            }
            refused = pay_card(&url, DECLINED).await.0 == 429;
        }
        assert!(refused, "the page never refused");
        let charges = intent_of(&app, &l).await["charges"].as_array().unwrap().len();
        assert!((1..=10).contains(&charges), "{charges}");
        let methods = sandbox_methods(&app).await;
        assert_eq!(pay_card(&url, DECLINED).await.0, 429);
        assert_eq!((intent_of(&app, &l).await["charges"].as_array().unwrap().len(), sandbox_methods(&app).await), (charges, methods));
        app
    })
    .await;
}

async fn profiles(app: &TestApp) -> Vec<Value> {
    app.call("GET", "/payment-profiles?customerId=rid_acme", None).await.body["items"].as_array().unwrap().clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_setup_page_takes_ten_attempts_then_no_more_also_sent_at_once() {
    each_backend(|app| async move {
        setup(&app).await;
        let o = order(&app, "+46701130003").await;
        let r = app
            .call(
                "POST",
                "/payment-profiles/sessions",
                Some(
                    json!({"orderId": o, "paymentProvider": "PROVIDER_1", "returnUrl": "https://shop.example/saved", "cancelUrl": "https://shop.example/back"}),
                ),
            )
            .await;
        assert_eq!(r.status, 201, "{:#}", r.body);
        let url = r.body["hostedUrl"].as_str().unwrap().to_string();
        let enter = |number: &'static str| {
            let url = url.clone();
            async move { submit(&url, &[("action", "save"), ("cardNumber", number), ("expiry", "12/30"), ("cvc", "123")]).await }
        };
        // twelve declined cards at once: ten are tried, two refused
        let answers = futures::future::join_all((0..12).map(|_| enter(DECLINED))).await;
        let mut statuses: Vec<u16> = answers.iter().map(|a| a.0).collect();
        statuses.sort();
        assert_eq!(statuses, [vec![200; 10], vec![429; 2]].concat(), "{answers:?}");
        let methods = sandbox_methods(&app).await;
        let (status, location, html) = enter("4242424242424242").await;
        assert_eq!((status, location), (429, None), "{html}");
        assert_eq!(sandbox_methods(&app).await, methods, "the provider was not asked");
        // why the last was refused, and no more: no form, no invitation to
        // try again, the way back to the seller; also on a reload
        let spent = |html: &str| {
            html.contains("card_declined")
                && html.contains("as many attempts as it allows")
                && !html.contains("<form")
                && !html.contains("try again")
                && html.contains("https://shop.example/back")
        };
        assert!(spent(&html), "{html}");
        assert!(profiles(&app).await.is_empty());
        let (status, html) = page(&url).await;
        assert!(status == 200 && spent(&html), "{status} {html}");
        let s = app.call("GET", &format!("/payment-profiles/sessions/{}", r.body["paymentProfileSessionId"].as_str().unwrap()), None).await;
        assert_eq!(s.body["status"], "ACTIVE", "{:#}", s.body);
        app
    })
    .await;
}

/// Every HTML page the server answers: the reference pages and the hosted
/// pages, in each of their states (a form, a notice, nothing found, too many
/// guesses) carry one set of headers: no caching, framing, sniffing or
/// referring, and a policy under which a page loads nothing from anywhere
/// and runs no script.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_html_page_carries_a_policy_that_loads_nothing_and_the_security_headers() {
    each_backend_with(three_failures_a_minute, |app| async move {
        setup(&app).await;
        let root = app.base.trim_end_matches("/api/v2").to_string();
        let l = link(&app, json!({"orderId": order(&app, "+46701130004").await})).await;
        let pay = l["hostedUrl"].as_str().unwrap().to_string();
        let o = order(&app, "+46701130005").await;
        let r = app
            .call("POST", "/payment-profiles/sessions", Some(json!({"orderId": o, "paymentProvider": "PROVIDER_1", "returnUrl": "https://shop.example/saved"})))
            .await;
        let setup_page = r.body["hostedUrl"].as_str().unwrap().to_string();
        let client = reqwest::Client::new();
        let mut pages = vec![];
        for url in
            [format!("{root}/api/v2/docs"), format!("{root}/api/v2/docs/{AUK}"), format!("{root}/api/v2/docs/{BULLFINCH}"), pay.clone(), setup_page.clone()]
        {
            pages.push((url.clone(), client.get(&url).send().await.unwrap()));
        }
        let form = |url: &str, fields: &[(&str, &str)]| {
            let body: String = url::form_urlencoded::Serializer::new(String::new()).extend_pairs(fields).finish();
            client.post(url).header("content-type", "application/x-www-form-urlencoded").body(body).send()
        };
        let declined = [("action", "pay"), ("cardNumber", DECLINED), ("expiry", "12/30"), ("cvc", "123")];
        pages.push((format!("POST {pay}"), form(&pay, &declined).await.unwrap()));
        pages.push((format!("POST {setup_page}"), form(&setup_page, &[("action", "save"), ("cardNumber", "1")]).await.unwrap()));
        for guess in [other_token(&pay, &"A".repeat(43)), other_token(&setup_page, &"A".repeat(43)), other_token(&pay, "short")] {
            pages.push((guess.clone(), client.get(&guess).send().await.unwrap()));
        }
        pages.push(("too many guesses".into(), client.get(&pay).send().await.unwrap()));
        let statuses: Vec<u16> = pages.iter().map(|(_, r)| r.status().as_u16()).collect();
        assert_eq!(statuses, [200, 200, 200, 200, 200, 200, 200, 404, 404, 404, 429]);
        for (what, r) in &pages {
            let h = r.headers();
            let header = |name: &str| h.get(name).map(|v| v.to_str().unwrap()).unwrap_or_else(|| panic!("{what}: no {name}"));
            assert_eq!(header("content-type"), "text/html; charset=utf-8", "{what}");
            assert_eq!((header("cache-control"), header("x-content-type-options")), ("no-store", "nosniff"), "{what}");
            assert_eq!((header("x-frame-options"), header("referrer-policy")), ("DENY", "no-referrer"), "{what}");
            let policy: Vec<&str> = header("content-security-policy").split(';').map(str::trim).collect();
            for directive in ["default-src 'none'", "base-uri 'none'", "frame-ancestors 'none'"] {
                assert!(policy.contains(&directive), "{what}: {policy:?}");
            }
            assert!(!policy.iter().any(|d| d.starts_with("script-src") || d.contains("http") || d.contains('*')), "{what}: {policy:?}");
        }
        app
    })
    .await;
}
