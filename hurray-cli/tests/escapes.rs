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
