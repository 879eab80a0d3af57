//! Wire values as C constants: element types, layouts, tile orders, devices, sync
//! modes, memory classes, section flags, quantization schemes and their fields,
//! block-paged and composite enumerations, statistics mask bits.
//!
//! These are the byte values of the spec (`descriptor.md`, `layouts.md`,
//! `quantization.md`, `element-types.md`), repeated here as literals so cbindgen can
//! emit them as `#define`s; `tests/tags.rs` checks each against hurray-core.

// ---- element types (`element-types.md` §2): `type_tag`
/// `float16`: IEEE binary16.
pub const HURRAY_TYPE_FLOAT16: u8 = 0x01;
/// `bfloat16`.
pub const HURRAY_TYPE_BFLOAT16: u8 = 0x02;
/// `float32`: IEEE binary32.
pub const HURRAY_TYPE_FLOAT32: u8 = 0x03;
/// `float64`: IEEE binary64.
pub const HURRAY_TYPE_FLOAT64: u8 = 0x04;
/// `int8`.
pub const HURRAY_TYPE_INT8: u8 = 0x10;
/// `uint8`.
pub const HURRAY_TYPE_UINT8: u8 = 0x11;
/// `int16`.
pub const HURRAY_TYPE_INT16: u8 = 0x12;
/// `uint16`.
pub const HURRAY_TYPE_UINT16: u8 = 0x13;
/// `int32`.
pub const HURRAY_TYPE_INT32: u8 = 0x14;
/// `uint32`.
pub const HURRAY_TYPE_UINT32: u8 = 0x15;
/// `int64`.
pub const HURRAY_TYPE_INT64: u8 = 0x16;
/// `uint64`.
pub const HURRAY_TYPE_UINT64: u8 = 0x17;
/// `bool`: 1 bit, packed 8 per byte.
pub const HURRAY_TYPE_BOOL: u8 = 0x20;
/// `float8_e4m3`.
pub const HURRAY_TYPE_FLOAT8_E4M3: u8 = 0x40;
/// `float8_e5m2`.
pub const HURRAY_TYPE_FLOAT8_E5M2: u8 = 0x41;
/// `float8_e8m0`.
pub const HURRAY_TYPE_FLOAT8_E8M0: u8 = 0x42;
/// `float4_e2m1`: packed 2 per byte.
pub const HURRAY_TYPE_FLOAT4_E2M1: u8 = 0x43;
/// `float6_e2m3`: four codes per 3 bytes.
pub const HURRAY_TYPE_FLOAT6_E2M3: u8 = 0x44;
/// `float6_e3m2`: four codes per 3 bytes.
pub const HURRAY_TYPE_FLOAT6_E3M2: u8 = 0x45;
/// `float128`.
pub const HURRAY_TYPE_FLOAT128: u8 = 0x46;
/// `int4`: packed 2 per byte.
pub const HURRAY_TYPE_INT4: u8 = 0x48;
/// `uint4`: packed 2 per byte.
pub const HURRAY_TYPE_UINT4: u8 = 0x49;
/// `int2`: packed 4 per byte.
pub const HURRAY_TYPE_INT2: u8 = 0x4A;
/// `uint2`: packed 4 per byte.
pub const HURRAY_TYPE_UINT2: u8 = 0x4B;
/// `complex64`: two float32.
pub const HURRAY_TYPE_COMPLEX64: u8 = 0x50;
/// `complex128`: two float64.
pub const HURRAY_TYPE_COMPLEX128: u8 = 0x51;
/// First implementation-private type tag (sized by the extension-type section).
pub const HURRAY_TYPE_PRIVATE_FIRST: u8 = 0xF0;
/// Last implementation-private type tag.
pub const HURRAY_TYPE_PRIVATE_LAST: u8 = 0xFE;

