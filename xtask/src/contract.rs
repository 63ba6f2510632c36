//! `cargo xtask contract`: every operation in `spec/` checked against the
//! running server. Installs the pinned tools (Spectral from npm,
//! schemathesis from PyPI) into the build directory, lints both documents,
//! runs schemathesis once per revision against `serve --demo` on SQLite,
//! and runs the endpoint sweeps of the Rust suite (`tests/api/sweeps.rs`).

use crate::server::{Launch, Switchboard};
use crate::spec;
use anyhow::{Context, Result, bail};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// The checks of every schemathesis run: all that judge a single response
/// or a pair of requests. Per-operation exceptions, if ever needed, go in
/// `contract/schemathesis.toml` with their reason.
const CHECKS: &str = "not_a_server_error,status_code_conformance,content_type_conformance,\
response_headers_conformance,response_schema_conformance,negative_data_rejection,\
positive_data_acceptance,missing_required_header,ignored_auth,unsupported_method";

/// A fixed seed keeps CI repeatable; `--seed random` explores.
const DEFAULT_SEED: &str = "20261121";

pub struct Options {
    pub install_only: bool,
    pub seed: String,
    pub max_examples: u32,
    pub sweeps: bool,
}

impl Options {
    pub fn parse(args: &[String]) -> Result<Options> {
        let mut o = Options { install_only: false, seed: DEFAULT_SEED.into(), max_examples: 100, sweeps: true };
        let mut it = args.iter();
        while let Some(a) = it.next() {
            match a.as_str() {
                "--install-only" => o.install_only = true,
                "--no-sweeps" => o.sweeps = false,
                "--seed" => o.seed = it.next().context("--seed needs a number or `random`")?.clone(),
                "--max-examples" => {
                    o.max_examples = it.next().context("--max-examples needs a number")?.parse()?;
                }
                other => bail!("contract: unknown argument {other}"),
            }
        }
        Ok(o)
    }
}

pub fn run(o: &Options) -> Result<()> {
    let root = spec::root();
    let target = target_dir(&root)?;
    let tools = Tools::install(&root, &target.join("contract-tools"))?;
    if o.install_only {
        return Ok(());
    }
    let mut failed = vec![];
    step("spec lint (Spectral)", &mut failed, || tools.lint(&root));
    // every target, as CI's build, so that nothing is built again
    step("build the server", &mut failed, || cargo(&root, &["build", "--quiet", "--workspace", "--all-targets"]));
    if failed.is_empty() {
        let work = target.join("contract-run");
        let _ = std::fs::remove_dir_all(&work);
        std::fs::create_dir_all(&work)?;
        // the fuzzers send thousands of requests a second with one key,
        // from one address, often for the same email address
        let binary = target.join("debug/switchboard");
        let mut launch = Launch::demo_sqlite(&binary, &work, 1_000_000)?;
        // a webhook URL is refused by what its host resolves to, which no
        // schema can say: the run accepts any http(s) URL the schema allows
        launch.args = vec!["--webhooks-allow-private".into(), "--webhooks-allow-http".into()];
        // and sends deliveries to a proxy that is not there (the discard
        // port on loopback): no name the fuzzer drew is looked up, no
        // connection leaves the machine
        launch.args.extend(["--webhooks-proxy".into(), "http://127.0.0.1:9".into()]);
        let server = Switchboard::start(&launch)?;
        let demo_ids = demo_payment_ids(&server)?;
        for revision in spec::load_revisions()? {
            let label = format!("schemathesis, {}", revision.name);
            if revision.retired_today() {
                continue;
            }
            step(&label, &mut failed, || tools.schemathesis(&root, &server, &revision, o, &work, &demo_ids));
        }
    }
    if o.sweeps {
        step("endpoint sweeps (cargo test --test api sweeps)", &mut failed, || cargo(&root, &["test", "--quiet", "--test", "api", "sweeps::"]));
    }
    if failed.is_empty() {
        eprintln!("contract: all checks passed");
        Ok(())
    } else {
        bail!("contract: failed: {}", failed.join("; "))
    }
}

