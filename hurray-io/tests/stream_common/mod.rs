//! Builders shared by the stream tests: one valid tensor of every layout family, the
//! quantization schemes, empty tensors, composites of every rule (nested too), a
//! deterministic RNG, and checks of received items.
#![allow(dead_code)]

use hurray_core::layout::{TileOrder, Tiling};
use hurray_core::{
    BlockPaged, BufferHandle, CombineOp, CompositeHead, CompositionRule, DeviceTag, ElementType,
    IndexType, KvRole, Layout, MemberRole, Quantization, ScaleType, Scheme, Shard, SyncMode,
    TensorDescriptor,
};
use hurray_io::{Buffer, Composite, Item, Tensor, BUFFER_ALIGN};

/// SplitMix64: small, deterministic, good enough for test inputs.
pub struct Rng(pub u64);

impl Rng {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in `0..n` (n > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + self.below(hi - lo + 1)
    }
}

/// Patterned bytes, different per `seed`.
pub fn pattern(n: usize, seed: u64) -> Vec<u8> {
    let mut r = Rng(seed.wrapping_mul(31).wrapping_add(7));
    (0..n).map(|_| r.next_u64() as u8).collect()
}

/// A tensor over `d` whose buffers hold patterned bytes of exactly `byte_size`,
/// except where the layout or scheme gives buffer contents rules (index, pointer
/// and parameter buffers): those hold valid contents of the same sizes.
pub fn filled(d: TensorDescriptor, seed: u64) -> Tensor {
    let mut bytes: Vec<Vec<u8>> = d
        .buffers
        .iter()
        .enumerate()
        .map(|(i, h)| pattern(h.byte_size as usize, seed * 131 + i as u64))
        .collect();
    make_content_valid(&d, &mut bytes);
    let bufs = bytes.iter().map(|b| Buffer::copy_from(b)).collect();
    Tensor::new(d, bufs).expect("buffers match the descriptor")
}

fn put_u64s(b: &mut [u8], v: impl Iterator<Item = u64>) {
    for (c, x) in b.chunks_exact_mut(8).zip(v) {
        c.copy_from_slice(&x.to_le_bytes());
    }
}

/// `children` nodes spread over `parents` as evenly as possible: the pointer array
/// (`parents + 1` entries) and each node's coordinate (0, 1, ... inside its parent).
fn spread(parents: u64, children: u64) -> (Vec<u64>, Vec<u64>) {
    let (each, extra) = children
        .checked_div(parents)
        .map_or((0, 0), |each| (each, children % parents));
    let mut ptr = vec![0];
    let mut crd = Vec::new();
    for k in 0..parents {
        let n = each + u64::from(k < extra);
        crd.extend(0..n);
        ptr.push(ptr.last().unwrap() + n);
    }
    (ptr, crd)
}

