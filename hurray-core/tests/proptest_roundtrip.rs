//! Property tests of the codec on random *valid* descriptors.
//!
//! The generator builds descriptors of every layout, every element type (public and
//! private), every quantization scheme, every device / memory-class pair of the
//! validity table and every optional section. Buffer sizes are computed here from the
//! spec's formulas (`layouts.md` §5, `element-types.md` §7, `quantization.md` §6–§8),
//! independently of the crate, and are sometimes larger than the minimum.
//!
//! Properties: the generator's output passes `validate()`; `decode(encode(d)) == d`;
//! encoding is deterministic and `encoded_len()` is its length; `decode_prefix` on the
//! encoding followed by other bytes returns the same descriptor and the right length;
//! a descriptor that uses private tags needs the agreement to decode.

use hurray_core::{
    BlockPaged, BufferHandle, CombineOp, CompositeHead, CompositionRule, DecodeOptions, DeviceTag,
    ElementType, ExtensionType, IndexType, KvRole, Layout, MemberRole, MemoryClass, Quantization,
    Rule, ScaleType, Scheme, Shard, Statistics, SyncMode, TensorDescriptor, TileOrder, Tiling,
};
use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::{select, Index};
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use std::cell::RefCell;
use std::collections::BTreeSet;

const DYN: u64 = u64::MAX;

/// Cap on the element count of generated shapes, so that every computed size (times
/// tile padding, strides and 16-byte elements) stays far below `u64::MAX`.
const MAX_ELEMENTS: u64 = 1 << 28;

// ---------------------------------------------------------------------------
// What to generate
// ---------------------------------------------------------------------------

/// Layout family. `Head` is the composite head (`0x0B`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    RowMajor,
    ColumnMajor,
    Strided,
    Tiled,
    Morton,
    Coo,
    Csr,
    Csc,
    Csf,
    BlockPaged,
    Head,
    Hilbert,
    Extension,
}

const KINDS: [Kind; 13] = [
    Kind::RowMajor,
    Kind::ColumnMajor,
    Kind::Strided,
    Kind::Tiled,
    Kind::Morton,
    Kind::Coo,
    Kind::Csr,
    Kind::Csc,
    Kind::Csf,
    Kind::BlockPaged,
    Kind::Head,
    Kind::Hilbert,
    Kind::Extension,
];

/// Quantization: none, one of the five schemes, or a private (opaque) scheme.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Q {
    None,
    PerTensor,
    PerChannel,
    PerBlock,
    Nf4,
    Mxfp,
    Private,
}

const QS: [Q; 7] = [
    Q::None,
    Q::PerTensor,
    Q::PerChannel,
    Q::PerBlock,
    Q::Nf4,
    Q::Mxfp,
    Q::Private,
];

impl Q {
    /// Schemes with an `axis` (and so rank ≥ 1).
    fn has_axis(self) -> bool {
        matches!(self, Q::PerChannel | Q::PerBlock | Q::Nf4 | Q::Mxfp)
    }
}

#[derive(Clone, Copy, Debug)]
struct Plan {
    kind: Kind,
    q: Q,
    shard: bool,
    /// Some dimensions may be `DYN` (only where no size needs them).
    dynamic: bool,
}

/// Quantization axis and block size, chosen together with the shape.
#[derive(Clone, Copy, Debug)]
struct Geom {
    axis: usize,
    block: u32,
}

/// How the spec constrains a buffer's `byte_size`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Need {
    /// At least the computed size, and a reader checks it (`layouts.md` §5).
    AtLeast,
    /// Exactly the computed size (quantization parameters, `quantization.md` §6).
    Exact,
    /// Nothing a reader can check from the descriptor alone.
    Free,
}

/// A descriptor under construction; each stage fills in some fields.
#[derive(Clone, Debug)]
struct Draft {
    plan: Plan,
    element_type: ElementType,
    extension_type: Option<ExtensionType>,
    shape: Vec<u64>,
    geom: Option<Geom>,
    /// Block-paged: tokens per sequence (`shape[0]` is their sum).
    seqs: Vec<u64>,
    /// Hilbert: curve order.
    hilbert_order: u32,
    layout: Layout,
    byte_offset: u64,
    /// Per buffer: the smallest byte size the spec allows, and how it is checked.
    sizes: Vec<(u64, Need)>,
    quantization: Option<Quantization>,
}

// ---------------------------------------------------------------------------
// Element sizes, from element-types.md §7 and descriptor.md §11
// ---------------------------------------------------------------------------

/// How elements occupy bytes.
#[derive(Clone, Copy, Debug)]
enum Size {
    /// Whole bytes per element.
    Bytes(u64),
    /// Elements per byte (8, 4 or 2).
    Packed(u64),
    /// Four 6-bit elements per 3-byte group.
    SixBit,
}

fn bits_of(t: ElementType) -> u32 {
    use ElementType::*;
    match t {
        Bool => 1,
        Int2 | Uint2 => 2,
        Int4 | Uint4 | Float4E2m1 => 4,
        Float6E2m3 | Float6E3m2 => 6,
        Int8 | Uint8 | Float8E4m3 | Float8E5m2 | Float8E8m0 => 8,
        Float16 | Bfloat16 | Int16 | Uint16 => 16,
        Float32 | Int32 | Uint32 => 32,
        Float64 | Int64 | Uint64 | Complex64 => 64,
        Float128 | Complex128 => 128,
        other => panic!("no built-in width for {other}"),
    }
}

fn size_class(t: ElementType, ext: Option<&ExtensionType>) -> Size {
    let bits = match (t, ext) {
        (ElementType::Private(_), Some(e)) => e.bit_width,
        _ => bits_of(t),
    };
    match bits {
        1 | 2 | 4 => Size::Packed(8 / u64::from(bits)),
        6 => Size::SixBit,
        b => Size::Bytes(u64::from(b / 8)),
    }
}

/// Bytes for `n` contiguous elements.
fn bytes_for(s: Size, n: u64) -> u64 {
    match s {
        Size::Bytes(w) => n * w,
        Size::Packed(p) => n.div_ceil(p),
        Size::SixBit => n.div_ceil(4) * 3,
    }
}

/// First byte of the element (or 6-bit group) at element offset `o` (floor for negatives).
fn byte_of(s: Size, o: i128) -> i128 {
    match s {
        Size::Bytes(w) => o * i128::from(w),
        Size::Packed(p) => o.div_euclid(i128::from(p)),
        Size::SixBit => o.div_euclid(4) * 3,
    }
}

fn last_len(s: Size) -> i128 {
    match s {
        Size::Bytes(w) => i128::from(w),
        Size::Packed(_) => 1,
        Size::SixBit => 3,
    }
}

