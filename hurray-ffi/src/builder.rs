//! `HurrayDescriptorBuilder`: authoring descriptors from C.
//!
//! `hurray_descriptor_builder_new` fixes the element type, layout and shape; setters
//! fill the layout's fields, the buffer table and the optional sections, taking the
//! same structs the accessors return ([`crate::descriptor_access`]); and
//! `hurray_descriptor_builder_finish` validates everything (`HURRAY_ERR_DESCRIPTOR`
//! naming the rule and byte offset) and returns an owned `HurrayDescriptor`. The
//! builder is not consumed: fix what finish reported and call it again. A setter for
//! a field the builder's layout does not have fails with `HURRAY_ERR_NOT_APPLICABLE`;
//! calling a setter again replaces the value.

use crate::descriptor::{element_type_in, shape_in, HurrayDescriptor};
use crate::descriptor_access::{
    member_role_in, HurrayBlockPaged, HurrayBufferEntry, HurrayCompositeHead, HurrayExtensionType,
    HurrayQuantization, HurrayStatistics,
};
use crate::handle::{self, kind, Handle, Header};
use crate::status::*;
use hurray_core::layout::{tag, TileOrder, DEFAULT_MAX_TILING_DEPTH};
use hurray_core::{
    BlockPaged, BufferHandle, CompositeHead, ElementType, ExtensionType, Layout, MemberRole,
    Quantization, Shard, Statistics, TensorDescriptor, Tiling,
};
use std::sync::Arc;

/// A descriptor being authored (own-build only; opaque in C).
#[repr(C)]
pub struct HurrayDescriptorBuilder {
    header: Header,
    draft: Draft,
}

// SAFETY: repr(C) with Header first.
unsafe impl Handle for HurrayDescriptorBuilder {
    const KIND: u16 = kind::DESCRIPTOR_BUILDER;
    const NAME: &'static str = "HurrayDescriptorBuilder";
    fn header(&self) -> &Header {
        &self.header
    }
}

/// One tiling level as pushed: its outer order is final; its inner order is final
/// unless it is `TILED`, which the next pushed level fills in.
struct Level {
    tile_shape: Vec<u64>,
    outer: TileOrder,
    inner: Option<TileOrder>,
}

/// Layout fields set so far (only those of the builder's layout are ever set).
#[derive(Default)]
struct LayoutFields {
    strides: Option<Vec<i64>>,
    levels: Vec<Level>,
    morton_bits: Option<Vec<u32>>,
    nnz: Option<u64>,
    is_sorted: bool,
    mode_order: Option<Vec<u32>>,
    block_paged: Option<BlockPaged>,
    composite_head: Option<CompositeHead>,
    hilbert: Option<(u32, u32)>,
    extension: Option<(u64, Vec<u8>)>,
}

struct Draft {
    element_type: ElementType,
    shape: Vec<u64>,
    byte_offset: u64,
    layout_tag: u8,
    fields: LayoutFields,
    buffers: Vec<BufferHandle>,
    quantization: Option<Quantization>,
    shard: Option<Shard>,
    statistics: Option<Statistics>,
    extension_type: Option<ExtensionType>,
    composite_member: Option<MemberRole>,
}

/// The layout's name as every language renders it (`"csr"`, `"private(0xf3)"`).
fn layout_name(t: u8) -> &'static str {
    hurray_core::tables::layout_name(t)
}

fn known_layout(t: u8) -> bool {
    matches!(t, tag::ROW_MAJOR..=tag::COMPOSITE_HEAD | tag::HILBERT | 0xF0..=0xFE)
}

/// A tile order from its byte; `None` for inner `TILED` (the next level follows).
///
/// # Safety
/// `strides` NULL or valid for `rank` reads.
unsafe fn order_in(
    v: u8,
    strides: *const i64,
    rank: usize,
    outer: bool,
) -> FfiResult<Option<TileOrder>> {
    let which = if outer { "outer_order" } else { "inner_order" };
    Ok(Some(match v {
        1 => TileOrder::RowMajor,
        2 => TileOrder::ColumnMajor,
        3 => {
            let arg = if outer {
                "outer_strides"
            } else {
                "inner_strides"
            };
            // SAFETY: forwarded: rank readable values when the order is strided.
            TileOrder::Strided(unsafe { slice_in(strides, rank as u64, arg)? }.to_vec())
        }
        4 if !outer => return Ok(None),
        v => {
            let allowed = if outer { "1, 2 or 3" } else { "1, 2, 3 or 4" };
            return Err(FfiError::new(
                HURRAY_ERR_INVALID_ARGUMENT,
                format!("{which} {v} is not {allowed}"),
            ));
        }
    }))
}

