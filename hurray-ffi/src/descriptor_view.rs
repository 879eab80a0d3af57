//! The whole descriptor in one call: [`HurrayDescriptorView`], a borrowed,
//! data-shaped view whose arrays point into the descriptor itself, so a C or Go
//! reader makes one crossing instead of one per field (`hurray_descriptor_view`).
//!
//! Every field of `descriptor.md` is in it; a field the descriptor's layout or
//! sections do not have is NULL (pointers) or 0. Array lengths follow from the
//! header: `rank` for shape, strides, Morton bits, CSF mode order, tile shapes and
//! strides, shard boxes; `buffer_count` for the buffer table; `tiling_depth` for
//! the tiling levels. The view is built on first request and kept with the
//! descriptor: it is valid, unchanged, until the descriptor is destroyed.

use crate::descriptor::{element_type_in, shape_in, HurrayDescriptor};
use crate::descriptor_access::{
    member_role_in, quantization_trailing, HurrayBlockPaged, HurrayBufferEntry,
    HurrayCompositeHead, HurrayDescriptorHeader, HurrayExtensionType, HurrayQuantization,
    HurrayStatistics,
};
use crate::handle;
use crate::status::*;
use hurray_core::layout::{tag, TileOrder, DEFAULT_MAX_TILING_DEPTH};
use hurray_core::{Layout, Shard, TensorDescriptor, Tiling};
use std::ptr::null;
use std::sync::Arc;

/// One level of a tiled layout (`layouts.md` §2.4), outermost first.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct HurrayTileLevelView {
    /// Elements per tile along each dimension (`rank` values).
    pub tile_shape: *const u64,
    /// Strides of the tile grid, in tiles (`rank` values) when `outer_order` is
    /// `HURRAY_TILE_ORDER_STRIDED`, else NULL.
    pub outer_strides: *const i64,
    /// Strides inside a tile, in elements (`rank` values) when `inner_order` is
    /// `HURRAY_TILE_ORDER_STRIDED`, else NULL.
    pub inner_strides: *const i64,
    /// `HURRAY_TILE_ORDER_*` of the tile grid.
    pub outer_order: u8,
    /// `HURRAY_TILE_ORDER_*` inside a tile (`HURRAY_TILE_ORDER_TILED`: the next level follows).
    pub inner_order: u8,
}

/// A whole descriptor, borrowed: every pointer is NULL or points into the
/// descriptor, valid until it is destroyed. Enumerated fields are wire bytes.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct HurrayDescriptorView {
    /// The fixed header: tags, flags, rank, buffer count, byte offset.
    pub header: HurrayDescriptorHeader,
    /// `rank` dimensions in elements (`HURRAY_DYN` for a dynamic one); NULL when rank is 0.
    pub shape: *const u64,
    /// `buffer_count` buffer-table entries; NULL when there are none.
    pub buffers: *const HurrayBufferEntry,
    /// Strided: `rank` strides in elements; else NULL.
    pub strides: *const i64,
    /// Tiled: the number of levels in `tiling`; else 0.
    pub tiling_depth: u32,
    /// Tiled: `tiling_depth` levels, outermost first; else NULL.
    pub tiling: *const HurrayTileLevelView,
    /// Morton: `rank` bit counts; else NULL.
    pub morton_bits: *const u32,
    /// COO, CSR, CSC, CSF: stored elements; else 0.
    pub nnz: u64,
    /// COO: 1 when the tuples are sorted; else 0.
    pub coo_is_sorted: u8,
    /// CSF: `rank` level dimensions (a permutation); else NULL.
    pub csf_mode_order: *const u32,
    /// Block-paged: its fields; else NULL.
    pub block_paged: *const HurrayBlockPaged,
    /// Composite head: its fields; else NULL.
    pub composite_head: *const HurrayCompositeHead,
    /// Hilbert: the curve order; else 0.
    pub hilbert_order: u32,
    /// Hilbert: the curve rank; else 0.
    pub hilbert_rank: u32,
    /// Private extension layout: its identifier; else 0.
    pub extension_layout_id: u64,
    /// Private extension layout: its opaque data; else NULL.
    pub extension_layout_data: *const u8,
    /// Bytes at `extension_layout_data`.
    pub extension_layout_data_len: u64,
    /// The quantization section, or NULL.
    pub quantization: *const HurrayQuantization,
    /// Quantization bytes past the scheme's fixed fields (a private scheme's whole
    /// payload), or NULL.
    pub quantization_trailing: *const u8,
    /// Bytes at `quantization_trailing`.
    pub quantization_trailing_len: u64,
    /// Shard: `rank` extents of the parent tensor; NULL without a shard section.
    pub shard_parent_shape: *const u64,
    /// Shard: `rank` offsets of this box in the parent; NULL without a shard section.
    pub shard_offset: *const u64,
    /// The statistics section, or NULL.
    pub statistics: *const HurrayStatistics,
    /// The extension-type section, or NULL.
    pub extension_type: *const HurrayExtensionType,
    /// 1 when the composite-member section is present (then `member_role` holds
    /// `HURRAY_MEMBER_ROLE_*`); else 0.
    pub has_member_role: u8,
    /// `HURRAY_MEMBER_ROLE_*` when `has_member_role`.
    pub member_role: u8,
}

