//! `Descriptor.build`: a descriptor from a plain object, through the C descriptor
//! builder (`hurray_descriptor_builder_*`), which checks every rule.

use std::ptr;

use hurray_ffi::builder::*;
use hurray_ffi::descriptor_access::{
    hurray_descriptor_block_paged, hurray_descriptor_composite_head,
    hurray_descriptor_coo_is_sorted, hurray_descriptor_csf_mode_order, hurray_descriptor_hilbert,
    hurray_descriptor_member_role, hurray_descriptor_morton_bits,
    hurray_descriptor_tile_inner_strides, hurray_descriptor_tile_outer_strides,
    hurray_descriptor_tile_shape, hurray_descriptor_tiling_depth, hurray_descriptor_tiling_level,
    HurrayBlockPaged, HurrayBufferEntry, HurrayCompositeHead, HurrayQuantization, HurrayStatistics,
};
use hurray_ffi::HurrayDescriptorBuilder;
use napi_derive::napi;

use crate::error::{check, err, Result};
use crate::tensor::{dtype_tag, optional, shape_in, Descriptor, Shard, Statistics};

/// One entry of the buffer table to build.
#[napi(object)]
pub struct BufferSpec {
    /// Size in bytes.
    pub byte_size: f64,
    /// Alignment in bytes (default 64, or 1 for an empty buffer).
    pub alignment: Option<u32>,
    /// Memory class (default 0, standard).
    pub memory_class: Option<u32>,
}

/// A quantization section to build. Fields a scheme does not use may be left out.
#[napi(object)]
pub struct QuantizationSpec {
    /// `"per_tensor_affine"`, `"per_channel_affine"`, `"per_block_affine"`, `"nf4"`
    /// or `"mxfp"`.
    pub scheme: String,
    /// Per-tensor scale.
    pub scale: Option<f64>,
    /// Per-tensor zero point.
    pub zero_point: Option<i32>,
    /// Quantized axis.
    pub axis: Option<u32>,
    /// Elements per block.
    pub block_size: Option<u32>,
    /// Buffer holding the scales.
    pub scale_buffer_index: Option<u32>,
    /// Buffer holding the zero points (absent: symmetric).
    pub zero_point_buffer_index: Option<u32>,
    /// Element type name of the scales (`"float32"`, `"float16"`, `"bfloat16"`).
    pub scale_type: Option<String>,
}

/// The composite-head fields to build (layout `composite_head`).
#[napi(object)]
pub struct CompositeHead {
    /// Members that follow the head.
    pub member_count: u32,
    /// `"partition"`, `"overlay"` or `"group"`.
    pub rule: String,
    /// `"none"`, `"replace"` or `"add"` (overlay only; default `"none"`).
    pub combine: Option<String>,
}

/// One level of a tiled layout, outermost first.
#[napi(object)]
pub struct TileLevel {
    /// Elements per tile, per dimension.
    pub shape: Vec<f64>,
    /// Order of the tiles: `"row_major"`, `"column_major"` or `"strided"`.
    pub outer: String,
    /// Strides in tiles (`outer` `"strided"`).
    pub outer_strides: Option<Vec<i64>>,
    /// Order inside a tile: `"row_major"`, `"column_major"`, `"strided"` or `"tiled"`
    /// (the next level is nested in this one).
    pub inner: String,
    /// Strides in elements (`inner` `"strided"`).
    pub inner_strides: Option<Vec<i64>>,
}

/// The fields of a block-paged (KV-cache) layout.
#[napi(object)]
pub struct BlockPaged {
    /// Tokens per page.
    pub page_size: u32,
    /// Pages in the pool.
    pub num_pages: f64,
    /// Sequences in the block table.
    pub num_seqs: u32,
    /// The paged axis (default 0).
    pub paged_axis: Option<u32>,
    /// The layer, or `null` for none.
    pub layer_index: Option<u32>,
    /// `"key"`, `"value"` or `"fused"`.
    pub kv_role: String,
    /// Block-table entries are u64 (else u32).
    pub index64: bool,
}