impl Draft {
    fn rank(&self) -> usize {
        self.shape.len()
    }

    /// Fails with `HURRAY_ERR_NOT_APPLICABLE` unless the layout is one of `tags`.
    fn expect(&self, tags: &[u8], what: &str) -> FfiResult<()> {
        let ok = tags.contains(&self.layout_tag)
            || (tags.contains(&0xF0) && (0xF0..=0xFE).contains(&self.layout_tag));
        if ok {
            return Ok(());
        }
        Err(not_applicable(format!(
            "{what} does not apply to the builder's {} layout ({:#04x})",
            layout_name(self.layout_tag),
            self.layout_tag
        )))
    }

    /// A rank-length array from the caller.
    ///
    /// # Safety
    /// `p` NULL or valid for `len` reads.
    unsafe fn ranked<T: Copy>(&self, p: *const T, len: u64, arg: &str) -> FfiResult<Vec<T>> {
        if len != self.rank() as u64 {
            return Err(FfiError::new(
                HURRAY_ERR_INVALID_ARGUMENT,
                format!("`{arg}` has {len} values; the rank is {}", self.rank()),
            ));
        }
        // SAFETY: forwarded.
        Ok(unsafe { slice_in(p, len, arg)? }.to_vec())
    }

    fn layout(&self) -> FfiResult<Layout> {
        let f = &self.fields;
        let missing = |setter: &str| {
            FfiError::new(
                HURRAY_ERR_STATE,
                format!(
                    "the {} layout needs hurray_descriptor_builder_{setter} before finish",
                    layout_name(self.layout_tag)
                ),
            )
        };
        let nnz = || f.nnz.ok_or_else(|| missing("set_nnz"));
        Ok(match self.layout_tag {
            tag::ROW_MAJOR => Layout::RowMajor,
            tag::COLUMN_MAJOR => Layout::ColumnMajor,
            tag::STRIDED => Layout::Strided {
                strides: f.strides.clone().ok_or_else(|| missing("set_strides"))?,
            },
            tag::TILED => Layout::Tiled(self.tiling()?),
            tag::MORTON => Layout::Morton {
                bits: f
                    .morton_bits
                    .clone()
                    .ok_or_else(|| missing("set_morton_bits"))?,
            },
            tag::COO => Layout::Coo {
                nnz: nnz()?,
                is_sorted: f.is_sorted,
            },
            tag::CSR => Layout::Csr { nnz: nnz()? },
            tag::CSC => Layout::Csc { nnz: nnz()? },
            tag::CSF => Layout::Csf {
                nnz: nnz()?,
                mode_order: f
                    .mode_order
                    .clone()
                    .ok_or_else(|| missing("set_csf_mode_order"))?,
            },
            tag::BLOCK_PAGED => {
                Layout::BlockPaged(f.block_paged.ok_or_else(|| missing("set_block_paged"))?)
            }
            tag::COMPOSITE_HEAD => Layout::CompositeHead(
                f.composite_head
                    .ok_or_else(|| missing("set_composite_head"))?,
            ),
            tag::HILBERT => {
                let (order, rank) = f.hilbert.ok_or_else(|| missing("set_hilbert"))?;
                Layout::Hilbert { order, rank }
            }
            t => {
                let (id, data) = f
                    .extension
                    .clone()
                    .ok_or_else(|| missing("set_extension_layout"))?;
                Layout::Extension { tag: t, id, data }
            }
        })
    }

    fn tiling(&self) -> FfiResult<Tiling> {
        let levels = &self.fields.levels;
        let state = |m: String| FfiError::new(HURRAY_ERR_STATE, m);
        let Some(last) = levels.last() else {
            return Err(state(
                "the tiled layout needs hurray_descriptor_builder_push_tiling_level before finish"
                    .into(),
            ));
        };
        let Some(inner) = &last.inner else {
            return Err(state(format!(
                "tiling level {} has inner order TILED but no level {} was pushed",
                levels.len() - 1,
                levels.len()
            )));
        };
        let mut t = Tiling {
            tile_shape: last.tile_shape.clone(),
            outer: last.outer.clone(),
            inner: inner.clone(),
        };
        for l in levels.iter().rev().skip(1) {
            t = Tiling {
                tile_shape: l.tile_shape.clone(),
                outer: l.outer.clone(),
                inner: TileOrder::Tiled(Box::new(t)),
            };
        }
        Ok(t)
    }

