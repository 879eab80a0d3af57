//! The plain `repr(C)` structs a descriptor's fixed groups of fields travel in
//! ([`HurrayDescriptorHeader`], [`HurrayBufferEntry`], [`HurrayBlockPaged`],
//! [`HurrayCompositeHead`], [`HurrayQuantization`], [`HurrayStatistics`],
//! [`HurrayExtensionType`]), their conversions to and from the model, and the two
//! accessors that also work on descriptors of another copy of the library
//! (`hurray_descriptor_header`, `hurray_descriptor_shape`, through `model_of`, which
//! decodes a foreign handle's frozen bytes).
//!
//! Everything else of a descriptor is read in one call through
//! [`crate::descriptor_view`] (`hurray_descriptor_view`) and built from the same
//! struct (`hurray_descriptor_from_view`). Enumerated fields are the wire bytes
//! (`HURRAY_LAYOUT_*`, `HURRAY_KV_ROLE_*`, ...).

use crate::descriptor::{encoded_of, model_of, HurrayDescriptor};
use crate::status::*;
use crate::tags::HURRAY_NO_BUFFER;
use hurray_core::{
    BlockPaged, BufferHandle, CombineOp, CompositeHead, CompositionRule, DeviceTag, ExtensionType,
    IndexType, KvRole, MemberRole, MemoryClass, Quantization, ScaleType, Scheme, Statistics,
    SyncMode, TensorDescriptor,
};

// ---------------------------------------------------------------- C views

/// The fixed header of a descriptor (`descriptor.md` §2–§5) plus its buffer count.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HurrayDescriptorHeader {
    /// `version_major` (1).
    pub version_major: u8,
    /// `version_minor`.
    pub version_minor: u8,
    /// `type_tag` (`HURRAY_TYPE_*`, or a private tag).
    pub type_tag: u8,
    /// `layout_tag` (`HURRAY_LAYOUT_*`, or a private extension tag).
    pub layout_tag: u8,
    /// `flags`: which optional sections are present (`HURRAY_FLAG_*`).
    pub flags: u32,
    /// `descriptor_length`: the encoding's size in bytes.
    pub descriptor_length: u32,
    /// Number of dimensions, 0..=64.
    pub rank: u32,
    /// Number of entries in the buffer table, 0..=255.
    pub buffer_count: u32,
    /// Bytes from the start of buffer 0 to element [0, ..., 0].
    pub byte_offset: u64,
}

/// One entry of the descriptor's buffer table (`descriptor.md` §6): a buffer's size
/// and placement, never its address.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HurrayBufferEntry {
    /// Size in bytes (0: an empty buffer).
    pub byte_size: u64,
    /// Guaranteed alignment of the first byte, in bytes: a power of two, at least 64
    /// for a non-empty buffer.
    pub alignment: u32,
    /// `HURRAY_DEVICE_*` (or a private device tag).
    pub device_tag: u8,
    /// `HURRAY_SYNC_*`.
    pub sync_mode: u8,
    /// `HURRAY_MEMORY_*` (or a private class, only on a private device).
    pub memory_class: u8,
}

/// Fields of the block-paged layout (`layouts.md` §2.10).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HurrayBlockPaged {
    /// Physical pages in the pool.
    pub num_pages: u64,
    /// Tokens per page, at least 1.
    pub page_size: u32,
    /// The paged axis; 0 in this version.
    pub paged_axis: u32,
    /// Sequences in the batch.
    pub num_seqs: u32,
    /// Layer the cache belongs to, or `HURRAY_LAYER_INDEX_NONE`.
    pub layer_index: u32,
    /// `HURRAY_KV_ROLE_*`.
    pub kv_role: u8,
    /// `HURRAY_INDEX_TYPE_*`: element type of `block_table` and `seq_ptr`.
    pub block_table_index_type: u8,
}

/// Fields of a composite head (`layouts.md` §2.11).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HurrayCompositeHead {
    /// Number of member tensors that follow the head.
    pub member_count: u32,
    /// `HURRAY_COMPOSITION_*` (or a private rule 0xF0..0xFE).
    pub composition_rule: u8,
    /// `HURRAY_COMBINE_*`: `HURRAY_COMBINE_NONE` unless the rule is overlay.
    pub combine_op: u8,
}

