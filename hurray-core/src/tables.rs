//! One declaration of every enumeration of the format (issue 12 item 2): element
//! types, layouts, devices, memory classes, sync modes, quantization schemes,
//! composition rules and KV value types, each as a table of (wire tag, name,
//! description). `cargo xtask codegen` writes every per-language table (Go, Java,
//! TypeScript, Python, the docs) from these; the Rust enums of this crate are checked
//! against them by the tests below, so a new tag is added here once.
//!
//! Names are the spec's lower-case names (`"float32"`, `"row_major"`); a tag that is
//! none of a table's rows renders as [`render_unknown`] (`unknown(0x2a)`) in every
//! language, and a tag of a private range as `private(0xf3)`.

use std::sync::OnceLock;

/// One row of an enumeration: the wire tag, the spec's name, a one-line description.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tag {
    /// The wire byte.
    pub tag: u8,
    /// The spec's lower-case name, the same in every language.
    pub name: &'static str,
    /// One line for documentation comments and the docs tables.
    pub doc: &'static str,
}

/// How an element type is stored (`element-types.md` §5).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StorageClass {
    /// Whole bytes per element.
    Bytes,
    /// 1, 2 or 4 bits per element, packed in bytes, element 0 in the low bits.
    Packed,
    /// 6-bit codes, four in each 3-byte group.
    SixBit,
}

impl StorageClass {
    /// `"bytes"`, `"packed"` or `"six_bit"`.
    pub fn name(self) -> &'static str {
        match self {
            StorageClass::Bytes => "bytes",
            StorageClass::Packed => "packed",
            StorageClass::SixBit => "six_bit",
        }
    }
}

/// One element type (`element-types.md` §2): tag, name, bits per element, storage
/// class and tier (1: every implementation, 2: optional).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ElementTypeRow {
    /// The `type_tag` byte.
    pub tag: u8,
    /// The spec's name (`"float32"`).
    pub name: &'static str,
    /// Bits per element (1 for bool, 6 for the float6 types, 128 for complex128).
    pub bits: u32,
    /// How elements are stored.
    pub storage: StorageClass,
    /// 1 or 2.
    pub tier: u8,
    /// One line of description.
    pub doc: &'static str,
}

macro_rules! rows {
    ($($tag:literal $name:literal $doc:literal;)*) => {
        &[$(Tag { tag: $tag, name: $name, doc: $doc }),*]
    };
}

macro_rules! types {
    ($($tag:literal $name:literal $bits:literal $storage:ident $tier:literal $doc:literal;)*) => {
        &[$(ElementTypeRow {
            tag: $tag,
            name: $name,
            bits: $bits,
            storage: StorageClass::$storage,
            tier: $tier,
            doc: $doc,
        }),*]
    };
}

/// Element types, in tag order (`element-types.md` §2). Private tags: [`PRIVATE_TAGS`].
pub const ELEMENT_TYPES: &[ElementTypeRow] = types! {
    0x01 "float16" 16 Bytes 1 "IEEE binary16";
    0x02 "bfloat16" 16 Bytes 1 "bfloat16 (upper half of a binary32)";
    0x03 "float32" 32 Bytes 1 "IEEE binary32";
    0x04 "float64" 64 Bytes 1 "IEEE binary64";
    0x10 "int8" 8 Bytes 1 "signed 8-bit integer";
    0x11 "uint8" 8 Bytes 1 "unsigned 8-bit integer";
    0x12 "int16" 16 Bytes 1 "signed 16-bit integer";
    0x13 "uint16" 16 Bytes 1 "unsigned 16-bit integer";
    0x14 "int32" 32 Bytes 1 "signed 32-bit integer";
    0x15 "uint32" 32 Bytes 1 "unsigned 32-bit integer";
    0x16 "int64" 64 Bytes 1 "signed 64-bit integer";
    0x17 "uint64" 64 Bytes 1 "unsigned 64-bit integer";
    0x20 "bool" 1 Packed 1 "boolean, 1 bit, packed 8 per byte";
    0x40 "float8_e4m3" 8 Bytes 2 "OCP OFP8 E4M3";
    0x41 "float8_e5m2" 8 Bytes 2 "OCP OFP8 E5M2";
    0x42 "float8_e8m0" 8 Bytes 2 "unsigned power-of-two scale (MX block scale)";
    0x43 "float4_e2m1" 4 Packed 2 "OCP MX FP4, packed 2 per byte";
    0x44 "float6_e2m3" 6 SixBit 2 "OCP MX FP6 E2M3, four codes per 3 bytes";
    0x45 "float6_e3m2" 6 SixBit 2 "OCP MX FP6 E3M2, four codes per 3 bytes";
    0x46 "float128" 128 Bytes 2 "IEEE binary128";
    0x48 "int4" 4 Packed 2 "signed 4-bit integer, packed 2 per byte";
    0x49 "uint4" 4 Packed 2 "unsigned 4-bit integer, packed 2 per byte";
    0x4A "int2" 2 Packed 2 "signed 2-bit integer, packed 4 per byte";
    0x4B "uint2" 2 Packed 2 "unsigned 2-bit integer, packed 4 per byte";
    0x50 "complex64" 64 Bytes 2 "two float32 (real, imaginary)";
    0x51 "complex128" 128 Bytes 2 "two float64 (real, imaginary)";
};

