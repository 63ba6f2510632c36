//! The binary itself: admin commands print JSON; `serve --demo` prints a
//! working key and stops cleanly on SIGTERM. (`serve` restarted under load,
//! its configuration file and its metrics: tests/serve.rs.)

use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

mod common;
use common::{admin, db};

/// The payment providers an organisation collects with: both until the
/// operator disables one, named as the documents name them.
#[test]
fn an_organisations_payment_providers_from_the_cli() {
    let (url, file) = db();
    let org = admin(&url, &["org", "create", "--name", "Acme Pay"]);
    let org = org["organisationId"].as_str().unwrap();
    let enabled = |v: &Value| -> Vec<(String, bool)> {
        v["providers"].as_array().unwrap().iter().map(|p| (p["paymentProvider"].as_str().unwrap().to_string(), p["enabled"].as_bool().unwrap())).collect()
    };
    let both = [("PROVIDER_1".to_string(), true), ("PROVIDER_2".to_string(), true)];
    assert_eq!(enabled(&admin(&url, &["org", "providers", "--org", org])), both);
    let one = admin(&url, &["org", "providers", "--org", org, "--disable", "PROVIDER_2"]);
    assert_eq!(enabled(&one), [("PROVIDER_1".to_string(), true), ("PROVIDER_2".to_string(), false)]);
    assert_eq!(enabled(&admin(&url, &["org", "providers", "--org", org, "--disable", "PROVIDER_2"])), enabled(&one), "disabling twice");
    assert_eq!(enabled(&admin(&url, &["org", "providers", "--org", org, "--enable", "PROVIDER_2"])), both);
    let refusals = [
        (vec!["--org", org, "--disable", "PROVIDER_3"], "unknown payment provider"),
        (vec!["--org", "5d3c1b7a-2e4f-4a6b-8c9d-0e1f2a3b4c5d"], "no organisation"),
        (vec!["--org", org, "--enable", "PROVIDER_1", "--disable", "PROVIDER_1"], "both enabled and disabled"),
    ];
    for (bad, said) in refusals {
        let out = Command::new(env!("CARGO_BIN_EXE_switchboard")).args(["--database-url", &url, "admin", "org", "providers"]).args(&bad).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && stderr.contains(said), "{bad:?}: {stderr}");
    }
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", file.display()));
    }
}

/// A sandbox organisation through the CLI: its flag in the list, its
/// keys' test prefix, and its clock shown and advanced (the CLI runs what
/// falls due itself and prints the clock READY).
#[test]
fn a_sandbox_organisation_and_its_clock_from_the_cli() {
    let (url, file) = db();
    let normal = admin(&url, &["org", "create", "--name", "Acme Telecom"]);
    let sandbox = admin(&url, &["org", "create", "--name", "Acme CI", "--sandbox"]);
    assert_eq!((&normal["sandbox"], &sandbox["sandbox"]), (&Value::Bool(false), &Value::Bool(true)));
    let listed = admin(&url, &["org", "list"]);
    // (by name: under faketime every command starts at the same instant,
    // so the two may share a creation time)
    let mut flags: Vec<(&str, bool)> = listed.as_array().unwrap().iter().map(|o| (o["name"].as_str().unwrap(), o["sandbox"].as_bool().unwrap())).collect();
    flags.sort();
    assert_eq!(flags, [("Acme CI", true), ("Acme Telecom", false)]);
    let org = sandbox["organisationId"].as_str().unwrap();
    let key = admin(&url, &["key", "create", "--org", org]);
    assert!(key["apiKey"].as_str().unwrap().starts_with("sbk_test_") && key["sandbox"] == true, "{key}");
    let theirs = admin(&url, &["key", "create", "--org", normal["organisationId"].as_str().unwrap()]);
    assert!(!theirs["apiKey"].as_str().unwrap().starts_with("sbk_test_") && theirs["sandbox"] == false, "{theirs}");
    let shown = admin(&url, &["clock", "show", "--org", org]);
    assert_eq!((&shown["status"], &shown["advancedAt"]), (&Value::from("READY"), &Value::Null));
    let files = std::env::temp_dir().join(format!("switchboard-cli-files-{}", uuid::Uuid::new_v4().simple()));
    let advanced = admin(&url, &["clock", "advance", "--org", org, "--by", "30d", "--data-dir", files.to_str().unwrap()]);
    let _ = std::fs::remove_dir_all(&files);
    assert_eq!(advanced["status"], "READY");
    let days = |v: &Value| chrono::DateTime::parse_from_rfc3339(v["now"].as_str().unwrap()).unwrap();
    // each command reads the clock in its own process: within a minute of 30 days
    let moved = days(&advanced) - days(&shown) - chrono::Duration::days(30);
    assert!(moved.num_seconds().abs() < 60, "{shown} then {advanced}");
    let refused = Command::new(env!("CARGO_BIN_EXE_switchboard"))
        .args(["--database-url", &url, "admin", "clock", "show", "--org", normal["organisationId"].as_str().unwrap()])
        .output()
        .unwrap();
    assert!(!refused.status.success() && String::from_utf8_lossy(&refused.stderr).contains("not"), "a normal organisation has no clock");
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", file.display()));
    }
}

