//! Resource figures a command can report about itself (`convert --stats`).

/// Peak resident memory of this process in bytes (Linux `VmHWM`), if the platform
/// reports it.
pub fn peak_rss() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

#[cfg(test)]
mod tests {
    #[test]
    fn peak_rss_is_plausible_where_reported() {
        if let Some(b) = super::peak_rss() {
            assert!(b > 1024 * 1024, "{b}");
        }
    }
}
