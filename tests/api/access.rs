//! API keys: 401 for missing, unknown, revoked keys and bare bearer tokens;
//! 403 for writes with a read-only key; revocation within the cache lifetime.

use crate::harness::*;
use chrono::Duration;
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unauthenticated_requests_are_401() {
    each_backend(|app| async move {
        app.call_as(None, "GET", "/customers", None, &[]).await.assert_error(401, "unauthorized");
        app.call_as(Some("sbk_not-a-real-key"), "GET", "/users", None, &[]).await.assert_error(401, "invalid_api_key");
        app.call_as(None, "GET", "/users", None, &[("authorization", "Bearer abc.def.ghi")]).await.assert_error(401, "unauthorized");
        app.call_as(Some(&app.key), "GET", "/users", None, &[("authorization", "Bearer abc.def.ghi")]).await.assert_error(401, "invalid_bearer_token");
        // authentication comes before input checks, and a refused write changes nothing
        app.call_as(None, "POST", "/customers", Some(json!({"name": 5})), &[]).await.assert_error(401, "unauthorized");
        let e = app.bullfinch_with("sbk_wrong").user_view(&"rid_x".parse().unwrap()).await.unwrap_err();
        assert_refused(&e, 401, "invalid_api_key");
        // header parameters are checked after authentication
        let long = "k".repeat(257);
        let r = app
            .call_as(
                Some(&app.key),
                "POST",
                "/customers",
                Some(json!({"customerType": "CONSUMER", "name": "X", "contact": {}})),
                &[("x-idempotency-key", &long)],
            )
            .await;
        r.assert_error(400, "validation_failed");
        assert_eq!(r.details(), [("X-Idempotency-Key".to_string(), "too_long".to_string())]);
        let ok = "k".repeat(256);
        let r = app
            .call_as(Some(&app.key), "POST", "/customers", Some(json!({"customerType": "CONSUMER", "name": "X", "contact": {}})), &[("x-idempotency-key", &ok)])
            .await;
        assert_eq!(r.status, 201);
        // open operations need no key
        assert_eq!(app.call_as(None, "GET", "/health", None, &[]).await.body["status"], "ok");
        app
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_only_keys_cannot_write() {
    each_backend(|app| async move {
        let ro = app.new_key(app.org, None, true).await;
        let r = app.call_as(Some(&ro), "POST", "/customers", Some(json!({"customerType": "CONSUMER", "name": "X", "contact": {}})), &[]).await;
        r.assert_error(403, "read_only_api_key");
        let r = app.call_as(Some(&ro), "PUT", "/users/rid_x", Some(json!({"name": "X"})), &[]).await;
        r.assert_error(403, "read_only_api_key");
        assert_eq!(app.call_as(Some(&ro), "GET", "/customers", None, &[]).await.status, 200);
        assert_eq!(app.call("GET", "/customers", None).await.body["items"].as_array().unwrap().len(), 0);
        app
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_revoked_key_stops_working_within_the_cache_lifetime() {
    each_backend(|app| async move {
        let key = app.new_key(app.org, None, false).await;
        assert_eq!(app.call_as(Some(&key), "GET", "/customers", None, &[]).await.status, 200);
        let listed = switchboard::admin::key_list(&app.store, app.org).await.unwrap();
        let id = app.key_id(&key).await;
        assert!(listed.to_string().find(&key).is_none(), "secrets are never listed");
        let revoked = switchboard::admin::key_revoke(&app.store, &app.clock, id).await.unwrap();
        assert!(revoked["revokedAt"].is_string());
        app.clock.advance(Duration::seconds(switchboard::keys::CACHE_TTL_SECONDS));
        app.call_as(Some(&key), "GET", "/customers", None, &[]).await.assert_error(401, "invalid_api_key");
        // a key in use is fetched again past half its cache life: the
        // request that does so finds it revoked, and so does every later one
        let key = app.new_key(app.org, None, false).await;
        assert_eq!(app.call_as(Some(&key), "GET", "/customers", None, &[]).await.status, 200);
        switchboard::admin::key_revoke(&app.store, &app.clock, app.key_id(&key).await).await.unwrap();
        assert_eq!(app.call_as(Some(&key), "GET", "/customers", None, &[]).await.status, 200, "cached: not yet");
        app.clock.advance(Duration::milliseconds(switchboard::keys::CACHE_TTL_SECONDS * 500));
        for _ in 0..2 {
            app.call_as(Some(&key), "GET", "/customers", None, &[]).await.assert_error(401, "invalid_api_key");
        }
        app
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lost_database_is_a_500_error_object_not_a_crash() {
    each_backend(|app| async move {
        app.store.close().await;
        let r = app.call_as(None, "GET", "/health", None, &[]).await;
        r.assert_error(500, "internal_error");
        assert_eq!(r.body["message"], "The server failed to complete the request.", "no internals leak");
        app
    })
    .await;
}

/// Two requests a second per key, both at once.
fn two_a_second(s: &mut switchboard::config::Settings) {
    s.per_key_per_second = 2;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_key_is_rate_limited_with_retry_after() {
    each_backend_with(two_a_second, |app| async move {
        assert_eq!(app.call("GET", "/customers", None).await.status, 200);
        assert_eq!(app.call("GET", "/users", None).await.status, 200);
        let r = app.call("POST", "/customers", Some(json!({"customerType": "CONSUMER", "name": "X", "contact": {}}))).await;
        r.assert_error(429, "too_many_requests");
        let resp = TestApp::http(Some(&app.key)).get(format!("{}/users", app.base)).send().await.unwrap();
        assert_eq!(resp.status().as_u16(), 429);
        let retry: u64 = resp.headers()["retry-after"].to_str().unwrap().parse().unwrap();
        assert!((1..=30).contains(&retry), "Retry-After {retry}");
        let e = app.bullfinch().user_list(None, None, None, None).await.unwrap_err();
        assert_refused(&e, 429, "too_many_requests");
        // another key has its own allowance
        let other = app.new_key(app.org, None, false).await;
        assert_eq!(app.call_as(Some(&other), "GET", "/users", None, &[]).await.status, 200);
        // after the wait, the key may call again
        app.clock.advance(Duration::seconds(retry as i64));
        assert_eq!(app.call("GET", "/customers", None).await.status, 200);
        let r = app.call_as(Some(&other), "GET", "/customers", None, &[]).await;
        assert_eq!(r.body["items"].as_array().unwrap().len(), 0, "the refused create changed nothing");
        app
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn request_bodies_over_the_configured_limit_are_413() {
    each_backend_with(
        |s| s.max_body_bytes = 2048,
        |app| async move {
            // metadata values are short, so the bulk is many of them
            let customer = |entries: usize| {
                let metadata: serde_json::Map<String, serde_json::Value> = (0..entries).map(|i| (format!("k{i:02}"), json!("x".repeat(90)))).collect();
                json!({"customerType": "CONSUMER", "name": "Big", "contact": {}, "metadata": metadata})
            };
            let r = app.call("POST", "/customers", Some(customer(30))).await;
            r.assert_error(413, "payload_too_large");
            let r = app.call_as(None, "POST", "/auth/email/start", Some(json!({"email": format!("{}@example.com", "a".repeat(3000))})), &[]).await;
            r.assert_error(413, "payload_too_large");
            assert_eq!(app.call("GET", "/customers", None).await.body["items"].as_array().unwrap().len(), 0, "nothing was created");
            // just under the limit is accepted
            let body = customer(19);
            assert!(body.to_string().len() < 2048);
            assert_eq!(app.call("POST", "/customers", Some(body)).await.status, 201);
            app
        },
    )
    .await;
}
