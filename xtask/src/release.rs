//! The release binaries that `bench` and `crash` run, built in one cargo
//! call; the xtask itself is among them and re-executes as that release
//! build, since `cargo xtask` runs a debug one and a debug load generator
//! would measure mostly itself.

use crate::contract::{cargo, target_dir};
use crate::spec;
use anyhow::{Context, Result};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::Command;

/// Set for the re-executed xtask: the build is done.
const BUILT: &str = "XTASK_RELEASE_BUILT";

pub struct Binaries {
    pub switchboard: PathBuf,
    /// `switchboard-bench` (bench/): baseline server, seeder, createdb/dropdb
    pub bench: PathBuf,
    /// where runs keep their databases and logs
    pub target: PathBuf,
}

/// Builds the binaries, then goes on in a release xtask with the same
/// arguments: this process when it is one, else one that replaces it.
pub fn ensure() -> Result<Binaries> {
    let root = spec::root();
    let target = target_dir(&root)?;
    if std::env::var_os(BUILT).is_none() {
        eprintln!("== release build: switchboard, switchboard-bench, xtask");
        cargo(&root, &["build", "--release", "-p", "switchboard", "-p", "switchboard-bench", "-p", "xtask"])?;
        if cfg!(debug_assertions) {
            let err = Command::new(target.join("release/xtask")).args(std::env::args_os().skip(1)).env(BUILT, "1").exec();
            return Err(err).context("re-executing the release xtask");
        }
    }
    Ok(Binaries {
        switchboard: target.join("release/switchboard"),
        bench: target.join("release/switchboard-bench"),
        target,
    })
}
