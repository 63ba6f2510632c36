//! Webhook endpoints: registered, changed, disabled and enabled, rotated
//! and deleted through both revisions' clients; URLs refused unless the
//! server allows them; the organisation's key alone, 16 at most, and
//! walls between organisations.

use crate::harness::*;
use base64::Engine;
use serde_json::json;

/// A public receiver's URL: its name resolves only on the test internet
/// (`TestInternet`), where connections to its address are refused.
const PUBLIC_URL: &str = "https://hooks.acme.example/hooks";

fn allow_local(s: &mut switchboard::config::Settings) {
    s.webhooks.allow_private = true;
    s.webhooks.allow_http = true;
}

/// A secret as Standard Webhooks has it: `whsec_` and 32 bytes in base64.
fn assert_secret(secret: &str) {
    let key = secret.strip_prefix("whsec_").expect("whsec_ prefix");
    assert_eq!(base64::engine::general_purpose::STANDARD.decode(key).expect("base64").len(), 32, "{secret}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_endpoint_from_creation_to_deletion() {
    each_backend(|app| async move {
        let client = app.bullfinch();
        let req: bullfinch::types::CreateWebhookEndpointRequest =
            serde_json::from_value(json!({"url": PUBLIC_URL, "events": ["order.submitted", "customer.created"], "description": "provisioning"})).unwrap();
        let created = client.webhook_endpoint_create(None, &req).await.unwrap();
        assert_eq!(created.status().as_u16(), 201);
        let e = created.into_inner();
        let first_secret = e.secret.clone().expect("the secret is shown at creation");
        assert_secret(&first_secret);
        assert_eq!(e.url.as_str(), PUBLIC_URL);
        assert_eq!(e.status, bullfinch::types::WebhookEndpointStatus::Enabled);
        assert_eq!(json_of(&e.events), json!(["order.submitted", "customer.created"]));
        assert!(e.disabled_reason.is_none() && e.previous_secret_expires_at.is_none());

        // shown once: never again
        let viewed = client.webhook_endpoint_view(&e.webhook_endpoint_id).await.unwrap().into_inner();
        assert!(viewed.secret.is_none());
        assert_eq!(viewed.description.as_ref().map(|d| d.as_str()), Some("provisioning"));
        let listed = client.webhook_endpoint_list(None, None).await.unwrap().into_inner();
        assert_eq!(listed.items.len(), 1);
        assert!(listed.items[0].secret.is_none());

        // events default to all; fields left out keep their value
        let all = app.call("POST", "/webhook-endpoints", Some(json!({"url": PUBLIC_URL}))).await;
        assert_eq!(all.status, 201, "{:#}", all.body);
        assert_eq!(all.body["events"], json!(["*"]));
        let id = e.webhook_endpoint_id;
        let change: bullfinch::types::UpdateWebhookEndpointRequest = serde_json::from_value(json!({"events": ["*"]})).unwrap();
        let changed = client.webhook_endpoint_update(&id, &change).await.unwrap().into_inner();
        assert_eq!(json_of(&changed.events), json!(["*"]));
        assert_eq!(changed.description.as_ref().map(|d| d.as_str()), Some("provisioning"));

        // disabled by hand, enabled again; each move is allowed from each state
        let r = app.call("PUT", &format!("/webhook-endpoints/{id}"), Some(json!({"status": "DISABLED"}))).await;
        assert_eq!((&r.body["status"], &r.body["disabledReason"]), (&json!("DISABLED"), &json!("MANUAL")));
        let r = app.call("PUT", &format!("/webhook-endpoints/{id}"), Some(json!({"status": "DISABLED"}))).await;
        assert_eq!((r.status, &r.body["status"]), (200, &json!("DISABLED")));
        let r = app.call("PUT", &format!("/webhook-endpoints/{id}"), Some(json!({"status": "ENABLED"}))).await;
        assert_eq!(r.body["status"], "ENABLED");
        assert!(r.body.get("disabledReason").is_none(), "{:#}", r.body);

        // a rotation shows the new secret once; the old one signs for 24 hours more
        let before = app.clock.now();
        let rotated = client.webhook_endpoint_rotate_secret(&id, None).await.unwrap().into_inner();
        let after = app.clock.now();
        let second_secret = rotated.secret.expect("the new secret is shown");
        assert_secret(&second_secret);
        assert_ne!(second_secret, first_secret);
        let day = chrono::Duration::hours(24);
        let expires = rotated.previous_secret_expires_at.expect("the old secret's end is shown");
        assert!(before + day <= expires && expires <= after + day, "{expires}");
        let viewed = client.webhook_endpoint_view(&id).await.unwrap().into_inner();
        assert!(viewed.secret.is_none() && viewed.previous_secret_expires_at.is_some());

        // the older revision's client manages them too
        let auk = app.auk_with(&app.key);
        assert_eq!(auk.webhook_endpoint_list(None, None).await.unwrap().into_inner().items.len(), 2);

        assert_eq!(client.webhook_endpoint_delete(&id).await.unwrap().status().as_u16(), 204);
        app.call("GET", &format!("/webhook-endpoints/{id}"), None).await.assert_error(404, "webhook_endpoint_not_found");
        app.call("DELETE", &format!("/webhook-endpoints/{id}"), None).await.assert_error(404, "webhook_endpoint_not_found");
        app.call("POST", &format!("/webhook-endpoints/{id}/rotate-secret"), None).await.assert_error(404, "webhook_endpoint_not_found");
        app
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn urls_inside_the_network_and_plain_http_are_refused_by_default() {
    each_backend(|app| async move {
        for (url, code) in [
            ("https://127.0.0.1/hooks", "private_address"),
            ("https://10.1.2.3/hooks", "private_address"),
            ("https://169.254.169.254/latest/meta-data", "private_address"),
            ("https://[::1]/hooks", "private_address"),
            ("https://hooks.acme.example:8443/hooks", "port_not_allowed"),
            ("https://hooks.acme.example:22/hooks", "port_not_allowed"),
            ("https://localhost/hooks", "private_address"),
            ("http://hooks.acme.example/hooks", "insecure_url"),
            ("ftp://hooks.acme.example/hooks", "invalid_format"),
            ("https://", "invalid_format"),
        ] {
            let r = app.call("POST", "/webhook-endpoints", Some(json!({"url": url}))).await;
            r.assert_error(400, "validation_failed");
            assert_eq!(r.details(), [("url".to_string(), code.to_string())], "{url}");
            // what a name resolves to inside the server's network is not told
            if url.contains("localhost") {
                assert!(!r.body.to_string().contains("127.0.0.1"), "{:#}", r.body);
            }
        }
        // a change of URL is checked the same way, and a refused one changes nothing
        let e = app.call("POST", "/webhook-endpoints", Some(json!({"url": PUBLIC_URL}))).await;
        let id = e.body["webhookEndpointId"].as_str().unwrap();
        let r = app.call("PUT", &format!("/webhook-endpoints/{id}"), Some(json!({"url": "https://192.168.0.10/x", "description": "new"}))).await;
        r.assert_error(400, "validation_failed");
        let viewed = app.call("GET", &format!("/webhook-endpoints/{id}"), None).await;
        assert_eq!((&viewed.body["url"], viewed.body.get("description")), (&json!(PUBLIC_URL), None));
        app.call("POST", "/webhook-endpoints", Some(json!({"url": PUBLIC_URL, "events": ["order.shipped"]}))).await.assert_error(400, "validation_failed");
        app.call("POST", "/webhook-endpoints", Some(json!({"url": PUBLIC_URL, "events": []}))).await.assert_error(400, "validation_failed");
        // the event types of our own are selectable alone, as those SERVICE.md lists are
        let own = json!(["invoice.paid", "payment_intent.refunded", "report_run.succeeded", "subscription.esim_activation_code_viewed"]);
        let r = app.call("POST", "/webhook-endpoints", Some(json!({"url": PUBLIC_URL, "events": own}))).await;
        assert_eq!((r.status, &r.body["events"]), (201, &own), "{:#}", r.body);
        let r = app.call("POST", "/webhook-endpoints", Some(json!({"url": PUBLIC_URL, "events": ["*", "order.created", "*"]}))).await;
        r.assert_error(400, "validation_failed");
        assert_eq!(r.details(), [("events[2]".to_string(), "duplicate_item".to_string())]);
        app
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_allowing_private_addresses_takes_local_receivers() {
    each_backend_with(allow_local, |app| async move {
        for url in ["http://127.0.0.1:9/hooks", "http://localhost:3000/hooks", "https://10.0.0.5/hooks"] {
            let r = app.call("POST", "/webhook-endpoints", Some(json!({"url": url}))).await;
            assert_eq!(r.status, 201, "{url}: {:#}", r.body);
        }
        app
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_key_alone_sixteen_at_most_and_walls_between_organisations() {
    each_backend(|app| async move {
        let mut ids = vec![];
        for i in 0..16 {
            let r = app.call("POST", "/webhook-endpoints", Some(json!({"url": format!("{PUBLIC_URL}/{i}")}))).await;
            assert_eq!(r.status, 201, "{:#}", r.body);
            ids.push(r.body["webhookEndpointId"].as_str().unwrap().to_string());
        }
        app.call("POST", "/webhook-endpoints", Some(json!({"url": PUBLIC_URL}))).await.assert_error(409, "webhook_endpoint_limit_reached");
        let page = app.call("GET", "/webhook-endpoints?limit=10", None).await;
        assert_eq!(page.body["items"].as_array().unwrap().len(), 10);
        let next = page.body["pagination"]["nextCursor"].as_str().unwrap();
        let rest = app.call("GET", &format!("/webhook-endpoints?limit=10&cursor={next}"), None).await;
        assert_eq!(rest.body["items"].as_array().unwrap().len(), 6);
        assert_eq!(rest.body["items"][5]["webhookEndpointId"], ids[15].as_str());

        // an idempotent create is answered once; its replay is the first
        // answer byte for byte, secret and all, kept sealed meanwhile
        app.call("DELETE", &format!("/webhook-endpoints/{}", ids[0]), None).await;
        let client = app.bullfinch();
        let req: bullfinch::types::CreateWebhookEndpointRequest = serde_json::from_value(json!({"url": PUBLIC_URL})).unwrap();
        let key = "wh-1".parse().unwrap();
        let first = client.webhook_endpoint_create(Some(&key), &req).await.unwrap().into_inner();
        let again = client.webhook_endpoint_create(Some(&key), &req).await.unwrap();
        assert_eq!(again.headers()["idempotent-replayed"], "true");
        let (first, again) = (json_of(&first), json_of(&again.into_inner()));
        assert!(first["secret"].as_str().unwrap().starts_with("whsec_"), "{first:#}");
        assert_eq!(first, again);
        let id = again["webhookEndpointId"].as_str().unwrap().parse().unwrap();
        let rotate = "wh-2".parse().unwrap();
        let rotated = client.webhook_endpoint_rotate_secret(&id, Some(&rotate)).await.unwrap().into_inner().secret;
        assert!(rotated.is_some());
        assert_eq!(
            client.webhook_endpoint_rotate_secret(&id, Some(&rotate)).await.unwrap().into_inner().secret,
            rotated,
            "the replay shows the rotated secret"
        );
        let kept: Vec<(Option<String>, Option<String>)> =
            sqlx::query_as("SELECT body, sealed_body FROM idempotency_keys").fetch_all(app.store.pool()).await.unwrap();
        assert!(
            !kept.is_empty() && kept.iter().flat_map(|(b, s)| [b, s]).flatten().all(|text| !text.contains("whsec_")),
            "a stored answer keeps a secret in plain"
        );
        app.call("POST", "/webhook-endpoints", Some(json!({"url": PUBLIC_URL}))).await.assert_error(409, "webhook_endpoint_limit_reached");

        // a read-only key reads, and changes nothing
        let read_only = app.new_key(app.org, None, true).await;
        assert_eq!(app.call_as(Some(&read_only), "GET", "/webhook-endpoints", None, &[]).await.status, 200);
        app.call_as(Some(&read_only), "POST", "/webhook-endpoints", Some(json!({"url": PUBLIC_URL})), &[]).await.assert_error(403, "read_only_api_key");

        // a user's token never manages webhooks, not even an ADMIN's
        let c = app.call("POST", "/customers", Some(json!({"customerType": "BUSINESS", "name": "Acme", "contact": {}}))).await;
        let customer = c.body["customerId"].as_str().unwrap();
        app.call("POST", "/users", Some(json!({"name": "Anna", "email": "anna@acme.example", "customerId": customer, "role": "ADMIN"}))).await;
        let token = app.login("anna@acme.example", Some(&app.key)).await;
        let auth = format!("Bearer {token}");
        let bearer = [("Authorization", auth.as_str())];
        app.call_as(Some(&app.key), "GET", "/webhook-endpoints", None, &bearer).await.assert_error(403, "insufficient_role");
        app.call_as(Some(&app.key), "POST", "/webhook-endpoints", Some(json!({"url": PUBLIC_URL})), &bearer).await.assert_error(403, "insufficient_role");
        app.call_as(Some(&app.key), "POST", &format!("/webhook-endpoints/{}/rotate-secret", ids[1]), None, &bearer)
            .await
            .assert_error(403, "insufficient_role");

        // another organisation sees none of them and changes none
        let (_, other) = app.other_org().await;
        let listed = app.call_as(Some(&other), "GET", "/webhook-endpoints", None, &[]).await;
        assert_eq!(listed.body["items"], json!([]));
        let path = format!("/webhook-endpoints/{}", ids[1]);
        app.call_as(Some(&other), "GET", &path, None, &[]).await.assert_error(404, "webhook_endpoint_not_found");
        app.call_as(Some(&other), "PUT", &path, Some(json!({"status": "DISABLED"})), &[]).await.assert_error(404, "webhook_endpoint_not_found");
        app.call_as(Some(&other), "POST", &format!("{path}/rotate-secret"), None, &[]).await.assert_error(404, "webhook_endpoint_not_found");
        app.call_as(Some(&other), "DELETE", &path, None, &[]).await.assert_error(404, "webhook_endpoint_not_found");
        // and its own count starts at 0
        assert_eq!(app.call_as(Some(&other), "POST", "/webhook-endpoints", Some(json!({"url": PUBLIC_URL})), &[]).await.status, 201);
        let ours = app.call("GET", &path, None).await;
        assert_eq!(ours.body["status"], "ENABLED");
        app
    })
    .await;
}

/// The headers of a delivery of `body` signed at `timestamp` under `secrets`.
fn delivery_headers(secrets: &[&str], id: &str, timestamp: i64, body: &[u8]) -> reqwest::header::HeaderMap {
    use switchboard::domain::webhooks::signature;
    let mut h = reqwest::header::HeaderMap::new();
    h.insert("webhook-id", id.parse().unwrap());
    h.insert("webhook-timestamp", timestamp.to_string().parse().unwrap());
    h.insert("webhook-signature", signature::header(secrets, id, timestamp, body).unwrap().parse().unwrap());
    h
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_sdk_verifies_what_the_server_signs() {
    use std::time::Duration;
    use switchboard::domain::webhooks::secret;
    each_backend(|app| async move {
        app.call("POST", "/customers", Some(json!({"customerType": "CONSUMER", "name": "Maria", "contact": {}}))).await;
        let event = app.call("GET", "/events", None).await.body["items"][0].clone();
        let id = event["eventId"].as_str().unwrap();
        let body = serde_json::to_vec(&event).unwrap();
        let (old, new) = (secret::mint(), secret::mint());
        let now = chrono::Utc::now().timestamp();
        let five_minutes = Duration::from_secs(300);

        let headers = delivery_headers(&[&new], id, now, &body);
        let verified = bullfinch::webhooks::verify(&new, &headers, &body, five_minutes).unwrap();
        assert_eq!((verified.event_id.to_string(), verified.type_.as_str()), (id.to_string(), "customer.created"));
        assert_eq!(auk::webhooks::verify(&new, &headers, &body, five_minutes).unwrap().event_id.to_string(), id);

        // during a rotation either secret verifies
        let rotating = delivery_headers(&[&new, &old], id, now, &body);
        for s in [&new, &old] {
            assert!(bullfinch::webhooks::verify(s, &rotating, &body, five_minutes).is_ok());
        }

        // what is refused
        use bullfinch::webhooks::{VerifyError, verify, verify_at};
        assert!(matches!(verify(&old, &headers, &body, five_minutes), Err(VerifyError::InvalidSignature)));
        let mut tampered = body.clone();
        tampered[body.len() - 2] ^= 1;
        assert!(matches!(verify(&new, &headers, &tampered, five_minutes), Err(VerifyError::InvalidSignature)));
        let stale = delivery_headers(&[&new], id, now - 301, &body);
        assert!(matches!(verify(&new, &stale, &body, five_minutes), Err(VerifyError::TimestampOutOfTolerance)));
        let early = delivery_headers(&[&new], id, now + 301, &body);
        assert!(matches!(verify(&new, &early, &body, five_minutes), Err(VerifyError::TimestampOutOfTolerance)));
        let mut unsigned = headers.clone();
        unsigned.remove("webhook-signature");
        assert!(matches!(verify(&new, &unsigned, &body, five_minutes), Err(VerifyError::MissingHeader("webhook-signature"))));
        // the Standard Webhooks reference vector: the signature holds, the body is no event
        let mut reference = reqwest::header::HeaderMap::new();
        reference.insert("webhook-id", "msg_p5jXN8AQM9LWM0D4loKWxJek".parse().unwrap());
        reference.insert("webhook-timestamp", "1614265330".parse().unwrap());
        reference.insert("webhook-signature", "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=".parse().unwrap());
        let verdict = verify_at("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", &reference, br#"{"test": 2432232314}"#, five_minutes, 1614265330);
        assert!(matches!(verdict, Err(VerifyError::InvalidBody(_))), "{verdict:?}");
        app
    })
    .await;
}

fn port_8443(s: &mut switchboard::config::Settings) {
    s.webhooks.allow_ports = vec![8443];
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_port_other_than_443_only_when_the_operator_lists_it() {
    each_backend_with(port_8443, |app| async move {
        let r = app.call("POST", "/webhook-endpoints", Some(json!({"url": "https://hooks.acme.example:8443/hooks"}))).await;
        assert_eq!(r.status, 201, "{:#}", r.body);
        let r = app.call("POST", "/webhook-endpoints", Some(json!({"url": "https://hooks.acme.example:8080/hooks"}))).await;
        assert_eq!(r.details(), [("url".to_string(), "port_not_allowed".to_string())]);
        app
    })
    .await;
}