/// `byte_offset` and minimum buffer size for elements at offsets `lo..=hi` relative
/// to element [0, …, 0], with `extra` spare bytes before the lowest one.
fn place(s: Size, lo: i128, hi: i128, extra: u64) -> (u64, u64) {
    let byte_offset = (-byte_of(s, lo)).max(0) as u64 + extra;
    let end = i128::from(byte_offset) + byte_of(s, hi) + last_len(s);
    (byte_offset, end as u64)
}

fn product(v: &[u64]) -> i128 {
    v.iter().map(|&d| i128::from(d)).product()
}

/// Offsets reached by a strided walk over `extent` (`layouts.md` §2.3).
fn strided_span(strides: &[i64], extent: &[u64]) -> (i128, i128) {
    let (mut lo, mut hi) = (0i128, 0i128);
    for (&s, &d) in strides.iter().zip(extent) {
        let reach = i128::from(s) * (i128::from(d) - 1);
        lo += reach.min(0);
        hi += reach.max(0);
    }
    (lo, hi)
}

fn order_span(order: &TileOrder, extent: &[u64]) -> (i128, i128) {
    match order {
        TileOrder::RowMajor | TileOrder::ColumnMajor => (0, product(extent) - 1),
        TileOrder::Strided(s) => strided_span(s, extent),
        TileOrder::Tiled(t) => tiled_span(t, extent),
    }
}

/// Offsets reached by a tiled layout over `space`: `tile_no · Π T + intra`, edge tiles
/// stored whole (`layouts.md` §2.4).
fn tiled_span(t: &Tiling, space: &[u64]) -> (i128, i128) {
    let per_tile = product(&t.tile_shape);
    let grid: Vec<u64> = space
        .iter()
        .zip(&t.tile_shape)
        .map(|(&s, &t)| s.div_ceil(t))
        .collect();
    let (tlo, thi) = order_span(&t.outer, &grid);
    let (ilo, ihi) = order_span(&t.inner, &t.tile_shape);
    (tlo * per_tile + ilo, thi * per_tile + ihi)
}

fn ceil_log2(d: u64) -> u32 {
    if d <= 1 {
        0
    } else {
        64 - (d - 1).leading_zeros()
    }
}

/// `Π shape`, `None` while a dimension is dynamic (saturating: only used as a bound).
fn element_count(shape: &[u64]) -> Option<u64> {
    if shape.contains(&DYN) {
        return None;
    }
    Some(shape.iter().fold(1u64, |n, &d| n.saturating_mul(d)))
}

/// Shape has no element (a zero dimension) or an unknown size (`DYN`).
fn sizeless(shape: &[u64]) -> bool {
    shape.iter().any(|&d| d == 0 || d == DYN)
}

// ---------------------------------------------------------------------------
// Stage 1: plan and element type
// ---------------------------------------------------------------------------

fn plan(kind: Option<Kind>, q: Option<Q>) -> impl Strategy<Value = Plan> {
    let kind = match kind {
        Some(k) => Just(k).boxed(),
        None => select(KINDS.to_vec()).boxed(),
    };
    let q = match q {
        Some(q) => Just(q).boxed(),
        None => prop_oneof![2 => Just(Q::None), 3 => select(QS.to_vec())].boxed(),
    };
    (kind, q, any::<bool>(), prop::bool::weighted(0.2)).prop_map(|(kind, q, shard, dynamic)| {
        let q = if kind == Kind::Head { Q::None } else { q };
        let shard = shard && !matches!(kind, Kind::BlockPaged | Kind::Csf);
        let dynamic = dynamic
            && !shard
            && matches!(q, Q::None | Q::PerTensor | Q::Private)
            && !matches!(kind, Kind::Morton | Kind::Hilbert | Kind::BlockPaged);
        Plan {
            kind,
            q,
            shard,
            dynamic,
        }
    })
}

/// Storage types a scheme accepts (`quantization.md` §4).
fn storage_types(q: Q) -> Vec<ElementType> {
    use ElementType::*;
    match q {
        Q::PerTensor | Q::PerChannel => vec![
            Int8, Int16, Int32, Uint8, Uint16, Uint32, Int4, Uint4, Int2, Uint2,
        ],
        Q::PerBlock => vec![Int8, Uint8, Int4, Uint4, Int2, Uint2],
        Q::Nf4 => vec![Uint4],
        Q::Mxfp => vec![
            Float8E4m3, Float8E5m2, Float4E2m1, Float6E2m3, Float6E3m2, Int8, Int4,
        ],
        Q::None | Q::Private => ElementType::ALL.to_vec(),
    }
}

/// A private element type with a valid extension-type section (`descriptor.md` §11).
fn private_element() -> impl Strategy<Value = (ElementType, Option<ExtensionType>)> {
    let width = prop_oneof![
        select(vec![(1u32, 8u8), (2, 4), (4, 2)]),
        (1u32..=16).prop_map(|b| (8 * b, 1u8)),
    ];
    let integer =
        (width.clone(), any::<bool>()).prop_map(|((bit_width, packing_factor), s)| ExtensionType {
            bit_width,
            packing_factor,
            is_float: false,
            is_signed: s,
            ..ExtensionType::default()
        });
    let float = (
        width,
        0u8..=1,
        any::<Index>(),
        0u32..=1 << 16,
        any::<(bool, bool)>(),
    )
        .prop_map(|((bit_width, packing_factor), sign, e, bias, (nan, inf))| {
            // Widths are at most 128 bits: sign, exponent and mantissa fill them.
            let sign = if bit_width == 1 { 0 } else { sign };
            let field = bit_width as u8 - sign;
            let exponent = e.index(usize::from(field) + 1) as u8;
            ExtensionType {
                bit_width,
                packing_factor,
                is_float: true,
                is_signed: false,
                sign_bits: sign,
                exponent_bits: exponent,
                mantissa_bits: field - exponent,
                exponent_bias: bias,
                has_nan: nan,
                has_inf: inf,
            }
        });
    (0xF0u8..=0xFE, prop_oneof![integer, float])
        .prop_map(|(tag, ext)| (ElementType::Private(tag), Some(ext)))
}

fn element_stage(plan: Plan) -> BoxedStrategy<Draft> {
    let public = select(storage_types(plan.q)).prop_map(|t| (t, None));
    let element = if matches!(plan.q, Q::None | Q::Private) {
        prop_oneof![5 => public, 1 => private_element()].boxed()
    } else {
        public.boxed()
    };
    element
        .prop_map(move |(element_type, extension_type)| Draft {
            plan,
            element_type,
            extension_type,
            shape: Vec::new(),
            geom: None,
            seqs: Vec::new(),
            hilbert_order: 0,
            layout: Layout::RowMajor,
            byte_offset: 0,
            sizes: Vec::new(),
            quantization: None,
        })
        .boxed()
}

