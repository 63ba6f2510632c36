//! Email login end to end through the outbox: the challenge, the code's
//! rules (hash only, expiry, single use, five attempts), the access token
//! (claims, expiry on the server's clock, tampering, `alg: none`, another
//! organisation), the key as the login's scope, and the login rate limits.

use crate::harness::*;
use base64::Engine;
use bullfinch::types::{EmailLoginStartRequest, EmailLoginVerifyRequest};
use chrono::Duration;
use serde_json::{Value, json};
use uuid::Uuid;

/// A customer of `app.org` with one user (ADMIN) whose address is `email`.
pub async fn user_with_email(app: &TestApp, key: &str, email: &str) -> Uuid {
    let c = app.call_as(Some(key), "POST", "/customers", Some(json!({"customerType": "CONSUMER", "name": email, "contact": {}})), &[]).await;
    assert_eq!(c.status, 201, "{:#}", c.body);
    let body = json!({"name": "Someone", "email": email, "customerId": c.body["customerId"], "role": "ADMIN"});
    let u = app.call_as(Some(key), "POST", "/users", Some(body), &[]).await;
    assert_eq!(u.status, 201, "{:#}", u.body);
    u.body["userId"].as_str().unwrap().parse().unwrap()
}

fn start_body(email: &str) -> EmailLoginStartRequest {
    EmailLoginStartRequest { email: email.parse().unwrap() }
}

fn verify_body(email: &str, nonce: &str, code: &str) -> EmailLoginVerifyRequest {
    EmailLoginVerifyRequest { email: email.parse().unwrap(), nonce: nonce.parse().unwrap(), code: code.parse().unwrap() }
}

/// Starts a login without a key: the nonce.
async fn start(app: &TestApp, email: &str) -> String {
    app.bullfinch_open().auth_email_start(None, &start_body(email)).await.unwrap().into_inner().nonce
}

async fn verify(app: &TestApp, email: &str, nonce: &str, code: &str) -> Raw {
    let body = json!({"email": email, "nonce": nonce, "code": code});
    app.call_as(None, "POST", "/auth/email/verify", Some(body), &[]).await
}

/// A code that is not `code`.
fn wrong(code: &str) -> String {
    format!("{:06}", (code.parse::<u32>().unwrap() + 1) % 1_000_000)
}

