//! `cargo xtask clients`: the revision documents, as the server serves them,
//! through the three client generators integrators use (openapi-typescript
//! with openapi-fetch, openapi-python-client, openapi-generator's python),
//! with no flag or hand edit a default run lacks. Each revision's client
//! must be generated without warnings, type-check strictly and accept every
//! example of its document, then run a short scenario in its revision
//! against `serve --demo`. Installs the pinned tools first.

mod examples;
mod generators;

use crate::contract::{install_node, install_venv, step, target_dir};
use crate::http::{Conn, Request};
use crate::server::{Launch, Switchboard};
use crate::spec;
use anyhow::{Context, Result, bail};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

pub struct Options {
    pub install_only: bool,
    /// the server binary; `<target>/debug/switchboard` without it
    pub server: Option<PathBuf>,
}

impl Options {
    pub fn parse(args: &[String]) -> Result<Options> {
        let mut o = Options { install_only: false, server: None };
        let mut it = args.iter();
        while let Some(a) = it.next() {
            match a.as_str() {
                "--install-only" => o.install_only = true,
                "--server" => o.server = Some(it.next().context("--server needs a path")?.into()),
                other => bail!("clients: unknown argument {other}"),
            }
        }
        Ok(o)
    }
}

/// Where the tools are: the TypeScript ones are contract/package.json's
/// (shared with `cargo xtask contract`), the Python ones a venv of their own.
pub(crate) struct Tools {
    pub(crate) node_bin: PathBuf,
    pub(crate) venv_bin: PathBuf,
    /// openapi-generator needs a java; where `java -version` fails, its
    /// checks are skipped and say so
    pub(crate) java: bool,
}

/// One revision's run: its served document and where its clients go.
pub(crate) struct Revision {
    /// `2026-09-01.bullfinch`
    pub(crate) name: String,
    /// `bullfinch`
    pub(crate) short: String,
    /// `spec/2026-09-01.bullfinch.json`: what the server must serve
    pub(crate) file: String,
    /// `<target>/clients-run/bullfinch`
    pub(crate) dir: PathBuf,
    pub(crate) examples: Vec<examples::Example>,
}

/// The live server a scenario talks to.
pub(crate) struct Target {
    /// `http://127.0.0.1:PORT/api/v2`
    pub(crate) url: String,
    pub(crate) key: String,
}

pub fn run(o: &Options) -> Result<()> {
    let root = spec::root();
    let target = target_dir(&root)?;
    let tool_dir = target.join("contract-tools");
    let node = tool_dir.join("node");
    install_node(&root, &node, "the TypeScript tools and Spectral (contract/package-lock.json)")?;
    let venv = tool_dir.join("clients-venv");
    let requirements = root.join("contract/clients/requirements.txt");
    install_venv(&venv, &requirements, "the Python client generators (contract/clients/requirements.txt)")?;
    if o.install_only {
        return Ok(());
    }
    let tools = Tools {
        node_bin: node.join("node_modules/.bin"),
        venv_bin: venv.join("bin"),
        java: Command::new("java").arg("-version").stderr(Stdio::null()).status().is_ok_and(|s| s.success()),
    };

    // generated clients and the database are made anew each run; the mypy
    // cache (`mypy-cache/`) stays, so a warm run checks only what changed
    let work = target.join("clients-run");
    std::fs::create_dir_all(&work)?;
    for stale in ["switchboard.db", "switchboard.db-wal", "switchboard.db-shm", "server.log"] {
        let _ = std::fs::remove_file(work.join(stale));
    }
    // the compiled scenario imports openapi-fetch from here, as node looks
    // for packages in the node_modules of the folders above it
    let modules = work.join("node_modules");
    let _ = std::fs::remove_file(&modules);
    std::os::unix::fs::symlink(node.join("node_modules"), &modules).context("linking clients-run/node_modules")?;

    let binary = match &o.server {
        Some(binary) => binary.clone(),
        None => {
            // the server of this checkout, as CI's build (every target:
            // nothing is built again there)
            crate::contract::cargo(&root, &["build", "--quiet", "--workspace", "--all-targets"])?;
            target.join("debug/switchboard")
        }
    };
    // the contract run's rate limit: what is checked here is the clients
    let server = Switchboard::start(&Launch::demo_sqlite(&binary, &work, 1_000_000)?)?;
    let live = Target { url: format!("{}/api/v2", server.base()), key: server.demo_key()?.to_string() };

    let mut failed = vec![];
    for r in spec::load_revisions()? {
        if r.retired_today() {
            continue;
        }
        let dir = work.join(&r.short);
        let mut revision = Revision { name: r.name.clone(), short: r.short.clone(), file: r.file.clone(), dir, examples: vec![] };
        let label = format!("{}: GET /api/v2/openapi/{}.json, its examples", r.short, r.name);
        let mut fetched = false;
        step(&label, &mut failed, || {
            revision.examples = served(&server, &revision)?;
            fetched = true;
            Ok(())
        });
        if !fetched {
            // without the document and its examples placed there is
            // nothing to check the clients with; the step says why
            continue;
        }
        generators::typescript(&tools, &root, &revision, &live, &mut failed);
        generators::python_client(&tools, &root, &work, &revision, &live, &mut failed);
        if tools.java {
            generators::openapi_generator(&tools, &root, &revision, &live, &mut failed);
        } else {
            eprintln!("== openapi-generator python, {}: SKIPPED: `java -version` failed (no java on PATH)", r.short);
        }
    }
    drop(server);
    if failed.is_empty() {
        let skipped = if tools.java { "" } else { " but openapi-generator's, which needs a java" };
        eprintln!("clients: all checks{skipped} passed");
        Ok(())
    } else {
        bail!("clients: {} failed: {}", failed.len(), failed.join("; "))
    }
}

