//! Secrets at rest (src/sealing.rs): webhook signing secrets and the
//! server's own secret are sealed under the master key in the database,
//! yet deliveries sign and tokens verify; a secret stored in plain before
//! the key was set is sealed at the next start; a rotation of the master
//! key reseals everything under the new one, and a key not configured is
//! named, never guessed around (the server does not start); a sealed
//! value moved to another row does not open, and its endpoint's
//! deliveries wait without holding up another's.

use crate::delivery::{expected_signature, local_webhooks, new_customer, register};
use crate::harness::*;
use crate::receiver::Receiver;
use serde_json::json;
use std::sync::Arc;
use switchboard::sealing::{Sealing, new_master_key, sealed_under};
use switchboard::store::Store;

/// The stored `secret` and `previous_secret` of endpoint `id`, and the
/// stored server secret, as the database holds them.
async fn stored(app: &TestApp, id: &str) -> (String, Option<String>, String) {
    let (secret, previous): (String, Option<String>) =
        sqlx::query_as("SELECT secret, previous_secret FROM webhook_endpoints WHERE id = $1").bind(id).fetch_one(app.store.pool()).await.unwrap();
    let server: String = sqlx::query_scalar("SELECT value FROM server_secrets").fetch_one(app.store.pool()).await.unwrap();
    (secret, previous, server)
}