    fn to_model(&self) -> FfiResult<TensorDescriptor> {
        Ok(TensorDescriptor {
            version_minor: 0,
            element_type: self.element_type,
            shape: self.shape.clone(),
            byte_offset: self.byte_offset,
            layout: self.layout()?,
            buffers: self.buffers.clone(),
            quantization: self.quantization.clone(),
            shard: self.shard.clone(),
            statistics: self.statistics,
            extension_type: self.extension_type,
            composite_member: self.composite_member,
        })
    }
}

/// The builder behind a C pointer (own-build only).
///
/// # Safety
/// `b` NULL or a live builder, not used by another thread.
unsafe fn draft<'a>(b: *mut HurrayDescriptorBuilder) -> FfiResult<&'a mut Draft> {
    // SAFETY: forwarded.
    Ok(&mut unsafe { handle::own_mut(b, "builder")? }.draft)
}

/// Reads a required struct argument.
///
/// # Safety
/// `p` NULL or valid for a read of `T`.
unsafe fn arg_in<T: Copy>(p: *const T, arg: &str) -> FfiResult<T> {
    // SAFETY: NULL is reported; otherwise readable per the caller.
    unsafe { p.as_ref() }
        .copied()
        .ok_or_else(|| FfiError::null(arg))
}

// ---------------------------------------------------------------- C exports

/// Starts a descriptor of element type `type_tag` (`HURRAY_TYPE_*` or private
/// 0xF0..0xFE), layout `layout_tag` (`HURRAY_LAYOUT_*` or an extension tag
/// 0xF0..0xFE) and shape `shape` (`rank` dimensions in elements; NULL allowed when
/// `rank` is 0). The byte offset starts at 0, the buffer table empty, and no
/// optional section is present.
///
/// Errors: `HURRAY_ERR_NULL_POINTER` (`out`, or `shape` with `rank` > 0);
/// `HURRAY_ERR_INVALID_ARGUMENT` (unassigned `type_tag` or `layout_tag`, `rank` > 64).
///
/// Ownership: `*out` owned; destroy with `hurray_descriptor_builder_destroy`.
///
/// # Safety
/// `shape` NULL or valid for `rank` reads; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn hurray_descriptor_builder_new(
    type_tag: u8,
    layout_tag: u8,
    rank: u32,
    shape: *const u64,
    out: *mut *mut HurrayDescriptorBuilder,
) -> HurrayStatus {
    boundary(|| {
        need(out, "out")?;
        let element_type = element_type_in(type_tag)?;
        if !known_layout(layout_tag) {
            return Err(FfiError::new(
                HURRAY_ERR_INVALID_ARGUMENT,
                format!("layout_tag {layout_tag:#04x} is not an assigned or extension layout"),
            ));
        }
        // SAFETY: forwarded.
        let shape = unsafe { shape_in(shape, rank)? };
        let b = HurrayDescriptorBuilder {
            header: Header::new(
                kind::DESCRIPTOR_BUILDER,
                handle::destroy_own::<HurrayDescriptorBuilder>,
            ),
            draft: Draft {
                element_type,
                shape,
                byte_offset: 0,
                layout_tag,
                fields: LayoutFields::default(),
                buffers: Vec::new(),
                quantization: None,
                shard: None,
                statistics: None,
                extension_type: None,
                composite_member: None,
            },
        };
        // SAFETY: out checked non-null.
        unsafe { put(out, "out", handle::into_raw(b)) }
    })
}

/// Sets `byte_offset`: bytes from the start of buffer 0 to element [0, ..., 0].
///
/// Errors: `HURRAY_ERR_NULL_POINTER` (`builder`); `HURRAY_ERR_ABI_VERSION`;
/// `HURRAY_ERR_INVALID_ARGUMENT` (not a builder of this copy of the library).
///
/// Ownership: nothing moves.
///
/// # Safety
/// `builder` NULL or a live builder.
#[no_mangle]
pub unsafe extern "C" fn hurray_descriptor_builder_set_byte_offset(
    builder: *mut HurrayDescriptorBuilder,
    byte_offset: u64,
) -> HurrayStatus {
    boundary(|| {
        // SAFETY: forwarded.
        unsafe { draft(builder)? }.byte_offset = byte_offset;
        Ok(())
    })
}

