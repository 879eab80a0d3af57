//! The files and the probe of `cargo xtask amplification`: how much memory a reader
//! needs to open a file and read its KV section and index, against those sections'
//! bytes (issue 16, item 2).
//!
//! `write_files` makes three files, each within the default reader limits:
//!
//! - `kv_strings.hrry`: one KV entry, an array of as many empty strings as a 64 MiB
//!   KV section holds (4 bytes each, their length prefixes);
//! - `kv_bools.hrry`: one KV entry, an array of the same number of bools (1 byte each);
//! - `heads.hrry`: 2^20 composite heads (group rule, no members), each its own
//!   index entry and descriptor;
//!
//! plus `tiny.hrry` (one small KV entry, one tensor), the baseline of each language.
//! `metadata` is the Rust half of the probe every language has (`PROGRAM metadata
//! FILE`): open the file, read every KV value in full and every tensor name, and
//! print what was read, so that the caller can measure the process's peak memory.

use hurray_core::TensorDescriptor;
use hurray_core::{CombineOp, CompositeHead, CompositionRule, ElementType, Layout};
use hurray_io::file::{KvArray, KvValue, KvValueRef, WriteOptions};
use hurray_io::{Composite, FileReader, FileWriter, Tensor};
use std::path::Path;

/// Elements of the two KV arrays: the most 4-byte string elements a 64 MiB KV
/// section holds next to `kv_count`, a 7-byte key, the tags and the element count.
pub const KV_ELEMENTS: usize = ((64 << 20) - 4 - 2 - 7 - 1 - 1 - 4) / 4;

/// Composite heads in `heads.hrry`.
pub const HEADS: usize = 1 << 20;

/// The files [`write_files`] makes, with what each holds.
pub const FILES: [(&str, &str); 4] = [
    ("tiny.hrry", "baseline: one small KV entry, one tensor"),
    ("kv_strings.hrry", "KV: one array of 16.7 M empty strings"),
    ("kv_bools.hrry", "KV: one array of 16.7 M bools"),
    ("heads.hrry", "index: 1 M composite heads"),
];

fn options() -> WriteOptions {
    WriteOptions {
        durable: false,
        ..WriteOptions::default()
    }
}

fn write_kv(path: &Path, key: &str, value: KvValue) -> Result<(), String> {
    let mut w = FileWriter::create(path, options()).map_err(|e| format!("create: {e}"))?;
    w.add_kv(key, value).map_err(|e| format!("add_kv: {e}"))?;
    w.finish().map_err(|e| format!("finish: {e}"))
}

/// Writes the files of [`FILES`] into `dir` (which exists).
///
/// Errors: the first failure, as a sentence.
pub fn write_files(dir: &Path) -> Result<(), String> {
    let mut w =
        FileWriter::create(dir.join("tiny.hrry"), options()).map_err(|e| format!("create: {e}"))?;
    let t = Tensor::from_dense(ElementType::Int8, &[3], &[1, 2, 3]).map_err(|e| e.to_string())?;
    w.write_tensor("t", &t).map_err(|e| e.to_string())?;
    w.add_kv("producer", KvValue::String("amplification".into()))
        .map_err(|e| e.to_string())?;
    w.finish().map_err(|e| e.to_string())?;

    write_kv(
        &dir.join("kv_strings.hrry"),
        "strings",
        KvValue::Array(KvArray::String(vec![String::new(); KV_ELEMENTS])),
    )?;
    write_kv(
        &dir.join("kv_bools.hrry"),
        "boolean",
        KvValue::Array(KvArray::Bool(
            (0..KV_ELEMENTS).map(|i| i % 3 == 0).collect(),
        )),
    )?;

    let head = TensorDescriptor {
        layout: Layout::CompositeHead(CompositeHead {
            rule: CompositionRule::Group,
            combine_op: CombineOp::None,
            member_count: 0,
        }),
        buffers: Vec::new(),
        ..TensorDescriptor::dense(ElementType::Float32, &[4]).map_err(|e| e.to_string())?
    };
    let head = Composite {
        head: Tensor::new(head, Vec::new()).map_err(|e| e.to_string())?,
        members: Vec::new(),
    };
    let mut w = FileWriter::create(dir.join("heads.hrry"), options())
        .map_err(|e| format!("create: {e}"))?;
    for i in 0..HEADS {
        w.write_composite_named(&[&format!("head{i:07}")], &head)
            .map_err(|e| format!("head {i}: {e}"))?;
    }
    w.finish().map_err(|e| e.to_string())
}

/// Opens `path` (memory-mapped, validated), reads every KV value in full (every
/// element of every array decoded) and every tensor name, and prints `kv_entries`,
/// `kv_elements` (scalars count 1, arrays their elements), `kv_value_bytes` (string
/// and byte payloads), `tensors` and `name_bytes`, one tab-separated line each.
///
/// Errors: the file does not open.
pub fn metadata(path: &Path) -> Result<(), String> {
    let r = FileReader::open(path).map_err(|e| format!("open: {e}"))?;
    let (mut elements, mut bytes) = (0u64, 0u64);
    for e in r.kv() {
        match e.value {
            KvValueRef::Array(a) => {
                for x in a.iter() {
                    elements += 1;
                    bytes += payload(x);
                }
            }
            v => {
                elements += 1;
                bytes += payload(v);
            }
        }
    }
    let names: u64 = r.names().map(|n| n.len() as u64).sum();
    println!("kv_entries\t{}", r.kv().len());
    println!("kv_elements\t{elements}");
    println!("kv_value_bytes\t{bytes}");
    println!("tensors\t{}", r.len());
    println!("name_bytes\t{names}");
    Ok(())
}

/// Payload bytes of a string or byte value, else 0.
fn payload(v: KvValueRef<'_>) -> u64 {
    match v {
        KvValueRef::String(s) => s.len() as u64,
        KvValueRef::Bytes(b) => b.len() as u64,
        _ => 0,
    }
}