/// What a view points at beyond the model's own vectors, kept with the descriptor.
pub(crate) struct ViewStore {
    view: HurrayDescriptorView,
    _buffers: Vec<HurrayBufferEntry>,
    _tiling: Vec<HurrayTileLevelView>,
    _block_paged: Option<Box<HurrayBlockPaged>>,
    _composite_head: Option<Box<HurrayCompositeHead>>,
    _quantization: Option<Box<HurrayQuantization>>,
    _trailing: Vec<u8>,
    _statistics: Option<Box<HurrayStatistics>>,
    _extension_type: Option<Box<HurrayExtensionType>>,
}

// SAFETY: the raw pointers point into this store's own boxes and vectors or into
// the descriptor's model (an `Arc` the descriptor holds for as long as the store):
// all immutable after construction, so sharing or moving the store across threads
// cannot race.
unsafe impl Send for ViewStore {}
// SAFETY: as above; nothing is ever written through the pointers.
unsafe impl Sync for ViewStore {}

fn ptr_or_null<T>(v: &[T]) -> *const T {
    if v.is_empty() {
        null()
    } else {
        v.as_ptr()
    }
}

fn boxed<T>(v: Option<T>) -> (Option<Box<T>>, *const T) {
    let b = v.map(Box::new);
    let p = b.as_deref().map_or(null(), |r| r as *const T);
    (b, p)
}

fn order_tag(o: &TileOrder) -> u8 {
    match o {
        TileOrder::RowMajor => 1,
        TileOrder::ColumnMajor => 2,
        TileOrder::Strided(_) => 3,
        TileOrder::Tiled(_) => 4,
    }
}

fn strides_of(o: &TileOrder) -> *const i64 {
    match o {
        TileOrder::Strided(s) => ptr_or_null(s),
        _ => null(),
    }
}

fn levels(t: &Tiling) -> Vec<HurrayTileLevelView> {
    let mut out = Vec::new();
    let mut cur = Some(t);
    while let Some(l) = cur {
        out.push(HurrayTileLevelView {
            tile_shape: ptr_or_null(&l.tile_shape),
            outer_strides: strides_of(&l.outer),
            inner_strides: strides_of(&l.inner),
            outer_order: order_tag(&l.outer),
            inner_order: order_tag(&l.inner),
        });
        cur = match &l.inner {
            TileOrder::Tiled(next) => Some(next),
            _ => None,
        };
    }
    out
}

