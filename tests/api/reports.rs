//! Report runs on both databases: every report's file holds what the
//! API's own reads show (CSV and JSON Lines), a run's downloadUrl follows
//! rule 6, a download URL expires and refuses tampering, a run that cannot
//! write its file FAILED, runs and files go after 30 days by the
//! organisation's clock, and reports stay within their organisation and
//! the key alone.

use crate::harness::*;
use crate::sweeps::Fixtures;
use serde_json::{Value, json};

/// The run `body` asks for, once the worker has finished it.
async fn ran(app: &TestApp, body: Value) -> Value {
    let r = app.call("POST", "/reports", Some(body)).await;
    assert_eq!(r.status, 201, "{:#}", r.body);
    assert_eq!((r.body["status"].as_str(), &r.body["downloadUrl"], &r.body["completedAt"]), (Some("QUEUED"), &Value::Null, &Value::Null), "rule 6");
    app.run_jobs().await;
    let id = r.body["reportRunId"].as_str().unwrap();
    app.call("GET", &format!("/reports/{id}"), None).await.body
}

async fn fetch(url: &str) -> (u16, String) {
    let r = reqwest::get(url).await.unwrap();
    (r.status().as_u16(), r.text().await.unwrap())
}

/// A JSON Lines file's rows.
fn lines(text: &str) -> Vec<Value> {
    text.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

/// Every item of a list operation, through its pages.
async fn all(app: &TestApp, path: &str) -> Vec<Value> {
    let (mut items, mut cursor) = (vec![], None::<String>);
    loop {
        let sep = if path.contains('?') { '&' } else { '?' };
        let page = match &cursor {
            Some(c) => format!("{path}{sep}limit=100&cursor={c}"),
            None => format!("{path}{sep}limit=100"),
        };
        let r = app.call("GET", &page, None).await;
        assert_eq!(r.status, 200, "{page}: {:#}", r.body);
        items.extend(r.body["items"].as_array().unwrap().iter().cloned());
        match r.body["pagination"]["nextCursor"].as_str() {
            Some(c) => cursor = Some(c.to_string()),
            None => return items,
        }
    }
}

/// A CSV file's rows (RFC 4180: quoted fields may hold commas, quotes and
/// line ends), the header first.
fn csv(text: &str) -> Vec<Vec<String>> {
    let (mut rows, mut row, mut field, mut quoted) = (vec![], vec![], String::new(), false);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                chars.next();
                field.push('"');
            }
            (true, '"') => quoted = false,
            (true, c) => field.push(c),
            (false, '"') => quoted = true,
            (false, ',') => row.push(std::mem::take(&mut field)),
            (false, '\r') => assert_eq!(chars.next(), Some('\n'), "CRLF line ends"),
            (false, '\n') => panic!("a bare LF ends a line"),
            (false, c) => field.push(c),
        }
        if !quoted && c == '\r' {
            row.push(std::mem::take(&mut field));
            rows.push(std::mem::take(&mut row));
        }
    }
    assert!(row.is_empty() && field.is_empty(), "the file ends with a line end");
    rows
}

