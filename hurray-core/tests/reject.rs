//! Table-driven rejection tests: one case per MUST-reject rule of `shared/spec`
//! (`descriptor.md` §14, `layouts.md` §2, `quantization.md` §9, `element-types.md` §1).
//!
//! Every case starts from a VALID encoding (built from the model and checked to decode),
//! patches bytes at a precise offset, and asserts the decode error's `rule` and `offset`
//! (the offset of the offending field, counted by hand from the spec tables and written
//! next to each base). Where the model can express the same invalidity, `encode()` of
//! that model must fail with the same rule at the same offset (`encode_into` promises
//! "the same errors strict decoding would report for these bytes"). Each case also
//! states what permissive decoding (`descriptor.md` §15) does with the same bytes.

use hurray_core::{
    BlockPaged, BufferHandle, CombineOp, CompositeHead, CompositionRule, DecodeOptions,
    ElementType, ExtensionType, IndexType, KvRole, Layout, MemberRole, Quantization, Rule,
    ScaleType, Scheme, Shard, Statistics, TensorDescriptor, TileOrder, Tiling, DYN,
};
use std::collections::HashSet;
use std::path::PathBuf;

// ---------------------------------------------------------------------------------
// Byte patching
// ---------------------------------------------------------------------------------

fn put(b: &mut [u8], at: usize, v: &[u8]) {
    b[at..at + v.len()].copy_from_slice(v);
}
fn put8(b: &mut [u8], at: usize, v: u8) {
    b[at] = v;
}
fn put16(b: &mut [u8], at: usize, v: u16) {
    put(b, at, &v.to_le_bytes());
}
fn put32(b: &mut [u8], at: usize, v: u32) {
    put(b, at, &v.to_le_bytes());
}
fn put64(b: &mut [u8], at: usize, v: u64) {
    put(b, at, &v.to_le_bytes());
}
/// Replaces `remove` bytes at `at` with `insert` and rewrites `descriptor_length`.
fn splice(b: &mut Vec<u8>, at: usize, remove: usize, insert: &[u8]) {
    b.splice(at..at + remove, insert.iter().copied());
    let len = b.len() as u32;
    put32(b, 6, len);
}
/// Appends a section and rewrites `descriptor_length`.
fn append(b: &mut Vec<u8>, section: &[u8]) {
    let at = b.len();
    splice(b, at, 0, section);
}
fn or_flags(b: &mut [u8], f: u32) {
    let v = u32::from_le_bytes(b[10..14].try_into().unwrap()) | f;
    put32(b, 10, v);
}
fn clear_flags(b: &mut [u8], f: u32) {
    let v = u32::from_le_bytes(b[10..14].try_into().unwrap()) & !f;
    put32(b, 10, v);
}
fn le64s(v: &[u64]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}
/// A CPU / producer-synced / standard handle.
fn handle(size: u64, align: u32) -> Vec<u8> {
    let mut h = size.to_le_bytes().to_vec();
    h.extend_from_slice(&align.to_le_bytes());
    h.extend_from_slice(&[0, 0, 0, 0]);
    h
}
/// A valid 20-byte extension-type section: 8-bit signed integer.
const EXT_INT8: [u8; 20] = [8, 0, 0, 0, 1, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
/// A valid per-tensor quantization section (L = 16, scale 1.0, zero point 0).
const QUANT_PER_TENSOR: [u8; 20] = [
    16, 0, 0, 0, 1, 1, 0, 0, 0x00, 0x00, 0x80, 0x3F, 0, 0, 0, 0, 0, 0, 0, 0,
];

// ---------------------------------------------------------------------------------
// Valid base models (offsets computed by hand from descriptor.md §1–§12)
// ---------------------------------------------------------------------------------

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

fn with(mut d: TensorDescriptor, f: impl FnOnce(&mut TensorDescriptor)) -> TensorDescriptor {
    f(&mut d);
    d
}

/// float32 [3,4] row-major, 61 B (= golden `row_major_f32_3x4`).
/// shape 20..36, byte_offset 36, buffer_count 44, handle 45: byte_size 45,
/// alignment 53, device 57, sync 58, memory_class 59, reserved 60.
fn dense() -> TensorDescriptor {
    TensorDescriptor::dense(ElementType::Float32, &[3, 4]).unwrap()
}
/// float32 scalar, 45 B: byte_offset 20, buffer_count 28, handle 29.
fn scalar() -> TensorDescriptor {
    desc(ElementType::Float32, &[], Layout::RowMajor, &[4])
}
/// float32 [0,4], 61 B (= golden `empty_f32_0x4`): handle 45, alignment 53.
fn empty() -> TensorDescriptor {
    desc(ElementType::Float32, &[0, 4], Layout::RowMajor, &[0])
}
/// float32 [3,4] strided [4,1], 77 B (= golden): strides 44, 52; count 60; handle 61.
fn strided() -> TensorDescriptor {
    desc(
        ElementType::Float32,
        &[3, 4],
        Layout::Strided {
            strides: vec![4, 1],
        },
        &[48],
    )
}
fn tiling(levels: usize) -> Tiling {
    let inner = if levels > 1 {
        TileOrder::Tiled(Box::new(tiling(levels - 1)))
    } else {
        TileOrder::RowMajor
    };
    Tiling {
        tile_shape: vec![2, 4],
        outer: TileOrder::RowMajor,
        inner,
    }
}
/// float32 [6,8] tiled T [2,4] row/row (nested `levels` deep, 20 B per level).
/// Level k (1-based) starts at 44 + 20(k-1): tile_shape +0, +8; outer +16; inner +17;
/// reserved +18, +19. One level: count 64, handle 65, 81 B.
fn tiled(levels: usize) -> TensorDescriptor {
    desc(
        ElementType::Float32,
        &[6, 8],
        Layout::Tiled(tiling(levels)),
        &[192],
    )
}
/// float32 [4,4] Morton bits [2,2], 69 B (= golden): bits 44, 48; count 52; handle 53.
fn morton() -> TensorDescriptor {
    desc(
        ElementType::Float32,
        &[4, 4],
        Layout::Morton { bits: vec![2, 2] },
        &[64],
    )
}
/// float32 [4,4] Hilbert p=2 r=2, 69 B: order 44, hilbert_rank 48, count 52, handle 53.
fn hilbert() -> TensorDescriptor {
    desc(
        ElementType::Float32,
        &[4, 4],
        Layout::Hilbert { order: 2, rank: 2 },
        &[64],
    )
}
/// float32 [4,4] COO nnz 3 sorted, 93 B: nnz 44, is_sorted 52, reserved 53..60,
/// count 60, handles 61, 77.
fn coo() -> TensorDescriptor {
    desc(
        ElementType::Float32,
        &[4, 4],
        Layout::Coo {
            nnz: 3,
            is_sorted: true,
        },
        &[12, 48],
    )
}
/// float32 [3,3] CSR nnz 2, 109 B (= golden `csr_f32_3x3`): nnz 44, reserved 52..60,
/// count 60, handles 61, 77, 93.
fn csr() -> TensorDescriptor {
    desc(
        ElementType::Float32,
        &[3, 3],
        Layout::Csr { nnz: 2 },
        &[8, 16, 32],
    )
}
/// float32 [2,3,4] CSF nnz 4 (layouts.md §2.9 example), 193 B: byte_offset 44,
/// nnz 52, mode_order 60, 64, 68, reserved 72..80, count 80, handles 81 + 16i.
fn csf() -> TensorDescriptor {
    desc(
        ElementType::Float32,
        &[2, 3, 4],
        Layout::Csf {
            nnz: 4,
            mode_order: vec![0, 1, 2],
        },
        &[16, 16, 16, 24, 24, 32, 32],
    )
}
fn paged_layout() -> Layout {
    Layout::BlockPaged(BlockPaged {
        page_size: 4,
        num_pages: 5,
        paged_axis: 0,
        num_seqs: 2,
        kv_role: KvRole::Key,
        layer_index: 3,
        block_table_index_type: IndexType::U32,
    })
}
/// float16 [9,2,8] block-paged (layouts.md §2.10 example), 133 B: byte_offset 44,
/// layout 52: page_size 52, num_pages 56, paged_axis 64, num_seqs 68, kv_role 72,
/// layer_index 73, index_type 77, reserved 78..84; count 84; handles 85, 101, 117.
fn paged() -> TensorDescriptor {
    desc(
        ElementType::Float16,
        &[9, 2, 8],
        paged_layout(),
        &[640, 12, 12],
    )
}
/// float32 [8,8] partition head, 53 B (= golden): byte_offset 36, rule 44, op 45,
/// reserved 46, 47, member_count 48, buffer_count 52.
fn head() -> TensorDescriptor {
    head_with(CompositionRule::Partition, CombineOp::None, 2)
}
fn head_with(rule: CompositionRule, combine_op: CombineOp, n: u32) -> TensorDescriptor {
    desc(
        ElementType::Float32,
        &[8, 8],
        Layout::CompositeHead(CompositeHead {
            rule,
            combine_op,
            member_count: n,
        }),
        &[],
    )
}
/// float32 [3,4] private layout 0xF0, id 7, data [1,2,3], 76 B: id 44, length 52,
/// data 56..59, count 59, handle 60.
fn ext_layout() -> TensorDescriptor {
    desc(
        ElementType::Float32,
        &[3, 4],
        Layout::Extension {
            tag: 0xF0,
            id: 7,
            data: vec![1, 2, 3],
        },
        &[48],
    )
}
/// float32 [8,4] shard of [8,8] at [0,4], 93 B (= golden `sharded_f32_8x4`):
/// handle 45; parent_shape 61, 69; shard_offset 77, 85.
fn sharded() -> TensorDescriptor {
    with(
        desc(ElementType::Float32, &[8, 4], Layout::RowMajor, &[128]),
        |d| {
            d.shard = Some(Shard {
                parent_shape: vec![8, 8],
                offset: vec![0, 4],
            })
        },
    )
}
/// `sharded()` plus a composite-member section (overlay correction), 109 B:
/// member_role 93, reserved 94..109.
fn member() -> TensorDescriptor {
    with(sharded(), |d| {
        d.composite_member = Some(MemberRole::Correction)
    })
}
/// `dense()` plus statistics, 133 B: computed_mask 61, _reserved 65..69,
/// nm_n 125, _reserved2 129..133.
fn stats() -> TensorDescriptor {
    with(dense(), |d| {
        d.statistics = Some(Statistics {
            computed_mask: 0x05,
            nnz: 12,
            value_max: 15.0,
            value_abs_max: 15.0,
            ..Statistics::default()
        })
    })
}
fn ext_int8() -> ExtensionType {
    ExtensionType {
        bit_width: 8,
        packing_factor: 1,
        is_signed: true,
        ..ExtensionType::default()
    }
}
/// private type 0xF0 [4], 8-bit signed integer, 73 B: handle 37; extension type at 53:
/// bit_width 53, packing 57, is_float 58, is_signed 59, sign_bits 60, exponent_bits 61,
/// mantissa_bits 62, _reserved 63, 64, exponent_bias 65, has_nan 69, has_inf 70,
/// _reserved2 71, 72.
fn ext_type() -> TensorDescriptor {
    with(
        desc(ElementType::Private(0xF0), &[4], Layout::RowMajor, &[4]),
        |d| d.extension_type = Some(ext_int8()),
    )
}
fn quantized(mut d: TensorDescriptor, s: Scheme) -> TensorDescriptor {
    d.quantization = Some(Quantization::from(s));
    d
}
/// uint8 [4] per-tensor (scale 0.05, zero point 128), 73 B: handle 37; section 53:
/// L 53, payload p = 57: tag 57, version 58, flags 59, scale 61, zero_point 65,
/// reserved 69..73.
fn per_tensor() -> TensorDescriptor {
    quantized(
        desc(ElementType::Uint8, &[4], Layout::RowMajor, &[4]),
        Scheme::PerTensor {
            scale: 0.05,
            zero_point: 128,
        },
    )
}
/// int8 [2,4] per-channel axis 0 asymmetric (quantization.md §8.2 example), 117 B:
/// handles 45, 61, 77; section 93: L 93, p = 97: flags 99, axis 101, scale index 105,
/// zero-point index 109, scale_type 113, reserved 114..117.
fn per_channel() -> TensorDescriptor {
    quantized(
        desc(ElementType::Int8, &[2, 4], Layout::RowMajor, &[8, 8, 8]),
        Scheme::PerChannel {
            axis: 0,
            scale_buffer_index: 1,
            zero_point_buffer_index: Some(2),
            scale_type: ScaleType::F32,
        },
    )
}
/// int4 [128,128] per-block (= golden `quant_per_block_int4_128x128`), 105 B:
/// handles 45, 61; section 77: L 77, p = 81: flags 83, axis 85, block_size 89,
/// scale index 93, zero-point index 97, scale_type 101, reserved 102..105.
fn per_block() -> TensorDescriptor {
    quantized(
        desc(
            ElementType::Int4,
            &[128, 128],
            Layout::RowMajor,
            &[8192, 256],
        ),
        Scheme::PerBlock {
            axis: 1,
            block_size: 128,
            scale_buffer_index: 1,
            zero_point_buffer_index: None,
            scale_type: ScaleType::F16,
        },
    )
}
/// uint4 [2,16] NF4 axis 1 block 8 (quantization.md §8.4 example), 97 B: handles 45, 61;
/// section 77, p = 81: flags 83, axis 85, block_size 89, scale index 93.
fn nf4() -> TensorDescriptor {
    quantized(
        desc(ElementType::Uint4, &[2, 16], Layout::RowMajor, &[16, 16]),
        Scheme::Nf4 {
            axis: 1,
            block_size: 8,
            scale_buffer_index: 1,
        },
    )
}
/// float4_e2m1 [64] MXFP block 32 (quantization.md §8.5 example), 89 B: shape 20,
/// handles 37, 53; section 69, p = 73: flags 75, axis 77, block_size 81, scale index 85.
fn mxfp() -> TensorDescriptor {
    quantized(
        desc(ElementType::Float4E2m1, &[64], Layout::RowMajor, &[32, 2]),
        Scheme::Mxfp {
            axis: 0,
            block_size: 32,
            scale_buffer_index: 1,
        },
    )
}
/// int8 [9,2,8] block-paged with per-block axis 0, block = page_size, f32 scales per
/// page slot (5·4 = 20), 177 B: handles 85, 101, 117, 133; section 149, p = 153:
/// axis 157, block_size 161, scale index 165, zero-point index 169.
fn paged_per_block() -> TensorDescriptor {
    quantized(
        desc(
            ElementType::Int8,
            &[9, 2, 8],
            paged_layout(),
            &[320, 12, 12, 80],
        ),
        Scheme::PerBlock {
            axis: 0,
            block_size: 4,
            scale_buffer_index: 3,
            zero_point_buffer_index: None,
            scale_type: ScaleType::F32,
        },
    )
}
/// int8 [9,2,8] block-paged with symmetric per-channel on axis 1 (heads), 173 B:
/// section 149, p = 153: axis 157.
fn paged_per_channel() -> TensorDescriptor {
    quantized(
        desc(
            ElementType::Int8,
            &[9, 2, 8],
            paged_layout(),
            &[320, 12, 12, 8],
        ),
        Scheme::PerChannel {
            axis: 1,
            scale_buffer_index: 3,
            zero_point_buffer_index: None,
            scale_type: ScaleType::F32,
        },
    )
}

fn enc(d: &TensorDescriptor) -> Vec<u8> {
    d.encode()
        .unwrap_or_else(|e| panic!("base model must encode: {e}\n{d:?}"))
}

fn private() -> DecodeOptions {
    DecodeOptions {
        accept_private: true,
        ..DecodeOptions::default()
    }
}

// ---------------------------------------------------------------------------------
// The table
// ---------------------------------------------------------------------------------

/// What permissive decoding (descriptor.md §15) does with a case's bytes.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Perm {
    /// Rejected with the same rule and offset (the default: §15 relaxes nothing here).
    Same,
    /// Accepted (§15 allows it).
    Accepts,
    /// Not asserted (the spec does not say).
    Unchecked,
}

