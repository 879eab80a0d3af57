//! The golden file `basic.hrry` (`../shared/conformance`): it opens through every
//! reader (mmap, in memory, sequential), decodes to what `manifest.json` says, and the
//! reference-compatible writer reproduces it byte for byte.

use hurray_core::{ElementType, TensorDescriptor};
use hurray_io::file::{
    flags, CrcStatus, FileReader, FileWriter, FileWriterTo, KvValue, SequentialReader, WriteOptions,
};
use hurray_io::{Item, Tensor};
use serde_json::Value;
use std::path::PathBuf;

fn conformance_dir() -> Option<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/conformance");
    if dir.join("manifest.json").is_file() {
        Some(dir)
    } else {
        eprintln!(
            "SKIPPED: {} not found (golden vectors live in ../shared beside the repository)",
            dir.display()
        );
        None
    }
}

struct Golden {
    bytes: Vec<u8>,
    path: PathBuf,
    manifest: Value,
}

fn golden() -> Option<Golden> {
    let dir = conformance_dir()?;
    let manifest: Value =
        serde_json::from_slice(&std::fs::read(dir.join("manifest.json")).unwrap()).unwrap();
    let file = manifest["files"][0].clone();
    assert_eq!(file["file"], "files/basic.hrry");
    let path = dir.join("files/basic.hrry");
    Some(Golden {
        bytes: std::fs::read(&path).unwrap(),
        path,
        manifest: file,
    })
}

/// Checks a tensor against its manifest entry.
fn check_tensor(t: &Tensor, m: &Value) {
    let name = m["name"].as_str().unwrap();
    let d = t.descriptor();
    assert_eq!(
        u64::from(d.element_type.tag()),
        m["element_type_tag"].as_u64().unwrap(),
        "{name}"
    );
    assert_eq!(
        d.element_type.to_string(),
        m["element_type"].as_str().unwrap()
    );
    let shape: Vec<u64> = m["shape"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect();
    assert_eq!(d.shape, shape, "{name}");
    assert_eq!(t.data_len(), m["data_bytes"].as_u64().unwrap(), "{name}");
    assert_eq!(t.buffers().len(), 1);
    // The vector's payload is all zero bytes (file-format.md §15).
    assert!(t.buffers()[0].as_slice().iter().all(|&b| b == 0));
}

fn check_kv(kv: &[hurray_io::file::KvEntry], m: &Value) {
    let want = m["kv"].as_array().unwrap();
    assert_eq!(kv.len(), want.len());
    for (e, w) in kv.iter().zip(want) {
        assert_eq!(e.key, w["key"].as_str().unwrap());
        match w["kind"].as_str().unwrap() {
            "string" => assert_eq!(
                e.value,
                KvValue::String(w["value_string"].as_str().unwrap().into())
            ),
            "int64" => assert_eq!(e.value, KvValue::Int64(w["value_int"].as_i64().unwrap())),
            k => panic!("manifest kind {k} not handled"),
        }
    }
}

fn check_reader(r: &FileReader, m: &Value) {
    let tensors = m["tensors"].as_array().unwrap();
    let names: Vec<&str> = r.names().collect();
    let want: Vec<&str> = tensors
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, want, "names in index order");
    for t in tensors {
        let name = t["name"].as_str().unwrap();
        check_tensor(&r.tensor(name).unwrap().unwrap(), t);
        assert_eq!(
            r.descriptor(name).unwrap().as_ref(),
            r.tensor(name).unwrap().unwrap().descriptor()
        );
    }
    check_kv(&r.kv().to_vec(), m);
    assert_eq!(r.kv_get("tensor_count").unwrap(), KvValue::Int64(2));
    let info = r.info();
    assert_eq!(info.version(), (1, 0));
    assert_eq!(info.flags(), flags::HAS_INDEX_CRC32C);
    assert_eq!(info.data_buffer_alignment(), 4096);
    assert_eq!(info.tensor_count_hint(), None);
    assert_eq!(info.crc, CrcStatus::Verified(0x5134_9F72));
    assert_eq!(info.kv_section(), Some((0x2008, 60)));
    assert_eq!(info.file_len, 8391);
    let items = r.items().unwrap();
    assert_eq!(items.len(), 2);
    assert!(items.iter().all(|(_, i)| matches!(i, Item::Tensor(_))));
}

#[test]
fn basic_hrry_opens_memory_mapped() {
    let Some(g) = golden() else { return };
    let r = FileReader::open(&g.path).unwrap();
    check_reader(&r, &g.manifest);
    // Views point into the mapping, at the 4096-aligned offsets of the file.
    let w = r.tensor("weights").unwrap().unwrap();
    let base = r.bytes().as_ptr() as usize;
    assert_eq!(w.buffers()[0].as_slice().as_ptr() as usize - base, 0x1000);
    assert_eq!(w.buffers()[0].as_slice().as_ptr() as usize % 4096, 0);
    // The tensor keeps the mapping alive after the reader is gone.
    drop(r);
    assert_eq!(w.buffers()[0].len(), 16);
    assert!(w.buffers()[0].as_slice().iter().all(|&b| b == 0));
}