// ---------------------------------------------------------------------------
// Stage 2: shape (and the quantization axis / block size that must fit it)
// ---------------------------------------------------------------------------

/// A rank in `lo..=hi`, usually small.
fn rank(lo: usize, hi: usize) -> BoxedStrategy<usize> {
    prop_oneof![6 => lo..=hi.min(lo + 3), 1 => lo..=hi].boxed()
}

fn dims(rank: impl Strategy<Value = usize>, max: u64) -> impl Strategy<Value = Vec<u64>> {
    let dim = prop_oneof![
        8 => 1u64..=4.min(max),
        3 => 1u64..=64.min(max),
        1 => Just(0u64),
        1 => 1u64..=max,
    ];
    rank.prop_flat_map(move |r| vec(dim.clone(), r))
        .prop_map(|mut shape| {
            let mut n = 1u64;
            for d in shape.iter_mut().filter(|d| **d > 0) {
                match n.checked_mul(*d).filter(|&m| m <= MAX_ELEMENTS) {
                    Some(m) => n = m,
                    None => *d = 1,
                }
            }
            shape
        })
}

/// Block sizes the scheme allows (`quantization.md` §7–§8): for an axis of `extent`
/// elements, or every allowed size when `extent` is `None`.
fn block_sizes(q: Q, extent: Option<u64>) -> Vec<u32> {
    let (min, max) = match q {
        Q::PerBlock => (2, 4096),
        Q::Nf4 => (8, 4096),
        Q::Mxfp => (16, 2048),
        _ => return Vec::new(),
    };
    let all = (1..=12)
        .map(|j| 1u32 << j)
        .filter(move |&k| k >= min && k <= max);
    match extent {
        None => all.collect(),
        // MXFP: the axis is a positive multiple of the block size.
        Some(e) if q == Q::Mxfp => all.filter(|&k| e > 0 && e % u64::from(k) == 0).collect(),
        // Per-block and NF4: the block fits the axis unless the axis is empty.
        Some(0) => all.collect(),
        Some(e) => all.filter(|&k| u64::from(k) <= e).collect(),
    }
}

fn shape_stage(d: Draft) -> BoxedStrategy<Draft> {
    let plan = d.plan;
    let min_rank = usize::from(plan.q.has_axis());
    // (shape, tokens per sequence, Hilbert order)
    let base: BoxedStrategy<(Vec<u64>, Vec<u64>, u32)> = match plan.kind {
        Kind::RowMajor => dims(rank(min_rank, 64), u64::MAX)
            .prop_map(|s| (s, vec![], 0))
            .boxed(),
        Kind::ColumnMajor | Kind::Strided | Kind::Coo => dims(rank(1, 64), u64::MAX)
            .prop_map(|s| (s, vec![], 0))
            .boxed(),
        Kind::Tiled => dims(rank(1, 12), u64::MAX)
            .prop_map(|s| (s, vec![], 0))
            .boxed(),
        Kind::Morton => dims(1usize..=5, 32).prop_map(|s| (s, vec![], 0)).boxed(),
        Kind::Csr | Kind::Csc => dims(Just(2), u64::MAX).prop_map(|s| (s, vec![], 0)).boxed(),
        Kind::Csf => dims(rank(3, 64), u64::MAX)
            .prop_map(|s| (s, vec![], 0))
            .boxed(),
        Kind::Head => dims(rank(1, 8), u64::MAX)
            .prop_map(|s| (s, vec![], 0))
            .boxed(),
        // Rank 0 is row-major only (`descriptor.md` §4), private layouts included.
        Kind::Extension => dims(rank(1, 6), u64::MAX)
            .prop_map(|s| (s, vec![], 0))
            .boxed(),
        Kind::BlockPaged => (vec(0u64..=100, 0..=6), 1u64..=8, 1u64..=128)
            .prop_map(|(seqs, heads, dim)| (vec![seqs.iter().sum(), heads, dim], seqs, 0))
            .boxed(),
        Kind::Hilbert => {
            let min_order = match plan.q {
                Q::Nf4 => 3,
                Q::Mxfp => 4,
                _ => 1,
            };
            (2usize..=5)
                .prop_flat_map(move |r| (Just(r), min_order..=(40 / r as u32)))
                .prop_map(|(r, p)| (vec![1u64 << p; r], vec![], p))
                .boxed()
        }
    };
    let dyn_mask = vec(prop::bool::weighted(0.3), 64);
    (base, dyn_mask, any::<Index>(), any::<Index>(), 1u64..=4)
        .prop_map(
            move |((mut shape, seqs, order), mask, axis_pick, block_pick, m)| {
                let mut d = d.clone();
                if plan.dynamic {
                    shape
                        .iter_mut()
                        .zip(&mask)
                        .filter(|(_, &m)| m)
                        .for_each(|(s, _)| *s = DYN);
                }
                let r = shape.len();
                d.geom = match plan.q {
                    Q::PerChannel => {
                        let axis = if plan.kind == Kind::BlockPaged {
                            1 + axis_pick.index(2)
                        } else {
                            axis_pick.index(r)
                        };
                        Some(Geom { axis, block: 0 })
                    }
                    Q::PerBlock if plan.kind == Kind::BlockPaged => Some(Geom {
                        axis: 0,
                        block: 1 << (1 + block_pick.index(6)),
                    }),
                    Q::PerBlock | Q::Nf4 | Q::Mxfp => {
                        // MXFP on a block-paged tensor keeps axis 0 (the token count) as is.
                        let axis = if plan.kind == Kind::BlockPaged && plan.q == Q::Mxfp {
                            1 + axis_pick.index(2)
                        } else {
                            axis_pick.index(r)
                        };
                        let mut fits = block_sizes(plan.q, Some(shape[axis]));
                        if fits.is_empty() {
                            // Resize the axis to a multiple of a small allowed block size.
                            assert_ne!(
                                plan.kind,
                                Kind::Hilbert,
                                "Hilbert orders are chosen to fit"
                            );
                            let k = block_sizes(plan.q, None)[block_pick.index(4)];
                            shape[axis] = u64::from(k) * m;
                            fits = block_sizes(plan.q, Some(shape[axis]));
                        }
                        Some(Geom {
                            axis,
                            block: fits[block_pick.index(fits.len())],
                        })
                    }
                    _ => None,
                };
                d.shape = shape;
                d.seqs = seqs;
                d.hilbert_order = order;
                d
            },
        )
        .boxed()
}

// ---------------------------------------------------------------------------
// Stage 3: layout fields, byte_offset and layout buffer sizes
// ---------------------------------------------------------------------------

