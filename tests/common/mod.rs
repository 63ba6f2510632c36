//! What the tests of the binary share: a fresh SQLite file, admin
//! commands, a free port, a served instance and a receiver of its spans.
#![allow(dead_code)]

pub mod collector;

use serde_json::Value;
use std::process::{Command, Stdio};

pub fn db() -> (String, std::path::PathBuf) {
    let f = std::env::temp_dir().join(format!("switchboard-cli-{}.db", uuid::Uuid::new_v4().simple()));
    (format!("sqlite://{}", f.display()), f)
}

pub fn admin(url: &str, args: &[&str]) -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_switchboard")).args(["--database-url", url, "admin"]).args(args).output().unwrap();
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{args:?} printed no JSON: {e}"))
}

/// A free port on 127.0.0.1 (taken again by the server started on it).
pub fn free_address() -> String {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().to_string()
}

/// `serve` with `args` and `env`, once `/api/v2/health` answers on `addr`.
pub async fn serve_on(url: &str, args: &[&str], env: &[(&str, &str)], addr: &str) -> std::process::Child {
    serve_logging_to(url, args, env, addr, Stdio::null()).await
}

/// `serve_on`, its log written to `log`.
pub async fn serve_logging_to(url: &str, args: &[&str], env: &[(&str, &str)], addr: &str, log: Stdio) -> std::process::Child {
    let files = std::env::temp_dir().join(format!("switchboard-cli-{}", uuid::Uuid::new_v4().simple()));
    let mut command = Command::new(env!("CARGO_BIN_EXE_switchboard"));
    // (the test's OpenTelemetry settings, not the machine's)
    for (name, _) in std::env::vars_os().filter(|(k, _)| k.to_string_lossy().starts_with("OTEL_")) {
        command.env_remove(name);
    }
    let mut child = command
        .args(["--database-url", url, "serve", "--data-dir"])
        .arg(&files)
        .args(args)
        .envs(env.iter().copied())
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .unwrap();
    let health = format!("http://{addr}/api/v2/health");
    for _ in 0..500 {
        if reqwest::get(&health).await.is_ok_and(|r| r.status() == 200) {
            return child;
        }
        assert!(child.try_wait().unwrap().is_none(), "serve {args:?} exited");
        // (polling for the server to come up, not waiting for time)
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    panic!("serve {args:?} {env:?} did not answer on {addr}");
}