/// Downloads the revision's document as the server serves it into a fresh
/// `dir/openapi.json` and places its examples (an example the check cannot
/// place fails here, after the document is written).
fn served(server: &Switchboard, r: &Revision) -> Result<Vec<examples::Example>> {
    let _ = std::fs::remove_dir_all(&r.dir);
    std::fs::create_dir_all(&r.dir)?;
    let path = format!("/api/v2/openapi/{}.json", r.name);
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let answer = runtime.block_on(async {
        let mut conn = Conn::open(&server.process.addr()).await?;
        conn.send(&Request::get(&path)).await
    })?;
    let answer = answer.success(&format!("GET {path}"))?;
    // the bytes as served: the generators see the document's own order
    std::fs::write(r.dir.join("openapi.json"), &answer.body)?;
    if answer.body != std::fs::read(spec::root().join(&r.file))? {
        bail!("the server serves another {} than {} (a server built before the document changed?)", r.name, r.file);
    }
    let doc = answer.json()?;
    let examples = examples::collect(&doc)?;
    let manifest = examples::manifest(&doc, &examples);
    std::fs::write(r.dir.join("examples.json"), serde_json::to_vec_pretty(&manifest)?)?;
    let parsed = manifest.as_array().map_or(0, Vec::len);
    eprintln!("   {} examples placed, {parsed} of them parsed by the Python clients' models", examples.len());
    Ok(examples)
}

/// Runs `cmd` with its output captured: whether it succeeded, and its
/// stdout followed by its stderr (an error only if it could not start).
pub(crate) fn output(cmd: &mut Command, what: &str) -> Result<(bool, String)> {
    let out = cmd.stderr(Stdio::piped()).stdout(Stdio::piped()).output().with_context(|| format!("starting {what}"))?;
    let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&out.stderr));
    Ok((out.status.success(), text))
}

/// Prints `text` indented under the step.
pub(crate) fn show(text: &str) {
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        eprintln!("   | {line}");
    }
}

/// `cmd` with `bin` first on PATH: the venv's tools call each other (the
/// Python generator runs ruff; openapi-generator-cli finds java on PATH).
pub(crate) fn with_path(mut cmd: Command, bin: &Path) -> Command {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut dirs = vec![bin.to_path_buf()];
    dirs.extend(std::env::split_paths(&path));
    cmd.env("PATH", std::env::join_paths(dirs).unwrap_or(path));
    cmd
}