/// The fields of a Hilbert layout.
#[napi(object)]
pub struct Hilbert {
    /// Curve order: every dimension is 2^order.
    pub order: u32,
    /// Curve rank.
    pub rank: u32,
}

/// A descriptor to build: what `Descriptor.build` takes.
#[napi(object)]
pub struct DescriptorSpec {
    /// Element type name (`"float32"`, `"int4"`, ...).
    #[napi(
        ts_type = "'float16' | 'bfloat16' | 'float32' | 'float64' | 'int8' | 'uint8' | 'int16' | 'uint16' | 'int32' | 'uint32' | 'int64' | 'uint64' | 'bool' | 'float8_e4m3' | 'float8_e5m2' | 'float8_e8m0' | 'float4_e2m1' | 'float6_e2m3' | 'float6_e3m2' | 'float128' | 'int4' | 'uint4' | 'int2' | 'uint2'"
    )]
    pub dtype: String,
    /// Elements per dimension.
    pub shape: Vec<f64>,
    /// `"row_major"` (default), `"column_major"`, `"strided"`, `"tiled"`, `"morton"`,
    /// `"hilbert"`, `"coo"`, `"csr"`, `"csc"`, `"csf"`, `"block_paged"` or
    /// `"composite_head"`.
    pub layout: Option<String>,
    /// Tiling levels, outermost first (`tiled`).
    pub tiling: Option<Vec<TileLevel>>,
    /// Block-paged fields (`block_paged`).
    pub block_paged: Option<BlockPaged>,
    /// Hilbert fields (`hilbert`).
    pub hilbert: Option<Hilbert>,
    /// Bytes from the start of buffer 0 to element [0, ..., 0] (default 0).
    pub byte_offset: Option<f64>,
    /// Strides in elements (`strided`).
    pub strides: Option<Vec<i64>>,
    /// Bits per dimension (`morton`).
    pub morton_bits: Option<Vec<u32>>,
    /// Stored elements (`coo`, `csr`, `csc`, `csf`).
    pub nnz: Option<f64>,
    /// Whether COO coordinates are sorted (`coo`).
    pub coo_sorted: Option<bool>,
    /// Mode order (`csf`).
    pub csf_mode_order: Option<Vec<u32>>,
    /// Composite-head fields (`composite_head`).
    pub composite: Option<CompositeHead>,
    /// The buffer table, in order (layout buffers, then quantization parameters).
    pub buffers: Vec<BufferSpec>,
    /// Quantization section.
    pub quantization: Option<QuantizationSpec>,
    /// Shard section.
    pub shard: Option<Shard>,
    /// Statistics section (set `computedMask` for the groups given).
    pub statistics: Option<Statistics>,
    /// Member role of an overlay member: `"base"` or `"correction"`.
    pub member_role: Option<String>,
}

/// The builder handle, destroyed on drop.
struct Builder(*mut HurrayDescriptorBuilder);

impl Drop for Builder {
    fn drop(&mut self) {
        // SAFETY: owned handle or NULL; destroy nulls it.
        unsafe { hurray_descriptor_builder_destroy(&mut self.0) };
    }
}

fn bad(what: impl Into<String>) -> crate::error::JsErr {
    err("HURRAY_ERR_INVALID_ARGUMENT", what)
}

fn layout_tag(name: &str) -> Result<u8> {
    use hurray_core::layout::tag as t;
    Ok(match name {
        "row_major" => t::ROW_MAJOR,
        "column_major" => t::COLUMN_MAJOR,
        "strided" => t::STRIDED,
        "morton" => t::MORTON,
        "tiled" => t::TILED,
        "hilbert" => t::HILBERT,
        "block_paged" => t::BLOCK_PAGED,
        "coo" => t::COO,
        "csr" => t::CSR,
        "csc" => t::CSC,
        "csf" => t::CSF,
        "composite_head" => t::COMPOSITE_HEAD,
        other => {
            return Err(err(
                "HURRAY_ERR_NOT_APPLICABLE",
                format!(
                    "layout {other:?} cannot be built from a plain object \
                     (extension layouts: pass the encoded descriptor to Tensor.fromBuffers)"
                ),
            ))
        }
    })
}

