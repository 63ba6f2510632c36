//! A real server on 127.0.0.1:0 over SQLite (always) and PostgreSQL (when
//! SWITCHBOARD_TEST_POSTGRES holds a URL), driven through the generated clients.

use serde_json::Value;
use std::future::Future;
use std::sync::Arc;
use switchboard::clock::Clock;
use switchboard::config::Settings;
use switchboard::server::{self, Running};
use switchboard::store::Store;
use uuid::Uuid;

pub use crate::test_internet::{TEST_PUBLIC, TestInternet};
pub use switchboard_client_auk as auk;
pub use switchboard_client_bullfinch as bullfinch;

pub const AUK: &str = "2026-08-21.auk";
pub const BULLFINCH: &str = "2026-09-01.bullfinch";

/// Where every test server's clock starts: a day on which both revisions
/// are supported (auk until 2026-12-01), so the suite's verdict is the same
/// on any date the machine has. Retirement is tested by moving the clock
/// past it (`revisions.rs`).
pub const TEST_START: &str = "2026-11-02T09:00:00Z";
/// The master key every test server seals its secrets at rest with (the
/// base64 of "switchboard tests' master key!!!").
pub const TEST_MASTER_KEY: &str = "c3dpdGNoYm9hcmQgdGVzdHMnIG1hc3RlciBrZXkhISE=";

/// A store over `url` as a test server uses it: sealing with `TEST_MASTER_KEY`.
pub async fn connect(url: &str) -> Store {
    let sealing = switchboard::sealing::Sealing::new(Some(TEST_MASTER_KEY), &[]).expect("the tests' master key");
    Store::connect(url).await.expect("store").sealed_with(Arc::new(sealing))
}

pub struct TestApp {
    pub base: String,
    /// where the server's webhook receivers are (see `TestInternet`)
    pub internet: Arc<TestInternet>,
    pub store: Store,
    pub clock: Arc<Clock>,
    pub org: Uuid,
    /// a full-access key pinned to the current revision
    pub key: String,
    running: Option<Running>,
    /// what its server was started with (its test internet included)
    pub settings: Settings,
    /// the database URL, for a second instance over the same database
    pub url: String,
    pub backend: Backend,
    /// removed when the test ends, also when it fails
    database: Option<crate::databases::TestDatabase>,
}

#[derive(Debug, Clone, Copy)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// Changes a test server's settings from the defaults.
pub type Configure = fn(&mut Settings);

fn defaults(_: &mut Settings) {}

/// Runs `test` once on SQLite and once on PostgreSQL when configured.
pub async fn each_backend<F, Fut>(test: F)
where
    F: Fn(TestApp) -> Fut,
    Fut: Future<Output = TestApp>,
{
    each_backend_with(defaults, test).await
}

/// `each_backend`, with the server's settings changed by `configure`.
pub async fn each_backend_with<F, Fut>(configure: Configure, test: F)
where
    F: Fn(TestApp) -> Fut,
    Fut: Future<Output = TestApp>,
{
    for backend in backends() {
        let app = TestApp::start(backend, configure).await;
        test(app).await.finish().await;
    }
}

/// The databases a test runs on: SQLite, and PostgreSQL when
/// SWITCHBOARD_TEST_POSTGRES holds a URL (else the run says it skipped it).
pub fn backends() -> Vec<Backend> {
    if std::env::var("SWITCHBOARD_TEST_POSTGRES").is_ok_and(|u| !u.is_empty()) {
        vec![Backend::Sqlite, Backend::Postgres]
    } else {
        say_postgres_skipped();
        vec![Backend::Sqlite]
    }
}

/// Says once per run, in the normal output (past the test harness's
/// capture, which would show it only for a failing test), that the
/// PostgreSQL half of every test was skipped.
fn say_postgres_skipped() {
    static SAID: std::sync::Once = std::sync::Once::new();
    SAID.call_once(|| {
        use std::io::Write;
        let line = "\nPostgreSQL SKIPPED: SWITCHBOARD_TEST_POSTGRES is not set, so every test of this binary runs on SQLite only\n";
        let _ = std::io::stderr().write_all(line.as_bytes());
    });
}