#[test]
fn admin_commands_print_json() {
    let (url, file) = db();
    let org = admin(&url, &["org", "create", "--name", "Acme Telecom"]);
    let org_id = org["organisationId"].as_str().unwrap().to_string();
    let key = admin(&url, &["key", "create", "--org", &org_id, "--revision", "2026-08-21.auk", "--read-only"]);
    assert!(key["apiKey"].as_str().unwrap().starts_with("sbk_"));
    assert_eq!(key["revision"], "2026-08-21.auk");
    assert_eq!(key["readOnly"], true);
    let key_id = key["apiKeyId"].as_str().unwrap().to_string();
    let default = admin(&url, &["key", "create", "--org", &org_id]);
    assert_eq!(default["revision"], "2026-09-01.bullfinch", "pinned to the current revision by default");
    let list = admin(&url, &["key", "list", "--org", &org_id]);
    assert_eq!(list.as_array().unwrap().len(), 2);
    assert!(!list.to_string().contains(key["apiKey"].as_str().unwrap()), "secrets are shown once");
    let pinned = admin(&url, &["key", "pin", "--key", &key_id, "--revision", "2026-09-01.bullfinch"]);
    assert_eq!(pinned["revision"], "2026-09-01.bullfinch");
    let revoked = admin(&url, &["key", "revoke", "--key", &key_id]);
    assert!(revoked["revokedAt"].is_string());
    let bad = Command::new(env!("CARGO_BIN_EXE_switchboard"))
        .args(["--database-url", &url, "admin", "key", "pin", "--key", &key_id, "--revision", "2026-09-01"])
        .output()
        .unwrap();
    assert!(!bad.status.success(), "only full revision names are accepted");
    // a failure is one clear line, never a backtrace
    let file_path = std::env::temp_dir().join(format!("switchboard-cli-{}.yaml", uuid::Uuid::new_v4().simple()));
    std::fs::write(&file_path, "groups: [\n").unwrap();
    let broken = Command::new(env!("CARGO_BIN_EXE_switchboard"))
        .env("RUST_BACKTRACE", "1")
        .args(["--database-url", &url, "admin", "catalog", "import", "--org", &org_id])
        .arg(&file_path)
        .output()
        .unwrap();
    let _ = std::fs::remove_file(&file_path);
    let stderr = String::from_utf8_lossy(&broken.stderr);
    assert!(!broken.status.success());
    assert!(stderr.starts_with("error: ") && stderr.trim_end().lines().count() == 1, "{stderr}");
    assert!(!stderr.contains("backtrace"), "{stderr}");
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", file.display()));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_demo_prints_a_working_key_and_stops_on_sigterm() {
    let (url, file) = db();
    let mut child = Command::new(env!("CARGO_BIN_EXE_switchboard"))
        .args(["--database-url", &url, "serve", "--demo", "--listen", "127.0.0.1:0"])
        .arg("--data-dir")
        .arg(file.with_extension("files"))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let first = lines.next().unwrap().unwrap();
    let key = first.rsplit(' ').next().unwrap().to_string();
    assert!(key.starts_with("sbk_"), "{first}");
    let curl = lines.next().unwrap().unwrap();
    let url_in_curl = curl.rsplit(' ').next().unwrap().to_string();
    let resp = reqwest::Client::new().get(&url_in_curl).header("x-api-key", &key).send().await.unwrap();
    assert_eq!(resp.status().as_u16(), 200);
    let body: Value = resp.json().await.unwrap();
    assert_eq!(body["items"].as_array().unwrap().len(), 4, "the demo has customers");
    let users = reqwest::Client::new().get(url_in_curl.replace("/customers", "/users")).header("x-api-key", &key).send().await.unwrap();
    let users: Value = users.json().await.unwrap();
    assert_eq!(users["items"].as_array().unwrap().len(), 3);
    // the demo catalog: Acme orders from the business catalog, Maria from the default
    for (customer, catalog) in [("rid_acme", "Business"), ("rid_maria", "Consumer")] {
        let url = url_in_curl.replace("/customers", &format!("/customers/{customer}/product-catalog"));
        let resp: Value = reqwest::Client::new().get(&url).header("x-api-key", &key).send().await.unwrap().json().await.unwrap();
        assert_eq!(resp["name"], catalog, "{resp:#}");
    }
    // Acme's submitted orders: a subscription with an add-on and a license
    let get = |path: String| {
        let (url, key) = (url_in_curl.replace("/customers", &path), key.clone());
        async move { reqwest::Client::new().get(&url).header("x-api-key", &key).send().await.unwrap().json::<Value>().await.unwrap() }
    };
    let subscription = get("/subscriptions/rid_acme-mobile-1".into()).await;
    assert_eq!(subscription["customer"]["name"], "Acme AB", "{subscription:#}");
    assert_eq!(get("/subscriptions/rid_acme-mobile-1/addons".into()).await["items"].as_array().unwrap().len(), 1);
    let licenses = get("/licenses".into()).await;
    assert_eq!(licenses["items"][0]["assignedTo"]["subscriptionId"], subscription["subscriptionId"], "{licenses:#}");
    // the subscriptions stand in several states of their lifecycle
    assert_eq!(subscription["status"], "ACTIVATED", "{subscription:#}");
    let usage = get("/subscriptions/rid_acme-mobile-1/usage".into()).await;
    let (used, included) = (usage["data"]["used"].as_f64().unwrap(), usage["data"]["included"].as_f64().unwrap());
    assert!((0.8..1.0).contains(&(used / included)), "near its quota: {usage:#}");
    let notices = get("/events?type=subscription.quotaNotification".into()).await;
    assert_eq!(notices["items"].as_array().unwrap().len(), 1, "{notices:#}");
    assert_eq!(notices["items"][0]["data"]["thresholdPercent"], 80);
    assert_eq!(get("/subscriptions/rid_acme-mobile-2".into()).await["status"], "PAUSED");
    let globex = get("/subscriptions/rid_globex-mobile-1".into()).await;
    assert_eq!(globex["status"], "ACTIVATED");
    assert_eq!(globex["pendingProductOffering"]["productOffering"]["name"], "Mobile 10 GB", "{globex:#}");
    assert_eq!(globex["pendingProductOffering"]["scheduledAt"].as_str().unwrap()[..10], globex["renewsOn"], "{globex:#}");
    let maria = get("/subscriptions/rid_maria-mobile-1".into()).await;
    assert_eq!((&maria["status"], &maria["pendingStatus"]), (&"ACTIVATED".into(), &"CANCELLED".into()), "{maria:#}");
    assert_eq!(get("/subscriptions/rid_globex-data-1".into()).await["status"], "PENDING");
    // (and Maria's second, bought through a paid payment link, Initech's,
    // Maria's third, given a number of the demo's pool, and Acme's line
    // bringing its number, on another meanwhile)
    assert_eq!(get("/subscriptions".into()).await["items"].as_array().unwrap().len(), 9);
    // a report of the subscriptions, which the server's worker writes
    let reports = get("/reports?reportKey=subscriptions".into()).await;
    assert_eq!(reports["items"].as_array().unwrap().len(), 1, "{reports:#}");
    let porting = get("/subscriptions/rid_acme-port-1/in-porting".into()).await;
    assert_eq!((&porting["msisdn"], &porting["direction"]), (&"+46709871234".into(), &"INBOUND".into()), "{porting:#}");
    assert!(get("/subscriptions/rid_maria-pool-1".into()).await["msisdn"].as_str().unwrap().starts_with("+46701000"), "a number of the pool");
    // payments: Maria paid her link, saving her card as default; Acme's
    // link waits after a declined card, its page on the listen address
    let links = get("/payment-links".into()).await;
    let statuses: Vec<&str> = links["items"].as_array().unwrap().iter().map(|l| l["status"].as_str().unwrap()).collect();
    assert_eq!(statuses, ["COMPLETED", "ACTIVE"], "{links:#}");
    let page = reqwest::get(links["items"][1]["hostedUrl"].as_str().unwrap()).await.unwrap();
    assert_eq!(page.status().as_u16(), 200);
    assert!(page.text().await.unwrap().contains("card_declined"));
    let profiles = get("/payment-profiles?customerId=rid_maria".into()).await;
    assert_eq!(profiles["items"][0]["isDefault"], true, "{profiles:#}");
    let intents = get("/payment-intents?status=SUCCEEDED".into()).await;
    assert_eq!(intents["items"].as_array().unwrap().len(), 1, "{intents:#}");
    // invoices: Initech's first PAID, its renewal's OPEN with its document;
    // today's orders on DRAFTs
    let initech = get("/invoices?customerId=rid_initech".into()).await;
    let states: Vec<&str> = initech["items"].as_array().unwrap().iter().map(|i| i["status"].as_str().unwrap()).collect();
    assert_eq!(states, ["PAID", "OPEN"], "{initech:#}");
    let document = reqwest::get(initech["items"][1]["documentUrl"].as_str().unwrap()).await.unwrap();
    assert_eq!(document.status().as_u16(), 200);
    assert!(document.text().await.unwrap().contains("<cbc:ID>INV-000002</cbc:ID>"));
    assert!(!get("/invoices?status=DRAFT".into()).await["items"].as_array().unwrap().is_empty());
    let org = admin(&url, &["org", "list"])[0]["organisationId"].as_str().unwrap().to_string();
    assert_eq!(admin(&url, &["invoice", "list", "--org", &org]).as_array().unwrap().len(), get("/invoices".into()).await["items"].as_array().unwrap().len());
    assert_eq!(admin(&url, &["invoice", "list", "--org", &org, "--paper"]), serde_json::json!([]), "nobody is billed on paper");
    let days = admin(&url, &["invoice", "dunning", "--org", &org, "--suspend-after-days", "10"]);
    assert_eq!(days, serde_json::json!({"organisationId": org, "suspendAfterDays": 10, "uncollectibleAfterDays": 60}));
    // a login code lands in the outbox, which `admin mail list` prints
    let start = url_in_curl.replace("/customers", "/auth/email/start");
    let resp = reqwest::Client::new().post(&start).json(&serde_json::json!({"email": "anna@acme.example"})).send().await.unwrap();
    assert_eq!(resp.status().as_u16(), 202);
    let mails = admin(&url, &["mail", "list", "--to", "ANNA@acme.example"]);
    let mails = mails.as_array().unwrap();
    assert_eq!(mails.len(), 1);
    assert_eq!(mails[0]["to"], "anna@acme.example");
    assert!(mails[0]["subject"].as_str().unwrap().starts_with("Your login code: "));
    assert_eq!(admin(&url, &["mail", "list", "--to", "nobody@example.com"]).as_array().unwrap().len(), 0);
    assert_eq!(admin(&url, &["mail", "list"]).as_array().unwrap().len(), 1);
    // an operator makes a user a support user, and back
    let anna = users["items"][0]["userId"].as_str().unwrap();
    assert_eq!(admin(&url, &["user", "support", "--user", anna])["support"], true);
    assert_eq!(admin(&url, &["user", "support", "--user", anna, "--off"])["support"], false);
    let status = Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap();
    assert!(status.success());
    let exit = tokio::task::spawn_blocking(move || child.wait().unwrap());
    let exit = tokio::time::timeout(std::time::Duration::from_secs(30), exit).await.expect("stops").unwrap();
    assert!(exit.success(), "graceful shutdown exits 0: {exit:?}");
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", file.display()));
    }
    let _ = std::fs::remove_dir_all(file.with_extension("files"));
}

