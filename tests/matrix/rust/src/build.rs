//! Case model -> hurray-core descriptors and hurray-io items (the Rust producer's
//! side), and the expected descriptor the Rust consumer compares with.

use crate::case::{
    BufferSpec, CompositeSpec, Item, KvSpec, LayoutSpec, QuantSpec, StatsSpec, TensorSpec,
    TileOrderSpec, TileSpec,
};
use hurray_core::{
    BlockPaged, BufferHandle, CombineOp, CompositeHead, CompositionRule, DeviceTag, ElementType,
    IndexType, KvRole, Layout, MemberRole, MemoryClass, Quantization, ScaleType, Scheme, Shard,
    Statistics, SyncMode, TensorDescriptor, TileOrder, Tiling,
};
use hurray_io::file::KvArray;
use hurray_io::{Buffer, Composite, KvValue, Tensor};

/// The element type named `name`.
pub fn dtype(name: &str) -> Result<ElementType, String> {
    ElementType::from_name(name).ok_or_else(|| format!("unknown dtype {name:?}"))
}

fn tiling(levels: &[TileSpec]) -> Result<Tiling, String> {
    let (first, rest) = levels
        .split_first()
        .ok_or("a tiled layout needs a tile line")?;
    let order = |o: &TileOrderSpec| -> Result<TileOrder, String> {
        Ok(match o {
            TileOrderSpec::RowMajor => TileOrder::RowMajor,
            TileOrderSpec::ColMajor => TileOrder::ColumnMajor,
            TileOrderSpec::Strided(s) => TileOrder::Strided(s.clone()),
            TileOrderSpec::Tiled => TileOrder::Tiled(Box::new(tiling(rest)?)),
        })
    };
    Ok(Tiling {
        tile_shape: first.shape.clone(),
        outer: order(&first.outer)?,
        inner: order(&first.inner)?,
    })
}

/// The layout of a tensor spec.
pub fn layout(l: &LayoutSpec) -> Result<Layout, String> {
    Ok(match l {
        LayoutSpec::RowMajor => Layout::RowMajor,
        LayoutSpec::ColMajor => Layout::ColumnMajor,
        LayoutSpec::Strided(s) => Layout::Strided { strides: s.clone() },
        LayoutSpec::Tiled(levels) => Layout::Tiled(tiling(levels)?),
        LayoutSpec::Morton(b) => Layout::Morton { bits: b.clone() },
        LayoutSpec::Hilbert(order, rank) => Layout::Hilbert {
            order: *order,
            rank: *rank,
        },
        LayoutSpec::Coo(nnz, is_sorted) => Layout::Coo {
            nnz: *nnz,
            is_sorted: *is_sorted,
        },
        LayoutSpec::Csr(nnz) => Layout::Csr { nnz: *nnz },
        LayoutSpec::Csc(nnz) => Layout::Csc { nnz: *nnz },
        LayoutSpec::Csf(nnz, m) => Layout::Csf {
            nnz: *nnz,
            mode_order: m.clone(),
        },
        LayoutSpec::BlockPaged(b) => Layout::BlockPaged(BlockPaged {
            page_size: b.page_size,
            num_pages: b.num_pages,
            paged_axis: 0,
            num_seqs: b.num_seqs,
            kv_role: [KvRole::Key, KvRole::Value, KvRole::Fused][usize::from(b.kv_role)],
            layer_index: b.layer_index,
            block_table_index_type: if b.index64 {
                IndexType::U64
            } else {
                IndexType::U32
            },
        }),
    })
}

fn handle(b: &BufferSpec) -> Result<BufferHandle, String> {
    Ok(BufferHandle {
        byte_size: b.size,
        alignment: b.align,
        device: DeviceTag::Cpu,
        sync_mode: SyncMode::ProducerSynced,
        memory_class: MemoryClass::from_tag(b.memory).ok_or("bad memory class")?,
    })
}

fn scale_type(t: u8) -> ScaleType {
    match t {
        1 => ScaleType::F16,
        2 => ScaleType::Bf16,
        _ => ScaleType::F32,
    }
}

/// The quantization section of a spec.
pub fn quantization(q: &QuantSpec) -> Quantization {
    match *q {
        QuantSpec::PerTensor(scale, zero_point) => Scheme::PerTensor { scale, zero_point },
        QuantSpec::PerChannel(axis, s, z) => Scheme::PerChannel {
            axis,
            scale_buffer_index: s,
            zero_point_buffer_index: z,
            scale_type: ScaleType::F32,
        },
        QuantSpec::PerBlock(axis, block_size, s, z, t) => Scheme::PerBlock {
            axis,
            block_size,
            scale_buffer_index: s,
            zero_point_buffer_index: z,
            scale_type: scale_type(t),
        },
        QuantSpec::Nf4(axis, block_size, s) => Scheme::Nf4 {
            axis,
            block_size,
            scale_buffer_index: s,
        },
        QuantSpec::Mxfp(axis, block_size, s) => Scheme::Mxfp {
            axis,
            block_size,
            scale_buffer_index: s,
        },
    }
    .into()
}

