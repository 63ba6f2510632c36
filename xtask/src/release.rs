//! The binaries that `bench` and `crash` run, built in one cargo call.
//! An optimised run (the default: the `dist` profile, fat LTO, as
//! packaged; `--profile release` for cargo's release profile, README's
//! first build) also re-executes the xtask as that build, since `cargo
//! xtask` runs a debug one and a debug load generator would measure mostly
//! itself. A debug run (`--debug`, `bench --smoke`) takes the debug build
//! CI has already made: it shows that a command still works, and its
//! figures mean little.

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
    /// `[profile.dist]`: as packaged, fat LTO, one code-generation unit
    Dist,
    /// `[profile.release]`: cargo's defaults, what `cargo run --release` builds
    Release,
    Debug,
}

impl Profile {
    /// The profile named on a command line (`--profile NAME`).
    pub fn named(name: &str) -> Result<Profile> {
        match name {
            "dist" => Ok(Profile::Dist),
            "release" => Ok(Profile::Release),
            "debug" | "dev" => Ok(Profile::Debug),
            _ => anyhow::bail!("unknown profile {name:?}: dist, release or debug"),
        }
    }

    /// Its directory under the target directory.
    pub fn dir(self) -> &'static str {
        match self {
            Profile::Dist => "dist",
            Profile::Release => "release",
            Profile::Debug => "debug",
        }
    }
}

pub struct Binaries {
    pub switchboard: PathBuf,
    /// `switchboard-bench` (bench/): baseline server, seeder, createdb/dropdb
    pub bench: PathBuf,
    /// where runs keep their databases and logs
    pub target: PathBuf,
    pub profile: Profile,
}

/// Builds the binaries of `profile`; for an optimised one, goes on in an
/// xtask of that build with the same arguments: this process when it is one, else
/// one that replaces it.
pub fn ensure(profile: Profile) -> Result<Binaries> {
    let root = spec::root();
    let target = target_dir(&root)?;
    match profile {
        Profile::Debug => {
            // the very build CI made (every target, so the same features):
            // nothing to do there
            cargo(&root, &["build", "--quiet", "--workspace", "--all-targets"])?;
        }
        Profile::Dist | Profile::Release => {
            if std::env::var_os(BUILT).is_none() {
                let dir = profile.dir();
                eprintln!("== {dir} build: switchboard, switchboard-bench, xtask");
                cargo(&root, &["build", "--profile", dir, "-p", "xtask", "-p", "switchboard", "-p", "switchboard-bench"])?;
                if cfg!(debug_assertions) {
                    let err = Command::new(target.join(dir).join("xtask")).args(std::env::args_os().skip(1)).env(BUILT, "1").exec();
                    return Err(err).with_context(|| format!("re-executing the {dir} xtask"));
                }
            }
        }
    }
    let dir = profile.dir();
    Ok(Binaries { switchboard: target.join(dir).join("switchboard"), bench: target.join(dir).join("switchboard-bench"), target, profile })
}
