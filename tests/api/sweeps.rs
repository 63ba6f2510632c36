//! Endpoint sweeps: every operation of every revision, read from the
//! documents in spec/ when the test runs, so an operation added there is
//! swept without anyone listing it here. The sweeps: coverage (some test
//! calls it through a generated client), unauthorized (401 without
//! credentials), tenancy (another organisation's ids are as missing), wire
//! (Api-Revision and application/json on every answer), idempotency
//! (every operation taking `X-Idempotency-Key` replays a retry), header
//! text (a header value that is not text is a 400, on every header the
//! server reads) and events (an operation records only the events its
//! `x-events` lists, and a refused request none).

use crate::harness::*;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use uuid::Uuid;

pub mod fixtures;
pub use fixtures::Fixtures;
use fixtures::{existing_path, succeeding};

/// One operation of one revision document.
#[derive(Debug, Clone)]
pub struct Operation {
    revision: String,
    id: String,
    method: String,
    /// the template, e.g. `/customers/{customerId}`
    path: String,
    /// `security: []`: needs no credentials
    open: bool,
    /// (in, name) of every parameter
    params: Vec<(String, String)>,
    /// the request body example, when the operation takes a body
    body: Option<Value>,
    /// documented response statuses
    statuses: Vec<String>,
    /// the media types each documented status answers in
    media: std::collections::BTreeMap<String, Vec<String>>,
    /// the event types it records (`x-events`)
    events: Vec<String>,
}

impl Operation {
    fn label(&self) -> String {
        format!("{} {} {} ({})", self.revision, self.method, self.path, self.id)
    }

    fn path_params(&self) -> impl Iterator<Item = &str> {
        self.params.iter().filter(|(at, _)| at == "path").map(|(_, n)| n.as_str())
    }

    /// The path with each parameter given by `value`.
    fn fill(&self, value: impl Fn(&str) -> String) -> String {
        self.path_params().fold(self.path.clone(), |p, name| p.replace(&format!("{{{name}}}"), &value(name)))
    }
}

fn spec_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("spec")
}

/// Every operation of every document in spec/.
fn operations() -> Vec<Operation> {
    let mut files: Vec<PathBuf> =
        std::fs::read_dir(spec_dir()).unwrap().map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|x| x == "json")).collect();
    files.sort();
    let mut out = vec![];
    for file in files {
        let doc: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        let resolve = |v: &Value| -> Value {
            match v["$ref"].as_str().and_then(|r| r.strip_prefix("#/")) {
                Some(r) => doc.pointer(&format!("/{r}")).cloned().unwrap(),
                None => v.clone(),
            }
        };
        let revision = doc["info"]["version"].as_str().unwrap().to_string();
        for (path, item) in doc["paths"].as_object().unwrap() {
            for (method, op) in item.as_object().unwrap() {
                let params = op["parameters"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|p| {
                        let p = resolve(p);
                        (p["in"].as_str().unwrap().to_string(), p["name"].as_str().unwrap().to_string())
                    })
                    .collect();
                out.push(Operation {
                    revision: revision.clone(),
                    id: op["operationId"].as_str().unwrap().to_string(),
                    method: method.to_uppercase(),
                    path: path.clone(),
                    open: op["security"].as_array().is_some_and(|s| s.is_empty()),
                    params,
                    body: op.get("requestBody").map(|b| b["content"]["application/json"]["example"].clone()),
                    statuses: op["responses"].as_object().unwrap().keys().cloned().collect(),
                    media: op["responses"]
                        .as_object()
                        .unwrap()
                        .iter()
                        .map(|(status, r)| (status.clone(), resolve(r)["content"].as_object().into_iter().flatten().map(|(m, _)| m.clone()).collect()))
                        .collect(),
                    events: op["x-events"].as_array().into_iter().flatten().map(|e| e.as_str().unwrap().to_string()).collect(),
                });
                for e in &out.last().unwrap().events {
                    assert!(doc["x-webhooks"].get(e).is_some(), "{revision} {}: x-events names {e}, which x-webhooks does not publish", op["operationId"]);
                }
            }
        }
    }
    assert!(!out.is_empty(), "no operations found in {}", spec_dir().display());
    out
}