/// A store over the app's database with these master keys.
async fn keyed(app: &TestApp, current: &str, previous: &[&str]) -> Store {
    let sealing = Sealing::new(Some(current), &previous.iter().map(|k| k.to_string()).collect::<Vec<_>>()).unwrap();
    Store::connect(&app.url).await.unwrap().sealed_with(Arc::new(sealing))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn secrets_are_sealed_at_rest_and_deliveries_still_sign() {
    each_backend_with(local_webhooks, |app| async move {
        let mut receiver = Receiver::start().await;
        let (id, first) = register(&app, &receiver.url, json!(["customer.created"])).await;
        let rotated = app.call("POST", &format!("/webhook-endpoints/{id}/rotate-secret"), None).await;
        assert_eq!(rotated.status, 200, "{:#}", rotated.body);
        let secret = rotated.body["secret"].as_str().unwrap().to_string();

        let (kept, previous, server) = stored(&app, &id).await;
        let test_key = app.store.sealing().current_id().unwrap().to_string();
        for value in [&kept, previous.as_ref().unwrap(), &server] {
            assert_eq!(sealed_under(value), Some(test_key.as_str()), "{value}");
        }
        assert!(!kept.contains(&secret) && !previous.as_ref().unwrap().contains(&first));
        let counts = app.store.secrets_at_rest().await.unwrap();
        assert_eq!((counts.plain, counts.sealed_under.get(&test_key)), (0, Some(&3)));

        // opened where they are used: the delivery is signed with the new secret
        new_customer(&app, &app.key, "Acme AB").await;
        let r = receiver.next().await;
        assert!(r.header("webhook-signature").split(' ').any(|s| s == expected_signature(&secret, &r)), "{}", r.header("webhook-signature"));
        // and a login still issues tokens that verify (with the key, as users sign in)
        crate::login::user_with_email(&app, &app.key, "sam@example.com").await;
        let token = app.login("sam@example.com", None).await;
        let me = TestApp::http_as(Some(&app.key), Some(&token)).get(format!("{}/customers", app.base)).send().await.unwrap();
        assert_eq!(me.status(), 200);
        app
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plain_secret_is_sealed_at_start_and_a_new_master_key_reseals_everything() {
    each_backend_with(local_webhooks, |mut app| async move {
        let mut receiver = Receiver::start().await;
        let (id, secret) = register(&app, &receiver.url, json!(["customer.created"])).await;
        // as a server before master keys kept it
        sqlx::query("UPDATE webhook_endpoints SET secret = $1 WHERE id = $2").bind(&secret).bind(&id).execute(app.store.pool()).await.unwrap();
        assert_eq!(app.store.secrets_at_rest().await.unwrap().plain, 1);
        app.restart().await;
        let test_key = app.store.sealing().current_id().unwrap().to_string();
        assert_eq!(sealed_under(&stored(&app, &id).await.0), Some(test_key.as_str()), "sealed at the start");
        // an answer kept for its replay, showing a new endpoint's secret
        let kept = [("x-idempotency-key", "kept-1")];
        let another = json!({"url": format!("{}/kept", receiver.url), "events": ["order.submitted"]});
        let first = app.call_as(Some(&app.key), "POST", "/webhook-endpoints", Some(another.clone()), &kept).await;
        assert!(first.status == 201 && first.body["secret"].is_string(), "{:#}", first.body);

        // rotation: the new key seals, the old one only opens
        let new = new_master_key();
        let rotating = keyed(&app, &new, &[TEST_MASTER_KEY]).await;
        let new_id = rotating.sealing().current_id().unwrap().to_string();
        let done = rotating.reseal_secrets().await.unwrap();
        assert_eq!(done.resealed, 4, "the two endpoints' secrets, the server's and the kept answer");
        assert_eq!(done.secrets.sealed_under.keys().collect::<Vec<_>>(), [&new_id]);
        assert_eq!(rotating.reseal_secrets().await.unwrap().resealed, 0, "nothing left to move");
        let endpoint = rotating.webhook_endpoint(app.org, id.parse().unwrap()).await.unwrap().unwrap();
        assert_eq!(endpoint.secret, secret);

        // a process without the new key reads no secret, and does not
        // start; nor does one without any key (it would write in plain)
        let old_only = keyed(&app, TEST_MASTER_KEY, &[]).await;
        let unread = old_only.webhook_endpoint(app.org, id.parse().unwrap()).await.unwrap().unwrap();
        assert_eq!(unread.secret, switchboard::store::UNREADABLE_SECRET);
        let start = switchboard::server::start(old_only, app.clock.clone(), "127.0.0.1:0".parse().unwrap(), app.settings.clone()).await;
        assert!(start.err().unwrap().to_string().contains(&format!("master key {new_id}, which is not configured")));
        let keyless = Store::connect(&app.url).await.unwrap();
        let configured = switchboard::config::Settings { token_secret: Some("t".repeat(32)), ..app.settings.clone() };
        let start = switchboard::server::start(keyless, app.clock.clone(), "127.0.0.1:0".parse().unwrap(), configured).await;
        assert!(start.err().unwrap().to_string().contains(&new_id));

        // back under the tests' key (the harness restarts with it), and
        // deliveries sign with the same secret throughout
        keyed(&app, TEST_MASTER_KEY, &[&new]).await.reseal_secrets().await.unwrap();
        app.restart().await;
        new_customer(&app, &app.key, "Acme AB").await;
        let r = receiver.next().await;
        assert_eq!(r.header("webhook-signature"), expected_signature(&secret, &r));
        let again = app.call_as(Some(&app.key), "POST", "/webhook-endpoints", Some(another), &kept).await;
        assert_eq!((again.status, &again.body), (201, &first.body), "the replay, resealed twice, shows the secret");
        rotating.close().await;
        app
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sealed_secret_moved_to_another_row_does_not_open_and_holds_up_no_other_endpoint() {
    each_backend_with(local_webhooks, |app| async move {
        let mut receiver = Receiver::start().await;
        let (theirs, secret) = register(&app, &receiver.url, json!(["customer.created"])).await;
        let (mine, _) = register(&app, &format!("{}/mine", receiver.url), json!(["customer.created"])).await;
        let (sealed, _, _) = stored(&app, &theirs).await;
        sqlx::query("UPDATE webhook_endpoints SET secret = $1 WHERE id = $2").bind(&sealed).bind(&mine).execute(app.store.pool()).await.unwrap();
        let moved = app.store.webhook_endpoint(app.org, mine.parse().unwrap()).await.unwrap().unwrap();
        assert_eq!(moved.secret, switchboard::store::UNREADABLE_SECRET, "not the other row's secret");
        assert_eq!(app.store.webhook_endpoint(app.org, theirs.parse().unwrap()).await.unwrap().unwrap().secret, secret);
        assert_eq!(app.call("GET", "/webhook-endpoints", None).await.status, 200, "the list shows no secret, and reads");

        // the event reaches the other endpoint signed; this one's attempt is
        // recorded as not sent, to be tried again
        new_customer(&app, &app.key, "Acme AB").await;
        let r = receiver.next().await;
        assert_eq!((r.path.as_str(), r.header("webhook-signature")), ("/hooks", expected_signature(&secret, &r).as_str()));
        crate::delivery::settle(&app).await;
        let errors: Vec<Option<String>> =
            sqlx::query_scalar("SELECT error FROM webhook_attempts WHERE endpoint_id = $1").bind(&mine).fetch_all(app.store.pool()).await.unwrap();
        assert_eq!(errors.len(), 1);
        assert!(errors[0].as_deref().unwrap_or_default().contains("the endpoint's secret is unreadable"), "{errors:?}");
        assert!(receiver.taken().is_empty(), "nothing was sent to it");
        app
    })
    .await;
}
