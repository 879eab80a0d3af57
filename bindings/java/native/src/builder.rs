//! The descriptor builder (`Native.descriptorBuild`): Java's fields in, a
//! `hurray_core::TensorDescriptor` built here, validated and encoded by
//! `HurrayDescriptor::new`.

use std::ptr;
use std::sync::Arc;

use hurray_core::{
    BufferHandle, CompositeHead, Layout, MemberRole, Quantization, Shard, Statistics,
    TensorDescriptor, TileOrder, Tiling,
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
    FfiError, HurrayBlockPaged, HurrayBufferEntry, HurrayCompositeHead, HurrayDescriptor,
    HurrayQuantization, HurrayStatistics, HURRAY_ERR_INVALID_ARGUMENT, HURRAY_ERR_STATE,
};
use jni::objects::{JClass, JLongArray, JObject, JObjectArray};
use jni::sys::{jboolean, jint, jlong, jobject};
use jni::JNIEnv;

use crate::convert::longs;
use crate::descriptor::element_type;
use crate::descriptor_access::java_descriptor;
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

fn byte(v: i32, what: &str) -> R<u8> {
    u8::try_from(v).map_err(|_| bad(format!("{what} {v} is not a byte")))
}

/// Reads the fields of one Java record (`Descriptor.Quantization`, ...) by name.
struct Record<'a, 'l> {
    env: &'a mut JNIEnv<'l>,
    obj: JObject<'l>,
}

impl<'l> Record<'_, 'l> {
    fn int(&mut self, name: &str) -> R<i32> {
        Ok(self.env.get_field(&self.obj, name, "I")?.i()?)
    }
    fn long(&mut self, name: &str) -> R<i64> {
        Ok(self.env.get_field(&self.obj, name, "J")?.j()?)
    }
    fn float(&mut self, name: &str) -> R<f32> {
        Ok(self.env.get_field(&self.obj, name, "F")?.f()?)
    }
    fn double(&mut self, name: &str) -> R<f64> {
        Ok(self.env.get_field(&self.obj, name, "D")?.d()?)
    }
    fn boolean(&mut self, name: &str) -> R<bool> {
        Ok(self.env.get_field(&self.obj, name, "Z")?.z()?)
    }
    fn longs(&mut self, name: &str) -> R<Vec<i64>> {
        let a = JLongArray::from(self.env.get_field(&self.obj, name, "[J")?.l()?);
        let v = longs(self.env, &a)?;
        self.env.delete_local_ref(a)?;
        Ok(v)
    }
}

/// The record `obj`, or `None` for null.
fn record<'a, 'l>(env: &'a mut JNIEnv<'l>, obj: JObject<'l>) -> Option<Record<'a, 'l>> {
    (!obj.is_null()).then_some(Record { env, obj })
}

/// The elements of a Java record array, each read by `f`; an empty list for null.
fn records<'l, T>(
    env: &mut JNIEnv<'l>,
    a: JObjectArray<'l>,
    mut f: impl FnMut(&mut Record<'_, 'l>) -> R<T>,
) -> R<Vec<T>> {
    if a.is_null() {
        return Ok(Vec::new());
    }
    let n = env.get_array_length(&a)?;
    let mut v = Vec::with_capacity(n as usize);
    for i in 0..n {
        let obj = env.get_object_array_element(&a, i)?;
        if obj.is_null() {
            return Err(Fail::Arg(format!("element {i} is null")));
        }
        let mut r = Record { env, obj };
        v.push(f(&mut r)?);
        let Record { env: e, obj } = r;
        e.delete_local_ref(obj)?;
    }
    Ok(v)
}

/// A buffer-table entry from `Descriptor.BufferEntry`.
fn buffer_entry(r: &mut Record) -> R<BufferHandle> {
    Ok(HurrayBufferEntry {
        byte_size: r.long("byteSize")? as u64,
        alignment: r.int("alignment")? as u32,
        device_tag: byte(r.int("deviceTag")?, "device tag")?,
        sync_mode: byte(r.int("syncMode")?, "sync mode")?,
        memory_class: byte(r.int("memoryClass")?, "memory class")?,
    }
    .to_model()?)
}

/// The quantization section from `Descriptor.Quantization` (assigned schemes;
/// `flags` is implied by the zero-point buffer).
fn quantization(r: &mut Record) -> R<Quantization> {
    Ok(HurrayQuantization {
        scale: r.float("scale")?,
        zero_point: r.int("zeroPoint")?,
        axis: r.int("axis")? as u32,
        block_size: r.int("blockSize")? as u32,
        scale_buffer_index: r.int("scaleBufferIndex")? as u32,
        // Java's NO_BUFFER (-1) is HURRAY_NO_BUFFER (u32::MAX).
        zero_point_buffer_index: r.int("zeroPointBufferIndex")? as u32,
        flags: 0,
        scheme_tag: byte(r.int("scheme")?, "scheme")?,
        scheme_version: 1,
        scale_type_tag: byte(r.int("scaleTypeTag")?, "scale type tag")?,
    }
    .to_model(&[])?)
}

