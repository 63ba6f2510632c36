//! `switchboard serve` as a process: stopped by SIGTERM and started again
//! under load, losing no acknowledged request; its settings from a file
//! under the environment and the flags; its metrics, counted exactly; its
//! spans exported by OTLP and its JSON log, found by an Error's traceId.

mod common;

use common::collector::{Collector, attribute};
use common::{admin, db, free_address, serve_logging_to, serve_on};
use serde_json::Value;
use std::process::{Command, Stdio};

/// A server stopped by SIGTERM and started again on its address while
/// clients keep writing loses no acknowledged request, and runs none
/// twice: each client sends its request again, with its idempotency key,
/// until it is answered (connections refused while the server is down,
/// or cut as it stops); every 201 is there after the restart, one
/// customer per key.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_under_load_loses_no_acknowledged_request() {
    const CLIENTS: usize = 4;
    const EACH: usize = 60;
    let (url, file) = db();
    let org = admin(&url, &["org", "create", "--name", "Restart Ltd"]);
    let key = admin(&url, &["key", "create", "--org", org["organisationId"].as_str().unwrap()])["apiKey"].as_str().unwrap().to_string();
    // (a free port, taken again by each start: the clients' one address)
    let listen = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().to_string();
    let files = file.with_extension("files");
    let serve = || {
        Command::new(env!("CARGO_BIN_EXE_switchboard"))
            .args(["--database-url", &url, "serve", "--listen", &listen, "--rate-limit", "100000"])
            .arg("--data-dir")
            .arg(&files)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap()
    };
    let stop = |mut child: std::process::Child| async move {
        assert!(Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap().success());
        let exit = tokio::task::spawn_blocking(move || child.wait().unwrap());
        let exit = tokio::time::timeout(std::time::Duration::from_secs(30), exit).await.expect("stops").unwrap();
        assert!(exit.success(), "a stop on SIGTERM exits 0: {exit:?}");
    };
    let server = serve();
    let base = format!("http://{listen}/api/v2");
    let (acked, mut progress) = tokio::sync::watch::channel(Vec::<(String, String)>::new());
    let acked = std::sync::Arc::new(acked);
    let clients: Vec<_> = (0..CLIENTS)
        .map(|c| {
            let (base, key, acked) = (base.clone(), key.clone(), acked.clone());
            tokio::spawn(async move {
                let http = reqwest::Client::new();
                for i in 0..EACH {
                    let idempotency_key = format!("restart-{c}-{i}");
                    let body = serde_json::json!({"customerType": "BUSINESS", "name": format!("Customer {c}-{i}"), "contact": {}});
                    loop {
                        let sent = http
                            .post(format!("{base}/customers"))
                            .header("x-api-key", &key)
                            .header("x-idempotency-key", &idempotency_key)
                            .json(&body)
                            .send()
                            .await;
                        match sent {
                            Ok(r) if r.status() == 201 => {
                                let id = r.json::<Value>().await.unwrap()["customerId"].as_str().unwrap().to_string();
                                acked.send_modify(|a| a.push((idempotency_key, id)));
                                break;
                            }
                            // the same key still running (its first try's answer was
                            // cut off): a back-off, as below
                            Ok(r) if r.status() == 409 => tokio::time::sleep(std::time::Duration::from_millis(20)).await,
                            Ok(r) => panic!("{idempotency_key}: {} {}", r.status(), r.text().await.unwrap()),
                            // down, or stopping: a client tries again (a back-off, not a wait for time)
                            Err(_) => tokio::time::sleep(std::time::Duration::from_millis(20)).await,
                        }
                    }
                }
            })
        })
        .collect();
    // stopped mid-load, started again
    // (bounds on a hang, not waits for time)
    tokio::time::timeout(std::time::Duration::from_secs(60), progress.wait_for(|a| a.len() >= 40)).await.expect("the clients get answers").unwrap();
    stop(server).await;
    let server = serve();
    for c in clients {
        tokio::time::timeout(std::time::Duration::from_secs(120), c).await.expect("the clients finish").unwrap();
    }
    let acked = acked.borrow().clone();
    assert_eq!(acked.len(), CLIENTS * EACH);
    let http = reqwest::Client::new();
    for (idempotency_key, id) in &acked {
        let r = http.get(format!("{base}/customers/{id}")).header("x-api-key", &key).send().await.unwrap();
        assert_eq!(r.status(), 200, "{idempotency_key}'s customer {id} was acknowledged and is lost");
    }
    let store = switchboard::store::Store::connect(&url).await.unwrap();
    let customers: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM customers").fetch_one(store.pool()).await.unwrap();
    assert_eq!(customers as usize, CLIENTS * EACH, "one customer per idempotency key");
    store.close().await;
    stop(server).await;
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", file.display()));
    }
    let _ = std::fs::remove_dir_all(files);
}

