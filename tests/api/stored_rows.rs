//! Rows an earlier release wrote, read back by this one: the fixture
//! databases of `tests/fixtures/stored-2026-12-07` (the demo's data, a
//! failing webhook endpoint's deliveries and a stored idempotent answer,
//! written by the release of 2026-12-07) are loaded, migrated by today's
//! code and read through the API in every revision; the stored answer
//! replays byte for byte, and every stored event reads back and renders in
//! every revision (`TestApp::finish`). What changes how rows are kept
//! (the store's own shapes, PostgreSQL's types) must keep this passing.

use crate::databases::TestDatabase;
use crate::harness::{Backend, TestApp, backends, bullfinch, connect};
use serde::de::DeserializeOwned;
use std::sync::Arc;
use switchboard::clock::Clock;

const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/stored-2026-12-07");
/// Just after the fixture's last write: nothing of it has expired.
const FIXTURE_NOW: &str = "2026-12-07T15:09:30Z";

fn fixture(name: &str) -> String {
    std::fs::read_to_string(format!("{FIXTURE}/{name}")).unwrap_or_else(|e| panic!("{FIXTURE}/{name}: {e}"))
}

/// The fixture of `backend` loaded and migrated, served at `FIXTURE_NOW`
/// for its one organisation; its key.
async fn fixture_app(backend: Backend) -> (TestApp, String) {
    let kind = match backend {
        Backend::Sqlite => "sqlite",
        Backend::Postgres => "postgres",
    };
    let database = TestDatabase::loaded(backend, &fixture(&format!("{kind}.sql"))).await;
    let store = connect(&database.url).await;
    let orgs = sqlx::query_scalar::<_, String>("SELECT id FROM organisations").fetch_all(store.pool()).await.expect("the fixture's organisations");
    assert_eq!(orgs.len(), 1, "the fixture holds the demo organisation alone");
    let org = orgs[0].parse().expect("an organisation's id");
    let clock = Arc::new(Clock::starting_at(FIXTURE_NOW.parse().unwrap()));
    let app = TestApp::serve(backend, database, store, clock, org, TestApp::settings_of_tests()).await;
    (app, fixture(&format!("{kind}-key")).trim().to_string())
}

/// GET `path` in `revision` with `key`: 200, its items read as `T` of the
/// revision's client (every field the document requires present, every
/// value of its type), and how many there are.
async fn items<T: DeserializeOwned>(app: &TestApp, key: &str, revision: &str, path: &str) -> usize {
    let raw = app.call_as(Some(key), "GET", path, None, &[("Api-Revision", revision)]).await;
    assert_eq!(raw.status, 200, "GET {path} in {revision}: {:?}", raw.body);
    if let Err(e) = serde_json::from_value::<T>(raw.body.clone()) {
        panic!("GET {path} in {revision} does not read as {}: {e}\n{}", std::any::type_name::<T>(), raw.body);
    }
    raw.body["items"].as_array().map_or(0, Vec::len)
}

#[tokio::test]
async fn rows_stored_by_the_release_of_2026_12_07_read_back_in_every_revision() {
    use bullfinch::types as b;
    for backend in backends() {
        let (app, key) = fixture_app(backend).await;
        for revision in switchboard::wire::revision::Revision::all() {
            let r = revision.name;
            // (a retired revision is answered in the oldest supported one)
            assert_eq!(items::<b::CustomerList>(&app, &key, r, "/customers?limit=100").await, 6, "{backend:?}");
            assert_eq!(items::<b::UserList>(&app, &key, r, "/users?limit=100").await, 3);
            assert!(items::<b::ProductOfferingList>(&app, &key, r, "/product-offerings?limit=100").await > 0);
            assert!(items::<b::OrderList>(&app, &key, r, "/orders?limit=100").await > 0);
            assert_eq!(items::<b::SubscriptionList>(&app, &key, r, "/subscriptions?limit=100").await, 10);
            assert!(items::<b::SubscriptionUsageList>(&app, &key, r, "/subscriptions/usage?limit=100").await > 0);
            assert!(items::<b::LicenseList>(&app, &key, r, "/licenses?limit=100").await > 0);
            assert!(items::<b::InvoiceList>(&app, &key, r, "/invoices?limit=100").await > 0);
            assert!(items::<b::PaymentLinkList>(&app, &key, r, "/payment-links?limit=100").await > 0);
            assert!(items::<b::PaymentIntentList>(&app, &key, r, "/payment-intents?limit=100").await > 0);
            assert_eq!(items::<b::WebhookEndpointList>(&app, &key, r, "/webhook-endpoints").await, 1);
            assert!(items::<b::EventList>(&app, &key, r, "/events?limit=100").await >= 91);
        }
        // the idempotent POST stored then answers its first answer again
        let kind = if matches!(backend, Backend::Sqlite) { "sqlite" } else { "postgres" };
        let first = fixture(&format!("{kind}-idempotent-answer.json"));
        // (the bytes as first sent: the key's fingerprint is of them)
        let body = r#"{"customerType":"CONSUMER","name":"Fixture Idempotent","preferredLocale":"sv-SE","referenceId":"fixture-2","contact":{"email":"fixture2@example.com"}}"#;
        let replay = TestApp::http(Some(&key))
            .post(format!("{}/customers", app.base))
            .header("X-Idempotency-Key", "fixture-customer-2")
            .header("Content-Type", "application/json")
            .body(body)
            .send()
            .await
            .unwrap();
        assert_eq!(replay.status().as_u16(), 201);
        assert_eq!(replay.text().await.unwrap(), first, "{backend:?}: the replay is the first answer, byte for byte");
        app.finish().await;
    }
}