/// The quantization section (`quantization.md`): the common header and the fixed
/// fields of every assigned scheme. Fields the scheme does not have are 0, and buffer
/// indices it does not have are `HURRAY_NO_BUFFER`:
///
/// | scheme | fields used |
/// |---|---|
/// | `HURRAY_SCHEME_PER_TENSOR_AFFINE` | `scale`, `zero_point` |
/// | `HURRAY_SCHEME_PER_CHANNEL_AFFINE` | `axis`, `scale_buffer_index`, `zero_point_buffer_index`, `scale_type_tag` |
/// | `HURRAY_SCHEME_PER_BLOCK_AFFINE` | `axis`, `block_size`, both indices, `scale_type_tag` |
/// | `HURRAY_SCHEME_NF4`, `HURRAY_SCHEME_MXFP` | `axis`, `block_size`, `scale_buffer_index` |
/// | private (0xF0..0xFE) | `scheme_version`, `flags`; the payload is opaque bytes |
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct HurrayQuantization {
    /// `scale` (per-tensor): finite, non-zero.
    pub scale: f32,
    /// `zero_point` (per-tensor), in the storage type's range.
    pub zero_point: i32,
    /// The quantized axis, `< rank`.
    pub axis: u32,
    /// Elements per block.
    pub block_size: u32,
    /// Buffer holding the scales (per-channel, per-block, NF4 absmax, MX e8m0).
    pub scale_buffer_index: u32,
    /// Buffer holding the i32 zero points, or `HURRAY_NO_BUFFER` (symmetric).
    pub zero_point_buffer_index: u32,
    /// Common header `flags` (`HURRAY_QUANT_FLAG_SYMMETRIC`).
    pub flags: u16,
    /// `HURRAY_SCHEME_*` (or a private tag).
    pub scheme_tag: u8,
    /// `scheme_version` (1 for the assigned schemes).
    pub scheme_version: u8,
    /// `HURRAY_SCALE_TYPE_*` (per-channel: F32 only; per-block: F16, BF16, F32).
    pub scale_type_tag: u8,
}

/// The statistics section (`descriptor.md` §10). Advisory: a field counts only when
/// its `HURRAY_STAT_*` bit is set in `computed_mask`; values describe dequantized data.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct HurrayStatistics {
    /// Stored (non-zero) elements.
    pub nnz: u64,
    /// `(N - nnz) / N`, in [0, 1].
    pub sparsity_ratio: f64,
    /// Smallest value.
    pub value_min: f64,
    /// Largest value.
    pub value_max: f64,
    /// `max(|min|, |max|)`.
    pub value_abs_max: f64,
    /// Arithmetic mean.
    pub value_mean: f64,
    /// Population standard deviation.
    pub value_stddev: f64,
    /// Which fields are valid (`HURRAY_STAT_*` bits).
    pub computed_mask: u32,
    /// N of N:M structured sparsity (0: not applicable).
    pub nm_n: u8,
    /// M of N:M structured sparsity (0: not applicable).
    pub nm_m: u8,
    /// 1 when at least one NaN is present.
    pub has_nan: u8,
    /// 1 when at least one infinity is present.
    pub has_inf: u8,
}

/// The extension-type section (`descriptor.md` §11): how a private element type is
/// stored. Flags are 0 or 1.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HurrayExtensionType {
    /// Bits per element.
    pub bit_width: u32,
    /// Float exponent bias (0 for integers).
    pub exponent_bias: u32,
    /// Elements per byte for sub-byte types (8/4/2 for 1/2/4 bits), else 1.
    pub packing_factor: u8,
    /// 1: floating point; 0: integer.
    pub is_float: u8,
    /// 1: signed integer (0 for floats).
    pub is_signed: u8,
    /// Float sign bits, 0 or 1 (0 for integers).
    pub sign_bits: u8,
    /// Float exponent bits (0 for integers).
    pub exponent_bits: u8,
    /// Float mantissa bits (0 for integers).
    pub mantissa_bits: u8,
    /// 1: NaN is representable.
    pub has_nan: u8,
    /// 1: infinity is representable.
    pub has_inf: u8,
}