#[test]
fn admin_catalog_import_loads_a_file_once_and_names_each_problem() {
    let (url, file) = db();
    let org = admin(&url, &["org", "create", "--name", "Acme Telecom"]);
    let org_id = org["organisationId"].as_str().unwrap().to_string();
    let dir = std::env::temp_dir().join(format!("switchboard-catalog-{}", uuid::Uuid::new_v4().simple()));
    std::fs::create_dir_all(&dir).unwrap();
    let yaml = dir.join("catalog.yaml");
    std::fs::write(
        &yaml,
        "products: [{key: p, internalName: P, type: SIM_CARD, category: PRODUCT_CATEGORY_SIM_CARD}]\n\
        offerings: [{key: sim, name: SIM, product: p, price: {netPriceMinor: 9900, currency: SEK, priceType: ONE_TIME}}]\n\
        catalogs: [{key: all, name: All, default: true, offerings: [sim]}]\n",
    )
    .unwrap();
    let first = admin(&url, &["catalog", "import", "--org", &org_id, yaml.to_str().unwrap()]);
    assert_eq!(first, serde_json::json!({"created": 4, "updated": 0, "unchanged": 0}));
    let again = admin(&url, &["catalog", "import", "--org", &org_id, yaml.to_str().unwrap()]);
    assert_eq!(again, serde_json::json!({"created": 0, "updated": 0, "unchanged": 4}));

    // JSON too; a shape error names the path and the line
    let json = dir.join("catalog.json");
    std::fs::write(&json, "{\n  \"offerings\": [\n    {\"key\": \"x\", \"name\": \"X\", \"product\": \"p\",\n     \"price\": {\"currency\": \"SEK\", \"priceType\": \"SOMETIMES\"}}\n  ]\n}\n").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_switchboard"))
        .args(["--database-url", &url, "admin", "catalog", "import", "--org", &org_id, json.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("offerings[0].price.priceType") && err.contains("line 4"), "{err}");

    // rule errors: every one, each with its path; nothing is stored
    std::fs::write(&yaml, "offerings: [{key: y, name: Y, product: nope, price: {currency: XXX, priceType: ONE_TIME}}]\n").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_switchboard"))
        .args(["--database-url", &url, "admin", "catalog", "import", "--org", &org_id, yaml.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("offerings[0].product: names no product") && err.contains("offerings[0].price.currency:"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", file.display()));
    }
}

/// The command's one-line error, for a command that must fail.
fn admin_fails(url: &str, args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_switchboard")).args(["--database-url", url, "admin"]).args(args).output().unwrap();
    assert!(!out.status.success(), "{args:?} succeeded");
    String::from_utf8_lossy(&out.stderr).trim_end().to_string()
}

#[test]
fn admin_webhook_commands_manage_endpoints_and_the_revision() {
    let (url, file) = db();
    let org = admin(&url, &["org", "create", "--name", "Acme Telecom"]);
    let org_id = org["organisationId"].as_str().unwrap().to_string();
    let o = org_id.as_str();
    // (the admin commands deliver nothing; a loopback receiver, allowed as
    // an operator may, keeps even the address check on this machine)
    let created = admin(
        &url,
        &["webhook", "create", "--org", o, "--url", "https://127.0.0.1:9/hooks", "--events", "order.submitted,customer.created", "--webhooks-allow-private"],
    );
    let secret = created["secret"].as_str().unwrap().to_string();
    assert!(secret.starts_with("whsec_"), "{created}");
    assert_eq!(created["events"], serde_json::json!(["order.submitted", "customer.created"]));
    let id = created["webhookEndpointId"].as_str().unwrap().to_string();
    let e = id.as_str();

    // refusals name the flag; a local URL needs the operator's say-so
    let refused = admin_fails(&url, &["webhook", "create", "--org", o, "--url", "http://127.0.0.1:3000/hooks"]);
    assert!(refused.starts_with("error: --url: must be an https URL"), "{refused}");
    let refused = admin_fails(&url, &["webhook", "create", "--org", o, "--url", "https://127.0.0.1:3000/hooks"]);
    assert!(refused.contains("loopback, private"), "{refused}");
    let local = admin(&url, &["webhook", "create", "--org", o, "--url", "http://127.0.0.1:3000/hooks", "--webhooks-allow-private", "--webhooks-allow-http"]);
    assert_eq!(local["events"], serde_json::json!(["*"]));
    let unknown =
        admin_fails(&url, &["webhook", "create", "--org", o, "--url", "https://127.0.0.1:9/x", "--events", "order.shipped", "--webhooks-allow-private"]);
    assert!(unknown.contains("unknown event type \"order.shipped\""), "{unknown}");

    let list = admin(&url, &["webhook", "list", "--org", o]);
    assert_eq!(list.as_array().unwrap().len(), 2);
    assert!(!list.to_string().contains(&secret), "secrets are shown once");
    let updated = admin(&url, &["webhook", "update", "--org", o, "--endpoint", e, "--events", "*", "--description", "all of it"]);
    assert_eq!((&updated["events"], &updated["description"]), (&serde_json::json!(["*"]), &serde_json::json!("all of it")));
    let disabled = admin(&url, &["webhook", "disable", "--org", o, "--endpoint", e]);
    assert_eq!((&disabled["status"], &disabled["disabledReason"]), (&serde_json::json!("DISABLED"), &serde_json::json!("MANUAL")));
    let enabled = admin(&url, &["webhook", "enable", "--org", o, "--endpoint", e]);
    assert_eq!(enabled["status"], "ENABLED");
    let rotated = admin(&url, &["webhook", "rotate-secret", "--org", o, "--endpoint", e]);
    assert!(rotated["secret"].as_str().unwrap().starts_with("whsec_") && rotated["secret"] != secret.as_str());
    assert!(rotated["previousSecretExpiresAt"].is_string());
    let deleted = admin(&url, &["webhook", "delete", "--org", o, "--endpoint", e]);
    assert_eq!(deleted["deleted"], true);
    let gone = admin_fails(&url, &["webhook", "delete", "--org", o, "--endpoint", e]);
    assert!(gone.contains("webhook endpoint not found"), "{gone}");

    // the webhook revision starts at the oldest supported one, and moves only when set
    let revision = admin(&url, &["webhook", "revision", "--org", o]);
    let oldest = switchboard::api::revision::Revision::oldest_supported(chrono::Utc::now().date_naive());
    assert_eq!(revision["webhookRevision"], oldest.name);
    let moved = admin(&url, &["webhook", "revision", "--org", o, "--set", "2026-09-01.bullfinch"]);
    assert_eq!(moved["webhookRevision"], "2026-09-01.bullfinch");
    assert_eq!(admin(&url, &["webhook", "revision", "--org", o])["webhookRevision"], "2026-09-01.bullfinch");
    let bad = admin_fails(&url, &["webhook", "revision", "--org", o, "--set", "2026-09-01"]);
    assert!(bad.contains("unknown revision"), "{bad}");
    let nobody = admin_fails(&url, &["webhook", "list", "--org", &uuid::Uuid::new_v4().to_string()]);
    assert!(nobody.contains("no organisation"), "{nobody}");
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", file.display()));
    }
}

/// No password of a database, SMTP or proxy URL shows in an error or in
/// `--help` (whose defaults would show what the environment set).
#[test]
fn urls_never_show_their_passwords() {
    let run = |args: &[&str], env: &[(&str, &str)]| {
        let out = Command::new(env!("CARGO_BIN_EXE_switchboard")).args(args).envs(env.iter().copied()).output().unwrap();
        (out.status.success(), format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr)))
    };
    let (ok, said) = run(&["--database-url", "mysql://u:hunter2@127.0.0.1/db", "admin", "org", "create", "--name", "X"], &[]);
    assert!(!ok && said.contains("mysql://u:***@127.0.0.1/db") && !said.contains("hunter2"), "{said}");
    let (url, file) = db();
    let (ok, said) = run(&["--database-url", &url, "serve", "--listen", "127.0.0.1:0", "--smtp-url", "smtpx://u:hunter2@127.0.0.1"], &[]);
    assert!(!ok && said.contains("SMTP URL") && !said.contains("hunter2"), "{said}");
    let secrets = [
        ("DATABASE_URL", "postgres://u:hunter2@127.0.0.1/db"),
        ("SWITCHBOARD_SMTP_URL", "smtps://u:hunter2@127.0.0.1"),
        ("SWITCHBOARD_WEBHOOKS_PROXY", "http://u:hunter2@127.0.0.1:3128"),
        ("SWITCHBOARD_TOKEN_SECRET", "hunter2hunter2hunter2hunter2hunter2"),
    ];
    let (ok, said) = run(&["serve", "--help"], &secrets);
    assert!(ok && !said.contains("hunter2"), "{said}");
    let _ = std::fs::remove_file(file);
}