// ---- layouts (`layouts.md` §1.2): `layout_tag`
/// Row-major (C order); no fields.
pub const HURRAY_LAYOUT_ROW_MAJOR: u8 = 0x01;
/// Column-major (Fortran order); no fields.
pub const HURRAY_LAYOUT_COLUMN_MAJOR: u8 = 0x02;
/// Strided: one signed stride per dimension, in elements.
pub const HURRAY_LAYOUT_STRIDED: u8 = 0x03;
/// Tiled / blocked, possibly nested.
pub const HURRAY_LAYOUT_TILED: u8 = 0x04;
/// Morton (Z-order) curve.
pub const HURRAY_LAYOUT_MORTON: u8 = 0x05;
/// Sparse coordinate list.
pub const HURRAY_LAYOUT_COO: u8 = 0x06;
/// Compressed sparse row.
pub const HURRAY_LAYOUT_CSR: u8 = 0x07;
/// Compressed sparse column.
pub const HURRAY_LAYOUT_CSC: u8 = 0x08;
/// Compressed sparse fiber.
pub const HURRAY_LAYOUT_CSF: u8 = 0x09;
/// Block-paged (paged KV cache).
pub const HURRAY_LAYOUT_BLOCK_PAGED: u8 = 0x0A;
/// Composite head: owns no data, binds the next `member_count` tensors.
pub const HURRAY_LAYOUT_COMPOSITE_HEAD: u8 = 0x0B;
/// Hilbert curve.
pub const HURRAY_LAYOUT_HILBERT: u8 = 0x40;
/// First private extension layout tag.
pub const HURRAY_LAYOUT_EXTENSION_FIRST: u8 = 0xF0;
/// Last private extension layout tag.
pub const HURRAY_LAYOUT_EXTENSION_LAST: u8 = 0xFE;

// ---- tiled layout orders (`layouts.md` §2.4): `outer_layout` / `inner_layout`
/// Tiles (or elements in a tile) in row-major order.
pub const HURRAY_TILE_ORDER_ROW_MAJOR: u8 = 1;
/// Column-major order.
pub const HURRAY_TILE_ORDER_COLUMN_MAJOR: u8 = 2;
/// Explicit strides (in tiles for the grid, in elements inside a tile).
pub const HURRAY_TILE_ORDER_STRIDED: u8 = 3;
/// Inner order only: the tile is itself tiled (the next nesting level).
pub const HURRAY_TILE_ORDER_TILED: u8 = 4;

// ---- buffer handles (`descriptor.md` §6)
/// Host memory.
pub const HURRAY_DEVICE_CPU: u8 = 0x00;
/// CUDA device memory.
pub const HURRAY_DEVICE_CUDA: u8 = 0x01;
/// ROCm device memory.
pub const HURRAY_DEVICE_ROCM: u8 = 0x02;
/// Metal.
pub const HURRAY_DEVICE_METAL: u8 = 0x03;
/// Vulkan.
pub const HURRAY_DEVICE_VULKAN: u8 = 0x04;
/// WebGPU.
pub const HURRAY_DEVICE_WEBGPU: u8 = 0x05;
/// Qualcomm Hexagon.
pub const HURRAY_DEVICE_HEXAGON: u8 = 0x06;
/// Intel Level Zero / oneAPI.
pub const HURRAY_DEVICE_LEVEL_ZERO: u8 = 0x07;
/// OpenCL.
pub const HURRAY_DEVICE_OPENCL: u8 = 0x08;
/// The producer already synchronised; nothing to wait for (the only mode for CPU).
pub const HURRAY_SYNC_PRODUCER_SYNCED: u8 = 0x00;
/// Wait on the producer's event before use.
pub const HURRAY_SYNC_EVENT: u8 = 0x01;
/// Use only on the consumer stream declared at handoff.
pub const HURRAY_SYNC_CONSUMER_STREAM: u8 = 0x02;
/// Device-exclusive memory (the default).
pub const HURRAY_MEMORY_STANDARD: u8 = 0x00;
/// CPU-resident, device-mapped.
pub const HURRAY_MEMORY_HOST_PINNED: u8 = 0x01;
/// Coherent, driver-managed.
pub const HURRAY_MEMORY_UNIFIED: u8 = 0x02;
/// Reachable by peer accelerators.
pub const HURRAY_MEMORY_PEER: u8 = 0x03;

// ---- `flags` bits (`descriptor.md` §3)
/// Quantization section present.
pub const HURRAY_FLAG_HAS_QUANTIZATION: u32 = 0x01;
/// Shard section present.
pub const HURRAY_FLAG_HAS_SHARD: u32 = 0x02;
/// Extension-type section present.
pub const HURRAY_FLAG_HAS_EXTENSION_TYPE: u32 = 0x04;
/// Statistics section present.
pub const HURRAY_FLAG_HAS_STATISTICS: u32 = 0x08;
/// Composite-member section present.
pub const HURRAY_FLAG_HAS_COMPOSITE_MEMBER: u32 = 0x10;

/// A dynamic dimension in a shape (`descriptor.md` §4).
pub const HURRAY_DIM_DYNAMIC: u64 = u64::MAX;
/// The highest rank a descriptor may have.
pub const HURRAY_MAX_RANK: u32 = 64;

