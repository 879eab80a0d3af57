//! The descriptor builder (`Native.descriptorBuild`): Java's fields in, a
//! `hurray_core::TensorDescriptor` built here, validated and encoded by
//! `HurrayDescriptor::new`.

use std::ptr;
use std::sync::Arc;

use hurray_core::{
    BlockPaged, BufferHandle, CombineOp, CompositeHead, CompositionRule, DeviceTag, IndexType,
    KvRole, Layout, MemberRole, MemoryClass, Quantization, ScaleType, Scheme, Shard, Statistics,
    SyncMode, TensorDescriptor, TileOrder, Tiling,
};
use hurray_ffi::tags::{
    HURRAY_LAYOUT_BLOCK_PAGED as BLOCK_PAGED, HURRAY_LAYOUT_COLUMN_MAJOR as COLUMN_MAJOR,
    HURRAY_LAYOUT_COMPOSITE_HEAD as COMPOSITE_HEAD, HURRAY_LAYOUT_COO as COO,
    HURRAY_LAYOUT_CSC as CSC, HURRAY_LAYOUT_CSF as CSF, HURRAY_LAYOUT_CSR as CSR,
    HURRAY_LAYOUT_HILBERT as HILBERT, HURRAY_LAYOUT_MORTON as MORTON,
    HURRAY_LAYOUT_ROW_MAJOR as ROW_MAJOR, HURRAY_LAYOUT_STRIDED as STRIDED,
    HURRAY_LAYOUT_TILED as TILED,
};
use hurray_ffi::{
    FfiError, HurrayDescriptor, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_ERR_INVALID_SYNC_MODE,
    HURRAY_ERR_STATE,
};
use jni::objects::{JClass, JLongArray};
use jni::sys::{jbyteArray, jint, jlong};
use jni::JNIEnv;

use crate::convert::longs;
use crate::descriptor::element_type;
use crate::errors::{run, Fail, R};

/// `HURRAY_ERR_INVALID_ARGUMENT` with `msg`.
fn bad(msg: String) -> Fail {
    FfiError::new(HURRAY_ERR_INVALID_ARGUMENT, msg).into()
}

/// `HURRAY_ERR_STATE`: the layout needs a field Java did not give.
fn missing(what: &str) -> Fail {
    FfiError::new(HURRAY_ERR_STATE, format!("the layout needs {what}")).into()
}

fn u64s(v: &[i64]) -> Vec<u64> {
    v.iter().map(|&x| x as u64).collect()
}

fn u32s(v: &[i64], what: &str) -> R<Vec<u32>> {
    v.iter()
        .map(|&x| u32::try_from(x).map_err(|_| bad(format!("{what} value {x} is not a u32"))))
        .collect()
}

fn byte(v: i64, what: &str) -> R<u8> {
    u8::try_from(v).map_err(|_| bad(format!("{what} {v} is not a byte")))
}

/// A tile order from Java's order byte and rank strides; `None` for an inner
/// order 4 (the next level is the tile's own tiling).
fn tile_order(v: i64, strides: &[i64], outer: bool) -> R<Option<TileOrder>> {
    Ok(Some(match v {
        1 => TileOrder::RowMajor,
        2 => TileOrder::ColumnMajor,
        3 => TileOrder::Strided(strides.to_vec()),
        4 if !outer => return Ok(None),
        v => {
            let which = if outer { "outer_order" } else { "inner_order" };
            return Err(bad(format!("{which} {v} is not 1, 2, 3 (or 4 inside)")));
        }
    }))
}

/// The tiling of Java's tiled layout fields: depth, then per level outer order, inner
/// order, tile shape, outer strides, inner strides (rank values each).
fn tiling(v: &[i64], rank: usize) -> R<Tiling> {
    let short = || bad("too few tiled layout fields".into());
    let depth = usize::try_from(*v.first().ok_or_else(short)?).map_err(|_| short())?;
    let per = 2 + 3 * rank;
    if depth == 0 || v.len() != 1 + depth * per {
        return Err(if depth == 0 {
            missing("a tiling level")
        } else {
            short()
        });
    }
    let mut levels = Vec::with_capacity(depth);
    for l in 0..depth {
        let f = &v[1 + l * per..1 + (l + 1) * per];
        let outer = tile_order(f[0], &f[2 + rank..2 + 2 * rank], true)?.ok_or_else(short)?;
        let inner = tile_order(f[1], &f[2 + 2 * rank..2 + 3 * rank], false)?;
        levels.push((u64s(&f[2..2 + rank]), outer, inner));
    }
    // Innermost first: each outer level's inner order 4 wraps the level below it.
    let mut next: Option<Tiling> = None;
    for (tile_shape, outer, inner) in levels.into_iter().rev() {
        let inner = match (inner, next.take()) {
            (Some(o), None) => o,
            (None, Some(t)) => TileOrder::Tiled(Box::new(t)),
            (None, None) => return Err(missing("a tiling level after an inner order 4")),
            (Some(_), Some(_)) => {
                return Err(bad(
                    "a tiling level follows one whose inner order is not 4".into()
                ))
            }
        };
        next = Some(Tiling {
            tile_shape,
            outer,
            inner,
        });
    }
    next.ok_or_else(short)
}