fn u64_of(what: &str, v: f64) -> Result<u64> {
    if v >= 0.0 && v.fract() == 0.0 && v <= 9_007_199_254_740_991.0 {
        Ok(v as u64)
    } else {
        Err(bad(format!(
            "{what} must be a non-negative integer, got {v}"
        )))
    }
}

/// A tile order name as its byte, with its strides when strided (`nested`: the inner
/// order, which may also be `"tiled"`).
fn tile_order<'a>(
    name: &str,
    strides: &'a Option<Vec<i64>>,
    nested: bool,
) -> Result<(u8, Option<&'a Vec<i64>>)> {
    Ok(match name {
        "row_major" => (1, None),
        "column_major" => (2, None),
        "strided" => (
            3,
            Some(
                strides
                    .as_ref()
                    .ok_or_else(|| bad("a strided tile order needs its strides"))?,
            ),
        ),
        "tiled" if nested => (4, None),
        o => return Err(bad(format!("unknown tile order {o:?}"))),
    })
}

/// The name of a tile order byte.
fn order_name(o: u8) -> &'static str {
    match o {
        1 => "row_major",
        2 => "column_major",
        3 => "strided",
        4 => "tiled",
        _ => "private",
    }
}

/// Rule, combine op and member role names as the wire bytes.
fn composite_bytes(c: &CompositeHead) -> Result<HurrayCompositeHead> {
    let rule = match c.rule.as_str() {
        "partition" => 1,
        "overlay" => 2,
        "group" => 3,
        r => return Err(bad(format!("unknown composition rule {r:?}"))),
    };
    let combine = match c.combine.as_deref().unwrap_or("none") {
        "none" => 0,
        "replace" => 1,
        "add" => 2,
        o => return Err(bad(format!("unknown combine op {o:?}"))),
    };
    Ok(HurrayCompositeHead {
        member_count: c.member_count,
        composition_rule: rule,
        combine_op: combine,
    })
}