/// The statistics section of a spec.
pub fn statistics(s: &StatsSpec) -> Statistics {
    Statistics {
        computed_mask: s.mask,
        nnz: s.nnz,
        sparsity_ratio: s.sparsity,
        value_min: s.min,
        value_max: s.max,
        value_abs_max: s.absmax,
        value_mean: s.mean,
        value_stddev: s.stddev,
        nm_n: s.nm_n,
        nm_m: s.nm_m,
        has_nan: s.has_nan,
        has_inf: s.has_inf,
    }
}

fn shard(s: &Option<(Vec<u64>, Vec<u64>)>) -> Option<Shard> {
    s.as_ref().map(|(p, o)| Shard {
        parent_shape: p.clone(),
        offset: o.clone(),
    })
}

/// The descriptor a tensor spec describes (validated).
pub fn tensor_descriptor(t: &TensorSpec) -> Result<TensorDescriptor, String> {
    let d = TensorDescriptor {
        version_minor: 0,
        element_type: dtype(&t.dtype)?,
        shape: t.shape.clone(),
        byte_offset: t.offset,
        layout: layout(&t.layout)?,
        buffers: t.buffers.iter().map(handle).collect::<Result<_, _>>()?,
        quantization: t.quant.as_ref().map(quantization),
        shard: shard(&t.shard),
        statistics: t.stats.as_ref().map(statistics),
        extension_type: None,
        composite_member: t.role.map(|r| {
            if r == 1 {
                MemberRole::Base
            } else {
                MemberRole::Correction
            }
        }),
    };
    d.validate()
        .map_err(|e| format!("tensor {:?}: {e}", t.name))?;
    Ok(d)
}

/// The descriptor of a composite head spec (validated).
pub fn head_descriptor(c: &CompositeSpec) -> Result<TensorDescriptor, String> {
    let d = TensorDescriptor {
        version_minor: 0,
        element_type: dtype(&c.dtype)?,
        shape: c.shape.clone(),
        byte_offset: 0,
        layout: Layout::CompositeHead(CompositeHead {
            rule: match c.rule {
                1 => CompositionRule::Partition,
                2 => CompositionRule::Overlay,
                _ => CompositionRule::Group,
            },
            combine_op: [CombineOp::None, CombineOp::Replace, CombineOp::Add][usize::from(c.op)],
            member_count: c.members.len() as u32,
        }),
        buffers: Vec::new(),
        quantization: None,
        shard: shard(&c.shard),
        statistics: c.stats.as_ref().map(statistics),
        extension_type: None,
        composite_member: None,
    };
    d.validate()
        .map_err(|e| format!("composite {:?}: {e}", c.name))?;
    Ok(d)
}

/// The hurray-io item of a spec, its buffers copied into aligned memory.
pub fn item(it: &Item) -> Result<hurray_io::Item, String> {
    Ok(match it {
        Item::Tensor(t) => hurray_io::Item::Tensor(
            Tensor::new(
                tensor_descriptor(t)?,
                t.buffers
                    .iter()
                    .map(|b| Buffer::copy_from(&b.bytes))
                    .collect(),
            )
            .map_err(|e| format!("tensor {:?}: {e}", t.name))?,
        ),
        Item::Composite(c) => hurray_io::Item::Composite(Composite {
            head: Tensor::new(head_descriptor(c)?, Vec::new())
                .map_err(|e| format!("composite {:?}: {e}", c.name))?,
            members: c.members.iter().map(item).collect::<Result<_, _>>()?,
        }),
    })
}

/// The hurray-io KV value of a spec.
pub fn kv(v: &KvSpec) -> KvValue {
    match v {
        KvSpec::String(s) => KvValue::String(s.clone()),
        KvSpec::Int64(i) => KvValue::Int64(*i),
        KvSpec::UInt64(u) => KvValue::UInt64(*u),
        KvSpec::Float64(f) => KvValue::Float64(*f),
        KvSpec::Bool(b) => KvValue::Bool(*b),
        KvSpec::Bytes(b) => KvValue::Bytes(b.clone()),
        KvSpec::Strings(v) => KvValue::Array(KvArray::String(v.clone())),
        KvSpec::Int64s(v) => KvValue::Array(KvArray::Int64(v.clone())),
        KvSpec::UInt64s(v) => KvValue::Array(KvArray::UInt64(v.clone())),
        KvSpec::Float64s(v) => KvValue::Array(KvArray::Float64(v.clone())),
        KvSpec::Bools(v) => KvValue::Array(KvArray::Bool(v.clone())),
        KvSpec::Blobs(v) => KvValue::Array(KvArray::Bytes(v.clone())),
    }
}
