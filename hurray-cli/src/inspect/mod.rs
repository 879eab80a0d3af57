//! `hurray inspect FILE [--json]`: what a Hurray container holds. The facts are
//! gathered into a [`Report`], which renders as a table for people ([`table`]) or as
//! JSON for programs (the `Serialize` form of [`Report`], whose field names and order
//! are the stable JSON schema, documented in `docs/cli.md`).
//!
//! A report does not hold its rows: KV rows and tensor rows are made one at a time
//! from the open container while they are written, and KV values are written
//! element by element ([`value`]), so inspecting a file costs about what opening it
//! does, however many tensors or KV elements it holds.

pub mod table;
pub mod value;

use crate::container::{Container, StreamTensor};
use hurray_core::{MemoryClass, TensorDescriptor, DYN};
use hurray_io::file::{CrcStatus, KvValue};
use hurray_io::FileReader;
use serde::ser::SerializeSeq;
use serde::{Serialize, Serializer};
use value::Shown;

/// Version of the JSON schema below; bumped on any incompatible change.
pub const SCHEMA_VERSION: u32 = 1;

/// Everything `inspect` shows, borrowed from the open container.
#[derive(Serialize)]
pub struct Report<'a> {
    /// JSON schema version ([`SCHEMA_VERSION`]).
    pub schema: u32,
    /// `"hrry"` or `"stream"`.
    pub format: &'static str,
    /// File size in bytes.
    pub file_size: u64,
    /// File-level facts (HRRYFILE only).
    pub file: Option<FileFacts>,
    /// KV metadata, in file order (empty for a stream).
    pub kv: KvRows<'a>,
    /// Tensors, in index order for a file, stream order for a stream.
    pub tensors: TensorRows<'a>,
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
#[derive(Serialize)]
pub struct KvRow<'a> {
    /// The key.
    pub key: &'a str,
    /// Value type: `string`, `int64`, `uint64`, `float64`, `bool`, `bytes`,
    /// `array<T>`.
    #[serde(rename = "type")]
    pub ty: String,
    /// The value (bytes as lower-case hex; non-finite floats as strings), rendered
    /// when written.
    pub value: Shown<'a>,
}

/// The KV rows of a report, made from the container when asked for.
#[derive(Clone, Copy)]
pub struct KvRows<'a>(Option<&'a FileReader>);

impl<'a> KvRows<'a> {
    /// Number of rows.
    pub fn len(&self) -> usize {
        self.0.map_or(0, |r| r.kv().len())
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The rows, in file order.
    pub fn iter(&self) -> impl Iterator<Item = KvRow<'a>> + 'a {
        self.0
            .into_iter()
            .flat_map(|r| r.kv().iter())
            .map(|e| kv_row(e.key, Shown::File(e.value)))
    }
}

impl Serialize for KvRows<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(self.len()))?;
        for row in self.iter() {
            seq.serialize_element(&row)?;
        }
        seq.end()
    }
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

/// The tensor rows of a report, made from the container when asked for (a file's
/// descriptors are decoded one row at a time).
#[derive(Clone, Copy)]
pub enum TensorRows<'a> {
    /// The entries of a file, in index order.
    File(&'a FileReader),
    /// The tensors of a stream, in stream order.
    Stream(&'a [StreamTensor]),
}

impl<'a> TensorRows<'a> {
    /// Number of rows.
    pub fn len(&self) -> usize {
        match self {
            TensorRows::File(r) => r.len(),
            TensorRows::Stream(t) => t.len(),
        }
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The rows.
    pub fn iter(&self) -> Box<dyn Iterator<Item = TensorRow> + 'a> {
        match *self {
            TensorRows::File(r) => {
                let c = r.catalog();
                Box::new(r.entries().enumerate().filter_map(move |(i, e)| {
                    let d = c.descriptor_at(i)?;
                    let data = (!d.buffers.is_empty()).then_some(e.data_offset);
                    Some(tensor_row(e.name, &d, Some(e.descriptor_offset), data))
                }))
            }
            TensorRows::Stream(t) => Box::new(
                t.iter()
                    .map(|t| tensor_row(&t.name, &t.descriptor, t.offset, t.data_offset)),
            ),
        }
    }
}

impl Serialize for TensorRows<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(self.len()))?;
        for row in self.iter() {
            seq.serialize_element(&row)?;
        }
        seq.end()
    }
}

/// Builds the report for an opened container of `file_size` bytes.
pub fn report(c: &Container, file_size: u64) -> Report<'_> {
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
            let r: &FileReader = r;
            ("hrry", Some(facts), KvRows(Some(r)), TensorRows::File(r))
        }
        Container::Stream { tensors, .. } => {
            ("stream", None, KvRows(None), TensorRows::Stream(tensors))
        }
    };
    let data_bytes = tensors.iter().map(|t| t.bytes).sum();
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

/// The row `inspect` shows for one KV entry.
pub fn kv_row<'a>(key: &'a str, v: Shown<'a>) -> KvRow<'a> {
    KvRow {
        key,
        ty: v.type_name(),
        value: v,
    }
}

/// The compact JSON text of an owned KV value, as `inspect --json` writes it.
pub fn kv_json(v: &KvValue) -> String {
    Shown::Owned(v).json()
}