impl ViewStore {
    /// Builds the view of `m` and `header`; `m` must outlive the store (the
    /// descriptor holds both).
    pub(crate) fn new(m: &TensorDescriptor, header: HurrayDescriptorHeader) -> ViewStore {
        let buffers: Vec<HurrayBufferEntry> =
            m.buffers.iter().map(HurrayBufferEntry::from).collect();
        let tiling = match &m.layout {
            Layout::Tiled(t) => levels(t),
            _ => Vec::new(),
        };
        let (bp, bp_ptr) = boxed(match &m.layout {
            Layout::BlockPaged(p) => Some(HurrayBlockPaged::from(p)),
            _ => None,
        });
        let (ch, ch_ptr) = boxed(match &m.layout {
            Layout::CompositeHead(h) => Some(HurrayCompositeHead::from(h)),
            _ => None,
        });
        let (q, q_ptr) = boxed(m.quantization.as_ref().map(HurrayQuantization::from));
        let trailing = m
            .quantization
            .as_ref()
            .map(quantization_trailing)
            .unwrap_or_default();
        let (st, st_ptr) = boxed(m.statistics.as_ref().map(HurrayStatistics::from));
        let (et, et_ptr) = boxed(m.extension_type.as_ref().map(HurrayExtensionType::from));
        let mut view = HurrayDescriptorView {
            header,
            shape: ptr_or_null(&m.shape),
            buffers: ptr_or_null(&buffers),
            strides: null(),
            tiling_depth: tiling.len() as u32,
            tiling: ptr_or_null(&tiling),
            morton_bits: null(),
            nnz: 0,
            coo_is_sorted: 0,
            csf_mode_order: null(),
            block_paged: bp_ptr,
            composite_head: ch_ptr,
            hilbert_order: 0,
            hilbert_rank: 0,
            extension_layout_id: 0,
            extension_layout_data: null(),
            extension_layout_data_len: 0,
            quantization: q_ptr,
            quantization_trailing: ptr_or_null(&trailing),
            quantization_trailing_len: trailing.len() as u64,
            shard_parent_shape: null(),
            shard_offset: null(),
            statistics: st_ptr,
            extension_type: et_ptr,
            has_member_role: u8::from(m.composite_member.is_some()),
            member_role: m.composite_member.map_or(0, |r| r as u8),
        };
        match &m.layout {
            Layout::Strided { strides } => view.strides = ptr_or_null(strides),
            Layout::Morton { bits } => view.morton_bits = ptr_or_null(bits),
            Layout::Coo { nnz, is_sorted } => {
                view.nnz = *nnz;
                view.coo_is_sorted = u8::from(*is_sorted);
            }
            Layout::Csr { nnz } | Layout::Csc { nnz } => view.nnz = *nnz,
            Layout::Csf { nnz, mode_order } => {
                view.nnz = *nnz;
                view.csf_mode_order = ptr_or_null(mode_order);
            }
            Layout::Hilbert { order, rank } => {
                view.hilbert_order = *order;
                view.hilbert_rank = *rank;
            }
            Layout::Extension { id, data, .. } => {
                view.extension_layout_id = *id;
                view.extension_layout_data = ptr_or_null(data);
                view.extension_layout_data_len = data.len() as u64;
            }
            _ => {}
        }
        if let Some(s) = &m.shard {
            view.shard_parent_shape = ptr_or_null(&s.parent_shape);
            view.shard_offset = ptr_or_null(&s.offset);
        }
        ViewStore {
            view,
            _buffers: buffers,
            _tiling: tiling,
            _block_paged: bp,
            _composite_head: ch,
            _quantization: q,
            _trailing: trailing,
            _statistics: st,
            _extension_type: et,
        }
    }

    /// The view.
    pub(crate) fn view(&self) -> &HurrayDescriptorView {
        &self.view
    }
}

/// Borrows the whole descriptor as one [`HurrayDescriptorView`]: header, shape,
/// buffer table, the layout's fields and every optional section, with arrays as
/// pointers into the descriptor (see the struct for which fields apply): a
/// descriptor is read in one call. `hurray_descriptor_from_view` builds one from the
/// same struct.
///
/// Errors: `HURRAY_ERR_NULL_POINTER`; `HURRAY_ERR_ABI_VERSION`;
/// `HURRAY_ERR_INVALID_ARGUMENT` (not a descriptor, or one made by another copy of
/// the library: decode its `encoded` bytes with `hurray_descriptor_decode` to get one
/// of this copy).
///
/// Ownership: `*out` borrowed, valid (and unchanged) until the descriptor is destroyed.
///
/// # Safety
/// `descriptor` NULL or a live descriptor; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn hurray_descriptor_view(
    descriptor: *const HurrayDescriptor,
    out: *mut *const HurrayDescriptorView,
) -> HurrayStatus {
    boundary(|| {
        need(out, "out")?;
        // SAFETY: forwarded.
        let d = unsafe { handle::own(descriptor, "descriptor")? };
        let v: *const HurrayDescriptorView = d.view();
        // SAFETY: checked non-null.
        unsafe { put(out, "out", v) }
    })
}

