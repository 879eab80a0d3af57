//! The decoder never panics: every prefix of every golden vector and of a set of local
//! descriptors covering every layout, then 100 000 random mutations of them, go through
//! `decode` in strict, agreed-private and permissive mode and must return `Ok` or `Err`.
//! Whatever decodes must re-encode, and the re-encoding must decode to the same model
//! (byte-identical for a strict decode at version_minor 0).
//!
//! Runs in debug builds too, where integer overflow panics: that is the point.

use hurray_core::{
    BlockPaged, BufferHandle, CombineOp, CompositeHead, CompositionRule, DecodeOptions, DeviceTag,
    ElementType, ExtensionType, IndexType, KvRole, Layout, MemberRole, MemoryClass, Quantization,
    ScaleType, Scheme, Shard, Statistics, SyncMode, TensorDescriptor, TileOrder, Tiling, DYN,
};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::time::Instant;

const MUTATIONS: usize = 100_000;

/// xorshift64* — deterministic, no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
}

fn modes() -> [DecodeOptions; 3] {
    [
        DecodeOptions::strict(),
        DecodeOptions {
            accept_private: true,
            ..DecodeOptions::default()
        },
        DecodeOptions {
            permissive: true,
            accept_private: true,
            ..DecodeOptions::default()
        },
    ]
}

// ---------------------------------------------------------------------------------
// Corpus
// ---------------------------------------------------------------------------------

fn golden() -> Vec<(String, Vec<u8>)> {
    let dir =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/conformance/descriptors");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        eprintln!(
            "SKIPPED golden vectors: {} not found (they live in ../shared beside the repository)",
            dir.display()
        );
        return Vec::new();
    };
    let mut v: Vec<(String, Vec<u8>)> = entries
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "bin"))
        .map(|p| (p.display().to_string(), std::fs::read(&p).unwrap()))
        .collect();
    v.sort();
    v
}

