//! SQLite's own memory: its allocations go to mimalloc, the server's
//! allocator, rather than to glibc's malloc.
//!
//! Why: sqlx runs each SQLite connection on a thread of its own, and glibc
//! gives every such thread an arena of its own that keeps what it freed:
//! about 7.5 MiB each, a third of the server's peak under the bench
//! (docs/performance.md, Memory). mimalloc returns what a thread frees.
//! Taking over `malloc` itself (mimalloc's `override`) did the same but
//! broke under libfaketime, whose preload allocates before mimalloc is
//! ready; `SQLITE_CONFIG_MALLOC` moves SQLite alone.

use libsqlite3_sys as ffi;
use std::ffi::{c_int, c_void};
use std::sync::Once;

/// Hands SQLite mimalloc, once per process, before its first connection
/// (SQLite takes a new allocator only before it initialises). Without
/// memory statistics: SQLite then keeps no global count under a mutex that
/// every allocation on every connection takes; nothing here reads them.
pub(super) fn use_mimalloc() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let methods = ffi::sqlite3_mem_methods {
            xMalloc: Some(malloc),
            xFree: Some(free),
            xRealloc: Some(realloc),
            xSize: Some(size),
            xRoundup: Some(roundup),
            xInit: Some(init),
            xShutdown: Some(shutdown),
            pAppData: std::ptr::null_mut(),
        };
        // SAFETY: `sqlite3_config` copies the methods; each argument is of
        // the type its option documents. Before SQLite's first
        // initialisation it answers SQLITE_OK; after it (a connection
        // opened before this ran) SQLITE_MISUSE and changes nothing, and
        // SQLite goes on with its own allocator.
        let (malloc_rc, stats_rc) = unsafe {
            (
                ffi::sqlite3_config(ffi::SQLITE_CONFIG_MALLOC, &methods as *const ffi::sqlite3_mem_methods),
                ffi::sqlite3_config(ffi::SQLITE_CONFIG_MEMSTATUS, 0 as c_int),
            )
        };
        if malloc_rc != ffi::SQLITE_OK || stats_rc != ffi::SQLITE_OK {
            tracing::warn!(malloc_rc, stats_rc, "SQLite was already initialised: it keeps its own allocator");
        }
    });
}

// SQLite asks for positive sizes only, and needs 8-byte alignment, which
// mimalloc always gives.

unsafe extern "C" fn malloc(n: c_int) -> *mut c_void {
    // SAFETY: any size is valid; null on failure, which SQLite handles
    unsafe { libmimalloc_sys::mi_malloc(n as usize) }
}

unsafe extern "C" fn free(p: *mut c_void) {
    // SAFETY: SQLite frees only what `malloc`/`realloc` above gave it
    unsafe { libmimalloc_sys::mi_free(p) }
}

unsafe extern "C" fn realloc(p: *mut c_void, n: c_int) -> *mut c_void {
    // SAFETY: as `free`; SQLite keeps `p` when this answers null
    unsafe { libmimalloc_sys::mi_realloc(p, n as usize) }
}

unsafe extern "C" fn size(p: *mut c_void) -> c_int {
    // SAFETY: as `free`
    let n = unsafe { libmimalloc_sys::mi_usable_size(p) };
    c_int::try_from(n).unwrap_or(c_int::MAX)
}

unsafe extern "C" fn roundup(n: c_int) -> c_int {
    // SAFETY: a pure function of the size
    let n = unsafe { libmimalloc_sys::mi_good_size(n as usize) };
    c_int::try_from(n).unwrap_or(c_int::MAX)
}

unsafe extern "C" fn init(_: *mut c_void) -> c_int {
    ffi::SQLITE_OK
}

unsafe extern "C" fn shutdown(_: *mut c_void) {}