// ---------------------------------------------------------------- view -> descriptor

fn bad(msg: String) -> FfiError {
    FfiError::new(HURRAY_ERR_INVALID_ARGUMENT, msg)
}

/// `view->field`: `n` values at `p` (NULL allowed only when `n` is 0).
///
/// # Safety
/// `p` NULL or valid for `n` reads.
unsafe fn vec_in<T: Copy>(p: *const T, n: u64, field: &str) -> FfiResult<Vec<T>> {
    // SAFETY: forwarded.
    Ok(unsafe { slice_in(p, n, &format!("view->{field}"))? }.to_vec())
}

/// A required section: the struct `p` points at.
///
/// # Safety
/// `p` NULL or readable.
unsafe fn section_in<T: Copy>(p: *const T, field: &str, layout: &str) -> FfiResult<T> {
    // SAFETY: NULL is reported; otherwise readable per the caller.
    unsafe { p.as_ref() }.copied().ok_or_else(|| {
        FfiError::new(
            HURRAY_ERR_NULL_POINTER,
            format!("view->{field} is NULL; the {layout} layout needs it"),
        )
    })
}

/// A tile order from its byte; `None` for `HURRAY_TILE_ORDER_TILED` (allowed only
/// as an inner order: the next level follows).
///
/// # Safety
/// `strides` NULL or valid for `rank` reads.
unsafe fn order_in(
    v: u8,
    strides: *const i64,
    rank: usize,
    field: &str,
    inner: bool,
) -> FfiResult<Option<TileOrder>> {
    Ok(Some(match v {
        1 => TileOrder::RowMajor,
        2 => TileOrder::ColumnMajor,
        // SAFETY: forwarded: rank readable values when the order is strided.
        3 => TileOrder::Strided(unsafe { vec_in(strides, rank as u64, field)? }),
        4 if inner => return Ok(None),
        v => {
            let allowed = if inner { "1, 2, 3 or 4" } else { "1, 2 or 3" };
            return Err(bad(format!(
                "view->{field}: order {v} is not {allowed} (layouts.md §2.4)"
            )));
        }
    }))
}

/// The tiling of `depth` levels at `levels`, outermost first: every level but the
/// last has inner order TILED, the last does not.
///
/// # Safety
/// `levels` NULL or valid for `depth` reads, each level's arrays for `rank` reads.
unsafe fn tiling_in(
    levels: *const HurrayTileLevelView,
    depth: u32,
    rank: usize,
) -> FfiResult<Tiling> {
    if depth == 0 || depth > u32::from(DEFAULT_MAX_TILING_DEPTH) {
        return Err(bad(format!(
            "view->tiling_depth is {depth}; a tiled layout has 1 to {DEFAULT_MAX_TILING_DEPTH} levels"
        )));
    }
    // SAFETY: forwarded.
    let levels = unsafe { slice_in(levels, u64::from(depth), "view->tiling")? };
    let mut inner_most: Option<Tiling> = None;
    for (k, l) in levels.iter().enumerate().rev() {
        let last = k + 1 == levels.len();
        // SAFETY: forwarded (rank values per array the order needs).
        let tile_shape = unsafe {
            vec_in(
                l.tile_shape,
                rank as u64,
                &format!("tiling[{k}].tile_shape"),
            )?
        };
        // SAFETY: as above.
        let outer = unsafe {
            order_in(
                l.outer_order,
                l.outer_strides,
                rank,
                &format!("tiling[{k}].outer_strides"),
                false,
            )?
        }
        .ok_or_else(|| bad(format!("view->tiling[{k}].outer_order is TILED")))?;
        // SAFETY: as above.
        let inner = unsafe {
            order_in(
                l.inner_order,
                l.inner_strides,
                rank,
                &format!("tiling[{k}].inner_strides"),
                true,
            )?
        };
        let inner = match (inner, last) {
            (Some(o), true) => o,
            (None, false) => TileOrder::Tiled(Box::new(
                inner_most.take().expect("a deeper level was read"),
            )),
            (None, true) => {
                return Err(bad(format!(
                    "view->tiling[{k}].inner_order is TILED but it is the last of {depth} levels"
                )))
            }
            (Some(_), false) => {
                return Err(bad(format!(
                    "view->tiling[{k}].inner_order must be TILED (4): level {} follows",
                    k + 1
                )))
            }
        };
        inner_most = Some(Tiling {
            tile_shape,
            outer,
            inner,
        });
    }
    Ok(inner_most.expect("depth >= 1"))
}