// ---------------------------------------------------------------- model <-> view

fn bad(msg: String) -> FfiError {
    FfiError::new(HURRAY_ERR_INVALID_ARGUMENT, msg)
}

fn flag_in(v: u8, what: &str) -> FfiResult<bool> {
    match v {
        0 => Ok(false),
        1 => Ok(true),
        _ => Err(bad(format!("{what} is {v}, not 0 or 1"))),
    }
}

impl From<&BufferHandle> for HurrayBufferEntry {
    fn from(b: &BufferHandle) -> Self {
        HurrayBufferEntry {
            byte_size: b.byte_size,
            alignment: b.alignment,
            device_tag: b.device.tag(),
            sync_mode: b.sync_mode.tag(),
            memory_class: b.memory_class.tag(),
        }
    }
}

impl HurrayBufferEntry {
    /// The model entry; tags must be assigned or private values (the rest of the
    /// rules are checked when the descriptor is finished).
    pub fn to_model(self) -> FfiResult<BufferHandle> {
        Ok(BufferHandle {
            byte_size: self.byte_size,
            alignment: self.alignment,
            device: DeviceTag::from_tag(self.device_tag).ok_or_else(|| {
                bad(format!(
                    "device_tag {:#04x} is reserved or invalid",
                    self.device_tag
                ))
            })?,
            sync_mode: SyncMode::from_tag(self.sync_mode).ok_or_else(|| {
                FfiError::new(
                    HURRAY_ERR_INVALID_SYNC_MODE,
                    format!("sync_mode {:#04x} is reserved or invalid", self.sync_mode),
                )
            })?,
            memory_class: MemoryClass::from_tag(self.memory_class).ok_or_else(|| {
                bad(format!(
                    "memory_class {:#04x} is reserved or invalid",
                    self.memory_class
                ))
            })?,
        })
    }
}

impl From<&BlockPaged> for HurrayBlockPaged {
    fn from(p: &BlockPaged) -> Self {
        HurrayBlockPaged {
            num_pages: p.num_pages,
            page_size: p.page_size,
            paged_axis: p.paged_axis,
            num_seqs: p.num_seqs,
            layer_index: p.layer_index,
            kv_role: p.kv_role as u8,
            block_table_index_type: p.block_table_index_type as u8,
        }
    }
}

impl HurrayBlockPaged {
    /// The model's block-paged fields (`layouts.md` §2.10); enumeration values are
    /// checked here, the rest when the descriptor is built.
    ///
    /// Errors: `HURRAY_ERR_INVALID_ARGUMENT` for an unassigned `kv_role` or index type.
    pub fn to_model(self) -> FfiResult<BlockPaged> {
        Ok(BlockPaged {
            page_size: self.page_size,
            num_pages: self.num_pages,
            paged_axis: self.paged_axis,
            num_seqs: self.num_seqs,
            kv_role: match self.kv_role {
                0 => KvRole::Key,
                1 => KvRole::Value,
                2 => KvRole::Fused,
                v => return Err(bad(format!("kv_role {v:#04x} is not 0, 1 or 2"))),
            },
            layer_index: self.layer_index,
            block_table_index_type: match self.block_table_index_type {
                0 => IndexType::U32,
                1 => IndexType::U64,
                v => {
                    return Err(bad(format!(
                        "block_table_index_type {v:#04x} is not 0 or 1"
                    )))
                }
            },
        })
    }
}

impl From<&CompositeHead> for HurrayCompositeHead {
    fn from(h: &CompositeHead) -> Self {
        HurrayCompositeHead {
            member_count: h.member_count,
            composition_rule: h.rule.tag(),
            combine_op: h.combine_op as u8,
        }
    }
}

