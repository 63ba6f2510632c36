//! Developer commands: `cargo xtask spec [--check]` writes the published
//! revision documents `spec/*.json` from their source in `spec/src/`;
//! `cargo xtask codegen [--check]` turns `spec/` into
//! `generated/`; `cargo xtask diff A B` reports breaking changes between two
//! revision documents; `cargo xtask changes [--check]` keeps `spec/CHANGES.md`;
//! `cargo xtask contract` checks the running server against `spec/`;
//! `cargo xtask clients` checks that the served documents make working
//! clients with openapi-typescript, openapi-python-client and openapi-generator;
//! `cargo xtask bench` measures throughput, latency and memory against a
//! baseline server, `cargo xtask bench webhooks` whether delivery keeps up
//! with writes, and `cargo xtask bench login` what login start reveals
//! by its timing; `cargo xtask crash` kills the server under idempotent
//! writes and checks that each was executed exactly once; `cargo xtask s3`
//! runs the report store's test against an S3 stand-in; `cargo xtask fuzz`
//! runs the fuzz targets of `fuzz/` (cargo-fuzz, nightly).

mod api;
mod backwards;
mod bench;
mod benchtool;
mod browser;
mod clients;
mod codegen;
mod contract;
mod crash;
mod diff;
mod fuzz;
mod http;
mod load;
mod release;
mod rng;
mod s3;
mod server;
mod source;
mod spec;

use anyhow::{Result, bail};

const USAGE: &str = "usage: cargo xtask spec [--check] | codegen [--check] | diff A.json B.json | changes [--check] \
| contract [--install-only] [--no-sweeps] [--seed N|random] [--max-examples N] \
| clients [--install-only] [--server PATH] \
| bench [--quick] [--rounds N] [--duration S] [--warmup S] [--connections N] [--customers N] | bench login | bench webhooks \
| bench report [--rows N] [--smoke] | crash [--kills N] [--seed S] | browser | s3 [--install-only] \
| fuzz [--seconds N] [--cmin] [TARGET...]";

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let check = args.iter().any(|a| a == "--check");
    match args.first().map(String::as_str) {
        Some("spec") => sync_files(&source::documents()?, check),
        Some("codegen") => {
            let revisions = spec::load_revisions()?;
            let files = codegen::generate(&revisions)?;
            let mut files = files;
            files.push(("spec/CHANGES.md".into(), diff::changes_report(&revisions)?));
            sync_files(&files, check)
        }
        Some("changes") => {
            let revisions = spec::load_revisions()?;
            sync_files(&[("spec/CHANGES.md".into(), diff::changes_report(&revisions)?)], check)
        }
        Some("contract") => contract::run(&contract::Options::parse(&args[1..])?),
        Some("clients") => clients::run(&clients::Options::parse(&args[1..])?),
        Some("bench") => bench::run(&args[1..]),
        Some("crash") => crash::run(&args[1..]),
        Some("browser") => browser::run(),
        Some("s3") => s3::run(&args[1..]),
        Some("fuzz") => fuzz::run(&args[1..]),
        Some("diff") => {
            let [_, a, b] = &args[..] else { bail!(USAGE) };
            let a = spec::Revision::load(std::path::Path::new(a))?;
            let b = spec::Revision::load(std::path::Path::new(b))?;
            print!("{}", diff::report(&a, &b));
            Ok(())
        }
        _ => bail!(USAGE),
    }
}

/// Writes `files` (paths relative to the repository root), or with `check`
/// fails naming every file whose content differs from what is on disk.
fn sync_files(files: &[(String, String)], check: bool) -> Result<()> {
    let root = spec::root();
    let mut stale = vec![];
    for (rel, content) in files {
        let path = root.join(rel);
        let current = std::fs::read_to_string(&path).unwrap_or_default();
        if current == *content {
            continue;
        }
        if check {
            stale.push(rel.clone());
        } else {
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir)?;
            }
            std::fs::write(&path, content)?;
            eprintln!("wrote {rel}");
        }
    }
    if !stale.is_empty() {
        bail!("stale: {}; run `cargo xtask spec` (spec/src/ -> spec/), then `cargo xtask codegen` (spec/ -> generated/)", stale.join(", "));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    /// The checked-in generated code and change report match what spec/ produces.
    #[test]
    fn generated_and_changes_are_fresh() {
        let revisions = crate::spec::load_revisions().unwrap();
        let mut files = crate::codegen::generate(&revisions).unwrap();
        files.push(("spec/CHANGES.md".into(), crate::diff::changes_report(&revisions).unwrap()));
        crate::sync_files(&files, true).unwrap();
    }

    /// The published documents are what `spec/src/` and its change files
    /// make.
    #[test]
    fn the_documents_are_made_from_their_source() {
        crate::sync_files(&crate::source::documents().unwrap(), true).unwrap();
    }
}
