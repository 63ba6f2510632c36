//! Refresh tokens (`POST /auth/token/refresh`): one use each, rotation, a
//! reuse ending the whole session, expiry on the server's clock and its
//! setting, the end of the user's sessions, the key's organisation, the
//! login rate limit, many clients spending one token at once, and only a
//! keyed hash stored.

use crate::harness::*;
use crate::login::user_with_email;
use bullfinch::types::RefreshTokenRequest;
use chrono::Duration;
use serde_json::json;
use sqlx::Row;
use std::collections::BTreeMap;

async fn refresh(app: &TestApp, key: Option<&str>, token: &str) -> Raw {
    app.call_as(key, "POST", "/auth/token/refresh", Some(json!({ "refreshToken": token })), &[]).await
}

/// The status of `GET /users/{user}` as the bearer of `access`.
async fn as_user(app: &TestApp, user: uuid::Uuid, access: &str) -> u16 {
    let bearer = format!("Bearer {access}");
    app.call_as(Some(&app.key), "GET", &format!("/users/{user}"), None, &[("authorization", &bearer)]).await.status
}

fn token_of(r: &Raw) -> (String, String) {
    assert_eq!(r.status, 200, "{:#}", r.body);
    (r.body["accessToken"].as_str().unwrap().to_string(), r.body["refreshToken"].as_str().unwrap().to_string())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refresh_token_works_once_and_its_reuse_ends_the_session() {
    each_backend(|app| async move {
        let user = user_with_email(&app, &app.key, "ria@example.com").await;
        let first = app.login_answer("ria@example.com", Some(&app.key)).await;
        assert!(first.refresh_token.starts_with("rft_"), "{}", first.refresh_token);
        assert_eq!(first.refresh_expires_in, 30 * 24 * 3600);
        // through the generated client, without a key
        let body = RefreshTokenRequest { refresh_token: first.refresh_token.parse().unwrap() };
        let second = app.bullfinch_open().auth_token_refresh(None, &body).await.unwrap().into_inner();
        assert_ne!(second.refresh_token, first.refresh_token, "rotated");
        assert_eq!(second.user_id, Some(user));
        assert_eq!(as_user(&app, user, &second.access_token).await, 200);
        let (_, third) = token_of(&refresh(&app, Some(&app.key), &second.refresh_token).await);

        // the first one again: refused, and the session it began is over
        refresh(&app, None, &first.refresh_token).await.assert_error(401, "invalid_refresh_token");
        refresh(&app, None, &third).await.assert_error(401, "invalid_refresh_token");
        // another login's session goes on
        let other = app.login_answer("ria@example.com", Some(&app.key)).await;
        let r = refresh(&app, None, &other.refresh_token).await;
        assert_eq!(r.status, 200, "{:#}", r.body);
        // unknown and malformed tokens are the same 401; a bad body 400
        refresh(&app, None, "rft_unknown").await.assert_error(401, "invalid_refresh_token");
        app.call_as(None, "POST", "/auth/token/refresh", Some(json!({})), &[]).await.assert_error(400, "validation_failed");
        app
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refresh_tokens_expire_by_the_server_clock_and_their_lifetime_is_configurable() {
    each_backend_with(
        |s| s.refresh_token_seconds = 3 * 3600,
        |app| async move {
            user_with_email(&app, &app.key, "exp@example.com").await;
            let first = app.login_answer("exp@example.com", Some(&app.key)).await;
            assert_eq!(first.refresh_expires_in, 3 * 3600);
            // each refresh gives a token valid as long again from then
            app.clock.advance(Duration::seconds(3 * 3600 - 5));
            let (_, second) = token_of(&refresh(&app, None, &first.refresh_token).await);
            app.clock.advance(Duration::seconds(3 * 3600 - 5));
            let (_, third) = token_of(&refresh(&app, None, &second).await);
            app.clock.advance(Duration::seconds(3 * 3600 + 1));
            refresh(&app, None, &third).await.assert_error(401, "invalid_refresh_token");
            app
        },
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refresh_tokens_end_with_the_users_sessions() {
    each_backend(|app| async move {
        let user = user_with_email(&app, &app.key, "moving@example.com").await;
        let before = app.login_answer("moving@example.com", Some(&app.key)).await;
        // the sign-in that confirms a new address ends the sessions begun before
        let moved = app.call("PUT", &format!("/users/{user}"), Some(json!({"email": "moved@example.com"}))).await;
        assert_eq!(moved.status, 200, "{:#}", moved.body);
        let after = app.login_answer("moved@example.com", Some(&app.key)).await;
        refresh(&app, None, &before.refresh_token).await.assert_error(401, "invalid_refresh_token");
        let (access, refresh_token) = token_of(&refresh(&app, None, &after.refresh_token).await);
        assert_eq!(as_user(&app, user, &access).await, 200);

        // an operator's sign-out ends them all, access tokens too
        let out = switchboard::admin::user_sign_out(&app.store, &app.clock, user).await.unwrap();
        assert_eq!(out["userId"], user.to_string());
        refresh(&app, None, &refresh_token).await.assert_error(401, "invalid_refresh_token");
        assert_eq!(as_user(&app, user, &access).await, 401);
        assert!(switchboard::admin::user_sign_out(&app.store, &app.clock, uuid::Uuid::new_v4()).await.is_err(), "no such user");
        // signing in again starts a session that works
        let again = app.login_answer("moved@example.com", Some(&app.key)).await;
        assert_eq!(refresh(&app, None, &again.refresh_token).await.status, 200);
        app
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_organisations_key_spends_nothing() {
    each_backend(|app| async move {
        let (_, other_key) = app.other_org().await;
        user_with_email(&app, &app.key, "kit@example.com").await;
        let first = app.login_answer("kit@example.com", Some(&app.key)).await;
        refresh(&app, Some(&other_key), &first.refresh_token).await.assert_error(401, "invalid_refresh_token");
        refresh(&app, Some("sbk_wrong"), &first.refresh_token).await.assert_error(401, "invalid_api_key");
        // neither spent it, nor ended its session
        let r = refresh(&app, Some(&app.key), &first.refresh_token).await;
        assert_eq!(r.status, 200, "{:#}", r.body);
        app
    })
    .await;
}

/// Eight clients spending one refresh token at once: one is answered, the
/// rest are reuse, which ends the session, the answered one's new token too.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn eight_clients_spending_one_refresh_token_at_once() {
    each_backend(|app| async move {
        user_with_email(&app, &app.key, "race@example.com").await;
        let first = app.login_answer("race@example.com", Some(&app.key)).await;
        let answers = futures::future::join_all((0..8).map(|_| refresh(&app, None, &first.refresh_token))).await;
        let mut counts = BTreeMap::new();
        for a in &answers {
            *counts.entry(a.status).or_insert(0) += 1;
        }
        assert_eq!(counts, BTreeMap::from([(200, 1), (401, 7)]), "{answers:#?}");
        let won = answers.iter().find(|a| a.status == 200).unwrap();
        refresh(&app, None, won.body["refreshToken"].as_str().unwrap()).await.assert_error(401, "invalid_refresh_token");
        app
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_a_keyed_hash_of_a_refresh_token_is_stored() {
    each_backend(|app| async move {
        user_with_email(&app, &app.key, "hash@example.com").await;
        let first = app.login_answer("hash@example.com", Some(&app.key)).await;
        let (_, second) = token_of(&refresh(&app, None, &first.refresh_token).await);
        let rows = sqlx::query("SELECT token_hash FROM refresh_tokens").fetch_all(app.store.pool()).await.unwrap();
        assert_eq!(rows.len(), 2, "the spent one is kept to recognise its reuse");
        for r in rows {
            let hash: String = r.try_get("token_hash").unwrap();
            assert_eq!(hash.len(), 64, "{hash}");
            for token in [&first.refresh_token, &second] {
                assert!(!hash.contains(token.trim_start_matches("rft_")), "a token stored as itself");
            }
        }
        app
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refresh_is_rate_limited_per_address_as_login_is() {
    each_backend_with(
        |s| s.login_per_address_per_minute = 3,
        |app| async move {
            for _ in 0..3 {
                refresh(&app, None, "rft_unknown").await.assert_error(401, "invalid_refresh_token");
            }
            let r = refresh(&app, None, "rft_unknown").await;
            r.assert_error(429, "too_many_requests");
            assert!(r.body["message"].as_str().unwrap().contains("address"), "{:#}", r.body);
            app.clock.advance(Duration::seconds(60));
            refresh(&app, None, "rft_unknown").await.assert_error(401, "invalid_refresh_token");
            app
        },
    )
    .await;
}