/// Spare bytes in front of element [0, …, 0]; usually none.
fn extra() -> impl Strategy<Value = u64> {
    prop_oneof![3 => Just(0u64), 1 => 0u64..=256]
}

/// Stored elements of a sparse tensor with `n` elements (`None`: unknown yet).
fn nnz(n: Option<u64>) -> impl Strategy<Value = u64> {
    let most = n.unwrap_or(u64::MAX);
    prop_oneof![3 => 0u64..=16, 2 => 0u64..=100_000, 1 => 0u64..=1 << 32]
        .prop_map(move |nnz| nnz.min(most))
}

fn stride() -> impl Strategy<Value = i64> {
    prop_oneof![4 => -8i64..=8, 1 => -100_000i64..=100_000, 1 => Just(0i64)]
}

/// One tiling level over `space`, with up to `depth` levels in all.
fn tiling(space: Vec<u64>, depth: u32) -> BoxedStrategy<Tiling> {
    let r = space.len();
    let tile: Vec<_> = space
        .iter()
        .map(|&s| {
            if s == 0 || s == DYN {
                1..=8
            } else {
                1..=s.min(16)
            }
        })
        .collect();
    tile.prop_flat_map(move |tile_shape| {
        let outer = prop_oneof![
            Just(TileOrder::RowMajor),
            Just(TileOrder::ColumnMajor),
            vec(-6i64..=6, r).prop_map(TileOrder::Strided),
        ];
        let flat = prop_oneof![
            Just(TileOrder::RowMajor),
            Just(TileOrder::ColumnMajor),
            vec(-6i64..=6, r).prop_map(TileOrder::Strided),
        ];
        let inner = if depth > 1 {
            prop_oneof![
                3 => flat,
                2 => tiling(tile_shape.clone(), depth - 1).prop_map(|t| TileOrder::Tiled(Box::new(t))),
            ]
            .boxed()
        } else {
            flat.boxed()
        };
        (outer, inner).prop_map(move |(outer, inner)| Tiling {
            tile_shape: tile_shape.clone(),
            outer,
            inner,
        })
    })
    .boxed()
}

/// Layout, `byte_offset`, and the layout buffers' minimum sizes with how they are checked.
type Laid = (Layout, u64, Vec<(u64, Need)>);

fn layout_stage(d: Draft) -> BoxedStrategy<Draft> {
    let s = size_class(d.element_type, d.extension_type.as_ref());
    let shape = d.shape.clone();
    let r = shape.len();
    // Sizes of sparse and indirect buffers are unchecked while a dimension is dynamic.
    let sized = if shape.contains(&DYN) {
        Need::Free
    } else {
        Need::AtLeast
    };
    let n = element_count(&shape);
    let laid: BoxedStrategy<Laid> = match d.plan.kind {
        Kind::RowMajor | Kind::ColumnMajor => {
            let layout = if d.plan.kind == Kind::RowMajor {
                Layout::RowMajor
            } else {
                Layout::ColumnMajor
            };
            // byte_offset ≤ byte_size holds even while the element count is unknown.
            let n = n.unwrap_or(0);
            extra()
                .prop_map(move |off| {
                    let size = (off + bytes_for(s, n), Need::AtLeast);
                    (layout.clone(), off, vec![size])
                })
                .boxed()
        }
        Kind::Strided => (vec(stride(), r), extra())
            .prop_map(move |(strides, extra)| {
                let (off, size) = if sizeless(&shape) {
                    (extra, extra)
                } else {
                    let (lo, hi) = strided_span(&strides, &shape);
                    place(s, lo, hi, extra)
                };
                (
                    Layout::Strided { strides },
                    off,
                    vec![(size, Need::AtLeast)],
                )
            })
            .boxed(),
        Kind::Tiled => (tiling(shape.clone(), 3), extra())
            .prop_map(move |(t, extra)| {
                let (off, size) = if sizeless(&shape) {
                    (extra, extra)
                } else {
                    let (lo, hi) = tiled_span(&t, &shape);
                    place(s, lo, hi, extra)
                };
                (Layout::Tiled(t), off, vec![(size, Need::AtLeast)])
            })
            .boxed(),
        Kind::Morton => (vec(0u32..=1, r), extra())
            .prop_map(move |(slack, off)| {
                let bits: Vec<u32> = shape
                    .iter()
                    .zip(slack)
                    .map(|(&d, e)| ceil_log2(d).max(1) + e)
                    .collect();
                let n = 1u64 << bits.iter().sum::<u32>();
                let size = (off + bytes_for(s, n), Need::AtLeast);
                (Layout::Morton { bits }, off, vec![size])
            })
            .boxed(),
        Kind::Hilbert => {
            let order = d.hilbert_order;
            extra()
                .prop_map(move |off| {
                    let n = 1u64 << (order as usize * r);
                    let layout = Layout::Hilbert {
                        order,
                        rank: r as u32,
                    };
                    (layout, off, vec![(off + bytes_for(s, n), Need::AtLeast)])
                })
                .boxed()
        }
        Kind::Coo => (nnz(n), any::<bool>())
            .prop_map(move |(nnz, is_sorted)| {
                let sizes = vec![(bytes_for(s, nnz), sized), (nnz * r as u64 * 8, sized)];
                (Layout::Coo { nnz, is_sorted }, 0, sizes)
            })
            .boxed(),
        Kind::Csr | Kind::Csc => {
            let csr = d.plan.kind == Kind::Csr;
            nnz(n)
                .prop_map(move |nnz| {
                    let outer = shape[if csr { 0 } else { 1 }];
                    let ptr = if outer == DYN { 0 } else { (outer + 1) * 8 };
                    let layout = if csr {
                        Layout::Csr { nnz }
                    } else {
                        Layout::Csc { nnz }
                    };
                    let sizes = vec![(bytes_for(s, nnz), sized), (nnz * 8, sized), (ptr, sized)];
                    (layout, 0, sizes)
                })
                .boxed()
        }
        Kind::Csf => (
            Just((0..r as u32).collect::<Vec<_>>()).prop_shuffle(),
            vec(any::<Index>(), r),
            prop::bool::weighted(0.1),
        )
            .prop_map(move |(mode_order, picks, empty)| {
                // Nodes per level, top down: every node has 1..=extent children
                // (`layouts.md` §2.9); the leaves are the stored elements.
                let empty = empty || shape.contains(&0);
                let mut nodes = Vec::with_capacity(r);
                let mut above = 1u64;
                for (&m, pick) in mode_order.iter().zip(&picks) {
                    if empty {
                        above = 0;
                    } else {
                        let extent = shape[m as usize].min(1 << 20);
                        let most = above
                            .saturating_mul(extent)
                            .clamp(above, 100_000.max(above));
                        above += pick.index((most - above + 1) as usize) as u64;
                    }
                    nodes.push(above);
                }
                let nnz = above;
                let mut sizes = vec![(bytes_for(s, nnz), sized)];
                let mut above = 1;
                for (level, &n) in nodes.iter().enumerate() {
                    // A reader checks pos_0 and the last level's crd only.
                    let checked = |yes: bool| if yes { sized } else { Need::Free };
                    sizes.push(((above + 1) * 8, checked(level == 0))); // pos_L
                    sizes.push((n * 8, checked(level == r - 1))); // crd_L
                    above = n;
                }
                (Layout::Csf { nnz, mode_order }, 0, sizes)
            })
            .boxed(),
        Kind::BlockPaged => {
            let seqs = d.seqs.clone();
            let page = match d.geom {
                Some(Geom { axis: 0, block }) => Just(block).boxed(),
                _ => prop_oneof![Just(16u32), Just(32), 1u32..=64].boxed(),
            };
            let roles = select(vec![KvRole::Key, KvRole::Value, KvRole::Fused]);
            let index = select(vec![IndexType::U32, IndexType::U64]);
            let layer = prop_oneof![Just(u32::MAX), any::<u32>()];
            (page, 0u64..=48, roles, index, layer)
                .prop_map(move |(page_size, spare, kv_role, index, layer_index)| {
                    let logical: u64 = seqs.iter().map(|t| t.div_ceil(u64::from(page_size))).sum();
                    let num_pages = u64::from(logical > 0) + spare;
                    let p = BlockPaged {
                        page_size,
                        num_pages,
                        paged_axis: 0,
                        num_seqs: seqs.len() as u32,
                        kv_role,
                        layer_index,
                        block_table_index_type: index,
                    };
                    let w = index.width();
                    let pool = num_pages * u64::from(page_size) * shape[1] * shape[2];
                    let sizes = vec![
                        (bytes_for(s, pool), Need::AtLeast),
                        (logical * w, Need::Free),
                        ((seqs.len() as u64 + 1) * w, Need::AtLeast),
                    ];
                    (Layout::BlockPaged(p), 0, sizes)
                })
                .boxed()
        }
        Kind::Head => {
            let rules = if shape.contains(&DYN) {
                Just((CompositionRule::Group, CombineOp::None)).boxed()
            } else {
                prop_oneof![
                    Just((CompositionRule::Partition, CombineOp::None)),
                    Just((CompositionRule::Overlay, CombineOp::Replace)),
                    Just((CompositionRule::Overlay, CombineOp::Add)),
                    Just((CompositionRule::Group, CombineOp::None)),
                    (0xF0u8..=0xFE).prop_map(|t| (CompositionRule::Private(t), CombineOp::None)),
                ]
                .boxed()
            };
            let members = prop_oneof![0u32..=8, 0u32..u32::MAX];
            (rules, members)
                .prop_map(|((rule, combine_op), member_count)| {
                    let head = CompositeHead {
                        rule,
                        combine_op,
                        member_count,
                    };
                    (Layout::CompositeHead(head), 0, vec![])
                })
                .boxed()
        }
        Kind::Extension => {
            // With an assigned scheme the layout is taken to own one buffer.
            let count = if matches!(d.plan.q, Q::None | Q::Private) {
                1..=4
            } else {
                1..=1
            };
            (
                0xF0u8..=0xFE,
                any::<u64>(),
                vec(any::<u8>(), 0..=48),
                any::<u64>(),
                vec(0u64..=1 << 20, count),
            )
                .prop_map(|(tag, id, data, off, sizes)| {
                    let sizes = sizes.into_iter().map(|n| (n, Need::Free)).collect();
                    (Layout::Extension { tag, id, data }, off, sizes)
                })
                .boxed()
        }
    };
    laid.prop_map(move |(layout, byte_offset, sizes)| {
        let mut d = d.clone();
        d.layout = layout;
        d.byte_offset = byte_offset;
        d.sizes = sizes;
        d
    })
    .boxed()
}