/// The statistics section from `Descriptor.Statistics`.
fn statistics(r: &mut Record) -> R<Statistics> {
    Ok(HurrayStatistics {
        nnz: r.long("nnz")? as u64,
        sparsity_ratio: r.double("sparsityRatio")?,
        value_min: r.double("min")?,
        value_max: r.double("max")?,
        value_abs_max: r.double("absMax")?,
        value_mean: r.double("mean")?,
        value_stddev: r.double("stddev")?,
        computed_mask: r.int("computedMask")? as u32,
        nm_n: byte(r.int("nmN")?, "nm_n")?,
        nm_m: byte(r.int("nmM")?, "nm_m")?,
        has_nan: u8::from(r.boolean("hasNan")?),
        has_inf: u8::from(r.boolean("hasInf")?),
    }
    .to_model())
}

/// The composite head from `Descriptor.CompositeHead`.
fn composite_head(r: &mut Record) -> R<CompositeHead> {
    Ok(HurrayCompositeHead {
        member_count: r.int("memberCount")? as u32,
        composition_rule: byte(r.int("rule")?, "composition rule")?,
        combine_op: byte(r.int("combineOp")?, "combine op")?,
    }
    .to_model()?)
}

/// The block-paged fields from `Descriptor.BlockPaged` (a layer index of -1 is
/// `HURRAY_LAYER_INDEX_NONE`).
fn block_paged(r: &mut Record) -> R<hurray_core::BlockPaged> {
    Ok(HurrayBlockPaged {
        num_pages: r.long("numPages")? as u64,
        page_size: r.int("pageSize")? as u32,
        paged_axis: r.int("pagedAxis")? as u32,
        num_seqs: r.int("numSeqs")? as u32,
        layer_index: r.int("layerIndex")? as u32,
        kv_role: byte(r.int("kvRole")?, "kv role")?,
        block_table_index_type: byte(r.int("indexType")?, "index type")?,
    }
    .to_model()?)
}

/// A tile order from a `TileLevel` order byte and its strides; `None` for an inner
/// order 4 (the next level is the tile's own tiling).
fn tile_order(v: i32, strides: Vec<i64>, outer: bool) -> R<Option<TileOrder>> {
    Ok(Some(match v {
        1 => TileOrder::RowMajor,
        2 => TileOrder::ColumnMajor,
        3 => TileOrder::Strided(strides),
        4 if !outer => return Ok(None),
        v => {
            let which = if outer { "outer_order" } else { "inner_order" };
            return Err(bad(format!("{which} {v} is not 1, 2, 3 (or 4 inside)")));
        }
    }))
}

/// One `Descriptor.TileLevel`: tile shape, outer order, inner order (`None`: tiled
/// by the next level).
type Level = (Vec<u64>, TileOrder, Option<TileOrder>);

fn tile_level(r: &mut Record) -> R<Level> {
    let outer_strides = r.longs("outerStrides")?;
    let inner_strides = r.longs("innerStrides")?;
    let outer = tile_order(r.int("outerOrder")?, outer_strides, true)?
        .ok_or_else(|| bad("outer_order 4".into()))?;
    let inner = tile_order(r.int("innerOrder")?, inner_strides, false)?;
    Ok((u64s(&r.longs("tileShape")?), outer, inner))
}

/// The tiling of the levels, outermost first: each level whose inner order is 4 is
/// tiled by the next.
fn tiling(levels: Vec<Level>) -> R<Tiling> {
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
    next.ok_or_else(|| missing("a tiling level"))
}

/// The layout fields Java gave, each typed, for [`layout`].
struct LayoutFields {
    strides: Option<Vec<i64>>,
    nnz: Option<u64>,
    coo_sorted: bool,
    head: Option<CompositeHead>,
    tiling: Vec<Level>,
    morton: Option<Vec<i64>>,
    hilbert: Option<Vec<i64>>,
    csf: Option<Vec<i64>>,
    paged: Option<hurray_core::BlockPaged>,
}

