//! What bounds guessing: wrong login codes counted per address in the
//! database (a lockout every instance keeps, for addresses with and
//! without an account), one live code per address, the client address
//! taken from X-Forwarded-For only behind a trusted proxy, and unknown API
//! keys limited per client address before any key is looked at.

use crate::harness::*;
use chrono::Duration;
use serde_json::{Value, json};

const EMAIL: &str = "guess@example.com";

/// A login operation (`start` or `verify`) on the server at `base`.
async fn login(base: &str, op: &str, body: Value, headers: &[(&str, &str)]) -> Raw {
    let mut request = TestApp::http(None).post(format!("{base}/auth/email/{op}")).json(&body);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let resp = request.send().await.unwrap();
    let status = resp.status().as_u16();
    let revision = resp.headers().get("api-revision").map(|v| v.to_str().unwrap().to_string());
    Raw { status, revision, body: resp.json().await.unwrap() }
}

async fn start(base: &str, email: &str) -> Raw {
    login(base, "start", json!({"email": email}), &[]).await
}

async fn wrong(base: &str, email: &str, nonce: &str) -> Raw {
    login(base, "verify", json!({"email": email, "nonce": nonce, "code": "000000"}), &[]).await
}

async fn user(app: &TestApp, email: &str) {
    let c = app.call("POST", "/customers", Some(json!({"customerType": "CONSUMER", "name": "Gus", "contact": {}}))).await;
    let u = app.call("POST", "/users", Some(json!({"name": "Gus", "email": email, "customerId": c.body["customerId"], "role": "ADMIN"}))).await;
    assert_eq!(u.status, 201, "{:#}", u.body);
}

/// Starts a login for `email` at `base`: its nonce and mailed code (never
/// 000000, which the guesses use).
async fn started(app: &TestApp, base: &str, email: &str) -> (String, String) {
    loop {
        let r = start(base, email).await;
        assert_eq!(r.status, 202, "{:#}", r.body);
        let code = app.mailed_code(email).await;
        if code != "000000" {
            return (r.body["nonce"].as_str().unwrap().to_string(), code);
        }
    }
}