// ---------------------------------------------------------------------------
// Stage 4: quantization section and its parameter buffers
// ---------------------------------------------------------------------------

/// Inclusive zero-point range of a storage type (`quantization.md` §8.1).
fn zero_point_range(t: ElementType) -> (i32, i32) {
    use ElementType::*;
    match t {
        Int8 => (-128, 127),
        Uint8 => (0, 255),
        Int16 => (-32768, 32767),
        Uint16 => (0, 65535),
        Int32 => (i32::MIN, i32::MAX),
        Uint32 => (0, i32::MAX),
        Int4 => (-8, 7),
        Uint4 => (0, 15),
        Int2 => (-2, 1),
        Uint2 => (0, 3),
        other => panic!("{other} has no zero-point range"),
    }
}

fn scale() -> impl Strategy<Value = f32> {
    use prop::num::f32::{NEGATIVE, NORMAL, POSITIVE, SUBNORMAL};
    POSITIVE | NEGATIVE | NORMAL | SUBNORMAL
}

/// How many scales a block scheme needs (`quantization.md` §7, §10 for block-paged).
fn parameter_count(d: &Draft, g: Geom) -> u64 {
    match (&d.layout, d.plan.q) {
        (_, Q::PerChannel) => d.shape[g.axis],
        (Layout::BlockPaged(p), _) => p.num_pages * u64::from(p.page_size),
        _ => {
            let per_axis = d.shape[g.axis].div_ceil(u64::from(g.block));
            let outer: u64 = (0..d.shape.len())
                .filter(|&j| j != g.axis)
                .map(|j| d.shape[j])
                .product();
            per_axis * outer
        }
    }
}

