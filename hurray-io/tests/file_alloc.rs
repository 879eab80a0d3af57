//! Process-level proof that a hostile claim does not become an allocation: a
//! descriptor claiming a 4 GiB buffer in a 1 KiB file is rejected by every file
//! reader with default limits, and the process's peak memory does not grow by
//! anything near 4 GiB. Linux only (reads `/proc/self/status`); its own test binary
//! so no other test allocates at the same time.

#[cfg(target_os = "linux")]
mod linux {
    use hurray_core::{ElementType, TensorDescriptor};
    use hurray_io::file::index::{encode_index, IndexEntry};
    use hurray_io::file::{FileHeader, FileReader, SequentialReader, Trailer};
    use hurray_io::FormatRule;

    fn status_kib(field: &str) -> u64 {
        let s = std::fs::read_to_string("/proc/self/status").unwrap();
        s.lines()
            .find_map(|l| l.strip_prefix(field))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or_else(|| panic!("{field} not in /proc/self/status"))
    }

    /// Header, one f32 [2^30] descriptor (4 GiB buffer) at 64, zero padding, an
    /// index entry claiming `data_length`, trailer; padded to 1 KiB before the index.
    fn hostile(data_length: u64) -> Vec<u8> {
        let d = TensorDescriptor::dense(ElementType::Float32, &[1 << 30]).unwrap();
        assert_eq!(d.buffers[0].byte_size, 4 << 30);
        let desc = d.encode().unwrap();
        let mut b = FileHeader::new(0, 4096).encode().to_vec();
        b.extend_from_slice(&desc);
        b.resize(1024 - 88, 0);
        let index = encode_index(&[IndexEntry {
            name: "w".into(),
            descriptor_offset: 64,
            descriptor_length: desc.len() as u32,
            data_offset: 4096,
            data_length,
        }])
        .unwrap();
        let index_offset = b.len() as u64;
        b.extend_from_slice(&index);
        let t = Trailer {
            index_offset,
            index_length: index.len() as u64,
            ..Trailer::default()
        };
        b.extend_from_slice(&t.encode());
        assert!(b.len() <= 1024);
        b
    }

    #[test]
    fn a_4_gib_claim_in_a_1_kib_file_allocates_nothing_like_it() {
        let (peak_virt, peak_rss) = (status_kib("VmPeak:"), status_kib("VmHWM:"));

        // The index agrees with the descriptor: the data runs out of the file.
        let b = hostile(4 << 30);
        let e = FileReader::from_bytes(&b).unwrap_err();
        assert_eq!(e.rule(), Some(FormatRule::OutOfBounds));
        // The index disagrees with the descriptor.
        let e = FileReader::from_bytes(&hostile(16)).unwrap_err();
        assert_eq!(e.rule(), Some(FormatRule::IndexEntry));
        // Memory-mapped.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("hostile.hrry");
        std::fs::write(&path, &b).unwrap();
        let e = FileReader::open(&path).unwrap_err();
        assert_eq!(e.rule(), Some(FormatRule::OutOfBounds));
        // Sequential: the data would start at 4096, past the end of the input.
        let e = SequentialReader::new(&b[..])
            .and_then(|r| r.read_all())
            .unwrap_err();
        assert_eq!(e.rule(), Some(FormatRule::Truncated));
        // Sequential with the claimed buffer's first 64 KiB present: the buffer grows
        // in steps and fails at the end of the input.
        let mut long = b[..1024 - 88].to_vec();
        long.resize(4096 + (64 << 10), 0x5A);
        let e = SequentialReader::new(&long[..])
            .and_then(|r| r.read_all())
            .unwrap_err();
        assert_eq!(e.rule(), Some(FormatRule::Truncated));

        let (grew_virt, grew_rss) = (
            status_kib("VmPeak:") - peak_virt,
            status_kib("VmHWM:") - peak_rss,
        );
        println!("peak virtual memory grew {grew_virt} KiB, peak resident {grew_rss} KiB");
        // The sequential reader's first step (16 MiB) plus noise; 4 GiB would show
        // as 4194304 KiB of virtual memory even if no page were touched.
        assert!(grew_virt < 256 << 10, "virtual peak grew {grew_virt} KiB");
        assert!(grew_rss < 64 << 10, "resident peak grew {grew_rss} KiB");
    }
}