/// How a sweep request authenticates.
#[derive(Clone, Copy)]
enum Auth<'a> {
    Nothing,
    Key(&'a str),
    BearerAlone,
    /// a valid key with a bearer token this server never issued
    KeyAndForeignBearer(&'a str),
}

/// A response, with the headers the wire sweep checks.
struct Answer {
    status: u16,
    revision: Option<String>,
    content_type: Option<String>,
    body: Value,
    empty: bool,
    replayed: bool,
    /// the body as sent
    bytes: Vec<u8>,
    /// every header but those of the one transfer (see `TRANSPORT`)
    headers: Vec<(String, String)>,
}

/// Headers of one transfer, not of the answer: a replay has its own.
const TRANSPORT: [&str; 4] = ["date", "content-length", "x-request-id", "idempotent-replayed"];

async fn send(app: &TestApp, op: &Operation, auth: Auth<'_>, path: &str, body: Option<&Value>) -> Answer {
    send_with(app, op, auth, path, body, &[]).await
}

async fn send_with(app: &TestApp, op: &Operation, auth: Auth<'_>, path: &str, body: Option<&Value>, headers: &[(&str, &str)]) -> Answer {
    let client = reqwest::Client::new();
    let mut req = client.request(op.method.parse().unwrap(), format!("{}{path}", app.base)).header("api-revision", &op.revision);
    req = match auth {
        Auth::Nothing => req,
        Auth::Key(k) => req.header("x-api-key", k),
        // a well-formed JWT, but no API key beside it
        Auth::BearerAlone => req.header("authorization", "Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJzd2VlcCJ9.c2lnbmF0dXJlLW5vdC1jaGVja2Vk"),
        Auth::KeyAndForeignBearer(k) => {
            req.header("x-api-key", k).header("authorization", "Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJzd2VlcCJ9.c2lnbmF0dXJlLW5vdC1jaGVja2Vk")
        }
    };
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    if let Some(b) = body {
        req = req.json(b);
    }
    let resp = req.send().await.unwrap();
    let header = |name: &str| resp.headers().get(name).map(|v| v.to_str().unwrap().to_string());
    let (status, revision, content_type) = (resp.status().as_u16(), header("api-revision"), header("content-type"));
    let replayed = header("idempotent-replayed").is_some();
    let mut answer_headers: Vec<(String, String)> = resp
        .headers()
        .iter()
        .filter(|(name, _)| !TRANSPORT.contains(&name.as_str()))
        .map(|(name, value)| (name.to_string(), value.to_str().unwrap_or("(not text)").to_string()))
        .collect();
    answer_headers.sort();
    let bytes = resp.bytes().await.unwrap().to_vec();
    let body = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    let answer = Answer { status, revision, content_type, body, empty: bytes.is_empty(), replayed, bytes, headers: answer_headers };
    assert_wire(op, &answer);
    answer
}

/// The wire sweep, applied to every answer of every sweep: the revision that
/// answered, JSON labelled as JSON (another media type where the status
/// documents only that one: the reference page's HTML), and a status the
/// document lists.
fn assert_wire(op: &Operation, a: &Answer) {
    let label = op.label();
    assert_eq!(a.revision.as_deref(), Some(op.revision.as_str()), "{label}: Api-Revision of a {} answer", a.status);
    if !a.empty {
        let ct = a.content_type.as_deref().unwrap_or("");
        let other = op.media.get(&a.status.to_string()).filter(|m| !m.is_empty() && !m.iter().any(|m| m == "application/json"));
        if let Some(media) = other {
            assert!(media.iter().any(|m| ct.starts_with(m.as_str())), "{label}: content-type {ct:?} on a {} answer documented as {media:?}", a.status);
        } else {
            assert!(ct.starts_with("application/json"), "{label}: content-type {ct:?} on a {} answer", a.status);
            assert!(!a.body.is_null(), "{label}: a {} answer whose body is not JSON", a.status);
        }
    }
    assert!(op.statuses.contains(&a.status.to_string()), "{label}: answered {}, which its document does not list", a.status);
}

fn assert_error_object(op: &Operation, a: &Answer, status: u16, why: &str) {
    let label = op.label();
    assert_eq!(a.status, status, "{label} {why}: {:#}", a.body);
    for field in ["message", "code", "internalCode", "traceId"] {
        assert!(a.body[field].is_string(), "{label} {why}: Error object without {field}: {:#}", a.body);
    }
}

/// The id of every operation of every document (`coverage.rs` checks
/// that each was called).
pub fn operation_ids() -> std::collections::BTreeSet<String> {
    operations().into_iter().map(|op| op.id).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unauthorized_every_operation_needs_credentials() {
    each_backend(|app| async move {
        for op in operations().iter().filter(|op| !op.open) {
            let path = op.fill(|_| Uuid::new_v4().to_string());
            let cases = [
                (Auth::Nothing, "without a key"),
                (Auth::Key("sbk_not-a-key-of-anyone"), "with a wrong key"),
                (Auth::BearerAlone, "with a bearer token alone"),
                (Auth::KeyAndForeignBearer(&app.key), "with a key and a bearer token not issued here"),
            ];
            for (auth, why) in cases {
                let a = send(&app, op, auth, &path, op.body.as_ref()).await;
                assert_error_object(op, &a, 401, why);
            }
        }
        app
    })
    .await;
}

/// Where an operation takes an id: its path parameters, query parameters
/// named like a fixture, and top-level body fields named like one.
fn id_slots<'o>(op: &'o Operation, fixtures: &Fixtures) -> (Vec<&'o str>, Vec<&'o str>, Vec<String>) {
    let path: Vec<&str> = op.path_params().collect();
    let query: Vec<&str> = op.params.iter().filter(|(at, n)| at == "query" && fixtures.ids.contains_key(n.as_str())).map(|(_, n)| n.as_str()).collect();
    let body: Vec<String> =
        op.body.as_ref().and_then(Value::as_object).map(|b| b.keys().filter(|k| fixtures.ids.contains_key(k.as_str())).cloned().collect()).unwrap_or_default();
    (path, query, body)
}

/// What `key`'s organisation can read: every list and every view of its
/// fixtures, in the current revision.
async fn snapshot(app: &TestApp, ops: &[Operation], key: &str, fixtures: &Fixtures) -> Vec<Value> {
    let mut seen = vec![];
    for op in ops.iter().filter(|op| op.method == "GET" && !op.open && op.revision == BULLFINCH) {
        let path = op.fill(|name| fixtures.get(op, name, false));
        let mut a = send(app, op, Auth::Key(key), &path, None).await;
        // (an error answer's traceId and spanId are new each time, and so
        // is a report run's signed download URL)
        if let Some(body) = a.body.as_object_mut() {
            for fresh in ["traceId", "spanId", "downloadUrl", "downloadExpiresAt"] {
                body.remove(fresh);
            }
        }
        seen.push(json!({"op": op.id, "status": a.status, "body": a.body}));
    }
    seen
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tenancy_another_organisations_ids_are_missing_and_unchanged() {
    each_backend(|app| async move {
        let ops = operations();
        let (their_org, their_key) = app.other_org().await;
        let theirs = Fixtures::create(&app, their_org, &their_key, "theirs").await;
        let _ours = Fixtures::create(&app, app.org, &app.key, "ours").await;
        // their webhook deliveries (to no receiver) would be retried while
        // the sweep runs: nothing in the background moves from here on
        app.stop_jobs();
        // what they can read, at start and end; what is stored for them,
        // after each request
        let before = snapshot(&app, &ops, &their_key, &theirs).await;
        let stored = app.org_fingerprint(their_org).await;
        assert!(stored.iter().any(|(_, rows)| !rows.is_empty()));
        let mut swept = 0;
        for op in ops.iter().filter(|op| !op.open) {
            let (path_slots, query_slots, body_slots) = id_slots(op, &theirs);
            if path_slots.is_empty() && query_slots.is_empty() && body_slots.is_empty() {
                continue;
            }
            for by_reference in [false, true] {
                // the same request twice: once naming their objects, once
                // naming objects that exist nowhere
                let request = |value: &dyn Fn(&str) -> String| {
                    let mut path = op.fill(value);
                    let query: Vec<String> = query_slots.iter().map(|n| format!("{n}={}", value(n))).collect();
                    if !query.is_empty() {
                        path = format!("{path}?{}", query.join("&"));
                    }
                    let mut body = op.body.clone();
                    for field in &body_slots {
                        body.as_mut().unwrap()[field.as_str()] = json!(value(field));
                    }
                    (path, body)
                };
                let (their_path, their_body) = request(&|n| theirs.get(op, n, by_reference));
                // (an id that has no references is missing as a new id)
                // (a SIM is named by an ICCID, which a uuid is not)
                let missing_id = |n: &str| match n {
                    "iccid" => crate::sims::iccid(999_999),
                    n if by_reference && theirs.has_reference(n) => "rid_nowhere".into(),
                    _ => Uuid::new_v4().to_string(),
                };
                let (missing_path, missing_body) = request(&missing_id);
                let answer = send(&app, op, Auth::Key(&app.key), &their_path, their_body.as_ref()).await;
                let missing = send(&app, op, Auth::Key(&app.key), &missing_path, missing_body.as_ref()).await;
                let label = format!("{} naming their {}", op.label(), if by_reference { "rid_" } else { "id" });
                assert_error_object(op, &missing, 404, "naming a missing object");
                assert_eq!(
                    (answer.status, &answer.body["internalCode"], &answer.body["details"]),
                    (missing.status, &missing.body["internalCode"], &missing.body["details"]),
                    "{label}: answers unlike a missing object"
                );
                let now = app.org_fingerprint(their_org).await;
                let changed: Vec<&str> = now.iter().zip(&stored).filter(|(now, then)| now != then).map(|(now, _)| now.0.as_str()).collect();
                assert!(changed.is_empty(), "{label}: changed their data in {changed:?}");
                swept += 1;
            }
        }
        assert!(swept > 0, "no operation takes an id");
        assert_eq!(snapshot(&app, &ops, &their_key, &theirs).await, before, "their data as they read it changed");
        // and the fingerprint does see a change: one of their own
        let renamed = json!({"name": "Theirs renamed"});
        let r = app.call_as(Some(&their_key), "PUT", &format!("/customers/{}", theirs.ids["customerId"].0), Some(renamed), &[]).await;
        assert_eq!(r.status, 200, "{:#}", r.body);
        assert_ne!(app.org_fingerprint(their_org).await, stored, "a change the fingerprint does not show");
        app
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wire_every_operation_answers_with_its_revision_and_json() {
    each_backend(|mut app| async move {
        // a sandbox organisation, so its clock's operations succeed too
        app.become_sandbox().await;
        let ours = Fixtures::create(&app, app.org, &app.key, "ours").await;
        let (mut n, mut failed) = (0, vec![]);
        for op in operations() {
            let (path, body) = succeeding(&app, &ours, &op, &mut n).await;
            let a = send(&app, &op, Auth::Key(&app.key), &path, body.as_ref()).await;
            if !(200..300).contains(&a.status) {
                failed.push(format!("{}: {} {}", op.label(), a.status, a.body));
            }
        }
        assert!(failed.is_empty(), "requests built to succeed that did not:\n{}", failed.join("\n"));
        app
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn events_every_operation_records_only_what_its_document_lists() {
    each_backend(|mut app| async move {
        // a sandbox organisation, so its clock's operations succeed too
        app.become_sandbox().await;
        let ours = Fixtures::create(&app, app.org, &app.key, "ours").await;
        let recorded = || async { app.store.event_types(app.org).await.unwrap().into_iter().map(|(t, _)| t).collect::<Vec<_>>() };
        let (mut emitting, mut orders) = (vec![], 0);
        for op in operations() {
            let (path, body) = succeeding(&app, &ours, &op, &mut orders).await;
            let before = recorded().await.len();
            let a = send(&app, &op, Auth::Key(&app.key), &path, body.as_ref()).await;
            // a payment session's charge and a refund are sent by their
            // jobs: what those record is the operation's, and waited for
            if (200..300).contains(&a.status) {
                fixtures::settled(&app, &op, &a.body).await;
            }
            let new = recorded().await.split_off(before);
            let label = op.label();
            assert!((200..300).contains(&a.status), "{label}: a request built to succeed answered {} {:#}", a.status, a.body);
            for t in &new {
                assert!(op.events.contains(t), "{label}: recorded {t}, which its x-events {:?} does not list", op.events);
            }
            if !new.is_empty() {
                emitting.push(op.id.clone());
            }
        }
        // and each operation that lists events recorded some here, so the
        // check above was made on it
        for op in operations().iter().filter(|op| !op.events.is_empty()) {
            assert!(emitting.contains(&op.id), "{}: lists x-events but recorded none in this sweep; give it a request that succeeds", op.label());
        }
        app
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idempotency_every_marked_operation_replays_a_retry() {
    each_backend(|mut app| async move {
        // a sandbox organisation, so its clock's operations succeed too
        app.become_sandbox().await;
        let ours = Fixtures::create(&app, app.org, &app.key, "ours").await;
        let marked: Vec<Operation> =
            operations().into_iter().filter(|op| op.params.iter().any(|(at, n)| at == "header" && n.eq_ignore_ascii_case("x-idempotency-key"))).collect();
        assert!(!marked.is_empty(), "no operation takes X-Idempotency-Key");
        let mut n = 0;
        let (mut checked, mut with_secrets) = (0, vec![]);
        for op in &marked {
            let (path, mut body) = succeeding(&app, &ours, op, &mut n).await;
            // the moves that issue a new eSIM profile, whose answers show its code
            match op.id.as_str() {
                "subscription_activate" => body = Some(json!({})),
                "subscription_change_sim" => body = Some(json!({"simType": "ESIM"})),
                _ => {}
            }
            let key = format!("sweep-{}-{}", op.revision, op.id);
            let headers = [("x-idempotency-key", key.as_str())];
            let first = send_with(&app, op, Auth::Key(&app.key), &path, body.as_ref(), &headers).await;
            let again = send_with(&app, op, Auth::Key(&app.key), &path, body.as_ref(), &headers).await;
            let label = op.label();
            // a replay of a success: a stored refusal would prove less
            assert!((200..300).contains(&first.status), "{label}: a request built to succeed answered {} {:#}", first.status, first.body);
            assert!(!first.replayed, "{label}: the first answer claims to be a replay");
            assert!(again.replayed, "{label}: a retry with the same key was not replayed ({} {:#})", again.status, again.body);
            // the first answer byte for byte: status, headers and body
            assert_eq!(again.status, first.status, "{label}: the replay's status differs");
            assert_eq!(again.headers, first.headers, "{label}: the replay's headers differ");
            assert!(
                again.bytes == first.bytes,
                "{label}: the replay's body differs:\n{}\n{}",
                String::from_utf8_lossy(&first.bytes),
                String::from_utf8_lossy(&again.bytes)
            );
            // a secret shown once (a webhook endpoint's signing secret, an
            // eSIM's activation code) is in the replay too, sealed meanwhile
            if let Some(field) = SHOWN_ONCE.iter().find(|f| first.body.get(**f).is_some_and(|v| !v.is_null())) {
                assert_eq!(again.body.get(*field), first.body.get(*field), "{label}: the replay lacks {field}");
                with_secrets.push(label.clone());
            }
            checked += 1;
        }
        // activate, change-sim, a webhook endpoint's create and rotate-secret, on each revision
        assert!(with_secrets.len() >= 8, "the sweep met too few answers with a secret: {with_secrets:?}");
        eprintln!("replay sweep: {checked} operations replayed identically, {} of them with a secret", with_secrets.len());
        app
    })
    .await;
}

/// The fields of an answer that show a secret once.
const SHOWN_ONCE: [&str; 2] = ["secret", "esimActivationCode"];

/// Headers every operation reads, whether or not its document lists them.
const ALWAYS_READ: [&str; 3] = ["X-Api-Key", "Authorization", "Api-Revision"];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn header_text_values_that_are_not_text_are_400_on_every_header() {
    each_backend(|app| async move {
        let ours = Fixtures::create(&app, app.org, &app.key, "ours").await;
        let latin1 = reqwest::header::HeaderValue::from_bytes(b"caf\xe9-\xff").unwrap();
        let client = reqwest::Client::new();
        for op in operations() {
            let path = existing_path(&op, &ours);
            let declared = op.params.iter().filter(|(at, _)| at == "header").map(|(_, n)| n.as_str());
            let mut names: Vec<&str> = ALWAYS_READ.into_iter().chain(declared).collect();
            names.sort_by_key(|n| n.to_ascii_lowercase());
            names.dedup_by_key(|n| n.to_ascii_lowercase());
            for name in names {
                let mut req = client.request(op.method.parse().unwrap(), format!("{}{path}", app.base));
                if !name.eq_ignore_ascii_case("api-revision") {
                    req = req.header("api-revision", &op.revision);
                }
                if !name.eq_ignore_ascii_case("x-api-key") {
                    req = req.header("x-api-key", &app.key);
                }
                req = req.header(name, latin1.clone());
                if let Some(b) = &op.body {
                    req = req.json(b);
                }
                let resp = req.send().await.unwrap();
                let status = resp.status().as_u16();
                assert!(resp.headers().contains_key("api-revision"), "{}: no Api-Revision", op.label());
                let body: Value = resp.json().await.unwrap();
                let label = format!("{} with a {name} that is not text", op.label());
                assert_eq!(status, 400, "{label}: {body:#}");
                assert!(op.statuses.contains(&"400".to_string()), "{label}: 400 is not documented");
                let expected = if name.eq_ignore_ascii_case("api-revision") { "unknown_api_revision" } else { "invalid_header" };
                assert_eq!(body["internalCode"], expected, "{label}: {body:#}");
                if expected == "invalid_header" {
                    assert_eq!(body["details"][0]["property"].as_str().map(str::to_ascii_lowercase), Some(name.to_ascii_lowercase()), "{label}");
                }
            }
        }
        app
    })
    .await;
}