fn quant_stage(d: Draft) -> BoxedStrategy<Draft> {
    let trailing = prop_oneof![4 => Just(Vec::new()), 1 => vec(any::<u8>(), 1..=16)];
    // Scale first, zero point second; they may share one buffer or come in either order.
    let zero_point = prop_oneof![
        Just(None),
        Just(Some(0u8)), // shared with the scale buffer
        Just(Some(1u8)), // scale, then zero point
        Just(Some(2u8)), // zero point, then scale
    ];
    let first = d.sizes.len() as u32;
    let strategy: BoxedStrategy<(Quantization, Vec<u64>)> = match d.plan.q {
        Q::None => return Just(d).boxed(),
        Q::PerTensor => {
            let (lo, hi) = zero_point_range(d.element_type);
            (scale(), lo..=hi, trailing)
                .prop_map(|(scale, zero_point, trailing)| {
                    let q = Quantization {
                        scheme: Scheme::PerTensor { scale, zero_point },
                        trailing,
                    };
                    (q, vec![])
                })
                .boxed()
        }
        Q::PerChannel | Q::PerBlock => {
            let g = d.geom.expect("axis chosen with the shape");
            let count = parameter_count(&d, g);
            let per_channel = d.plan.q == Q::PerChannel;
            let scale_types = if per_channel {
                vec![ScaleType::F32]
            } else {
                vec![ScaleType::F16, ScaleType::Bf16, ScaleType::F32]
            };
            (select(scale_types), zero_point, trailing)
                .prop_map(move |(scale_type, zp, trailing)| {
                    let scales = count * scale_type.width();
                    let (s, z, sizes) = match zp {
                        None => (first, None, vec![scales]),
                        Some(0) => (first, Some(first), vec![scales + 4 * count]),
                        Some(1) => (first, Some(first + 1), vec![scales, 4 * count]),
                        _ => (first + 1, Some(first), vec![4 * count, scales]),
                    };
                    let scheme = if per_channel {
                        Scheme::PerChannel {
                            axis: g.axis as u32,
                            scale_buffer_index: s,
                            zero_point_buffer_index: z,
                            scale_type,
                        }
                    } else {
                        Scheme::PerBlock {
                            axis: g.axis as u32,
                            block_size: g.block,
                            scale_buffer_index: s,
                            zero_point_buffer_index: z,
                            scale_type,
                        }
                    };
                    (Quantization { scheme, trailing }, sizes)
                })
                .boxed()
        }
        Q::Nf4 | Q::Mxfp => {
            let g = d.geom.expect("axis chosen with the shape");
            let count = parameter_count(&d, g);
            let nf4 = d.plan.q == Q::Nf4;
            trailing
                .prop_map(move |trailing| {
                    let (axis, block_size, scale_buffer_index) = (g.axis as u32, g.block, first);
                    let (scheme, bytes) = if nf4 {
                        let s = Scheme::Nf4 {
                            axis,
                            block_size,
                            scale_buffer_index,
                        };
                        (s, 4 * count)
                    } else {
                        let s = Scheme::Mxfp {
                            axis,
                            block_size,
                            scale_buffer_index,
                        };
                        (s, count)
                    };
                    (Quantization { scheme, trailing }, vec![bytes])
                })
                .boxed()
        }
        Q::Private => (
            0xF0u8..=0xFE,
            any::<u8>(),
            any::<u16>(),
            vec(any::<u8>(), 0..=32),
            vec(0u64..=4096, 0..=2),
        )
            .prop_map(|(scheme_tag, scheme_version, flags, payload, extra)| {
                let scheme = Scheme::Opaque {
                    scheme_tag,
                    scheme_version,
                    flags,
                    payload,
                };
                // An opaque payload keeps every byte, so there is nothing trailing.
                (scheme.into(), extra)
            })
            .boxed(),
    };
    let need = if d.plan.q == Q::Private {
        Need::Free
    } else {
        Need::Exact
    };
    strategy
        .prop_map(move |(q, sizes)| {
            let mut d = d.clone();
            d.quantization = Some(q);
            d.sizes.extend(sizes.into_iter().map(|n| (n, need)));
            d
        })
        .boxed()
}

// ---------------------------------------------------------------------------
// Stage 5: buffer handles and the remaining sections
// ---------------------------------------------------------------------------

/// `(device, memory class)` pairs of the validity table (`descriptor.md` §6.4).
fn placement() -> impl Strategy<Value = (DeviceTag, MemoryClass)> {
    use DeviceTag::*;
    use MemoryClass::*;
    let mut table = Vec::new();
    for (device, classes) in [
        (Cpu, &[Standard, HostPinned, Unified][..]),
        (Cuda, &[Standard, HostPinned, Unified, Peer]),
        (Rocm, &[Standard, HostPinned, Unified, Peer]),
        (Metal, &[Standard, HostPinned, Unified]),
        (Vulkan, &[Standard, HostPinned, Unified, Peer]),
        (WebGpu, &[Standard]),
        (Hexagon, &[Standard, HostPinned, Unified]),
        (LevelZero, &[Standard, HostPinned, Unified, Peer]),
        (OpenCl, &[Standard, HostPinned, Unified]),
    ] {
        table.extend(classes.iter().map(|&c| (device, c)));
    }
    let private = (0xF0u8..=0xFE, prop::option::of(0xF0u8..=0xFE)).prop_map(|(d, c)| {
        let class = c.map_or(Standard, MemoryClass::Private);
        (DeviceTag::Private(d), class)
    });
    prop_oneof![5 => select(table), 1 => private]
}

fn finite() -> impl Strategy<Value = f64> {
    use prop::num::f64::{NEGATIVE, NORMAL, POSITIVE, SUBNORMAL, ZERO};
    POSITIVE | NEGATIVE | NORMAL | SUBNORMAL | ZERO
}

/// Statistics as a careful writer emits them (`descriptor.md` §10).
fn statistics(layout_nnz: Option<u64>) -> impl Strategy<Value = Statistics> {
    (
        0u32..=0x3F,
        any::<u64>(),
        0.0f64..=1.0,
        (finite(), finite(), 0.0f64..=1.0, finite()),
        (any::<u8>(), any::<u8>(), any::<(bool, bool)>()),
    )
        .prop_map(
            move |(mask, nnz, sparsity, (a, b, t, sd), (n, m, (nan, inf)))| {
                let (min, max) = if a <= b { (a, b) } else { (b, a) };
                Statistics {
                    computed_mask: mask,
                    nnz: layout_nnz.unwrap_or(nnz),
                    sparsity_ratio: sparsity,
                    value_min: min,
                    value_max: max,
                    value_abs_max: min.abs().max(max.abs()),
                    value_mean: min + (max / 2.0 - min / 2.0) * t * 2.0,
                    value_stddev: sd.abs(),
                    nm_n: n.min(m),
                    nm_m: n.max(m),
                    has_nan: u8::from(nan),
                    has_inf: u8::from(inf),
                }
            },
        )
}

/// Statistics with arbitrary bits in every field but the mask and reserved bytes.
fn raw_statistics() -> impl Strategy<Value = Statistics> {
    (
        0u32..=0x3F,
        any::<u64>(),
        vec(any::<u64>(), 6),
        any::<[u8; 4]>(),
    )
        .prop_map(|(mask, nnz, f, b)| {
            let f: Vec<f64> = f.into_iter().map(f64::from_bits).collect();
            Statistics {
                computed_mask: mask,
                nnz,
                sparsity_ratio: f[0],
                value_min: f[1],
                value_max: f[2],
                value_abs_max: f[3],
                value_mean: f[4],
                value_stddev: f[5],
                nm_n: b[0],
                nm_m: b[1],
                has_nan: b[2],
                has_inf: b[3],
            }
        })
}

