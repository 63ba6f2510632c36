//! The `switchboard` binary: its allocator, and the command line of
//! `switchboard::cli`, where everything else is.

/// mimalloc rather than glibc's malloc: a list page makes thousands of
/// small allocations, and with mimalloc PostgreSQL's pages went from 1.0
/// to 1.2-1.3 times the baseline's, SQLite's from 1.5 to 1.8, in a smaller
/// peak on PostgreSQL. Built without transparent huge pages (`no_thp`):
/// with them each 2 MiB page counted whole and the peaks grew by a third
/// (docs/performance.md, Memory). SQLite allocates through it too
/// (`store/sqlite_memory.rs`).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    switchboard::cli::main()
}