fn desc(et: ElementType, shape: &[u64], layout: Layout, sizes: &[u64]) -> TensorDescriptor {
    TensorDescriptor {
        version_minor: 0,
        element_type: et,
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

fn q(mut d: TensorDescriptor, s: Scheme) -> TensorDescriptor {
    d.quantization = Some(Quantization::from(s));
    d
}

fn paged(et: ElementType, sizes: &[u64], index: IndexType) -> TensorDescriptor {
    desc(
        et,
        &[9, 2, 8],
        Layout::BlockPaged(BlockPaged {
            page_size: 4,
            num_pages: 5,
            paged_axis: 0,
            num_seqs: 2,
            kv_role: KvRole::Value,
            layer_index: u32::MAX,
            block_table_index_type: index,
        }),
        sizes,
    )
}

fn head(rule: CompositionRule, op: CombineOp) -> TensorDescriptor {
    desc(
        ElementType::Float16,
        &[4096, 4096],
        Layout::CompositeHead(CompositeHead {
            rule,
            combine_op: op,
            member_count: 2,
        }),
        &[],
    )
}

/// Valid descriptors covering every layout, every scheme and every optional section.
fn local() -> Vec<(String, TensorDescriptor)> {
    use ElementType::*;
    let f32 = Float32;
    let mut v: Vec<(&str, TensorDescriptor)> = vec![
        ("scalar", desc(f32, &[], Layout::RowMajor, &[4])),
        ("row-major bool", desc(Bool, &[10], Layout::RowMajor, &[2])),
        (
            "row-major float6 byte_offset",
            with(desc(Float6E3m2, &[5], Layout::RowMajor, &[9]), |d| {
                d.byte_offset = 3
            }),
        ),
        (
            "column-major",
            desc(Complex128, &[3, 4], Layout::ColumnMajor, &[192]),
        ),
        (
            "strided negative",
            with(
                desc(
                    f32,
                    &[3, 4],
                    Layout::Strided {
                        strides: vec![-4, 1],
                    },
                    &[48],
                ),
                |d| d.byte_offset = 32,
            ),
        ),
        (
            "strided broadcast int4",
            desc(
                Int4,
                &[3, 4, 2],
                Layout::Strided {
                    strides: vec![0, 2, 1],
                },
                &[4],
            ),
        ),
        (
            "tiled nested strided",
            desc(
                f32,
                &[6, 8],
                Layout::Tiled(Tiling {
                    tile_shape: vec![2, 4],
                    outer: TileOrder::Strided(vec![2, 1]),
                    inner: TileOrder::Tiled(Box::new(Tiling {
                        tile_shape: vec![1, 2],
                        outer: TileOrder::ColumnMajor,
                        inner: TileOrder::Strided(vec![2, 1]),
                    })),
                }),
                &[192],
            ),
        ),
        (
            "morton",
            desc(Uint2, &[3, 4], Layout::Morton { bits: vec![2, 2] }, &[4]),
        ),
        (
            "hilbert",
            desc(
                Float64,
                &[4, 4, 4],
                Layout::Hilbert { order: 2, rank: 3 },
                &[512],
            ),
        ),
        (
            "coo",
            desc(
                f32,
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
            desc(f32, &[3, 3], Layout::Csr { nnz: 2 }, &[8, 16, 32]),
        ),
        (
            "csc",
            desc(Bfloat16, &[4, 5], Layout::Csc { nnz: 5 }, &[10, 40, 48]),
        ),
        (
            "csf",
            desc(
                f32,
                &[2, 3, 4],
                Layout::Csf {
                    nnz: 4,
                    mode_order: vec![2, 0, 1],
                },
                &[16, 16, 16, 24, 24, 32, 32],
            ),
        ),
        (
            "block-paged",
            paged(Float16, &[640, 24, 24], IndexType::U64),
        ),
        (
            "partition head",
            head(CompositionRule::Partition, CombineOp::None),
        ),
        (
            "overlay head",
            head(CompositionRule::Overlay, CombineOp::Add),
        ),
        ("group head", head(CompositionRule::Group, CombineOp::None)),
        (
            "extension layout",
            desc(
                Uint8,
                &[7],
                Layout::Extension {
                    tag: 0xF5,
                    id: 0xDEAD_BEEF,
                    data: vec![9; 11],
                },
                &[7, 64],
            ),
        ),
        (
            "per-tensor",
            q(
                desc(Int16, &[5], Layout::RowMajor, &[10]),
                Scheme::PerTensor {
                    scale: 0.5,
                    zero_point: -3,
                },
            ),
        ),
        (
            "per-channel",
            q(
                desc(Int8, &[2, 4], Layout::RowMajor, &[8, 8, 8]),
                Scheme::PerChannel {
                    axis: 0,
                    scale_buffer_index: 1,
                    zero_point_buffer_index: Some(2),
                    scale_type: ScaleType::F32,
                },
            ),
        ),
        (
            "per-block shared",
            q(
                desc(Uint4, &[6], Layout::RowMajor, &[3, 12]),
                Scheme::PerBlock {
                    axis: 0,
                    block_size: 4,
                    scale_buffer_index: 1,
                    zero_point_buffer_index: Some(1),
                    scale_type: ScaleType::F16,
                },
            ),
        ),
        (
            "nf4",
            q(
                desc(Uint4, &[2, 16], Layout::RowMajor, &[16, 16]),
                Scheme::Nf4 {
                    axis: 1,
                    block_size: 8,
                    scale_buffer_index: 1,
                },
            ),
        ),
        (
            "mxfp",
            q(
                desc(Float6E2m3, &[64], Layout::RowMajor, &[48, 2]),
                Scheme::Mxfp {
                    axis: 0,
                    block_size: 32,
                    scale_buffer_index: 1,
                },
            ),
        ),
        (
            "block-paged per-block",
            q(
                paged(Int8, &[320, 12, 12, 80], IndexType::U32),
                Scheme::PerBlock {
                    axis: 0,
                    block_size: 4,
                    scale_buffer_index: 3,
                    zero_point_buffer_index: None,
                    scale_type: ScaleType::F32,
                },
            ),
        ),
        (
            "csf per-tensor",
            q(
                desc(
                    Uint8,
                    &[2, 3, 4],
                    Layout::Csf {
                        nnz: 4,
                        mode_order: vec![0, 1, 2],
                    },
                    &[4, 16, 16, 24, 24, 32, 32],
                ),
                Scheme::PerTensor {
                    scale: 2.0,
                    zero_point: 1,
                },
            ),
        ),
        (
            "private scheme",
            q(
                desc(Int8, &[4], Layout::RowMajor, &[4, 64]),
                Scheme::Opaque {
                    scheme_tag: 0xF0,
                    scheme_version: 1,
                    flags: 0,
                    payload: vec![0, 0, 0, 0, 16, 0, 0, 0, 1, 0, 0, 0],
                },
            ),
        ),
        (
            "shard + statistics + member, CUDA",
            with(desc(Uint4, &[3, 5], Layout::RowMajor, &[8]), |d| {
                d.buffers[0] = BufferHandle {
                    byte_size: 8,
                    alignment: 4096,
                    device: DeviceTag::Cuda,
                    sync_mode: SyncMode::Event,
                    memory_class: MemoryClass::HostPinned,
                };
                d.shard = Some(Shard {
                    parent_shape: vec![6, 5],
                    offset: vec![3, 0],
                });
                d.statistics = Some(Statistics {
                    computed_mask: 0x3F,
                    nnz: 12,
                    sparsity_ratio: 0.2,
                    value_max: 15.0,
                    value_abs_max: 15.0,
                    value_mean: 7.5,
                    value_stddev: 2.0,
                    nm_n: 2,
                    nm_m: 4,
                    ..Statistics::default()
                });
                d.composite_member = Some(MemberRole::Base);
            }),
        ),
        (
            "private type, device and memory class",
            with(
                desc(ElementType::Private(0xF7), &[9], Layout::RowMajor, &[5]),
                |d| {
                    d.extension_type = Some(ExtensionType {
                        bit_width: 4,
                        packing_factor: 2,
                        is_float: true,
                        sign_bits: 1,
                        exponent_bits: 2,
                        mantissa_bits: 1,
                        exponent_bias: 1,
                        ..ExtensionType::default()
                    });
                    d.buffers[0].device = DeviceTag::Private(0xF1);
                    d.buffers[0].memory_class = MemoryClass::Private(0xF2);
                },
            ),
        ),
        (
            "dynamic dimension",
            desc(f32, &[DYN, 4], Layout::RowMajor, &[0]),
        ),
        ("empty", desc(f32, &[3, 0, 5], Layout::RowMajor, &[0])),
        ("rank 64", desc(Int8, &[1; 64], Layout::RowMajor, &[1])),
    ];
    v.push((
        "minor 1 with trailing bytes",
        with(desc(f32, &[2], Layout::RowMajor, &[8]), |d| {
            d.version_minor = 1
        }),
    ));
    v.into_iter().map(|(n, d)| (n.to_string(), d)).collect()
}

fn with(mut d: TensorDescriptor, f: impl FnOnce(&mut TensorDescriptor)) -> TensorDescriptor {
    f(&mut d);
    d
}

fn corpus() -> Vec<(String, Vec<u8>)> {
    let mut v = golden();
    for (name, d) in local() {
        let mut b = d
            .encode()
            .unwrap_or_else(|e| panic!("local descriptor {name}: {e}"));
        if d.version_minor > 0 {
            // A later minor version may append fields.
            b.extend_from_slice(&[0x5A; 6]);
            let len = b.len() as u32;
            b[6..10].copy_from_slice(&len.to_le_bytes());
        }
        let back = TensorDescriptor::decode_with(&b, &modes()[1])
            .unwrap_or_else(|e| panic!("local descriptor {name} does not decode: {e}"));
        assert_eq!(back, d, "local descriptor {name}");
        v.push((name, b));
    }
    v
}

// ---------------------------------------------------------------------------------
// Checks
// ---------------------------------------------------------------------------------

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// A permissive decode may hold values that cannot be written back.
fn has_unknown_parts(d: &TensorDescriptor) -> bool {
    matches!(d.element_type, ElementType::Unknown(_))
        || matches!(
            d.quantization.as_ref().map(|q| &q.scheme),
            Some(Scheme::Opaque { scheme_tag, .. }) if !(0xF0..=0xFE).contains(scheme_tag)
        )
}

/// Decodes `bytes` in every mode (and as a prefix); on success, checks the re-encoding.
/// Returns how many modes accepted.
fn exercise(bytes: &[u8], what: &dyn Fn() -> String) -> usize {
    let mut ok = 0;
    for opts in modes() {
        let result = catch_unwind(AssertUnwindSafe(|| {
            let _ = TensorDescriptor::decode_prefix(bytes, &opts);
            TensorDescriptor::decode_with(bytes, &opts)
        }));
        let Ok(result) = result else {
            panic!("decode panicked ({opts:?}) on {}: {}", what(), hex(bytes));
        };
        let Ok(d) = result else { continue };
        ok += 1;
        let encoded = match d.encode() {
            Ok(e) => e,
            Err(e) if opts.permissive && has_unknown_parts(&d) => {
                let _ = e;
                continue;
            }
            Err(e) => panic!(
                "decoded ({opts:?}) but does not re-encode: {e}\n{}: {}\n{d:?}",
                what(),
                hex(bytes)
            ),
        };
        if !opts.permissive && d.version_minor == 0 {
            assert_eq!(
                hex(&encoded),
                hex(bytes),
                "strict decode at minor 0 must re-encode identically ({})",
                what()
            );
        }
        let again = TensorDescriptor::decode_with(&encoded, &opts).unwrap_or_else(|e| {
            panic!(
                "re-encoding does not decode ({opts:?}): {e}\n{}: {}",
                what(),
                hex(bytes)
            )
        });
        // Debug output compares NaN statistics as equal, unlike PartialEq.
        assert_eq!(
            format!("{again:?}"),
            format!("{d:?}"),
            "re-encoding decodes to another model ({})",
            what()
        );
        assert_eq!(again.encode().unwrap(), encoded, "{}", what());
    }
    ok
}

#[test]
fn every_prefix_of_every_vector_decodes_without_panic() {
    let corpus = corpus();
    assert!(corpus.len() >= 30);
    for (name, bytes) in &corpus {
        // Private values need the agreement: every vector decodes in the last two modes.
        assert!(exercise(bytes, &|| name.clone()) >= 2, "{name} must decode");
        for n in 0..bytes.len() {
            let accepted = exercise(&bytes[..n], &|| format!("{name}[..{n}]"));
            assert_eq!(accepted, 0, "{name}[..{n}]: a strict prefix was accepted");
        }
    }
}

/// Values that sit on rule boundaries, written over random fields.
const INTERESTING_U8: [u8; 12] = [0, 1, 2, 3, 4, 7, 8, 0x0B, 0x40, 0x80, 0xF0, 0xFF];
const INTERESTING_U64: [u64; 10] = [
    0,
    1,
    2,
    64,
    0x7FFF_FFFF,
    0xFFFF_FFFF,
    1 << 32,
    i64::MAX as u64,
    i64::MIN as u64,
    u64::MAX,
];

fn mutate(rng: &mut Rng, b: &mut Vec<u8>) {
    for _ in 0..1 + rng.below(4) {
        match rng.below(100) {
            // Flip one bit.
            0..=29 if !b.is_empty() => {
                let i = rng.below(b.len());
                b[i] ^= 1 << rng.below(8);
            }
            // Replace a byte with a random or a boundary value.
            30..=59 if !b.is_empty() => {
                let i = rng.below(b.len());
                b[i] = if rng.chance(50) {
                    rng.next() as u8
                } else {
                    INTERESTING_U8[rng.below(INTERESTING_U8.len())]
                };
            }
            // Write a boundary u32/u64 over a field.
            60..=79 if b.len() >= 8 => {
                let v = INTERESTING_U64[rng.below(INTERESTING_U64.len())];
                let w = if rng.chance(50) { 4 } else { 8 };
                let i = rng.below(b.len() - w + 1);
                b[i..i + w].copy_from_slice(&v.to_le_bytes()[..w]);
            }
            // Insert bytes.
            80..=89 => {
                let i = rng.below(b.len() + 1);
                let n = 1 + rng.below(16);
                let fill: Vec<u8> = (0..n).map(|_| rng.next() as u8).collect();
                b.splice(i..i, fill);
            }
            // Delete bytes.
            _ if !b.is_empty() => {
                let i = rng.below(b.len());
                let n = (1 + rng.below(16)).min(b.len() - i);
                b.drain(i..i + n);
            }
            _ => {}
        }
    }
    // Usually keep descriptor_length consistent so decoding gets past the framing.
    if b.len() >= 10 && rng.chance(70) {
        let len = b.len() as u32;
        b[6..10].copy_from_slice(&len.to_le_bytes());
    }
}

#[test]
fn random_mutations_never_panic_and_accepted_ones_round_trip() {
    let corpus = corpus();
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let start = Instant::now();
    let mut accepted = 0usize;
    let mut b = Vec::with_capacity(512);
    for i in 0..MUTATIONS {
        let (name, base) = &corpus[rng.below(corpus.len())];
        b.clear();
        b.extend_from_slice(base);
        mutate(&mut rng, &mut b);
        if exercise(&b, &|| format!("mutation {i} of {name}")) > 0 {
            accepted += 1;
        }
    }
    eprintln!(
        "{MUTATIONS} mutations of {} descriptors: {accepted} accepted in some mode, {:.2?}",
        corpus.len(),
        start.elapsed()
    );
    // The mutator must leave some inputs valid, or the round-trip half tests nothing.
    assert!(
        accepted > MUTATIONS / 50,
        "only {accepted} mutations decoded"
    );
}
