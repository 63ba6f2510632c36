//! The fuzz corpus replayed on stable (docs/fuzzing.md): every file of
//! `fuzz/corpus/NAME/` through the target NAME's body, the same code the
//! libFuzzer binaries run. A crash the fuzzer found, fixed and added to the
//! corpus, stays fixed; a target without a corpus, or a corpus without a
//! target, fails.

#[path = "../fuzz/targets.rs"]
#[allow(dead_code)]
mod targets;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz")
}

/// The names of the entries of `dir` (with `suffix`, which is cut off).
fn names(dir: &Path, suffix: &str) -> BTreeSet<String> {
    std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter_map(|n| n.strip_suffix(suffix).map(str::to_string))
        .collect()
}

#[test]
fn every_target_has_a_corpus_a_binary_and_every_corpus_a_target() {
    let targets: BTreeSet<String> = targets::TARGETS.iter().map(|(n, _)| n.to_string()).collect();
    assert_eq!(targets.len(), targets::TARGETS.len(), "a target is named twice");
    assert_eq!(names(&fuzz_dir().join("corpus"), ""), targets, "fuzz/corpus/ has one directory per target of fuzz/targets.rs");
    assert_eq!(names(&fuzz_dir().join("fuzz_targets"), ".rs"), targets, "fuzz/fuzz_targets/ has one binary per target");
    let manifest = std::fs::read_to_string(fuzz_dir().join("Cargo.toml")).unwrap();
    for t in &targets {
        assert!(manifest.contains(&format!("name = \"{t}\"\npath = \"fuzz_targets/{t}.rs\"")), "fuzz/Cargo.toml has no [[bin]] {t}");
    }
}

#[test]
fn the_corpus_replays_without_a_crash() {
    let started = std::time::Instant::now();
    let mut failed = vec![];
    let mut replayed = 0;
    for (name, target) in targets::TARGETS {
        let dir = fuzz_dir().join("corpus").join(name);
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        let mut files: Vec<PathBuf> = entries.map(|e| e.unwrap().path()).filter(|p| p.is_file()).collect();
        files.sort();
        assert!(!files.is_empty(), "{} is empty: a target needs seeds", dir.display());
        for file in files {
            let data = std::fs::read(&file).unwrap();
            replayed += 1;
            if let Err(panic) = std::panic::catch_unwind(|| target(&data)) {
                let message = panic.downcast_ref::<String>().cloned().or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string())).unwrap_or_default();
                failed.push(format!("{}: {message}", file.display()));
            }
        }
    }
    println!("replayed {replayed} corpus files in {:?}", started.elapsed());
    assert!(failed.is_empty(), "{} corpus files crashed their target:\n{}", failed.len(), failed.join("\n"));
}
