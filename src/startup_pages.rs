//! The executable's pages that only start-up used. Starting runs code from
//! all over the binary (every route registered, every schema built, the
//! migrations, the demo) and the kernel maps each page it ran or read,
//! with the pages around it, into the process: 18 MiB of the binary are
//! counted in the server's RSS before its first request. Once serving, the
//! server drops those pages from its mappings; what requests use maps back
//! in from the page cache on first use (a minor fault, no read from disk
//! while the file stays cached). The file's pages stay in the page cache
//! either way: this lowers the process's RSS, not the machine's memory in
//! use. docs/performance.md, Memory.

/// A mapping of the executable that holds nothing but the file's own
/// bytes, and how much of it is resident.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Droppable {
    start: usize,
    end: usize,
    resident_kb: usize,
}

/// The mappings of `exe` in `smaps` (the text of `/proc/self/smaps`) whose
/// pages may be dropped: its code (`r-xp`) and the read-only data the file
/// starts with (`r--p` at offset 0), each only when no page of it was ever
/// written (`Anonymous` and `Swap` both 0: a written page would come back
/// as the file has it). The data the loader relocated and then made
/// read-only (`RELRO`) never starts at offset 0 and is never code, so it
/// is never taken, whatever its counts say.
fn droppable(smaps: &str, exe: &str) -> Vec<Droppable> {
    let mut found = vec![];
    // the mapping being read: its range, and whether it is still a candidate
    let mut current: Option<(Droppable, bool)> = None;
    let mut close = |current: &mut Option<(Droppable, bool)>| {
        if let Some((mapping, true)) = current.take() {
            found.push(mapping);
        }
    };
    for line in smaps.lines() {
        let mut fields = line.split_whitespace();
        let first = fields.next().unwrap_or_default();
        if let Some((start, end)) = first.split_once('-') {
            // a mapping's header: start-end perms offset dev inode path
            let (Ok(start), Ok(end)) = (usize::from_str_radix(start, 16), usize::from_str_radix(end, 16)) else { continue };
            close(&mut current);
            let (perms, offset) = (fields.next().unwrap_or_default(), fields.next().unwrap_or_default());
            let path = after_fields(line, 5);
            let read_only = perms == "r-xp" || (perms == "r--p" && offset.bytes().all(|b| b == b'0'));
            current = Some((Droppable { start, end, resident_kb: 0 }, read_only && path == exe));
            continue;
        }
        let Some((mapping, candidate)) = current.as_mut() else { continue };
        let kb = fields.next().and_then(|n| n.parse::<usize>().ok());
        match (first, kb) {
            ("Rss:", Some(kb)) => mapping.resident_kb = kb,
            ("Anonymous:" | "Swap:", Some(0)) => {}
            ("Anonymous:" | "Swap:", _) => *candidate = false,
            _ => {}
        }
    }
    close(&mut current);
    found
}

/// What `line` holds after its first `n` fields (a path may have spaces).
fn after_fields(line: &str, n: usize) -> &str {
    let mut rest = line;
    for _ in 0..n {
        rest = rest.trim_start();
        rest = rest.find(char::is_whitespace).map_or("", |i| &rest[i..]);
    }
    rest.trim()
}

/// Drops the pages of the executable's mappings that `droppable` finds
/// (`MADV_DONTNEED`: the next use reads them from the file again). Says
/// how much was resident in them.
#[cfg(target_os = "linux")]
pub fn release() -> std::io::Result<usize> {
    let exe = std::fs::read_link("/proc/self/exe")?;
    let Some(exe) = exe.to_str() else { return Ok(0) };
    let smaps = std::fs::read_to_string("/proc/self/smaps")?;
    let mut released = 0;
    for m in droppable(&smaps, exe) {
        // SAFETY: a whole read-only mapping of the executable, none of
        // whose pages was written: dropping them only makes the next use
        // read them from the file again.
        if unsafe { libc::madvise(m.start as *mut libc::c_void, m.end - m.start, libc::MADV_DONTNEED) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        released += m.resident_kb * 1024;
    }
    Ok(released)
}

#[cfg(not(target_os = "linux"))]
pub fn release() -> std::io::Result<usize> {
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(range: &str, perms: &str, offset: &str, path: &str, rss: usize, anonymous: usize, swap: usize) -> String {
        format!(
            "{range} {perms} {offset} fd:01 1234                       {path}\nSize:               8 kB\nRss:             {rss} kB\nAnonymous:          {anonymous} kB\nSwap:               {swap} kB\nVmFlags: rd mr mw me\n"
        )
    }

    #[test]
    fn only_the_executables_unwritten_code_and_leading_data_are_taken() {
        let exe = "/opt/switchboard/bin/switchboard";
        let smaps = [
            entry("1000-2000", "r--p", "00000000", exe, 4, 0, 0),
            entry("2000-5000", "r-xp", "00001000", exe, 12, 0, 0),
            // RELRO: read-only now, written by the loader, even when swapped out
            entry("5000-6000", "r--p", "00004000", exe, 0, 0, 0),
            entry("6000-7000", "rw-p", "00005000", exe, 4, 4, 0),
            // code with a written page (a text relocation, a breakpoint)
            entry("7000-8000", "r-xp", "00006000", exe, 4, 4, 0),
            entry("8000-9000", "r-xp", "00007000", exe, 0, 0, 4),
            entry("9000-a000", "r-xp", "00000000", "/usr/lib/libc.so.6", 4, 0, 0),
            entry("a000-b000", "r-xp", "00000000", &format!("{exe} (deleted)"), 4, 0, 0),
            entry("b000-c000", "rw-p", "00000000", "", 4, 4, 0),
        ]
        .concat();
        let taken: Vec<(usize, usize, usize)> = droppable(&smaps, exe).iter().map(|d| (d.start, d.end, d.resident_kb)).collect();
        assert_eq!(taken, [(0x1000, 0x2000, 4), (0x2000, 0x5000, 12)]);
        assert!(droppable(&smaps, "/elsewhere").is_empty());
    }

    #[test]
    fn the_running_test_binary_is_read_without_error() {
        let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap_or_default();
        let exe = std::fs::read_link("/proc/self/exe").map(|p| p.display().to_string()).unwrap_or_default();
        let taken = droppable(&smaps, &exe);
        if !smaps.is_empty() {
            assert!(taken.iter().all(|d| d.start < d.end), "{taken:?}");
            assert!(!taken.is_empty(), "this binary's code is found");
        }
    }
}