fn claims(token: &str) -> Value {
    let payload = token.split('.').nth(1).unwrap();
    serde_json::from_slice(&base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(payload).unwrap()).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn login_end_to_end_through_the_outbox() {
    each_backend(|app| async move {
        let user = user_with_email(&app, &app.key, "anna@example.com").await;
        let open = app.bullfinch_open();
        let before = app.clock.now();
        let challenge = open.auth_email_start(None, &start_body("Anna@Example.com")).await.unwrap();
        assert_eq!(challenge.status().as_u16(), 202);
        let challenge = challenge.into_inner();
        assert_eq!(challenge.expires_in, 600);
        assert_eq!(challenge.expires_at - challenge.created_at, Duration::seconds(600));
        assert!(challenge.created_at >= before - Duration::seconds(1));
        // the mail is in the outbox, as `admin mail list --to` prints it
        let mails = switchboard::admin::mail_list(&app.store, Some("anna@example.com")).await.unwrap();
        let mail = &mails.as_array().unwrap()[0];
        assert_eq!(mail["status"], "queued");
        let code = app.mailed_code("anna@example.com").await;
        assert!(code.len() == 6 && code.bytes().all(|b| b.is_ascii_digit()), "{code}");
        assert!(mail["body"].as_str().unwrap().contains(&code));
        // the code is stored only as a hash
        let stored: Vec<(String,)> = sqlx::query_as("SELECT code_hash FROM login_challenges").fetch_all(app.store.pool()).await.unwrap();
        assert!(stored.iter().all(|(h,)| h.len() == 64 && !h.contains(&code)));

        let token = open.auth_email_verify(None, &verify_body("anna@example.com", &challenge.nonce, &code)).await.unwrap();
        let token = token.into_inner();
        assert_eq!(token.token_type.to_string(), "Bearer");
        assert_eq!(token.expires_in, 3600);
        assert_eq!(token.user_id, Some(user));
        let c = claims(&token.access_token);
        assert_eq!(c["sub"], user.to_string());
        assert_eq!(c["org"], app.org.to_string());
        assert_eq!(c["exp"].as_i64().unwrap() - c["iat"].as_i64().unwrap(), 3600);
        assert!(c["jti"].as_str().unwrap().parse::<Uuid>().is_ok());

        // the token works with the key, never alone
        let me = app.bullfinch_as(&app.key, &token.access_token);
        assert_eq!(me.customer_list(None, None, None, None).await.unwrap().into_inner().items.len(), 1);
        let r = app.call_as(None, "GET", "/customers", None, &[("authorization", &format!("Bearer {}", token.access_token))]).await;
        r.assert_error(401, "unauthorized");
        // the code works once
        verify(&app, "anna@example.com", &challenge.nonce, &code).await.assert_error(401, "invalid_login_code");
        app
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn start_answers_alike_for_unknown_addresses() {
    each_backend(|app| async move {
        user_with_email(&app, &app.key, "known@example.com").await;
        let known = app.call_as(None, "POST", "/auth/email/start", Some(json!({"email": "known@example.com"})), &[]).await;
        let unknown = app.call_as(None, "POST", "/auth/email/start", Some(json!({"email": "nobody@example.com"})), &[]).await;
        assert_eq!((known.status, unknown.status), (202, 202));
        let shape = |v: &Value| v.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
        assert_eq!(shape(&known.body), shape(&unknown.body));
        assert_eq!(known.body["expiresIn"], unknown.body["expiresIn"]);
        // nothing is mailed to an address without a user, and no code redeems it
        let none = switchboard::admin::mail_list(&app.store, Some("nobody@example.com")).await.unwrap();
        assert_eq!(none.as_array().unwrap().len(), 0);
        let nonce = unknown.body["nonce"].as_str().unwrap();
        for code in ["000000", "123456", "999999"] {
            verify(&app, "nobody@example.com", nonce, code).await.assert_error(401, "invalid_login_code");
        }
        // malformed input is a 400, for known and unknown alike
        let r = app.call_as(None, "POST", "/auth/email/start", Some(json!({"email": "not an address"})), &[]).await;
        r.assert_error(400, "validation_failed");
        let r = verify(&app, "known@example.com", "lgn_x", "12345").await;
        r.assert_error(400, "validation_failed");
        assert_eq!(r.details(), [("code".to_string(), "invalid_format".to_string())]);
        app
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_code_expires_by_the_server_clock_and_its_lifetime_is_configurable() {
    each_backend_with(
        |s| s.login_code_seconds = 120,
        |app| async move {
            user_with_email(&app, &app.key, "eve@example.com").await;
            let nonce = start(&app, "eve@example.com").await;
            let code = app.mailed_code("eve@example.com").await;
            app.clock.advance(Duration::seconds(121));
            verify(&app, "eve@example.com", &nonce, &code).await.assert_error(401, "invalid_login_code");
            // a fresh one, used within its lifetime, works
            let r = app.call_as(None, "POST", "/auth/email/start", Some(json!({"email": "eve@example.com"})), &[]).await;
            assert_eq!(r.body["expiresIn"], 120);
            let code = app.mailed_code("eve@example.com").await;
            app.clock.advance(Duration::seconds(119));
            assert_eq!(verify(&app, "eve@example.com", r.body["nonce"].as_str().unwrap(), &code).await.status, 200);
            app
        },
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_code_dies_after_five_wrong_attempts() {
    each_backend(|app| async move {
        user_with_email(&app, &app.key, "bob@example.com").await;
        // four wrong attempts leave the right code working
        let nonce = start(&app, "bob@example.com").await;
        let code = app.mailed_code("bob@example.com").await;
        for _ in 0..4 {
            verify(&app, "bob@example.com", &nonce, &wrong(&code)).await.assert_error(401, "invalid_login_code");
        }
        assert_eq!(verify(&app, "bob@example.com", &nonce, &code).await.status, 200);
        // five wrong attempts kill it: the right code then fails too
        let nonce = start(&app, "bob@example.com").await;
        let code = app.mailed_code("bob@example.com").await;
        for _ in 0..5 {
            verify(&app, "bob@example.com", &nonce, &wrong(&code)).await.assert_error(401, "invalid_login_code");
        }
        verify(&app, "bob@example.com", &nonce, &code).await.assert_error(401, "invalid_login_code");
        // a nonce is bound to its address
        let nonce = start(&app, "bob@example.com").await;
        let code = app.mailed_code("bob@example.com").await;
        verify(&app, "someone@example.com", &nonce, &code).await.assert_error(401, "invalid_login_code");
        assert_eq!(verify(&app, "BOB@example.com", &nonce, &code).await.status, 200);
        app
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_tokens_are_401() {
    each_backend(|app| async move {
        user_with_email(&app, &app.key, "tom@example.com").await;
        let token = app.login("tom@example.com", None).await;
        let get = |token: String| {
            let app = &app;
            async move { app.call_as(Some(&app.key), "GET", "/customers", None, &[("authorization", &format!("Bearer {token}"))]).await }
        };
        assert_eq!(get(token.clone()).await.status, 200);
        // tampered: the payload changed, the signature kept
        let mut parts: Vec<String> = token.split('.').map(str::to_string).collect();
        let mut c = claims(&token);
        c["sub"] = json!(Uuid::new_v4());
        parts[1] = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(c.to_string());
        get(parts.join(".")).await.assert_error(401, "invalid_bearer_token");
        // alg none, no signature
        let none = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(r#"{"alg":"none","typ":"JWT"}"#);
        let payload = token.split('.').nth(1).unwrap();
        get(format!("{none}.{payload}.")).await.assert_error(401, "invalid_bearer_token");
        get("not-a-jwt".into()).await.assert_error(401, "invalid_bearer_token");
        let r = app.call_as(Some(&app.key), "GET", "/customers", None, &[("authorization", &format!("Basic {token}"))]).await;
        r.assert_error(401, "invalid_bearer_token");
        // another organisation's token with this organisation's key
        let (other_org, other_key) = app.other_org().await;
        user_with_email(&app, &other_key, "tina@example.com").await;
        let theirs = app.login("tina@example.com", None).await;
        assert_eq!(claims(&theirs)["org"], other_org.to_string());
        get(theirs).await.assert_error(401, "invalid_bearer_token");
        // expired, by the server's clock
        app.clock.advance(Duration::seconds(3600));
        get(token).await.assert_error(401, "bearer_token_expired");
        app
    })
    .await;
}

/// A change of a user's sign-in address signs out whoever signed in with
/// the old one: their tokens issued before are refused; other changes keep
/// the sessions.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_email_takes_effect_when_it_signs_in_and_ends_the_sessions() {
    each_backend(|app| async move {
        let id = user_with_email(&app, &app.key, "old@example.com").await;
        let token = app.login("old@example.com", Some(&app.key)).await;
        let me = format!("/users/{id}");
        let as_user = |token: String| {
            let (app, me) = (&app, me.clone());
            async move { app.call_as(Some(&app.key), "GET", &me, None, &[("authorization", &format!("Bearer {token}"))]).await }
        };
        assert_eq!(as_user(token.clone()).await.status, 200);
        let renamed = app.call("PUT", &me, Some(json!({"name": "Renamed"}))).await;
        assert_eq!(renamed.status, 200, "{:#}", renamed.body);
        assert_eq!(as_user(token.clone()).await.status, 200, "a change of name keeps the sessions");
        let same = app.call("PUT", &me, Some(json!({"email": "old@example.com"}))).await;
        assert_eq!(same.status, 200, "{:#}", same.body);
        assert_eq!(as_user(token.clone()).await.status, 200, "the same address is no change");

        // a new address waits until someone signs in with it
        let moved = app.call("PUT", &me, Some(json!({"email": "new@example.com"}))).await;
        assert_eq!(moved.status, 200, "{:#}", moved.body);
        assert_eq!((&moved.body["email"], &moved.body["pendingEmail"]), (&json!("old@example.com"), &json!("new@example.com")));
        let mails = switchboard::admin::mail_list(&app.store, None).await.unwrap();
        let subjects: Vec<(&str, &str)> =
            mails.as_array().unwrap().iter().rev().take(2).map(|m| (m["to"].as_str().unwrap(), m["subject"].as_str().unwrap())).collect();
        assert_eq!(subjects, [("old@example.com", "Your sign-in address is being changed"), ("new@example.com", "Confirm your new sign-in address")]);
        assert_eq!(as_user(token.clone()).await.status, 200, "nothing changed yet");
        let other = user_with_email(&app, &app.key, "other@example.com").await;
        let taken = app.call("PUT", &format!("/users/{other}"), Some(json!({"email": "NEW@example.com"}))).await;
        taken.assert_error(409, "email_taken");
        let old = app.login("old@example.com", Some(&app.key)).await;

        // the sign-in with it confirms it and ends the sessions begun before
        let fresh = app.login("new@example.com", Some(&app.key)).await;
        for before in [token, old] {
            let r = as_user(before).await;
            r.assert_error(401, "invalid_bearer_token");
            assert!(r.body["message"].as_str().unwrap().contains("sign in again"), "{:#}", r.body);
        }
        let now = as_user(fresh).await;
        assert_eq!(now.status, 200, "a token issued with the change is accepted");
        assert_eq!((&now.body["email"], now.body.get("pendingEmail")), (&json!("new@example.com"), None));

        // a change withdrawn by setting the address again never takes effect
        app.call("PUT", &me, Some(json!({"email": "third@example.com"}))).await;
        let kept = app.call("PUT", &me, Some(json!({"email": "New@example.com"}))).await;
        assert_eq!((&kept.body["email"], kept.body.get("pendingEmail")), (&json!("New@example.com"), None));
        let start = app.call_as(None, "POST", "/auth/email/start", Some(json!({"email": "third@example.com"})), &[]).await;
        assert_eq!(start.status, 202, "answered alike");
        assert!(
            switchboard::admin::mail_list(&app.store, Some("third@example.com"))
                .await
                .unwrap()
                .as_array()
                .unwrap()
                .iter()
                .all(|m| !m["subject"].as_str().unwrap_or("").starts_with("Your login code")),
            "no code for a withdrawn address"
        );
        app
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_key_scopes_a_login_to_its_organisation() {
    each_backend(|app| async move {
        let (_, other_key) = app.other_org().await;
        let here = user_with_email(&app, &app.key, "pat@example.com").await;
        let there = user_with_email(&app, &other_key, "pat@example.com").await;
        // without a key the address is ambiguous: a mail says so, no code works
        let nonce = start(&app, "pat@example.com").await;
        let mails = switchboard::admin::mail_list(&app.store, Some("pat@example.com")).await.unwrap();
        let mail = mails.as_array().unwrap().last().unwrap();
        assert!(mail["body"].as_str().unwrap().contains("several organisations"), "{mail:#}");
        verify(&app, "pat@example.com", &nonce, "123456").await.assert_error(401, "invalid_login_code");
        // with a key, the user of that organisation
        let token = app.login("pat@example.com", Some(&app.key)).await;
        assert_eq!(claims(&token)["sub"], here.to_string());
        let token = app.login("pat@example.com", Some(&other_key)).await;
        assert_eq!(claims(&token)["sub"], there.to_string());
        // a login started with one organisation's key is not finished with another's
        let client = app.bullfinch_with(&app.key);
        let nonce = client.auth_email_start(None, &start_body("pat@example.com")).await.unwrap().into_inner().nonce;
        let code = app.mailed_code("pat@example.com").await;
        let body = json!({"email": "pat@example.com", "nonce": nonce, "code": code});
        app.call_as(Some(&other_key), "POST", "/auth/email/verify", Some(body.clone()), &[]).await.assert_error(401, "invalid_login_code");
        // a key that is not valid: start still answers 202 and mails nothing; verify says 401
        let r = app.call_as(Some("sbk_wrong"), "POST", "/auth/email/start", Some(json!({"email": "pat@example.com"})), &[]).await;
        assert_eq!(r.status, 202);
        let after = switchboard::admin::mail_list(&app.store, Some("pat@example.com")).await.unwrap();
        assert_eq!(after.as_array().unwrap().len(), 4, "no mail for the invalid key's start");
        app.call_as(Some("sbk_wrong"), "POST", "/auth/email/verify", Some(body), &[]).await.assert_error(401, "invalid_api_key");
        app
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn login_is_rate_limited_per_email_and_per_address() {
    each_backend_with(
        |s| {
            s.login_per_email_per_minute = 2;
            s.login_per_address_per_minute = 5;
        },
        |app| async move {
            let start = |email: &'static str| {
                let app = &app;
                async move { app.call_as(None, "POST", "/auth/email/start", Some(json!({ "email": email })), &[]).await }
            };
            assert_eq!(start("a@example.com").await.status, 202);
            assert_eq!(start("A@example.com").await.status, 202);
            let r = start("a@example.com").await;
            r.assert_error(429, "too_many_requests");
            assert!(r.body["message"].as_str().unwrap().contains("email"));
            let e = app.bullfinch_open().auth_email_start(None, &start_body("a@example.com")).await.unwrap_err();
            assert_refused(&e, 429, "too_many_requests");
            let resp = TestApp::http(None)
                .post(format!("{}/auth/email/verify", app.base))
                .json(&json!({"email": "a@example.com", "nonce": "lgn_x", "code": "123456"}))
                .send()
                .await
                .unwrap();
            assert_eq!(resp.status().as_u16(), 429, "verify counts against the same address");
            let retry: i64 = resp.headers()["retry-after"].to_str().unwrap().parse().unwrap();
            assert!((1..=60).contains(&retry), "Retry-After {retry}");
            // this client address has now made 5 login requests: another email is refused too
            let r = start("b@example.com").await;
            r.assert_error(429, "too_many_requests");
            assert!(r.body["message"].as_str().unwrap().contains("address"));
            app.clock.advance(Duration::seconds(60));
            assert_eq!(start("a@example.com").await.status, 202);
            app
        },
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_generated_secret_is_shared_by_instances_and_a_configured_one_is_used() {
    each_backend(|app| async move {
        user_with_email(&app, &app.key, "sam@example.com").await;
        let token = app.login("sam@example.com", None).await;
        let (second, base) = app.second_instance().await;
        let resp = TestApp::http_as(Some(&app.key), Some(&token)).get(format!("{base}/customers")).send().await.unwrap();
        assert_eq!(resp.status().as_u16(), 200, "a second instance accepts the first one's token");
        second.close().await.unwrap();
        // an instance configured with its own secret does not
        let store = crate::harness::connect(&app.url).await;
        let settings = switchboard::config::Settings { token_secret: Some("x".repeat(32)), ..app.settings.clone() };
        let third = switchboard::server::start(store, app.clock.clone(), "127.0.0.1:0".parse().unwrap(), settings).await.unwrap();
        let base = format!("http://{}/api/v2", third.local_addr());
        let resp = TestApp::http_as(Some(&app.key), Some(&token)).get(format!("{base}/customers")).send().await.unwrap();
        assert_eq!(resp.status().as_u16(), 401);
        third.close().await.unwrap();
        let short = switchboard::config::Settings { token_secret: Some("short".into()), ..app.settings.clone() };
        let store = crate::harness::connect(&app.url).await;
        assert!(switchboard::server::start(store, app.clock.clone(), "127.0.0.1:0".parse().unwrap(), short).await.is_err());
        app
    })
    .await;
}

/// A mail server that accepts every message and hands each one's DATA to
/// the test, just enough SMTP for lettre.
async fn fake_smtp() -> (u16, tokio::sync::mpsc::UnboundedReceiver<String>) {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move {
        while let Ok((socket, _)) = listener.accept().await {
            let tx = tx.clone();
            tokio::spawn(async move {
                let (read, mut write) = socket.into_split();
                let mut lines = BufReader::new(read).lines();
                write.write_all(b"220 fake ESMTP\r\n").await.unwrap();
                while let Ok(Some(line)) = lines.next_line().await {
                    let verb = line.split(' ').next().unwrap_or("").to_ascii_uppercase();
                    let reply: &[u8] = match verb.as_str() {
                        "EHLO" | "HELO" => b"250 fake\r\n",
                        "DATA" => {
                            write.write_all(b"354 go ahead\r\n").await.unwrap();
                            let mut data = String::new();
                            while let Ok(Some(l)) = lines.next_line().await {
                                if l == "." {
                                    break;
                                }
                                data.push_str(&l);
                                data.push('\n');
                            }
                            tx.send(data).ok();
                            b"250 queued\r\n"
                        }
                        "QUIT" => {
                            write.write_all(b"221 bye\r\n").await.ok();
                            break;
                        }
                        _ => b"250 ok\r\n",
                    };
                    write.write_all(reply).await.unwrap();
                }
            });
        }
    });
    (port, rx)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_smtp_configured_the_code_is_mailed() {
    let (port, mut inbox) = fake_smtp().await;
    let settings = switchboard::config::Settings {
        smtp_url: Some(format!("smtp://127.0.0.1:{port}")),
        mail_from: "Login <login@operator.example>".into(),
        ..Default::default()
    };
    let app = TestApp::start_with_settings(Backend::Sqlite, settings).await;
    user_with_email(&app, &app.key, "mia@example.com").await;
    let nonce = start(&app, "mia@example.com").await;
    let data = tokio::time::timeout(std::time::Duration::from_secs(20), inbox.recv()).await.expect("mail arrives").unwrap();
    assert!(data.contains("To: mia@example.com"), "{data}");
    assert!(data.contains("From: Login <login@operator.example>"), "{data}");
    // (the code as the mail carries it: the outbox blanks it once sent)
    let at = data.find("Your login code: ").expect("the code in the mail") + "Your login code: ".len();
    let code: String = data[at..].chars().take(6).collect();
    assert!(code.chars().all(|c| c.is_ascii_digit()), "{data}");
    assert_eq!(verify(&app, "mia@example.com", &nonce, &code).await.status, 200);
    // the outbox records the send once the server has acknowledged it
    // (looked at again each time a worker finishes a round)
    let mut rounds = app.job_rounds();
    let sent = async {
        loop {
            rounds.mark_unchanged();
            let mails = switchboard::admin::mail_list(&app.store, Some("mia@example.com")).await.unwrap();
            if mails[0]["status"] == "sent" {
                return;
            }
            rounds.changed().await.unwrap();
        }
    };
    if tokio::time::timeout(std::time::Duration::from_secs(20), sent).await.is_err() {
        panic!("the outbox did not record the send: {}", switchboard::admin::mail_list(&app.store, Some("mia@example.com")).await.unwrap());
    }
    // once sent, the code is no one's to read there, and the record goes a day later
    let kept = switchboard::admin::mail_list(&app.store, Some("mia@example.com")).await.unwrap();
    assert_eq!((&kept[0]["subject"], &kept[0]["body"]), (&json!(""), &json!("")), "{kept}");
    assert!(!kept.to_string().contains(&code), "{kept}");
    app.clock.advance(chrono::Duration::hours(23));
    app.run_jobs().await;
    assert_eq!(switchboard::admin::mail_list(&app.store, Some("mia@example.com")).await.unwrap().as_array().unwrap().len(), 1);
    app.clock.advance(chrono::Duration::hours(2));
    app.run_jobs().await;
    assert_eq!(switchboard::admin::mail_list(&app.store, Some("mia@example.com")).await.unwrap(), json!([]));
    app.finish().await;
}