/// Sets the strides of a strided layout: `len` (= rank) signed values, in elements.
///
/// Errors: `HURRAY_ERR_NULL_POINTER` (`builder`, or `strides` with `len` > 0);
/// `HURRAY_ERR_ABI_VERSION`; `HURRAY_ERR_INVALID_ARGUMENT` (`len` is not the rank; not
/// a builder of this copy); `HURRAY_ERR_NOT_APPLICABLE` (layout not strided).
///
/// Ownership: the values are copied; `strides` stays the caller's.
///
/// # Safety
/// `builder` NULL or live; `strides` NULL or valid for `len` reads.
#[no_mangle]
pub unsafe extern "C" fn hurray_descriptor_builder_set_strides(
    builder: *mut HurrayDescriptorBuilder,
    strides: *const i64,
    len: u64,
) -> HurrayStatus {
    boundary(|| {
        // SAFETY: forwarded.
        let d = unsafe { draft(builder)? };
        d.expect(&[tag::STRIDED], "strides")?;
        // SAFETY: forwarded.
        d.fields.strides = Some(unsafe { d.ranked(strides, len, "strides")? });
        Ok(())
    })
}

/// Appends a nesting level to a tiled layout (the first call sets the outermost).
/// `tile_shape`: rank values, elements per tile. `outer_order`: 1 row-major, 2
/// column-major or 3 strided (`outer_strides`: rank values, in tiles). `inner_order`:
/// 1, 2, 3 (`inner_strides`: rank values, in elements) or 4 `HURRAY_TILE_ORDER_TILED`,
/// meaning the next call adds the nested level. Stride arrays are read only when their
/// order is 3 (else they may be NULL).
///
/// Errors: `HURRAY_ERR_NULL_POINTER` (`builder`, `tile_shape` with rank > 0, a stride
/// array its order needs); `HURRAY_ERR_ABI_VERSION`; `HURRAY_ERR_INVALID_ARGUMENT`
/// (an order out of range; not a builder of this copy); `HURRAY_ERR_NOT_APPLICABLE`
/// (layout not tiled); `HURRAY_ERR_STATE` (the previous level's inner order is not
/// TILED); `HURRAY_ERR_OUT_OF_RANGE` (a 9th level). On error nothing changes.
///
/// Ownership: the values are copied; the arrays stay the caller's.
///
/// # Safety
/// `builder` NULL or live; each array NULL or valid for rank reads.
#[no_mangle]
pub unsafe extern "C" fn hurray_descriptor_builder_push_tiling_level(
    builder: *mut HurrayDescriptorBuilder,
    tile_shape: *const u64,
    outer_order: u8,
    outer_strides: *const i64,
    inner_order: u8,
    inner_strides: *const i64,
) -> HurrayStatus {
    boundary(|| {
        // SAFETY: forwarded.
        let d = unsafe { draft(builder)? };
        d.expect(&[tag::TILED], "a tiling level")?;
        let n = d.fields.levels.len();
        if let Some(prev) = d.fields.levels.last() {
            if prev.inner.is_some() {
                return Err(FfiError::new(
                    HURRAY_ERR_STATE,
                    format!(
                        "tiling level {} does not nest (its inner order is not TILED)",
                        n - 1
                    ),
                ));
            }
        }
        if n >= DEFAULT_MAX_TILING_DEPTH as usize {
            return Err(FfiError::new(
                HURRAY_ERR_OUT_OF_RANGE,
                format!("a tiled layout nests at most {DEFAULT_MAX_TILING_DEPTH} levels"),
            ));
        }
        let rank = d.rank();
        // SAFETY: forwarded.
        let tile_shape = unsafe { slice_in(tile_shape, rank as u64, "tile_shape")? }.to_vec();
        // SAFETY: forwarded.
        let outer = unsafe { order_in(outer_order, outer_strides, rank, true)? }
            .expect("an outer order is never TILED");
        // SAFETY: forwarded.
        let inner = unsafe { order_in(inner_order, inner_strides, rank, false)? };
        d.fields.levels.push(Level {
            tile_shape,
            outer,
            inner,
        });
        Ok(())
    })
}

/// Sets the Morton bits (bits of each coordinate): `len` (= rank) values.
///
/// Errors: `HURRAY_ERR_NULL_POINTER` (`builder`, or `bits` with `len` > 0);
/// `HURRAY_ERR_ABI_VERSION`; `HURRAY_ERR_INVALID_ARGUMENT` (`len` is not the rank; not
/// a builder of this copy); `HURRAY_ERR_NOT_APPLICABLE` (layout not Morton).
///
/// Ownership: the values are copied; `bits` stays the caller's.
///
/// # Safety
/// `builder` NULL or live; `bits` NULL or valid for `len` reads.
#[no_mangle]
pub unsafe extern "C" fn hurray_descriptor_builder_set_morton_bits(
    builder: *mut HurrayDescriptorBuilder,
    bits: *const u32,
    len: u64,
) -> HurrayStatus {
    boundary(|| {
        // SAFETY: forwarded.
        let d = unsafe { draft(builder)? };
        d.expect(&[tag::MORTON], "morton_bits")?;
        // SAFETY: forwarded.
        d.fields.morton_bits = Some(unsafe { d.ranked(bits, len, "bits")? });
        Ok(())
    })
}

