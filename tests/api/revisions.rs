//! Revision selection: header beats pin, pin never moves by itself, no key
//! means the oldest supported, retired revisions fall forward; each client
//! sends its own revision and reads enum values it does not know.

use crate::harness::*;
use chrono::Duration;
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn header_beats_pin_and_pins_are_kept() {
    each_backend(|app| async move {
        let auk_key = app.new_key(app.org, Some(AUK), false).await;
        let r = app.call_as(Some(&auk_key), "GET", "/customers", None, &[]).await;
        assert_eq!(r.revision.as_deref(), Some(AUK));
        let r = app.call_as(Some(&auk_key), "GET", "/customers", None, &[("api-revision", BULLFINCH)]).await;
        assert_eq!(r.revision.as_deref(), Some(BULLFINCH));
        let r = app.call("GET", "/customers", None).await;
        assert_eq!(r.revision.as_deref(), Some(BULLFINCH), "keys are pinned to the current revision by default");
        // no key: the oldest supported revision answers (here with a 401)
        let r = app.call_as(None, "GET", "/customers", None, &[]).await;
        assert_eq!(r.revision.as_deref(), Some(AUK));
        // only a full DATE.name is accepted
        for bad in ["2026-09-01", "bullfinch", "2026-09-02.bullfinch", "latest"] {
            app.call("GET", "/customers", None).await;
            app.call_as(Some(&app.key), "GET", "/customers", None, &[("api-revision", bad)]).await.assert_error(400, "unknown_api_revision");
        }
        app.call_as(None, "GET", "/health", None, &[("api-revision", "auk")]).await.assert_error(400, "unknown_api_revision");
        // an operator moves a pin; the server notices within the cache lifetime
        let id = app.key_id(&auk_key).await;
        switchboard::admin::key_pin(&app.store, id, BULLFINCH).await.unwrap();
        app.clock.advance(Duration::seconds(switchboard::keys::CACHE_TTL_SECONDS));
        let r = app.call_as(Some(&auk_key), "GET", "/customers", None, &[]).await;
        assert_eq!(r.revision.as_deref(), Some(BULLFINCH));
        app
    })
    .await;
}

/// A key in use is fetched again by the first request past half its cache
/// life, so a moved pin routes the requests after that one, before the
/// entry would have expired (and the version policy, which reads the cache
/// before every request, never has to block on the database).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_in_use_is_fetched_again_before_its_cache_entry_expires() {
    each_backend(|app| async move {
        let auk_key = app.new_key(app.org, Some(AUK), false).await;
        let revision = |r: Raw| r.revision;
        assert_eq!(revision(app.call_as(Some(&auk_key), "GET", "/customers", None, &[]).await).as_deref(), Some(AUK));
        let id = app.key_id(&auk_key).await;
        switchboard::admin::key_pin(&app.store, id, BULLFINCH).await.unwrap();
        let half = Duration::milliseconds(switchboard::keys::CACHE_TTL_SECONDS * 500);
        // (a second's margin: the test clock also runs at the machine's
        // pace, and a busy machine takes a while between requests)
        app.clock.advance(half - Duration::seconds(1));
        // younger than half its life: the cache answers, nothing is fetched
        assert_eq!(revision(app.call_as(Some(&auk_key), "GET", "/customers", None, &[]).await).as_deref(), Some(AUK));
        assert_eq!(revision(app.call_as(Some(&auk_key), "GET", "/customers", None, &[]).await).as_deref(), Some(AUK));
        app.clock.advance(Duration::milliseconds(1100));
        // this request is routed from the cache and fetches the key again...
        assert_eq!(revision(app.call_as(Some(&auk_key), "GET", "/customers", None, &[]).await).as_deref(), Some(AUK));
        // ...so the next one is routed by the moved pin
        assert_eq!(revision(app.call_as(Some(&auk_key), "GET", "/customers", None, &[]).await).as_deref(), Some(BULLFINCH));
        app
    })
    .await;
}