#[napi]
impl Descriptor {
    /// Builds a descriptor from a plain object (`DescriptorSpec`): dtype, shape,
    /// layout and its fields, the buffer table (sizes in bytes), and the optional
    /// quantization, shard, statistics and member-role sections. The library checks
    /// every rule of the format.
    ///
    /// Throws: `HURRAY_ERR_INVALID_ARGUMENT` (unknown names, bad numbers),
    /// `HURRAY_ERR_NOT_APPLICABLE` (extension layouts: use their encoded bytes),
    /// `HURRAY_ERR_DESCRIPTOR` (a rule of the format; the message names it).
    #[napi(factory)]
    pub fn build(spec: DescriptorSpec) -> Result<Descriptor> {
        let tag = dtype_tag(&spec.dtype)?;
        let layout = layout_tag(spec.layout.as_deref().unwrap_or("row_major"))?;
        let shape = shape_in(&spec.shape)?;
        let mut b = Builder(ptr::null_mut());
        // SAFETY: `shape` holds `rank` readable entries; `b.0` a local out-pointer.
        check(unsafe {
            hurray_descriptor_builder_new(tag, layout, shape.len() as u32, shape.as_ptr(), &mut b.0)
        })?;
        // Each call below: SAFETY: `b.0` is the live builder; slices and structs are
        // read during the call only.
        if let Some(o) = spec.byte_offset {
            let o = u64_of("byteOffset", o)?;
            check(unsafe { hurray_descriptor_builder_set_byte_offset(b.0, o) })?;
        }
        if let Some(s) = &spec.strides {
            check(unsafe {
                hurray_descriptor_builder_set_strides(b.0, s.as_ptr(), s.len() as u64)
            })?;
        }
        if let Some(m) = &spec.morton_bits {
            check(unsafe {
                hurray_descriptor_builder_set_morton_bits(b.0, m.as_ptr(), m.len() as u64)
            })?;
        }
        if let Some(n) = spec.nnz {
            let n = u64_of("nnz", n)?;
            check(unsafe { hurray_descriptor_builder_set_nnz(b.0, n) })?;
        }
        if let Some(sorted) = spec.coo_sorted {
            check(unsafe { hurray_descriptor_builder_set_coo_is_sorted(b.0, sorted as u8) })?;
        }
        if let Some(m) = &spec.csf_mode_order {
            check(unsafe {
                hurray_descriptor_builder_set_csf_mode_order(b.0, m.as_ptr(), m.len() as u64)
            })?;
        }
        for level in spec.tiling.iter().flatten() {
            let shape = shape_in(&level.shape)?;
            let (outer, outer_strides) = tile_order(&level.outer, &level.outer_strides, false)?;
            let (inner, inner_strides) = tile_order(&level.inner, &level.inner_strides, true)?;
            for st in [&outer_strides, &inner_strides].into_iter().flatten() {
                if st.len() != shape.len() {
                    return Err(bad("tile strides need one value per dimension"));
                }
            }
            let ptr_of = |v: &Option<&Vec<i64>>| v.map_or(ptr::null(), |v| v.as_ptr());
            check(unsafe {
                hurray_descriptor_builder_push_tiling_level(
                    b.0,
                    shape.as_ptr(),
                    outer,
                    ptr_of(&outer_strides),
                    inner,
                    ptr_of(&inner_strides),
                )
            })?;
        }
        if let Some(p) = &spec.block_paged {
            let f = HurrayBlockPaged {
                num_pages: u64_of("numPages", p.num_pages)?,
                page_size: p.page_size,
                paged_axis: p.paged_axis.unwrap_or(0),
                num_seqs: p.num_seqs,
                layer_index: p.layer_index.unwrap_or(u32::MAX),
                kv_role: match p.kv_role.as_str() {
                    "key" => 0,
                    "value" => 1,
                    "fused" => 2,
                    r => return Err(bad(format!("unknown kvRole {r:?}"))),
                },
                block_table_index_type: p.index64 as u8,
            };
            check(unsafe { hurray_descriptor_builder_set_block_paged(b.0, &f) })?;
        }
        if let Some(h) = &spec.hilbert {
            check(unsafe { hurray_descriptor_builder_set_hilbert(b.0, h.order, h.rank) })?;
        }
        if let Some(c) = &spec.composite {
            let h = composite_bytes(c)?;
            check(unsafe { hurray_descriptor_builder_set_composite_head(b.0, &h) })?;
        }
        for (i, e) in spec.buffers.iter().enumerate() {
            let size = u64_of(&format!("buffers[{i}].byteSize"), e.byte_size)?;
            let entry = HurrayBufferEntry {
                byte_size: size,
                alignment: e.alignment.unwrap_or(if size == 0 { 1 } else { 64 }),
                device_tag: 0,
                sync_mode: 0,
                memory_class: u8::try_from(e.memory_class.unwrap_or(0))
                    .map_err(|_| bad("memoryClass is a byte"))?,
            };
            check(unsafe { hurray_descriptor_builder_add_buffer(b.0, &entry) })?;
        }
        if let Some(q) = &spec.quantization {
            let scheme = match q.scheme.as_str() {
                "per_tensor_affine" => 1,
                "per_channel_affine" => 2,
                "per_block_affine" => 3,
                "nf4" => 4,
                "mxfp" => 5,
                s => return Err(bad(format!("unknown quantization scheme {s:?}"))),
            };
            let qs = HurrayQuantization {
                scale: q.scale.unwrap_or(0.0) as f32,
                zero_point: q.zero_point.unwrap_or(0),
                axis: q.axis.unwrap_or(0),
                block_size: q.block_size.unwrap_or(0),
                scale_buffer_index: q.scale_buffer_index.unwrap_or(u32::MAX),
                zero_point_buffer_index: q.zero_point_buffer_index.unwrap_or(u32::MAX),
                flags: 0,
                scheme_tag: scheme,
                scheme_version: 0,
                scale_type_tag: match &q.scale_type {
                    Some(t) => dtype_tag(t)?,
                    None => 0,
                },
            };
            check(unsafe { hurray_descriptor_builder_set_quantization(b.0, &qs, ptr::null(), 0) })?;
        }
        if let Some(s) = &spec.shard {
            let parent = shape_in(&s.parent_shape.iter().map(|&x| x as f64).collect::<Vec<_>>())?;
            let offset = shape_in(&s.offset.iter().map(|&x| x as f64).collect::<Vec<_>>())?;
            if parent.len() != offset.len() {
                return Err(bad("shard parentShape and offset differ in length"));
            }
            check(unsafe {
                hurray_descriptor_builder_set_shard(
                    b.0,
                    parent.as_ptr(),
                    offset.as_ptr(),
                    parent.len() as u64,
                )
            })?;
        }
        if let Some(s) = &spec.statistics {
            let st = HurrayStatistics {
                nnz: u64_of("statistics.nnz", s.nnz)?,
                sparsity_ratio: s.sparsity,
                value_min: s.min,
                value_max: s.max,
                value_abs_max: s.absmax,
                value_mean: s.mean,
                value_stddev: s.stddev,
                computed_mask: s.computed_mask,
                nm_n: u8::try_from(s.nm_n).map_err(|_| bad("nmN is a byte"))?,
                nm_m: u8::try_from(s.nm_m).map_err(|_| bad("nmM is a byte"))?,
                has_nan: s.has_nan as u8,
                has_inf: s.has_inf as u8,
            };
            check(unsafe { hurray_descriptor_builder_set_statistics(b.0, &st) })?;
        }
        if let Some(r) = &spec.member_role {
            let role = match r.as_str() {
                "correction" => 0,
                "base" => 1,
                r => return Err(bad(format!("unknown member role {r:?}"))),
            };
            check(unsafe { hurray_descriptor_builder_set_member_role(b.0, role) })?;
        }
        let mut d = ptr::null_mut();
        check(unsafe { hurray_descriptor_builder_finish(b.0, &mut d) })?;
        Ok(Descriptor::from_owned(d))
    }

