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

/// The data CRC entry of the HRRYFILE at `path` (None when it has none), after
/// checking it against the data.
fn recorded_crcs(path: &std::path::Path) -> Option<Vec<u64>> {
    use hurray_io::file::data_crc::{self, DataCrc, DATA_CRC32C_KEY};
    use hurray_io::file::KvValueRef;
    let r = FileReader::open(path).unwrap();
    match data_crc::verify(&r).unwrap() {
        DataCrc::Absent => return None,
        DataCrc::Verified(n) => assert_eq!(n, r.len()),
    }
    let v = r.kv_get(DATA_CRC32C_KEY).unwrap();
    Some(
        v.as_array()
            .unwrap()
            .iter()
            .map(|x| match x {
                KvValueRef::UInt64(x) => x,
                other => panic!("{other:?}"),
            })
            .collect(),
    )
}

/// A file with a dense tensor (copied by the kernel) and a COO tensor (two buffers:
/// written from memory), with or without the entry.
fn write_mixed(path: &std::path::Path, with_crc: bool) {
    let dense = Tensor::from_dense(ElementType::Float32, &[64], &bytes(256, 3)).unwrap();
    let values: Vec<u8> = [1.5f32, -2.0]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    let idx: Vec<u8> = [0u64, 1, 1, 0]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    let mut d = hurray_core::TensorDescriptor::dense(ElementType::Float32, &[2, 2]).unwrap();
    d.layout = hurray_core::Layout::Coo {
        nnz: 2,
        is_sorted: false,
    };
    d.buffers = [values.len(), idx.len()]
        .iter()
        .map(|&n| hurray_core::BufferHandle::cpu(n as u64))
        .collect();
    let coo = Tensor::new(
        d,
        vec![
            hurray_io::Buffer::copy_from(&values),
            hurray_io::Buffer::copy_from(&idx),
        ],
    )
    .unwrap();
    let mut w = FileWriterTo::new(Vec::new(), WriteOptions::default()).unwrap();
    if with_crc {
        w = w.with_data_crc32c();
    }
    w.write_tensor("dense", &dense).unwrap();
    w.write_tensor("coo", &coo).unwrap();
    std::fs::write(path, w.finish().unwrap()).unwrap();
}

#[test]
fn convert_data_crc32c_records_what_the_library_writer_records() {
    let dir = tempfile::tempdir().unwrap();
    let (plain, with, out) = (
        dir.path().join("plain.hrry"),
        dir.path().join("with.hrry"),
        dir.path().join("out.hrry"),
    );
    write_mixed(&plain, false);
    write_mixed(&with, true);
    let o = hurray([
        "convert".as_ref(),
        plain.as_os_str(),
        out.as_os_str(),
        "--data-crc32c".as_ref(),
    ]);
    assert!(stderr(&o).is_empty(), "{}", stderr(&o));
    ok(o);
    let want = recorded_crcs(&with).unwrap();
    assert_eq!(want.len(), 2);
    assert_eq!(recorded_crcs(&out), Some(want.clone()));
    assert_eq!(std::fs::read(&out).unwrap(), std::fs::read(&with).unwrap());
    let line = ok(hurray(["validate".as_ref(), out.as_os_str()]));
    assert!(
        line.contains("data CRC-32C verified for 2 tensors"),
        "{line}"
    );

    // A source that records CRCs: replaced by fresh ones with the flag, left out
    // (with a note) without it.
    let again = dir.path().join("again.hrry");
    ok(hurray([
        "convert".as_ref(),
        with.as_os_str(),
        again.as_os_str(),
        "--data-crc32c".as_ref(),
    ]));
    assert_eq!(recorded_crcs(&again), Some(want));
    let o = hurray(["convert".as_ref(), with.as_os_str(), again.as_os_str()]);
    assert!(
        stderr(&o).contains("data CRC-32C entry (\"hurray.data_crc32c\") was not carried"),
        "{}",
        stderr(&o)
    );
    ok(o);
    assert_eq!(recorded_crcs(&again), None);
    assert_eq!(
        std::fs::read(&again).unwrap(),
        std::fs::read(&plain).unwrap()
    );
}