impl TestApp {
    pub async fn start(backend: Backend, configure: Configure) -> TestApp {
        let mut settings = TestApp::settings_of_tests();
        configure(&mut settings);
        TestApp::start_with_settings(backend, settings).await
    }

    /// A test server's settings unless it changes them: every request of a
    /// test comes from 127.0.0.1 and many come within a second of the
    /// clock: limits only where a test sets them.
    pub fn settings_of_tests() -> Settings {
        Settings {
            per_key_per_second: 100_000,
            login_per_address_per_minute: 10_000,
            login_per_email_per_minute: 10_000,
            auth_failures_per_minute: 10_000,
            // a test's end cuts its jobs off (a hanging receiver's attempts)
            shutdown_grace_seconds: 0,
            ..Settings::default()
        }
    }

    /// A test server with `settings`, whose webhooks reach the test's own
    /// `TestInternet` (whatever `settings` said).
    pub async fn start_with_settings(backend: Backend, settings: Settings) -> TestApp {
        let database = crate::databases::TestDatabase::new(backend).await;
        let store = connect(&database.url).await;
        let clock = Arc::new(Clock::starting_at(TEST_START.parse().unwrap()));
        let org = store.create_organisation("Test Org", false, clock.now()).await.unwrap();
        let mut app = TestApp::serve(backend, database, store, clock, org, settings).await;
        app.key = app.new_key(app.org, Some(BULLFINCH), false).await;
        app
    }

    /// A test server over `database` as it is (`store` connected to it,
    /// migrated), acting for `org`, with no key of its own yet.
    pub async fn serve(
        backend: Backend,
        database: crate::databases::TestDatabase,
        store: Store,
        clock: Arc<Clock>,
        org: Uuid,
        mut settings: Settings,
    ) -> TestApp {
        crate::coverage::arm();
        let internet = Arc::new(TestInternet::default());
        settings.webhooks.internet = switchboard::webhook_reach::Internet(internet.clone());
        // report files in a directory of the test's own, removed by `finish`
        settings.files.data_dir = std::env::temp_dir().join(format!("switchboard-test-files-{}", Uuid::new_v4()));
        let url = database.url.clone();
        let running = server::start(store.clone(), clock.clone(), "127.0.0.1:0".parse().unwrap(), settings.clone()).await.unwrap();
        let base = format!("http://{}/api/v2", running.local_addr());
        TestApp { base, internet, store, clock, org, key: String::new(), running: Some(running), settings, url, backend, database: Some(database) }
    }

    /// Another server over this app's database (its own pool, key cache and
    /// rate limits), as a second instance behind a load balancer would be.
    /// Close it before the app finishes.
    pub async fn second_instance(&self) -> (Running, String) {
        let store = connect(&self.url).await;
        let running = server::start(store, self.clock.clone(), "127.0.0.1:0".parse().unwrap(), self.settings.clone()).await.unwrap();
        let base = format!("http://{}/api/v2", running.local_addr());
        (running, base)
    }

    /// Stops the server as a crash would (its jobs cut off mid-item, their
    /// claims left to run out) and starts it again over the same database
    /// and clock, on a new port.
    pub async fn restart(&mut self) {
        let running = self.running.take().expect("running");
        running.crash().await;
        self.store = connect(&self.url).await;
        let running = server::start(self.store.clone(), self.clock.clone(), "127.0.0.1:0".parse().unwrap(), self.settings.clone()).await.unwrap();
        self.base = format!("http://{}/api/v2", running.local_addr());
        self.running = Some(running);
    }

    /// The running server (its metrics' address, ...).
    pub fn server(&self) -> &Running {
        self.running.as_ref().expect("running")
    }

    /// The running server's sandbox network (its usage feed).
    pub fn network(&self) -> &switchboard::network::Sandbox {
        &self.running.as_ref().expect("running").network
    }

    /// Turns dunning off for this app's organisation: a test of renewals
    /// or of the clock that leaves its invoices unpaid sees no suspension.
    pub async fn without_dunning(&self) {
        assert!(self.store.set_dunning_days(self.org, 0, 0).await.unwrap());
    }

    /// The sandbox network, to hand to tasks of their own.
    pub fn running_network(&self) -> std::sync::Arc<switchboard::network::Sandbox> {
        self.running.as_ref().expect("running").network.clone()
    }