fn layout_nnz(layout: &Layout) -> Option<u64> {
    match layout {
        Layout::Coo { nnz, .. }
        | Layout::Csr { nnz }
        | Layout::Csc { nnz }
        | Layout::Csf { nnz, .. } => Some(*nnz),
        _ => None,
    }
}

/// The descriptor, with each buffer's smallest allowed size and how it is checked.
type Generated = (TensorDescriptor, Vec<(u64, Need)>);

fn finish(d: Draft) -> BoxedStrategy<Generated> {
    let r = d.shape.len();
    let handle = (
        prop_oneof![3 => Just(0u64), 1 => 1u64..=4096],
        prop_oneof![4 => Just(6u32), 2 => Just(12u32), 1 => 0u32..=31],
        select(vec![
            SyncMode::ProducerSynced,
            SyncMode::Event,
            SyncMode::ConsumerStream,
        ]),
    );
    // Shard boxes: (offset, room after the box) per dimension.
    let shard = if d.plan.shard {
        vec((0u64..=16, 0u64..=16), r).prop_map(Some).boxed()
    } else {
        Just(None).boxed()
    };
    // Only overlay members carry a member section, and they are shards of the head.
    let member = if d.plan.shard && d.plan.kind != Kind::Head {
        prop::option::weighted(0.4, select(vec![MemberRole::Base, MemberRole::Correction])).boxed()
    } else {
        Just(None).boxed()
    };
    let version_minor = prop_oneof![9 => Just(0u8), 1 => any::<u8>()];
    (
        placement(),
        vec(handle, d.sizes.len()),
        shard,
        prop::option::weighted(0.3, statistics(layout_nnz(&d.layout))),
        member,
        version_minor,
    )
        .prop_map(
            move |((device, memory_class), handles, boxes, statistics, member, minor)| {
                // GPU and other device buffers are page-aligned (`descriptor.md` §6.1).
                let min_align = if device == DeviceTag::Cpu { 6 } else { 12 };
                let buffers = d
                    .sizes
                    .iter()
                    .zip(handles)
                    .map(|(&(min, need), (slack, align_log2, sync))| {
                        let byte_size = if need == Need::Exact {
                            min
                        } else {
                            min + slack
                        };
                        let align_log2 = if byte_size > 0 {
                            align_log2.max(min_align)
                        } else {
                            align_log2
                        };
                        BufferHandle {
                            byte_size,
                            alignment: 1 << align_log2,
                            device,
                            sync_mode: if device == DeviceTag::Cpu {
                                SyncMode::ProducerSynced
                            } else {
                                sync
                            },
                            memory_class,
                        }
                    })
                    .collect();
                let shard = boxes.map(|mut boxes: Vec<(u64, u64)>| {
                    if member == Some(MemberRole::Base) {
                        boxes.fill((0, 0)); // the overlay base spans the whole head
                    }
                    Shard {
                        offset: boxes.iter().map(|b| b.0).collect(),
                        parent_shape: d
                            .shape
                            .iter()
                            .zip(&boxes)
                            .map(|(&s, b)| s + b.0 + b.1)
                            .collect(),
                    }
                });
                let descriptor = TensorDescriptor {
                    version_minor: minor,
                    element_type: d.element_type,
                    shape: d.shape.clone(),
                    byte_offset: d.byte_offset,
                    layout: d.layout.clone(),
                    buffers,
                    quantization: d.quantization.clone(),
                    shard,
                    statistics,
                    extension_type: d.extension_type,
                    composite_member: member,
                };
                (descriptor, d.sizes.clone())
            },
        )
        .boxed()
}

/// Valid descriptors; `kind` and `q` pin the layout family and quantization.
fn generated(kind: Option<Kind>, q: Option<Q>) -> impl Strategy<Value = Generated> {
    plan(kind, q)
        .prop_flat_map(element_stage)
        .prop_flat_map(shape_stage)
        .prop_flat_map(layout_stage)
        .prop_flat_map(quant_stage)
        .prop_flat_map(finish)
}

fn descriptor_with(kind: Option<Kind>, q: Option<Q>) -> impl Strategy<Value = TensorDescriptor> {
    generated(kind, q).prop_map(|(d, _)| d)
}

fn descriptor() -> impl Strategy<Value = TensorDescriptor> {
    descriptor_with(None, None)
}

// ---------------------------------------------------------------------------
// Properties
// ---------------------------------------------------------------------------

/// Whether any tag needs an out-of-band agreement, and whether a private composition
/// rule needs permissive mode too (`descriptor.md` §15).
fn private_use(d: &TensorDescriptor) -> (bool, bool) {
    let private_rule = matches!(
        d.layout,
        Layout::CompositeHead(CompositeHead {
            rule: CompositionRule::Private(_),
            ..
        })
    );
    let private = private_rule
        || d.element_type.is_private()
        || matches!(d.layout, Layout::Extension { .. })
        || d.buffers
            .iter()
            .any(|b| matches!(b.device, DeviceTag::Private(_)))
        || matches!(
            d.quantization,
            Some(Quantization {
                scheme: Scheme::Opaque { .. },
                ..
            })
        );
    (private, private_rule)
}

fn options_for(d: &TensorDescriptor) -> DecodeOptions {
    let (private, permissive) = private_use(d);
    DecodeOptions {
        accept_private: private,
        permissive,
        ..DecodeOptions::default()
    }
}

fn encode_valid(d: &TensorDescriptor) -> Result<Vec<u8>, TestCaseError> {
    d.validate().map_err(|e| {
        TestCaseError::fail(format!("generator produced an invalid descriptor: {e}"))
    })?;
    Ok(d.encode().expect("validate passed, so encode must"))
}

fn round_trips(d: &TensorDescriptor) -> Result<(), TestCaseError> {
    let bytes = encode_valid(d)?;
    let opts = options_for(d);
    let back = TensorDescriptor::decode_with(&bytes, &opts)
        .map_err(|e| TestCaseError::fail(format!("decode failed: {e}")))?;
    prop_assert_eq!(&back, d);
    let (private, _) = private_use(d);
    if private {
        // Without the agreement the same bytes are refused.
        prop_assert!(TensorDescriptor::decode(&bytes).is_err());
    } else {
        prop_assert_eq!(&TensorDescriptor::decode(&bytes).unwrap(), d);
    }
    Ok(())
}

