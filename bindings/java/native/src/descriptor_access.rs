//! Reads a decoded descriptor's fields into the `long[]` that `Descriptor.unpack`
//! (Java) reads.

use hurray_ffi::descriptor_access::{
    hurray_descriptor_block_paged, hurray_descriptor_composite_head,
    hurray_descriptor_coo_is_sorted, hurray_descriptor_csf_mode_order, hurray_descriptor_hilbert,
    hurray_descriptor_member_role, hurray_descriptor_morton_bits, hurray_descriptor_nnz,
    hurray_descriptor_quantization, hurray_descriptor_shape, hurray_descriptor_shard,
    hurray_descriptor_statistics, hurray_descriptor_strides, hurray_descriptor_tile_inner_strides,
    hurray_descriptor_tile_outer_strides, hurray_descriptor_tile_shape,
    hurray_descriptor_tiling_depth, hurray_descriptor_tiling_level,
};
use hurray_ffi::{
    HurrayBlockPaged, HurrayCompositeHead, HurrayDescriptor, HurrayQuantization, HurrayStatistics,
    HURRAY_OK,
};

use crate::convert::u64s_to_i64;
use crate::descriptor::{entry, header};
use crate::errors::{ck, R};

/// Packs a descriptor for `Descriptor.unpack` (Java): header, shape, buffer table,
/// strides, nnz and quantization, all as `long`s (u64 reinterpreted).
pub(crate) fn pack(d: *const HurrayDescriptor) -> R<Vec<i64>> {
    let h = header(d)?;
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
    let mut shape = vec![0u64; h.rank as usize];
    let mut n = 0u64;
    // SAFETY: shape holds rank writable values.
    ck(unsafe { hurray_descriptor_shape(d, shape.as_mut_ptr(), shape.len() as u64, &mut n) })?;
    out.extend(u64s_to_i64(&shape[..n as usize]));
    for i in 0..h.buffer_count {
        let e = entry(d, i)?;
        out.extend([
            e.byte_size as i64,
            i64::from(e.alignment),
            i64::from(e.device_tag),
            i64::from(e.sync_mode),
            i64::from(e.memory_class),
        ]);
    }
    let mut strides = vec![0i64; h.rank as usize];
    let mut sn = 0u64;
    // SAFETY: strides holds rank writable values.
    let s = unsafe {
        hurray_descriptor_strides(d, strides.as_mut_ptr(), strides.len() as u64, &mut sn)
    };
    if s == HURRAY_OK {
        out.push(1);
        out.extend(&strides[..sn as usize]);
    } else {
        out.push(0);
    }
    let mut nnz = 0u64;
    // SAFETY: nnz is writable.
    if unsafe { hurray_descriptor_nnz(d, &mut nnz) } == HURRAY_OK {
        out.extend([1, nnz as i64]);
    } else {
        out.extend([0, 0]);
    }
    let mut q = HurrayQuantization::default();
    // SAFETY: q is writable.
    if unsafe { hurray_descriptor_quantization(d, &mut q) } == HURRAY_OK {
        out.extend([
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
        ]);
    } else {
        out.extend([0; 10]);
    }
    let mut st = HurrayStatistics::default();
    // SAFETY: st is writable.
    if unsafe { hurray_descriptor_statistics(d, &mut st) } == HURRAY_OK {
        out.extend([
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
        ]);
    } else {
        out.extend([0; 13]);
    }
    let mut sorted = 0u8;
    // SAFETY: sorted is writable.
    if unsafe { hurray_descriptor_coo_is_sorted(d, &mut sorted) } == HURRAY_OK {
        out.extend([1, i64::from(sorted)]);
    } else {
        out.extend([0, 0]);
    }
    let mut head = HurrayCompositeHead::default();
    // SAFETY: head is writable.
    if unsafe { hurray_descriptor_composite_head(d, &mut head) } == HURRAY_OK {
        out.extend([
            1,
            i64::from(head.member_count),
            i64::from(head.composition_rule),
            i64::from(head.combine_op),
        ]);
    } else {
        out.extend([0; 4]);
    }
    let mut role = 0u8;
    // SAFETY: role is writable.
    if unsafe { hurray_descriptor_member_role(d, &mut role) } == HURRAY_OK {
        out.extend([1, i64::from(role)]);
    } else {
        out.extend([0, 0]);
    }
    let mut parent = vec![0u64; h.rank as usize];
    let mut offset = vec![0u64; h.rank as usize];
    let mut n = 0u64;
    // SAFETY: both arrays hold rank writable values.
    let s = unsafe {
        hurray_descriptor_shard(
            d,
            parent.as_mut_ptr(),
            offset.as_mut_ptr(),
            parent.len() as u64,
            &mut n,
        )
    };
    if s == HURRAY_OK {
        out.push(1);
        out.extend(u64s_to_i64(&parent[..n as usize]));
        out.extend(u64s_to_i64(&offset[..n as usize]));
    } else {
        out.push(0);
    }
    let extra = layout_fields(d, h.layout_tag, h.rank as usize)?;
    out.push(extra.len() as i64);
    out.extend(extra);
    Ok(out)
}