    /// Runs the jobs due now (by the test clock) on this app's server; the
    /// number run.
    pub async fn run_jobs(&self) -> usize {
        self.running.as_ref().expect("running").jobs.run_due().await.unwrap()
    }

    /// Changes each time one of the server's workers finishes a round.
    pub fn job_rounds(&self) -> tokio::sync::watch::Receiver<u64> {
        self.running.as_ref().expect("running").jobs.rounds()
    }

    /// A new key for `org`.
    pub async fn new_key(&self, org: Uuid, revision: Option<&str>, read_only: bool) -> String {
        let v = switchboard::admin::key_create(&self.store, &self.clock, org, revision, read_only).await.unwrap();
        v["apiKey"].as_str().unwrap().to_string()
    }

    /// The id of the key whose secret is `secret` (found by its listed prefix).
    pub async fn key_id(&self, secret: &str) -> Uuid {
        let keys = switchboard::admin::key_list(&self.store, self.org).await.unwrap();
        let key = keys.as_array().unwrap().iter().find(|k| secret.starts_with(k["prefix"].as_str().unwrap())).unwrap();
        key["apiKeyId"].as_str().unwrap().parse().unwrap()
    }

    /// Imports catalog file text (YAML) into `org`; panics naming each
    /// problem if the file is invalid.
    pub async fn import_catalog(&self, org: Uuid, yaml: &str) -> switchboard::domain::catalog::import::Report {
        use switchboard::domain::catalog::{file, import};
        let parsed = file::parse(yaml, false).unwrap_or_else(|p| panic!("catalog file: {p}"));
        match import::import(&self.store, org, parsed).await {
            Ok(report) => report,
            Err(import::ImportError::Invalid(p)) => panic!("catalog file: {p:?}"),
            Err(e) => panic!("import: {e}"),
        }
    }

    /// The demo catalog (`serve --demo`), without its assignments of the
    /// demo's own customers: every category and product type.
    pub async fn demo_catalog(&self, org: Uuid) {
        let text = switchboard::demo::CATALOG.split("\nassignments:").next().unwrap();
        self.import_catalog(org, text).await;
    }

    /// Makes this app's organisation a new sandbox one, with a key of its
    /// own (`sbk_test_...`): `app.org` and `app.key` name it from here on.
    pub async fn become_sandbox(&mut self) {
        let made = switchboard::admin::org_create(&self.store, &self.clock, "Sandbox Org", true).await.unwrap();
        self.org = made["organisationId"].as_str().unwrap().parse().unwrap();
        self.key = self.new_key(self.org, Some(BULLFINCH), false).await;
        assert!(self.key.starts_with("sbk_test_"), "a sandbox key says so: {}", self.key);
    }

    /// Stops the server's workers: nothing runs in the background until
    /// `run_jobs` (an advance then stays ADVANCING until the test runs it).
    pub fn stop_jobs(&self) {
        self.running.as_ref().expect("running").jobs.abort();
    }

    /// Another organisation with its own key.
    pub async fn other_org(&self) -> (Uuid, String) {
        let org = self.store.create_organisation("Other Org", false, self.clock.now()).await.unwrap();
        (org, self.new_key(org, None, false).await)
    }

    pub fn http(key: Option<&str>) -> reqwest::Client {
        Self::http_as(key, None)
    }

    /// A client sending `key` and, when given, `Authorization: Bearer token`.
    pub fn http_as(key: Option<&str>, token: Option<&str>) -> reqwest::Client {
        let mut headers = reqwest::header::HeaderMap::new();
        if let Some(k) = key {
            headers.insert("x-api-key", k.parse().unwrap());
        }
        if let Some(t) = token {
            headers.insert("authorization", format!("Bearer {t}").parse().unwrap());
        }
        reqwest::Client::builder().default_headers(headers).build().unwrap()
    }

    /// A client acting as the user of `token`, with `key`.
    pub fn bullfinch_as(&self, key: &str, token: &str) -> bullfinch::Client {
        self.bullfinch_builder().api_key(key).bearer_token(token).build()
    }

    /// A client without credentials (for the open operations).
    pub fn bullfinch_open(&self) -> bullfinch::Client {
        self.bullfinch_builder().build()
    }

