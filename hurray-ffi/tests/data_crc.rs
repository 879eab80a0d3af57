//! The optional data CRC-32C across the C ABI: `HurrayWriteOptions.data_crc32c`
//! records it, `hurray_file_reader_verify_data_crc32c` (and its Rust face) checks it,
//! naming the tensor whose byte was flipped, and answers `HURRAY_CRC_ABSENT` for a
//! file without the entry. Off by default: the bytes are those of a file written
//! without the option.

mod common;

use common::{err, live, ok};
use hurray_core::{ElementType, TensorDescriptor};
use hurray_ffi::file::*;
use hurray_ffi::*;
use std::ffi::CString;
use std::path::{Path, PathBuf};
use std::ptr::null_mut;
use std::sync::Arc;

fn temp_path(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("hurray-ffi-crc-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// A dense uint8 tensor holding `bytes`.
fn u8_tensor(bytes: &[u8]) -> HurrayTensor {
    let d = TensorDescriptor::dense(ElementType::Uint8, &[bytes.len() as u64]).unwrap();
    let d = HurrayDescriptor::new(Arc::new(d)).unwrap();
    let b = HurrayBuffer::host(hurray_io::Buffer::copy_from(bytes), Placement::cpu(64));
    HurrayTensor::new(d, vec![Box::new(b)], None).unwrap()
}

/// Writes tensors `bias` [1 2 3 4] and `weight` [9 9 9] through the face.
fn write(path: &Path, data_crc32c: u8) {
    let opts = HurrayWriteOptions {
        durable: 0,
        data_crc32c,
        ..HurrayWriteOptions::default()
    };
    let mut w = HurrayFileWriter::create(path, &opts).unwrap();
    w.write_tensor("bias", &u8_tensor(&[1, 2, 3, 4])).unwrap();
    w.write_tensor("weight", &u8_tensor(&[9, 9, 9])).unwrap();
    w.finish().unwrap();
}

/// Flips bit 0 of the second data byte of tensor `name`.
fn flip(path: &Path, name: &str) {
    let mut bytes = std::fs::read(path).unwrap();
    let r = hurray_io::FileReader::from_bytes(&bytes).unwrap();
    let c = r.catalog();
    let at = c.buffer_ranges(c.position(name).unwrap()).unwrap()[0].start as usize;
    drop(r);
    bytes[at + 1] ^= 0x01;
    std::fs::write(path, &bytes).unwrap();
}

/// `hurray_file_reader_verify_data_crc32c` on a fresh reader of `path`.
fn verify_c(path: &Path) -> (HurrayStatus, u8) {
    let cpath = CString::new(path.to_str().unwrap()).unwrap();
    let mut r = null_mut();
    let mut status = 0xEE;
    // SAFETY: valid NUL-terminated path, writable outs; the reader is destroyed here.
    unsafe {
        ok(hurray_file_reader_open(cpath.as_ptr(), &mut r));
        let s = hurray_file_reader_verify_data_crc32c(r, &mut status);
        ok(hurray_file_reader_destroy(&mut r));
        (s, status)
    }
}

#[test]
fn the_option_is_off_by_default_and_keeps_the_struct_size() {
    let mut o = HurrayWriteOptions {
        data_crc32c: 9,
        ..HurrayWriteOptions::default()
    };
    // SAFETY: writable out.
    ok(unsafe { hurray_write_options_default(&mut o) });
    assert_eq!(o.data_crc32c, 0);
    // The new byte took tail padding: size and earlier offsets are those of ABI 10
    // before it.
    assert_eq!(std::mem::size_of::<HurrayWriteOptions>(), 24);
    assert_eq!(std::mem::offset_of!(HurrayWriteOptions, durable), 19);
    assert_eq!(std::mem::offset_of!(HurrayWriteOptions, data_crc32c), 20);
}

#[test]
fn a_flipped_data_byte_is_named_by_tensor_through_the_face_and_the_c_face() {
    let _l = live();
    let path = temp_path("crc.hrry");
    write(&path, 1);
    let r = HurrayFileReader::open(&path, &ReadOptions::default()).unwrap();
    assert_eq!(r.verify_data_crc32c().unwrap(), DataCrc::Verified(2));
    assert_eq!(r.kv_find("hurray.data_crc32c"), Some(0));
    drop(r);
    assert_eq!(verify_c(&path), (HURRAY_OK, HURRAY_CRC_VERIFIED));

    flip(&path, "weight");
    // Opening does not read data: the file still opens.
    let r = HurrayFileReader::open(&path, &ReadOptions::default()).unwrap();
    let e = match r.verify_data_crc32c() {
        Ok(v) => panic!("a flipped byte verified: {v:?}"),
        Err(e) => e,
    };
    assert_eq!(e.status, HURRAY_ERR_FORMAT);
    assert!(
        e.message.contains("DataCrcMismatch") && e.message.contains("tensor \"weight\""),
        "{}",
        e.message
    );
    drop(r);
    let (s, status) = verify_c(&path);
    err(s, HURRAY_ERR_FORMAT, "tensor \"weight\"");
    assert_eq!(status, 0xEE, "out_status is not written on an error");
    let _ = std::fs::remove_file(&path);
}

#[test]
fn without_the_entry_the_answer_is_absent_and_the_bytes_are_unchanged() {
    let _l = live();
    let plain = temp_path("plain.hrry");
    let off = temp_path("off.hrry");
    write(&plain, 0);
    // A file written by hurray-io with default options: byte-identical.
    let mut w = hurray_io::FileWriter::create(
        &off,
        hurray_io::WriteOptions {
            durable: false,
            ..Default::default()
        },
    )
    .unwrap();
    for (n, b) in [("bias", &[1u8, 2, 3, 4][..]), ("weight", &[9, 9, 9])] {
        let t = hurray_io::Tensor::from_dense(ElementType::Uint8, &[b.len() as u64], b).unwrap();
        w.write_tensor(n, &t).unwrap();
    }
    w.finish().unwrap();
    assert_eq!(std::fs::read(&plain).unwrap(), std::fs::read(&off).unwrap());

    let r = HurrayFileReader::open(&plain, &ReadOptions::default()).unwrap();
    assert_eq!(r.verify_data_crc32c().unwrap(), DataCrc::Absent);
    assert_eq!(r.kv_count(), 0);
    drop(r);
    assert_eq!(verify_c(&plain), (HURRAY_OK, HURRAY_CRC_ABSENT));
    // Unchecked data: a flipped byte goes unnoticed, and the answer says so.
    flip(&plain, "weight");
    assert_eq!(verify_c(&plain), (HURRAY_OK, HURRAY_CRC_ABSENT));
    let _ = std::fs::remove_file(&plain);
    let _ = std::fs::remove_file(&off);
}

#[test]
fn bad_flags_and_null_pointers_are_refused() {
    let _l = live();
    let path = temp_path("bad.hrry");
    let bad = HurrayWriteOptions {
        data_crc32c: 2,
        ..HurrayWriteOptions::default()
    };
    let e = match HurrayFileWriter::create(&path, &bad) {
        Ok(_) => panic!("data_crc32c 2 accepted"),
        Err(e) => e,
    };
    assert_eq!(e.status, HURRAY_ERR_INVALID_ARGUMENT);
    assert!(e.message.contains("data_crc32c is 2"), "{}", e.message);
    assert!(!path.exists());

    write(&path, 1);
    let cpath = CString::new(path.to_str().unwrap()).unwrap();
    let mut r = null_mut();
    let mut status = 0u8;
    // SAFETY: valid path and outs; NULLs are what is being tested.
    unsafe {
        err(
            hurray_file_reader_verify_data_crc32c(std::ptr::null(), &mut status),
            HURRAY_ERR_NULL_POINTER,
            "reader",
        );
        ok(hurray_file_reader_open(cpath.as_ptr(), &mut r));
        err(
            hurray_file_reader_verify_data_crc32c(r, null_mut()),
            HURRAY_ERR_NULL_POINTER,
            "out_status",
        );
        ok(hurray_file_reader_destroy(&mut r));
    }
    let _ = std::fs::remove_file(&path);
}