struct Case {
    name: String,
    base: Vec<u8>,
    base_opts: DecodeOptions,
    bytes: Vec<u8>,
    opts: DecodeOptions,
    rule: Rule,
    offset: usize,
    model: Option<TensorDescriptor>,
    permissive: Perm,
}

impl Case {
    /// An invalid model expressing the same fault: encode must fail the same way.
    fn model(&mut self, m: TensorDescriptor) -> &mut Self {
        self.model = Some(m);
        self
    }
    /// Options for decoding both the base and the mutated bytes.
    fn opts(&mut self, o: DecodeOptions) -> &mut Self {
        self.base_opts = o;
        self.opts = o;
        self
    }
    /// Options for decoding the mutated bytes only.
    fn decode_opts(&mut self, o: DecodeOptions) -> &mut Self {
        self.opts = o;
        self
    }
    fn permissive(&mut self, p: Perm) -> &mut Self {
        self.permissive = p;
        self
    }
}

#[derive(Default)]
struct Table(Vec<Case>);

impl Table {
    fn add(
        &mut self,
        name: impl Into<String>,
        base: &[u8],
        edit: impl FnOnce(&mut Vec<u8>),
        rule: Rule,
        offset: usize,
    ) -> &mut Case {
        let mut bytes = base.to_vec();
        edit(&mut bytes);
        self.0.push(Case {
            name: name.into(),
            base: base.to_vec(),
            base_opts: DecodeOptions::default(),
            bytes,
            opts: DecodeOptions::default(),
            rule,
            offset,
            model: None,
            permissive: Perm::Same,
        });
        self.0.last_mut().unwrap()
    }
}