/// `serve --config`: the file's settings apply, under the environment's
/// and the command line's; `config check` and `serve` name a bad key in
/// one line, and the server does not start.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn settings_come_from_a_file_under_the_environment_and_the_flags() {
    let (url, file) = db();
    let (from_file, from_env, from_flag, metrics) = (free_address(), free_address(), free_address(), free_address());
    let config = file.with_extension("toml");
    std::fs::write(
        &config,
        format!("listen = \"{from_file}\"\nmetrics-listen = \"{metrics}\"\n\n[webhooks]\nallow-private = true\nallow-ports = [8443, 9443]\n"),
    )
    .unwrap();
    let checked = Command::new(env!("CARGO_BIN_EXE_switchboard")).args(["config", "check"]).arg(&config).output().unwrap();
    assert!(checked.status.success(), "{}", String::from_utf8_lossy(&checked.stderr));
    assert_eq!(serde_json::from_slice::<Value>(&checked.stdout).unwrap()["settings"], 4);
    let path = config.to_str().unwrap();
    let mut server = serve_on(&url, &["--config", path], &[], &from_file).await;
    let scraped = reqwest::get(format!("http://{metrics}/metrics")).await.unwrap();
    assert_eq!(scraped.status(), 200, "the file's metrics-listen");
    server.kill().unwrap();
    server.wait().unwrap();
    let mut server = serve_on(&url, &[], &[("SWITCHBOARD_CONFIG", path), ("SWITCHBOARD_LISTEN", &from_env)], &from_env).await;
    server.kill().unwrap();
    server.wait().unwrap();
    let mut server = serve_on(&url, &["--listen", &from_flag], &[("SWITCHBOARD_CONFIG", path), ("SWITCHBOARD_LISTEN", &from_env)], &from_flag).await;
    server.kill().unwrap();
    server.wait().unwrap();

    // other commands take the file's database-url
    std::fs::write(&config, format!("database-url = \"{url}\"\nrate-limit = 5\n")).unwrap();
    let made = Command::new(env!("CARGO_BIN_EXE_switchboard"))
        .args(["admin", "org", "create", "--name", "Configured Ltd"])
        .env("SWITCHBOARD_CONFIG", path)
        .output()
        .unwrap();
    assert!(made.status.success(), "{}", String::from_utf8_lossy(&made.stderr));
    let orgs = admin(&url, &["org", "list"]);
    assert!(orgs.as_array().unwrap().iter().any(|o| o["name"] == "Configured Ltd"), "{orgs}");

    for (text, says) in [
        ("rate-limit = \"many\"\n", "rate-limit: invalid value 'many'"),
        ("rate_limt = 5\n", "rate_limt: no such setting"),
        ("[webhooks]\ntimeout-seconds = 0\n", "webhooks-timeout-seconds: invalid value '0'"),
        ("demo = \"yes\"\n", "demo: must be true or false"),
        ("listen = \n", "(line 1): not TOML"),
    ] {
        std::fs::write(&config, text).unwrap();
        for args in [vec!["config", "check", path], vec!["--database-url", &url, "serve", "--config", path]] {
            let out = Command::new(env!("CARGO_BIN_EXE_switchboard")).args(&args).output().unwrap();
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(!out.status.success(), "{args:?} refuses {text:?}");
            assert_eq!(stderr.trim_end().lines().count(), 1, "one line: {stderr}");
            assert!(stderr.starts_with(&format!("error: {path}")) && stderr.contains(says), "{args:?} {text:?}: {stderr}");
        }
    }
    let _ = std::fs::remove_file(&config);
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", file.display()));
    }
}