#[test]
fn admin_backup_copies_a_live_database_and_restore_puts_it_back() {
    let (url, file) = db();
    let backup = file.with_extension("backup");
    admin(&url, &["org", "create", "--name", "Before"]);
    // (VACUUM INTO reads one snapshot: a running server's database is copied as of one commit)
    let out = admin(&url, &["backup", "--to", backup.to_str().unwrap()]);
    assert!(out["bytes"].as_u64().unwrap() > 0, "{out:#}");
    let again =
        Command::new(env!("CARGO_BIN_EXE_switchboard")).args(["--database-url", &url, "admin", "backup", "--to", backup.to_str().unwrap()]).output().unwrap();
    assert!(!again.status.success() && String::from_utf8_lossy(&again.stderr).contains("exists already"), "a backup never overwrites");
    admin(&url, &["org", "create", "--name", "After"]);
    // over an existing database only with --force
    let refused = Command::new(env!("CARGO_BIN_EXE_switchboard"))
        .args(["--database-url", &url, "admin", "restore", "--from", backup.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(!refused.status.success() && String::from_utf8_lossy(&refused.stderr).contains("--force"));
    // nothing that is not a Switchboard database is restored
    let junk = file.with_extension("junk");
    std::fs::write(&junk, "not a database").unwrap();
    let bad = Command::new(env!("CARGO_BIN_EXE_switchboard"))
        .args(["--database-url", &url, "admin", "restore", "--from", junk.to_str().unwrap(), "--force"])
        .output()
        .unwrap();
    assert!(!bad.status.success(), "{}", String::from_utf8_lossy(&bad.stdout));
    let restored = admin(&url, &["restore", "--from", backup.to_str().unwrap(), "--force"]);
    assert_eq!(restored["organisations"], 1, "{restored:#}");
    let names: Vec<String> = admin(&url, &["org", "list"]).as_array().unwrap().iter().map(|o| o["name"].as_str().unwrap().to_string()).collect();
    assert_eq!(names, ["Before"], "the database as it was backed up");
    // PostgreSQL's are pg_dump's
    let pg = Command::new(env!("CARGO_BIN_EXE_switchboard"))
        .args(["--database-url", "postgres://nobody@127.0.0.1:1/none", "admin", "backup", "--to", "/nonexistent"])
        .output()
        .unwrap();
    assert!(!pg.status.success() && String::from_utf8_lossy(&pg.stderr).contains("pg_dump"));
    for path in [backup, junk] {
        let _ = std::fs::remove_file(path);
    }
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", file.display()));
    }
}

/// Secrets at rest from the CLI: a new master key, endpoints' secrets
/// sealed under it, a reseal without it refused naming it, `reseal` with
/// the old key kept as previous, and a previous key without a current one
/// refused.
#[test]
fn admin_secrets_seal_with_the_master_key_and_reseal_after_a_rotation() {
    let (url, file) = db();
    let new_key = || admin(&url, &["secrets", "new-key"])["masterKey"].as_str().unwrap().to_string();
    let (a, b) = (new_key(), new_key());
    assert_ne!(a, b);
    let org = admin(&url, &["org", "create", "--name", "Acme Telecom"]);
    let o = org["organisationId"].as_str().unwrap().to_string();
    let under_a = ["--master-key", a.as_str()];
    let create = ["webhook", "create", "--org", &o, "--url", "https://127.0.0.1:9/hooks", "--webhooks-allow-private"];
    let created = admin(&url, &[&create[..], &under_a].concat());
    let e = created["webhookEndpointId"].as_str().unwrap().to_string();
    let status = admin(&url, &["secrets", "status", "--master-key", &a]);
    let id_a = status["currentKey"].as_str().unwrap().to_string();
    assert_eq!(status["secrets"], serde_json::json!({"plain": 0, "sealedUnder": {id_a.as_str(): 1}}));

    // under the new key alone, the old key's secrets are named, not opened
    let refused = admin_fails(&url, &["secrets", "reseal", "--master-key", &b]);
    assert!(refused.contains(&format!("master key {id_a}, which is not configured")), "{refused}");
    let keyless = admin_fails(&url, &["secrets", "reseal"]);
    assert!(keyless.contains("reseal needs --master-key"), "{keyless}");
    let rotate = ["webhook", "rotate-secret", "--org", &o, "--endpoint", &e];
    let resealed = admin(&url, &["secrets", "reseal", "--master-key", &b, "--previous-master-keys", &a]);
    let id_b = resealed["currentKey"].as_str().unwrap().to_string();
    assert_eq!(resealed["resealed"], 1);
    assert_eq!(resealed["secrets"], serde_json::json!({"plain": 0, "sealedUnder": {id_b.as_str(): 1}}));
    let rotated = admin(&url, &[&rotate[..], &["--master-key", &b]].concat());
    assert!(rotated["secret"].as_str().unwrap().starts_with("whsec_"));
    assert_eq!(admin(&url, &["secrets", "status"])["secrets"]["sealedUnder"][&id_b], 2, "the new secret and the one before it");

    let alone = admin_fails(&url, &["secrets", "status", "--previous-master-keys", &a]);
    assert!(alone.contains("--previous-master-keys needs --master-key"), "{alone}");
    let short = admin_fails(&url, &["secrets", "status", "--master-key", "c2hvcnQ="]);
    assert!(short.contains("a master key is 32 bytes"), "{short}");
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", file.display()));
    }
}