fn table() -> Table {
    use Rule::*;
    let mut t = Table::default();

    let d = enc(&dense());
    let sc = enc(&scalar());
    let em = enc(&empty());
    let st = enc(&strided());
    let ti = enc(&tiled(1));
    let mo = enc(&morton());
    let hi = enc(&hilbert());
    let co = enc(&coo());
    let cr = enc(&csr());
    let cf = enc(&csf());
    let pg = enc(&paged());
    let hd = enc(&head());
    let el = enc(&ext_layout());
    let sh = enc(&sharded());
    let mb = enc(&member());
    let ss = enc(&stats());
    let et = enc(&ext_type());
    let pt = enc(&per_tensor());
    let pc = enc(&per_channel());
    let pb = enc(&per_block());
    let n4 = enc(&nf4());
    let mx = enc(&mxfp());
    let ppb = enc(&paged_per_block());
    let ppc = enc(&paged_per_channel());

    // --- Framing and fixed header (descriptor.md §2, §14 #1–#7) -------------------
    t.add(
        "input shorter than the first 10 header bytes",
        &d,
        |b| b.truncate(9),
        Truncated,
        9,
    );
    t.add("bad magic (last byte)", &d, |b| put8(b, 3, b'Z'), Magic, 0);
    t.add("bad magic (all zero)", &d, |b| put(b, 0, &[0; 4]), Magic, 0);
    t.add("version_major 0", &d, |b| put8(b, 4, 0), VersionMajor, 4);
    t.add("version_major 2", &d, |b| put8(b, 4, 2), VersionMajor, 4);
    t.add(
        "descriptor_length 19 (< 20)",
        &d,
        |b| put32(b, 6, 19),
        DescriptorLengthTooSmall,
        6,
    );
    t.add(
        "descriptor_length 0",
        &d,
        |b| put32(b, 6, 0),
        DescriptorLengthTooSmall,
        6,
    );
    t.add(
        "descriptor_length beyond the input",
        &d,
        |b| put32(b, 6, 62),
        DescriptorLengthBeyondInput,
        6,
    );
    t.add(
        "trailing bytes after the sections at minor 0",
        &d,
        |b| append(b, &[0; 4]),
        TrailingBytes,
        61,
    );
    t.add(
        "trailing input after the descriptor",
        &d,
        |b| b.push(0),
        TrailingInput,
        61,
    );
    t.add(
        "buffer table runs past descriptor_length",
        &d,
        |b| put8(b, 44, 2),
        BeyondDescriptorLength,
        61,
    );
    t.add(
        "HAS_STATISTICS without the section",
        &d,
        |b| or_flags(b, 0x08),
        BeyondDescriptorLength,
        61,
    );
    for bit in 5..32 {
        t.add(
            format!("reserved flag bit {bit}"),
            &d,
            |b| or_flags(b, 1 << bit),
            ReservedFlags,
            10,
        );
    }
    t.add(
        "reserved flag bit 5 at version_minor 1",
        &d,
        |b| {
            put8(b, 5, 1);
            or_flags(b, 1 << 5)
        },
        ReservedFlags,
        10,
    );

    // --- Element type (element-types.md §1, descriptor.md §11, §14 #8–#10) --------
    for tag in [0x00, 0xFF] {
        t.add(
            format!("type_tag {tag:#04x}"),
            &d,
            |b| put8(b, 14, tag),
            TypeTagInvalid,
            14,
        );
    }
    for tag in [0x05u8, 0x3F, 0x47, 0x80, 0xEF] {
        t.add(
            format!("type_tag {tag:#04x} unassigned"),
            &d,
            |b| put8(b, 14, tag),
            TypeTagUnknown,
            14,
        )
        .model(with(dense(), |m| {
            m.element_type = ElementType::Unknown(tag)
        }))
        .permissive(Perm::Accepts);
    }
    t.add(
        "private type_tag without agreement",
        &et,
        |_| {},
        TypeTagUnknown,
        14,
    )
    .opts(private())
    .decode_opts(DecodeOptions::strict())
    .permissive(Perm::Accepts);
    t.add(
        "HAS_EXTENSION_TYPE on a public type",
        &d,
        |b| {
            or_flags(b, 0x04);
            append(b, &EXT_INT8)
        },
        ExtensionTypeFlag,
        10,
    )
    .model(with(dense(), |m| m.extension_type = Some(ext_int8())));
    t.add(
        "private type without HAS_EXTENSION_TYPE",
        &et,
        |b| {
            clear_flags(b, 0x04);
            splice(b, 53, 20, &[])
        },
        ExtensionTypeFlag,
        10,
    )
    .opts(private())
    .model(with(ext_type(), |m| m.extension_type = None));

    // --- Layout tag, rank (descriptor.md §4, layouts.md §1.1, §14 #11–#16) --------
    for tag in [0x00, 0xFF] {
        t.add(
            format!("layout_tag {tag:#04x}"),
            &d,
            |b| put8(b, 15, tag),
            LayoutTagInvalid,
            15,
        );
    }
    for tag in [0x0C, 0x3F, 0x41, 0x80, 0xEF] {
        // Permissive: still rejected, the unknown layout's fields cannot be located
        // (descriptor.md A6, layouts.md A-G2).
        t.add(
            format!("layout_tag {tag:#04x} unknown"),
            &d,
            |b| put8(b, 15, tag),
            LayoutTagUnknown,
            15,
        );
    }
    t.add(
        "private layout whose extension_layout_id is not agreed",
        &el,
        |_| {},
        ExtensionLayoutUnknown,
        44,
    )
    .opts(private())
    .decode_opts(DecodeOptions::strict())
    .permissive(Perm::Accepts);
    t.add("rank 65", &d, |b| put32(b, 16, 65), RankTooLarge, 16)
        .model(TensorDescriptor::dense(ElementType::Float32, &[1; 65]).unwrap());
    t.add(
        "rank u32::MAX",
        &d,
        |b| put32(b, 16, u32::MAX),
        RankTooLarge,
        16,
    );
    t.add(
        "rank 0 column-major",
        &sc,
        |b| put8(b, 15, 0x02),
        RankForLayout,
        16,
    )
    .model(with(scalar(), |m| m.layout = Layout::ColumnMajor));
    t.add(
        "rank 0 strided",
        &sc,
        |b| put8(b, 15, 0x03),
        RankForLayout,
        16,
    )
    .model(with(scalar(), |m| {
        m.layout = Layout::Strided { strides: vec![] }
    }));
    t.add(
        "rank 0 Morton",
        &sc,
        |b| put8(b, 15, 0x05),
        RankForLayout,
        16,
    )
    .model(with(scalar(), |m| {
        m.layout = Layout::Morton { bits: vec![] }
    }));
    t.add(
        "rank 0 tiled",
        &sc,
        |b| {
            put8(b, 15, 0x04);
            splice(b, 28, 0, &[1, 1, 0, 0])
        },
        RankForLayout,
        16,
    );
    t.add(
        "rank 0 COO",
        &sc,
        |b| {
            put8(b, 15, 0x06);
            splice(b, 28, 0, &[0; 16])
        },
        RankForLayout,
        16,
    );
    t.add(
        "CSR with rank 3",
        &cr,
        |b| {
            put32(b, 16, 3);
            splice(b, 36, 0, &le64s(&[3]))
        },
        RankForLayout,
        16,
    )
    .model(with(csr(), |m| m.shape = vec![3, 3, 3]));
    t.add(
        "CSR with rank 1",
        &cr,
        |b| {
            put32(b, 16, 1);
            splice(b, 28, 8, &[])
        },
        RankForLayout,
        16,
    )
    .model(with(csr(), |m| m.shape = vec![3]));
    t.add(
        "CSC with rank 3",
        &cr,
        |b| {
            put8(b, 15, 0x08);
            put32(b, 16, 3);
            splice(b, 36, 0, &le64s(&[3]))
        },
        RankForLayout,
        16,
    )
    .model(with(csr(), |m| {
        m.layout = Layout::Csc { nnz: 2 };
        m.shape = vec![3, 3, 3]
    }));
    t.add(
        "CSF with rank 2",
        &cf,
        |b| {
            put32(b, 16, 2);
            splice(b, 68, 4, &[]); // mode_order[2]
            splice(b, 36, 8, &[]) // shape[2]
        },
        RankForLayout,
        16,
    )
    .model(with(csf(), |m| {
        m.shape = vec![2, 3];
        m.layout = Layout::Csf {
            nnz: 4,
            mode_order: vec![0, 1],
        }
    }));
    t.add(
        "block-paged with rank 2",
        &pg,
        |b| {
            put32(b, 16, 2);
            splice(b, 36, 8, &[])
        },
        RankForLayout,
        16,
    )
    .model(with(paged(), |m| m.shape = vec![9, 2]));
    t.add(
        "block-paged with rank 4",
        &pg,
        |b| {
            put32(b, 16, 4);
            splice(b, 44, 0, &le64s(&[1]))
        },
        RankForLayout,
        16,
    )
    .model(with(paged(), |m| m.shape = vec![9, 2, 8, 1]));
    t.add(
        "Hilbert with rank 1",
        &hi,
        |b| {
            put32(b, 16, 1);
            splice(b, 28, 8, &[]);
            put32(b, 40, 1) // hilbert_rank, moved from 48 to 40
        },
        RankForLayout,
        16,
    )
    .model(with(hilbert(), |m| {
        m.shape = vec![4];
        m.layout = Layout::Hilbert { order: 2, rank: 1 }
    }));
    t.add(
        "Hilbert shape[1] = 3 is not 2^p",
        &hi,
        |b| put64(b, 28, 3),
        LayoutField,
        28,
    )
    .model(with(hilbert(), |m| m.shape = vec![4, 3]));
    t.add(
        "Hilbert shape[0] = 2 is a power of two but not 2^p",
        &hi,
        |b| put64(b, 20, 2),
        LayoutField,
        20,
    )
    .model(with(hilbert(), |m| m.shape = vec![2, 4]));
    t.add(
        "Hilbert hilbert_rank != rank",
        &hi,
        |b| put32(b, 48, 3),
        LayoutField,
        48,
    )
    .model(with(hilbert(), |m| {
        m.layout = Layout::Hilbert { order: 2, rank: 3 }
    }));
    t.add("Hilbert order 0", &hi, |b| put32(b, 44, 0), LayoutField, 44)
        .model(with(hilbert(), |m| {
            m.layout = Layout::Hilbert { order: 0, rank: 2 }
        }));

    // --- Reserved bytes (layouts.md A-G3, descriptor.md §6.1, §10–§12) ------------
    let reserved: &[(&str, &[u8], &[usize], DecodeOptions)] = &[
        ("COO _reserved", &co, &[53, 59], DecodeOptions::strict()),
        ("CSR _reserved", &cr, &[52, 59], DecodeOptions::strict()),
        ("CSF _reserved", &cf, &[72, 79], DecodeOptions::strict()),
        (
            "block-paged _reserved",
            &pg,
            &[78, 83],
            DecodeOptions::strict(),
        ),
        (
            "composite head _reserved",
            &hd,
            &[46, 47],
            DecodeOptions::strict(),
        ),
        ("tiled _reserved", &ti, &[62, 63], DecodeOptions::strict()),
        ("buffer handle byte 15", &d, &[60], DecodeOptions::strict()),
        (
            "buffer handle 2 byte 15",
            &cr,
            &[108],
            DecodeOptions::strict(),
        ),
        (
            "statistics _reserved",
            &ss,
            &[65, 68],
            DecodeOptions::strict(),
        ),
        (
            "statistics _reserved2",
            &ss,
            &[129, 132],
            DecodeOptions::strict(),
        ),
        ("extension type _reserved", &et, &[63, 64], private()),
        ("extension type _reserved2", &et, &[71, 72], private()),
        (
            "composite member _reserved",
            &mb,
            &[94, 108],
            DecodeOptions::strict(),
        ),
        (
            "per-tensor _reserved",
            &pt,
            &[69, 72],
            DecodeOptions::strict(),
        ),
        (
            "per-channel _reserved",
            &pc,
            &[114, 116],
            DecodeOptions::strict(),
        ),
        (
            "per-block _reserved",
            &pb,
            &[102, 104],
            DecodeOptions::strict(),
        ),
    ];
    for &(what, base, offs, o) in reserved {
        for &at in offs {
            // Permissive rejects too: §15 gives no mode exception for reserved bytes.
            t.add(
                format!("{what} byte {at} non-zero"),
                base,
                |b| put8(b, at, 0x01),
                ReservedNonZero,
                at,
            )
            .opts(o);
        }
    }
    t.add(
        "CSC _reserved",
        &cr,
        |b| {
            put8(b, 15, 0x08);
            put8(b, 55, 0x80)
        },
        ReservedNonZero,
        55,
    );

    // --- Layout fields (layouts.md §2) ---------------------------------------------
    for v in [0x00, 0x04, 0xFF] {
        t.add(
            format!("tiled outer_layout {v:#04x}"),
            &ti,
            |b| put8(b, 60, v),
            LayoutField,
            60,
        );
    }
    for v in [0x00, 0x05, 0xFF] {
        t.add(
            format!("tiled inner_layout {v:#04x}"),
            &ti,
            |b| put8(b, 61, v),
            LayoutField,
            61,
        );
    }
    t.add(
        "tiled tile_shape[1] = 0",
        &ti,
        |b| put64(b, 52, 0),
        LayoutField,
        52,
    )
    .model(with(tiled(1), |m| {
        m.layout = Layout::Tiled(Tiling {
            tile_shape: vec![2, 0],
            ..tiling(1)
        })
    }));
    t.add(
        "tiled tile_shape[0] = 0",
        &ti,
        |b| put64(b, 44, 0),
        LayoutField,
        44,
    );
    t.add(
        "tiled outer_layout tiled (model)",
        &ti,
        |b| put8(b, 60, 0x04),
        LayoutField,
        60,
    )
    .model(with(tiled(1), |m| {
        m.layout = Layout::Tiled(Tiling {
            outer: TileOrder::Tiled(Box::new(tiling(1))),
            ..tiling(1)
        })
    }));
    {
        // 8 levels are accepted (see `accepted` below); a 9th starts at 44 + 8·20 = 204.
        let eight = enc(&tiled(8));
        t.add(
            "tiled nesting of 9 levels",
            &eight,
            |b| {
                put8(b, 44 + 7 * 20 + 17, 0x04); // level 8 inner_layout = tiled
                let mut level = le64s(&[2, 4]);
                level.extend_from_slice(&[1, 1, 0, 0]);
                splice(b, 204, 0, &level)
            },
            TilingDepth,
            204,
        )
        .model(tiled(9));
        let three = enc(&tiled(3));
        t.add(
            "tiled nesting of 3 levels with a limit of 2",
            &three,
            |_| {},
            TilingDepth,
            84,
        )
        .decode_opts(DecodeOptions {
            max_tiling_depth: 2,
            ..DecodeOptions::default()
        })
        .permissive(Perm::Unchecked);
    }
    t.add(
        "morton_bits[1] = 0",
        &mo,
        |b| put32(b, 48, 0),
        LayoutField,
        48,
    )
    .model(with(morton(), |m| {
        m.layout = Layout::Morton { bits: vec![2, 0] }
    }));
    t.add(
        "morton_bits[0] = 0",
        &mo,
        |b| put32(b, 44, 0),
        LayoutField,
        44,
    );
    t.add(
        "Morton shape[1] = 5 > 2^morton_bits[1]",
        &mo,
        |b| put64(b, 28, 5),
        LayoutField,
        48,
    )
    .model(with(morton(), |m| m.shape = vec![4, 5]));
    t.add(
        "CSF mode_order [0,1,1] (duplicate)",
        &cf,
        |b| put32(b, 68, 1),
        LayoutField,
        68,
    )
    .model(with(csf(), |m| {
        m.layout = Layout::Csf {
            nnz: 4,
            mode_order: vec![0, 1, 1],
        }
    }));
    t.add(
        "CSF mode_order [0,1,3] (out of range)",
        &cf,
        |b| put32(b, 68, 3),
        LayoutField,
        68,
    );
    t.add(
        "CSF mode_order [1,1,2]",
        &cf,
        |b| put32(b, 60, 1),
        LayoutField,
        64,
    );
    for v in [2u8, 0xFF] {
        t.add(
            format!("COO is_sorted {v}"),
            &co,
            |b| put8(b, 52, v),
            LayoutField,
            52,
        );
    }
    t.add("kv_role 3", &pg, |b| put8(b, 72, 3), LayoutField, 72);
    t.add(
        "block_table_index_type 2",
        &pg,
        |b| put8(b, 77, 2),
        LayoutField,
        77,
    );
    t.add("page_size 0", &pg, |b| put32(b, 52, 0), LayoutField, 52)
        .model(with(paged(), |m| {
            if let Layout::BlockPaged(p) = &mut m.layout {
                p.page_size = 0
            }
        }));
    t.add("paged_axis 1", &pg, |b| put32(b, 64, 1), LayoutField, 64)
        .model(with(paged(), |m| {
            if let Layout::BlockPaged(p) = &mut m.layout {
                p.paged_axis = 1
            }
        }));

    // --- Composite head (layouts.md §2.11, descriptor.md §14 #17–#19) --------------
    for rule in [0x00u8, 0x04, 0xEF, 0xFF] {
        t.add(
            format!("composition_rule {rule:#04x}"),
            &hd,
            |b| put8(b, 44, rule),
            CompositeHead,
            44,
        )
        .model(head_with(
            CompositionRule::Private(rule),
            CombineOp::None,
            2,
        ));
    }
    // Private rule: strict rejects; permissive without an agreement too (§15).
    t.add(
        "composition_rule 0xF0 (private, no agreement)",
        &hd,
        |b| put8(b, 44, 0xF0),
        CompositeHead,
        44,
    );
    t.add(
        "partition combine_op 1",
        &hd,
        |b| put8(b, 45, 1),
        CompositeHead,
        45,
    )
    .model(head_with(CompositionRule::Partition, CombineOp::Replace, 2));
    t.add(
        "group combine_op 2",
        &hd,
        |b| {
            put8(b, 44, 3);
            put8(b, 45, 2)
        },
        CompositeHead,
        45,
    )
    .model(head_with(CompositionRule::Group, CombineOp::Add, 2));
    t.add(
        "overlay combine_op 0",
        &hd,
        |b| put8(b, 44, 2),
        CompositeHead,
        45,
    )
    .model(head_with(CompositionRule::Overlay, CombineOp::None, 2));
    t.add(
        "overlay combine_op 3",
        &hd,
        |b| {
            put8(b, 44, 2);
            put8(b, 45, 3)
        },
        CompositeHead,
        45,
    );
    t.add(
        "member_count 0xFFFFFFFF",
        &hd,
        |b| put32(b, 48, u32::MAX),
        CompositeHead,
        48,
    )
    .model(head_with(
        CompositionRule::Partition,
        CombineOp::None,
        u32::MAX,
    ))
    .permissive(Perm::Unchecked);
    t.add(
        "composite head with a buffer",
        &hd,
        |b| {
            put8(b, 52, 1);
            append(b, &handle(0, 64))
        },
        CompositeHeadOwnsData,
        52,
    )
    .model(with(head(), |m| m.buffers = vec![BufferHandle::cpu(0)]));
    t.add(
        "composite head with byte_offset 8",
        &hd,
        |b| put64(b, 36, 8),
        CompositeHeadOwnsData,
        36,
    )
    .model(with(head(), |m| m.byte_offset = 8));
    t.add(
        "composite head with quantization",
        &hd,
        |b| {
            or_flags(b, 0x01);
            append(b, &QUANT_PER_TENSOR)
        },
        CompositeHeadOwnsData,
        10,
    )
    .model(quantized(
        head(),
        Scheme::PerTensor {
            scale: 1.0,
            zero_point: 0,
        },
    ));
    t.add(
        "composite head with a composite-member section",
        &hd,
        |b| {
            or_flags(b, 0x10);
            append(b, &[0; 16])
        },
        CompositeMember,
        10,
    )
    .model(with(head(), |m| {
        m.composite_member = Some(MemberRole::Base)
    }));

    // --- Buffer handles (descriptor.md §6.1–§6.5, §14 #24–#35) ---------------------
    for dev in [0xFFu8, 0x09, 0x80, 0xEF] {
        t.add(
            format!("device_tag {dev:#04x}"),
            &d,
            |b| put8(b, 57, dev),
            DeviceTag,
            57,
        )
        .model(with(dense(), |m| {
            m.buffers[0].device = hurray_core::DeviceTag::Private(dev)
        }));
    }
    t.add(
        "private device_tag 0xF0 without agreement",
        &d,
        |b| put8(b, 57, 0xF0),
        DeviceTag,
        57,
    )
    .permissive(Perm::Unchecked);
    for s in [3u8, 0x80, 0xFE, 0xFF] {
        t.add(
            format!("sync_mode {s:#04x}"),
            &d,
            |b| put8(b, 58, s),
            SyncMode,
            58,
        );
    }
    for (s, mode) in [
        (1u8, hurray_core::SyncMode::Event),
        (2, hurray_core::SyncMode::ConsumerStream),
    ] {
        t.add(
            format!("CPU buffer with sync_mode {s}"),
            &d,
            |b| put8(b, 58, s),
            SyncModeForTransport,
            58,
        )
        .model(with(dense(), |m| m.buffers[0].sync_mode = mode));
    }
    for c in [0x04u8, 0x80, 0xEF, 0xFF] {
        t.add(
            format!("memory_class {c:#04x}"),
            &d,
            |b| put8(b, 59, c),
            MemoryClass,
            59,
        )
        .model(with(dense(), |m| {
            m.buffers[0].memory_class = hurray_core::MemoryClass::Private(c)
        }));
    }
    t.add(
        "private memory_class 0xF0 on the CPU",
        &d,
        |b| put8(b, 59, 0xF0),
        MemoryClass,
        59,
    )
    .model(with(dense(), |m| {
        m.buffers[0].memory_class = hurray_core::MemoryClass::Private(0xF0)
    }));
    let pairs: &[(u8, u8, &str)] = &[
        (0x05, 0x01, "WebGPU + HOST_PINNED"),
        (0x05, 0x02, "WebGPU + UNIFIED"),
        (0x05, 0x03, "WebGPU + PEER"),
        (0x00, 0x03, "CPU + PEER"),
        (0x03, 0x03, "Metal + PEER"),
        (0x06, 0x03, "Hexagon + PEER"),
        (0x08, 0x03, "OpenCL + PEER"),
    ];
    for &(dev, class, what) in pairs {
        t.add(
            format!("(device, memory_class) pair {what}"),
            &d,
            |b| {
                put8(b, 57, dev);
                put8(b, 59, class)
            },
            DeviceMemoryClass,
            59,
        )
        .model(with(dense(), |m| {
            m.buffers[0].device = hurray_core::DeviceTag::from_tag(dev).unwrap();
            m.buffers[0].memory_class = hurray_core::MemoryClass::from_tag(class).unwrap();
        }));
    }
    t.add(
        "private device with HOST_PINNED",
        &d,
        |b| {
            put8(b, 57, 0xF3);
            put8(b, 59, 0x01)
        },
        DeviceMemoryClass,
        59,
    )
    .opts(private())
    .model(with(dense(), |m| {
        m.buffers[0].device = hurray_core::DeviceTag::Private(0xF3);
        m.buffers[0].memory_class = hurray_core::MemoryClass::HostPinned;
    }));
    t.add(
        "colocation: buffer 1 on CUDA, buffer 0 on the CPU",
        &cr,
        |b| put8(b, 77 + 12, 0x01),
        Colocation,
        77 + 12,
    )
    .model(with(csr(), |m| {
        m.buffers[1].device = hurray_core::DeviceTag::Cuda
    }));
    t.add(
        "colocation: buffer 2 HOST_PINNED, buffer 0 STANDARD",
        &cr,
        |b| put8(b, 93 + 14, 0x01),
        Colocation,
        93 + 14,
    )
    .model(with(csr(), |m| {
        m.buffers[2].memory_class = hurray_core::MemoryClass::HostPinned
    }));
    t.add(
        "colocation: quantization scale buffer on CUDA",
        &pb,
        |b| put8(b, 61 + 12, 0x01),
        Colocation,
        61 + 12,
    );
    for a in [0u32, 48, 32, 63, 3, 0x8000_0001] {
        t.add(
            format!("alignment {a} on a non-empty buffer"),
            &d,
            |b| put32(b, 53, a),
            Alignment,
            53,
        )
        .model(with(dense(), |m| m.buffers[0].alignment = a));
    }
    for a in [0u32, 3, 96] {
        t.add(
            format!("alignment {a} on an empty buffer"),
            &em,
            |b| put32(b, 53, a),
            Alignment,
            53,
        )
        .model(with(empty(), |m| m.buffers[0].alignment = a));
    }

    // --- Buffer count (descriptor.md §6, quantization.md §6, §14 #20–#21) -----------
    t.add(
        "dense with buffer_count 2",
        &d,
        |b| {
            put8(b, 44, 2);
            append(b, &handle(0, 64))
        },
        BufferCount,
        44,
    )
    .model(with(dense(), |m| m.buffers.push(BufferHandle::cpu(0))));
    t.add(
        "dense with buffer_count 0",
        &d,
        |b| {
            put8(b, 44, 0);
            splice(b, 45, 16, &[])
        },
        BufferCount,
        44,
    )
    .model(with(dense(), |m| m.buffers.clear()));
    t.add(
        "COO with buffer_count 3",
        &co,
        |b| {
            put8(b, 60, 3);
            append(b, &handle(0, 64))
        },
        BufferCount,
        60,
    )
    .model(with(coo(), |m| m.buffers.push(BufferHandle::cpu(0))));
    t.add(
        "COO with buffer_count 1",
        &co,
        |b| {
            put8(b, 60, 1);
            splice(b, 77, 16, &[])
        },
        BufferCount,
        60,
    )
    .model(with(coo(), |m| {
        m.buffers.pop();
    }));
    t.add(
        "CSR with buffer_count 2",
        &cr,
        |b| {
            put8(b, 60, 2);
            splice(b, 93, 16, &[])
        },
        BufferCount,
        60,
    )
    .model(with(csr(), |m| {
        m.buffers.pop();
    }));
    t.add(
        "CSF with buffer_count 6 (needs 2r+1 = 7)",
        &cf,
        |b| {
            put8(b, 80, 6);
            splice(b, 81 + 6 * 16, 16, &[])
        },
        BufferCount,
        80,
    )
    .model(with(csf(), |m| {
        m.buffers.pop();
    }));
    t.add(
        "block-paged with buffer_count 2",
        &pg,
        |b| {
            put8(b, 84, 2);
            splice(b, 117, 16, &[])
        },
        BufferCount,
        84,
    )
    .model(with(paged(), |m| {
        m.buffers.pop();
    }));
    t.add(
        "unquantized block-paged with buffer_count 4",
        &pg,
        |b| {
            put8(b, 84, 4);
            splice(b, 133, 0, &handle(0, 64))
        },
        BufferCount,
        84,
    )
    .model(with(paged(), |m| m.buffers.push(BufferHandle::cpu(0))));
    t.add(
        "quantized dense (per-block, symmetric) with buffer_count 3",
        &pb,
        |b| {
            put8(b, 44, 3);
            splice(b, 77, 0, &handle(0, 64))
        },
        BufferCount,
        44,
    )
    .model(with(per_block(), |m| m.buffers.push(BufferHandle::cpu(0))));
    t.add(
        "quantized dense (per-block) with buffer_count 1",
        &pb,
        |b| {
            put8(b, 44, 1);
            splice(b, 61, 16, &[])
        },
        BufferCount,
        44,
    )
    .model(with(per_block(), |m| {
        m.buffers.pop();
    }));
    t.add(
        "quantized dense (per-tensor) with buffer_count 2",
        &pt,
        |b| {
            put8(b, 36, 2);
            splice(b, 53, 0, &handle(0, 64))
        },
        BufferCount,
        36,
    )
    .model(with(per_tensor(), |m| m.buffers.push(BufferHandle::cpu(0))));
    t.add(
        "quantized dense (per-channel, asymmetric) with buffer_count 2",
        &pc,
        |b| {
            put8(b, 44, 2);
            splice(b, 77, 16, &[])
        },
        BufferCount,
        44,
    );

    // --- byte_offset and buffer sizes (descriptor.md §5, §13, §14 #22–#23) ---------
    t.add(
        "dense byte_offset 49 > buffer 0's 48 bytes",
        &d,
        |b| put64(b, 36, 49),
        ByteOffset,
        36,
    )
    .model(with(dense(), |m| m.byte_offset = 49));
    t.add(
        "dense byte_offset 4 leaves too little room",
        &d,
        |b| put64(b, 36, 4),
        BufferTooSmall,
        45,
    )
    .model(with(dense(), |m| m.byte_offset = 4));
    t.add(
        "dense buffer of 47 bytes for 48",
        &d,
        |b| put64(b, 45, 47),
        BufferTooSmall,
        45,
    )
    .model(with(dense(), |m| m.buffers[0].byte_size = 47));
    t.add(
        "strided negative stride puts elements before buffer 0",
        &st,
        |b| put64(b, 44, -4i64 as u64),
        ByteOffset,
        36,
    )
    .model(with(strided(), |m| {
        m.layout = Layout::Strided {
            strides: vec![-4, 1],
        }
    }));
    t.add(
        "strided [5,1] reaches past buffer 0",
        &st,
        |b| put64(b, 44, 5),
        BufferTooSmall,
        61,
    )
    .model(with(strided(), |m| {
        m.layout = Layout::Strided {
            strides: vec![5, 1],
        }
    }));
    t.add(
        "strided extreme strides overflow the address range",
        &st,
        |b| {
            put64(b, 20, u64::MAX - 1);
            put64(b, 28, u64::MAX - 1);
            put64(b, 44, i64::MIN as u64);
            put64(b, 52, i64::MIN as u64)
        },
        SizeOverflow,
        44,
    );
    t.add(
        "dense element count overflows u64",
        &d,
        |b| {
            put64(b, 20, 1 << 62);
            put64(b, 28, 8)
        },
        SizeOverflow,
        28,
    )
    .model(with(dense(), |m| m.shape = vec![1 << 62, 8]));
    t.add(
        "dense byte size overflows u64",
        &d,
        |b| {
            put64(b, 20, 1 << 62);
            put64(b, 28, 2)
        },
        SizeOverflow,
        45,
    )
    .model(with(dense(), |m| m.shape = vec![1 << 62, 2]));
    t.add(
        "Morton buffer of 63 bytes for 64",
        &mo,
        |b| put64(b, 53, 63),
        BufferTooSmall,
        53,
    );
    t.add(
        "tiled buffer of 191 bytes for 192 (edge tiles stored in full)",
        &ti,
        |b| put64(b, 65, 191),
        BufferTooSmall,
        65,
    );
    t.add(
        "CSR row_ptr of 24 bytes for (3+1)·8",
        &cr,
        |b| put64(b, 93, 24),
        BufferTooSmall,
        93,
    )
    .model(with(csr(), |m| m.buffers[2].byte_size = 24));
    t.add(
        "COO byte_offset 8 (sparse must be 0)",
        &co,
        |b| put64(b, 36, 8),
        ByteOffset,
        36,
    )
    .model(with(coo(), |m| m.byte_offset = 8));
    t.add(
        "CSR byte_offset 8 (sparse must be 0)",
        &cr,
        |b| put64(b, 36, 8),
        ByteOffset,
        36,
    )
    .model(with(csr(), |m| m.byte_offset = 8));
    t.add(
        "CSF byte_offset 1",
        &cf,
        |b| put64(b, 44, 1),
        ByteOffset,
        44,
    )
    .model(with(csf(), |m| m.byte_offset = 1));
    t.add(
        "block-paged byte_offset 1",
        &pg,
        |b| put64(b, 44, 1),
        ByteOffset,
        44,
    )
    .model(with(paged(), |m| m.byte_offset = 1));

    // --- Shard (descriptor.md §9, §14 #38–#40) -------------------------------------
    t.add(
        "shard_offset[1] 5 + shape[1] 4 > parent 8",
        &sh,
        |b| put64(b, 85, 5),
        ShardBounds,
        85,
    )
    .model(with(sharded(), |m| m.shard.as_mut().unwrap().offset[1] = 5));
    t.add(
        "shard_offset[0] + shape[0] overflows u64",
        &sh,
        |b| put64(b, 77, u64::MAX - 1),
        ShardBounds,
        77,
    )
    .model(with(sharded(), |m| {
        m.shard.as_mut().unwrap().offset[0] = u64::MAX - 1
    }));
    t.add(
        "parent_shape[0] 7 < shape[0] 8",
        &sh,
        |b| put64(b, 61, 7),
        ShardBounds,
        77,
    );
    t.add(
        "shard parent_shape[0] DYN",
        &sh,
        |b| put64(b, 61, DYN),
        ShardForbidden,
        61,
    )
    .model(with(sharded(), |m| {
        m.shard.as_mut().unwrap().parent_shape[0] = DYN
    }));
    t.add(
        "shard_offset[1] DYN",
        &sh,
        |b| put64(b, 85, DYN),
        ShardForbidden,
        85,
    )
    .model(with(sharded(), |m| {
        m.shard.as_mut().unwrap().offset[1] = DYN
    }));
    t.add(
        "shape[0] DYN with a shard section",
        &sh,
        |b| put64(b, 20, DYN),
        ShardForbidden,
        20,
    )
    .model(with(sharded(), |m| m.shape[0] = DYN));
    let shard3 = {
        let mut s = le64s(&[9, 2, 8]);
        s.extend(le64s(&[0, 0, 0]));
        s
    };
    t.add(
        "shard section on block-paged",
        &pg,
        |b| {
            or_flags(b, 0x02);
            append(b, &shard3)
        },
        ShardForbidden,
        10,
    )
    .model(with(paged(), |m| {
        m.shard = Some(Shard {
            parent_shape: vec![9, 2, 8],
            offset: vec![0, 0, 0],
        })
    }));
    let shard_csf = {
        let mut s = le64s(&[2, 3, 4]);
        s.extend(le64s(&[0, 0, 0]));
        s
    };
    t.add(
        "shard section on CSF",
        &cf,
        |b| {
            or_flags(b, 0x02);
            append(b, &shard_csf)
        },
        ShardForbidden,
        10,
    )
    .model(with(csf(), |m| {
        m.shard = Some(Shard {
            parent_shape: vec![2, 3, 4],
            offset: vec![0, 0, 0],
        })
    }));

    // --- Statistics (descriptor.md §10, §14 #41) ------------------------------------
    for mask in [0x40u32, 0x8000_0000, 0xFFFF_FFFF] {
        t.add(
            format!("statistics computed_mask {mask:#x}"),
            &ss,
            |b| put32(b, 61, mask),
            StatisticsMask,
            61,
        )
        .model(with(stats(), |m| {
            m.statistics.as_mut().unwrap().computed_mask = mask
        }));
    }

    // --- Extension type (descriptor.md §11, §14 #43–#44) ----------------------------
    let ext = |f: fn(&mut hurray_core::ExtensionType)| {
        with(ext_type(), |m| f(m.extension_type.as_mut().unwrap()))
    };
    t.add(
        "extension bit_width 0",
        &et,
        |b| put32(b, 53, 0),
        ExtensionType,
        53,
    )
    .opts(private())
    .model(ext(|e| e.bit_width = 0));
    // The packing rule (descriptor.md §11) sits on `packing_factor`'s row: the error
    // points there for every broken (bit_width, packing_factor) combination.
    t.add(
        "extension bit_width 3",
        &et,
        |b| put32(b, 53, 3),
        ExtensionType,
        57,
    )
    .opts(private())
    .model(ext(|e| e.bit_width = 3));
    t.add(
        "extension bit_width 3, packing_factor 2",
        &et,
        |b| {
            put32(b, 53, 3);
            put8(b, 57, 2)
        },
        ExtensionType,
        57,
    )
    .opts(private());
    t.add(
        "extension bit_width 4 with packing_factor 1",
        &et,
        |b| put32(b, 53, 4),
        ExtensionType,
        57,
    )
    .opts(private())
    .model(ext(|e| e.bit_width = 4));
    t.add(
        "extension bit_width 8 with packing_factor 2",
        &et,
        |b| put8(b, 57, 2),
        ExtensionType,
        57,
    )
    .opts(private())
    .model(ext(|e| e.packing_factor = 2));
    t.add(
        "extension bit_width 12 (not whole bytes)",
        &et,
        |b| put32(b, 53, 12),
        ExtensionType,
        57,
    )
    .opts(private())
    .model(ext(|e| e.bit_width = 12));
    for (what, at) in [
        ("is_float", 58),
        ("is_signed", 59),
        ("has_nan", 69),
        ("has_inf", 70),
    ] {
        t.add(
            format!("extension {what} 2"),
            &et,
            |b| put8(b, at, 2),
            ExtensionType,
            at,
        )
        .opts(private());
    }
    t.add(
        "extension integer with sign_bits 1",
        &et,
        |b| put8(b, 60, 1),
        ExtensionType,
        60,
    )
    .opts(private())
    .model(ext(|e| e.sign_bits = 1));
    t.add(
        "extension integer with exponent_bits 5",
        &et,
        |b| put8(b, 61, 5),
        ExtensionType,
        61,
    )
    .opts(private())
    .model(ext(|e| e.exponent_bits = 5));
    t.add(
        "extension integer with mantissa_bits 2",
        &et,
        |b| put8(b, 62, 2),
        ExtensionType,
        62,
    )
    .opts(private())
    .model(ext(|e| e.mantissa_bits = 2));
    t.add(
        "extension integer with exponent_bias 7",
        &et,
        |b| put32(b, 65, 7),
        ExtensionType,
        65,
    )
    .opts(private())
    .model(ext(|e| e.exponent_bias = 7));
    t.add(
        "extension float with is_signed 1",
        &et,
        |b| put8(b, 58, 1),
        ExtensionType,
        59,
    )
    .opts(private())
    .model(ext(|e| e.is_float = true));
    t.add(
        "extension float with sign_bits 2",
        &et,
        |b| {
            put8(b, 58, 1);
            put8(b, 59, 0);
            put8(b, 60, 2)
        },
        ExtensionType,
        60,
    )
    .opts(private())
    .model(ext(|e| {
        e.is_float = true;
        e.is_signed = false;
        e.sign_bits = 2
    }));

    // --- Composite member (descriptor.md §12, §14 #45) ------------------------------
    for role in [2u8, 0xFF] {
        t.add(
            format!("member_role {role:#04x}"),
            &mb,
            |b| put8(b, 93, role),
            CompositeMember,
            93,
        );
    }

    // --- Quantization framing and header (quantization.md §2–§5, §9 items 1–5) ------
    t.add(
        "quantization_length 3 (< 4)",
        &pt,
        |b| {
            put32(b, 53, 3);
            splice(b, 60, 13, &[])
        },
        QuantizationHeader,
        53,
    );
    t.add(
        "quantization_length 0",
        &pt,
        |b| {
            put32(b, 53, 0);
            splice(b, 57, 16, &[])
        },
        QuantizationHeader,
        53,
    );
    t.add(
        "quantization_length beyond descriptor_length",
        &pt,
        |b| put32(b, 53, 17),
        BeyondDescriptorLength,
        57,
    );
    t.add(
        "per-tensor L 12 < fixed 16",
        &pt,
        |b| {
            put32(b, 53, 12);
            splice(b, 69, 4, &[])
        },
        QuantizationHeader,
        53,
    );
    t.add(
        "per-block L 23 < fixed 24",
        &pb,
        |b| {
            put32(b, 77, 23);
            splice(b, 104, 1, &[])
        },
        QuantizationHeader,
        77,
    );
    for tag in [0x00u8, 0xFF] {
        t.add(
            format!("scheme_tag {tag:#04x}"),
            &pt,
            |b| put8(b, 57, tag),
            QuantizationHeader,
            57,
        );
    }
    for tag in [0x06u8, 0x3F, 0x40, 0x60, 0x80, 0xEF, 0xF0] {
        // Permissive may step over an unknown scheme (quantization.md §4).
        t.add(
            format!("scheme_tag {tag:#04x} unknown"),
            &pt,
            |b| put8(b, 57, tag),
            QuantizationSchemeUnknown,
            57,
        )
        .permissive(Perm::Accepts);
    }
    for v in [0u8, 2, 0xFF] {
        t.add(
            format!("scheme_version {v}"),
            &pt,
            |b| put8(b, 58, v),
            QuantizationHeader,
            58,
        );
    }
    let flag_cases: &[(&str, &[u8], usize, u16)] = &[
        ("per-tensor", &pt, 59, 0x0001),
        ("per-tensor", &pt, 59, 0x8000),
        ("per-channel", &pc, 99, 0x0002),
        ("per-block", &pb, 83, 0x0003),
        ("per-block", &pb, 83, 0x8001),
        ("NF4", &n4, 83, 0x0001),
        ("MXFP", &mx, 75, 0x0001),
    ];
    for &(what, base, at, v) in flag_cases {
        t.add(
            format!("{what} quantization flags {v:#06x}"),
            base,
            |b| put16(b, at, v),
            QuantizationHeader,
            at,
        );
    }

    // --- Quantization payload against the descriptor (§9 items 6–13, §10) ---------
    let storage: &[(&str, &[u8], u8, TensorDescriptor)] = &[
        ("float32 with per-tensor", &pt, 0x03, per_tensor()),
        ("bool with per-tensor", &pt, 0x20, per_tensor()),
        ("int64 with per-tensor", &pt, 0x16, per_tensor()),
        ("float16 with per-channel", &pc, 0x01, per_channel()),
        ("int16 with per-block", &pb, 0x12, per_block()),
        ("int32 with per-block", &pb, 0x14, per_block()),
        ("int4 with NF4", &n4, 0x48, nf4()),
        ("uint8 with MXFP", &mx, 0x11, mxfp()),
        ("float8_e8m0 with MXFP", &mx, 0x42, mxfp()),
        ("uint4 with MXFP", &mx, 0x49, mxfp()),
    ];
    for (what, base, tag, model) in storage {
        let ty = ElementType::from_tag(*tag).unwrap();
        t.add(
            format!("storage type {what}"),
            base,
            |b| put8(b, 14, *tag),
            QuantizationStorageType,
            14,
        )
        .model(with(model.clone(), |m| m.element_type = ty));
    }
    for (what, bits) in [
        ("0", 0u32),
        ("-0", 0x8000_0000),
        ("NaN", 0x7FC0_0000),
        ("+inf", 0x7F80_0000),
        ("-inf", 0xFF80_0000),
    ] {
        t.add(
            format!("per-tensor scale {what}"),
            &pt,
            |b| put32(b, 61, bits),
            QuantizationField,
            61,
        )
        .model(with(per_tensor(), |m| {
            m.quantization = Some(
                Scheme::PerTensor {
                    scale: f32::from_bits(bits),
                    zero_point: 128,
                }
                .into(),
            )
        }));
    }
    for (ty, zp) in [
        (ElementType::Uint4, 16i32),
        (ElementType::Uint8, 256),
        (ElementType::Uint8, -1),
        (ElementType::Int8, -129),
        (ElementType::Int8, 128),
        (ElementType::Int2, 2),
        (ElementType::Uint32, -1),
    ] {
        t.add(
            format!("per-tensor zero_point {zp} for {ty}"),
            &pt,
            |b| {
                put8(b, 14, ty.tag());
                put32(b, 65, zp as u32)
            },
            QuantizationField,
            65,
        )
        .model(with(per_tensor(), |m| {
            m.element_type = ty;
            m.quantization = Some(
                Scheme::PerTensor {
                    scale: 0.05,
                    zero_point: zp,
                }
                .into(),
            )
        }));
    }
    let axis_cases: &[(&str, &[u8], usize, u32)] = &[
        ("per-channel", &pc, 101, 2),
        ("per-block", &pb, 85, 2),
        ("per-block", &pb, 85, u32::MAX),
        ("NF4", &n4, 85, 2),
        ("MXFP", &mx, 77, 1),
    ];
    for &(what, base, at, axis) in axis_cases {
        t.add(
            format!("{what} axis {axis} >= rank"),
            base,
            |b| put32(b, at, axis),
            QuantizationField,
            at,
        );
    }
    t.add(
        "per-block axis 2 >= rank (model)",
        &pb,
        |b| put32(b, 85, 2),
        QuantizationField,
        85,
    )
    .model(with(per_block(), |m| {
        if let Some(Quantization {
            scheme: Scheme::PerBlock { axis, .. },
            ..
        }) = &mut m.quantization
        {
            *axis = 2
        }
    }));
    t.add(
        "per-block: DYN on the quantized axis",
        &pb,
        |b| put64(b, 28, DYN),
        DynamicDimension,
        28,
    )
    .model(with(per_block(), |m| m.shape[1] = DYN));
    t.add(
        "per-channel: DYN on the quantized axis",
        &pc,
        |b| put64(b, 20, DYN),
        DynamicDimension,
        20,
    )
    .model(with(per_channel(), |m| m.shape[0] = DYN));
    t.add(
        "MXFP: DYN on the quantized axis",
        &mx,
        |b| put64(b, 20, DYN),
        DynamicDimension,
        20,
    );
    let block_cases: &[(&str, &[u8], usize, u32)] = &[
        ("per-block not a power of two", &pb, 89, 96),
        ("per-block below the minimum 2", &pb, 89, 1),
        ("per-block zero", &pb, 89, 0),
        ("per-block above shape[axis] 128", &pb, 89, 256),
        ("NF4 below the minimum 8", &n4, 89, 4),
        ("NF4 above shape[axis] 16", &n4, 89, 32),
        ("NF4 not a power of two", &n4, 89, 12),
        ("MXFP below the minimum 16", &mx, 81, 8),
        ("MXFP not a power of two", &mx, 81, 48),
    ];
    for &(what, base, at, k) in block_cases {
        t.add(
            format!("block_size {k}: {what}"),
            base,
            |b| put32(b, at, k),
            QuantizationField,
            at,
        );
    }
    t.add(
        "per-block block_size 96 (model)",
        &pb,
        |b| put32(b, 89, 96),
        QuantizationField,
        89,
    )
    .model(with(per_block(), |m| {
        if let Some(Quantization {
            scheme: Scheme::PerBlock { block_size, .. },
            ..
        }) = &mut m.quantization
        {
            *block_size = 96
        }
    }));
    t.add(
        "MXFP shape [48] not a multiple of block_size 32",
        &mx,
        |b| put64(b, 20, 48),
        QuantizationField,
        81,
    )
    .model(with(mxfp(), |m| m.shape = vec![48]));
    t.add(
        "MXFP empty axis (shape [0])",
        &mx,
        |b| put64(b, 20, 0),
        QuantizationField,
        81,
    )
    .model(with(mxfp(), |m| m.shape = vec![0]));
    t.add(
        "MXFP block_size 4096 > 2048",
        &mx,
        |b| {
            put64(b, 20, 4096);
            put32(b, 81, 4096)
        },
        QuantizationField,
        81,
    )
    .model(with(mxfp(), |m| {
        m.shape = vec![4096];
        m.quantization = Some(
            Scheme::Mxfp {
                axis: 0,
                block_size: 4096,
                scale_buffer_index: 1,
            }
            .into(),
        )
    }));
    t.add(
        "per-block SYMMETRIC with a zero-point index",
        &pb,
        |b| put32(b, 97, 1),
        QuantizationField,
        97,
    );
    t.add(
        "per-channel SYMMETRIC with a zero-point index",
        &pc,
        |b| put16(b, 99, 1),
        QuantizationField,
        109,
    );
    t.add(
        "per-block asymmetric with zero-point index NONE",
        &pb,
        |b| put16(b, 83, 0),
        QuantizationBufferIndex,
        97,
    );
    t.add(
        "per-channel asymmetric with zero-point index NONE",
        &pc,
        |b| put32(b, 109, u32::MAX),
        QuantizationBufferIndex,
        109,
    );
    let index_cases: &[(&str, &[u8], usize, u32)] = &[
        ("per-block scale index 2 >= buffer_count", &pb, 93, 2),
        ("per-block scale index 0 (data buffer)", &pb, 93, 0),
        ("per-block scale index u32::MAX - 1", &pb, 93, u32::MAX - 1),
        ("per-channel scale index 0 (data buffer)", &pc, 105, 0),
        (
            "per-channel zero-point index 3 >= buffer_count",
            &pc,
            109,
            3,
        ),
        ("per-channel zero-point index 0 (data buffer)", &pc, 109, 0),
        ("NF4 scale index 0 (data buffer)", &n4, 93, 0),
        ("NF4 scale index 2 >= buffer_count", &n4, 93, 2),
        ("MXFP scale index 2 >= buffer_count", &mx, 85, 2),
        ("block-paged scale index 1 (a layout buffer)", &ppb, 165, 1),
    ];
    for &(what, base, at, ix) in index_cases {
        t.add(
            what,
            base,
            |b| put32(b, at, ix),
            QuantizationBufferIndex,
            at,
        );
    }
    t.add(
        "per-block scale index 0 (model)",
        &pb,
        |b| put32(b, 93, 0),
        QuantizationBufferIndex,
        93,
    )
    .model(with(per_block(), |m| {
        if let Some(Quantization {
            scheme: Scheme::PerBlock {
                scale_buffer_index, ..
            },
            ..
        }) = &mut m.quantization
        {
            *scale_buffer_index = 0
        }
    }));
    let size_cases: &[(&str, &[u8], usize, u64)] = &[
        ("per-block scale buffer 255 B (needs 128·2)", &pb, 61, 255),
        ("per-block scale buffer 257 B (exact size)", &pb, 61, 257),
        ("per-channel scale buffer 4 B (needs 2·4)", &pc, 61, 4),
        (
            "per-channel zero-point buffer 12 B (needs 2·4)",
            &pc,
            77,
            12,
        ),
        ("NF4 absmax buffer 12 B (needs 4·4)", &n4, 61, 12),
        ("MXFP scale buffer 3 B (needs 2)", &mx, 53, 3),
        ("block-paged scale buffer 76 B (needs 20·4)", &ppb, 133, 76),
    ];
    for &(what, base, at, size) in size_cases {
        t.add(
            what,
            base,
            |b| put64(b, at, size),
            QuantizationBufferSize,
            at,
        );
    }
    t.add(
        "per-block scale buffer 255 B (model)",
        &pb,
        |b| put64(b, 61, 255),
        QuantizationBufferSize,
        61,
    )
    .model(with(per_block(), |m| m.buffers[1].byte_size = 255));
    for v in [0u8, 1, 2, 4] {
        t.add(
            format!("per-channel scale_type_tag {v}"),
            &pc,
            |b| put8(b, 113, v),
            QuantizationField,
            113,
        );
    }
    for v in [0u8, 4, 0xFF] {
        t.add(
            format!("per-block scale_type_tag {v}"),
            &pb,
            |b| put8(b, 101, v),
            QuantizationField,
            101,
        );
    }
    {
        // uint4 [6], one shared f32 scale/zero-point buffer, 109 B: shape 20;
        // section 69, p = 73: axis 77.
        let shared = quantized(
            desc(ElementType::Uint4, &[6], Layout::RowMajor, &[3, 16]),
            Scheme::PerBlock {
                axis: 0,
                block_size: 4,
                scale_buffer_index: 1,
                zero_point_buffer_index: Some(1),
                scale_type: ScaleType::F32,
            },
        );
        t.add(
            "shared scale/zero-point buffer size overflows u64",
            &enc(&shared),
            |b| put64(b, 20, 1 << 63),
            SizeOverflow,
            77,
        )
        .model(with(shared.clone(), |m| m.shape = vec![1 << 63]));
        t.add(
            "shared scale/zero-point buffer of 15 B (needs 2·4 + 2·4)",
            &enc(&shared),
            |b| put64(b, 53, 15),
            QuantizationBufferSize,
            53,
        );
    }
    t.add(
        "per-channel scale_type f16 (model)",
        &pc,
        |b| put8(b, 113, 1),
        QuantizationField,
        113,
    )
    .model(with(per_channel(), |m| {
        if let Some(Quantization {
            scheme: Scheme::PerChannel { scale_type, .. },
            ..
        }) = &mut m.quantization
        {
            *scale_type = ScaleType::F16
        }
    }));
    t.add(
        "block-paged per-block with axis 1",
        &ppb,
        |b| put32(b, 157, 1),
        QuantizationField,
        157,
    )
    .model(with(paged_per_block(), |m| {
        if let Some(Quantization {
            scheme: Scheme::PerBlock { axis, .. },
            ..
        }) = &mut m.quantization
        {
            *axis = 1
        }
    }));
    t.add(
        "block-paged per-block with block_size 8 != page_size 4",
        &ppb,
        |b| put32(b, 161, 8),
        QuantizationField,
        161,
    )
    .model(with(paged_per_block(), |m| {
        if let Some(Quantization {
            scheme: Scheme::PerBlock { block_size, .. },
            ..
        }) = &mut m.quantization
        {
            *block_size = 8
        }
    }));
    t.add(
        "block-paged per-channel on axis 0",
        &ppc,
        |b| put32(b, 157, 0),
        QuantizationField,
        157,
    );

    t
}