/// The layout of `tag` from Java's strides, nnz, COO sortedness, composite head and
/// layout fields.
fn layout(
    tag: u8,
    rank: usize,
    strides: Option<Vec<i64>>,
    nnz: Option<u64>,
    coo_sorted: bool,
    head: Option<CompositeHead>,
    f: Option<&[i64]>,
) -> R<Layout> {
    let nnz = || nnz.ok_or_else(|| missing("nnz"));
    let fields = || f.ok_or_else(|| missing("its layout fields"));
    Ok(match tag {
        ROW_MAJOR => Layout::RowMajor,
        COLUMN_MAJOR => Layout::ColumnMajor,
        STRIDED => Layout::Strided {
            strides: strides.ok_or_else(|| missing("strides"))?,
        },
        TILED => Layout::Tiled(tiling(fields()?, rank)?),
        MORTON => Layout::Morton {
            bits: u32s(fields()?, "Morton bits")?,
        },
        COO => Layout::Coo {
            nnz: nnz()?,
            is_sorted: coo_sorted,
        },
        CSR => Layout::Csr { nnz: nnz()? },
        CSC => Layout::Csc { nnz: nnz()? },
        CSF => Layout::Csf {
            nnz: nnz()?,
            mode_order: u32s(fields()?, "CSF mode order")?,
        },
        BLOCK_PAGED => {
            let v = fields()?;
            let [num_pages, page_size, paged_axis, num_seqs, layer, role, index] = v[..] else {
                return Err(bad("block-paged needs 7 layout fields".into()));
            };
            let u32_of = |x: i64, what: &str| {
                u32::try_from(x)
                    .or(if x == -1 { Ok(u32::MAX) } else { Err(()) })
                    .map_err(|_| bad(format!("{what} {x} is not a u32")))
            };
            Layout::BlockPaged(BlockPaged {
                num_pages: num_pages as u64,
                page_size: u32_of(page_size, "page_size")?,
                paged_axis: u32_of(paged_axis, "paged_axis")?,
                num_seqs: u32_of(num_seqs, "num_seqs")?,
                layer_index: u32_of(layer, "layer_index")?,
                kv_role: match role {
                    0 => KvRole::Key,
                    1 => KvRole::Value,
                    2 => KvRole::Fused,
                    v => return Err(bad(format!("kv_role {v:#04x} is not 0, 1 or 2"))),
                },
                block_table_index_type: match index {
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
        COMPOSITE_HEAD => Layout::CompositeHead(head.ok_or_else(|| missing("a composite head"))?),
        HILBERT => match fields()? {
            &[order, curve_rank] => Layout::Hilbert {
                order: u32_in(order, "Hilbert order")?,
                rank: u32_in(curve_rank, "Hilbert curve rank")?,
            },
            _ => return Err(bad("Hilbert needs 2 layout fields".into())),
        },
        t => {
            return Err(bad(format!(
                "layout tag {t:#04x} cannot be built from Java"
            )))
        }
    })
}

fn u32_in(v: i64, what: &str) -> R<u32> {
    u32::try_from(v).map_err(|_| bad(format!("{what} {v} is not a u32")))
}

fn scale_type(tag: i64) -> R<ScaleType> {
    match tag {
        1 => Ok(ScaleType::F16),
        2 => Ok(ScaleType::Bf16),
        3 => Ok(ScaleType::F32),
        v => Err(bad(format!("scale_type_tag {v:#04x} is not 1, 2 or 3"))),
    }
}

/// The quantization section of Java's 8 fields: scheme, scale bits, zero point,
/// axis, block size, scale buffer, zero-point buffer (-1: none), scale type.
fn quantization(q: &[i64]) -> R<Quantization> {
    let [scheme, scale, zero_point, axis, block_size, scale_buf, zp_buf, scale_tag] = q[..] else {
        return Err(bad("quantization needs 8 fields".into()));
    };
    let axis = u32_in(axis, "axis")?;
    let block_size = u32_in(block_size, "block_size")?;
    let scale_buffer_index = scale_buf as u32;
    let zero_point_buffer_index = (zp_buf >= 0).then_some(zp_buf as u32);
    let scheme = match scheme {
        1 => Scheme::PerTensor {
            scale: f32::from_bits(scale as u32),
            zero_point: zero_point as i32,
        },
        2 => Scheme::PerChannel {
            axis,
            scale_buffer_index,
            zero_point_buffer_index,
            scale_type: scale_type(scale_tag)?,
        },
        3 => Scheme::PerBlock {
            axis,
            block_size,
            scale_buffer_index,
            zero_point_buffer_index,
            scale_type: scale_type(scale_tag)?,
        },
        4 => Scheme::Nf4 {
            axis,
            block_size,
            scale_buffer_index,
        },
        5 => Scheme::Mxfp {
            axis,
            block_size,
            scale_buffer_index,
        },
        t => {
            return Err(bad(format!(
                "scheme_tag {t:#04x} is not an assigned scheme (1..5)"
            )))
        }
    };
    Ok(Quantization::from(scheme))
}

/// The statistics section of Java's 12 fields (doubles as IEEE bits).
fn statistics(v: &[i64]) -> R<Statistics> {
    if v.len() != 12 {
        return Err(bad("statistics need 12 fields".into()));
    }
    let f = |i: usize| f64::from_bits(v[i] as u64);
    Ok(Statistics {
        computed_mask: v[0] as u32,
        nnz: v[1] as u64,
        sparsity_ratio: f(2),
        value_min: f(3),
        value_max: f(4),
        value_abs_max: f(5),
        value_mean: f(6),
        value_stddev: f(7),
        nm_n: byte(v[8], "nm_n")?,
        nm_m: byte(v[9], "nm_m")?,
        has_nan: byte(v[10], "has_nan")?,
        has_inf: byte(v[11], "has_inf")?,
    })
}

/// The composite head of Java's 3 fields: member count, rule, combine op.
fn composite_head(c: &[i64]) -> R<CompositeHead> {
    let [member_count, rule, op] = c[..] else {
        return Err(bad("a composite head needs 3 fields".into()));
    };
    Ok(CompositeHead {
        member_count: u32_in(member_count, "member_count")?,
        rule: match rule {
            1 => CompositionRule::Partition,
            2 => CompositionRule::Overlay,
            3 => CompositionRule::Group,
            v => return Err(bad(format!("composition_rule {v:#04x} is not 1, 2 or 3"))),
        },
        combine_op: match op {
            0 => CombineOp::None,
            1 => CombineOp::Replace,
            2 => CombineOp::Add,
            v => return Err(bad(format!("combine_op {v:#04x} is not 0, 1 or 2"))),
        },
    })
}

/// A CPU, producer-synced buffer-table entry.
fn buffer_entry(size: i64, align: i64, memory: i64) -> R<BufferHandle> {
    let class = byte(memory, "memory class")?;
    Ok(BufferHandle {
        byte_size: size as u64,
        alignment: u32::try_from(align).map_err(|_| bad(format!("alignment {align}")))?,
        device: DeviceTag::Cpu,
        sync_mode: SyncMode::from_tag(0).ok_or_else(|| {
            Fail::from(FfiError::new(HURRAY_ERR_INVALID_SYNC_MODE, "sync_mode 0"))
        })?,
        memory_class: MemoryClass::from_tag(class)
            .ok_or_else(|| bad(format!("memory_class {class:#04x} is reserved or invalid")))?,
    })
}

/// `Native.descriptorBuild(...)`: a descriptor from Java's fields. `strides`
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
        let shape = u64s(&longs(env, &shape)?);
        let layout_tag =
            u8::try_from(layout_tag).map_err(|_| Fail::Arg(format!("layout tag {layout_tag}")))?;
        let opt = |env: &mut JNIEnv<'l>, a: &JLongArray<'l>| -> R<Option<Vec<i64>>> {
            Ok(if a.is_null() {
                None
            } else {
                Some(longs(env, a)?)
            })
        };
        let strides = opt(env, &strides)?;
        let sizes = longs(env, &buf_sizes)?;
        let aligns = longs(env, &buf_aligns)?;
        let memory = longs(env, &buf_memory)?;
        if sizes.len() != aligns.len() || sizes.len() != memory.len() {
            return Err(Fail::Arg(
                "buffer sizes, alignments and memory classes differ in length".into(),
            ));
        }
        let buffers = sizes
            .iter()
            .zip(&aligns)
            .zip(&memory)
            .map(|((&s, &a), &m)| buffer_entry(s, a, m))
            .collect::<R<Vec<_>>>()?;
        let head = opt(env, &composite)?
            .map(|c| composite_head(&c))
            .transpose()?;
        let fields = opt(env, &layout_fields)?;
        let layout = layout(
            layout_tag,
            shape.len(),
            strides,
            u64::try_from(nnz).ok(),
            coo_sorted > 0,
            head,
            fields.as_deref(),
        )?;
        let shard = match (opt(env, &shard_parent)?, opt(env, &shard_offset)?) {
            (Some(p), Some(o)) if p.len() == o.len() => Some(Shard {
                parent_shape: u64s(&p),
                offset: u64s(&o),
            }),
            (None, _) => None,
            _ => {
                return Err(Fail::Arg(
                    "shard parent shape and offset differ in length".into(),
                ))
            }
        };
        let model = TensorDescriptor {
            version_minor: 0,
            element_type: element_type(type_tag)?,
            shape,
            byte_offset: byte_offset as u64,
            layout,
            buffers,
            quantization: opt(env, &quant)?.map(|q| quantization(&q)).transpose()?,
            shard,
            statistics: opt(env, &stats)?.map(|v| statistics(&v)).transpose()?,
            extension_type: None,
            composite_member: match member_role {
                r if r < 0 => None,
                0 => Some(MemberRole::Correction),
                1 => Some(MemberRole::Base),
                v => return Err(bad(format!("member_role {v:#04x} is not 0 or 1"))),
            },
        };
        let d = HurrayDescriptor::new(Arc::new(model))?;
        Ok(env.byte_array_from_slice(d.bytes())?.into_raw())
    })
}