/// Layouts, in tag order (`layouts.md` §1.2). Private tags: [`PRIVATE_TAGS`].
pub const LAYOUTS: &[Tag] = rows! {
    0x01 "row_major" "row-major (C order)";
    0x02 "column_major" "column-major (Fortran order)";
    0x03 "strided" "one signed stride per dimension, in elements";
    0x04 "tiled" "tiled / blocked, possibly nested";
    0x05 "morton" "Morton (Z-order) curve";
    0x06 "coo" "sparse coordinate list";
    0x07 "csr" "compressed sparse row";
    0x08 "csc" "compressed sparse column";
    0x09 "csf" "compressed sparse fiber";
    0x0A "block_paged" "block-paged (paged KV cache)";
    0x0B "composite_head" "composite head: binds the next member_count tensors";
    0x40 "hilbert" "Hilbert curve";
};

/// Device tags of a buffer handle (`descriptor.md` §6). Private tags: [`PRIVATE_TAGS`].
pub const DEVICES: &[Tag] = rows! {
    0x00 "cpu" "host memory";
    0x01 "cuda" "CUDA device memory";
    0x02 "rocm" "ROCm device memory";
    0x03 "metal" "Metal";
    0x04 "vulkan" "Vulkan";
    0x05 "webgpu" "WebGPU";
    0x06 "hexagon" "Qualcomm Hexagon";
    0x07 "level_zero" "Intel Level Zero / oneAPI";
    0x08 "opencl" "OpenCL";
};

/// Memory classes of a buffer handle (`descriptor.md` §6.4). Private tags: [`PRIVATE_TAGS`].
pub const MEMORY_CLASSES: &[Tag] = rows! {
    0x00 "standard" "device-exclusive memory (the default)";
    0x01 "host_pinned" "CPU-resident, device-mapped";
    0x02 "unified" "coherent, driver-managed";
    0x03 "peer" "reachable by peer accelerators";
};

/// Sync modes of a buffer handle (`streams-and-transport.md` C.4).
pub const SYNC_MODES: &[Tag] = rows! {
    0x00 "producer_synced" "the producer already synchronised (the only mode for CPU)";
    0x01 "event" "wait on the producer's event before use";
    0x02 "consumer_stream" "use only on the consumer stream declared at handoff";
};

/// Quantization schemes (`quantization.md` §8). Private tags: [`PRIVATE_TAGS`].
pub const SCHEMES: &[Tag] = rows! {
    0x01 "per_tensor_affine" "per-tensor affine: scale, zero_point";
    0x02 "per_channel_affine" "per-channel affine along an axis";
    0x03 "per_block_affine" "per-block affine: blocks of block_size along an axis";
    0x04 "nf4" "NF4: 4-bit normal float with per-block absmax";
    0x05 "mxfp" "OCP microscaling: one e8m0 scale per block";
};

/// Composition rules of a composite head (`layouts.md` §2.11). Private tags: [`PRIVATE_TAGS`].
pub const COMPOSITION_RULES: &[Tag] = rows! {
    0x01 "partition" "members tile the head's index space exactly";
    0x02 "overlay" "a base plus corrections, combined by combine_op";
    0x03 "group" "independent tensors under one head";
};

/// KV value types of the file's KV section (`file-format.md` §7.3).
pub const KV_VALUE_TYPES: &[Tag] = rows! {
    0x01 "string" "UTF-8 string";
    0x02 "int64" "signed 64-bit integer";
    0x03 "uint64" "unsigned 64-bit integer";
    0x04 "float64" "IEEE binary64";
    0x05 "bool" "boolean (one byte, 0 or 1)";
    0x06 "bytes" "opaque byte sequence";
    0x07 "array" "homogeneous array of one of the types above";
};

/// The implementation-private range of the type, layout, device, memory-class,
/// scheme and composition-rule tags: `0xF0..=0xFE`.
pub const PRIVATE_TAGS: std::ops::RangeInclusive<u8> = 0xF0..=0xFE;

