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

use crate::descriptor::HurrayDescriptor;
use crate::descriptor_access::{
    quantization_trailing, HurrayBlockPaged, HurrayBufferEntry, HurrayCompositeHead,
    HurrayDescriptorHeader, HurrayExtensionType, HurrayQuantization, HurrayStatistics,
};
use crate::handle;
use crate::status::*;
use hurray_core::layout::TileOrder;
use hurray_core::{Layout, TensorDescriptor, Tiling};
use std::ptr::null;

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
/// pointers into the descriptor (see the struct for which fields apply). One call
/// replaces the per-field `hurray_descriptor_*` accessors for readers of this build.
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