#[test]
fn convert_data_crc32c_from_safetensors_then_a_flip_is_named() {
    use safetensors::tensor::Dtype;
    let dir = tempfile::tempdir().unwrap();
    let st = dir.path().join("m.safetensors");
    write_safetensors(
        &st,
        &[
            (
                "mask",
                Dtype::BOOL,
                vec![11],
                vec![1, 0, 1, 1, 0, 0, 1, 0, 1, 1, 1],
            ),
            ("weight", Dtype::F32, vec![32, 32], bytes(32 * 32 * 4, 7)),
        ],
        &[("model", "tiny")],
    );
    let out = dir.path().join("m.hrry");
    ok(hurray([
        "convert".as_ref(),
        st.as_os_str(),
        out.as_os_str(),
        "--data-crc32c".as_ref(),
    ]));
    // Checked against the bytes as written (bools packed by the conversion).
    assert_eq!(recorded_crcs(&out).map(|c| c.len()), Some(2));

    let mut file = std::fs::read(&out).unwrap();
    let r = FileReader::from_bytes(&file).unwrap();
    let c = r.catalog();
    let at = c.buffer_ranges(c.position("weight").unwrap()).unwrap()[0].start as usize;
    drop(r);
    file[at + 100] ^= 0x10;
    std::fs::write(&out, &file).unwrap();
    let o = hurray(["validate".as_ref(), out.as_os_str()]);
    assert_eq!(o.status.code(), Some(1));
    let line = stdout(&o);
    assert!(
        line.contains("DataCrcMismatch") && line.contains("tensor \"weight\""),
        "{line}"
    );
}

#[test]
fn convert_data_crc32c_needs_an_hrryfile_output_and_safetensors_drops_the_entry() {
    let dir = tempfile::tempdir().unwrap();
    let with = dir.path().join("with.hrry");
    write(&with, true);
    let stream = dir.path().join("out.hrrys");
    let line = fails(hurray([
        "convert".as_ref(),
        with.as_os_str(),
        stream.as_os_str(),
        "--data-crc32c".as_ref(),
    ]));
    assert!(
        line.contains("--data-crc32c") && line.contains("stream"),
        "{line}"
    );
    assert!(!stream.exists());

    // The entry is integrity data, not metadata safetensors could hold: left out.
    let st = dir.path().join("out.safetensors");
    let o = hurray(["convert".as_ref(), with.as_os_str(), st.as_os_str()]);
    assert!(stderr(&o).contains("was not carried"), "{}", stderr(&o));
    ok(o);
    let bytes = std::fs::read(&st).unwrap();
    let (_, meta) = safetensors::SafeTensors::read_metadata(&bytes).unwrap();
    assert!(meta.metadata().as_ref().is_none_or(|m| m.is_empty()));
}

#[test]
fn convert_refuses_an_input_whose_recorded_crcs_do_not_match() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("m.hrry");
    let mut bytes = write(&p, true);
    // Intact: converts, with or without recording fresh values.
    let good = dir.path().join("good.hrry");
    ok(hurray([
        "convert".as_ref(),
        p.as_os_str(),
        good.as_os_str(),
    ]));
    assert!(good.exists());

    let at = FileReader::from_bytes(&bytes)
        .unwrap()
        .catalog()
        .buffer_ranges(1)
        .unwrap()[0]
        .start;
    bytes[at as usize] ^= 0x80;
    std::fs::write(&p, &bytes).unwrap();
    for (flag, out) in [
        (Some("--data-crc32c"), "again.hrry"),
        (None, "plain.hrry"),
        (None, "out.safetensors"),
    ] {
        let out = dir.path().join(out);
        let mut args: Vec<&std::ffi::OsStr> = vec!["convert".as_ref()];
        if let Some(f) = flag {
            args.push(f.as_ref());
        }
        args.push(p.as_os_str());
        args.push(out.as_os_str());
        let line = fails(hurray(args));
        assert!(
            line.contains("DataCrcMismatch") && line.contains("tensor \"weight\""),
            "{line}"
        );
        assert!(
            !out.exists(),
            "no output for damaged data: {}",
            out.display()
        );
    }
}