/// An enumeration for the generators: its name and its rows.
#[derive(Clone, Copy, Debug)]
pub struct Enumeration {
    /// Lower-case name (`"layout"`, `"device"`).
    pub name: &'static str,
    /// The rows, in tag order.
    pub rows: &'static [Tag],
    /// Whether `0xF0..=0xFE` are private tags of this enumeration.
    pub has_private: bool,
}

/// Every enumeration but element types (which carry more columns), in a fixed order.
pub const ENUMERATIONS: &[Enumeration] = &[
    Enumeration {
        name: "layout",
        rows: LAYOUTS,
        has_private: true,
    },
    Enumeration {
        name: "device",
        rows: DEVICES,
        has_private: true,
    },
    Enumeration {
        name: "memory_class",
        rows: MEMORY_CLASSES,
        has_private: true,
    },
    Enumeration {
        name: "sync_mode",
        rows: SYNC_MODES,
        has_private: false,
    },
    Enumeration {
        name: "scheme",
        rows: SCHEMES,
        has_private: true,
    },
    Enumeration {
        name: "composition_rule",
        rows: COMPOSITION_RULES,
        has_private: true,
    },
    Enumeration {
        name: "kv_value_type",
        rows: KV_VALUE_TYPES,
        has_private: false,
    },
];

/// How a tag no row names renders in every language: `unknown(0x2a)` (lower-case
/// hex, two digits).
pub fn render_unknown(tag: u8) -> String {
    format!("unknown(0x{tag:02x})")
}

/// How a private tag renders in every language: `private(0xf3)`.
pub fn render_private(tag: u8) -> String {
    format!("private(0x{tag:02x})")
}

/// The element type row of `tag`, if the format defines one.
pub fn element_type(tag: u8) -> Option<&'static ElementTypeRow> {
    ELEMENT_TYPES.iter().find(|r| r.tag == tag)
}

/// The element type row named `name`, if any.
pub fn element_type_named(name: &str) -> Option<&'static ElementTypeRow> {
    ELEMENT_TYPES.iter().find(|r| r.name == name)
}

/// The name of element type `tag`: its spec name (`"float32"`), `private(0xf3)` for
/// a private tag (`0xF0`–`0xFE`), `unknown(0x2a)` for any other tag. This is the one
/// rendering every language uses (`ElementType::name`, `hurray_type_name` in C, the
/// Go, Java, Node and Python bindings); a static string, built once for all 256 tags.
pub fn type_name(tag: u8) -> &'static str {
    static NAMES: OnceLock<Vec<String>> = OnceLock::new();
    rendered(&NAMES, |t| match element_type(t) {
        Some(r) => r.name.to_string(),
        None if PRIVATE_TAGS.contains(&t) => render_private(t),
        None => render_unknown(t),
    })[usize::from(tag)]
    .as_str()
}

/// The name of layout `tag`: its spec name (`"csr"`), `private(0xf3)` for a private
/// tag, `unknown(0x2a)` otherwise; the one rendering every language uses
/// (`Layout::name`, `hurray_layout_name` in C, every binding). A static string.
pub fn layout_name(tag: u8) -> &'static str {
    static NAMES: OnceLock<Vec<String>> = OnceLock::new();
    rendered(&NAMES, |t| name_in(LAYOUTS, true, t))[usize::from(tag)].as_str()
}

