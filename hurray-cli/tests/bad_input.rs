//! Bad input never panics and never leaves an output behind: each case must end with
//! exactly one error line, exit status 1, and no new file beside the input (an
//! existing output is left as it was).

mod common;

use common::*;
use std::path::Path;

/// Converts `bytes` (written as `name`) to `.hrry` and checks the failure contract;
/// returns the error line.
fn convert_fails(name: &str, bytes: &[u8]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join(name);
    std::fs::write(&src, bytes).unwrap();
    let out = dir.path().join("out.hrry");
    std::fs::write(&out, b"previous contents").unwrap();
    let line = fails(hurray([
        "convert".as_ref(),
        src.as_os_str(),
        out.as_os_str(),
    ]));
    let mut expected = vec![name.to_owned(), "out.hrry".to_owned()];
    expected.sort();
    assert_eq!(files_in(dir.path()), expected, "{line}");
    assert_eq!(std::fs::read(&out).unwrap(), b"previous contents");
    line
}

/// A safetensors file with a hand-written JSON header and `data_len` data bytes.
fn st(header: &str, data_len: usize) -> Vec<u8> {
    let mut v = (header.len() as u64).to_le_bytes().to_vec();
    v.extend(header.as_bytes());
    v.extend(std::iter::repeat_n(0u8, data_len));
    v
}

fn good_model() -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    std::fs::read(small_model(dir.path())).unwrap()
}

#[test]
fn truncated_safetensors_files() {
    let good = good_model();
    for cut in [0, 3, 8, 20, good.len() / 2, good.len() - 1] {
        let line = convert_fails("m.safetensors", &good[..cut]);
        assert!(
            ["Truncated", "HeaderLength", "Offsets"]
                .iter()
                .any(|r| line.contains(r)),
            "cut {cut}: {line}"
        );
    }
}

