//! The case list parses, every case builds a valid descriptor, and the Rust producer
//! and consumer agree on every case; a flipped byte is caught and named.

use hurray_matrix::case::{self, Case};
use hurray_matrix::run;
use std::path::PathBuf;

fn cases() -> Vec<Case> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../cases/cases.txt");
    case::parse(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn every_case_parses_and_builds() {
    let cases = cases();
    assert!(cases.len() >= 60, "{} cases", cases.len());
    for c in &cases {
        for it in &c.items {
            hurray_matrix::build::item(it).unwrap_or_else(|e| panic!("case {}: {e}", c.name));
        }
    }
    // Every layout family and both sub-byte packings are covered.
    let text = std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../cases/cases.txt"),
    )
    .unwrap();
    for needle in [
        " row_major",
        " col_major",
        " strided ",
        " tiled",
        " morton ",
        " hilbert ",
        " coo ",
        " csr ",
        " csc ",
        " csf ",
        " block_paged ",
        "composite ",
        " int4 ",
        " float6_e2m3 ",
        " bool ",
        "quant per_tensor",
        "quant per_channel",
        "quant per_block",
        "quant nf4",
        "quant mxfp",
        "array:uint64",
        "array:bytes",
        "bits:",
    ] {
        assert!(text.contains(needle), "no case uses {needle:?}");
    }
}

#[test]
fn rust_writes_and_reads_every_case() {
    let dir = tempfile::tempdir().unwrap();
    for c in &cases() {
        run::produce(c, dir.path()).unwrap_or_else(|e| panic!("produce {}: {e}", c.name));
        let file = dir.path().join(format!("{}.hrry", c.name));
        let stream = dir.path().join(format!("{}.hrrys", c.name));
        run::check_file(c, &file).unwrap_or_else(|e| panic!("file {}: {e}", c.name));
        run::check_stream(c, &stream).unwrap_or_else(|e| panic!("stream {}: {e}", c.name));
    }
}

#[test]
fn a_flipped_byte_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let cases = cases();
    let csr = cases.iter().find(|c| c.name == "csr").unwrap();
    run::produce(csr, dir.path()).unwrap();
    let path = dir.path().join("csr.hrry");
    let clean = std::fs::read(&path).unwrap();

    // A buffer byte: the first data buffer starts at the 4096 alignment.
    let mut bad = clean.clone();
    bad[4096 + 4] ^= 0x01;
    std::fs::write(&path, &bad).unwrap();
    let e = run::check_file(csr, &path).unwrap_err();
    assert_eq!(
        e,
        "tensor \"s\": buffer 0 byte 4: expected 0x00, got 0x01 (1 of 20 bytes differ)"
    );
    assert_eq!(
        run::locate_in_file(&bad, 4100),
        "buffer 0 of tensor \"s\", byte 4"
    );

    // A descriptor byte: nnz (byte 44 of the descriptor at 64) changes from 5 to 4;
    // the descriptor is still valid (buffers may be larger than needed), but row_ptr
    // now ends past nnz: the reader's content check names the rule and the byte.
    let mut bad = clean.clone();
    bad[64 + 44] ^= 0x01;
    std::fs::write(&path, &bad).unwrap();
    let e = run::check_file(csr, &path).unwrap_err();
    assert_eq!(
        e,
        "items: buffer content at byte 12320: PointerEnd (layouts.md §2.7–§2.10) in buffer 2 \
         at byte 32: row_ptr[4] is 5, must be 4"
    );
    assert_eq!(
        run::locate_in_file(&clean, 64 + 44),
        "descriptor of tensor \"s\", byte 44"
    );
}
