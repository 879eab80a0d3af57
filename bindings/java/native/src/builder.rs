//! The descriptor builder (`Native.descriptorBuild`): Java's fields in, an encoded,
//! validated descriptor out.

use std::ptr;

use hurray_ffi::builder::{
    hurray_descriptor_builder_add_buffer, hurray_descriptor_builder_destroy,
    hurray_descriptor_builder_finish, hurray_descriptor_builder_new,
    hurray_descriptor_builder_push_tiling_level, hurray_descriptor_builder_set_block_paged,
    hurray_descriptor_builder_set_byte_offset, hurray_descriptor_builder_set_composite_head,
    hurray_descriptor_builder_set_coo_is_sorted, hurray_descriptor_builder_set_csf_mode_order,
    hurray_descriptor_builder_set_hilbert, hurray_descriptor_builder_set_member_role,
    hurray_descriptor_builder_set_morton_bits, hurray_descriptor_builder_set_nnz,
    hurray_descriptor_builder_set_quantization, hurray_descriptor_builder_set_shard,
    hurray_descriptor_builder_set_statistics, hurray_descriptor_builder_set_strides,
};
use hurray_ffi::{
    HurrayBlockPaged, HurrayBufferEntry, HurrayCompositeHead, HurrayDescriptorBuilder,
    HurrayQuantization, HurrayStatistics,
};
use jni::objects::{JClass, JLongArray};
use jni::sys::{jbyteArray, jint, jlong};
use jni::JNIEnv;

use crate::convert::longs;
use crate::descriptor::{encode, Desc};
use crate::errors::{ck, run, Fail, R};

/// Applies [`layout_fields`](crate::descriptor_access::layout_fields)-shaped values to a builder.
fn set_layout_fields(b: *mut HurrayDescriptorBuilder, layout: u8, rank: usize, v: &[i64]) -> R<()> {
    let short = || Fail::Arg("too few layout fields".into());
    match layout {
        4 => {
            let depth = *v.first().ok_or_else(short)? as usize;
            let per = 2 + 3 * rank;
            if v.len() != 1 + depth * per {
                return Err(short());
            }
            for level in 0..depth {
                let f = &v[1 + level * per..1 + (level + 1) * per];
                let shape: Vec<u64> = f[2..2 + rank].iter().map(|&x| x as u64).collect();
                let outer = &f[2 + rank..2 + 2 * rank];
                let inner = &f[2 + 2 * rank..2 + 3 * rank];
                // SAFETY: b live; every array holds rank readable values.
                ck(unsafe {
                    hurray_descriptor_builder_push_tiling_level(
                        b,
                        shape.as_ptr(),
                        f[0] as u8,
                        outer.as_ptr(),
                        f[1] as u8,
                        inner.as_ptr(),
                    )
                })?;
            }
        }
        5 => {
            let bits: Vec<u32> = v.iter().map(|&x| x as u32).collect();
            // SAFETY: b live; bits readable.
            ck(unsafe {
                hurray_descriptor_builder_set_morton_bits(b, bits.as_ptr(), bits.len() as u64)
            })?;
        }
        64 => {
            if v.len() != 2 {
                return Err(short());
            }
            // SAFETY: b live.
            ck(unsafe { hurray_descriptor_builder_set_hilbert(b, v[0] as u32, v[1] as u32) })?;
        }
        9 => {
            let m: Vec<u32> = v.iter().map(|&x| x as u32).collect();
            // SAFETY: b live; m readable.
            ck(unsafe {
                hurray_descriptor_builder_set_csf_mode_order(b, m.as_ptr(), m.len() as u64)
            })?;
        }
        10 => {
            if v.len() != 7 {
                return Err(short());
            }
            let f = HurrayBlockPaged {
                num_pages: v[0] as u64,
                page_size: v[1] as u32,
                paged_axis: v[2] as u32,
                num_seqs: v[3] as u32,
                layer_index: v[4] as u32,
                kv_role: v[5] as u8,
                block_table_index_type: v[6] as u8,
            };
            // SAFETY: b live; f readable.
            ck(unsafe { hurray_descriptor_builder_set_block_paged(b, &f) })?;
        }
        _ => {
            if !v.is_empty() {
                return Err(Fail::Arg(format!("layout {layout} takes no layout fields")));
            }
        }
    }
    Ok(())
}

