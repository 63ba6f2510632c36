//! `cargo xtask s3 [--install-only]`: the report store on S3, against an
//! S3 stand-in on loopback. moto's server (pinned in
//! `tests/s3/requirements.txt`, installed in the build directory) serves
//! a bucket; the API tests' `reports::on_s3` test then runs with its
//! address, in the AWS_* variables the report store reads as an operator's
//! deployment would.

use crate::contract::{check_status, install_venv, target_dir};
use crate::http::{Conn, Request};
use crate::server::{Process, free_port};
use anyhow::{Context, Result};
use std::process::{Command, Stdio};

/// The bucket the test's `--report-store` names.
const BUCKET: &str = "switchboard-test";

pub fn run(args: &[String]) -> Result<()> {
    let root = crate::spec::root();
    let target = target_dir(&root)?;
    let tools = target.join("s3-tools");
    std::fs::create_dir_all(&tools)?;
    let venv = tools.join("venv");
    install_venv(&venv, &root.join("tests/s3/requirements.txt"), "moto (tests/s3/requirements.txt)")?;
    if args.iter().any(|a| a == "--install-only") {
        return Ok(());
    }
    let port = free_port()?;
    let log = std::fs::File::create(tools.join("moto.log"))?;
    let mut cmd = Command::new(venv.join("bin/moto_server"));
    cmd.args(["-H", "127.0.0.1", "-p", &port.to_string()]).stdout(Stdio::null()).stderr(Stdio::from(log));
    let mut moto = Process::spawn(&mut cmd, port)?;
    moto.wait_listening("moto_server")?;
    let endpoint = format!("http://127.0.0.1:{port}");
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    rt.block_on(async {
        let mut conn = Conn::open(&format!("127.0.0.1:{port}")).await?;
        conn.send(&Request::new("PUT", format!("/{BUCKET}"))).await?.success("creating the bucket")?;
        anyhow::Ok(())
    })?;
    check_status(
        Command::new(api_tests(&root)?)
            .arg("reports::on_s3")
            .current_dir(&root)
            .env("SWITCHBOARD_TEST_S3", &endpoint)
            .env("AWS_ENDPOINT", &endpoint)
            .env("AWS_ALLOW_HTTP", "true")
            .env("AWS_REGION", "us-east-1")
            .env("AWS_ACCESS_KEY_ID", "test")
            .env("AWS_SECRET_ACCESS_KEY", "test"),
        "the reports' S3 test",
    )
}

/// The API tests' executable of the workspace's test build (`cargo test
/// --workspace`, as CI builds it: selecting one test target would resolve
/// other features and build much of the tree again).
fn api_tests(root: &std::path::Path) -> Result<std::path::PathBuf> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args(["test", "--workspace", "--locked", "--no-run", "--message-format=json"])
        .current_dir(root)
        .stderr(Stdio::inherit())
        .output()
        .context("cargo test --no-run")?;
    anyhow::ensure!(out.status.success(), "cargo test --no-run exited with {}", out.status);
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find(|m| m["target"]["name"] == "api" && m["target"]["kind"][0] == "test" && m["executable"].is_string())
        .and_then(|m| m["executable"].as_str().map(Into::into))
        .context("no executable of the API tests in cargo's build")
}
