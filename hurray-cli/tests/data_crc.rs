//! `hurray validate` and the optional data CRC-32C: a file that records one names the
//! tensor whose byte was flipped; a file without the entry says its data is unchecked.

mod common;

use common::*;
use hurray_core::ElementType;
use hurray_io::file::{FileReader, FileWriterTo, WriteOptions};
use hurray_io::Tensor;

fn write(path: &std::path::Path, with_crc: bool) -> Vec<u8> {
    let a = Tensor::from_dense(ElementType::Uint8, &[4], &[1, 2, 3, 4]).unwrap();
    let w8 = Tensor::from_dense(ElementType::Uint8, &[3], &[9, 9, 9]).unwrap();
    let mut w = FileWriterTo::new(Vec::new(), WriteOptions::default()).unwrap();
    if with_crc {
        w = w.with_data_crc32c();
    }
    w.write_tensor("bias", &a).unwrap();
    w.write_tensor("weight", &w8).unwrap();
    let bytes = w.finish().unwrap();
    std::fs::write(path, &bytes).unwrap();
    bytes
}

#[test]
fn validate_names_the_tensor_whose_data_changed() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("m.hrry");
    let mut bytes = write(&p, true);
    let line = ok(hurray(["validate".as_ref(), p.as_os_str()]));
    assert!(
        line.contains("data CRC-32C verified for 2 tensors"),
        "{line}"
    );

    let at = FileReader::from_bytes(&bytes)
        .unwrap()
        .catalog()
        .buffer_ranges(1)
        .unwrap()[0]
        .start;
    bytes[at as usize + 1] ^= 0x01;
    std::fs::write(&p, &bytes).unwrap();
    let o = hurray(["validate".as_ref(), p.as_os_str()]);
    assert_eq!(o.status.code(), Some(1));
    let line = stdout(&o);
    assert!(
        line.contains("invalid")
            && line.contains("DataCrcMismatch")
            && line.contains("tensor \"weight\""),
        "{line}"
    );
}

#[test]
fn without_the_entry_validate_says_data_is_not_checked() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("m.hrry");
    write(&p, false);
    let line = ok(hurray(["validate".as_ref(), p.as_os_str()]));
    assert!(line.contains("data not checked"), "{line}");
}