    /// A bullfinch client of this server, as yet without credentials; its
    /// calls count towards the suite's coverage (`coverage.rs`), as those
    /// of every client the harness builds.
    pub fn bullfinch_builder(&self) -> bullfinch::ClientBuilder {
        bullfinch_client(&self.base)
    }

    /// An auk client of this server, as yet without credentials.
    pub fn auk_builder(&self) -> auk::ClientBuilder {
        auk::Client::builder(&self.base).observer(|c| crate::coverage::record(c.operation_id, c.status))
    }

    /// The code of the newest login mail to `email` in the outbox.
    pub async fn mailed_code(&self, email: &str) -> String {
        let mails = switchboard::admin::mail_list(&self.store, Some(email)).await.unwrap();
        let last = mails.as_array().unwrap().last().unwrap_or_else(|| panic!("no mail to {email}"));
        let subject = last["subject"].as_str().unwrap();
        subject.rsplit(' ').next().unwrap().to_string()
    }

    /// Signs `email` in through the outbox (with `key` as the login's
    /// scope, when given): the access token.
    pub async fn login(&self, email: &str, key: Option<&str>) -> String {
        self.login_answer(email, key).await.access_token
    }

    /// Signs `email` in as `login` does: the whole answer, with its refresh token.
    pub async fn login_answer(&self, email: &str, key: Option<&str>) -> bullfinch::types::AccessToken {
        let client = match key {
            Some(key) => self.bullfinch_with(key),
            None => self.bullfinch_open(),
        };
        let start = client.auth_email_start(None, &bullfinch::types::EmailLoginStartRequest { email: email.parse().unwrap() }).await.unwrap().into_inner();
        let code = self.mailed_code(email).await;
        let body =
            bullfinch::types::EmailLoginVerifyRequest { email: email.parse().unwrap(), nonce: start.nonce.parse().unwrap(), code: code.parse().unwrap() };
        client.auth_email_verify(None, &body).await.unwrap().into_inner()
    }

    pub fn bullfinch(&self) -> bullfinch::Client {
        self.bullfinch_with(&self.key)
    }

    pub fn bullfinch_with(&self, key: &str) -> bullfinch::Client {
        self.bullfinch_builder().api_key(key).build()
    }

    pub fn auk_with(&self, key: &str) -> auk::Client {
        self.auk_builder().api_key(key).build()
    }

    /// A raw request with this app's key (for inputs the typed clients refuse to build).
    pub async fn call(&self, method: &str, path: &str, body: Option<Value>) -> Raw {
        self.call_as(Some(&self.key), method, path, body, &[]).await
    }

    pub async fn call_as(&self, key: Option<&str>, method: &str, path: &str, body: Option<Value>, headers: &[(&str, &str)]) -> Raw {
        let client = Self::http(key);
        let mut req = client.request(method.parse().unwrap(), format!("{}{path}", self.base));
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        if let Some(b) = body {
            req = req.json(&b);
        }
        let resp = req.send().await.unwrap();
        let status = resp.status().as_u16();
        let revision = resp.headers().get("api-revision").map(|v| v.to_str().unwrap().to_string());
        let text = resp.text().await.unwrap();
        let body = serde_json::from_str(&text).unwrap_or(Value::String(text));
        Raw { status, revision, body }
    }

    /// Holds back every write to customers until the returned connection
    /// rolls back (or drops): SQLite's write lock, or PostgreSQL's lock of
    /// the table. What the server writes meanwhile waits (at most SQLite's
    /// busy timeout, 5 s); what it only reads goes on.
    pub async fn hold_customer_writes(&self) -> sqlx::AnyConnection {
        sqlx::any::install_default_drivers();
        let mut conn = <sqlx::AnyConnection as sqlx::Connection>::connect(&self.url).await.expect("database");
        let hold: &[&str] = match self.backend {
            Backend::Sqlite => &["BEGIN IMMEDIATE"],
            Backend::Postgres => &["BEGIN", "LOCK TABLE customers IN EXCLUSIVE MODE"],
        };
        for sql in hold {
            sqlx::query(sqlx::AssertSqlSafe(*sql)).execute(&mut conn).await.unwrap();
        }
        conn
    }