/// The layout's name as every language renders it (`"csr"`, `"private(0xf3)"`).
fn layout_name(t: u8) -> &'static str {
    hurray_core::tables::layout_name(t)
}

/// Refuses layout fields that are set although the view's layout does not have them
/// (a view from `hurray_descriptor_view`, or a zeroed struct, never has any).
fn no_foreign_fields(v: &HurrayDescriptorView) -> FfiResult<()> {
    let t = v.header.layout_tag;
    let ext = (0xF0..=0xFE).contains(&t);
    let fields: [(&str, bool, bool); 11] = [
        ("strides", !v.strides.is_null(), t == tag::STRIDED),
        (
            "tiling",
            v.tiling_depth != 0 || !v.tiling.is_null(),
            t == tag::TILED,
        ),
        ("morton_bits", !v.morton_bits.is_null(), t == tag::MORTON),
        (
            "nnz",
            v.nnz != 0,
            matches!(t, tag::COO | tag::CSR | tag::CSC | tag::CSF),
        ),
        ("coo_is_sorted", v.coo_is_sorted != 0, t == tag::COO),
        ("csf_mode_order", !v.csf_mode_order.is_null(), t == tag::CSF),
        (
            "block_paged",
            !v.block_paged.is_null(),
            t == tag::BLOCK_PAGED,
        ),
        (
            "composite_head",
            !v.composite_head.is_null(),
            t == tag::COMPOSITE_HEAD,
        ),
        (
            "hilbert_order",
            v.hilbert_order != 0 || v.hilbert_rank != 0,
            t == tag::HILBERT,
        ),
        (
            "extension_layout_id",
            v.extension_layout_id != 0 || v.extension_layout_data_len != 0,
            ext,
        ),
        (
            "extension_layout_data",
            !v.extension_layout_data.is_null(),
            ext,
        ),
    ];
    for (name, set, applies) in fields {
        if set && !applies {
            return Err(bad(format!(
                "view->{name} is set but the {} layout ({t:#04x}) has no such field",
                layout_name(t)
            )));
        }
    }
    Ok(())
}

/// The layout the view describes.
///
/// # Safety
/// Every non-NULL pointer of `v` valid for the reads its field documents.
unsafe fn layout_in(v: &HurrayDescriptorView, rank: usize) -> FfiResult<Layout> {
    let r = rank as u64;
    let name = layout_name(v.header.layout_tag);
    // SAFETY (every block below): the caller guarantees the arrays and structs.
    Ok(match v.header.layout_tag {
        tag::ROW_MAJOR => Layout::RowMajor,
        tag::COLUMN_MAJOR => Layout::ColumnMajor,
        tag::STRIDED => Layout::Strided {
            // SAFETY: see above.
            strides: unsafe { vec_in(v.strides, r, "strides")? },
        },
        // SAFETY: see above.
        tag::TILED => Layout::Tiled(unsafe { tiling_in(v.tiling, v.tiling_depth, rank)? }),
        tag::MORTON => Layout::Morton {
            // SAFETY: see above.
            bits: unsafe { vec_in(v.morton_bits, r, "morton_bits")? },
        },
        tag::COO => Layout::Coo {
            nnz: v.nnz,
            is_sorted: match v.coo_is_sorted {
                0 => false,
                1 => true,
                s => return Err(bad(format!("view->coo_is_sorted is {s}, not 0 or 1"))),
            },
        },
        tag::CSR => Layout::Csr { nnz: v.nnz },
        tag::CSC => Layout::Csc { nnz: v.nnz },
        tag::CSF => Layout::Csf {
            nnz: v.nnz,
            // SAFETY: see above.
            mode_order: unsafe { vec_in(v.csf_mode_order, r, "csf_mode_order")? },
        },
        tag::BLOCK_PAGED => {
            // SAFETY: see above.
            Layout::BlockPaged(
                unsafe { section_in(v.block_paged, "block_paged", name)? }.to_model()?,
            )
        }
        tag::COMPOSITE_HEAD => Layout::CompositeHead(
            // SAFETY: see above.
            unsafe { section_in(v.composite_head, "composite_head", name)? }.to_model()?,
        ),
        tag::HILBERT => Layout::Hilbert {
            order: v.hilbert_order,
            rank: v.hilbert_rank,
        },
        t @ 0xF0..=0xFE => {
            if v.extension_layout_data_len > u64::from(u32::MAX) {
                return Err(bad(format!(
                    "view->extension_layout_data_len {} exceeds the u32 length field",
                    v.extension_layout_data_len
                )));
            }
            Layout::Extension {
                tag: t,
                id: v.extension_layout_id,
                // SAFETY: see above.
                data: unsafe {
                    vec_in(
                        v.extension_layout_data,
                        v.extension_layout_data_len,
                        "extension_layout_data",
                    )?
                },
            }
        }
        t => {
            return Err(bad(format!(
                "view->header.layout_tag {t:#04x} is not an assigned or extension layout"
            )))
        }
    })
}