/// Sets `nnz`, the number of stored elements, of a sparse layout (COO, CSR, CSC, CSF).
///
/// Errors: `HURRAY_ERR_NULL_POINTER` (`builder`); `HURRAY_ERR_ABI_VERSION`;
/// `HURRAY_ERR_INVALID_ARGUMENT` (not a builder of this copy);
/// `HURRAY_ERR_NOT_APPLICABLE` (layout not sparse).
///
/// Ownership: nothing moves.
///
/// # Safety
/// `builder` NULL or live.
#[no_mangle]
pub unsafe extern "C" fn hurray_descriptor_builder_set_nnz(
    builder: *mut HurrayDescriptorBuilder,
    nnz: u64,
) -> HurrayStatus {
    boundary(|| {
        // SAFETY: forwarded.
        let d = unsafe { draft(builder)? };
        d.expect(&[tag::COO, tag::CSR, tag::CSC, tag::CSF], "nnz")?;
        d.fields.nnz = Some(nnz);
        Ok(())
    })
}

/// Sets COO `is_sorted` (0 or 1; 0 until set).
///
/// Errors: `HURRAY_ERR_NULL_POINTER` (`builder`); `HURRAY_ERR_ABI_VERSION`;
/// `HURRAY_ERR_INVALID_ARGUMENT` (`is_sorted` not 0 or 1; not a builder of this copy);
/// `HURRAY_ERR_NOT_APPLICABLE` (layout not COO).
///
/// Ownership: nothing moves.
///
/// # Safety
/// `builder` NULL or live.
#[no_mangle]
pub unsafe extern "C" fn hurray_descriptor_builder_set_coo_is_sorted(
    builder: *mut HurrayDescriptorBuilder,
    is_sorted: u8,
) -> HurrayStatus {
    boundary(|| {
        // SAFETY: forwarded.
        let d = unsafe { draft(builder)? };
        d.expect(&[tag::COO], "is_sorted")?;
        d.fields.is_sorted = match is_sorted {
            0 => false,
            1 => true,
            v => {
                return Err(FfiError::new(
                    HURRAY_ERR_INVALID_ARGUMENT,
                    format!("is_sorted is {v}, not 0 or 1"),
                ))
            }
        };
        Ok(())
    })
}

/// Sets the CSF `mode_order`: `len` (= rank) values, a permutation of `0..rank`.
///
/// Errors: `HURRAY_ERR_NULL_POINTER` (`builder`, or `mode_order` with `len` > 0);
/// `HURRAY_ERR_ABI_VERSION`; `HURRAY_ERR_INVALID_ARGUMENT` (`len` is not the rank; not
/// a builder of this copy); `HURRAY_ERR_NOT_APPLICABLE` (layout not CSF).
///
/// Ownership: the values are copied; `mode_order` stays the caller's.
///
/// # Safety
/// `builder` NULL or live; `mode_order` NULL or valid for `len` reads.
#[no_mangle]
pub unsafe extern "C" fn hurray_descriptor_builder_set_csf_mode_order(
    builder: *mut HurrayDescriptorBuilder,
    mode_order: *const u32,
    len: u64,
) -> HurrayStatus {
    boundary(|| {
        // SAFETY: forwarded.
        let d = unsafe { draft(builder)? };
        d.expect(&[tag::CSF], "mode_order")?;
        // SAFETY: forwarded.
        d.fields.mode_order = Some(unsafe { d.ranked(mode_order, len, "mode_order")? });
        Ok(())
    })
}

/// Sets the fields of a block-paged layout.
///
/// Errors: `HURRAY_ERR_NULL_POINTER` (`builder`, `fields`); `HURRAY_ERR_ABI_VERSION`;
/// `HURRAY_ERR_INVALID_ARGUMENT` (`kv_role` or `block_table_index_type` out of range;
/// not a builder of this copy); `HURRAY_ERR_NOT_APPLICABLE` (layout not block-paged).
///
/// Ownership: the struct is copied.
///
/// # Safety
/// `builder` NULL or live; `fields` NULL or readable.
#[no_mangle]
pub unsafe extern "C" fn hurray_descriptor_builder_set_block_paged(
    builder: *mut HurrayDescriptorBuilder,
    fields: *const HurrayBlockPaged,
) -> HurrayStatus {
    boundary(|| {
        // SAFETY: forwarded.
        let d = unsafe { draft(builder)? };
        // SAFETY: forwarded.
        let f = unsafe { arg_in(fields, "fields")? };
        d.expect(&[tag::BLOCK_PAGED], "block-paged fields")?;
        d.fields.block_paged = Some(f.to_model()?);
        Ok(())
    })
}