impl HurrayCompositeHead {
    /// The model's composite head (`descriptor.md` composite section).
    ///
    /// Errors: `HURRAY_ERR_INVALID_ARGUMENT` for an unassigned rule or operation.
    pub fn to_model(self) -> FfiResult<CompositeHead> {
        Ok(CompositeHead {
            rule: match self.composition_rule {
                1 => CompositionRule::Partition,
                2 => CompositionRule::Overlay,
                3 => CompositionRule::Group,
                v => {
                    return Err(bad(format!(
                    "composition_rule {v:#04x} is not 1, 2 or 3 (private rules cannot be written)"
                )))
                }
            },
            combine_op: match self.combine_op {
                0 => CombineOp::None,
                1 => CombineOp::Replace,
                2 => CombineOp::Add,
                v => return Err(bad(format!("combine_op {v:#04x} is not 0, 1 or 2"))),
            },
            member_count: self.member_count,
        })
    }
}

impl From<&Quantization> for HurrayQuantization {
    fn from(q: &Quantization) -> Self {
        let mut v = HurrayQuantization {
            scheme_tag: q.scheme.tag(),
            scheme_version: 1,
            scale_buffer_index: HURRAY_NO_BUFFER,
            zero_point_buffer_index: HURRAY_NO_BUFFER,
            ..HurrayQuantization::default()
        };
        match &q.scheme {
            Scheme::PerTensor { scale, zero_point } => {
                v.scale = *scale;
                v.zero_point = *zero_point;
            }
            Scheme::PerChannel {
                axis,
                scale_buffer_index,
                zero_point_buffer_index,
                scale_type,
            } => {
                v.axis = *axis;
                v.scale_buffer_index = *scale_buffer_index;
                v.zero_point_buffer_index = zero_point_buffer_index.unwrap_or(HURRAY_NO_BUFFER);
                v.flags = u16::from(zero_point_buffer_index.is_none());
                v.scale_type_tag = scale_type.tag();
            }
            Scheme::PerBlock {
                axis,
                block_size,
                scale_buffer_index,
                zero_point_buffer_index,
                scale_type,
            } => {
                v.axis = *axis;
                v.block_size = *block_size;
                v.scale_buffer_index = *scale_buffer_index;
                v.zero_point_buffer_index = zero_point_buffer_index.unwrap_or(HURRAY_NO_BUFFER);
                v.flags = u16::from(zero_point_buffer_index.is_none());
                v.scale_type_tag = scale_type.tag();
            }
            Scheme::Nf4 {
                axis,
                block_size,
                scale_buffer_index,
            }
            | Scheme::Mxfp {
                axis,
                block_size,
                scale_buffer_index,
            } => {
                v.axis = *axis;
                v.block_size = *block_size;
                v.scale_buffer_index = *scale_buffer_index;
            }
            Scheme::Opaque {
                scheme_version,
                flags,
                ..
            } => {
                v.scheme_version = *scheme_version;
                v.flags = *flags;
            }
        }
        v
    }
}

/// The bytes of a quantization payload that [`HurrayQuantization`] does not carry.
/// The header struct of `m`, whose encoding is `encoded_len` bytes.
pub(crate) fn header_of(m: &TensorDescriptor, encoded_len: usize) -> HurrayDescriptorHeader {
    HurrayDescriptorHeader {
        version_major: hurray_core::VERSION_MAJOR,
        version_minor: m.version_minor,
        type_tag: m.element_type.tag(),
        layout_tag: m.layout.tag(),
        flags: m.flags(),
        descriptor_length: encoded_len as u32,
        rank: m.rank() as u32,
        buffer_count: m.buffers.len() as u32,
        byte_offset: m.byte_offset,
    }
}

pub(crate) fn quantization_trailing(q: &Quantization) -> Vec<u8> {
    match &q.scheme {
        Scheme::Opaque { payload, .. } => [payload.as_slice(), &q.trailing].concat(),
        _ => q.trailing.clone(),
    }
}

fn scale_type_in(tag: u8) -> FfiResult<ScaleType> {
    match tag {
        1 => Ok(ScaleType::F16),
        2 => Ok(ScaleType::Bf16),
        3 => Ok(ScaleType::F32),
        v => Err(bad(format!("scale_type_tag {v:#04x} is not 1, 2 or 3"))),
    }
}