/// The ids of the demo's payment links, intents, profiles, sessions and
/// invoices,
/// and of a profile session made here, which have no `rid_` references a
/// dictionary could name: passed to the hooks (`contract/hooks.py`) in the
/// environment, comma-separated, so that half of the positive cases name
/// an object that exists.
fn demo_payment_ids(server: &Switchboard) -> Result<Vec<(String, String)>> {
    let key = server.demo_key()?.to_string();
    let addr = server.base().trim_start_matches("http://").to_string();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    runtime.block_on(async {
        let mut conn = crate::http::Conn::open(&addr).await?;
        let mut ids = vec![];
        for (var, path, field) in [
            ("SWITCHBOARD_DEMO_PAYMENT_LINKS", "/api/v2/payment-links", "paymentLinkId"),
            ("SWITCHBOARD_DEMO_PAYMENT_INTENTS", "/api/v2/payment-intents", "paymentIntentId"),
            ("SWITCHBOARD_DEMO_PAYMENT_PROFILES", "/api/v2/payment-profiles?customerId=rid_maria", "paymentProfileId"),
            ("SWITCHBOARD_DEMO_INVOICES", "/api/v2/invoices", "invoiceId"),
            ("SWITCHBOARD_DEMO_REPORT_RUNS", "/api/v2/reports?reportKey=subscriptions", "reportRunId"),
        ] {
            let answer = conn.send(&crate::http::Request::get(path).header("x-api-key", key.clone())).await?.success(path)?.json()?;
            let found: Vec<&str> = answer["items"].as_array().into_iter().flatten().filter_map(|i| i[field].as_str()).collect();
            if found.is_empty() {
                bail!("the demo has no {field}");
            }
            ids.push((var.to_string(), found.join(",")));
        }
        // sessions are named by their intents (the demo's Maria pays one
        // order through a session)
        let mut sessions = vec![];
        for intent in ids[1].1.split(',') {
            let path = format!("/api/v2/payment-intents/{intent}");
            let answer = conn.send(&crate::http::Request::get(path.as_str()).header("x-api-key", key.clone())).await?.success(&path)?.json()?;
            sessions.extend(answer["paymentSessionId"].as_str().map(str::to_string));
        }
        if sessions.is_empty() {
            bail!("the demo has no payment session");
        }
        ids.push(("SWITCHBOARD_DEMO_PAYMENT_SESSIONS".to_string(), sessions.join(",")));
        // profile sessions have no list: one is made for the order of the
        // demo's first link
        let links = conn.send(&crate::http::Request::get("/api/v2/payment-links").header("x-api-key", key.clone())).await?.json()?;
        let setup =
            serde_json::json!({"orderId": links["items"][0]["orderId"], "paymentProvider": "PROVIDER_1", "returnUrl": "https://shop.example/card-saved"});
        let path = "/api/v2/payment-profiles/sessions";
        let answer = conn.send(&crate::http::Request::json("POST", path, setup.to_string()).header("x-api-key", key.clone())).await?.success(path)?.json()?;
        let setup_id = answer["paymentProfileSessionId"].as_str().ok_or_else(|| anyhow::anyhow!("{path} answered no id"))?;
        ids.push(("SWITCHBOARD_DEMO_PAYMENT_PROFILE_SESSIONS".to_string(), setup_id.to_string()));
        Ok(ids)
    })
}

/// Runs one step, reporting its time; a failure is noted and the next step
/// still runs, so one run shows every broken check.
pub(crate) fn step(label: &str, failed: &mut Vec<String>, f: impl FnOnce() -> Result<()>) {
    eprintln!("== {label}");
    let started = Instant::now();
    match f() {
        Ok(()) => eprintln!("   ok in {:.1}s", started.elapsed().as_secs_f64()),
        Err(e) => {
            eprintln!("   FAILED in {:.1}s: {e:#}", started.elapsed().as_secs_f64());
            failed.push(label.to_string());
        }
    }
}

pub(crate) fn cargo(root: &Path, args: &[&str]) -> Result<()> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    check_status(Command::new(cargo).args(args).current_dir(root), "cargo")
}

pub(crate) fn check_status(cmd: &mut Command, what: &str) -> Result<()> {
    let status = cmd.status().with_context(|| format!("starting {what}"))?;
    if !status.success() {
        bail!("{what} exited with {status}");
    }
    Ok(())
}

pub(crate) fn target_dir(root: &Path) -> Result<PathBuf> {
    if let Ok(dir) = std::env::var("CARGO_TARGET_DIR") {
        let dir = PathBuf::from(dir);
        return Ok(if dir.is_absolute() { dir } else { root.join(dir) });
    }
    Ok(root.join("target"))
}

/// The pinned linters and fuzzers, installed once per lock-file content.
struct Tools {
    venv: PathBuf,
    node: PathBuf,
}