/// Sets the fields of a composite head: composition rule (1..3), combine op, member
/// count.
///
/// Errors: `HURRAY_ERR_NULL_POINTER` (`builder`, `fields`); `HURRAY_ERR_ABI_VERSION`;
/// `HURRAY_ERR_INVALID_ARGUMENT` (a rule or op out of range; not a builder of this
/// copy); `HURRAY_ERR_NOT_APPLICABLE` (layout not a composite head).
///
/// Ownership: the struct is copied.
///
/// # Safety
/// `builder` NULL or live; `fields` NULL or readable.
#[no_mangle]
pub unsafe extern "C" fn hurray_descriptor_builder_set_composite_head(
    builder: *mut HurrayDescriptorBuilder,
    fields: *const HurrayCompositeHead,
) -> HurrayStatus {
    boundary(|| {
        // SAFETY: forwarded.
        let d = unsafe { draft(builder)? };
        // SAFETY: forwarded.
        let f = unsafe { arg_in(fields, "fields")? };
        d.expect(&[tag::COMPOSITE_HEAD], "composite head fields")?;
        d.fields.composite_head = Some(f.to_model()?);
        Ok(())
    })
}

/// Sets the Hilbert curve order (every dimension is `2^order`) and curve rank (must
/// equal the tensor rank, checked at finish).
///
/// Errors: `HURRAY_ERR_NULL_POINTER` (`builder`); `HURRAY_ERR_ABI_VERSION`;
/// `HURRAY_ERR_INVALID_ARGUMENT` (not a builder of this copy);
/// `HURRAY_ERR_NOT_APPLICABLE` (layout not Hilbert).
///
/// Ownership: nothing moves.
///
/// # Safety
/// `builder` NULL or live.
#[no_mangle]
pub unsafe extern "C" fn hurray_descriptor_builder_set_hilbert(
    builder: *mut HurrayDescriptorBuilder,
    order: u32,
    rank: u32,
) -> HurrayStatus {
    boundary(|| {
        // SAFETY: forwarded.
        let d = unsafe { draft(builder)? };
        d.expect(&[tag::HILBERT], "Hilbert fields")?;
        d.fields.hilbert = Some((order, rank));
        Ok(())
    })
}

/// Sets a private extension layout's identifier and opaque data (`len` bytes; NULL
/// allowed when `len` is 0).
///
/// Errors: `HURRAY_ERR_NULL_POINTER` (`builder`, or `data` with `len` > 0);
/// `HURRAY_ERR_ABI_VERSION`; `HURRAY_ERR_INVALID_ARGUMENT` (`len` >= 4 GiB; not a
/// builder of this copy); `HURRAY_ERR_NOT_APPLICABLE` (layout not an extension).
///
/// Ownership: the bytes are copied; `data` stays the caller's.
///
/// # Safety
/// `builder` NULL or live; `data` NULL or valid for `len` reads.
#[no_mangle]
pub unsafe extern "C" fn hurray_descriptor_builder_set_extension_layout(
    builder: *mut HurrayDescriptorBuilder,
    id: u64,
    data: *const u8,
    len: u64,
) -> HurrayStatus {
    boundary(|| {
        // SAFETY: forwarded.
        let d = unsafe { draft(builder)? };
        d.expect(&[0xF0], "extension layout fields")?;
        if len > u64::from(u32::MAX) {
            return Err(FfiError::new(
                HURRAY_ERR_INVALID_ARGUMENT,
                format!("extension data of {len} bytes exceeds the u32 length field"),
            ));
        }
        // SAFETY: forwarded.
        let bytes = unsafe { slice_in(data, len, "data")? }.to_vec();
        d.fields.extension = Some((id, bytes));
        Ok(())
    })
}