// ---- quantization (`quantization.md`)
/// Per-tensor affine: `scale`, `zero_point`.
pub const HURRAY_SCHEME_PER_TENSOR_AFFINE: u8 = 0x01;
/// Per-channel affine: `axis`, `scale_buffer_index`, `zero_point_buffer_index`, `scale_type_tag`.
pub const HURRAY_SCHEME_PER_CHANNEL_AFFINE: u8 = 0x02;
/// Per-block affine: `axis`, `block_size`, buffer indices, `scale_type_tag`.
pub const HURRAY_SCHEME_PER_BLOCK_AFFINE: u8 = 0x03;
/// NF4: `axis`, `block_size`, `scale_buffer_index`.
pub const HURRAY_SCHEME_NF4: u8 = 0x04;
/// OCP microscaling: `axis`, `block_size`, `scale_buffer_index`.
pub const HURRAY_SCHEME_MXFP: u8 = 0x05;
/// First private scheme tag (its payload is opaque bytes).
pub const HURRAY_SCHEME_PRIVATE_FIRST: u8 = 0xF0;
/// Last private scheme tag.
pub const HURRAY_SCHEME_PRIVATE_LAST: u8 = 0xFE;
/// Quantization header flag: symmetric (no zero-point buffer).
pub const HURRAY_QUANT_FLAG_SYMMETRIC: u16 = 0x0001;
/// `zero_point_buffer_index` value meaning "no zero-point buffer" (symmetric).
pub const HURRAY_NO_BUFFER: u32 = u32::MAX;
/// Scale type: IEEE binary16.
pub const HURRAY_SCALE_TYPE_F16: u8 = 0x01;
/// Scale type: bfloat16.
pub const HURRAY_SCALE_TYPE_BF16: u8 = 0x02;
/// Scale type: IEEE binary32.
pub const HURRAY_SCALE_TYPE_F32: u8 = 0x03;

// ---- block-paged layout (`layouts.md` §2.10)
/// `kv_role`: keys.
pub const HURRAY_KV_ROLE_KEY: u8 = 0x00;
/// `kv_role`: values.
pub const HURRAY_KV_ROLE_VALUE: u8 = 0x01;
/// `kv_role`: fused, or not a KV cache.
pub const HURRAY_KV_ROLE_FUSED: u8 = 0x02;
/// `block_table_index_type`: u32 entries.
pub const HURRAY_INDEX_TYPE_U32: u8 = 0x00;
/// `block_table_index_type`: u64 entries.
pub const HURRAY_INDEX_TYPE_U64: u8 = 0x01;
/// `layer_index` value: not tied to a layer.
pub const HURRAY_LAYER_INDEX_NONE: u32 = u32::MAX;

// ---- composites (`layouts.md` §2.11, `descriptor.md` §12)
/// Members tile the head's index space exactly.
pub const HURRAY_COMPOSITION_PARTITION: u8 = 0x01;
/// A base plus corrections, combined by `combine_op`.
pub const HURRAY_COMPOSITION_OVERLAY: u8 = 0x02;
/// Independent tensors under one head.
pub const HURRAY_COMPOSITION_GROUP: u8 = 0x03;
/// `combine_op` of partition and group heads.
pub const HURRAY_COMBINE_NONE: u8 = 0x00;
/// Overlay: the latest covering member wins.
pub const HURRAY_COMBINE_REPLACE: u8 = 0x01;
/// Overlay: base plus the sum of covering corrections.
pub const HURRAY_COMBINE_ADD: u8 = 0x02;
/// Overlay member role: a correction.
pub const HURRAY_MEMBER_ROLE_CORRECTION: u8 = 0x00;
/// Overlay member role: the base spanning the whole head.
pub const HURRAY_MEMBER_ROLE_BASE: u8 = 0x01;

// ---- statistics `computed_mask` bits (`descriptor.md` §10)
/// `nnz` is valid.
pub const HURRAY_STAT_NNZ_VALID: u32 = 0x01;
/// `sparsity_ratio` is valid.
pub const HURRAY_STAT_SPARSITY_VALID: u32 = 0x02;
/// `value_min`, `value_max`, `value_abs_max` are valid.
pub const HURRAY_STAT_VALUE_RANGE_VALID: u32 = 0x04;
/// `value_mean`, `value_stddev` are valid.
pub const HURRAY_STAT_VALUE_STATS_VALID: u32 = 0x08;
/// `nm_n`, `nm_m` are valid.
pub const HURRAY_STAT_NM_SPARSITY_VALID: u32 = 0x10;
/// `has_nan`, `has_inf` are valid.
pub const HURRAY_STAT_NAN_INF_VALID: u32 = 0x20;

// ---- lookups over `hurray_core::tables` (the one declaration of every enumeration)

use crate::status::{boundary, need, put, FfiError, HurrayStatus, HURRAY_ERR_NOT_FOUND};
use hurray_core::tables;
use std::ffi::{c_char, CString};
use std::sync::OnceLock;

