//! Revision selection: header beats pin, pin never moves by itself, no key
//! means the oldest supported, retired revisions fall forward.

use crate::harness::*;
use chrono::Duration;

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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retired_revision_resolves_to_the_oldest_supported() {
    each_backend(|app| async move {
        let auk_key = app.new_key(app.org, Some(AUK), false).await;
        let now = app.clock.now();
        let retired = chrono::NaiveDate::from_ymd_opt(2026, 12, 2).unwrap().and_hms_opt(0, 0, 0).unwrap().and_utc();
        if now < retired {
            app.clock.advance(retired - now);
        }
        let r = app.call_as(Some(&auk_key), "GET", "/customers", None, &[]).await;
        assert_eq!(r.revision.as_deref(), Some(BULLFINCH));
        let r = app.call_as(Some(&auk_key), "GET", "/customers", None, &[("api-revision", AUK)]).await;
        assert_eq!(r.revision.as_deref(), Some(BULLFINCH));
        let r = app.call_as(None, "GET", "/health", None, &[]).await;
        assert_eq!(r.revision.as_deref(), Some(BULLFINCH));
        app
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn documents_are_published() {
    each_backend(|app| async move {
        let client = bullfinch::Client::new_with_client(&app.base, TestApp::http(None));
        let current = client.openapi_view(None).await.unwrap().into_inner();
        assert_eq!(serde_json::to_value(&current).unwrap()["info"]["version"], BULLFINCH);
        for rev in [AUK, BULLFINCH] {
            let name = format!("{rev}.json").parse().unwrap();
            let doc = client.openapi_revision_view(&name, None).await.unwrap().into_inner();
            let on_disk: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(format!("{}/spec/{rev}.json", env!("CARGO_MANIFEST_DIR"))).unwrap()).unwrap();
            assert_eq!(serde_json::to_value(&doc).unwrap(), on_disk);
        }
        app.call_as(None, "GET", "/openapi/2026-09-01.json", None, &[]).await.assert_error(404, "not_found");
        let typed = bullfinch::Client::new_with_client(&app.base, TestApp::http(None)).health_view(None).await.unwrap();
        assert_eq!(typed.headers()["api-revision"], AUK);
        app
    })
    .await;
}