/// The descriptor model a view describes, before the spec's rules are checked
/// (`HurrayDescriptor::new` checks them). Output-only header fields
/// (`descriptor_length`) are ignored; `flags` must be 0 or what the sections imply.
///
/// # Safety
/// Every non-NULL pointer of `v` valid for the reads its field documents.
pub(crate) unsafe fn model_from_view(v: &HurrayDescriptorView) -> FfiResult<TensorDescriptor> {
    let h = &v.header;
    if h.version_major != 0 && h.version_major != hurray_core::VERSION_MAJOR {
        return Err(bad(format!(
            "view->header.version_major is {}; this library writes {}",
            h.version_major,
            hurray_core::VERSION_MAJOR
        )));
    }
    if h.version_minor > hurray_core::VERSION_MINOR {
        return Err(bad(format!(
            "view->header.version_minor is {}; this library writes at most {}",
            h.version_minor,
            hurray_core::VERSION_MINOR
        )));
    }
    let element_type = element_type_in(h.type_tag)?;
    // SAFETY: forwarded.
    let shape = unsafe { shape_in(v.shape, h.rank)? };
    let rank = shape.len();
    if h.buffer_count > 255 {
        return Err(bad(format!(
            "view->header.buffer_count is {}; a descriptor holds at most 255 buffers",
            h.buffer_count
        )));
    }
    // SAFETY: forwarded.
    let buffers = unsafe { slice_in(v.buffers, u64::from(h.buffer_count), "view->buffers")? }
        .iter()
        .map(|e| e.to_model())
        .collect::<FfiResult<Vec<_>>>()?;
    no_foreign_fields(v)?;
    // SAFETY: forwarded.
    let layout = unsafe { layout_in(v, rank)? };
    let quantization = match v.quantization.is_null() {
        true if v.quantization_trailing_len != 0 => {
            return Err(bad(
                "view->quantization_trailing_len is set but view->quantization is NULL".into(),
            ))
        }
        true => None,
        false => {
            if v.quantization_trailing_len > u64::from(u32::MAX) - 64 {
                return Err(bad(format!(
                    "view->quantization_trailing_len {} overflows quantization_length",
                    v.quantization_trailing_len
                )));
            }
            // SAFETY: forwarded.
            let (q, trailing) = unsafe {
                (
                    *v.quantization,
                    slice_in(
                        v.quantization_trailing,
                        v.quantization_trailing_len,
                        "view->quantization_trailing",
                    )?,
                )
            };
            Some(q.to_model(trailing)?)
        }
    };
    let shard = match (v.shard_parent_shape.is_null(), v.shard_offset.is_null()) {
        (true, true) => None,
        // SAFETY: forwarded.
        (false, false) => Some(Shard {
            parent_shape: unsafe {
                vec_in(v.shard_parent_shape, rank as u64, "shard_parent_shape")?
            },
            // SAFETY: forwarded.
            offset: unsafe { vec_in(v.shard_offset, rank as u64, "shard_offset")? },
        }),
        (p, _) => {
            let (set, unset) = if p {
                ("shard_offset", "shard_parent_shape")
            } else {
                ("shard_parent_shape", "shard_offset")
            };
            return Err(bad(format!(
                "view->{set} is set but view->{unset} is NULL (a shard section needs both)"
            )));
        }
    };
    // SAFETY: forwarded: NULL or readable.
    let statistics = unsafe { v.statistics.as_ref() }.map(|s| s.to_model());
    // SAFETY: forwarded: NULL or readable.
    let extension_type = match unsafe { v.extension_type.as_ref() } {
        Some(e) => Some(e.to_model()?),
        None => None,
    };
    let composite_member = match v.has_member_role {
        0 if v.member_role != 0 => {
            return Err(bad(format!(
                "view->member_role is {} but view->has_member_role is 0",
                v.member_role
            )))
        }
        0 => None,
        1 => Some(member_role_in(v.member_role)?),
        s => return Err(bad(format!("view->has_member_role is {s}, not 0 or 1"))),
    };
    let m = TensorDescriptor {
        version_minor: h.version_minor,
        element_type,
        shape,
        byte_offset: h.byte_offset,
        layout,
        buffers,
        quantization,
        shard,
        statistics,
        extension_type,
        composite_member,
    };
    if h.flags != 0 && h.flags != m.flags() {
        return Err(bad(format!(
            "view->header.flags is {:#x} but the view's sections give {:#x} (0 means: derive them)",
            h.flags,
            m.flags()
        )));
    }
    Ok(m)
}