    /// What is stored for `org`: every row of every table with an `org_id`,
    /// as text, in one query (built once per backend), leaving out what the
    /// server's background work changes on its own (`UNSETTLED`). Cheap
    /// enough to take after each request of a sweep; equal fingerprints
    /// mean nothing of `org`'s changed.
    pub async fn org_fingerprint(&self, org: Uuid) -> Vec<(String, String)> {
        use sqlx::Row;
        static SQL: [tokio::sync::OnceCell<String>; 2] = [tokio::sync::OnceCell::const_new(), tokio::sync::OnceCell::const_new()];
        let cell = &SQL[matches!(self.backend, Backend::Postgres) as usize];
        let sql = cell.get_or_init(|| fingerprint_sql(self.store.pool(), self.backend)).await;
        let rows = sqlx::query(sqlx::AssertSqlSafe(sql.as_str())).bind(org.to_string()).fetch_all(self.store.pool()).await.unwrap();
        rows.iter().map(|r| (r.get(0), r.get(1))).collect()
    }

    pub async fn finish(mut self) {
        self.assert_events_published().await;
        if let Some(r) = self.running.take() {
            r.close().await.unwrap();
        }
        // (after close: a delivery in flight until then is judged too)
        self.internet.assert_nothing_escaped();
        if let Some(database) = self.database.take() {
            database.remove().await;
        }
        let _ = std::fs::remove_dir_all(&self.settings.files.data_dir);
    }
}

impl TestApp {
    /// Every event a test made the server record is one the documents
    /// publish (`x-webhooks`), in every revision: nothing is sent that the
    /// contract does not describe. Each reads back as its typed `Event` and
    /// renders in every revision.
    async fn assert_events_published(&self) {
        use sqlx::Row;
        // every event of every organisation the test made, read over a
        // connection of its own (a test may have closed the server's pool)
        sqlx::any::install_default_drivers();
        let mut conn = <sqlx::AnyConnection as sqlx::Connection>::connect(&self.url).await.expect("the test's database");
        let rows = sqlx::query("SELECT event_type, data FROM events").fetch_all(&mut conn).await.expect("the test's events");
        let recorded: Vec<(String, Value)> =
            rows.iter().map(|r| (r.get::<String, _>(0), serde_json::from_str(&r.get::<String, _>(1)).expect("an event's data is JSON"))).collect();
        // (parsed once per run: they are large)
        static DOCUMENTS: std::sync::OnceLock<Vec<Value>> = std::sync::OnceLock::new();
        let documents = DOCUMENTS.get_or_init(|| switchboard::wire::DOCUMENTS.iter().map(|d| serde_json::from_str(d).unwrap()).collect());
        for doc in documents {
            let revision = doc["info"]["version"].as_str().unwrap();
            for (t, data) in &recorded {
                assert!(doc["x-webhooks"].get(t).is_some(), "event {t} is recorded but not published in {revision}");
                let event = switchboard::events::Event::parse(t, data.clone()).unwrap_or_else(|e| panic!("{t}: {e}"));
                event.render(revision).unwrap_or_else(|e| panic!("{t} in {revision}: {e}"));
            }
        }
    }
}

/// A response read without a typed client.
#[derive(Debug)]
pub struct Raw {
    pub status: u16,
    pub revision: Option<String>,
    pub body: Value,
}

impl Raw {
    /// Asserts an Error object with this status and internalCode.
    pub fn assert_error(&self, status: u16, internal_code: &str) -> &Self {
        assert_eq!(self.status, status, "{:#}", self.body);
        assert_eq!(self.body["internalCode"], internal_code, "{:#}", self.body);
        assert!(self.body["message"].is_string(), "{:#}", self.body);
        assert!(self.body["code"].is_string(), "{:#}", self.body);
        let trace = self.body["traceId"].as_str().unwrap_or_else(|| panic!("no traceId: {:#}", self.body));
        // the request's span: the trace id's last 16 digits (src/telemetry/ids.rs)
        assert_eq!(self.body["spanId"].as_str(), trace.get(16..), "{:#}", self.body);
        assert!(self.revision.is_some(), "error without Api-Revision");
        self
    }