/// Rewrites the buffers of `d` that carry content rules (`hurray_core::content`)
/// with valid contents of the sizes the descriptor gives.
pub fn make_content_valid(d: &TensorDescriptor, bufs: &mut [Vec<u8>]) {
    match &d.layout {
        Layout::Coo { nnz, .. } => {
            // Elements at row-major linear positions 0, 1, ...: distinct and sorted.
            let mut idx = Vec::new();
            for i in 0..*nnz {
                let mut rest = i;
                let mut tuple = vec![0; d.shape.len()];
                for k in (0..d.shape.len()).rev() {
                    tuple[k] = rest % d.shape[k];
                    rest /= d.shape[k];
                }
                idx.extend(tuple);
            }
            put_u64s(&mut bufs[1], idx.into_iter());
        }
        Layout::Csr { nnz } | Layout::Csc { nnz } => {
            let major = if matches!(d.layout, Layout::Csr { .. }) {
                d.shape[0]
            } else {
                d.shape[1]
            };
            let (ptr, crd) = spread(major, *nnz);
            put_u64s(&mut bufs[1], crd.into_iter());
            put_u64s(&mut bufs[2], ptr.into_iter());
        }
        Layout::Csf { mode_order, .. } => {
            let mut parents = 1;
            for level in 0..mode_order.len() {
                let nodes = bufs[2 * level + 2].len() as u64 / 8;
                let (ptr, crd) = spread(parents, nodes);
                put_u64s(&mut bufs[2 * level + 1], ptr.into_iter());
                put_u64s(&mut bufs[2 * level + 2], crd.into_iter());
                parents = nodes;
            }
        }
        Layout::BlockPaged(p) => {
            let w = p.block_table_index_type.width() as usize;
            let pages = (bufs[1].len() / w) as u64;
            let (ptr, _) = spread(u64::from(p.num_seqs), pages);
            let table = (0..pages).map(|k| k % p.num_pages.max(1));
            for (c, v) in bufs[1].chunks_exact_mut(w).zip(table) {
                c.copy_from_slice(&v.to_le_bytes()[..w]);
            }
            for (c, v) in bufs[2].chunks_exact_mut(w).zip(ptr) {
                c.copy_from_slice(&v.to_le_bytes()[..w]);
            }
        }
        _ => {}
    }
    if let Some(q) = &d.quantization {
        let (scale, zp, one): (u32, Option<u32>, &[u8]) = match &q.scheme {
            Scheme::PerChannel {
                scale_buffer_index,
                zero_point_buffer_index,
                scale_type,
                ..
            }
            | Scheme::PerBlock {
                scale_buffer_index,
                zero_point_buffer_index,
                scale_type,
                ..
            } => (
                *scale_buffer_index,
                *zero_point_buffer_index,
                match scale_type {
                    ScaleType::F16 => &[0x00, 0x3C],
                    ScaleType::Bf16 => &[0x80, 0x3F],
                    ScaleType::F32 => &[0, 0, 0x80, 0x3F],
                },
            ),
            Scheme::Nf4 {
                scale_buffer_index, ..
            } => (*scale_buffer_index, None, &[0, 0, 0x80, 0x3F]),
            Scheme::Mxfp {
                scale_buffer_index, ..
            } => (*scale_buffer_index, None, &[0x7F]),
            _ => return,
        };
        // Scales of 1.0 and zero points of 0 (valid for every storage type).
        let shared = zp == Some(scale);
        let s = &mut bufs[scale as usize];
        let n = if shared {
            s.len() / (one.len() + 4)
        } else {
            s.len() / one.len()
        };
        s.fill(0);
        for c in s[..n * one.len()].chunks_exact_mut(one.len()) {
            c.copy_from_slice(one);
        }
        if let Some(z) = zp.filter(|_| !shared) {
            bufs[z as usize].fill(0);
        }
    }
    if d.element_type == ElementType::Float8E8m0 {
        bufs[0].fill(0x7F);
    }
}

fn base(t: ElementType, shape: &[u64], layout: Layout, sizes: &[u64]) -> TensorDescriptor {
    TensorDescriptor {
        version_minor: 0,
        element_type: t,
        shape: shape.to_vec(),
        byte_offset: 0,
        layout,
        buffers: sizes.iter().map(|&s| BufferHandle::cpu(s)).collect(),
        quantization: None,
        shard: None,
        statistics: None,
        extension_type: None,
        composite_member: None,
    }
}