/// The layout-specific fields, in the order `Descriptor.java` reads them:
/// tiled: depth, then per level outer order, inner order, tile shape (rank), outer
/// strides (rank), inner strides (rank; zeros where the order has none); Morton: bits
/// (rank); Hilbert: order, curve rank; CSF: mode order (rank); block-paged: num_pages,
/// page_size, paged_axis, num_seqs, layer_index, kv_role, index type. Else empty.
pub(crate) fn layout_fields(d: *const HurrayDescriptor, layout: u8, rank: usize) -> R<Vec<i64>> {
    let mut out = Vec::new();
    let mut n = 0u64;
    match layout {
        4 => {
            let mut depth = 0u32;
            // SAFETY: depth writable.
            ck(unsafe { hurray_descriptor_tiling_depth(d, &mut depth) })?;
            out.push(i64::from(depth));
            for level in 0..depth {
                let (mut o, mut i) = (0u8, 0u8);
                // SAFETY: outs writable.
                ck(unsafe { hurray_descriptor_tiling_level(d, level, &mut o, &mut i) })?;
                out.extend([i64::from(o), i64::from(i)]);
                let mut shape = vec![0u64; rank];
                // SAFETY: shape holds rank writable values.
                ck(unsafe {
                    hurray_descriptor_tile_shape(d, level, shape.as_mut_ptr(), rank as u64, &mut n)
                })?;
                out.extend(u64s_to_i64(&shape));
                let mut outer = vec![0i64; rank];
                // SAFETY: outer holds rank writable values.
                if unsafe {
                    hurray_descriptor_tile_outer_strides(
                        d,
                        level,
                        outer.as_mut_ptr(),
                        rank as u64,
                        &mut n,
                    )
                } != HURRAY_OK
                {
                    outer.fill(0);
                }
                out.extend(&outer);
                let mut inner = vec![0i64; rank];
                // SAFETY: inner holds rank writable values.
                if unsafe {
                    hurray_descriptor_tile_inner_strides(
                        d,
                        level,
                        inner.as_mut_ptr(),
                        rank as u64,
                        &mut n,
                    )
                } != HURRAY_OK
                {
                    inner.fill(0);
                }
                out.extend(&inner);
            }
        }
        5 => {
            let mut bits = vec![0u32; rank];
            // SAFETY: bits holds rank writable values.
            ck(unsafe {
                hurray_descriptor_morton_bits(d, bits.as_mut_ptr(), rank as u64, &mut n)
            })?;
            out.extend(bits.iter().map(|&b| i64::from(b)));
        }
        64 => {
            let (mut order, mut r) = (0u32, 0u32);
            // SAFETY: outs writable.
            ck(unsafe { hurray_descriptor_hilbert(d, &mut order, &mut r) })?;
            out.extend([i64::from(order), i64::from(r)]);
        }
        9 => {
            let mut m = vec![0u32; rank];
            // SAFETY: m holds rank writable values.
            ck(unsafe {
                hurray_descriptor_csf_mode_order(d, m.as_mut_ptr(), rank as u64, &mut n)
            })?;
            out.extend(m.iter().map(|&b| i64::from(b)));
        }
        10 => {
            let mut b = HurrayBlockPaged::default();
            // SAFETY: b writable.
            ck(unsafe { hurray_descriptor_block_paged(d, &mut b) })?;
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
    Ok(out)
}
