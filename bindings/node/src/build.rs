//! `Descriptor.build`: a descriptor from a plain object, built as a
//! `hurray_core::TensorDescriptor` model and checked against every rule by
//! `HurrayDescriptor::new`; and the layout-specific fields read back off the model.

use std::sync::Arc;

use hurray_core::tables::{COMPOSITION_RULES, SCHEMES};
use hurray_core::{
    CombineOp, CompositionRule, DeviceTag, ElementType, IndexType, KvRole, Layout, MemberRole,
    Quantization, ScaleType, Shard as ShardModel, SyncMode, TensorDescriptor, TileOrder, Tiling,
};
use hurray_ffi::tags::HURRAY_NO_BUFFER;
use hurray_ffi::{
    HurrayBlockPaged, HurrayBufferEntry, HurrayCompositeHead, HurrayDescriptor, HurrayQuantization,
    HurrayStatistics,
};
use napi_derive::napi;

use crate::error::{err, ffi, Result};
use crate::tensor::{element_type_of, shape_in, Descriptor, Shard, Statistics};

/// One entry of the buffer table to build.
#[napi(object)]
pub struct BufferSpec {
    /// Size in bytes.
    pub byte_size: f64,
    /// Alignment in bytes (default 64, or 1 for an empty buffer).
    pub alignment: Option<u32>,
    /// Memory class (default 0, standard).
    pub memory_class: Option<u32>,
    /// Device the buffer lives on, by its spec name (default `"cpu"`). A tensor
    /// built over JS memory with another device is a device-tagged buffer: CPU views
    /// of it (`buffer()`, `array()`) are refused.
    #[napi(ts_type = "import('./tables').DeviceName")]
    pub device: Option<String>,
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
    #[napi(ts_type = "import('./tables').ElementTypeName")]
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

fn bad(what: impl Into<String>) -> crate::error::JsErr {
    err("HURRAY_ERR_INVALID_ARGUMENT", what)
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

/// A field the layout needs, or `ERR_HURRAY_STATE` naming it.
fn needs<T>(v: Option<T>, layout: &str, field: &str) -> Result<T> {
    v.ok_or_else(|| {
        err(
            "HURRAY_ERR_STATE",
            format!("the {layout} layout needs `{field}`"),
        )
    })
}

/// `ERR_HURRAY_UNSUPPORTED` when a layout field is given for another layout.
fn only_for(given: bool, field: &str, layout: &str, for_layouts: &[&str]) -> Result<()> {
    if given && !for_layouts.contains(&layout) {
        return Err(err(
            "HURRAY_ERR_NOT_APPLICABLE",
            format!("`{field}` does not apply to the {layout} layout"),
        ));
    }
    Ok(())
}

/// A tile order from its name and strides (`nested`: the inner order, which may
/// also be `"tiled"`, returned as `None` for the caller to fill with the next level).
fn tile_order(
    name: &str,
    strides: &Option<Vec<i64>>,
    nested: bool,
    rank: usize,
) -> Result<Option<TileOrder>> {
    Ok(Some(match name {
        "row_major" => TileOrder::RowMajor,
        "column_major" => TileOrder::ColumnMajor,
        "strided" => {
            let s = strides
                .as_ref()
                .ok_or_else(|| bad("a strided tile order needs its strides"))?;
            if s.len() != rank {
                return Err(bad("tile strides need one value per dimension"));
            }
            TileOrder::Strided(s.clone())
        }
        "tiled" if nested => return Ok(None),
        o => return Err(bad(format!("unknown tile order {o:?}"))),
    }))
}

/// The tiling levels (outermost first) as one nested `Tiling`.
fn tiling_of(levels: &[TileLevel], rank: usize) -> Result<Tiling> {
    let mut next: Option<Tiling> = None;
    for (i, level) in levels.iter().enumerate().rev() {
        let tile_shape = shape_in(&level.shape)?;
        let outer = tile_order(&level.outer, &level.outer_strides, false, rank)?
            .ok_or_else(|| bad("an outer tile order cannot be \"tiled\""))?;
        let inner = match tile_order(&level.inner, &level.inner_strides, true, rank)? {
            Some(o) => {
                if next.is_some() {
                    return Err(bad(format!(
                        "tiling level {i} is followed by another level, so its inner order must be \"tiled\""
                    )));
                }
                o
            }
            None => TileOrder::Tiled(Box::new(next.take().ok_or_else(|| {
                err(
                    "HURRAY_ERR_STATE",
                    format!(
                        "tiling level {i} has inner order \"tiled\" but no level {} follows",
                        i + 1
                    ),
                )
            })?)),
        };
        next = Some(Tiling {
            tile_shape,
            outer,
            inner,
        });
    }
    needs(next, "tiled", "tiling")
}

/// The layout named `name` with its fields from `spec`.
fn layout_of(spec: &DescriptorSpec, name: &str, rank: usize) -> Result<Layout> {
    only_for(spec.strides.is_some(), "strides", name, &["strided"])?;
    only_for(spec.morton_bits.is_some(), "mortonBits", name, &["morton"])?;
    only_for(
        spec.nnz.is_some(),
        "nnz",
        name,
        &["coo", "csr", "csc", "csf"],
    )?;
    only_for(spec.coo_sorted.is_some(), "cooSorted", name, &["coo"])?;
    only_for(
        spec.csf_mode_order.is_some(),
        "csfModeOrder",
        name,
        &["csf"],
    )?;
    only_for(spec.tiling.is_some(), "tiling", name, &["tiled"])?;
    only_for(
        spec.block_paged.is_some(),
        "blockPaged",
        name,
        &["block_paged"],
    )?;
    only_for(spec.hilbert.is_some(), "hilbert", name, &["hilbert"])?;
    only_for(
        spec.composite.is_some(),
        "composite",
        name,
        &["composite_head"],
    )?;
    let nnz = || -> Result<u64> { u64_of("nnz", needs(spec.nnz, name, "nnz")?) };
    Ok(match name {
        "row_major" => Layout::RowMajor,
        "column_major" => Layout::ColumnMajor,
        "strided" => Layout::Strided {
            strides: needs(spec.strides.clone(), name, "strides")?,
        },
        "tiled" => Layout::Tiled(tiling_of(spec.tiling.as_deref().unwrap_or(&[]), rank)?),
        "morton" => Layout::Morton {
            bits: needs(spec.morton_bits.clone(), name, "mortonBits")?,
        },
        "hilbert" => {
            let h = needs(spec.hilbert.as_ref(), name, "hilbert")?;
            Layout::Hilbert {
                order: h.order,
                rank: h.rank,
            }
        }
        "coo" => Layout::Coo {
            nnz: nnz()?,
            is_sorted: spec.coo_sorted.unwrap_or(false),
        },
        "csr" => Layout::Csr { nnz: nnz()? },
        "csc" => Layout::Csc { nnz: nnz()? },
        "csf" => Layout::Csf {
            nnz: nnz()?,
            mode_order: needs(spec.csf_mode_order.clone(), name, "csfModeOrder")?,
        },
        "block_paged" => {
            let p = needs(spec.block_paged.as_ref(), name, "blockPaged")?;
            let kv_role = match p.kv_role.as_str() {
                "key" => 0,
                "value" => 1,
                "fused" => 2,
                r => return Err(bad(format!("unknown kvRole {r:?}"))),
            };
            Layout::BlockPaged(
                HurrayBlockPaged {
                    page_size: p.page_size,
                    num_pages: u64_of("numPages", p.num_pages)?,
                    paged_axis: p.paged_axis.unwrap_or(0),
                    num_seqs: p.num_seqs,
                    layer_index: p.layer_index.unwrap_or(u32::MAX),
                    kv_role,
                    block_table_index_type: u8::from(p.index64),
                }
                .to_model()
                .map_err(ffi)?,
            )
        }
        "composite_head" => {
            let c = needs(spec.composite.as_ref(), name, "composite")?;
            let composition_rule = COMPOSITION_RULES
                .iter()
                .find(|r| r.name == c.rule)
                .map(|r| r.tag)
                .ok_or_else(|| bad(format!("unknown composition rule {:?}", c.rule)))?;
            let combine_op = match c.combine.as_deref().unwrap_or("none") {
                "none" => 0,
                "replace" => 1,
                "add" => 2,
                o => return Err(bad(format!("unknown combine op {o:?}"))),
            };
            Layout::CompositeHead(
                HurrayCompositeHead {
                    member_count: c.member_count,
                    composition_rule,
                    combine_op,
                }
                .to_model()
                .map_err(ffi)?,
            )
        }
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

/// The `scale_type_tag` of a quantization spec's `scaleType` (0: none given).
fn scale_type_of(name: Option<&str>) -> Result<u8> {
    match name.map(element_type_of).transpose()? {
        Some(ElementType::Float16) => Ok(ScaleType::F16.tag()),
        Some(ElementType::Bfloat16) => Ok(ScaleType::Bf16.tag()),
        Some(ElementType::Float32) => Ok(ScaleType::F32.tag()),
        Some(t) => Err(bad(format!(
            "scaleType {:?} is not float16, bfloat16 or float32",
            t.name()
        ))),
        None => Ok(0),
    }
}

/// The quantization section of a spec, built by the library's conversion
/// (`HurrayQuantization::to_model`) from the scheme's tag and fields.
fn quantization_of(q: &QuantizationSpec) -> Result<Quantization> {
    let scheme_tag = SCHEMES
        .iter()
        .find(|r| r.name == q.scheme)
        .map(|r| r.tag)
        .ok_or_else(|| bad(format!("unknown quantization scheme {:?}", q.scheme)))?;
    let scale_type_tag = scale_type_of(q.scale_type.as_deref())?;
    // Per-channel and per-block affine (tags 2 and 3) need the scale type.
    if matches!(scheme_tag, 2 | 3) && scale_type_tag == 0 {
        return Err(bad("this quantization scheme needs its scaleType"));
    }
    HurrayQuantization {
        scale: q.scale.unwrap_or(0.0) as f32,
        zero_point: q.zero_point.unwrap_or(0),
        axis: q.axis.unwrap_or(0),
        block_size: q.block_size.unwrap_or(0),
        scale_buffer_index: q.scale_buffer_index.unwrap_or(HURRAY_NO_BUFFER),
        zero_point_buffer_index: q.zero_point_buffer_index.unwrap_or(HURRAY_NO_BUFFER),
        scheme_tag,
        scale_type_tag,
        ..HurrayQuantization::default()
    }
    .to_model(&[])
    .map_err(ffi)
}

#[napi]
impl Descriptor {
    /// Builds a descriptor from a plain object (`DescriptorSpec`): dtype, shape,
    /// layout and its fields, the buffer table (sizes in bytes), and the optional
    /// quantization, shard, statistics and member-role sections. The library checks
    /// every rule of the format.
    ///
    /// Throws: `ERR_HURRAY_INVALID_ARGUMENT` (unknown names, bad numbers),
    /// `ERR_HURRAY_UNSUPPORTED` (extension layouts: use their encoded bytes; a
    /// layout field given for another layout), `ERR_HURRAY_STATE` (a field the
    /// layout needs is missing), `ERR_HURRAY_FORMAT` (a rule of the format; the
    /// message names it).
    #[napi(factory)]
    pub fn build(spec: DescriptorSpec) -> Result<Descriptor> {
        let element_type = element_type_of(&spec.dtype)?;
        let shape = shape_in(&spec.shape)?;
        let layout_name = spec.layout.as_deref().unwrap_or("row_major");
        let layout = layout_of(&spec, layout_name, shape.len())?;
        let buffers = spec
            .buffers
            .iter()
            .enumerate()
            .map(|(i, e)| {
                let byte_size = u64_of(&format!("buffers[{i}].byteSize"), e.byte_size)?;
                let class = u8::try_from(e.memory_class.unwrap_or(0))
                    .map_err(|_| bad("memoryClass is a byte"))?;
                let device_tag = match e.device.as_deref() {
                    None => DeviceTag::Cpu.tag(),
                    Some(name) => hurray_core::tables::DEVICES
                        .iter()
                        .find(|r| r.name == name)
                        .map(|r| r.tag)
                        .ok_or_else(|| {
                            bad(format!("buffers[{i}].device {name:?} is not a device name"))
                        })?,
                };
                HurrayBufferEntry {
                    byte_size,
                    alignment: e.alignment.unwrap_or(if byte_size == 0 { 1 } else { 64 }),
                    device_tag,
                    sync_mode: SyncMode::default().tag(),
                    memory_class: class,
                }
                .to_model()
                .map_err(ffi)
            })
            .collect::<Result<Vec<_>>>()?;
        let shard = match &spec.shard {
            Some(s) => {
                let parent =
                    shape_in(&s.parent_shape.iter().map(|&x| x as f64).collect::<Vec<_>>())?;
                let offset = shape_in(&s.offset.iter().map(|&x| x as f64).collect::<Vec<_>>())?;
                if parent.len() != offset.len() {
                    return Err(bad("shard parentShape and offset differ in length"));
                }
                Some(ShardModel {
                    parent_shape: parent,
                    offset,
                })
            }
            None => None,
        };
        let statistics = match &spec.statistics {
            Some(s) => Some(
                HurrayStatistics {
                    computed_mask: s.computed_mask,
                    nnz: u64_of("statistics.nnz", s.nnz)?,
                    sparsity_ratio: s.sparsity,
                    value_min: s.min,
                    value_max: s.max,
                    value_abs_max: s.absmax,
                    value_mean: s.mean,
                    value_stddev: s.stddev,
                    nm_n: u8::try_from(s.nm_n).map_err(|_| bad("nmN is a byte"))?,
                    nm_m: u8::try_from(s.nm_m).map_err(|_| bad("nmM is a byte"))?,
                    has_nan: s.has_nan as u8,
                    has_inf: s.has_inf as u8,
                }
                .to_model(),
            ),
            None => None,
        };
        let composite_member = match spec.member_role.as_deref() {
            Some("correction") => Some(MemberRole::Correction),
            Some("base") => Some(MemberRole::Base),
            Some(r) => return Err(bad(format!("unknown member role {r:?}"))),
            None => None,
        };
        let model = TensorDescriptor {
            version_minor: 0,
            element_type,
            shape,
            byte_offset: match spec.byte_offset {
                Some(o) => u64_of("byteOffset", o)?,
                None => 0,
            },
            layout,
            buffers,
            quantization: spec
                .quantization
                .as_ref()
                .map(quantization_of)
                .transpose()?,
            shard,
            statistics,
            extension_type: None,
            composite_member,
        };
        Ok(Descriptor::from_handle(
            HurrayDescriptor::new(Arc::new(model)).map_err(ffi)?,
        ))
    }

    /// The composite-head fields (layout `composite_head`), or `null`.
    #[napi(getter)]
    pub fn composite(&self) -> Result<Option<CompositeHead>> {
        let Layout::CompositeHead(h) = &self.model()?.layout else {
            return Ok(None);
        };
        let rule = match h.rule {
            CompositionRule::Partition => "partition",
            CompositionRule::Overlay => "overlay",
            CompositionRule::Group => "group",
            CompositionRule::Private(_) => "private",
        };
        let combine = match h.combine_op {
            CombineOp::None => "none",
            CombineOp::Replace => "replace",
            CombineOp::Add => "add",
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
        let Layout::Tiled(t) = &self.model()?.layout else {
            return Ok(None);
        };
        let name = |o: &TileOrder| match o {
            TileOrder::RowMajor => "row_major",
            TileOrder::ColumnMajor => "column_major",
            TileOrder::Strided(_) => "strided",
            TileOrder::Tiled(_) => "tiled",
        };
        let strides = |o: &TileOrder| match o {
            TileOrder::Strided(s) => Some(s.clone()),
            _ => None,
        };
        let mut out = Vec::new();
        let mut level = Some(t);
        while let Some(l) = level {
            out.push(TileLevel {
                shape: l.tile_shape.iter().map(|&x| x as f64).collect(),
                outer: name(&l.outer).into(),
                outer_strides: strides(&l.outer),
                inner: name(&l.inner).into(),
                inner_strides: strides(&l.inner),
            });
            level = match &l.inner {
                TileOrder::Tiled(next) => Some(next),
                _ => None,
            };
        }
        Ok(Some(out))
    }

    /// The block-paged fields, or `null`.
    #[napi(getter)]
    pub fn block_paged(&self) -> Result<Option<BlockPaged>> {
        let Layout::BlockPaged(f) = &self.model()?.layout else {
            return Ok(None);
        };
        Ok(Some(BlockPaged {
            page_size: f.page_size,
            num_pages: f.num_pages as f64,
            num_seqs: f.num_seqs,
            paged_axis: Some(f.paged_axis),
            layer_index: (f.layer_index != u32::MAX).then_some(f.layer_index),
            kv_role: match f.kv_role {
                KvRole::Key => "key",
                KvRole::Value => "value",
                KvRole::Fused => "fused",
            }
            .into(),
            index64: f.block_table_index_type == IndexType::U64,
        }))
    }

    /// The Hilbert fields, or `null`.
    #[napi(getter)]
    pub fn hilbert(&self) -> Result<Option<Hilbert>> {
        Ok(match &self.model()?.layout {
            Layout::Hilbert { order, rank } => Some(Hilbert {
                order: *order,
                rank: *rank,
            }),
            _ => None,
        })
    }

    /// Bits per dimension of a Morton layout, or `null`.
    #[napi(getter)]
    pub fn morton_bits(&self) -> Result<Option<Vec<u32>>> {
        Ok(match &self.model()?.layout {
            Layout::Morton { bits } => Some(bits.clone()),
            _ => None,
        })
    }

    /// Whether COO coordinates are sorted, or `null` for other layouts.
    #[napi(getter)]
    pub fn coo_sorted(&self) -> Result<Option<bool>> {
        Ok(match &self.model()?.layout {
            Layout::Coo { is_sorted, .. } => Some(*is_sorted),
            _ => None,
        })
    }

    /// The mode order of a CSF layout, or `null`.
    #[napi(getter)]
    pub fn csf_mode_order(&self) -> Result<Option<Vec<u32>>> {
        Ok(match &self.model()?.layout {
            Layout::Csf { mode_order, .. } => Some(mode_order.clone()),
            _ => None,
        })
    }

    /// The member role of an overlay member (`"base"` or `"correction"`), or `null`.
    #[napi(getter)]
    pub fn member_role(&self) -> Result<Option<String>> {
        Ok(self.model()?.composite_member.map(|r| {
            match r {
                MemberRole::Base => "base",
                MemberRole::Correction => "correction",
            }
            .into()
        }))
    }
}