/// One valid descriptor per layout family, plus quantized, empty, scalar and
/// device-buffer variants, each with a name.
pub fn descriptors() -> Vec<(&'static str, TensorDescriptor)> {
    use ElementType::*;
    let mut v = vec![
        (
            "row_major",
            TensorDescriptor::dense(Float32, &[3, 4]).unwrap(),
        ),
        (
            "column_major",
            base(Float64, &[2, 3], Layout::ColumnMajor, &[48]),
        ),
        (
            "strided",
            base(
                Float32,
                &[3, 4],
                Layout::Strided {
                    strides: vec![1, 3],
                },
                &[48],
            ),
        ),
        (
            "tiled",
            base(
                Float32,
                &[4, 4],
                Layout::Tiled(Tiling {
                    tile_shape: vec![2, 2],
                    outer: TileOrder::RowMajor,
                    inner: TileOrder::ColumnMajor,
                }),
                &[64],
            ),
        ),
        (
            "morton",
            base(Float32, &[4, 4], Layout::Morton { bits: vec![2, 2] }, &[64]),
        ),
        (
            "coo",
            base(
                Float32,
                &[4, 4],
                Layout::Coo {
                    nnz: 3,
                    is_sorted: true,
                },
                &[12, 48],
            ),
        ),
        (
            "csr",
            base(Float32, &[3, 3], Layout::Csr { nnz: 2 }, &[8, 16, 32]),
        ),
        (
            "csc",
            base(Float16, &[3, 5], Layout::Csc { nnz: 2 }, &[4, 16, 48]),
        ),
        (
            "csf",
            base(
                Float32,
                &[2, 2, 2],
                Layout::Csf {
                    nnz: 2,
                    mode_order: vec![0, 1, 2],
                },
                &[8, 16, 8, 16, 16, 24, 16],
            ),
        ),
        (
            "block_paged",
            base(
                Float16,
                &[4, 2, 2],
                Layout::BlockPaged(BlockPaged {
                    page_size: 2,
                    num_pages: 2,
                    paged_axis: 0,
                    num_seqs: 1,
                    kv_role: KvRole::Key,
                    layer_index: 3,
                    block_table_index_type: IndexType::U32,
                }),
                &[32, 8, 8],
            ),
        ),
        (
            "hilbert",
            base(Int32, &[4, 4], Layout::Hilbert { order: 2, rank: 2 }, &[64]),
        ),
        ("empty", TensorDescriptor::dense(Float32, &[0, 4]).unwrap()),
        ("scalar", TensorDescriptor::dense(Float32, &[]).unwrap()),
        (
            "large_odd",
            TensorDescriptor::dense(Uint8, &[3, 1000, 7]).unwrap(),
        ),
    ];
    let mut q = TensorDescriptor::dense(Int8, &[4, 4]).unwrap();
    q.quantization = Some(Quantization::from(Scheme::PerTensor {
        scale: 0.5,
        zero_point: -3,
    }));
    v.push(("quant_per_tensor", q));
    let mut q = base(Int4, &[4, 64], Layout::RowMajor, &[128, 16]);
    q.quantization = Some(Quantization::from(Scheme::PerBlock {
        axis: 1,
        block_size: 32,
        scale_buffer_index: 1,
        zero_point_buffer_index: None,
        scale_type: ScaleType::F16,
    }));
    v.push(("quant_per_block_int4", q));
    let mut q = base(Uint4, &[2, 64], Layout::RowMajor, &[64, 8]);
    q.quantization = Some(Quantization::from(Scheme::Nf4 {
        axis: 1,
        block_size: 64,
        scale_buffer_index: 1,
    }));
    v.push(("quant_nf4", q));
    let mut q = base(Int8, &[3, 8], Layout::RowMajor, &[24, 12, 12]);
    q.quantization = Some(Quantization::from(Scheme::PerChannel {
        axis: 0,
        scale_buffer_index: 1,
        zero_point_buffer_index: Some(2),
        scale_type: ScaleType::F32,
    }));
    v.push(("quant_per_channel", q));
    let mut e = base(Float32, &[0], Layout::RowMajor, &[0]);
    e.buffers[0].alignment = 1;
    v.push(("empty_align_1", e));
    let mut e = TensorDescriptor::dense(Float32, &[0]).unwrap();
    e.quantization = None;
    v.push(("empty_1d", e));
    v.push(("cuda_4096", cuda(&[16, 9], SyncMode::ProducerSynced, 4096)));
    v.push(("cuda_128", cuda(&[3, 5], SyncMode::ProducerSynced, 128)));
    v
}

/// A row-major f32 tensor on CUDA with this sync mode and alignment.
pub fn cuda(shape: &[u64], sync: SyncMode, alignment: u32) -> TensorDescriptor {
    let mut d = TensorDescriptor::dense(ElementType::Float32, shape).unwrap();
    d.buffers[0].device = DeviceTag::Cuda;
    d.buffers[0].sync_mode = sync;
    d.buffers[0].alignment = alignment;
    d
}

/// One tensor per entry of [`descriptors`].
pub fn tensors() -> Vec<(&'static str, Tensor)> {
    descriptors()
        .into_iter()
        .enumerate()
        .map(|(i, (n, d))| (n, filled(d, i as u64 + 1)))
        .collect()
}