#[test]
fn headers_that_lie() {
    let cases = [
        // Offsets past the end of the file.
        (
            st(
                r#"{"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}}"#,
                8,
            ),
            "Offsets at byte",
        ),
        // Offsets that disagree with dtype x shape.
        (
            st(
                r#"{"a":{"dtype":"F32","shape":[3],"data_offsets":[0,16]}}"#,
                16,
            ),
            "TensorSize at byte",
        ),
        // Two tensors sharing bytes.
        (
            st(
                r#"{"a":{"dtype":"U8","shape":[8],"data_offsets":[0,8]},"b":{"dtype":"U8","shape":[8],"data_offsets":[4,12]}}"#,
                12,
            ),
            "Overlap at byte",
        ),
        // A gap no tensor owns.
        (
            st(
                r#"{"a":{"dtype":"U8","shape":[4],"data_offsets":[0,4]},"b":{"dtype":"U8","shape":[4],"data_offsets":[8,12]}}"#,
                12,
            ),
            "Offsets at byte",
        ),
        // Bytes after the last tensor.
        (
            st(
                r#"{"a":{"dtype":"U8","shape":[4],"data_offsets":[0,4]}}"#,
                9,
            ),
            "TrailingBytes at byte",
        ),
        // The same name twice.
        (
            st(
                r#"{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},"a":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}}"#,
                2,
            ),
            "DuplicateName",
        ),
        // Shapes whose size overflows.
        (
            st(
                r#"{"a":{"dtype":"F64","shape":[4294967296,4294967296],"data_offsets":[0,8]}}"#,
                8,
            ),
            "SizeOverflow at byte",
        ),
        // Not JSON, not an object, unknown dtype.
        (st("{not json", 0), "HeaderJson at byte"),
        (st("[1, 2]", 0), "HeaderJson at byte"),
        (
            st(
                r#"{"a":{"dtype":"F99","shape":[1],"data_offsets":[0,4]}}"#,
                4,
            ),
            "TensorInfo",
        ),
        (st(r#"{"__metadata__":{"k":1}}"#, 0), "Metadata"),
    ];
    for (bytes, rule) in cases {
        let line = convert_fails("x.safetensors", &bytes);
        assert!(line.contains(rule), "expected {rule}: {line}");
    }
}

#[test]
fn header_length_beyond_the_file() {
    let mut v = st(
        r#"{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}"#,
        1,
    );
    v[..8].copy_from_slice(&1000u64.to_le_bytes());
    let line = convert_fails("x.safetensors", &v);
    assert!(
        line.contains("HeaderLength at byte 0") && line.contains("runs past the end"),
        "{line}"
    );
    v[..8].copy_from_slice(&u64::MAX.to_le_bytes());
    let line = convert_fails("x.safetensors", &v);
    assert!(
        line.contains("HeaderLength at byte 0") && line.contains("exceeds"),
        "{line}"
    );
}

#[test]
fn non_utf8_names() {
    let mut v = st(
        r#"{"a?":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}"#,
        1,
    );
    let q = v.iter().position(|&b| b == b'?').unwrap();
    v[q] = 0xFF;
    let line = convert_fails("x.safetensors", &v);
    assert!(line.contains(&format!("Utf8 at byte {q}")), "{line}");
}

#[test]
fn a_failure_half_way_through_the_data_leaves_nothing() {
    // The header is fine, the third bool value is not: the output was already being
    // written when the error was found.
    let mut v = st(
        r#"{"a":{"dtype":"BOOL","shape":[4],"data_offsets":[0,4]}}"#,
        0,
    );
    let data_at = v.len() as u64;
    v.extend([1, 0, 7, 1]);
    let line = convert_fails("x.safetensors", &v);
    assert!(
        line.contains(&format!("Bool at byte {}", data_at + 2)),
        "{line}"
    );
}

/// A valid small HRRYFILE's bytes.
fn good_hrry() -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    let src = small_model(dir.path());
    let out = dir.path().join("m.hrry");
    ok(hurray([
        "convert".as_ref(),
        src.as_os_str(),
        out.as_os_str(),
    ]));
    std::fs::read(out).unwrap()
}

fn every_reader_fails(dir: &Path, file: &Path) -> Vec<String> {
    let out = dir.join("out.safetensors");
    let lines = vec![
        fails(hurray(["inspect".as_ref(), file.as_os_str()])),
        fails(hurray([
            "inspect".as_ref(),
            "--json".as_ref(),
            file.as_os_str(),
        ])),
        fails(hurray([
            "dump".as_ref(),
            file.as_os_str(),
            "head.half".as_ref(),
        ])),
        fails(hurray([
            "convert".as_ref(),
            file.as_os_str(),
            out.as_os_str(),
        ])),
    ];
    assert!(!out.exists());
    let v = hurray(["validate".as_ref(), file.as_os_str()]);
    assert_eq!(v.status.code(), Some(1));
    assert!(stdout(&v).contains(": invalid: "), "{}", stdout(&v));
    lines
}

#[test]
fn damaged_hrry_files() {
    let good = good_hrry();
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("m.hrry");
    for cut in [
        0,
        7,
        63,
        100,
        good.len() / 2,
        good.len() - 41,
        good.len() - 1,
    ] {
        std::fs::write(&f, &good[..cut]).unwrap();
        every_reader_fails(dir.path(), &f);
    }
    // A flipped byte inside the index: the CRC no longer matches.
    let mut bad = good.clone();
    let trailer = bad.len() - 40;
    let index_at = u64::from_le_bytes(bad[trailer..trailer + 8].try_into().unwrap()) as usize;
    bad[index_at + 12] ^= 0x01;
    std::fs::write(&f, &bad).unwrap();
    let lines = every_reader_fails(dir.path(), &f);
    assert!(lines[0].contains("CrcMismatch"), "{}", lines[0]);
}

#[test]
fn damaged_streams() {
    let dir = tempfile::tempdir().unwrap();
    let src = small_model(dir.path());
    let s = dir.path().join("m.hrrys");
    ok(hurray(["convert".as_ref(), src.as_os_str(), s.as_os_str()]));
    let good = std::fs::read(&s).unwrap();
    for cut in [5, 30, good.len() / 2, good.len() - 1] {
        std::fs::write(&s, &good[..cut]).unwrap();
        let line = fails(hurray(["inspect".as_ref(), s.as_os_str()]));
        assert!(line.contains("at byte"), "{line}");
        assert_eq!(
            hurray(["validate".as_ref(), s.as_os_str()]).status.code(),
            Some(1)
        );
        let out = dir.path().join("x.hrry");
        fails(hurray(["convert".as_ref(), s.as_os_str(), out.as_os_str()]));
        assert!(!out.exists());
    }
}

#[test]
fn usage_mistakes_are_one_line_errors_too() {
    let dir = tempfile::tempdir().unwrap();
    let src = small_model(dir.path());
    let missing = dir.path().join("missing.safetensors");
    fails(hurray([
        "convert".as_ref(),
        missing.as_os_str(),
        dir.path().join("a.hrry").as_os_str(),
    ]));
    let line = fails(hurray([
        "convert".as_ref(),
        src.as_os_str(),
        dir.path().join("a.bin").as_os_str(),
    ]));
    assert!(line.contains("--to"), "{line}");
    let nowhere = dir.path().join("no/such/dir/a.hrry");
    fails(hurray([
        "convert".as_ref(),
        src.as_os_str(),
        nowhere.as_os_str(),
    ]));
    let line = fails(hurray(["inspect".as_ref(), src.as_os_str()]));
    assert!(line.contains("not a Hurray file"), "{line}");
    let hrry = dir.path().join("m.hrry");
    ok(hurray([
        "convert".as_ref(),
        src.as_os_str(),
        hrry.as_os_str(),
    ]));
    let line = fails(hurray(["dump".as_ref(), hrry.as_os_str(), "nope".as_ref()]));
    assert!(line.contains("no tensor named \"nope\""), "{line}");
    let line = fails(hurray([
        "convert".as_ref(),
        src.as_os_str(),
        dir.path().join("b.safetensors").as_os_str(),
    ]));
    assert!(line.contains("convert to .hrry first"), "{line}");
}