    /// The composite-head fields (layout `composite_head`), or `null`.
    #[napi(getter)]
    pub fn composite(&self) -> Result<Option<CompositeHead>> {
        let d = self.ptr()?;
        let mut h = HurrayCompositeHead {
            member_count: 0,
            composition_rule: 0,
            combine_op: 0,
        };
        // SAFETY: `d` live; `h` writable.
        if !optional(unsafe { hurray_descriptor_composite_head(d, &mut h) })? {
            return Ok(None);
        }
        let rule = match h.composition_rule {
            1 => "partition",
            2 => "overlay",
            3 => "group",
            _ => "private",
        };
        let combine = match h.combine_op {
            0 => "none",
            1 => "replace",
            2 => "add",
            _ => "private",
        };
        Ok(Some(CompositeHead {
            member_count: h.member_count,
            rule: rule.into(),
            combine: Some(combine.into()),
        }))
    }

    /// The tiling levels of a tiled layout, outermost first, or `null`.
    #[napi(getter)]
    pub fn tiling(&self) -> Result<Option<Vec<TileLevel>>> {
        let d = self.ptr()?;
        let mut depth = 0u32;
        // SAFETY: `d` live.
        if !optional(unsafe { hurray_descriptor_tiling_depth(d, &mut depth) })? {
            return Ok(None);
        }
        let mut out = Vec::new();
        for level in 0..depth {
            let (mut o, mut i) = (0u8, 0u8);
            // SAFETY: `d` live, `level` < depth.
            check(unsafe { hurray_descriptor_tiling_level(d, level, &mut o, &mut i) })?;
            let mut shape = [0u64; 64];
            let mut n = 0u64;
            // SAFETY: `d` live; `shape` holds 64 values, the largest rank.
            check(unsafe {
                hurray_descriptor_tile_shape(d, level, shape.as_mut_ptr(), 64, &mut n)
            })?;
            let strides = |outer: bool| -> Result<Option<Vec<i64>>> {
                let mut v = [0i64; 64];
                let mut n = 0u64;
                // SAFETY: `d` live; `v` holds 64 values.
                let s = unsafe {
                    if outer {
                        hurray_descriptor_tile_outer_strides(d, level, v.as_mut_ptr(), 64, &mut n)
                    } else {
                        hurray_descriptor_tile_inner_strides(d, level, v.as_mut_ptr(), 64, &mut n)
                    }
                };
                Ok(optional(s)?.then(|| v[..n as usize].to_vec()))
            };
            out.push(TileLevel {
                shape: shape[..n as usize].iter().map(|&x| x as f64).collect(),
                outer: order_name(o).into(),
                outer_strides: if o == 3 { strides(true)? } else { None },
                inner: order_name(i).into(),
                inner_strides: if i == 3 { strides(false)? } else { None },
            });
        }
        Ok(Some(out))
    }