/// Appends an entry to the buffer table (layout buffers first, then quantization
/// parameter buffers). Placement rules (alignment, device and memory class pairs,
/// CPU sync mode) and sizes are checked at finish.
///
/// Errors: `HURRAY_ERR_NULL_POINTER` (`builder`, `entry`); `HURRAY_ERR_ABI_VERSION`;
/// `HURRAY_ERR_INVALID_ARGUMENT` (a reserved device tag or memory class; not a builder
/// of this copy); `HURRAY_ERR_INVALID_SYNC_MODE` (reserved sync mode);
/// `HURRAY_ERR_OUT_OF_RANGE` (a 256th entry).
///
/// Ownership: the struct is copied.
///
/// # Safety
/// `builder` NULL or live; `entry` NULL or readable.
#[no_mangle]
pub unsafe extern "C" fn hurray_descriptor_builder_add_buffer(
    builder: *mut HurrayDescriptorBuilder,
    entry: *const HurrayBufferEntry,
) -> HurrayStatus {
    boundary(|| {
        // SAFETY: forwarded.
        let d = unsafe { draft(builder)? };
        // SAFETY: forwarded.
        let e = unsafe { arg_in(entry, "entry")? }.to_model()?;
        if d.buffers.len() >= 255 {
            return Err(FfiError::new(
                HURRAY_ERR_OUT_OF_RANGE,
                "a descriptor holds at most 255 buffers",
            ));
        }
        d.buffers.push(e);
        Ok(())
    })
}

/// Sets the quantization section. `q->scheme_tag` picks the scheme and the fields
/// read (see `HurrayQuantization`); for the assigned schemes `scheme_version` and
/// `flags` are ignored (written as 1 and as implied by `zero_point_buffer_index`, where
/// `HURRAY_NO_BUFFER` means symmetric). `trailing` (`trailing_len` bytes, NULL allowed
/// when 0) follows the fixed fields; for a private scheme (0xF0..0xFE) it is the whole
/// payload after the 4-byte header. Value rules are checked at finish.
///
/// Errors: `HURRAY_ERR_NULL_POINTER` (`builder`, `q`, or `trailing` with a length);
/// `HURRAY_ERR_ABI_VERSION`; `HURRAY_ERR_INVALID_ARGUMENT` (unassigned scheme tag,
/// scale type out of range, `trailing_len` too large; not a builder of this copy).
///
/// Ownership: the struct and bytes are copied.
///
/// # Safety
/// `builder` NULL or live; `q` NULL or readable; `trailing` NULL or valid for
/// `trailing_len` reads.
#[no_mangle]
pub unsafe extern "C" fn hurray_descriptor_builder_set_quantization(
    builder: *mut HurrayDescriptorBuilder,
    q: *const HurrayQuantization,
    trailing: *const u8,
    trailing_len: u64,
) -> HurrayStatus {
    boundary(|| {
        // SAFETY: forwarded.
        let d = unsafe { draft(builder)? };
        // SAFETY: forwarded.
        let q = unsafe { arg_in(q, "q")? };
        if trailing_len > u64::from(u32::MAX) - 64 {
            return Err(FfiError::new(
                HURRAY_ERR_INVALID_ARGUMENT,
                format!("{trailing_len} trailing bytes overflow quantization_length"),
            ));
        }
        // SAFETY: forwarded.
        let bytes = unsafe { slice_in(trailing, trailing_len, "trailing")? };
        d.quantization = Some(q.to_model(bytes)?);
        Ok(())
    })
}

/// Sets the shard section: this tensor is the box `[offset[k], offset[k] + shape[k])`
/// of a parent of shape `parent_shape`; both arrays hold `len` (= rank) values, in
/// elements.
///
/// Errors: `HURRAY_ERR_NULL_POINTER` (`builder`, or an array with `len` > 0);
/// `HURRAY_ERR_ABI_VERSION`; `HURRAY_ERR_INVALID_ARGUMENT` (`len` is not the rank; not
/// a builder of this copy).
///
/// Ownership: the values are copied; the arrays stay the caller's.
///
/// # Safety
/// `builder` NULL or live; arrays NULL or valid for `len` reads each.
#[no_mangle]
pub unsafe extern "C" fn hurray_descriptor_builder_set_shard(
    builder: *mut HurrayDescriptorBuilder,
    parent_shape: *const u64,
    offset: *const u64,
    len: u64,
) -> HurrayStatus {
    boundary(|| {
        // SAFETY: forwarded.
        let d = unsafe { draft(builder)? };
        // SAFETY: forwarded.
        let (parent_shape, offset) = unsafe {
            (
                d.ranked(parent_shape, len, "parent_shape")?,
                d.ranked(offset, len, "offset")?,
            )
        };
        d.shard = Some(Shard {
            parent_shape,
            offset,
        });
        Ok(())
    })
}

