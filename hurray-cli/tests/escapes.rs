//! Names, keys and string values come from the file: `inspect` and `dump` print them
//! with control characters escaped, so a file cannot send terminal escapes or forge
//! output lines.

mod common;

use common::*;
use hurray_core::ElementType;
use hurray_io::file::{FileWriterTo, KvValue, WriteOptions};
use hurray_io::Tensor;

const EVIL: &str = "w\u{1b}[2J\nok: forged\r";

#[test]
fn inspect_and_dump_escape_control_characters() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("evil.hrry");
    let t = Tensor::from_dense(ElementType::Uint8, &[2], &[1, 2]).unwrap();
    let mut w = FileWriterTo::new(Vec::new(), WriteOptions::default()).unwrap();
    w.write_tensor(EVIL, &t).unwrap();
    w.add_kv(EVIL, KvValue::String(EVIL.into())).unwrap();
    std::fs::write(&p, w.finish().unwrap()).unwrap();

    let text = ok(hurray(["inspect".as_ref(), p.as_os_str()]));
    assert!(!text.contains('\u{1b}') && !text.contains('\r'), "{text:?}");
    assert!(!text.lines().any(|l| l.starts_with("ok: forged")), "{text}");
    assert!(text.contains("w\\u{1b}[2J\\nok: forged\\r"), "{text}");

    let text = ok(hurray(["dump".as_ref(), p.as_os_str(), EVIL.as_ref()]));
    assert!(!text.contains('\u{1b}') && !text.contains('\r'), "{text:?}");
    assert!(!text.lines().any(|l| l.starts_with("ok: forged")), "{text}");
}

/// Invisible and reordering characters: a right-to-left override, line and paragraph
/// separators, a zero-width space, a byte-order mark, an isolate.
const SNEAKY: &str = "a\u{202e}b\u{2028}c\u{2029}d\u{200b}e\u{feff}f\u{2066}g";
const SNEAKY_RAW: [char; 6] = [
    '\u{202e}', '\u{2028}', '\u{2029}', '\u{200b}', '\u{feff}', '\u{2066}',
];

#[test]
fn inspect_dump_compare_and_validate_escape_bidi_and_invisible_characters() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("sneaky.hrry");
    let q = dir.path().join("other.hrry");
    let t = Tensor::from_dense(ElementType::Uint8, &[2], &[1, 2]).unwrap();
    for (path, v) in [(&p, 1u8), (&q, 9)] {
        let t2 = Tensor::from_dense(ElementType::Uint8, &[2], &[v, 2]).unwrap();
        let mut w = FileWriterTo::new(Vec::new(), WriteOptions::default()).unwrap();
        w.write_tensor(SNEAKY, if v == 1 { &t } else { &t2 })
            .unwrap();
        w.add_kv(SNEAKY, KvValue::String(SNEAKY.into())).unwrap();
        std::fs::write(path, w.finish().unwrap()).unwrap();
    }
    let escaped = "a\\u{202e}b\\u{2028}c\\u{2029}d\\u{200b}e\\u{feff}f\\u{2066}g";
    let check = |what: &str, text: &str| {
        assert!(
            !text.contains(SNEAKY_RAW),
            "{what} printed a raw character: {text:?}"
        );
        assert!(
            text.contains(escaped),
            "{what} lacks the escaped name: {text}"
        );
    };
    check("inspect", &ok(hurray(["inspect".as_ref(), p.as_os_str()])));
    check(
        "dump",
        &ok(hurray(["dump".as_ref(), p.as_os_str(), SNEAKY.as_ref()])),
    );
    // compare differs (one byte), so it exits non-zero: read its stdout either way.
    let o = hurray(["compare".as_ref(), p.as_os_str(), q.as_os_str()]);
    check("compare", &String::from_utf8_lossy(&o.stdout));
    let v = hurray(["validate".as_ref(), p.as_os_str()]);
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&v.stdout),
        String::from_utf8_lossy(&v.stderr)
    );
    assert!(!text.contains(SNEAKY_RAW), "validate: {text:?}");
}