// ---------------------------------------------------------------------------------
// Runner
// ---------------------------------------------------------------------------------

#[test]
fn every_must_reject_rule_is_rejected_with_its_rule_and_offset() {
    let t = table();
    let mut names = HashSet::new();
    let mut failures = Vec::new();
    let mut models = 0;
    for c in &t.0 {
        assert!(names.insert(c.name.clone()), "duplicate case {}", c.name);
        let mut fail = |msg: String| failures.push(format!("[{}] {msg}", c.name));

        // The unmutated base is valid.
        if let Err(e) = TensorDescriptor::decode_with(&c.base, &c.base_opts) {
            fail(format!("base does not decode: {e}"));
            continue;
        }
        // The mutated bytes fail with the expected rule at the expected offset.
        match TensorDescriptor::decode_with(&c.bytes, &c.opts) {
            Ok(d) => fail(format!("accepted: {d:?}")),
            Err(e) if (e.rule, e.offset) != (c.rule, c.offset) => fail(format!(
                "expected {:?}@{}, got {:?}@{} ({e})",
                c.rule, c.offset, e.rule, e.offset
            )),
            Err(_) => {}
        }
        // The model, where it can express the fault, fails encoding the same way.
        if let Some(m) = &c.model {
            models += 1;
            match m.encode() {
                Ok(_) => fail("encode() accepted the invalid model".into()),
                Err(e) if (e.rule, e.offset) != (c.rule, c.offset) => fail(format!(
                    "encode: expected {:?}@{}, got {:?}@{} ({e})",
                    c.rule, c.offset, e.rule, e.offset
                )),
                Err(_) => {}
            }
            match m.validate() {
                Err(e) if e.rule == c.rule => {}
                other => fail(format!("validate() gives {other:?}")),
            }
        }
        // Permissive mode (descriptor.md §15).
        let p = DecodeOptions {
            permissive: true,
            ..c.opts
        };
        let got = TensorDescriptor::decode_with(&c.bytes, &p);
        match (c.permissive, got) {
            (Perm::Unchecked, _) => {}
            (Perm::Accepts, Ok(_)) => {}
            (Perm::Accepts, Err(e)) => fail(format!("permissive should accept: {e}")),
            (Perm::Same, Ok(d)) => fail(format!("permissive accepted: {d:?}")),
            (Perm::Same, Err(e)) if (e.rule, e.offset) != (c.rule, c.offset) => fail(format!(
                "permissive: expected {:?}@{}, got {:?}@{}",
                c.rule, c.offset, e.rule, e.offset
            )),
            (Perm::Same, Err(_)) => {}
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n{}",
        failures.len(),
        t.0.len(),
        failures.join("\n")
    );
    // A floor, so that cases are not lost silently.
    assert!(t.0.len() >= 300, "only {} cases", t.0.len());
    eprintln!(
        "{} rejection cases ({} with an invalid model)",
        t.0.len(),
        models
    );
}

/// Each rejected bytes are rejected by `decode_prefix` too, and the strict error never
/// points past the input.
#[test]
fn decode_prefix_agrees_and_offsets_lie_inside_the_input() {
    for c in &table().0 {
        let whole = TensorDescriptor::decode_with(&c.bytes, &c.opts).unwrap_err();
        assert!(
            whole.offset <= c.bytes.len(),
            "[{}] offset {} beyond {} bytes",
            c.name,
            whole.offset,
            c.bytes.len()
        );
        if whole.rule != Rule::TrailingInput {
            let prefix = TensorDescriptor::decode_prefix(&c.bytes, &c.opts).unwrap_err();
            assert_eq!(prefix, whole, "[{}]", c.name);
        }
    }
}

// ---------------------------------------------------------------------------------
// What must be accepted next to the rejections (boundaries of the same rules)
// ---------------------------------------------------------------------------------

#[test]
fn boundary_values_are_accepted() {
    let d = enc(&dense());
    let em = enc(&empty());
    let mut cases: Vec<(&str, Vec<u8>, DecodeOptions)> = Vec::new();
    let mut add = |name, base: &[u8], edit: &dyn Fn(&mut Vec<u8>), o| {
        let mut b = base.to_vec();
        edit(&mut b);
        cases.push((name, b, o));
    };
    let strict = DecodeOptions::strict();
    add(
        "alignment 1 on an empty buffer",
        &em,
        &|b| put32(b, 53, 1),
        strict,
    );
    add(
        "alignment 2 on an empty buffer",
        &em,
        &|b| put32(b, 53, 2),
        strict,
    );
    add(
        "alignment 4096 on a buffer",
        &d,
        &|b| put32(b, 53, 4096),
        strict,
    );
    add(
        "alignment 2^31 on a buffer",
        &d,
        &|b| put32(b, 53, 1 << 31),
        strict,
    );
    add(
        "trailing bytes at version_minor 1",
        &d,
        &|b| {
            put8(b, 5, 1);
            append(b, &[0xAB; 7])
        },
        strict,
    );
    add(
        "quantization payload longer than the fixed size",
        &enc(&per_tensor()),
        &|b| {
            put32(b, 53, 20);
            splice(b, 73, 0, &[0xEE; 4])
        },
        strict,
    );
    add(
        "CUDA + PEER + SYNC_EVENT",
        &d,
        &|b| {
            put32(b, 53, 4096);
            put(b, 57, &[0x01, 0x01, 0x03])
        },
        strict,
    );
    add(
        "private device with a private memory class (agreed)",
        &d,
        &|b| put(b, 57, &[0xF3, 0x02, 0xF7]),
        private(),
    );
    add(
        "private type (agreed)",
        &enc(&ext_type()),
        &|_| {},
        private(),
    );
    add(
        "private layout (agreed)",
        &enc(&ext_layout()),
        &|_| {},
        private(),
    );
    add(
        "private scheme (agreed)",
        &enc(&per_tensor()),
        &|b| put8(b, 57, 0xF0),
        private(),
    );
    add(
        "private composition rule (permissive with agreement)",
        &enc(&head()),
        &|b| put8(b, 44, 0xF0),
        DecodeOptions {
            permissive: true,
            accept_private: true,
            ..DecodeOptions::default()
        },
    );
    add(
        "tiled nesting of exactly 8 levels",
        &enc(&tiled(8)),
        &|_| {},
        strict,
    );
    add(
        "morton shape[1] = 3 < 2^morton_bits[1] (padding codes)",
        &enc(&morton()),
        &|b| put64(b, 28, 3),
        strict,
    );
    add(
        "shard_offset[1] + shape[1] = parent_shape[1] exactly",
        &enc(&sharded()),
        &|_| {},
        strict,
    );
    add(
        "DYN dimension without a shard section",
        &d,
        &|b| put64(b, 20, DYN),
        strict,
    );
    add(
        "computed_mask 0x3F",
        &enc(&stats()),
        &|b| put32(b, 61, 0x3F),
        strict,
    );
    add(
        "overlay combine_op add",
        &enc(&head()),
        &|b| put(b, 44, &[2, 2]),
        strict,
    );
    add(
        "CSF mode_order [2,0,1]",
        &enc(&csf()),
        &|b| {
            put32(b, 60, 2);
            put32(b, 64, 0);
            put32(b, 68, 1)
        },
        strict,
    );
    add("rank 0 row-major", &enc(&scalar()), &|_| {}, strict);
    add(
        "NF4 block_size = shape[axis]",
        &enc(&nf4()),
        &|b| {
            put32(b, 89, 16);
            put64(b, 61, 8) // 2 blocks of f32 absmax
        },
        strict,
    );
    let mut r64 = TensorDescriptor::dense(ElementType::Float32, &[1; 64]).unwrap();
    r64.shape[63] = 2;
    r64.buffers[0].byte_size = 8;
    add("rank 64", &enc(&r64), &|_| {}, strict);
    let pb_shared = quantized(
        desc(ElementType::Uint4, &[6], Layout::RowMajor, &[4, 12]),
        Scheme::PerBlock {
            axis: 0,
            block_size: 4,
            scale_buffer_index: 1,
            zero_point_buffer_index: Some(1),
            scale_type: ScaleType::F16,
        },
    );
    add(
        "per-block partial block with a shared scale/zero-point buffer",
        &enc(&pb_shared),
        &|_| {},
        strict,
    );
    add(
        "block-paged per-channel on axis 2",
        &enc(&paged_per_channel()),
        &|b| {
            put32(b, 157, 2);
            put64(b, 133, 32) // head_dim 8 f32 scales
        },
        strict,
    );
    for (name, b, o) in &cases {
        let d = TensorDescriptor::decode_with(b, o).unwrap_or_else(|e| panic!("{name}: {e}"));
        if d.version_minor == 0 && !o.permissive {
            assert_eq!(&d.encode().unwrap(), b, "{name}: re-encoding differs");
        }
    }
}

#[test]
fn permissive_mode_keeps_unknown_values_opaque() {
    // Unknown type tag → ElementType::Unknown; it cannot be written back.
    let mut b = enc(&dense());
    put8(&mut b, 14, 0x47);
    let d = TensorDescriptor::decode_with(&b, &DecodeOptions::permissive()).unwrap();
    assert_eq!(d.element_type, ElementType::Unknown(0x47));
    assert_eq!(d.encode().unwrap_err().rule, Rule::TypeTagUnknown);

    // Unagreed private type: accepted and sized through the extension section (A13).
    let b = enc(&ext_type());
    let d = TensorDescriptor::decode_with(&b, &DecodeOptions::permissive()).unwrap();
    assert_eq!(d.element_type, ElementType::Private(0xF0));
    assert_eq!(d.storage(), Some(hurray_core::Storage::Bytes(1)));

    // Unknown scheme: skipped through quantization_length, kept opaque.
    let mut b = enc(&per_tensor());
    put8(&mut b, 57, 0x06);
    let d = TensorDescriptor::decode_with(&b, &DecodeOptions::permissive()).unwrap();
    match &d.quantization.as_ref().unwrap().scheme {
        Scheme::Opaque {
            scheme_tag,
            scheme_version,
            payload,
            ..
        } => {
            assert_eq!((*scheme_tag, *scheme_version, payload.len()), (0x06, 1, 12));
        }
        s => panic!("expected an opaque scheme, got {s:?}"),
    }

    // Unagreed private layout: kept as an extension layout.
    let b = enc(&ext_layout());
    let d = TensorDescriptor::decode_with(&b, &DecodeOptions::permissive()).unwrap();
    assert_eq!(d.layout, ext_layout().layout);

    // Handle _reserved ≠ 0 is rejected in every mode.
    let mut b = enc(&dense());
    put8(&mut b, 60, 1);
    for o in [
        DecodeOptions::strict(),
        DecodeOptions::permissive(),
        private(),
    ] {
        let e = TensorDescriptor::decode_with(&b, &o).unwrap_err();
        assert_eq!((e.rule, e.offset), (Rule::ReservedNonZero, 60));
    }
}

/// Models with a `Private(t)` or `Opaque` value outside the private range
/// `0xF0`–`0xFE` cannot be written: their bytes would decode as something else or be
/// rejected.
#[test]
fn encode_rejects_private_values_outside_the_private_range() {
    let check = |name: &str, m: TensorDescriptor, rule: Rule, offset: usize| {
        let e = m.encode().expect_err(name);
        assert_eq!((e.rule, e.offset), (rule, offset), "{name}: {e}");
    };
    for t in [0x00u8, 0xFF] {
        check(
            "private type 0x00/0xFF",
            with(ext_type(), |m| m.element_type = ElementType::Private(t)),
            Rule::TypeTagInvalid,
            14,
        );
    }
    for t in [0x03u8, 0x47, 0x80] {
        check(
            "private type outside 0xF0..=0xFE",
            with(ext_type(), |m| m.element_type = ElementType::Private(t)),
            Rule::TypeTagUnknown,
            14,
        );
    }
    check(
        "private device 0x09",
        with(dense(), |m| {
            m.buffers[0].device = hurray_core::DeviceTag::Private(0x09)
        }),
        Rule::DeviceTag,
        57,
    );
    check(
        "private memory class 0x04 on a private device",
        with(dense(), |m| {
            m.buffers[0].device = hurray_core::DeviceTag::Private(0xF1);
            m.buffers[0].memory_class = hurray_core::MemoryClass::Private(0x04)
        }),
        Rule::MemoryClass,
        59,
    );
    for (tag, rule) in [
        (0x00u8, Rule::QuantizationHeader),
        (0xFF, Rule::QuantizationHeader),
        (0x01, Rule::QuantizationHeader),
        (0x06, Rule::QuantizationSchemeUnknown),
        (0x80, Rule::QuantizationSchemeUnknown),
    ] {
        check(
            "opaque scheme outside 0xF0..=0xFE",
            with(per_tensor(), |m| {
                m.quantization = Some(
                    Scheme::Opaque {
                        scheme_tag: tag,
                        scheme_version: 1,
                        flags: 0,
                        payload: vec![0; 12],
                    }
                    .into(),
                )
            }),
            rule,
            57,
        );
    }
    // The agreed private values themselves encode and decode back.
    let m = with(dense(), |m| {
        m.buffers[0].device = hurray_core::DeviceTag::Private(0xF1);
        m.buffers[0].memory_class = hurray_core::MemoryClass::Private(0xF2);
        m.quantization = None;
    });
    let b = m.encode().unwrap();
    assert_eq!(TensorDescriptor::decode_with(&b, &private()).unwrap(), m);
    let m = with(per_tensor(), |m| {
        m.quantization = Some(
            Scheme::Opaque {
                scheme_tag: 0xF0,
                scheme_version: 7,
                flags: 0xFFFF,
                payload: vec![1, 2, 3],
            }
            .into(),
        )
    });
    let b = m.encode().unwrap();
    assert_eq!(TensorDescriptor::decode_with(&b, &private()).unwrap(), m);
}

/// The locally built bases equal the golden vectors they mirror.
#[test]
fn bases_match_the_golden_vectors() {
    let dir =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/conformance/descriptors");
    if !dir.is_dir() {
        eprintln!("SKIPPED: {} not found", dir.display());
        return;
    }
    for (file, m) in [
        ("row_major_f32_3x4.bin", dense()),
        ("empty_f32_0x4.bin", empty()),
        ("strided_f32_3x4.bin", strided()),
        ("morton_f32_4x4.bin", morton()),
        ("csr_f32_3x3.bin", csr()),
        ("composite_head_partition.bin", head()),
        ("sharded_f32_8x4.bin", sharded()),
        ("quant_per_block_int4_128x128.bin", per_block()),
    ] {
        let golden = std::fs::read(dir.join(file)).unwrap();
        assert_eq!(enc(&m), golden, "{file}");
    }
}