/// Sets the statistics section (value rules, such as reserved mask bits, are checked
/// at finish).
///
/// Errors: `HURRAY_ERR_NULL_POINTER` (`builder`, `stats`); `HURRAY_ERR_ABI_VERSION`;
/// `HURRAY_ERR_INVALID_ARGUMENT` (not a builder of this copy).
///
/// Ownership: the struct is copied.
///
/// # Safety
/// `builder` NULL or live; `stats` NULL or readable.
#[no_mangle]
pub unsafe extern "C" fn hurray_descriptor_builder_set_statistics(
    builder: *mut HurrayDescriptorBuilder,
    stats: *const HurrayStatistics,
) -> HurrayStatus {
    boundary(|| {
        // SAFETY: forwarded.
        let d = unsafe { draft(builder)? };
        // SAFETY: forwarded.
        d.statistics = Some(unsafe { arg_in(stats, "stats")? }.to_model());
        Ok(())
    })
}

/// Sets the extension-type section, which a private element type requires (and
/// only a private one may carry; checked at finish).
///
/// Errors: `HURRAY_ERR_NULL_POINTER` (`builder`, `ext`); `HURRAY_ERR_ABI_VERSION`;
/// `HURRAY_ERR_INVALID_ARGUMENT` (a flag field not 0 or 1; not a builder of this copy).
///
/// Ownership: the struct is copied.
///
/// # Safety
/// `builder` NULL or live; `ext` NULL or readable.
#[no_mangle]
pub unsafe extern "C" fn hurray_descriptor_builder_set_extension_type(
    builder: *mut HurrayDescriptorBuilder,
    ext: *const HurrayExtensionType,
) -> HurrayStatus {
    boundary(|| {
        // SAFETY: forwarded.
        let d = unsafe { draft(builder)? };
        // SAFETY: forwarded.
        d.extension_type = Some(unsafe { arg_in(ext, "ext")? }.to_model()?);
        Ok(())
    })
}

/// Sets the composite-member section: the role of an overlay member
/// (`HURRAY_MEMBER_ROLE_*`).
///
/// Errors: `HURRAY_ERR_NULL_POINTER` (`builder`); `HURRAY_ERR_ABI_VERSION`;
/// `HURRAY_ERR_INVALID_ARGUMENT` (`role` not 0 or 1; not a builder of this copy).
///
/// Ownership: nothing moves.
///
/// # Safety
/// `builder` NULL or live.
#[no_mangle]
pub unsafe extern "C" fn hurray_descriptor_builder_set_member_role(
    builder: *mut HurrayDescriptorBuilder,
    role: u8,
) -> HurrayStatus {
    boundary(|| {
        // SAFETY: forwarded.
        let d = unsafe { draft(builder)? };
        d.composite_member = Some(member_role_in(role)?);
        Ok(())
    })
}

/// Validates what was set and makes a descriptor of it. The builder is unchanged and
/// may be finished again (after fixing what an error reported).
///
/// Errors: `HURRAY_ERR_NULL_POINTER` (`builder`, `out`); `HURRAY_ERR_ABI_VERSION`;
/// `HURRAY_ERR_INVALID_ARGUMENT` (not a builder of this copy); `HURRAY_ERR_STATE` (a
/// field the layout requires was never set); `HURRAY_ERR_DESCRIPTOR` (a rule of the
/// spec is broken; the message names the rule and the byte offset in the encoding).
///
/// Ownership: `*out` owned; destroy with `hurray_descriptor_destroy`.
///
/// # Safety
/// `builder` NULL or live; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn hurray_descriptor_builder_finish(
    builder: *mut HurrayDescriptorBuilder,
    out: *mut *mut HurrayDescriptor,
) -> HurrayStatus {
    boundary(|| {
        // SAFETY: forwarded.
        let d = unsafe { draft(builder)? };
        need(out, "out")?;
        let model = d.to_model()?;
        let desc = HurrayDescriptor::new(Arc::new(model))?;
        // SAFETY: out checked non-null.
        unsafe { put(out, "out", handle::into_raw(desc)) }
    })
}

/// Destroys a builder and nulls `*builder`. NULL and `*builder == NULL` are no-ops.
/// Descriptors it finished are independent and stay valid.
///
/// Errors: `HURRAY_ERR_ABI_VERSION`; `HURRAY_ERR_INVALID_ARGUMENT` (not a builder);
/// `HURRAY_ERR_DOUBLE_DESTROY` (debug builds, stale pointer).
///
/// Ownership: the handle is freed.
///
/// # Safety
/// `builder` NULL, or pointing at NULL or a live builder handle.
#[no_mangle]
pub unsafe extern "C" fn hurray_descriptor_builder_destroy(
    builder: *mut *mut HurrayDescriptorBuilder,
) -> HurrayStatus {
    // SAFETY: forwarded.
    boundary(|| unsafe { handle::destroy(builder, "builder") })
}
