//! `hurray inspect FILE [--json]`: what a Hurray container holds. The facts are
//! gathered once into a [`Report`], which renders as a table for people
//! ([`table`]) or as JSON for programs (the `Serialize` form of [`Report`], whose
//! field names and order are the stable JSON schema, documented in `docs/cli.md`).

pub mod table;

use crate::container::Container;
use crate::convert::to_st::kv_type_name;
use hurray_core::{MemoryClass, TensorDescriptor, DYN};
use hurray_io::file::{CrcStatus, KvArray, KvValue};
use serde::Serialize;
use serde_json::{json, Value};

/// Version of the JSON schema below; bumped on any incompatible change.
pub const SCHEMA_VERSION: u32 = 1;

/// Everything `inspect` shows.
#[derive(Debug, Serialize)]
pub struct Report {
    /// JSON schema version ([`SCHEMA_VERSION`]).
    pub schema: u32,
    /// `"hrry"` or `"stream"`.
    pub format: &'static str,
    /// File size in bytes.
    pub file_size: u64,
    /// File-level facts (HRRYFILE only).
    pub file: Option<FileFacts>,
    /// KV metadata, in file order (empty for a stream).
    pub kv: Vec<KvRow>,
    /// Tensors, in index order for a file, stream order for a stream.
    pub tensors: Vec<TensorRow>,
    /// Sum of every tensor's buffer sizes.
    pub data_bytes: u64,
}

/// Header and trailer facts of an HRRYFILE.
#[derive(Debug, Serialize)]
pub struct FileFacts {
    /// Container version, `"major.minor"`.
    pub version: String,
    /// `data_buffer_alignment` in bytes.
    pub data_buffer_alignment: u32,
    /// `tensor_count_hint`, `null` when the writer did not know.
    pub tensor_count_hint: Option<u64>,
    /// `SORTED_INDEX`.
    pub sorted_index: bool,
    /// `HAS_KV_METADATA` (KV may be present with it clear; see `kv`).
    pub kv_flag: bool,
    /// Index CRC-32C: `"verified"` or `"absent"`.
    pub index_crc32c: &'static str,
    /// The verified CRC value, as `0x%08x`.
    pub index_crc32c_value: Option<String>,
}

/// One KV entry.
#[derive(Debug, Serialize)]
pub struct KvRow {
    /// The key.
    pub key: String,
    /// Value type: `string`, `int64`, `uint64`, `float64`, `bool`, `bytes`,
    /// `array<T>`.
    #[serde(rename = "type")]
    pub ty: String,
    /// The value (bytes as lower-case hex; non-finite floats as strings).
    pub value: Value,
}

/// One tensor.
#[derive(Debug, Serialize)]
pub struct TensorRow {
    /// Name (`tensor_K` by position in a stream, which has no names).
    pub name: String,
    /// Element type name (`float32`, `int4`, ...).
    pub dtype: String,
    /// Dimensions; `null` for a dynamic one.
    pub shape: Vec<Option<u64>>,
    /// Layout name (`row_major`, `csr`, `composite_head`, ...).
    pub layout: String,
    /// Sum of the buffer sizes in bytes.
    pub bytes: u64,
    /// Number of buffers.
    pub buffers: usize,
    /// Quantization scheme name, `null` when not quantized.
    pub quantization: Option<String>,
    /// Device of buffer 0 (`cpu`, `cuda`, ...), with `/memory_class` when not standard.
    pub device: String,
    /// Offset of the descriptor in the file or stream (`null` for composite members
    /// of a stream).
    pub descriptor_offset: Option<u64>,
    /// Offset of buffer 0 in the file or stream (`null` for a bufferless tensor and
    /// for composite members of a stream).
    pub data_offset: Option<u64>,
}