/// auk is supported until 2026-12-01 (SERVICE.md): through that day a pin,
/// the header and the webhook revision keep it; from the next day all three
/// fall forward to the oldest revision still supported, and auk's document
/// is still served for clients that read it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retired_revision_resolves_to_the_oldest_supported() {
    each_backend(|app| async move {
        let auk_key = app.new_key(app.org, Some(AUK), false).await;
        let webhook_revision = |app: &TestApp| {
            let (store, org, today) = (app.store.clone(), app.org, app.clock.now().date_naive());
            async move { switchboard::domain::webhooks::revision::of(&store, org, today).await.unwrap().name }
        };
        at(&app, "2026-12-01T23:59:00Z");
        let r = app.call_as(Some(&auk_key), "GET", "/customers", None, &[]).await;
        assert_eq!(r.revision.as_deref(), Some(AUK), "the last day of support still answers in auk");
        let r = app.call_as(None, "GET", "/health", None, &[]).await;
        assert_eq!(r.revision.as_deref(), Some(AUK));
        assert_eq!(webhook_revision(&app).await, AUK);

        at(&app, "2026-12-02T00:00:00Z");
        let r = app.call_as(Some(&auk_key), "GET", "/customers", None, &[]).await;
        assert_eq!(r.revision.as_deref(), Some(BULLFINCH), "the pin falls forward");
        let r = app.call_as(Some(&auk_key), "GET", "/customers", None, &[("api-revision", AUK)]).await;
        assert_eq!(r.revision.as_deref(), Some(BULLFINCH), "so does the header");
        let r = app.call_as(None, "GET", "/health", None, &[]).await;
        assert_eq!(r.revision.as_deref(), Some(BULLFINCH), "no key: the oldest supported is bullfinch");
        // bullfinch's shapes: calculate-price is gone
        app.call_as(Some(&auk_key), "POST", &format!("/orders/{}/calculate-price", uuid::Uuid::new_v4()), None, &[])
            .await
            .assert_error(404, "endpoint_removed");
        assert_eq!(webhook_revision(&app).await, BULLFINCH, "the webhook revision falls forward too");
        let set = switchboard::domain::webhooks::revision::set(&app.store, app.org, AUK, app.clock.now().date_naive()).await;
        assert!(set.is_err(), "a retired revision cannot be chosen for webhooks");
        // the key's pin itself never moved
        let keys = switchboard::admin::key_list(&app.store, app.org).await.unwrap();
        let id = app.key_id(&auk_key).await.to_string();
        let listed = keys.as_array().unwrap().iter().find(|k| k["apiKeyId"] == id.as_str()).unwrap();
        assert_eq!(listed["revision"], AUK);
        // auk's document is still published
        let name = format!("{AUK}.json").parse().unwrap();
        let doc = app.bullfinch_open().openapi_revision_view(&name).await.unwrap().into_inner();
        assert_eq!(serde_json::to_value(&doc).unwrap()["info"]["version"], AUK);
        app
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn documents_are_published() {
    each_backend(|app| async move {
        let client = app.bullfinch_open();
        let current = client.openapi_view().await.unwrap().into_inner();
        assert_eq!(serde_json::to_value(&current).unwrap()["info"]["version"], BULLFINCH);
        for rev in [AUK, BULLFINCH] {
            let name = format!("{rev}.json").parse().unwrap();
            let doc = client.openapi_revision_view(&name).await.unwrap().into_inner();
            let on_disk: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(format!("{}/spec/{rev}.json", env!("CARGO_MANIFEST_DIR"))).unwrap()).unwrap();
            assert_eq!(serde_json::to_value(&doc).unwrap(), on_disk);
        }
        app.call_as(None, "GET", "/openapi/2026-09-01.json", None, &[]).await.assert_error(404, "not_found");
        app
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_client_sends_its_own_revision() {
    each_backend(|app| async move {
        // without a key the oldest supported revision would answer, unless
        // the request names one: each client names its own
        let answered = |r: &bullfinch::ResponseValue<bullfinch::types::Health>| r.headers()["api-revision"].to_str().unwrap().to_string();
        assert_eq!(answered(&app.bullfinch_open().health_view().await.unwrap()), BULLFINCH);
        let auk = app.auk_builder().build().health_view().await.unwrap();
        assert_eq!(auk.headers()["api-revision"], AUK);
        // even against the key's pin
        let auk_key = app.new_key(app.org, Some(AUK), false).await;
        let seen = app.bullfinch_with(&auk_key).customer_list(None, None, None, None).await.unwrap();
        assert_eq!(seen.headers()["api-revision"], BULLFINCH);
        // another revision when asked for one, also one the server does not know
        let older = app.bullfinch_builder().revision(AUK).build();
        assert_eq!(answered(&older.health_view().await.unwrap()), AUK);
        let unknown = app.bullfinch_builder().revision("latest").build().health_view().await.unwrap_err();
        assert_refused(&unknown, 400, "unknown_api_revision");
        app
    })
    .await;
}

/// SERVICE.md convention 6: an answer may carry an enum value added after
/// the client was generated; both clients read it as `Unknown`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clients_read_enum_values_they_do_not_know() {
    each_backend(|app| async move {
        let created = app.call("POST", "/customers", Some(json!({"customerType": "BUSINESS", "name": "Acme AB", "contact": {}}))).await;
        let path = format!("/customers/{}", created.body["customerId"].as_str().unwrap());
        let mut answer = app.call("GET", &path, None).await.body;
        answer["customerType"] = json!("GOVERNMENT");
        let read: bullfinch::types::Customer = serde_json::from_value(answer).unwrap();
        assert_eq!(read.customer_type, bullfinch::types::CustomerType::Unknown);
        assert_eq!(read.name, "Acme AB");

        let mut answer = app.call_as(Some(&app.key), "GET", &path, None, &[("api-revision", AUK)]).await.body;
        answer["customerType"] = json!("GOVERNMENT");
        let read: auk::types::Customer = serde_json::from_value(answer).unwrap();
        assert_eq!(read.customer_type, auk::types::CustomerType::Unknown);
        // known values still read as themselves
        assert_eq!(serde_json::from_value::<auk::types::CustomerType>(json!("BUSINESS")).unwrap(), auk::types::CustomerType::Business);
        app
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_answer_is_kept_by_no_cache_and_read_only_as_json() {
    each_backend(|app| async move {
        let http = TestApp::http(Some(&app.key));
        let open = TestApp::http(None);
        let answers = [
            open.get(format!("{}/openapi.json", app.base)).send().await.unwrap(),
            http.get(format!("{}/customers", app.base)).send().await.unwrap(),
            open.get(format!("{}/customers", app.base)).send().await.unwrap(),
            http.post(format!("{}/webhook-endpoints", app.base)).json(&serde_json::json!({"url": "https://hooks.acme.example/x"})).send().await.unwrap(),
            open.post(format!("{}/auth/email/start", app.base)).json(&serde_json::json!({"email": "x@example.com"})).send().await.unwrap(),
            // no operation: answered before routing, not by dropshot's router
            http.get(format!("{}/customerz", app.base)).send().await.unwrap(),
            open.get(app.base.replace("/api/v2", "/health")).send().await.unwrap(),
            http.delete(format!("{}/customers", app.base)).send().await.unwrap(),
            http.get(format!("{}/customers/x/y/z", app.base)).send().await.unwrap(),
        ];
        for a in answers {
            assert_eq!(
                (a.headers()["cache-control"].to_str().unwrap(), a.headers()["x-content-type-options"].to_str().unwrap()),
                ("no-store", "nosniff"),
                "{}",
                a.url()
            );
        }
        // a path served with other methods says which
        let deleted = http.delete(format!("{}/customers", app.base)).send().await.unwrap();
        assert_eq!((deleted.status().as_u16(), deleted.headers()["allow"].to_str().unwrap()), (405, "GET, POST"));
        // the published document is served as the bytes on disk
        let served = open.get(format!("{}/openapi.json", app.base)).send().await.unwrap().text().await.unwrap();
        assert_eq!(served, std::fs::read_to_string(format!("{}/spec/{BULLFINCH}.json", env!("CARGO_MANIFEST_DIR"))).unwrap());
        app
    })
    .await;
}

/// A request for no operation (an unknown path, a method the path is not
/// served with, a path dropshot's router turns down itself) is answered
/// in the Error object with `Api-Revision`, as every other answer is.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_for_no_operation_get_the_error_object_and_the_revision() {
    each_backend(|app| async move {
        let http = TestApp::http(Some(&app.key));
        let cases = [
            (http.get(format!("{}/customerz", app.base)), 404, "not_found", BULLFINCH),
            (http.get(format!("{}/customerz", app.base)).header("api-revision", AUK), 404, "not_found", AUK),
            (http.delete(format!("{}/customers", app.base)), 405, "method_not_allowed", BULLFINCH),
            // no key: the oldest supported revision
            (TestApp::http(None).get(app.base.replace("/api/v2", "/nowhere")), 404, "not_found", AUK),
            // decoded by the router itself, not seen by the revision policy
            (http.get(format!("{}/customer%7A", app.base)), 404, "not_found", BULLFINCH),
        ];
        for (request, status, internal, revision) in cases {
            let r = request.send().await.unwrap();
            let url = r.url().to_string();
            assert_eq!(r.status().as_u16(), status, "{url}");
            assert_eq!(r.headers()["api-revision"], revision, "{url}");
            assert_eq!(r.headers()["content-type"], "application/json", "{url}");
            let body: serde_json::Value = r.json().await.unwrap();
            assert_eq!(body["internalCode"], internal, "{url}: {body}");
            assert_eq!(body["code"], internal, "{url}: {body}");
            assert!(body["message"].as_str().is_some_and(|m| !m.is_empty()) && body["traceId"].as_str().is_some_and(|t| !t.is_empty()), "{url}: {body}");
            assert!(body.get("request_id").is_none() && body.get("error_code").is_none(), "not dropshot's own shape: {body}");
        }
        app
    })
    .await;
}