fn index_in(v: u32) -> Option<u32> {
    (v != HURRAY_NO_BUFFER).then_some(v)
}

impl HurrayQuantization {
    /// The model section. For the assigned schemes `scheme_version` and `flags` are
    /// ignored (written as 1 and as implied by `zero_point_buffer_index`); for a
    /// private scheme `trailing` is its whole payload after the 4-byte header.
    pub fn to_model(self, trailing: &[u8]) -> FfiResult<Quantization> {
        let scheme = match self.scheme_tag {
            1 => Scheme::PerTensor {
                scale: self.scale,
                zero_point: self.zero_point,
            },
            2 => Scheme::PerChannel {
                axis: self.axis,
                scale_buffer_index: self.scale_buffer_index,
                zero_point_buffer_index: index_in(self.zero_point_buffer_index),
                scale_type: scale_type_in(self.scale_type_tag)?,
            },
            3 => Scheme::PerBlock {
                axis: self.axis,
                block_size: self.block_size,
                scale_buffer_index: self.scale_buffer_index,
                zero_point_buffer_index: index_in(self.zero_point_buffer_index),
                scale_type: scale_type_in(self.scale_type_tag)?,
            },
            4 => Scheme::Nf4 {
                axis: self.axis,
                block_size: self.block_size,
                scale_buffer_index: self.scale_buffer_index,
            },
            5 => Scheme::Mxfp {
                axis: self.axis,
                block_size: self.block_size,
                scale_buffer_index: self.scale_buffer_index,
            },
            t @ 0xF0..=0xFE => {
                return Ok(Quantization {
                    scheme: Scheme::Opaque {
                        scheme_tag: t,
                        scheme_version: self.scheme_version,
                        flags: self.flags,
                        payload: trailing.to_vec(),
                    },
                    trailing: Vec::new(),
                })
            }
            t => {
                return Err(bad(format!(
                "scheme_tag {t:#04x} is neither an assigned scheme (1..5) nor private (0xF0..0xFE)"
            )))
            }
        };
        Ok(Quantization {
            scheme,
            trailing: trailing.to_vec(),
        })
    }
}

impl From<&Statistics> for HurrayStatistics {
    fn from(s: &Statistics) -> Self {
        HurrayStatistics {
            nnz: s.nnz,
            sparsity_ratio: s.sparsity_ratio,
            value_min: s.value_min,
            value_max: s.value_max,
            value_abs_max: s.value_abs_max,
            value_mean: s.value_mean,
            value_stddev: s.value_stddev,
            computed_mask: s.computed_mask,
            nm_n: s.nm_n,
            nm_m: s.nm_m,
            has_nan: s.has_nan,
            has_inf: s.has_inf,
        }
    }
}

impl HurrayStatistics {
    /// The model's statistics section (fields outside `mask` are ignored).
    pub fn to_model(self) -> Statistics {
        Statistics {
            computed_mask: self.computed_mask,
            nnz: self.nnz,
            sparsity_ratio: self.sparsity_ratio,
            value_min: self.value_min,
            value_max: self.value_max,
            value_abs_max: self.value_abs_max,
            value_mean: self.value_mean,
            value_stddev: self.value_stddev,
            nm_n: self.nm_n,
            nm_m: self.nm_m,
            has_nan: self.has_nan,
            has_inf: self.has_inf,
        }
    }
}

impl From<&ExtensionType> for HurrayExtensionType {
    fn from(e: &ExtensionType) -> Self {
        HurrayExtensionType {
            bit_width: e.bit_width,
            exponent_bias: e.exponent_bias,
            packing_factor: e.packing_factor,
            is_float: u8::from(e.is_float),
            is_signed: u8::from(e.is_signed),
            sign_bits: e.sign_bits,
            exponent_bits: e.exponent_bits,
            mantissa_bits: e.mantissa_bits,
            has_nan: u8::from(e.has_nan),
            has_inf: u8::from(e.has_inf),
        }
    }
}