/// The layout of `tag` from the fields Java gave.
fn layout(tag: u8, f: LayoutFields) -> R<Layout> {
    let nnz = || f.nnz.ok_or_else(|| missing("nnz"));
    Ok(match tag {
        ROW_MAJOR => Layout::RowMajor,
        COLUMN_MAJOR => Layout::ColumnMajor,
        STRIDED => Layout::Strided {
            strides: f.strides.ok_or_else(|| missing("strides"))?,
        },
        TILED => Layout::Tiled(tiling(f.tiling)?),
        MORTON => Layout::Morton {
            bits: u32s(
                &f.morton.ok_or_else(|| missing("Morton bits"))?,
                "Morton bits",
            )?,
        },
        COO => Layout::Coo {
            nnz: nnz()?,
            is_sorted: f.coo_sorted,
        },
        CSR => Layout::Csr { nnz: nnz()? },
        CSC => Layout::Csc { nnz: nnz()? },
        CSF => Layout::Csf {
            nnz: nnz()?,
            mode_order: u32s(
                &f.csf.ok_or_else(|| missing("a CSF mode order"))?,
                "CSF mode order",
            )?,
        },
        BLOCK_PAGED => Layout::BlockPaged(f.paged.ok_or_else(|| missing("block-paged fields"))?),
        COMPOSITE_HEAD => Layout::CompositeHead(f.head.ok_or_else(|| missing("a composite head"))?),
        HILBERT => match f.hilbert.as_deref() {
            Some(&[order, curve_rank]) => Layout::Hilbert {
                order: u32s(&[order], "Hilbert order")?[0],
                rank: u32s(&[curve_rank], "Hilbert curve rank")?[0],
            },
            _ => return Err(missing("the Hilbert order and curve rank")),
        },
        t => {
            return Err(bad(format!(
                "layout tag {t:#04x} cannot be built from Java"
            )))
        }
    })
}

/// `Native.descriptorBuild(...)`: a descriptor from the Java builder's typed fields:
/// `strides`, `mortonBits`, `hilbert` (`{order, curveRank}`), `csfModeOrder` null
/// when not given; `hasNnz`/`nnz`; `cooSorted` 1/0 (anything else: unsorted);
/// `buffers` the buffer table; `quant`, `stats`, `composite`, `shard`, `blockPaged`
/// null when absent; `memberRole` < 0: none; `tiling` the tiled layout's levels,
/// outermost first. Returns the validated descriptor as a Java `Descriptor`.
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_descriptorBuild<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass,
    type_tag: jint,
    layout_tag: jint,
    shape: JLongArray<'l>,
    strides: JLongArray<'l>,
    byte_offset: jlong,
    has_nnz: jboolean,
    nnz: jlong,
    coo_sorted: jint,
    buffers: JObjectArray<'l>,
    quant: JObject<'l>,
    stats: JObject<'l>,
    composite: JObject<'l>,
    member_role: jint,
    shard: JObject<'l>,
    tiling: JObjectArray<'l>,
    morton: JLongArray<'l>,
    hilbert: JLongArray<'l>,
    csf: JLongArray<'l>,
    paged: JObject<'l>,
) -> jobject {
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
        let fields = LayoutFields {
            strides: opt(env, &strides)?,
            nnz: (has_nnz != 0).then_some(nnz as u64),
            coo_sorted: coo_sorted == 1,
            head: record(env, composite)
                .map(|mut r| composite_head(&mut r))
                .transpose()?,
            tiling: records(env, tiling, tile_level)?,
            morton: opt(env, &morton)?,
            hilbert: opt(env, &hilbert)?,
            csf: opt(env, &csf)?,
            paged: record(env, paged)
                .map(|mut r| block_paged(&mut r))
                .transpose()?,
        };
        let buffers = records(env, buffers, buffer_entry)?;
        let shard = match record(env, shard) {
            Some(mut r) => {
                let (parent, offset) = (r.longs("parentShape")?, r.longs("offset")?);
                if parent.len() != offset.len() {
                    return Err(Fail::Arg(
                        "shard parent shape and offset differ in length".into(),
                    ));
                }
                Some(Shard {
                    parent_shape: u64s(&parent),
                    offset: u64s(&offset),
                })
            }
            None => None,
        };
        let model = TensorDescriptor {
            version_minor: 0,
            element_type: element_type(type_tag)?,
            shape,
            byte_offset: byte_offset as u64,
            layout: layout(layout_tag, fields)?,
            buffers,
            quantization: record(env, quant)
                .map(|mut r| quantization(&mut r))
                .transpose()?,
            shard,
            statistics: record(env, stats)
                .map(|mut r| statistics(&mut r))
                .transpose()?,
            extension_type: None,
            composite_member: match member_role {
                r if r < 0 => None,
                0 => Some(MemberRole::Correction),
                1 => Some(MemberRole::Base),
                v => return Err(bad(format!("member_role {v:#04x} is not 0 or 1"))),
            },
        };
        let d = HurrayDescriptor::new(Arc::new(model))?;
        Ok(java_descriptor(env, &d)?.into_raw())
    })
}
