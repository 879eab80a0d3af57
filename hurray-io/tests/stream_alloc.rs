//! Process-level proof that a hostile claim does not turn into an allocation: a
//! descriptor claiming a 4 GiB buffer, followed by 1 KiB of input, read through the
//! blocking reader with default limits. Linux only (reads `/proc/self/status`); its
//! own test binary so no other test allocates at the same time; its two tests take
//! turns.

/// The two tests measure process-wide peaks, so they must not run at the same time.
#[cfg(target_os = "linux")]
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[cfg(target_os = "linux")]
fn status_kib(field: &str) -> u64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap();
    s.lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or_else(|| panic!("{field} not in /proc/self/status"))
}

#[cfg(target_os = "linux")]
#[test]
fn a_4_gib_claim_does_not_allocate_4_gib() {
    use hurray_core::{ElementType, TensorDescriptor};
    use hurray_io::{FormatRule, StreamReader};

    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let d = TensorDescriptor::dense(ElementType::Float32, &[1 << 30]).unwrap();
    assert_eq!(d.buffers[0].byte_size, 4 << 30);
    let mut bytes = d.encode().unwrap();
    bytes.extend(std::iter::repeat_n(0xA5u8, 1024));

    let (peak_virt, peak_rss) = (status_kib("VmPeak:"), status_kib("VmHWM:"));
    let results: Vec<_> = StreamReader::new(&bytes[..]).collect();
    let (grew_virt, grew_rss) = (
        status_kib("VmPeak:") - peak_virt,
        status_kib("VmHWM:") - peak_rss,
    );

    assert_eq!(results.len(), 1);
    let err = results.into_iter().next().unwrap().unwrap_err();
    assert_eq!(err.rule(), Some(FormatRule::Truncated));
    println!("peak virtual memory grew {grew_virt} KiB, peak resident {grew_rss} KiB");
    // The growth start (16 MiB) plus allocator noise; 4 GiB would show as 4194304 KiB
    // of virtual memory even if the pages were never touched.
    assert!(grew_virt < 256 << 10, "virtual peak grew {grew_virt} KiB");
    assert!(grew_rss < 64 << 10, "resident peak grew {grew_rss} KiB");
}

/// A claim under the eager ceiling (512 MiB) is allocated at once, but as zeroed
/// memory from the OS: resident memory follows the 1 KiB that arrived, not the claim.
#[cfg(target_os = "linux")]
#[test]
fn an_eager_512_mib_claim_commits_only_what_arrives() {
    use hurray_core::{ElementType, TensorDescriptor};
    use hurray_io::{FormatRule, StreamReader};

    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let d = TensorDescriptor::dense(ElementType::Uint8, &[512 << 20]).unwrap();
    let mut bytes = d.encode().unwrap();
    bytes.extend(std::iter::repeat_n(0x5Au8, 1024));

    let peak_rss = status_kib("VmHWM:");
    let results: Vec<_> = StreamReader::new(&bytes[..]).collect();
    let grew_rss = status_kib("VmHWM:") - peak_rss;

    let err = results.into_iter().next().unwrap().unwrap_err();
    assert_eq!(err.rule(), Some(FormatRule::Truncated));
    println!("peak resident grew {grew_rss} KiB for a 512 MiB claim");
    assert!(grew_rss < 64 << 10, "resident peak grew {grew_rss} KiB");
}
