//! Which operations the suite called through the generated clients. Every
//! client the harness builds tells `record` of each answer (the SDK's
//! observer); when the whole suite has run, the process checks, as it
//! exits, that every operation id of the documents answered a success
//! through a generated client (of either revision) at least once, and fails
//! the run otherwise. A filtered run (a name, `--skip`) is not checked, and
//! says so.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Mutex, Once};

/// Per operation id: how many calls answered, and how many of them a 2xx.
static CALLS: Mutex<BTreeMap<&'static str, (u32, u32)>> = Mutex::new(BTreeMap::new());
static AT_EXIT: Once = Once::new();

/// Makes the check run as the process exits (each test server's start
/// calls it, so a run with no call recorded fails too).
pub fn arm() {
    AT_EXIT.call_once(|| {
        // SAFETY: `atexit` only stores the function pointer; the C library
        // calls it once as the process exits (after libtest's summary, also
        // when libtest exits 101 for a failed test).
        unsafe { atexit(check_at_exit) };
    });
}

/// What the observer of every generated client the harness builds records.
pub fn record(operation: &'static str, status: Option<u16>) {
    let mut calls = CALLS.lock().unwrap_or_else(|e| e.into_inner());
    let seen = calls.entry(operation).or_default();
    seen.0 += 1;
    seen.1 += u32::from(status.is_some_and(|s| (200..300).contains(&s)));
}

unsafe extern "C" {
    fn atexit(f: extern "C" fn()) -> i32;
    fn _exit(status: i32) -> !;
}

/// Whether libtest runs every test of this binary: no name filter, no
/// `--skip`, not only the ignored ones, not a listing.
fn whole_run() -> bool {
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--test-threads" | "--format" | "--color" | "--logfile" | "--shuffle-seed" | "-Z" => {
                args.next();
            }
            "--ignored" | "--list" | "--exact" | "--bench" | "--exclude-should-panic" => return false,
            a if a.starts_with("--skip") => return false,
            a if a.starts_with('-') => {}
            _ => return false,
        }
    }
    true
}

extern "C" fn check_at_exit() {
    use std::io::Write;
    // (a panic may not unwind out of a C callback: it would abort)
    let failed = std::panic::catch_unwind(check).unwrap_or_else(|_| Some("coverage: the check itself failed".into()));
    if let Some(message) = failed {
        let _ = writeln!(std::io::stderr(), "{message}");
        // (exit may not be called again from an exit handler)
        // SAFETY: ends the process at once, as a failed run.
        unsafe { _exit(1) }
    }
}

/// `None` when the coverage holds (or is not checked), else why not.
fn check() -> Option<String> {
    use std::io::Write;
    let mut stderr = std::io::stderr();
    if !whole_run() {
        let _ = writeln!(stderr, "coverage: not checked (a filtered run)");
        return None;
    }
    let calls = CALLS.lock().unwrap_or_else(|e| e.into_inner());
    let every: BTreeSet<String> = crate::sweeps::operation_ids();
    let missing: Vec<&String> = every.iter().filter(|id| calls.get(id.as_str()).is_none_or(|(_, ok)| *ok == 0)).collect();
    let total: u32 = calls.values().map(|(n, _)| n).sum();
    if missing.is_empty() {
        let _ = writeln!(stderr, "coverage: all {} operations answered a success through the generated clients ({total} calls)", every.len());
        return None;
    }
    let named: Vec<String> = missing.iter().map(|id| format!("{id} ({} calls)", calls.get(id.as_str()).map_or(0, |c| c.0))).collect();
    Some(format!(
        "coverage: FAILED: operations no test called with a success through a generated client (a test that failed above may be why): {}",
        named.join(", ")
    ))
}