/// A composite head descriptor.
pub fn head(
    t: ElementType,
    shape: &[u64],
    rule: CompositionRule,
    op: CombineOp,
    n: u32,
) -> TensorDescriptor {
    base(
        t,
        shape,
        Layout::CompositeHead(CompositeHead {
            rule,
            combine_op: op,
            member_count: n,
        }),
        &[],
    )
}

/// `d` as the shard at `offset` of a parent of shape `parent`.
pub fn shard(mut d: TensorDescriptor, parent: &[u64], offset: &[u64]) -> TensorDescriptor {
    d.shard = Some(Shard {
        parent_shape: parent.to_vec(),
        offset: offset.to_vec(),
    });
    d
}

fn dense(t: ElementType, shape: &[u64]) -> TensorDescriptor {
    TensorDescriptor::dense(t, shape).unwrap()
}

/// Partition [8,8] f32 of two [8,4] halves.
pub fn partition() -> Composite {
    use ElementType::Float32;
    Composite {
        head: filled(
            head(
                Float32,
                &[8, 8],
                CompositionRule::Partition,
                CombineOp::None,
                2,
            ),
            0,
        ),
        members: vec![
            Item::Tensor(filled(shard(dense(Float32, &[8, 4]), &[8, 8], &[0, 0]), 11)),
            Item::Tensor(filled(shard(dense(Float32, &[8, 4]), &[8, 8], &[0, 4]), 12)),
        ],
    }
}

/// Overlay [4,4] f16: a dense base and a COO correction.
pub fn overlay() -> Composite {
    use ElementType::Float16;
    let mut base_m = shard(dense(Float16, &[4, 4]), &[4, 4], &[0, 0]);
    base_m.composite_member = Some(MemberRole::Base);
    let mut corr = shard(
        base(
            Float16,
            &[2, 2],
            Layout::Coo {
                nnz: 2,
                is_sorted: false,
            },
            &[4, 32],
        ),
        &[4, 4],
        &[1, 1],
    );
    corr.composite_member = Some(MemberRole::Correction);
    Composite {
        head: filled(
            head(
                Float16,
                &[4, 4],
                CompositionRule::Overlay,
                CombineOp::Add,
                2,
            ),
            0,
        ),
        members: vec![
            Item::Tensor(filled(base_m, 21)),
            Item::Tensor(filled(corr, 22)),
        ],
    }
}

/// Group of heterogeneous members (sparse, quantized, empty).
pub fn group() -> Composite {
    let all = tensors();
    let pick = |name: &str| all.iter().find(|(n, _)| *n == name).unwrap().1.clone();
    Composite {
        head: filled(
            head(
                ElementType::Float32,
                &[1],
                CompositionRule::Group,
                CombineOp::None,
                4,
            ),
            0,
        ),
        members: vec![
            Item::Tensor(pick("csr")),
            Item::Tensor(pick("quant_per_block_int4")),
            Item::Tensor(pick("empty")),
            Item::Tensor(pick("hilbert")),
        ],
    }
}

/// Partition [8,8] whose first member is itself a partition ([8,4] of two [4,4]).
pub fn nested() -> Composite {
    use ElementType::Float32;
    let inner = Composite {
        head: filled(
            shard(
                head(
                    Float32,
                    &[8, 4],
                    CompositionRule::Partition,
                    CombineOp::None,
                    2,
                ),
                &[8, 8],
                &[0, 0],
            ),
            0,
        ),
        members: vec![
            Item::Tensor(filled(shard(dense(Float32, &[4, 4]), &[8, 4], &[0, 0]), 31)),
            Item::Tensor(filled(shard(dense(Float32, &[4, 4]), &[8, 4], &[4, 0]), 32)),
        ],
    };
    Composite {
        head: filled(
            head(
                Float32,
                &[8, 8],
                CompositionRule::Partition,
                CombineOp::None,
                2,
            ),
            0,
        ),
        members: vec![
            Item::Composite(inner),
            Item::Tensor(filled(shard(dense(Float32, &[8, 4]), &[8, 8], &[0, 4]), 33)),
        ],
    }
}

/// A group with no members (`member_count = 0`).
pub fn empty_group() -> Composite {
    Composite {
        head: filled(
            head(
                ElementType::Int8,
                &[2],
                CompositionRule::Group,
                CombineOp::None,
                0,
            ),
            0,
        ),
        members: Vec::new(),
    }
}