/// Builds and validates a descriptor from a [`HurrayDescriptorView`]: the same
/// struct `hurray_descriptor_view` returns, so a view read from one descriptor
/// builds the same descriptor again (byte-identical encoding). Arrays are borrowed
/// for the call only and copied; their lengths follow from the header as
/// documented on the struct (`rank`, `buffer_count`, `tiling_depth`). Only the
/// fields of `header.layout_tag` are read; the others must be NULL or 0. Optional
/// sections are present when their pointer is non-NULL (shard: both arrays;
/// composite member: `has_member_role` = 1). `header.descriptor_length` is
/// ignored; `header.flags` may be 0 (derived from the sections) or must equal what
/// they imply; `header.version_major` may be 0 or 1. For the assigned quantization
/// schemes `scheme_version` and `flags` are ignored (written as 1 and as implied by
/// `zero_point_buffer_index`; `HURRAY_NO_BUFFER` means symmetric).
///
/// Errors: `HURRAY_ERR_NULL_POINTER` (`view`, `out`, an array with a non-zero length,
/// the block-paged or composite-head fields of such a layout);
/// `HURRAY_ERR_INVALID_ARGUMENT` (an unassigned tag, a value out of its range, a
/// field or flag that contradicts the layout or sections, `rank` > 64, more than 255
/// buffers or 8 tiling levels; the message names the field);
/// `HURRAY_ERR_INVALID_SYNC_MODE` (a reserved sync mode); `HURRAY_ERR_DESCRIPTOR` (a
/// rule of the spec is broken; the message names the rule and the byte offset in
/// the encoding).
///
/// Ownership: `*out` owned; destroy with `hurray_descriptor_destroy`. Nothing of
/// `view` is retained.
///
/// # Safety
/// `view` NULL or readable, each of its non-NULL pointers valid for the reads its
/// field documents; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn hurray_descriptor_from_view(
    view: *const HurrayDescriptorView,
    out: *mut *mut HurrayDescriptor,
) -> HurrayStatus {
    boundary(|| {
        need(out, "out")?;
        // SAFETY: NULL is reported; otherwise readable per the caller.
        let v = unsafe { view.as_ref() }.ok_or_else(|| FfiError::null("view"))?;
        // SAFETY: forwarded.
        let model = unsafe { model_from_view(v)? };
        let d = HurrayDescriptor::new(Arc::new(model))?;
        // SAFETY: out checked non-null.
        unsafe { put(out, "out", handle::into_raw(d)) }
    })
}
