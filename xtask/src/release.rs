//! The binaries that `bench` and `crash` run, built in one cargo call.
//! A release run (the default) also re-executes the xtask as its release
//! build, since `cargo xtask` runs a debug one and a debug load generator
//! would measure mostly itself. A debug run (`--debug`, `bench --smoke`)
//! takes the debug build CI has already made: it shows that a command still
//! works, and its figures mean little.

use crate::contract::{cargo, target_dir};
use crate::spec;
use anyhow::{Context, Result};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::Command;

/// Set for the re-executed xtask: the build is done.
const BUILT: &str = "XTASK_RELEASE_BUILT";

/// Which build the binaries come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Profile {
    Release,
    Debug,
}

pub struct Binaries {
    pub switchboard: PathBuf,
    /// `switchboard-bench` (bench/): baseline server, seeder, createdb/dropdb
    pub bench: PathBuf,
    /// where runs keep their databases and logs
    pub target: PathBuf,
    pub profile: Profile,
}

/// Builds the binaries of `profile`; for a release run, goes on in a
/// release xtask with the same arguments: this process when it is one, else
/// one that replaces it.
pub fn ensure(profile: Profile) -> Result<Binaries> {
    let root = spec::root();
    let target = target_dir(&root)?;
    let dir = match profile {
        Profile::Debug => {
            // the very build CI made (every target, so the same features):
            // nothing to do there
            cargo(&root, &["build", "--quiet", "--workspace", "--all-targets"])?;
            "debug"
        }
        Profile::Release => {
            if std::env::var_os(BUILT).is_none() {
                eprintln!("== release build: switchboard, switchboard-bench, xtask");
                cargo(&root, &["build", "--release", "-p", "xtask", "-p", "switchboard", "-p", "switchboard-bench"])?;
                if cfg!(debug_assertions) {
                    let err = Command::new(target.join("release/xtask")).args(std::env::args_os().skip(1)).env(BUILT, "1").exec();
                    return Err(err).context("re-executing the release xtask");
                }
            }
            "release"
        }
    };
    Ok(Binaries {
        switchboard: target.join(dir).join("switchboard"),
        bench: target.join(dir).join("switchboard-bench"),
        target,
        profile,
    })
}