proptest! {
    #![proptest_config(Config::with_cases(256))]

    #[test]
    fn decode_inverts_encode(d in descriptor()) {
        round_trips(&d)?;
    }

    #[test]
    fn encoding_is_deterministic(d in descriptor()) {
        let bytes = encode_valid(&d)?;
        prop_assert_eq!(d.encoded_len(), bytes.len());
        prop_assert_eq!(&d.encode().unwrap(), &bytes);
        prop_assert_eq!(&d.clone().encode().unwrap(), &bytes);
        // encode_into appends exactly the same bytes after what is already there.
        let mut out = vec![0xAB; 3];
        d.encode_into(&mut out).unwrap();
        prop_assert_eq!(&out[..3], &[0xAB; 3][..]);
        prop_assert_eq!(&out[3..], &bytes[..]);
        // Bytes → model → bytes is the identity too.
        let back = TensorDescriptor::decode_with(&bytes, &options_for(&d)).unwrap();
        prop_assert_eq!(back.encode().unwrap(), bytes);
    }

    #[test]
    fn decode_prefix_stops_at_descriptor_length(
        d in descriptor(),
        junk in vec(any::<u8>(), 0..=64),
    ) {
        let bytes = encode_valid(&d)?;
        let opts = options_for(&d);
        let mut input = bytes.clone();
        input.extend_from_slice(&junk);
        prop_assert_eq!(
            hurray_core::peek_descriptor_length(&input).unwrap() as usize,
            bytes.len()
        );
        let (back, used) = TensorDescriptor::decode_prefix(&input, &opts).unwrap();
        prop_assert_eq!(used, bytes.len());
        prop_assert_eq!(&back, &d);
        if !junk.is_empty() {
            let err = TensorDescriptor::decode_with(&input, &opts).unwrap_err();
            prop_assert_eq!((err.rule, err.offset), (Rule::TrailingInput, bytes.len()));
        }
    }

    #[test]
    fn buffer_size_rules_match_the_spec((d, sizes) in generated(None, None)) {
        // The validator asks for exactly the sizes the spec formulas give: one byte
        // less than a checked minimum, or any change to a parameter buffer, is refused.
        encode_valid(&d)?;
        for (i, &(min, need)) in sizes.iter().enumerate() {
            let mut tries = Vec::new();
            if need == Need::Exact {
                tries.push(min + 1);
            }
            if need != Need::Free && min > 0 && d.buffers[i].byte_size == min {
                tries.push(min - 1);
            }
            for size in tries {
                let mut e = d.clone();
                e.buffers[i].byte_size = size;
                prop_assert!(
                    e.validate().is_err(),
                    "buffer {} of {} bytes passes but the spec needs {} {}",
                    i, size, if need == Need::Exact { "exactly" } else { "at least" }, min
                );
            }
        }
    }

    #[test]
    fn statistics_bits_survive_unchanged(d in descriptor(), stats in raw_statistics()) {
        // NaN payloads and out-of-range advisory values are kept bit for bit.
        let d = TensorDescriptor { statistics: Some(stats), ..d };
        let bytes = encode_valid(&d)?;
        let back = TensorDescriptor::decode_with(&bytes, &options_for(&d)).unwrap();
        prop_assert_eq!(back.encode().unwrap(), bytes);
    }
}

/// What a descriptor exercises, for the coverage check below.
fn features(d: &TensorDescriptor) -> Vec<String> {
    let mut f = vec![
        format!("layout {}", d.layout.name()),
        match d.element_type {
            ElementType::Private(_) => "type private".to_string(),
            t => format!("type {t}"),
        },
    ];
    if let Some(b) = d.buffers.first() {
        f.push(format!("device {}", b.device.name()));
        f.push(
            format!("memory class {:?}", b.memory_class).replace(|c: char| c.is_ascii_digit(), ""),
        );
        f.push(format!("sync {:?}", b.sync_mode));
    }
    if let Some(q) = &d.quantization {
        f.push(format!("scheme {}", q.scheme.name()));
        if !q.trailing.is_empty() {
            f.push("quantization trailing bytes".into());
        }
    }
    match &d.layout {
        Layout::Tiled(t) => f.push(format!("tiling depth {}", t.depth())),
        Layout::Strided { strides } if strides.iter().any(|&s| s < 0) => {
            f.push("negative stride".into())
        }
        Layout::CompositeHead(h) => {
            f.push(format!("rule {:?}", h.rule).replace(|c: char| c.is_ascii_digit(), ""))
        }
        _ => {}
    }
    for (present, name) in [
        (d.shape.is_empty(), "scalar"),
        (d.shape.contains(&DYN), "dynamic"),
        (d.shape.contains(&0), "empty"),
        (d.shard.is_some(), "shard"),
        (d.statistics.is_some(), "statistics"),
        (d.composite_member.is_some(), "member"),
        (d.version_minor > 0, "later minor"),
    ] {
        if present {
            f.push(name.into());
        }
    }
    f
}

/// Every layout family with every quantization choice (a fixed seed, so the coverage
/// check is stable), then a check that the generator reached every element type,
/// device, memory class, scheme and optional section.
#[test]
fn every_layout_with_every_scheme() {
    let seen = RefCell::new(BTreeSet::new());
    let config = Config {
        cases: 16,
        failure_persistence: None,
        ..Config::default()
    };
    let mut seeds = TestRunner::new_with_rng(
        config.clone(),
        TestRng::deterministic_rng(RngAlgorithm::ChaCha),
    );
    for kind in KINDS {
        for q in QS {
            if kind == Kind::Head && q != Q::None {
                continue; // a head owns no data to quantize
            }
            // A runner counts successes over its lifetime: one per combination.
            let mut runner = TestRunner::new_with_rng(config.clone(), seeds.new_rng());
            let result = runner.run(&descriptor_with(Some(kind), Some(q)), |d| {
                seen.borrow_mut().extend(features(&d));
                round_trips(&d)
            });
            if let Err(e) = result {
                panic!("{kind:?} with {q:?}: {e}");
            }
        }
    }
    let seen = seen.into_inner();
    let mut want: Vec<String> = ElementType::ALL
        .iter()
        .map(|t| format!("type {t}"))
        .collect();
    want.extend(
        [
            "type private",
            "device cpu",
            "device cuda",
            "device rocm",
            "device metal",
            "device vulkan",
            "device webgpu",
            "device hexagon",
            "device level_zero",
            "device opencl",
            "device private",
            "memory class Standard",
            "memory class HostPinned",
            "memory class Unified",
            "memory class Peer",
            "memory class Private()",
            "sync ProducerSynced",
            "sync Event",
            "sync ConsumerStream",
            "tiling depth 3",
            "negative stride",
            "rule Partition",
            "rule Overlay",
            "rule Group",
            "rule Private()",
            "scheme opaque",
            "quantization trailing bytes",
            "scalar",
            "dynamic",
            "empty",
            "shard",
            "statistics",
            "member",
            "later minor",
        ]
        .map(String::from),
    );
    let missing: Vec<_> = want.iter().filter(|w| !seen.contains(*w)).collect();
    assert!(missing.is_empty(), "never generated: {missing:?}");
}