fn generous(s: &mut switchboard::config::Settings) {
    s.login_per_email_per_minute = 1000;
    s.login_per_address_per_minute = 1000;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_wrong_codes_lock_the_address_on_every_instance_for_a_day() {
    each_backend_with(generous, |app| async move {
        user(&app, EMAIL).await;
        let (other, other_base) = app.second_instance().await;
        let (first, _) = started(&app, &app.base, EMAIL).await;
        for _ in 0..5 {
            wrong(&app.base, EMAIL, &first).await.assert_error(401, "invalid_login_code");
        }
        // the other instance counts on from five
        let (second, code) = started(&app, &other_base, EMAIL).await;
        for _ in 0..4 {
            wrong(&other_base, EMAIL, &second).await.assert_error(401, "invalid_login_code");
        }
        let r = wrong(&app.base, EMAIL, &second).await;
        r.assert_error(429, "too_many_requests");
        assert!(r.body["message"].as_str().unwrap().contains("wrong login codes"), "{:#}", r.body);
        // the right code, and a new start, on either instance: refused
        for base in [&app.base, &other_base] {
            login(base, "verify", json!({"email": EMAIL, "nonce": second, "code": code}), &[]).await.assert_error(429, "too_many_requests");
            start(base, EMAIL).await.assert_error(429, "too_many_requests");
        }
        // a day after the first wrong code login opens again
        app.clock.advance(Duration::hours(24));
        let (nonce, code) = started(&app, &other_base, EMAIL).await;
        let r = login(&app.base, "verify", json!({"email": EMAIL, "nonce": nonce, "code": code}), &[]).await;
        assert_eq!(r.status, 200, "{:#}", r.body);
        other.close().await.unwrap();
        app
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_address_without_an_account_locks_alike() {
    each_backend_with(generous, |app| async move {
        let nobody = "nobody@example.com";
        let nonce = start(&app.base, nobody).await.body["nonce"].as_str().unwrap().to_string();
        for _ in 0..9 {
            wrong(&app.base, nobody, &nonce).await.assert_error(401, "invalid_login_code");
        }
        wrong(&app.base, nobody, &nonce).await.assert_error(429, "too_many_requests");
        start(&app.base, nobody).await.assert_error(429, "too_many_requests");
        app
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_code_ends_the_one_before() {
    each_backend_with(generous, |app| async move {
        user(&app, EMAIL).await;
        let (first, first_code) = started(&app, &app.base, EMAIL).await;
        let (second, second_code) = started(&app, &app.base, EMAIL).await;
        let r = login(&app.base, "verify", json!({"email": EMAIL, "nonce": first, "code": first_code}), &[]).await;
        r.assert_error(401, "invalid_login_code");
        let r = login(&app.base, "verify", json!({"email": EMAIL, "nonce": second, "code": second_code}), &[]).await;
        assert_eq!(r.status, 200, "{:#}", r.body);
        app
    })
    .await;
}

fn two_per_address_behind_loopback(s: &mut switchboard::config::Settings) {
    s.login_per_address_per_minute = 2;
    s.login_per_email_per_minute = 1000;
    s.trusted_proxies = vec!["127.0.0.0/8".parse().unwrap(), "::1/128".parse().unwrap()];
}

fn two_per_address(s: &mut switchboard::config::Settings) {
    s.login_per_address_per_minute = 2;
    s.login_per_email_per_minute = 1000;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forwarded_for_names_the_client_only_behind_a_trusted_proxy() {
    let from = |client: &'static str| [("x-forwarded-for", client)];
    each_backend_with(two_per_address_behind_loopback, |app| async move {
        for _ in 0..2 {
            assert_eq!(login(&app.base, "start", json!({"email": EMAIL}), &from("192.0.2.1")).await.status, 202);
        }
        login(&app.base, "start", json!({"email": EMAIL}), &from("192.0.2.1")).await.assert_error(429, "too_many_requests");
        // another client behind the same proxy counts alone; IPv6 by its /64
        assert_eq!(login(&app.base, "start", json!({"email": EMAIL}), &from("192.0.2.2")).await.status, 202);
        assert_eq!(login(&app.base, "start", json!({"email": EMAIL}), &from("2001:db8::1")).await.status, 202);
        assert_eq!(login(&app.base, "start", json!({"email": EMAIL}), &from("2001:db8::2")).await.status, 202);
        login(&app.base, "start", json!({"email": EMAIL}), &from("2001:db8::3")).await.assert_error(429, "too_many_requests");
        app
    })
    .await;
    // without a trusted proxy the header is the client's word, and ignored
    each_backend_with(two_per_address, |app| async move {
        for client in ["192.0.2.1", "192.0.2.2"] {
            assert_eq!(login(&app.base, "start", json!({"email": EMAIL}), &from(client)).await.status, 202);
        }
        login(&app.base, "start", json!({"email": EMAIL}), &from("192.0.2.3")).await.assert_error(429, "too_many_requests");
        app
    })
    .await;
}

fn three_unknown_keys(s: &mut switchboard::config::Settings) {
    s.auth_failures_per_minute = 3;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_keys_are_limited_per_client_address() {
    each_backend_with(three_unknown_keys, |app| async move {
        for i in 0..3 {
            app.call_as(Some(&format!("sbk_invented{i}")), "GET", "/customers", None, &[]).await.assert_error(401, "invalid_api_key");
        }
        let r = app.call_as(Some("sbk_invented3"), "GET", "/customers", None, &[]).await;
        r.assert_error(429, "too_many_requests");
        // the address is refused before any key is looked at, its own too
        app.call("GET", "/customers", None).await.assert_error(429, "too_many_requests");
        // one failure a 20 seconds
        app.clock.advance(Duration::seconds(20));
        assert_eq!(app.call("GET", "/customers", None).await.status, 200);
        app
    })
    .await;
}

/// A flood of invented keys from one address costs the database at most the address's budget of lookups: the version policy (which picks
/// the revision before any handler runs) asks the limiter before it looks a key up, as the handler's prelude does for a request that names
/// its revision, and answers 429 in the oldest revision without looking. 2,000 distinct random keys, half of them with `Api-Revision`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_of_random_keys_is_looked_up_no_more_than_the_limiters_burst() {
    // the default budget (the tests' own is 10,000)
    let default_budget = |s: &mut switchboard::config::Settings| s.auth_failures_per_minute = switchboard::config::Settings::default().auth_failures_per_minute;
    each_backend_with(default_budget, |app| async move {
        let burst = u64::from(app.settings.auth_failures_per_minute);
        assert_eq!(app.call("GET", "/customers", None).await.status, 200);
        let (before, started) = (app.server().keys.lookups(), app.clock.now());
        let mut refused = 0;
        // one connection kept alive: the requests come as fast as one client sends them
        let http = reqwest::Client::new();
        for i in 0..2_000 {
            let mut req = http.get(format!("{}/customers", app.base)).header("x-api-key", switchboard::keys::mint(i % 3 == 0));
            if i % 2 == 0 {
                req = req.header("Api-Revision", AUK);
            }
            let r = req.send().await.unwrap();
            let (status, body): (u16, Value) = (r.status().as_u16(), r.json().await.unwrap());
            match (status, body["internalCode"].as_str()) {
                (401, Some("invalid_api_key")) => {}
                (429, Some("too_many_requests")) => refused += 1,
                other => panic!("key {i}: {other:?} {body:#}"),
            }
        }
        let looked_up = app.server().keys.lookups() - before;
        // the budget: its burst, and what it gave back meanwhile (the clock runs while the requests go: burst a minute)
        let refilled = (app.clock.now() - started).num_milliseconds() as u64 * burst / 60_000;
        assert!(looked_up <= burst + refilled, "2,000 random keys cost {looked_up} lookups; the budget is {burst} and {refilled} given back");
        assert_eq!(refused, 2_000 - looked_up as usize, "every key not looked up was refused");
        app
    })
    .await;
}

/// Invented keys sent where no handler checks them (a path of no operation, the open login) cost a lookup each within the same budget, and
/// are refused past it: the version policy counts what it looked up and found no key for.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invented_keys_spend_the_budget_where_no_handler_looks_too() {
    each_backend_with(three_unknown_keys, |app| async move {
        let before = app.server().keys.lookups();
        for i in 0..3 {
            let r = app.call_as(Some(&format!("sbk_nowhere{i}")), "GET", "/no-such-operation", None, &[]).await;
            assert_eq!(r.status, 404, "{:#}", r.body);
        }
        let r = app.call_as(Some("sbk_nowhere3"), "GET", "/no-such-operation", None, &[]).await;
        r.assert_error(429, "too_many_requests");
        let login = login(&app.base, "start", json!({"email": EMAIL}), &[("x-api-key", "sbk_nowhere4"), ("Api-Revision", AUK)]).await;
        login.assert_error(429, "too_many_requests");
        assert_eq!(app.server().keys.lookups() - before, 3, "a key past the budget was looked up");
        app
    })
    .await;
}
