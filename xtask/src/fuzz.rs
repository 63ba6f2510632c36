//! `cargo xtask fuzz [--seconds N] [--cmin] [TARGET...]`: runs the fuzz
//! targets of `fuzz/` (docs/fuzzing.md) with cargo-fuzz on the nightly
//! toolchain, each for N seconds in turn (60 by default), and reports per
//! target the inputs run and the crashes; any crash fails the run, naming
//! its artifact. Installs the pinned cargo-fuzz when missing. New inputs
//! go to a corpus in the build directory; `--cmin` adds to `fuzz/corpus/`
//! only those that add coverage to it (what is there stays).

use crate::contract::{check_status, target_dir};
use anyhow::{Context, Result, bail};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// The cargo-fuzz this runs (`cargo install --locked`).
const CARGO_FUZZ: &str = "0.13.2";

struct Options {
    seconds: u64,
    cmin: bool,
    targets: Vec<String>,
}

fn parse(args: &[String]) -> Result<Options> {
    let mut o = Options { seconds: 60, cmin: false, targets: vec![] };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--seconds" => o.seconds = it.next().context("--seconds needs a number")?.parse().context("--seconds needs a number")?,
            "--cmin" => o.cmin = true,
            flag if flag.starts_with('-') => bail!("fuzz: unknown argument {flag}"),
            target => o.targets.push(target.to_string()),
        }
    }
    Ok(o)
}

/// `cargo +nightly fuzz ...` in the repository, with the nightly
/// toolchain's own cargo (not the one that runs this xtask), building into
/// `build` (the targets are safe Rust, built with debug assertions and
/// overflow checks: what a sanitizer adds is checks of C code, which it
/// does not instrument here, at half the speed).
fn cargo_fuzz(root: &Path, build: &Path, subcommand: &str) -> Command {
    let mut cmd = Command::new("cargo");
    cmd.args(["+nightly", "fuzz", subcommand, "--sanitizer", "none", "--debug-assertions", "--target-dir"])
        .arg(build)
        .current_dir(root)
        .env_remove("CARGO")
        .env_remove("RUSTUP_TOOLCHAIN")
        .env_remove("CARGO_TARGET_DIR");
    cmd
}

/// The installed cargo-fuzz's version, if any.
fn installed() -> Option<String> {
    let out = Command::new("cargo").args(["+nightly", "fuzz", "--version"]).env_remove("CARGO").output().ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    out.status.success().then(|| text.split_whitespace().nth(1).unwrap_or_default().to_string())
}

fn install() -> Result<()> {
    let nightly = Command::new("cargo").args(["+nightly", "--version"]).env_remove("CARGO").output();
    if !nightly.is_ok_and(|o| o.status.success()) {
        bail!("the nightly toolchain is needed: rustup toolchain install nightly");
    }
    match installed() {
        Some(v) if v == CARGO_FUZZ => Ok(()),
        found => {
            eprintln!("== installing cargo-fuzz {CARGO_FUZZ} (found: {})", found.as_deref().unwrap_or("none"));
            let version = format!("={CARGO_FUZZ}");
            check_status(
                Command::new("cargo").args(["install", "cargo-fuzz", "--version", &version, "--locked"]).env_remove("CARGO"),
                "cargo install cargo-fuzz",
            )
        }
    }
}

/// What one target's run did.
struct Outcome {
    name: String,
    runs: u64,
    execs_per_second: u64,
    new_inputs: usize,
    crash: Option<String>,
}

/// The value of libFuzzer's final `stat::NAME: value` line.
fn stat(log: &str, name: &str) -> u64 {
    let key = format!("stat::{name}:");
    log.lines().filter_map(|l| l.trim().strip_prefix(&key)).filter_map(|v| v.trim().parse().ok()).next_back().unwrap_or(0)
}

fn files(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir).map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.is_file()).collect()).unwrap_or_default()
}

