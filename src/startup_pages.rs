//! The executable's pages that only start-up ran. Starting runs code from
//! all over the binary (every route registered, every schema built, the
//! migrations, the demo) and the kernel maps each page it ran or read,
//! with the pages around it, into the process: 18 MiB of the binary are
//! counted in the server's memory before its first request. Once serving,
//! the server lets go of those mappings; what requests use maps back in
//! from the page cache on first use (a minor fault, no read from disk
//! while the file stays cached). docs/performance.md, Memory.

/// Unmaps the executable's read-only pages (`MADV_DONTNEED`) where none
/// was ever written: its code and constant data, which the next use reads
/// again from the file. A mapping holding a written page (the data the
/// loader relocated, then made read-only: `RELRO`) is left alone, since it
/// would come back as the file has it. Says how much it let go of.
#[cfg(target_os = "linux")]
pub fn release() -> std::io::Result<usize> {
    let exe = std::fs::read_link("/proc/self/exe")?;
    let smaps = std::fs::read_to_string("/proc/self/smaps")?;
    let mut released = 0;
    let mut mapping: Option<(usize, usize)> = None;
    for line in smaps.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        match fields[..] {
            // a mapping's header: start-end perms offset dev inode path
            [range, perms, _, _, _, path] if range.contains('-') && perms.len() == 4 => {
                mapping = None;
                if (perms == "r-xp" || perms == "r--p") && std::path::Path::new(path) == exe {
                    let (start, end) = range.split_once('-').unwrap_or_default();
                    if let (Ok(start), Ok(end)) = (usize::from_str_radix(start, 16), usize::from_str_radix(end, 16)) {
                        mapping = Some((start, end));
                    }
                }
            }
            // its pages that differ from the file's: none, or it is kept
            ["Anonymous:", kb, "kB"] => {
                if let (Some((start, end)), "0") = (mapping.take(), kb) {
                    // SAFETY: a whole read-only mapping of the executable
                    // with no page written: dropping its pages only makes
                    // the next use read them from the file again.
                    if unsafe { libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_DONTNEED) } != 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                    released += end - start;
                }
            }
            _ => {}
        }
    }
    Ok(released)
}

#[cfg(not(target_os = "linux"))]
pub fn release() -> std::io::Result<usize> {
    Ok(0)
}