    /// The (property, code) pairs of the details.
    pub fn details(&self) -> Vec<(String, String)> {
        let mut d: Vec<(String, String)> = self.body["details"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|d| (d["property"].as_str().unwrap_or("").to_string(), d["code"].as_str().unwrap().to_string()))
            .collect();
        d.sort();
        d
    }
}

/// A typed client answer as JSON, to assert on its wire fields.
/// Moves the test clock to `rfc3339` (later than now).
pub fn at(app: &TestApp, rfc3339: &str) {
    let target: chrono::DateTime<chrono::Utc> = rfc3339.parse().unwrap();
    app.clock.advance(target - app.clock.now());
}

pub fn json_of<T: serde::Serialize>(t: &T) -> Value {
    serde_json::to_value(t).unwrap()
}

/// A bullfinch client of the server at `base` whose calls count towards
/// the suite's coverage (`coverage.rs`).
pub fn bullfinch_client(base: &str) -> bullfinch::ClientBuilder {
    bullfinch::Client::builder(base).observer(|c| crate::coverage::record(c.operation_id, c.status))
}

/// A typed client error is the Error object of `status` with `internal_code`.
pub fn assert_refused(e: &bullfinch::Error<bullfinch::types::Error>, status: u16, internal_code: &str) {
    assert_eq!(status_of(e), status, "{e:?}");
    match e {
        bullfinch::Error::ErrorResponse(body) => assert_eq!(body.internal_code.as_deref(), Some(internal_code), "{e:?}"),
        other => panic!("not an Error object: {other:?}"),
    }
}

/// The status of a typed client error.
pub fn status_of<E: std::fmt::Debug>(e: &bullfinch::Error<E>) -> u16 {
    e.status().map(|s| s.as_u16()).unwrap_or_else(|| panic!("no status: {e:?}"))
}

/// Tables and columns the server's background work writes by itself: a
/// webhook's dispatch (an event's place in the log's order) and delivery
/// attempts, and due jobs. The tenancy
/// sweep's fingerprint leaves them out, so that another organisation's
/// deliveries going on beside it are no change of its data.
const UNSETTLED: [(&str, &str); 5] =
    [("jobs", "*"), ("webhook_deliveries", "*"), ("events", "dispatched_at"), ("events", "log_batch"), ("webhook_endpoints", "failing_since")];

/// The fingerprint query of `TestApp::org_fingerprint`, over the schema as
/// it is: each table with an `org_id`, its rows as text, one result row per
/// table.
async fn fingerprint_sql(pool: &sqlx::AnyPool, backend: Backend) -> String {
    use sqlx::Row;
    let columns = match backend {
        Backend::Sqlite => "SELECT m.name, c.name FROM sqlite_master m JOIN pragma_table_info(m.name) c WHERE m.type = 'table' ORDER BY m.name, c.cid",
        Backend::Postgres => {
            "SELECT table_name::text, column_name::text FROM information_schema.columns WHERE table_schema = 'public' ORDER BY table_name, ordinal_position"
        }
    };
    let mut tables: std::collections::BTreeMap<String, Vec<String>> = Default::default();
    for row in sqlx::query(columns).fetch_all(pool).await.unwrap() {
        tables.entry(row.get(0)).or_default().push(row.get(1));
    }
    let settled = |table: &str, column: &str| !UNSETTLED.iter().any(|(t, c)| *t == table && (*c == "*" || *c == column));
    let each: Vec<String> = tables
        .iter()
        .filter(|(_, columns)| columns.iter().any(|c| c == "org_id"))
        .filter(|(table, _)| settled(table, ""))
        .map(|(table, columns)| {
            let row: Vec<String> = columns
                .iter()
                .filter(|c| settled(table, c))
                .map(|c| match backend {
                    Backend::Sqlite => format!("quote(\"{c}\")"),
                    Backend::Postgres => format!("quote_nullable(\"{c}\"::text)"),
                })
                .collect();
            format!(
                "SELECT '{table}', COALESCE((SELECT string_agg(r, ';' ORDER BY r) FROM (SELECT {} AS r FROM {table} WHERE org_id = $1) o), '')",
                row.join(" || ',' || ")
            )
        })
        .collect();
    assert!(!each.is_empty(), "no table has an org_id");
    each.join(" UNION ALL ")
}
