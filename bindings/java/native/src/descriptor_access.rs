//! Packs a decoded descriptor into the `long[]` that `Descriptor.java` reads, from
//! the descriptor's hurray-core model (`HurrayDescriptor::model`) and the library's
//! data-shaped section structs (`HurrayQuantization::from(&Quantization)`, ...). No
//! C call, no re-decoding, no raw pointer: one pass over the model.

use hurray_core::{Layout, MemberRole, TileOrder, Tiling, VERSION_MAJOR};
use hurray_ffi::{
    HurrayBlockPaged, HurrayBufferEntry, HurrayCompositeHead, HurrayDescriptor, HurrayQuantization,
    HurrayStatistics,
};

/// `v`, each value's bits as a Java `long` (u64 reinterpreted).
fn longs<T: Copy + Into<u64>>(v: &[T]) -> impl Iterator<Item = i64> + '_ {
    v.iter().map(|&x| x.into() as i64)
}

/// Packs `d` for `Descriptor.java`, in the order it reads: header, shape, buffer
/// table, then strides, nnz, quantization, statistics, COO sortedness, composite
/// head, member role and shard (each behind a present flag, with zeros in place of
/// an absent fixed-size section), then the layout-specific fields
/// ([`layout_fields`]) behind their count. Values are `long`s (u64 reinterpreted,
/// floats as their bits).
pub(crate) fn pack(d: &HurrayDescriptor) -> Vec<i64> {
    let m = d.model();
    let rank = m.shape.len();
    let mut out = vec![
        i64::from(VERSION_MAJOR),
        i64::from(m.version_minor),
        i64::from(m.element_type.tag()),
        i64::from(m.layout.tag()),
        i64::from(m.flags()),
        rank as i64,
        m.buffers.len() as i64,
        m.byte_offset as i64,
        d.bytes().len() as i64,
    ];
    out.extend(longs(&m.shape));
    for e in m.buffers.iter().map(HurrayBufferEntry::from) {
        out.extend([
            e.byte_size as i64,
            i64::from(e.alignment),
            i64::from(e.device_tag),
            i64::from(e.sync_mode),
            i64::from(e.memory_class),
        ]);
    }
    match &m.layout {
        Layout::Strided { strides } => {
            out.push(1);
            out.extend(strides);
        }
        _ => out.push(0),
    }
    match &m.layout {
        Layout::Coo { nnz, .. }
        | Layout::Csr { nnz }
        | Layout::Csc { nnz }
        | Layout::Csf { nnz, .. } => out.extend([1, *nnz as i64]),
        _ => out.extend([0, 0]),
    }
    match m.quantization.as_ref().map(HurrayQuantization::from) {
        Some(q) => out.extend([
            1,
            i64::from(q.scheme_tag),
            i64::from(q.scale.to_bits()),
            i64::from(q.zero_point),
            i64::from(q.axis),
            i64::from(q.block_size),
            i64::from(q.scale_buffer_index),
            i64::from(q.zero_point_buffer_index),
            i64::from(q.scale_type_tag),
            i64::from(q.flags),
        ]),
        None => out.extend([0; 10]),
    }
    match m.statistics.as_ref().map(HurrayStatistics::from) {
        Some(st) => out.extend([
            1,
            i64::from(st.computed_mask),
            st.nnz as i64,
            st.sparsity_ratio.to_bits() as i64,
            st.value_min.to_bits() as i64,
            st.value_max.to_bits() as i64,
            st.value_abs_max.to_bits() as i64,
            st.value_mean.to_bits() as i64,
            st.value_stddev.to_bits() as i64,
            i64::from(st.nm_n),
            i64::from(st.nm_m),
            i64::from(st.has_nan),
            i64::from(st.has_inf),
        ]),
        None => out.extend([0; 13]),
    }
    match &m.layout {
        Layout::Coo { is_sorted, .. } => out.extend([1, i64::from(*is_sorted)]),
        _ => out.extend([0, 0]),
    }
    match &m.layout {
        Layout::CompositeHead(h) => {
            let c = HurrayCompositeHead::from(h);
            out.extend([
                1,
                i64::from(c.member_count),
                i64::from(c.composition_rule),
                i64::from(c.combine_op),
            ]);
        }
        _ => out.extend([0; 4]),
    }
    match m.composite_member {
        Some(MemberRole::Correction) => out.extend([1, 0]),
        Some(MemberRole::Base) => out.extend([1, 1]),
        None => out.extend([0, 0]),
    }
    match &m.shard {
        Some(s) => {
            out.push(1);
            out.extend(longs(&s.parent_shape));
            out.extend(longs(&s.offset));
        }
        None => out.push(0),
    }
    let extra = layout_fields(&m.layout, rank);
    out.push(extra.len() as i64);
    out.extend(extra);
    out
}

/// The byte of a tile order (`TILED` 4: the next level is the tile's own tiling) and
/// its strides (`rank` zeros unless strided).
fn order(o: &TileOrder, rank: usize) -> (i64, Vec<i64>) {
    match o {
        TileOrder::RowMajor => (1, vec![0; rank]),
        TileOrder::ColumnMajor => (2, vec![0; rank]),
        TileOrder::Strided(s) => (3, s.clone()),
        TileOrder::Tiled(_) => (4, vec![0; rank]),
    }
}

/// The layout-specific fields, in the order `Descriptor.java` reads them:
/// tiled: depth, then per level outer order, inner order, tile shape (rank), outer
/// strides (rank), inner strides (rank; zeros where the order has none); Morton: bits
/// (rank); Hilbert: order, curve rank; CSF: mode order (rank); block-paged: num_pages,
/// page_size, paged_axis, num_seqs, layer_index, kv_role, index type. Else empty.
fn layout_fields(layout: &Layout, rank: usize) -> Vec<i64> {
    let mut out = Vec::new();
    match layout {
        Layout::Tiled(t) => {
            let mut levels: Vec<&Tiling> = vec![t];
            while let TileOrder::Tiled(next) = &levels[levels.len() - 1].inner {
                levels.push(next);
            }
            out.push(levels.len() as i64);
            for l in levels {
                let (outer, outer_strides) = order(&l.outer, rank);
                let (inner, inner_strides) = order(&l.inner, rank);
                out.extend([outer, inner]);
                out.extend(longs(&l.tile_shape));
                out.extend(outer_strides);
                out.extend(inner_strides);
            }
        }
        Layout::Morton { bits } => out.extend(longs(bits)),
        Layout::Hilbert { order, rank } => out.extend([i64::from(*order), i64::from(*rank)]),
        Layout::Csf { mode_order, .. } => out.extend(longs(mode_order)),
        Layout::BlockPaged(b) => {
            let b = HurrayBlockPaged::from(b);
            out.extend([
                b.num_pages as i64,
                i64::from(b.page_size),
                i64::from(b.paged_axis),
                i64::from(b.num_seqs),
                i64::from(b.layer_index),
                i64::from(b.kv_role),
                i64::from(b.block_table_index_type),
            ]);
        }
        _ => {}
    }
    out
}
