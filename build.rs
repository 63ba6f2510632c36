//! Refuses to build when generated/ is stale against spec/: the generated
//! code records the SHA-256 of the documents it came from.

use sha2::{Digest, Sha256};
use std::path::Path;

fn main() {
    println!("cargo:rerun-if-changed=spec");
    // sqlx::migrate! embeds migrations/ at compile time and sees a new
    // file only when the crate is rebuilt
    println!("cargo:rerun-if-changed=migrations");
    println!("cargo:rerun-if-changed=generated/api.rs");
    println!("cargo:rerun-if-changed=generated/wire.rs");
    let mut files: Vec<String> = std::fs::read_dir("spec")
        .expect("spec/ exists")
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.extension().and_then(|s| s.to_str()) == Some("json"))
        .map(|p| format!("spec/{}", p.file_name().unwrap().to_string_lossy()))
        .collect();
    files.sort();
    let mut h = Sha256::new();
    for f in &files {
        println!("cargo:rerun-if-changed={f}");
        h.update(f.as_bytes());
        h.update(std::fs::read(Path::new(f)).expect("readable spec"));
    }
    let want = hex::encode(h.finalize());
    let stale = ["generated/api.rs", "generated/wire.rs"].iter().any(|f| {
        let generated = std::fs::read_to_string(f).unwrap_or_default();
        generated.lines().find_map(|l| l.strip_prefix("// spec-sha256: ")) != Some(want.as_str())
    });
    if stale {
        panic!(
            "\n\ngenerated/ is stale: spec/ changed since `cargo xtask codegen` last ran.\n\
             Fix: run `cargo xtask codegen` and commit generated/.\n\n"
        );
    }
}
