//! Packs a decoded descriptor into the `long[]` that `Descriptor.java` reads, from
//! the descriptor's Rust face: its data-shaped view (`HurrayDescriptor::view`, built
//! once and kept with the descriptor) and its model. No C call, no re-decoding and no
//! error path per absent field: one pass over memory the descriptor already holds.

use hurray_ffi::descriptor_view::HurrayDescriptorView;
use hurray_ffi::tags::{
    HURRAY_LAYOUT_BLOCK_PAGED as BLOCK_PAGED, HURRAY_LAYOUT_COO as COO, HURRAY_LAYOUT_CSC as CSC,
    HURRAY_LAYOUT_CSF as CSF, HURRAY_LAYOUT_CSR as CSR, HURRAY_LAYOUT_HILBERT as HILBERT,
    HURRAY_LAYOUT_MORTON as MORTON, HURRAY_LAYOUT_STRIDED as STRIDED, HURRAY_LAYOUT_TILED as TILED,
};
use hurray_ffi::HurrayDescriptor;

/// `n` values at `p` (NULL when `n` is 0, per the view's contract).
///
/// # Safety
/// `p` is NULL or points at `n` readable values that live as long as `'a`.
unsafe fn slice<'a, T>(p: *const T, n: usize) -> &'a [T] {
    if p.is_null() || n == 0 {
        &[]
    } else {
        // SAFETY: per this function's contract.
        unsafe { std::slice::from_raw_parts(p, n) }
    }
}

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
    let v = d.view();
    let m = d.model();
    let h = &v.header;
    let rank = h.rank as usize;
    // SAFETY (every `slice` below): the view's pointers are NULL or point at the
    // lengths its field docs give (rank, buffer_count, tiling_depth), into `d`, which
    // outlives this function.
    let mut out = vec![
        i64::from(h.version_major),
        i64::from(h.version_minor),
        i64::from(h.type_tag),
        i64::from(h.layout_tag),
        i64::from(h.flags),
        i64::from(h.rank),
        i64::from(h.buffer_count),
        h.byte_offset as i64,
        i64::from(h.descriptor_length),
    ];
    out.extend(longs(unsafe { slice(v.shape, rank) }));
    for e in unsafe { slice(v.buffers, h.buffer_count as usize) } {
        out.extend([
            e.byte_size as i64,
            i64::from(e.alignment),
            i64::from(e.device_tag),
            i64::from(e.sync_mode),
            i64::from(e.memory_class),
        ]);
    }
    if h.layout_tag == STRIDED {
        out.push(1);
        out.extend(unsafe { slice(v.strides, rank) });
    } else {
        out.push(0);
    }
    match h.layout_tag {
        COO | CSR | CSC | CSF => out.extend([1, v.nnz as i64]),
        _ => out.extend([0, 0]),
    }
    match unsafe { v.quantization.as_ref() } {
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
    match unsafe { v.statistics.as_ref() } {
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
    if h.layout_tag == COO {
        out.extend([1, i64::from(v.coo_is_sorted)]);
    } else {
        out.extend([0, 0]);
    }
    match unsafe { v.composite_head.as_ref() } {
        Some(c) => out.extend([
            1,
            i64::from(c.member_count),
            i64::from(c.composition_rule),
            i64::from(c.combine_op),
        ]),
        None => out.extend([0; 4]),
    }
    out.extend([i64::from(v.has_member_role), i64::from(v.member_role)]);
    // The view cannot tell a rank-0 shard (two empty boxes) from none: ask the model.
    if m.shard.is_some() {
        out.push(1);
        out.extend(longs(unsafe { slice(v.shard_parent_shape, rank) }));
        out.extend(longs(unsafe { slice(v.shard_offset, rank) }));
    } else {
        out.push(0);
    }
    let extra = layout_fields(v);
    out.push(extra.len() as i64);
    out.extend(extra);
    out
}

/// The layout-specific fields, in the order `Descriptor.java` reads them:
/// tiled: depth, then per level outer order, inner order, tile shape (rank), outer
/// strides (rank), inner strides (rank; zeros where the order has none); Morton: bits
/// (rank); Hilbert: order, curve rank; CSF: mode order (rank); block-paged: num_pages,
/// page_size, paged_axis, num_seqs, layer_index, kv_role, index type. Else empty.
pub(crate) fn layout_fields(v: &HurrayDescriptorView) -> Vec<i64> {
    let rank = v.header.rank as usize;
    let mut out = Vec::new();
    // SAFETY (every `slice` below): as in `pack`; the view lives in its descriptor.
    match v.header.layout_tag {
        TILED => {
            out.push(i64::from(v.tiling_depth));
            for l in unsafe { slice(v.tiling, v.tiling_depth as usize) } {
                out.extend([i64::from(l.outer_order), i64::from(l.inner_order)]);
                out.extend(longs(unsafe { slice(l.tile_shape, rank) }));
                for strides in [l.outer_strides, l.inner_strides] {
                    let s = unsafe { slice(strides, rank) };
                    if s.is_empty() {
                        out.extend(std::iter::repeat_n(0, rank));
                    } else {
                        out.extend(s);
                    }
                }
            }
        }
        MORTON => out.extend(longs(unsafe { slice(v.morton_bits, rank) })),
        HILBERT => out.extend([i64::from(v.hilbert_order), i64::from(v.hilbert_rank)]),
        CSF => out.extend(longs(unsafe { slice(v.csf_mode_order, rank) })),
        BLOCK_PAGED => {
            if let Some(b) = unsafe { v.block_paged.as_ref() } {
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
        }
        _ => {}
    }
    out
}