    /// The block-paged fields, or `null`.
    #[napi(getter)]
    pub fn block_paged(&self) -> Result<Option<BlockPaged>> {
        let d = self.ptr()?;
        let mut f = HurrayBlockPaged {
            num_pages: 0,
            page_size: 0,
            paged_axis: 0,
            num_seqs: 0,
            layer_index: 0,
            kv_role: 0,
            block_table_index_type: 0,
        };
        // SAFETY: `d` live; `f` writable.
        if !optional(unsafe { hurray_descriptor_block_paged(d, &mut f) })? {
            return Ok(None);
        }
        Ok(Some(BlockPaged {
            page_size: f.page_size,
            num_pages: f.num_pages as f64,
            num_seqs: f.num_seqs,
            paged_axis: Some(f.paged_axis),
            layer_index: (f.layer_index != u32::MAX).then_some(f.layer_index),
            kv_role: match f.kv_role {
                0 => "key",
                1 => "value",
                2 => "fused",
                _ => "private",
            }
            .into(),
            index64: f.block_table_index_type == 1,
        }))
    }

    /// The Hilbert fields, or `null`.
    #[napi(getter)]
    pub fn hilbert(&self) -> Result<Option<Hilbert>> {
        let d = self.ptr()?;
        let (mut order, mut rank) = (0u32, 0u32);
        // SAFETY: `d` live.
        if !optional(unsafe { hurray_descriptor_hilbert(d, &mut order, &mut rank) })? {
            return Ok(None);
        }
        Ok(Some(Hilbert { order, rank }))
    }

    /// Bits per dimension of a Morton layout, or `null`.
    #[napi(getter)]
    pub fn morton_bits(&self) -> Result<Option<Vec<u32>>> {
        let d = self.ptr()?;
        let mut v = [0u32; 64];
        let mut n = 0u64;
        // SAFETY: `d` live; `v` holds 64 values.
        if !optional(unsafe { hurray_descriptor_morton_bits(d, v.as_mut_ptr(), 64, &mut n) })? {
            return Ok(None);
        }
        Ok(Some(v[..n as usize].to_vec()))
    }

    /// Whether COO coordinates are sorted, or `null` for other layouts.
    #[napi(getter)]
    pub fn coo_sorted(&self) -> Result<Option<bool>> {
        let d = self.ptr()?;
        let mut b = 0u8;
        // SAFETY: `d` live.
        if !optional(unsafe { hurray_descriptor_coo_is_sorted(d, &mut b) })? {
            return Ok(None);
        }
        Ok(Some(b != 0))
    }

    /// The mode order of a CSF layout, or `null`.
    #[napi(getter)]
    pub fn csf_mode_order(&self) -> Result<Option<Vec<u32>>> {
        let d = self.ptr()?;
        let mut v = [0u32; 64];
        let mut n = 0u64;
        // SAFETY: `d` live; `v` holds 64 values.
        if !optional(unsafe { hurray_descriptor_csf_mode_order(d, v.as_mut_ptr(), 64, &mut n) })? {
            return Ok(None);
        }
        Ok(Some(v[..n as usize].to_vec()))
    }

    /// The member role of an overlay member (`"base"` or `"correction"`), or `null`.
    #[napi(getter)]
    pub fn member_role(&self) -> Result<Option<String>> {
        let d = self.ptr()?;
        let mut r = 0u8;
        // SAFETY: `d` live.
        if !optional(unsafe { hurray_descriptor_member_role(d, &mut r) })? {
            return Ok(None);
        }
        Ok(Some(if r == 1 { "base" } else { "correction" }.into()))
    }
}