/// An owned builder handle, destroyed on drop.
struct Builder(*mut HurrayDescriptorBuilder);

impl Drop for Builder {
    fn drop(&mut self) {
        // SAFETY: self.0 is NULL or an owned builder.
        unsafe { hurray_descriptor_builder_destroy(&mut self.0) };
    }
}

/// `Native.descriptorBuild(...)`: the descriptor builder of the C ABI. `strides`
/// null: none; `nnz` < 0: none; `cooSorted` < 0: unset; `bufSizes`/`bufAligns`/
/// `bufMemory` the buffer table (CPU, producer-synced); `quant` null or the 8 fields
/// of a quantization section; `stats` null or the 12 fields of a statistics section
/// (doubles as IEEE bits). Returns the encoded, validated descriptor.
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_descriptorBuild<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass,
    type_tag: jint,
    layout_tag: jint,
    shape: JLongArray<'l>,
    strides: JLongArray<'l>,
    byte_offset: jlong,
    nnz: jlong,
    coo_sorted: jint,
    buf_sizes: JLongArray<'l>,
    buf_aligns: JLongArray<'l>,
    buf_memory: JLongArray<'l>,
    quant: JLongArray<'l>,
    stats: JLongArray<'l>,
    composite: JLongArray<'l>,
    member_role: jint,
    shard_parent: JLongArray<'l>,
    shard_offset: JLongArray<'l>,
    layout_fields: JLongArray<'l>,
) -> jbyteArray {
    run(&mut env, ptr::null_mut(), |env| {
        let shape: Vec<u64> = longs(env, &shape)?.iter().map(|&x| x as u64).collect();
        let tag = u8::try_from(type_tag).map_err(|_| Fail::Arg(format!("type tag {type_tag}")))?;
        let layout =
            u8::try_from(layout_tag).map_err(|_| Fail::Arg(format!("layout tag {layout_tag}")))?;
        let mut b = Builder(ptr::null_mut());
        // SAFETY: shape holds rank readable values; b.0 is writable.
        ck(unsafe {
            hurray_descriptor_builder_new(tag, layout, shape.len() as u32, shape.as_ptr(), &mut b.0)
        })?;
        if byte_offset != 0 {
            // SAFETY: b.0 is a live builder.
            ck(unsafe { hurray_descriptor_builder_set_byte_offset(b.0, byte_offset as u64) })?;
        }
        if !strides.is_null() {
            let s = longs(env, &strides)?;
            // SAFETY: b.0 live; s holds s.len() readable values.
            ck(unsafe { hurray_descriptor_builder_set_strides(b.0, s.as_ptr(), s.len() as u64) })?;
        }
        if nnz >= 0 {
            // SAFETY: b.0 is a live builder.
            ck(unsafe { hurray_descriptor_builder_set_nnz(b.0, nnz as u64) })?;
        }
        if coo_sorted >= 0 {
            // SAFETY: b.0 is a live builder.
            ck(unsafe { hurray_descriptor_builder_set_coo_is_sorted(b.0, coo_sorted as u8) })?;
        }
        let sizes = longs(env, &buf_sizes)?;
        let aligns = longs(env, &buf_aligns)?;
        let memory = longs(env, &buf_memory)?;
        if sizes.len() != aligns.len() || sizes.len() != memory.len() {
            return Err(Fail::Arg(
                "buffer sizes, alignments and memory classes differ in length".into(),
            ));
        }
        for ((&size, &align), &mem) in sizes.iter().zip(&aligns).zip(&memory) {
            let e = HurrayBufferEntry {
                byte_size: size as u64,
                alignment: u32::try_from(align)
                    .map_err(|_| Fail::Arg(format!("alignment {align}")))?,
                memory_class: u8::try_from(mem)
                    .map_err(|_| Fail::Arg(format!("memory class {mem}")))?,
                ..HurrayBufferEntry::default()
            };
            // SAFETY: b.0 live; e readable.
            ck(unsafe { hurray_descriptor_builder_add_buffer(b.0, &e) })?;
        }
        if !quant.is_null() {
            // [scheme, scale bits, zero point, axis, block, scale buffer, zp buffer, scale type]
            let q = longs(env, &quant)?;
            if q.len() != 8 {
                return Err(Fail::Arg("quantization needs 8 fields".into()));
            }
            let q = HurrayQuantization {
                scheme_tag: q[0] as u8,
                scale: f32::from_bits(q[1] as u32),
                zero_point: q[2] as i32,
                axis: q[3] as u32,
                block_size: q[4] as u32,
                scale_buffer_index: q[5] as u32,
                zero_point_buffer_index: q[6] as u32,
                scale_type_tag: q[7] as u8,
                ..HurrayQuantization::default()
            };
            // SAFETY: b.0 live; q readable; no trailing bytes.
            ck(unsafe { hurray_descriptor_builder_set_quantization(b.0, &q, ptr::null(), 0) })?;
        }
        if !stats.is_null() {
            // [mask, nnz, sparsity, min, max, absmax, mean, stddev (f64 bits), nm_n, nm_m, nan, inf]
            let v = longs(env, &stats)?;
            if v.len() != 12 {
                return Err(Fail::Arg("statistics need 12 fields".into()));
            }
            let f = |i: usize| f64::from_bits(v[i] as u64);
            let st = HurrayStatistics {
                computed_mask: v[0] as u32,
                nnz: v[1] as u64,
                sparsity_ratio: f(2),
                value_min: f(3),
                value_max: f(4),
                value_abs_max: f(5),
                value_mean: f(6),
                value_stddev: f(7),
                nm_n: v[8] as u8,
                nm_m: v[9] as u8,
                has_nan: v[10] as u8,
                has_inf: v[11] as u8,
            };
            // SAFETY: b.0 live; st readable.
            ck(unsafe { hurray_descriptor_builder_set_statistics(b.0, &st) })?;
        }
        if !composite.is_null() {
            // [member count, composition rule, combine op]
            let c = longs(env, &composite)?;
            if c.len() != 3 {
                return Err(Fail::Arg("a composite head needs 3 fields".into()));
            }
            let head = HurrayCompositeHead {
                member_count: c[0] as u32,
                composition_rule: c[1] as u8,
                combine_op: c[2] as u8,
            };
            // SAFETY: b.0 live; head readable.
            ck(unsafe { hurray_descriptor_builder_set_composite_head(b.0, &head) })?;
        }
        if !layout_fields.is_null() {
            let v = longs(env, &layout_fields)?;
            set_layout_fields(b.0, layout, shape.len(), &v)?;
        }
        if !shard_parent.is_null() {
            let parent: Vec<u64> = longs(env, &shard_parent)?
                .iter()
                .map(|&x| x as u64)
                .collect();
            let offset: Vec<u64> = longs(env, &shard_offset)?
                .iter()
                .map(|&x| x as u64)
                .collect();
            if parent.len() != offset.len() {
                return Err(Fail::Arg(
                    "shard parent shape and offset differ in length".into(),
                ));
            }
            // SAFETY: b.0 live; both arrays hold len readable values.
            ck(unsafe {
                hurray_descriptor_builder_set_shard(
                    b.0,
                    parent.as_ptr(),
                    offset.as_ptr(),
                    parent.len() as u64,
                )
            })?;
        }
        if member_role >= 0 {
            // SAFETY: b.0 is a live builder.
            ck(unsafe { hurray_descriptor_builder_set_member_role(b.0, member_role as u8) })?;
        }
        let mut d = Desc(ptr::null_mut());
        // SAFETY: b.0 live; d.0 writable.
        ck(unsafe { hurray_descriptor_builder_finish(b.0, &mut d.0) })?;
        Ok(env.byte_array_from_slice(&encode(d.0)?)?.into_raw())
    })
}