impl Tools {
    fn install(root: &Path, dir: &Path) -> Result<Tools> {
        let contract = root.join("contract");
        let tools = Tools { venv: dir.join("venv"), node: dir.join("node") };
        install_venv(&tools.venv, &contract.join("requirements.txt"), "schemathesis (contract/requirements.txt)")?;
        install_node(root, &tools.node, "Spectral (contract/package-lock.json)")?;
        Ok(tools)
    }

    fn lint(&self, root: &Path) -> Result<()> {
        let mut cmd = Command::new(self.node.join("node_modules/.bin/spectral"));
        cmd.args(["lint", "--fail-severity", "warn", "--ruleset", "contract/lint/spectral.yaml"]);
        for r in spec::load_revisions()? {
            cmd.arg(&r.file);
        }
        check_status(cmd.current_dir(root), "spectral lint")
    }

    fn schemathesis(&self, root: &Path, server: &Switchboard, r: &spec::Revision, o: &Options, work: &Path, demo_ids: &[(String, String)]) -> Result<()> {
        let contract = root.join("contract");
        let mut cmd = Command::new(self.venv.join("bin/schemathesis"));
        cmd.arg("--config-file")
            .arg(contract.join("schemathesis.toml"))
            .arg("run")
            .arg(root.join(&r.file))
            .args(["--url", &format!("{}/api/v2", server.base())])
            .args(["--header", &format!("X-Api-Key: {}", server.demo_key()?)])
            .args(["--header", &format!("Api-Revision: {}", r.name)])
            .args(["--checks", CHECKS])
            .args(["--max-examples", &o.max_examples.to_string()])
            .args(["--generation-database", "none", "--no-color"])
            .args(["--report", "junit", "--report-dir"])
            .arg(work.join(format!("report-{}", r.short)))
            .env("PYTHONPATH", &contract)
            .env("SCHEMATHESIS_HOOKS", "hooks")
            .envs(demo_ids.iter().map(|(k, v)| (k, v)))
            .current_dir(work);
        if o.seed != "random" {
            cmd.args(["--seed", &o.seed]);
        }
        check_status(&mut cmd, "schemathesis")
    }
}

/// A venv at `venv` with exactly the pins of `requirements` (`--no-deps`:
/// the file lists the whole closure), made anew when that file changes.
pub(crate) fn install_venv(venv: &Path, requirements: &Path, what: &str) -> Result<()> {
    fresh_or(venv, &[requirements], || {
        eprintln!("== installing {what}");
        let _ = std::fs::remove_dir_all(venv);
        check_status(Command::new("python3").args(["-m", "venv"]).arg(venv), "python3 -m venv")?;
        check_status(
            Command::new(venv.join("bin/pip")).args(["install", "--quiet", "--disable-pip-version-check", "--no-deps", "-r"]).arg(requirements),
            "pip install",
        )
    })
}

/// `contract/package-lock.json`'s packages in `dir/node_modules`, installed
/// anew when it or `contract/package.json` changes.
pub(crate) fn install_node(root: &Path, dir: &Path, what: &str) -> Result<()> {
    let contract = root.join("contract");
    let (package, lock) = (contract.join("package.json"), contract.join("package-lock.json"));
    fresh_or(dir, &[&package, &lock], || {
        eprintln!("== installing {what}");
        let _ = std::fs::remove_dir_all(dir);
        std::fs::create_dir_all(dir)?;
        std::fs::copy(&package, dir.join("package.json"))?;
        std::fs::copy(&lock, dir.join("package-lock.json"))?;
        check_status(Command::new("npm").args(["ci", "--no-audit", "--no-fund", "--loglevel=error"]).current_dir(dir), "npm ci")
    })
}

/// Runs `install` unless `dir` holds a stamp of the current `inputs`.
fn fresh_or(dir: &Path, inputs: &[&Path], install: impl FnOnce() -> Result<()>) -> Result<()> {
    let mut hash = Sha256::new();
    for input in inputs {
        hash.update(std::fs::read(input).with_context(|| format!("{}", input.display()))?);
    }
    let want = hex::encode(hash.finalize());
    let stamp = dir.join(".installed-from");
    if std::fs::read_to_string(&stamp).ok().as_deref() == Some(want.as_str()) {
        return Ok(());
    }
    install()?;
    std::fs::write(stamp, want)?;
    Ok(())
}