/// Builds the report for an opened container of `file_size` bytes.
pub fn report(c: &Container, file_size: u64) -> Report {
    let (format, file, kv, tensors) = match c {
        Container::File(r) => {
            let info = r.info();
            let (major, minor) = info.version();
            let (crc, value) = match info.crc {
                CrcStatus::Verified(v) => ("verified", Some(format!("{v:#010x}"))),
                CrcStatus::Absent => ("absent", None),
            };
            let facts = FileFacts {
                version: format!("{major}.{minor}"),
                data_buffer_alignment: info.data_buffer_alignment(),
                tensor_count_hint: info.tensor_count_hint(),
                sorted_index: info.sorted_index(),
                kv_flag: info.flags() & hurray_io::file::flags::HAS_KV_METADATA != 0,
                index_crc32c: crc,
                index_crc32c_value: value,
            };
            let kv = r.kv().iter().map(|e| kv_row(&e.key, &e.value)).collect();
            let catalog = r.catalog();
            let tensors: Vec<TensorRow> = r
                .entries()
                .iter()
                .enumerate()
                .filter_map(|(i, e)| {
                    let d = catalog.descriptor_at(i)?;
                    let data = (!d.buffers.is_empty()).then_some(e.data_offset);
                    Some(tensor_row(&e.name, d, Some(e.descriptor_offset), data))
                })
                .collect();
            ("hrry", Some(facts), kv, tensors)
        }
        Container::Stream { tensors, .. } => {
            let rows = tensors
                .iter()
                .map(|t| tensor_row(&t.name, &t.descriptor, t.offset, t.data_offset))
                .collect();
            ("stream", None, Vec::new(), rows)
        }
    };
    let data_bytes = tensors.iter().map(|t: &TensorRow| t.bytes).sum();
    Report {
        schema: SCHEMA_VERSION,
        format,
        file_size,
        file,
        kv,
        tensors,
        data_bytes,
    }
}

fn tensor_row(
    name: &str,
    d: &TensorDescriptor,
    descriptor_offset: Option<u64>,
    data_offset: Option<u64>,
) -> TensorRow {
    let device = d.buffers.first().map_or_else(
        || "-".to_owned(),
        |h| match h.memory_class {
            MemoryClass::Standard => h.device.name().to_owned(),
            m => format!("{}/{}", h.device.name(), memory_class_name(m)),
        },
    );
    TensorRow {
        name: name.to_owned(),
        dtype: d.element_type.to_string(),
        shape: d.shape.iter().map(|&n| (n != DYN).then_some(n)).collect(),
        layout: d.layout.name().to_owned(),
        bytes: d.buffers.iter().map(|b| b.byte_size).sum(),
        buffers: d.buffers.len(),
        quantization: d.quantization.as_ref().map(|q| q.scheme.name().to_owned()),
        device,
        descriptor_offset,
        data_offset,
    }
}

fn memory_class_name(m: MemoryClass) -> String {
    match m {
        MemoryClass::Standard => "standard".into(),
        MemoryClass::HostPinned => "host_pinned".into(),
        MemoryClass::Unified => "unified".into(),
        MemoryClass::Peer => "peer".into(),
        MemoryClass::Private(t) => format!("private({t:#04x})"),
    }
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn float(x: f64) -> Value {
    if x.is_finite() {
        json!(x)
    } else {
        json!(x.to_string())
    }
}

/// The row `inspect` shows for one KV entry.
pub fn kv_row(key: &str, v: &KvValue) -> KvRow {
    let (ty, value) = match v {
        KvValue::String(s) => ("string".to_owned(), json!(s)),
        KvValue::Int64(x) => ("int64".to_owned(), json!(x)),
        KvValue::UInt64(x) => ("uint64".to_owned(), json!(x)),
        KvValue::Float64(x) => ("float64".to_owned(), float(*x)),
        KvValue::Bool(x) => ("bool".to_owned(), json!(x)),
        KvValue::Bytes(b) => ("bytes".to_owned(), json!(hex(b))),
        KvValue::Array(a) => {
            let (elem, items): (&str, Vec<Value>) = match a {
                KvArray::String(v) => ("string", v.iter().map(|s| json!(s)).collect()),
                KvArray::Int64(v) => ("int64", v.iter().map(|x| json!(x)).collect()),
                KvArray::UInt64(v) => ("uint64", v.iter().map(|x| json!(x)).collect()),
                KvArray::Float64(v) => ("float64", v.iter().map(|&x| float(x)).collect()),
                KvArray::Bool(v) => ("bool", v.iter().map(|x| json!(x)).collect()),
                KvArray::Bytes(v) => ("bytes", v.iter().map(|b| json!(hex(b))).collect()),
            };
            (format!("array<{elem}>"), Value::Array(items))
        }
    };
    debug_assert!(ty.starts_with(kv_type_name(v)));
    KvRow {
        key: key.to_owned(),
        ty,
        value,
    }
}