/// `levels` groups nested in each other around one small tensor.
pub fn deep_group(levels: u32) -> Composite {
    let mut item = Item::Tensor(filled(dense(ElementType::Int8, &[3]), 5));
    for _ in 0..levels {
        item = Item::Composite(Composite {
            head: filled(
                head(
                    ElementType::Int8,
                    &[3],
                    CompositionRule::Group,
                    CombineOp::None,
                    1,
                ),
                0,
            ),
            members: vec![item],
        });
    }
    match item {
        Item::Composite(c) => c,
        Item::Tensor(_) => panic!("levels must be > 0"),
    }
}

/// Every item kind: each tensor, then each composite.
pub fn all_items() -> Vec<Item> {
    let mut v: Vec<Item> = tensors()
        .into_iter()
        .map(|(_, t)| Item::Tensor(t))
        .collect();
    for c in [
        partition(),
        overlay(),
        group(),
        nested(),
        empty_group(),
        deep_group(8),
    ] {
        v.push(Item::Composite(c));
    }
    v
}

/// A smaller mix for exhaustive or many-times tests.
pub fn small_items() -> Vec<Item> {
    let all = tensors();
    let pick = |name: &str| all.iter().find(|(n, _)| *n == name).unwrap().1.clone();
    vec![
        Item::Tensor(pick("row_major")),
        Item::Composite(nested()),
        Item::Tensor(pick("empty")),
        Item::Tensor(pick("csr")),
        Item::Composite(empty_group()),
        Item::Tensor(pick("quant_per_tensor")),
    ]
}

/// Concatenates the raw encodings of `tensors` (descriptor, then buffers) without
/// any writer-side checks: for feeding invalid streams to readers.
pub fn raw_stream(tensors: &[&Tensor]) -> Vec<u8> {
    let mut out = Vec::new();
    for t in tensors {
        t.descriptor().encode_into(&mut out).unwrap();
        for b in t.buffers() {
            out.extend_from_slice(b.as_slice());
        }
    }
    out
}

/// Stream bytes of `items`, and for each tensor its (start, end) offsets and whether
/// it ends a top-level item.
pub struct Layouted {
    pub bytes: Vec<u8>,
    /// Offsets at which a top-level item ends (0 included).
    pub item_ends: Vec<usize>,
    /// Offsets of tensor boundaries inside an open composite.
    pub inner_boundaries: Vec<usize>,
}

/// Encodes items with the checking writer and records the boundaries.
pub fn layout_stream(items: &[Item]) -> Layouted {
    let mut w = hurray_io::StreamWriter::new(Vec::new());
    let mut item_ends = vec![0];
    let mut inner = Vec::new();
    for item in items {
        let start = w.position() as usize;
        w.write_item(item).unwrap();
        let mut pos = start;
        let mut tensor_ends = Vec::new();
        item.for_each_tensor(&mut |t| {
            pos += t.descriptor().encoded_len() + t.data_len() as usize;
            tensor_ends.push(pos);
        });
        assert_eq!(pos as u64, w.position());
        tensor_ends.pop();
        inner.extend(tensor_ends);
        item_ends.push(w.position() as usize);
    }
    Layouted {
        bytes: w.into_inner(),
        item_ends,
        inner_boundaries: inner,
    }
}

/// Asserts every non-empty buffer of `item` sits at an address aligned to 64 and to
/// its declared alignment.
pub fn assert_aligned(item: &Item) {
    item.for_each_tensor(&mut |t| {
        for (b, h) in t.buffers().iter().zip(&t.descriptor().buffers) {
            if !b.is_empty() {
                let want = (h.alignment as usize).max(BUFFER_ALIGN);
                let addr = b.as_slice().as_ptr() as usize;
                assert_eq!(addr % want, 0, "buffer at {addr:#x} is not {want}-aligned");
            }
        }
    });
}

/// Asserts received items equal the sent ones (descriptors and bytes) and are aligned.
pub fn assert_same(sent: &[Item], got: &[Item]) {
    assert_eq!(sent.len(), got.len(), "item count");
    for (i, (s, g)) in sent.iter().zip(got).enumerate() {
        assert_eq!(s, g, "item {i} differs");
        assert_aligned(g);
    }
}