/// The 256 renderings of `name`, one per tag, computed on first use.
fn rendered(cell: &'static OnceLock<Vec<String>>, name: fn(u8) -> String) -> &'static [String] {
    cell.get_or_init(|| (0..=255u8).map(name).collect())
}

/// The layout tag named `name`, if any.
pub fn layout_named(name: &str) -> Option<u8> {
    LAYOUTS.iter().find(|r| r.name == name).map(|r| r.tag)
}

/// The name of `tag` in `rows` (see [`type_name`] for the other forms).
pub fn name_in(rows: &[Tag], has_private: bool, tag: u8) -> String {
    match rows.iter().find(|r| r.tag == tag) {
        Some(r) => r.name.to_string(),
        None if has_private && PRIVATE_TAGS.contains(&tag) => render_private(tag),
        None => render_unknown(tag),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{layout, CompositionRule, DeviceTag, ElementType, MemoryClass, Storage, SyncMode};

    #[test]
    fn element_types_match_the_enum() {
        let all: Vec<u8> = ElementType::ALL.iter().map(|t| t.tag()).collect();
        let rows: Vec<u8> = ELEMENT_TYPES.iter().map(|r| r.tag).collect();
        assert_eq!(all, rows);
        for r in ELEMENT_TYPES {
            let t = ElementType::from_tag(r.tag).unwrap();
            assert_eq!(t.name(), r.name);
            assert_eq!(Some(r.tier), t.tier());
            let s = t.storage().unwrap();
            assert_eq!(s.bits(), r.bits, "{}", r.name);
            let class = match s {
                Storage::Bytes(_) => StorageClass::Bytes,
                Storage::Packed { .. } => StorageClass::Packed,
                Storage::SixBit => StorageClass::SixBit,
            };
            assert_eq!(class, r.storage, "{}", r.name);
        }
        assert_eq!(ELEMENT_TYPES.len(), 26);
    }

    #[test]
    fn layouts_match_the_tag_constants() {
        let consts = [
            layout::tag::ROW_MAJOR,
            layout::tag::COLUMN_MAJOR,
            layout::tag::STRIDED,
            layout::tag::TILED,
            layout::tag::MORTON,
            layout::tag::COO,
            layout::tag::CSR,
            layout::tag::CSC,
            layout::tag::CSF,
            layout::tag::BLOCK_PAGED,
            layout::tag::COMPOSITE_HEAD,
            layout::tag::HILBERT,
        ];
        assert_eq!(LAYOUTS.iter().map(|r| r.tag).collect::<Vec<_>>(), consts);
        assert_eq!(crate::Layout::RowMajor.name(), LAYOUTS[0].name);
        assert_eq!(crate::Layout::ColumnMajor.name(), LAYOUTS[1].name);
    }

    #[test]
    fn devices_memory_sync_composition_match_the_enums() {
        for r in DEVICES {
            assert_eq!(DeviceTag::from_tag(r.tag).unwrap().name(), r.name);
        }
        assert_eq!(DeviceTag::from_tag(DEVICES.len() as u8), None);
        for r in MEMORY_CLASSES {
            assert_eq!(MemoryClass::from_tag(r.tag).unwrap().tag(), r.tag);
        }
        assert_eq!(MemoryClass::from_tag(MEMORY_CLASSES.len() as u8), None);
        for r in SYNC_MODES {
            assert_eq!(SyncMode::from_tag(r.tag).unwrap().tag(), r.tag);
        }
        assert_eq!(SyncMode::from_tag(SYNC_MODES.len() as u8), None);
        let rules = [
            CompositionRule::Partition,
            CompositionRule::Overlay,
            CompositionRule::Group,
        ];
        let tags: Vec<u8> = rules.iter().map(|r| r.tag()).collect();
        assert_eq!(
            COMPOSITION_RULES.iter().map(|r| r.tag).collect::<Vec<_>>(),
            tags
        );
    }

    #[test]
    fn unknown_and_private_tags_render_one_way() {
        assert_eq!(type_name(0x2a), "unknown(0x2a)");
        assert_eq!(type_name(0xf3), "private(0xf3)");
        assert_eq!(type_name(0x03), "float32");
        assert_eq!(layout_name(0x07), "csr");
        assert_eq!(layout_name(0x0c), "unknown(0x0c)");
        assert_eq!(layout_name(0xff), "unknown(0xff)");
        assert_eq!(name_in(SYNC_MODES, false, 0xf0), "unknown(0xf0)");
        assert_eq!(layout_named("block_paged"), Some(0x0A));
        assert_eq!(element_type_named("int4").map(|r| r.tag), Some(0x48));
        assert_eq!(element_type_named("float"), None);
    }

    #[test]
    fn the_enums_render_through_the_tables() {
        for tag in 0..=255u8 {
            let t = ElementType::from_tag(tag).unwrap_or(ElementType::Unknown(tag));
            assert_eq!(t.name(), type_name(tag), "type {tag:#04x}");
            assert_eq!(t.to_string(), type_name(tag), "type {tag:#04x}");
        }
        assert_eq!(ElementType::Private(0xF3).name(), "private(0xf3)");
        assert_eq!(ElementType::Unknown(0x2A).name(), "unknown(0x2a)");
        assert_eq!(ElementType::Float8E4m3.name(), "float8_e4m3");
        assert_eq!(ElementType::from_name("private(0xf3)"), None);
        let ext = crate::Layout::Extension {
            tag: 0xF1,
            id: 7,
            data: vec![],
        };
        assert_eq!(ext.name(), "private(0xf1)");
        assert_eq!(crate::Layout::Csr { nnz: 0 }.name(), "csr");
        // The static strings are built once: the same address on every call.
        assert!(std::ptr::eq(type_name(0x2a), type_name(0x2a)));
    }

    #[test]
    fn names_are_unique_per_table() {
        let mut all: Vec<&[Tag]> = ENUMERATIONS.iter().map(|e| e.rows).collect();
        all.push(LAYOUTS);
        for rows in all {
            let mut names: Vec<_> = rows.iter().map(|r| r.name).collect();
            names.sort();
            names.dedup();
            assert_eq!(names.len(), rows.len());
        }
    }
}