/// 256 NUL-terminated names, one per tag, built once: static strings for C.
fn names_of(
    cell: &'static OnceLock<Vec<CString>>,
    name: fn(u8) -> &'static str,
) -> &'static [CString] {
    cell.get_or_init(|| {
        (0..=255u8)
            .map(|t| CString::new(name(t)).expect("tag names hold no NUL"))
            .collect()
    })
}

/// The name of element type `tag`: the spec's name (`"float32"`), `"private(0xf3)"`
/// for a private tag (`0xF0`–`0xFE`), `"unknown(0x2a)"` for any other tag; the same
/// text every binding renders. Ownership: borrowed static string; never NULL.
#[no_mangle]
pub extern "C" fn hurray_type_name(tag: u8) -> *const c_char {
    static NAMES: OnceLock<Vec<CString>> = OnceLock::new();
    names_of(&NAMES, tables::type_name)[usize::from(tag)].as_ptr()
}

/// Bits per element of element type `tag` (1 for bool, 4 for int4, 6 for the float6
/// types, 128 for complex128).
///
/// Errors: `HURRAY_ERR_NULL_POINTER` when `out_bits` is NULL; `HURRAY_ERR_NOT_FOUND`
/// for a private or unknown tag (a private type's size is in its extension-type
/// section).
///
/// Ownership: `*out_bits` written by value; nothing to free.
///
/// # Safety
/// `out_bits` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn hurray_type_bits(tag: u8, out_bits: *mut u32) -> HurrayStatus {
    boundary(|| {
        need(out_bits, "out_bits")?;
        let row = tables::element_type(tag).ok_or_else(|| {
            FfiError::new(
                HURRAY_ERR_NOT_FOUND,
                format!("element type {} has no fixed width", tables::type_name(tag)),
            )
        })?;
        // SAFETY: checked non-null; writable per the caller.
        unsafe { put(out_bits, "out_bits", row.bits) }
    })
}

/// The tag of the element type named `name` (`"bfloat16"` gives `0x02`).
///
/// Errors: `HURRAY_ERR_NULL_POINTER`; `HURRAY_ERR_INVALID_ARGUMENT` when `name` is
/// not UTF-8; `HURRAY_ERR_NOT_FOUND` for a name that is no element type.
///
/// Ownership: `name` borrowed for the call; `*out_tag` written by value.
///
/// # Safety
/// `name` NULL or a NUL-terminated string; `out_tag` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn hurray_type_from_name(
    name: *const c_char,
    out_tag: *mut u8,
) -> HurrayStatus {
    boundary(|| {
        // SAFETY: forwarded.
        let name = unsafe { crate::file::str_in(name, "name")? };
        need(out_tag, "out_tag")?;
        let row = tables::element_type_named(name).ok_or_else(|| {
            FfiError::new(
                HURRAY_ERR_NOT_FOUND,
                format!("no element type is named {name:?}"),
            )
        })?;
        // SAFETY: checked non-null; writable per the caller.
        unsafe { put(out_tag, "out_tag", row.tag) }
    })
}

/// The name of layout `tag`: the spec's name (`"csr"`), `"private(0xf3)"` for a
/// private extension tag, `"unknown(0x2a)"` for any other tag.
/// Ownership: borrowed static string; never NULL.
#[no_mangle]
pub extern "C" fn hurray_layout_name(tag: u8) -> *const c_char {
    static NAMES: OnceLock<Vec<CString>> = OnceLock::new();
    names_of(&NAMES, tables::layout_name)[usize::from(tag)].as_ptr()
}

/// The tag of the layout named `name` (`"block_paged"` gives `0x0A`).
///
/// Errors: `HURRAY_ERR_NULL_POINTER`; `HURRAY_ERR_INVALID_ARGUMENT` when `name` is
/// not UTF-8; `HURRAY_ERR_NOT_FOUND` for a name that is no layout.
///
/// Ownership: `name` borrowed for the call; `*out_tag` written by value.
///
/// # Safety
/// `name` NULL or a NUL-terminated string; `out_tag` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn hurray_layout_from_name(
    name: *const c_char,
    out_tag: *mut u8,
) -> HurrayStatus {
    boundary(|| {
        // SAFETY: forwarded.
        let name = unsafe { crate::file::str_in(name, "name")? };
        need(out_tag, "out_tag")?;
        let tag = tables::layout_named(name).ok_or_else(|| {
            FfiError::new(HURRAY_ERR_NOT_FOUND, format!("no layout is named {name:?}"))
        })?;
        // SAFETY: checked non-null; writable per the caller.
        unsafe { put(out_tag, "out_tag", tag) }
    })
}