fn run_target(root: &Path, build: &Path, name: &str, seconds: u64) -> Result<Outcome> {
    let scratch = build.join("corpus").join(name);
    std::fs::create_dir_all(&scratch)?;
    let before = files(&scratch).len();
    let log_path = build.join("logs").join(format!("{name}.log"));
    std::fs::create_dir_all(log_path.parent().expect("a directory"))?;
    let log = std::fs::File::create(&log_path)?;
    // new inputs go to the scratch corpus (the first); the kept one is read
    let status = cargo_fuzz(root, build, "run")
        .arg(name)
        .arg(&scratch)
        .arg(root.join("fuzz/corpus").join(name))
        .args(["--", &format!("-max_total_time={seconds}"), "-timeout=30", "-print_final_stats=1"])
        .stdout(log.try_clone()?)
        .stderr(log)
        .status()
        .context("starting cargo fuzz run")?;
    let text = std::fs::read_to_string(&log_path).unwrap_or_default();
    let artifact =
        text.lines().filter_map(|l| l.split("Test unit written to ").nth(1)).map(|p| root.join("fuzz").join(p.trim()).display().to_string()).next_back();
    let crash = match (status.success(), artifact) {
        (true, _) => None,
        (false, Some(a)) => Some(a),
        (false, None) => Some(format!("cargo fuzz run exited with {status}; see {}", log_path.display())),
    };
    if crash.is_some() {
        let tail: Vec<&str> = text.lines().rev().take(40).collect();
        eprintln!("{}", tail.into_iter().rev().collect::<Vec<_>>().join("\n"));
    }
    Ok(Outcome {
        name: name.to_string(),
        runs: stat(&text, "number_of_executed_units"),
        execs_per_second: stat(&text, "average_exec_per_sec"),
        new_inputs: files(&scratch).len().saturating_sub(before),
        crash,
    })
}

/// The scratch corpus's inputs that add coverage to `fuzz/corpus/NAME`,
/// added to it (libFuzzer's `-merge=1`, which `cargo fuzz cmin` runs
/// too): what is there stays, under its own name (the seeds, the crashes
/// fixed), so only the additions are minimised.
fn cmin(root: &Path, build: &Path, name: &str) -> Result<(usize, usize)> {
    let kept = root.join("fuzz/corpus").join(name);
    let before = files(&kept).len();
    let log = std::fs::File::create(build.join("logs").join(format!("{name}.cmin.log")))?;
    let status = cargo_fuzz(root, build, "run")
        .arg(name)
        .arg(&kept)
        .arg(build.join("corpus").join(name))
        .args(["--", "-merge=1", "-timeout=30"])
        .stdout(log.try_clone()?)
        .stderr(log)
        .status()
        .context("starting cargo fuzz run -merge=1")?;
    if !status.success() {
        bail!("merging into fuzz/corpus/{name} exited with {status}; see {}", build.join("logs").join(format!("{name}.cmin.log")).display());
    }
    Ok((before, files(&kept).len()))
}

pub fn run(args: &[String]) -> Result<()> {
    let o = parse(args)?;
    let root = crate::spec::root();
    let build = target_dir(&root)?.join("fuzz");
    let mut all: Vec<String> = files(&root.join("fuzz/fuzz_targets")).iter().filter_map(|p| p.file_stem()?.to_str().map(str::to_string)).collect();
    all.sort();
    if let Some(unknown) = o.targets.iter().find(|t| !all.contains(t)) {
        bail!("fuzz: no target {unknown}; the targets are {}", all.join(", "));
    }
    let targets = if o.targets.is_empty() { all } else { o.targets.clone() };
    install()?;
    eprintln!("== build the fuzz targets (nightly, into {})", build.display());
    let started = Instant::now();
    check_status(&mut cargo_fuzz(&root, &build, "build"), "cargo fuzz build")?;
    eprintln!("   built in {:.0}s", started.elapsed().as_secs_f64());
    let mut outcomes = vec![];
    for name in &targets {
        eprintln!("== fuzz {name} for {} s", o.seconds);
        let outcome = run_target(&root, &build, name, o.seconds)?;
        eprintln!(
            "   {} runs ({}/s), {} new inputs, {}",
            outcome.runs,
            outcome.execs_per_second,
            outcome.new_inputs,
            outcome.crash.as_deref().unwrap_or("no crash")
        );
        outcomes.push(outcome);
    }
    if o.cmin {
        for name in &targets {
            eprintln!("== cmin {name} (what the run found that adds coverage)");
            let (before, after) = cmin(&root, &build, name)?;
            eprintln!("   fuzz/corpus/{name}: {before} -> {after} files");
        }
    }
    println!("\n{:<20} {:>12} {:>9} {:>5}  crash", "target", "runs", "runs/s", "new");
    for r in &outcomes {
        println!("{:<20} {:>12} {:>9} {:>5}  {}", r.name, r.runs, r.execs_per_second, r.new_inputs, r.crash.as_deref().unwrap_or("-"));
    }
    let crashed: Vec<&Outcome> = outcomes.iter().filter(|r| r.crash.is_some()).collect();
    if !crashed.is_empty() {
        bail!(
            "{} of {} targets crashed: {}. Fix the bug, add a unit test beside the code, then add the artifact to fuzz/corpus/<target>/ (docs/fuzzing.md)",
            crashed.len(),
            outcomes.len(),
            crashed.iter().map(|r| format!("{} ({})", r.name, r.crash.as_deref().unwrap_or_default())).collect::<Vec<_>>().join(", ")
        );
    }
    Ok(())
}