#[test]
fn basic_hrry_opens_from_bytes() {
    let Some(g) = golden() else { return };
    let r = FileReader::from_bytes(&g.bytes).unwrap();
    check_reader(&r, &g.manifest);
    let b = r.tensor("bias").unwrap().unwrap();
    assert_eq!(
        b.buffers()[0].as_slice().as_ptr() as usize - r.bytes().as_ptr() as usize,
        0x2000
    );
}

#[test]
fn basic_hrry_reads_sequentially() {
    let Some(g) = golden() else { return };
    let mut s = SequentialReader::new(&g.bytes[..]).unwrap();
    let mut seen = Vec::new();
    while let Some((at, item)) = s.next_item().unwrap() {
        seen.push((at, item));
    }
    assert_eq!(
        seen.iter().map(|(at, _)| *at).collect::<Vec<_>>(),
        vec![0x40, 0x1010]
    );
    assert_eq!(s.name_of(0x40), Some("weights"));
    assert_eq!(s.name_of(0x1010), Some("bias"));
    check_kv(s.kv().unwrap(), &g.manifest);
    assert_eq!(s.offset(), 8391);
    let all = SequentialReader::new(&g.bytes[..])
        .unwrap()
        .read_all()
        .unwrap();
    for ((name, item), m) in all
        .items
        .iter()
        .zip(g.manifest["tensors"].as_array().unwrap())
    {
        assert_eq!(name, m["name"].as_str().unwrap());
        check_tensor(item.as_tensor().unwrap(), m);
    }
}

/// Named tensors and named KV values.
type Content = (Vec<(String, Tensor)>, Vec<(String, KvValue)>);

/// The tensors and KV of the manifest, built from scratch.
fn golden_content(m: &Value) -> Content {
    let tensors = m["tensors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            let ty = ElementType::from_tag(t["element_type_tag"].as_u64().unwrap() as u8).unwrap();
            let shape: Vec<u64> = t["shape"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_u64().unwrap())
                .collect();
            let data = vec![0u8; t["data_bytes"].as_u64().unwrap() as usize];
            let d = TensorDescriptor::dense(ty, &shape).unwrap();
            (
                t["name"].as_str().unwrap().to_owned(),
                Tensor::new(d, vec![hurray_io::Buffer::copy_from(&data)]).unwrap(),
            )
        })
        .collect();
    let kv = vec![
        (
            "producer".to_owned(),
            KvValue::String("hurray-conformance".into()),
        ),
        ("tensor_count".to_owned(), KvValue::Int64(2)),
    ];
    (tensors, kv)
}

#[test]
fn reference_compatible_writer_reproduces_basic_hrry_byte_for_byte() {
    let Some(g) = golden() else { return };
    let (tensors, kv) = golden_content(&g.manifest);

    // In memory, KV added before the tensors (the compat mode still leaves the flag clear).
    let mut w = FileWriterTo::new(Vec::new(), WriteOptions::reference_compatible()).unwrap();
    for (k, v) in &kv {
        w.add_kv(k.clone(), v.clone()).unwrap();
    }
    for (n, t) in &tensors {
        w.write_tensor(n, t).unwrap();
    }
    let out = w.finish().unwrap();
    assert_eq!(out.len(), g.bytes.len());
    assert!(
        out == g.bytes,
        "the compat writer must reproduce basic.hrry"
    );

    // Through the atomic path writer, KV added after the tensors.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("basic.hrry");
    let mut w = FileWriter::create(&path, WriteOptions::reference_compatible()).unwrap();
    for (n, t) in &tensors {
        w.write_tensor(n, t).unwrap();
    }
    for (k, v) in &kv {
        w.add_kv(k.clone(), v.clone()).unwrap();
    }
    w.finish().unwrap();
    assert!(std::fs::read(&path).unwrap() == g.bytes);
}

#[test]
fn default_writer_differs_only_in_the_kv_flag_when_kv_comes_first() {
    let Some(g) = golden() else { return };
    let (tensors, kv) = golden_content(&g.manifest);
    let mut w = FileWriterTo::new(Vec::new(), WriteOptions::default()).unwrap();
    for (k, v) in &kv {
        w.add_kv(k.clone(), v.clone()).unwrap();
    }
    for (n, t) in &tensors {
        w.write_tensor(n, t).unwrap();
    }
    let out = w.finish().unwrap();
    let diff: Vec<usize> = (0..out.len()).filter(|&i| out[i] != g.bytes[i]).collect();
    assert_eq!(diff, vec![12], "only file_flags differ");
    assert_eq!(out[12], 0x05, "HAS_KV_METADATA | HAS_INDEX_CRC32C");
    let r = FileReader::from_bytes(&out).unwrap();
    check_reader_flags_aside(&r, &g.manifest);
}

fn check_reader_flags_aside(r: &FileReader, m: &Value) {
    check_kv(&r.kv().to_vec(), m);
    for t in m["tensors"].as_array().unwrap() {
        check_tensor(&r.tensor(t["name"].as_str().unwrap()).unwrap().unwrap(), t);
    }
}