/// `serve --metrics-listen`, scraped after traffic: a fresh process counts
/// exactly what this test sent (tests/api/metrics.rs covers jobs and
/// deliveries inside the test process, where counters are shared).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_count_exactly_the_requests_sent() {
    let (url, file) = db();
    let org = admin(&url, &["org", "create", "--name", "Metered Ltd"]);
    let key = admin(&url, &["key", "create", "--org", org["organisationId"].as_str().unwrap()])["apiKey"].as_str().unwrap().to_string();
    let (api, metrics) = (free_address(), free_address());
    let mut server = serve_on(&url, &["--listen", &api, "--metrics-listen", &metrics, "--auth-failures-per-minute", "2"], &[], &api).await;
    let http = reqwest::Client::new();
    let base = format!("http://{api}/api/v2");
    let body = serde_json::json!({"customerType": "BUSINESS", "name": "Metered AB", "contact": {}});
    for _ in 0..2 {
        let r = http.post(format!("{base}/customers")).header("x-api-key", &key).header("x-idempotency-key", "m-1").json(&body).send().await.unwrap();
        assert_eq!(r.status(), 201);
    }
    let missing = http.get(format!("{base}/customers/{}", uuid::Uuid::new_v4())).header("x-api-key", &key).send().await.unwrap();
    assert_eq!(missing.status(), 404);
    let mut statuses = vec![];
    for _ in 0..3 {
        statuses.push(http.get(format!("{base}/customers")).header("x-api-key", "sbk_unknown").send().await.unwrap().status().as_u16());
    }
    assert_eq!(statuses, [401, 401, 429]);
    let text = reqwest::get(format!("http://{metrics}/metrics")).await.unwrap().text().await.unwrap();
    let value = |series: &str| -> f64 {
        text.lines().find_map(|l| l.strip_prefix(series).and_then(|v| v.strip_prefix(' '))).map_or(0.0, |v| v.trim().parse().unwrap())
    };
    let b = "2026-09-01.bullfinch";
    // (the unknown key's requests are in the oldest supported revision)
    let oldest = text.lines().find(|l| l.starts_with(r#"switchboard_rate_limited_total{operation="customer_list""#)).expect("a refusal counted").to_string();
    for (series, expected) in [
        (format!(r#"switchboard_http_requests_total{{operation="customer_create",revision="{b}",status="201"}}"#), 2.0),
        (format!(r#"switchboard_idempotent_replays_total{{operation="customer_create",revision="{b}"}}"#), 1.0),
        (format!(r#"switchboard_http_requests_total{{operation="customer_view",revision="{b}",status="404"}}"#), 1.0),
        (format!(r#"switchboard_http_request_duration_seconds_count{{operation="customer_create",revision="{b}"}}"#), 2.0),
    ] {
        assert_eq!(value(&series), expected, "{series}\n{text}");
    }
    assert!(oldest.ends_with(" 1"), "{oldest}");
    assert!(text.lines().any(|l| l.starts_with(r#"switchboard_http_requests_total{operation="customer_list""#) && l.contains(r#"status="401"} 2"#)), "{text}");
    server.kill().unwrap();
    server.wait().unwrap();
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", file.display()));
    }
}

/// An Error object's `traceId` is its `x-request-id` and the trace id of
/// the span exported for it (by OTLP, to a receiver on loopback), and its
/// `spanId` is that span's, linked to the caller's `traceparent`;
/// dropshot's own 404 and a job's item have their spans too; `--log-format json` writes the request's trace id on
/// its lines. The exporter's batches wait for the stop (a schedule of ten
/// minutes): the spans not yet sent are sent as the server exits.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_error_objects_trace_id_finds_its_exported_span_and_its_log_lines() {
    let (url, file) = db();
    let org = admin(&url, &["org", "create", "--name", "Traced Ltd", "--sandbox"]);
    let key = admin(&url, &["key", "create", "--org", org["organisationId"].as_str().unwrap()])["apiKey"].as_str().unwrap().to_string();
    let mut collector = Collector::start().await;
    let addr = free_address();
    let log_file = std::env::temp_dir().join(format!("switchboard-log-{}.jsonl", uuid::Uuid::new_v4().simple()));
    let env = [("OTEL_EXPORTER_OTLP_ENDPOINT", collector.url.as_str()), ("OTEL_BSP_SCHEDULE_DELAY", "600000"), ("RUST_LOG", "info,switchboard::api=debug")];
    let log = Stdio::from(std::fs::File::create(&log_file).unwrap());
    let mut server = serve_logging_to(&url, &["--listen", &addr, "--log-format", "json"], &env, &addr, log).await;
    let http = reqwest::Client::new();
    let base = format!("http://{addr}/api/v2");

    // (a caller's own trace, which the request's span links to)
    let caller = ("4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7");
    let traceparent = format!("00-{}-{}-01", caller.0, caller.1);
    let missing =
        http.get(format!("{base}/customers/{}", uuid::Uuid::new_v4())).header("x-api-key", &key).header("traceparent", traceparent).send().await.unwrap();
    assert_eq!(missing.status(), 404);
    let request_id = missing.headers()["x-request-id"].to_str().unwrap().to_string();
    let error: Value = missing.json().await.unwrap();
    assert_eq!(error["traceId"], request_id.as_str(), "{error:#}");
    assert!(request_id.len() == 32 && request_id.chars().all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()), "{request_id}");
    let span_id = error["spanId"].as_str().unwrap_or_else(|| panic!("a spanId: {error:#}")).to_string();
    let unrouted: Value = http.get(format!("{base}/no-such-thing")).send().await.unwrap().json().await.unwrap();
    assert_eq!(unrouted["internalCode"], "not_found", "{unrouted:#}");

    // a job's item: the sandbox clock advanced a day, by this server's worker
    let clock = || async { http.get(format!("{base}/sandbox/clock")).header("x-api-key", &key).send().await.unwrap().json::<Value>().await.unwrap() };
    let now: chrono::DateTime<chrono::Utc> = clock().await["now"].as_str().unwrap().parse().unwrap();
    let to = (now + chrono::Duration::days(1)).to_rfc3339();
    let advanced = http.post(format!("{base}/sandbox/clock/advance")).header("x-api-key", &key).json(&serde_json::json!({"to": to})).send().await.unwrap();
    assert_eq!(advanced.status(), 202);
    for _ in 0..500 {
        if clock().await["status"] == "READY" {
            break;
        }
        // (polling for the worker to finish, not waiting for time)
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert_eq!(clock().await["status"], "READY");
    assert!(Command::new("kill").args(["-TERM", &server.id().to_string()]).status().unwrap().success());
    assert!(server.wait().unwrap().success());

    let (spans, content_types) = collector.spans();
    assert!(!content_types.is_empty() && content_types.iter().all(|t| t == "application/x-protobuf"), "OTLP's default is protobuf: {content_types:?}");
    let of_trace = |id: &Value| spans.iter().find(|s| s["traceId"] == *id).unwrap_or_else(|| panic!("no span of trace {id} in {spans:#?}"));
    let span = of_trace(&error["traceId"]);
    assert_eq!((span["spanId"].as_str(), span["name"].as_str()), (Some(span_id.as_str()), Some("customer_view")), "{span:#}");
    assert!(span["parentSpanId"].as_str().unwrap_or_default().is_empty(), "a request's span is its trace's root: {span:#}");
    assert_eq!((span["links"][0]["traceId"].as_str(), span["links"][0]["spanId"].as_str()), (Some(caller.0), Some(caller.1)), "{span:#}");
    assert_eq!(attribute(span, "http.response.status_code").as_deref(), Some("404"), "{span:#}");
    assert_eq!(attribute(span, "http.request.method").as_deref(), Some("GET"), "{span:#}");
    assert_eq!(attribute(&span["resource"], "service.name").as_deref(), Some("switchboard"), "{span:#}");
    let refused = of_trace(&unrouted["traceId"]);
    assert_eq!((&refused["spanId"], refused["name"].as_str()), (&unrouted["spanId"], Some("refused")), "{refused:#}");
    let job = spans.iter().find(|s| s["name"] == "clock.advance").unwrap_or_else(|| panic!("no span of the clock's advance in {spans:#?}"));
    assert_eq!(attribute(job, "outcome").as_deref(), Some("done"), "{job:#}");
    assert_eq!(attribute(job, "org").as_deref(), org["organisationId"].as_str(), "{job:#}");

    let log = std::fs::read_to_string(&log_file).unwrap();
    let lines: Vec<Value> = log.lines().map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not a JSON line ({e}): {l}"))).collect();
    let answered = lines.iter().find(|l| l["span"]["trace_id"] == request_id.as_str() && l["fields"]["message"] == "answered");
    let answered = answered.unwrap_or_else(|| panic!("no line of {request_id} in\n{log}"));
    assert_eq!((&answered["span"]["span_id"], &answered["fields"]["status"]), (&Value::from(span_id), &Value::from(404)), "{answered:#}");
    let _ = std::fs::remove_file(log_file);
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", file.display()));
    }
}
