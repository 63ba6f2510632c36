//! `cargo xtask browser`: the hosted payment page in a real browser.
//! Installs Debian's Chromium only when it is missing and Playwright's
//! core from `contract/package-lock.json`, starts `serve --demo` on a fresh
//! SQLite database, and runs `contract/browser.mjs`: one screenshot of the
//! page, one real form submission that pays a new link and submits its
//! order (tests/api/payments.rs covers the page's logic over plain HTTP);
//! then `contract/reference.mjs`: the reference pages (`/api/v2/docs`),
//! every operation and event type on them, the revision switcher followed,
//! no request anywhere but the server, and a full-page screenshot,
//! `browser-run/reference-page.png` (tests/api/reference.rs covers the
//! pages over plain HTTP).

use crate::contract::{check_status, install_node, target_dir};
use crate::server::{Launch, Switchboard};
use anyhow::Result;
use std::path::Path;
use std::process::Command;

const CHROMIUM: &str = "/usr/bin/chromium";

pub fn run() -> Result<()> {
    let root = crate::spec::root();
    let target = target_dir(&root)?;
    if !Path::new(CHROMIUM).exists() {
        eprintln!("== installing Debian's chromium");
        check_status(Command::new("apt-get").args(["update", "-qq"]), "apt-get update")?;
        check_status(
            Command::new("apt-get").args(["install", "-y", "-qq", "--no-install-recommends", "chromium"]).env("DEBIAN_FRONTEND", "noninteractive"),
            "apt-get install chromium",
        )?;
    }
    let node = target.join("contract-tools/node");
    install_node(&root, &node, "Playwright's core (contract/package-lock.json)")?;
    let work = target.join("browser-run");
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work)?;
    let binary = target.join("debug/switchboard");
    let server = Switchboard::start(&Launch::demo_sqlite(&binary, &work, 1000)?)?;
    // the script where its packages are, so that it finds them
    std::fs::copy(root.join("contract/browser.mjs"), node.join("browser.mjs"))?;
    let screenshot = work.join("payment-page.png");
    let mut cmd = Command::new("node");
    cmd.arg("browser.mjs").arg(server.base()).arg(server.demo_key()?).arg(&screenshot).current_dir(&node);
    let paid = check_status(&mut cmd, "node contract/browser.mjs");
    // the reference pages, on the same server (going on past a failure of
    // the payment page, so one run shows both)
    std::fs::copy(root.join("contract/reference.mjs"), node.join("reference.mjs"))?;
    let page = work.join("reference-page.png");
    let mut cmd = Command::new("node");
    cmd.arg("reference.mjs").arg(server.base()).arg(&page).current_dir(&node);
    let shown = check_status(&mut cmd, "node contract/reference.mjs");
    match (paid, shown) {
        (Err(a), Err(b)) => Err(anyhow::anyhow!("{a}; {b}")),
        (paid, shown) => paid.and(shown),
    }
}