impl HurrayExtensionType {
    /// The model's extension-type section (`element-types.md` private types).
    ///
    /// Errors: `HURRAY_ERR_INVALID_ARGUMENT` for a flag field other than 0 or 1.
    pub fn to_model(self) -> FfiResult<ExtensionType> {
        Ok(ExtensionType {
            bit_width: self.bit_width,
            packing_factor: self.packing_factor,
            is_float: flag_in(self.is_float, "is_float")?,
            is_signed: flag_in(self.is_signed, "is_signed")?,
            sign_bits: self.sign_bits,
            exponent_bits: self.exponent_bits,
            mantissa_bits: self.mantissa_bits,
            exponent_bias: self.exponent_bias,
            has_nan: flag_in(self.has_nan, "has_nan")?,
            has_inf: flag_in(self.has_inf, "has_inf")?,
        })
    }
}

/// The composite-member role from its byte.
pub(crate) fn member_role_in(v: u8) -> FfiResult<MemberRole> {
    match v {
        0 => Ok(MemberRole::Correction),
        1 => Ok(MemberRole::Base),
        v => Err(bad(format!("member_role {v:#04x} is not 0 or 1"))),
    }
}

// ---------------------------------------------------------------- helpers

/// Runs `f` on the model of `descriptor` (any build).
///
/// # Safety
/// `descriptor` NULL or a live descriptor of some build.
unsafe fn read<R>(
    descriptor: *const HurrayDescriptor,
    f: impl FnOnce(&TensorDescriptor) -> FfiResult<R>,
) -> FfiResult<R> {
    // SAFETY: forwarded.
    let m = unsafe { model_of(descriptor, "descriptor")? };
    f(&m)
}

// ---------------------------------------------------------------- C exports: header

/// The fixed header fields of a descriptor: version, type and layout tags, flags,
/// descriptor length (bytes), rank, buffer count and byte offset (bytes).
///
/// Errors: `HURRAY_ERR_NULL_POINTER` (`descriptor`, `out`); `HURRAY_ERR_ABI_VERSION`;
/// `HURRAY_ERR_INVALID_ARGUMENT` (not a descriptor).
///
/// Ownership: `*out` is a plain struct written by value; nothing to free.
///
/// # Safety
/// `descriptor` NULL or a live descriptor of any copy of the library; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn hurray_descriptor_header(
    descriptor: *const HurrayDescriptor,
    out: *mut HurrayDescriptorHeader,
) -> HurrayStatus {
    boundary(|| {
        need(out, "out")?;
        // SAFETY: forwarded.
        let encoded_len = unsafe { encoded_of(descriptor, "descriptor")? }.len();
        // SAFETY: forwarded.
        let h = unsafe { read(descriptor, |m| Ok(header_of(m, encoded_len)))? };
        // SAFETY: checked non-null.
        unsafe { put(out, "out", h) }
    })
}

/// Copies the shape (`rank` dimensions in elements, slowest-varying first;
/// `HURRAY_DIM_DYNAMIC` marks a dynamic one) into `out` (`capacity` elements) and
/// writes the rank to `*out_len`. NULL `out`: only the rank is written.
///
/// Errors: `HURRAY_ERR_NULL_POINTER` (`descriptor`, `out_len`); `HURRAY_ERR_ABI_VERSION`;
/// `HURRAY_ERR_INVALID_ARGUMENT` (not a descriptor); `HURRAY_ERR_BUFFER_TOO_SMALL`
/// (`*out_len` holds the rank, nothing is copied).
///
/// Ownership: values copied into the caller's array; nothing to free.
///
/// # Safety
/// `descriptor` NULL or live; `out` NULL or valid for `capacity` writes; `out_len` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn hurray_descriptor_shape(
    descriptor: *const HurrayDescriptor,
    out: *mut u64,
    capacity: u64,
    out_len: *mut u64,
) -> HurrayStatus {
    boundary(|| {
        // SAFETY: forwarded.
        unsafe {
            read(descriptor, |m| {
                copy_out(&m.shape, out, capacity, out_len, "the shape")
            })
        }
    })
}