/// `report`'s rows equal `expected` (API items) column by column, each
/// column a field of the item (`pointer`).
fn same_rows(report: &str, rows: &[Value], expected: &[Value], columns: &[(&str, &str)]) {
    assert_eq!(rows.len(), expected.len(), "{report}: rows against the API's items");
    assert!(!rows.is_empty(), "{report}: the test's data has some");
    for (row, item) in rows.iter().zip(expected) {
        for (name, pointer) in columns {
            assert_eq!(&row[*name], item.pointer(pointer).unwrap_or(&Value::Null), "{report}.{name}: {row:#} against {item:#}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_report_holds_what_the_api_reads() {
    each_backend(|mut app| async move {
        app.become_sandbox().await;
        let ours = Fixtures::create(&app, app.org, &app.key, "ours").await;
        // usage of the fixtures' subscription, in its period
        let subscriptions = all(&app, "/subscriptions").await;
        let subscription = subscriptions.iter().find(|s| s["iccid"].is_string() && s["status"] == "ACTIVATED").expect("an active subscription").clone();
        crate::usage::report(&app, &subscription, "r1", switchboard::store::UsageKind::Data, 5 * 1024, (0, None)).await;
        app.stop_jobs();
        app.run_jobs().await;
        let usage = crate::usage::usage(&app, &subscription, None).await;
        let cases: [(&str, Vec<Value>, &[(&str, &str)]); 6] = [
            (
                "subscriptions",
                all(&app, "/subscriptions").await,
                &[
                    ("subscriptionId", "/subscriptionId"),
                    ("customerId", "/customer/customerId"),
                    ("customerName", "/customer/name"),
                    ("productOfferingId", "/productOffering/productOfferingId"),
                    ("status", "/status"),
                    ("msisdn", "/msisdn"),
                    ("simType", "/simType"),
                    ("createdAt", "/createdAt"),
                    ("activatedAt", "/activatedAt"),
                    ("renewsOn", "/renewsOn"),
                ],
            ),
            (
                "usage",
                vec![usage],
                &[
                    ("subscriptionId", "/subscriptionId"),
                    ("periodStart", "/periodStart"),
                    ("periodEnd", "/periodEnd"),
                    ("dataUsedMb", "/data/used"),
                    ("dataIncludedMb", "/data/included"),
                    ("smsUsed", "/sms/used"),
                ],
            ),
            (
                "orders",
                all(&app, "/orders").await,
                &[
                    ("orderId", "/orderId"),
                    ("customerId", "/customer/customerId"),
                    ("status", "/status"),
                    ("lineItemCount", "/lineItemCount"),
                    ("totalMinor", "/pricing/totalMinor"),
                    ("createdAt", "/createdAt"),
                ],
            ),
            (
                "payment_intents",
                all(&app, "/payment-intents").await,
                &[("paymentIntentId", "/paymentIntentId"), ("status", "/status"), ("amountMinor", "/amountMinor"), ("currency", "/currency")],
            ),
            (
                "invoices",
                all(&app, "/invoices").await,
                &[("invoiceId", "/invoiceId"), ("status", "/status"), ("totalMinor", "/totalMinor"), ("billingDate", "/billingDate")],
            ),
            ("events", all(&app, "/events").await, &[("eventId", "/eventId"), ("type", "/type"), ("occurredAt", "/occurredAt"), ("data", "/data")]),
        ];
        for (key, expected, columns) in cases {
            // (the log so far holds the events of the runs before)
            let expected = if key == "events" { all(&app, "/events").await } else { expected };
            let run = ran(&app, json!({"reportKey": key, "format": "JSONL"})).await;
            assert_eq!(run["status"], "SUCCEEDED", "{run:#}");
            assert!(run["completedAt"].is_string(), "rule 6: {run:#}");
            assert_eq!(run["rowCount"], expected.len(), "{key}: {run:#}");
            let (status, text) = fetch(run["downloadUrl"].as_str().unwrap()).await;
            assert_eq!(status, 200, "{text}");
            let rows = lines(&text);
            same_rows(key, &rows, &expected, columns);
            // the same rows as CSV: a header, then each JSON value as a cell
            let run = ran(&app, json!({"reportKey": key})).await;
            assert_eq!(run["format"], "CSV");
            let (status, text) = fetch(run["downloadUrl"].as_str().unwrap()).await;
            assert_eq!(status, 200, "{text}");
            let table = csv(&text);
            let header: Vec<&str> = table[0].iter().map(String::as_str).collect();
            let (mut sorted, keys) = (header.clone(), rows[0].as_object().unwrap().keys().map(String::as_str).collect::<Vec<_>>());
            sorted.sort();
            assert_eq!(sorted, keys, "{key}: the header names the JSON Lines keys");
            // (the events report has the JSON Lines run's event more)
            assert_eq!(table.len(), rows.len() + 1 + usize::from(key == "events"));
            for (cells, row) in table[1..].iter().zip(&rows) {
                for (cell, name) in cells.iter().zip(&header) {
                    let shown = match &row[*name] {
                        Value::Null => String::new(),
                        Value::String(s) => s.clone(),
                        other => other.to_string(),
                    };
                    assert_eq!(cell, &shown, "{key}.{name}");
                }
            }
        }
        // a customer's rows only, and a period's
        let customer = &ours.ids["customerId"].1;
        let theirs = ran(&app, json!({"reportKey": "orders", "format": "JSONL", "parameters": {"customerId": customer}})).await;
        let rows = lines(&fetch(theirs["downloadUrl"].as_str().unwrap()).await.1);
        let orders = all(&app, &format!("/orders?customerId={customer}")).await;
        assert_eq!(rows.iter().map(|r| r["orderId"].clone()).collect::<Vec<_>>(), orders.iter().map(|o| o["orderId"].clone()).collect::<Vec<_>>());
        assert_eq!(theirs["parameters"]["customerId"], json!(customer), "the parameters as asked");
        let events = all(&app, "/events").await;
        let from = events[1]["occurredAt"].as_str().unwrap();
        let to = events.last().unwrap()["occurredAt"].as_str().unwrap();
        let period = ran(&app, json!({"reportKey": "events", "format": "JSONL", "parameters": {"from": from, "to": to}})).await;
        let rows = lines(&fetch(period["downloadUrl"].as_str().unwrap()).await.1);
        let time = |v: &Value| v.as_str().unwrap().parse::<chrono::DateTime<chrono::Utc>>().unwrap();
        let within: Vec<&Value> =
            events.iter().filter(|e| time(&e["occurredAt"]) >= time(&events[1]["occurredAt"]) && time(&e["occurredAt"]) < time(&json!(to))).collect();
        assert_eq!(rows.len(), within.len(), "from is in, to is out");
        app
    })
    .await;
}

/// The query of `url` with `name`'s value replaced by `value`.
fn with_param(url: &str, name: &str, value: &str) -> String {
    let (base, query) = url.split_once('?').unwrap();
    let query: Vec<String> = query.split('&').map(|p| if p.starts_with(&format!("{name}=")) { format!("{name}={value}") } else { p.to_string() }).collect();
    format!("{base}?{}", query.join("&"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_download_url_works_until_it_expires_and_refuses_any_change() {
    each_backend(|app| async move {
        app.stop_jobs();
        crate::orders::setup(&app).await;
        // through the generated client
        let body = serde_json::from_value(json!({"reportKey": "subscriptions"})).unwrap();
        let queued = app.bullfinch().report_create(None, &body).await.unwrap().into_inner();
        assert!(queued.download_url.is_none() && queued.completed_at.is_none(), "rule 6 while QUEUED");
        let view = app.bullfinch().report_view(&queued.report_run_id).await.unwrap().into_inner();
        assert_eq!(json_of(&view.status), "QUEUED");
        assert!(view.download_url.is_none(), "rule 6 while QUEUED");
        app.run_jobs().await;
        let run = json_of(&app.bullfinch().report_view(&queued.report_run_id).await.unwrap().into_inner());
        assert_eq!((run["status"].as_str(), run["rowCount"].as_i64()), (Some("SUCCEEDED"), Some(0)), "{run:#}");
        let url = run["downloadUrl"].as_str().unwrap().to_string();
        let (status, text) = fetch(&url).await;
        assert_eq!((status, text.as_str()), (200, "subscriptionId,referenceId,customerId,customerName,productOfferingId,productOfferingName,type,status,msisdn,simType,iccid,currency,createdAt,activatedAt,cancelledAt,endedAt,renewsOn,updatedAt\r\n"));
        let r = reqwest::get(&url).await.unwrap();
        assert_eq!(r.headers()["content-type"], "text/csv; charset=utf-8; header=present");
        assert!(r.headers()["content-disposition"].to_str().unwrap().starts_with("attachment; filename=\"subscriptions-"));
        // each read signs a fresh URL, for 15 minutes of the server's time
        let expires: chrono::DateTime<chrono::Utc> = run["downloadExpiresAt"].as_str().unwrap().parse().unwrap();
        let left = expires - app.clock.now();
        assert!(left > chrono::Duration::seconds(890) && left <= chrono::Duration::minutes(15), "{left}");
        assert!(url.contains(&format!("expires={}&", expires.timestamp())), "{url}");
        // altered: another run, another expiry, another signature, none
        let other = url.replace(&queued.report_run_id.to_string(), &uuid::Uuid::new_v4().to_string());
        let later = with_param(&url, "expires", &(expires.timestamp() + 3600).to_string());
        let signature = url.split("signature=").nth(1).unwrap();
        let flipped = with_param(&url, "signature", &format!("{}{}", if signature.starts_with('0') { '1' } else { '0' }, &signature[1..]));
        let unsigned = url.split_once("&signature").unwrap().0.to_string();
        for bad in [other, later, flipped, unsigned, format!("{}/report-files/not-a-run", url.split("/report-files").next().unwrap())] {
            let (status, text) = fetch(&bad).await;
            assert_eq!(status, 403, "{bad}: {text}");
            assert!(text.contains("expired or is not valid"), "{text}");
        }
        // the list shows it with a URL too, newest first
        let older = ran(&app, json!({"reportKey": "subscriptions", "format": "JSONL"})).await;
        let list = app.bullfinch().report_list(None, None, &"subscriptions".parse().unwrap()).await.unwrap().into_inner();
        let ids: Vec<String> = list.items.iter().map(|r| r.report_run_id.to_string()).collect();
        assert_eq!(ids, [older["reportRunId"].as_str().unwrap().to_string(), queued.report_run_id.to_string()]);
        assert!(list.items.iter().all(|r| r.download_url.is_some()));
        // expired by the server's clock
        app.clock.advance(chrono::Duration::minutes(15));
        let (status, _) = fetch(&url).await;
        assert_eq!(status, 403, "an expired URL");
        // a fresh read gives a URL that works again
        let run = app.call("GET", &format!("/reports/{}", queued.report_run_id), None).await.body;
        assert_eq!(fetch(run["downloadUrl"].as_str().unwrap()).await.0, 200);
        app
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_that_cannot_write_its_file_fails_after_its_tries() {
    each_backend(|mut app| async move {
        app.become_sandbox().await;
        app.stop_jobs();
        // the data directory is a file now: nothing can be written under it
        let dir = app.settings.files.data_dir.clone();
        std::fs::remove_dir_all(&dir).unwrap();
        std::fs::write(&dir, "not a directory").unwrap();
        let r = app.call("POST", "/reports", Some(json!({"reportKey": "events"}))).await;
        let id = r.body["reportRunId"].as_str().unwrap().to_string();
        let mut now: chrono::DateTime<chrono::Utc> = r.body["createdAt"].as_str().unwrap().parse().unwrap();
        // a try per advance of ten minutes: a failed one is due again a
        // minute after the advance's time, not within it
        for tries in 1..=3 {
            now += chrono::Duration::minutes(10);
            crate::invoices::advance(&app, &now.to_rfc3339()).await;
            let run = app.call("GET", &format!("/reports/{id}"), None).await.body;
            if tries == 3 {
                break;
            }
            assert_eq!(run["status"], "RUNNING", "tried {tries} times, and again later: {run:#}");
            assert_eq!(run["downloadUrl"], Value::Null, "rule 6");
        }
        let run = app.call("GET", &format!("/reports/{id}"), None).await.body;
        assert_eq!(run["status"], "FAILED", "{run:#}");
        assert_eq!((&run["downloadUrl"], &run["rowCount"]), (&Value::Null, &Value::Null), "rule 6: {run:#}");
        assert!(run["failureMessage"].as_str().unwrap().contains("could not be written"));
        assert!(run["completedAt"].is_string());
        let events = app.store.event_types(app.org).await.unwrap();
        let failed: Vec<&Value> = events.iter().filter(|(t, _)| t == "report_run.failed").map(|(_, d)| d).collect();
        assert_eq!(failed.len(), 1);
        assert_eq!(failed[0]["reportRunId"], json!(id));
        std::fs::remove_file(&dir).unwrap();
        app
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runs_and_their_files_go_after_30_days_of_the_organisations_clock() {
    each_backend(|mut app| async move {
        app.become_sandbox().await;
        app.stop_jobs();
        let run = ran(&app, json!({"reportKey": "events"})).await;
        let id = run["reportRunId"].as_str().unwrap();
        let url = run["downloadUrl"].as_str().unwrap();
        assert_eq!(fetch(url).await.0, 200);
        let files = || walk(&app.settings.files.data_dir);
        assert_eq!(files().len(), 1, "the run's file");
        let now: chrono::DateTime<chrono::Utc> = run["createdAt"].as_str().unwrap().parse().unwrap();
        crate::invoices::advance(&app, &(now + chrono::Duration::days(29)).to_rfc3339()).await;
        assert_eq!(app.call("GET", &format!("/reports/{id}"), None).await.status, 200, "kept 30 days");
        crate::invoices::advance(&app, &(now + chrono::Duration::days(30)).to_rfc3339()).await;
        app.call("GET", &format!("/reports/{id}"), None).await.assert_error(404, "report_run_not_found");
        let list = app.call("GET", "/reports?reportKey=events", None).await;
        assert_eq!(list.body["items"], json!([]), "{:#}", list.body);
        assert!(files().is_empty(), "the file is deleted: {:?}", files());
        // the URL signed before still holds by the server's clock; the file is gone
        assert_eq!(fetch(url).await.0, 404);
        app
    })
    .await;
}

/// The files under `dir`.
fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = vec![];
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() { out.extend(walk(&path)) } else { out.push(path) }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reports_are_the_key_alones_and_hold_only_its_organisations_data() {
    each_backend(|app| async move {
        app.stop_jobs();
        crate::orders::setup(&app).await;
        let ours = ran(&app, json!({"reportKey": "events", "format": "JSONL"})).await;
        let id = ours["reportRunId"].as_str().unwrap();
        // another organisation sees none of it, and its report holds none of ours
        let (_, their_key) = app.other_org().await;
        app.call_as(Some(&their_key), "GET", &format!("/reports/{id}"), None, &[]).await.assert_error(404, "report_run_not_found");
        let listed = app.call_as(Some(&their_key), "GET", "/reports?reportKey=events", None, &[]).await;
        assert_eq!(listed.body["items"], json!([]));
        let r = app.call_as(Some(&their_key), "POST", "/reports", Some(json!({"reportKey": "events", "format": "JSONL"})), &[]).await;
        app.run_jobs().await;
        let theirs = app.call_as(Some(&their_key), "GET", &format!("/reports/{}", r.body["reportRunId"].as_str().unwrap()), None, &[]).await.body;
        assert_eq!(theirs["rowCount"], 0, "{theirs:#}");
        assert_eq!(fetch(theirs["downloadUrl"].as_str().unwrap()).await.1, "");
        let mine = lines(&fetch(ours["downloadUrl"].as_str().unwrap()).await.1);
        assert!(mine.iter().any(|e| e["type"] == "customer.created"), "ours has our events");
        // a customer of theirs is none of ours
        let r = app.call_as(Some(&their_key), "POST", "/reports", Some(json!({"reportKey": "orders", "parameters": {"customerId": "rid_acme"}})), &[]).await;
        r.assert_error(404, "customer_not_found");
        // a user, even an ADMIN of every customer, may not
        let r = app.call("POST", "/users", Some(json!({"name": "Ada", "email": "admin@acme.example", "customerId": "rid_acme", "role": "ADMIN"}))).await;
        assert_eq!(r.status, 201, "{:#}", r.body);
        let token = app.login("admin@acme.example", Some(&app.key)).await;
        let user = app.bullfinch_as(&app.key, &token);
        let body = serde_json::from_value(json!({"reportKey": "events"})).unwrap();
        assert_refused(&user.report_create(None, &body).await.unwrap_err(), 403, "insufficient_role");
        assert_refused(&user.report_view(&id.parse().unwrap()).await.unwrap_err(), 403, "insufficient_role");
        assert_refused(&user.report_list(None, None, &"events".parse().unwrap()).await.unwrap_err(), 403, "insufficient_role");
        app
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_request_is_400_and_changes_nothing() {
    each_backend(|app| async move {
        app.stop_jobs();
        crate::orders::setup(&app).await;
        let r = app.call("POST", "/reports", Some(json!({"reportKey": "customers"}))).await;
        assert_eq!(r.status, 400, "{:#}", r.body);
        let message = r.body.to_string();
        for key in ["subscriptions", "usage", "orders", "payment_intents", "invoices", "events"] {
            assert!(message.contains(key), "names the known keys: {message}");
        }
        let bad = [
            json!({"reportKey": "events", "parameters": {"customerId": "rid_acme"}}),
            json!({"reportKey": "orders", "parameters": {"from": "2026-10-02T00:00:00Z", "to": "2026-10-01T00:00:00Z"}}),
            json!({"reportKey": "orders", "format": "XLSX"}),
            json!({"reportKey": "orders", "parameters": {"since": "2026-10-01T00:00:00Z"}}),
        ];
        for body in bad {
            let r = app.call("POST", "/reports", Some(body.clone())).await;
            assert_eq!(r.status, 400, "{body}: {:#}", r.body);
        }
        assert_eq!(app.call("GET", "/reports", None).await.status, 400, "reportKey is required");
        assert_eq!(app.call("GET", "/reports?reportKey=customers", None).await.status, 400);
        assert_eq!(app.call("GET", "/reports/not-a-uuid", None).await.details()[0].0, "reportRunId");
        app.call("GET", &format!("/reports/{}", uuid::Uuid::new_v4()), None).await.assert_error(404, "report_run_not_found");
        assert_eq!(app.call("GET", "/reports?reportKey=orders", None).await.body["items"], json!([]), "nothing was queued");
        app
    })
    .await;
}

/// The bucket `cargo xtask s3` makes in its S3 stand-in, and the prefix
/// this test's files go under.
const S3_STORE: &str = "s3://switchboard-test/reports-test";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_s3_a_run_is_written_downloaded_and_deleted() {
    // `cargo xtask s3` runs this with an S3 stand-in on loopback (its
    // address here, and in the AWS_* variables the report store reads)
    let Ok(endpoint) = std::env::var("SWITCHBOARD_TEST_S3") else {
        eprintln!("S3 SKIPPED: SWITCHBOARD_TEST_S3 is not set (cargo xtask s3 sets it)");
        return;
    };
    each_backend_with(
        |s| s.files.report_store = Some(S3_STORE.into()),
        |mut app| {
            let endpoint = endpoint.clone();
            async move {
                app.become_sandbox().await;
                app.stop_jobs();
                crate::orders::setup(&app).await;
                let run = ran(&app, json!({"reportKey": "events", "format": "JSONL"})).await;
                assert_eq!(run["status"], "SUCCEEDED", "{run:#}");
                let (status, text) = fetch(run["downloadUrl"].as_str().unwrap()).await;
                assert_eq!(status, 200, "{text}");
                assert_eq!(lines(&text).len() as u64, run["rowCount"].as_u64().unwrap());
                // the object is in the bucket, under the prefix, and nothing is on disk
                assert!(endpoint.starts_with("http://127.0.0.1:"), "loopback only: {endpoint}");
                let bucket = switchboard::report_files::ReportFiles::open(&app.settings.files.data_dir, Some(S3_STORE)).unwrap();
                let object = format!("reports/{}/{}/1.jsonl", app.org, run["reportRunId"].as_str().unwrap());
                let (size, _) = bucket.read(&object).await.unwrap().expect("the file is in the bucket");
                assert_eq!(size, text.len() as u64);
                assert!(walk(&app.settings.files.data_dir).is_empty());
                // 30 days on, by the organisation's clock, it is deleted
                let now: chrono::DateTime<chrono::Utc> = run["createdAt"].as_str().unwrap().parse().unwrap();
                crate::invoices::advance(&app, &(now + chrono::Duration::days(30)).to_rfc3339()).await;
                assert!(bucket.read(&object).await.unwrap().is_none(), "deleted from the bucket");
                assert_eq!(fetch(run["downloadUrl"].as_str().unwrap()).await.0, 404);
                app
            }
        },
    )
    .await;
}
