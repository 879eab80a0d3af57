//! Every descriptor accessor on every layout and section: values read back equal
//! what the builder was given (and the hurray-core model), array accessors follow
//! the size-query / BUFFER_TOO_SMALL convention, and every accessor about a layout or
//! section the descriptor lacks fails with HURRAY_ERR_NOT_APPLICABLE.

mod common;

use common::*;
use hurray_core::layout::{TileOrder, Tiling};
use hurray_core::{
    BlockPaged, CombineOp, CompositeHead, CompositionRule, ElementType, ExtensionType, IndexType,
    KvRole, Layout, MemberRole, Quantization, ScaleType, Scheme, Shard, Statistics,
    TensorDescriptor,
};
use hurray_ffi::builder::*;
use hurray_ffi::descriptor::HurrayDescriptor;
use hurray_ffi::descriptor_access::*;
use hurray_ffi::tags::*;
use hurray_ffi::*;
use std::ptr::{null, null_mut};

/// Every layout/section accessor, called with room for 64 values; its status.
fn probe(d: *const HurrayDescriptor) -> Vec<(&'static str, HurrayStatus)> {
    let mut u64s = [0u64; 64];
    let mut u64b = [0u64; 64];
    let mut i64s = [0i64; 64];
    let mut u32s = [0u32; 64];
    let mut bytes = [0u8; 64];
    let (mut n, mut a, mut b32, mut c32, mut byte, mut byte2) = (0u64, 0u64, 0u32, 0u32, 0u8, 0u8);
    let (mut bp, mut ch) = (HurrayBlockPaged::default(), HurrayCompositeHead::default());
    let (mut q, mut st, mut et) = (
        HurrayQuantization::default(),
        HurrayStatistics::default(),
        HurrayExtensionType::default(),
    );
    // SAFETY: d is live; every array holds 64 values and outs are writable.
    unsafe {
        vec![
            (
                "strides",
                hurray_descriptor_strides(d, i64s.as_mut_ptr(), 64, &mut n),
            ),
            ("tiling_depth", hurray_descriptor_tiling_depth(d, &mut b32)),
            (
                "tiling_level",
                hurray_descriptor_tiling_level(d, 0, &mut byte, &mut byte2),
            ),
            (
                "tile_shape",
                hurray_descriptor_tile_shape(d, 0, u64s.as_mut_ptr(), 64, &mut n),
            ),
            (
                "tile_outer_strides",
                hurray_descriptor_tile_outer_strides(d, 0, i64s.as_mut_ptr(), 64, &mut n),
            ),
            (
                "tile_inner_strides",
                hurray_descriptor_tile_inner_strides(d, 0, i64s.as_mut_ptr(), 64, &mut n),
            ),
            (
                "morton_bits",
                hurray_descriptor_morton_bits(d, u32s.as_mut_ptr(), 64, &mut n),
            ),
            ("nnz", hurray_descriptor_nnz(d, &mut a)),
            (
                "coo_is_sorted",
                hurray_descriptor_coo_is_sorted(d, &mut byte),
            ),
            (
                "csf_mode_order",
                hurray_descriptor_csf_mode_order(d, u32s.as_mut_ptr(), 64, &mut n),
            ),
            ("block_paged", hurray_descriptor_block_paged(d, &mut bp)),
            (
                "composite_head",
                hurray_descriptor_composite_head(d, &mut ch),
            ),
            ("hilbert", hurray_descriptor_hilbert(d, &mut b32, &mut c32)),
            (
                "extension_layout",
                hurray_descriptor_extension_layout(d, &mut a, bytes.as_mut_ptr(), 64, &mut n),
            ),
            ("quantization", hurray_descriptor_quantization(d, &mut q)),
            (
                "quantization_trailing",
                hurray_descriptor_quantization_trailing(d, bytes.as_mut_ptr(), 64, &mut n),
            ),
            (
                "shard",
                hurray_descriptor_shard(d, u64s.as_mut_ptr(), u64b.as_mut_ptr(), 64, &mut n),
            ),
            ("statistics", hurray_descriptor_statistics(d, &mut st)),
            (
                "extension_type",
                hurray_descriptor_extension_type(d, &mut et),
            ),
            ("member_role", hurray_descriptor_member_role(d, &mut byte)),
        ]
    }
}

/// Asserts that exactly the accessors named in `applies` succeed and every other
/// one reports HURRAY_ERR_NOT_APPLICABLE with a message.
#[track_caller]
fn only(d: *const HurrayDescriptor, applies: &[&str]) {
    for (name, s) in probe(d) {
        if applies.contains(&name) {
            assert_eq!(s, HURRAY_OK, "{name}: {}", last_error());
        } else {
            assert_eq!(
                s,
                HURRAY_ERR_NOT_APPLICABLE,
                "{name} should not apply ({})",
                status_name(s)
            );
            let m = last_error();
            assert!(
                m.len() > "HURRAY_ERR_NOT_APPLICABLE: ".len() + 10,
                "{name}: {m}"
            );
        }
    }
}

/// Array accessor convention: size query, exact copy, short buffer.
#[track_caller]
fn array<T: Copy + Default + PartialEq + std::fmt::Debug>(
    want: &[T],
    mut f: impl FnMut(*mut T, u64, *mut u64) -> HurrayStatus,
) {
    let mut n = 99u64;
    ok(f(null_mut(), 0, &mut n));
    assert_eq!(n, want.len() as u64, "size query");
    let mut v = vec![T::default(); want.len()];
    ok(f(v.as_mut_ptr(), v.len() as u64, &mut n));
    assert_eq!(v, want);
    if !want.is_empty() {
        let mut short = vec![T::default(); want.len() - 1];
        let mut m = 0u64;
        err(
            f(short.as_mut_ptr(), short.len() as u64, &mut m),
            HURRAY_ERR_BUFFER_TOO_SMALL,
            "the output holds",
        );
        assert_eq!(m, want.len() as u64);
    }
    err(
        f(v.as_mut_ptr(), v.len() as u64, null_mut()),
        HURRAY_ERR_NULL_POINTER,
        "out_len",
    );
}

fn header(d: *const HurrayDescriptor) -> HurrayDescriptorHeader {
    let mut h = HurrayDescriptorHeader::default();
    // SAFETY: live descriptor.
    ok(unsafe { hurray_descriptor_header(d, &mut h) });
    h
}

fn base(t: ElementType, shape: &[u64], layout: Layout, sizes: &[u64]) -> TensorDescriptor {
    TensorDescriptor {
        version_minor: 0,
        element_type: t,
        shape: shape.to_vec(),
        byte_offset: 0,
        layout,
        buffers: sizes
            .iter()
            .map(|&n| hurray_core::BufferHandle::cpu(n))
            .collect(),
        quantization: None,
        shard: None,
        statistics: None,
        extension_type: None,
        composite_member: None,
    }
}

#[test]
fn header_shape_dim_and_buffers() {
    let _l = live();
    let b = builder(HURRAY_TYPE_FLOAT32, HURRAY_LAYOUT_ROW_MAJOR, &[2, 3, 4]);
    // SAFETY: live builder.
    ok(unsafe { hurray_descriptor_builder_set_byte_offset(b, 0) });
    let entry = HurrayBufferEntry {
        byte_size: 96,
        alignment: 128,
        device_tag: HURRAY_DEVICE_CUDA,
        sync_mode: HURRAY_SYNC_EVENT,
        memory_class: HURRAY_MEMORY_PEER,
    };
    // SAFETY: live builder; valid entry.
    ok(unsafe { hurray_descriptor_builder_add_buffer(b, &entry) });
    let d = finish(b);
    let h = header(d);
    assert_eq!(
        h,
        HurrayDescriptorHeader {
            version_major: 1,
            version_minor: 0,
            type_tag: HURRAY_TYPE_FLOAT32,
            layout_tag: HURRAY_LAYOUT_ROW_MAJOR,
            flags: 0,
            descriptor_length: encode(d).len() as u32,
            rank: 3,
            buffer_count: 1,
            byte_offset: 0,
        }
    );
    // SAFETY: live descriptor; outs writable.
    unsafe {
        array(&[2u64, 3, 4], |o, c, n| hurray_descriptor_shape(d, o, c, n));
        let mut v = 0u64;
        ok(hurray_descriptor_dim(d, 2, &mut v));
        assert_eq!(v, 4);
        err(
            hurray_descriptor_dim(d, 3, &mut v),
            HURRAY_ERR_OUT_OF_RANGE,
            "past rank 3",
        );
        err(
            hurray_descriptor_dim(d, 0, null_mut()),
            HURRAY_ERR_NULL_POINTER,
            "out",
        );
        err(
            hurray_descriptor_dim(null(), 0, &mut v),
            HURRAY_ERR_NULL_POINTER,
            "descriptor",
        );
        let mut e = HurrayBufferEntry::default();
        ok(hurray_descriptor_buffer(d, 0, &mut e));
        assert_eq!(e, entry);
        err(
            hurray_descriptor_buffer(d, 1, &mut e),
            HURRAY_ERR_OUT_OF_RANGE,
            "past the table's 1",
        );
        err(
            hurray_descriptor_header(d, null_mut()),
            HURRAY_ERR_NULL_POINTER,
            "out",
        );
    }
    only(d, &[]);
    destroy(d);
}

#[test]
fn strided() {
    let _l = live();
    let b = builder(HURRAY_TYPE_FLOAT32, HURRAY_LAYOUT_STRIDED, &[3, 4]);
    let s = [4i64, 1];
    // SAFETY: live builder; 2 strides.
    ok(unsafe { hurray_descriptor_builder_set_strides(b, s.as_ptr(), 2) });
    add_cpu(b, &[48]);
    let d = finish(b);
    // SAFETY: live descriptor.
    array(&s, |o, c, n| unsafe {
        hurray_descriptor_strides(d, o, c, n)
    });
    only(d, &["strides"]);
    if let Some(g) = golden("strided_f32_3x4.bin") {
        assert_eq!(encode(d), g);
    }
    destroy(d);
}

#[test]
fn tiled_nested_with_strided_orders() {
    let _l = live();
    let b = builder(HURRAY_TYPE_FLOAT32, HURRAY_LAYOUT_TILED, &[8, 8]);
    // SAFETY: live builder; every array holds rank values.
    unsafe {
        ok(hurray_descriptor_builder_push_tiling_level(
            b,
            [4u64, 4].as_ptr(),
            HURRAY_TILE_ORDER_STRIDED,
            [2i64, 1].as_ptr(),
            HURRAY_TILE_ORDER_TILED,
            null(),
        ));
        ok(hurray_descriptor_builder_push_tiling_level(
            b,
            [2u64, 2].as_ptr(),
            HURRAY_TILE_ORDER_COLUMN_MAJOR,
            null(),
            HURRAY_TILE_ORDER_STRIDED,
            [2i64, 1].as_ptr(),
        ));
    }
    add_cpu(b, &[256]);
    let d = finish(b);
    let want = base(
        ElementType::Float32,
        &[8, 8],
        Layout::Tiled(Tiling {
            tile_shape: vec![4, 4],
            outer: TileOrder::Strided(vec![2, 1]),
            inner: TileOrder::Tiled(Box::new(Tiling {
                tile_shape: vec![2, 2],
                outer: TileOrder::ColumnMajor,
                inner: TileOrder::Strided(vec![2, 1]),
            })),
        }),
        &[256],
    );
    assert_eq!(model(d), want);
    // SAFETY: live descriptor; outs writable.
    unsafe {
        let mut depth = 0u32;
        ok(hurray_descriptor_tiling_depth(d, &mut depth));
        assert_eq!(depth, 2);
        let (mut o, mut i) = (0u8, 0u8);
        ok(hurray_descriptor_tiling_level(d, 0, &mut o, &mut i));
        assert_eq!((o, i), (HURRAY_TILE_ORDER_STRIDED, HURRAY_TILE_ORDER_TILED));
        ok(hurray_descriptor_tiling_level(d, 1, &mut o, &mut i));
        assert_eq!(
            (o, i),
            (HURRAY_TILE_ORDER_COLUMN_MAJOR, HURRAY_TILE_ORDER_STRIDED)
        );
        err(
            hurray_descriptor_tiling_level(d, 2, &mut o, &mut i),
            HURRAY_ERR_OUT_OF_RANGE,
            "past the layout's 2 levels",
        );
        err(
            hurray_descriptor_tiling_level(d, 0, null_mut(), &mut i),
            HURRAY_ERR_NULL_POINTER,
            "out_outer_order",
        );
        array(&[4u64, 4], |p, c, n| {
            hurray_descriptor_tile_shape(d, 0, p, c, n)
        });
        array(&[2u64, 2], |p, c, n| {
            hurray_descriptor_tile_shape(d, 1, p, c, n)
        });
        array(&[2i64, 1], |p, c, n| {
            hurray_descriptor_tile_outer_strides(d, 0, p, c, n)
        });
        array(&[2i64, 1], |p, c, n| {
            hurray_descriptor_tile_inner_strides(d, 1, p, c, n)
        });
        let mut v = [0i64; 2];
        let mut n = 0u64;
        err(
            hurray_descriptor_tile_inner_strides(d, 0, v.as_mut_ptr(), 2, &mut n),
            HURRAY_ERR_NOT_APPLICABLE,
            "not strided",
        );
        err(
            hurray_descriptor_tile_outer_strides(d, 1, v.as_mut_ptr(), 2, &mut n),
            HURRAY_ERR_NOT_APPLICABLE,
            "not strided",
        );
        err(
            hurray_descriptor_tile_shape(d, 5, null_mut(), 0, &mut n),
            HURRAY_ERR_OUT_OF_RANGE,
            "tiling level 5",
        );
    }
    only(
        d,
        &[
            "tiling_depth",
            "tiling_level",
            "tile_shape",
            "tile_outer_strides",
        ],
    );
    destroy(d);
}

#[test]
fn morton_and_hilbert() {
    let _l = live();
    let b = builder(HURRAY_TYPE_FLOAT32, HURRAY_LAYOUT_MORTON, &[4, 4]);
    // SAFETY: live builder; 2 values.
    ok(unsafe { hurray_descriptor_builder_set_morton_bits(b, [2u32, 2].as_ptr(), 2) });
    add_cpu(b, &[64]);
    let d = finish(b);
    // SAFETY: live descriptor.
    array(&[2u32, 2], |p, c, n| unsafe {
        hurray_descriptor_morton_bits(d, p, c, n)
    });
    only(d, &["morton_bits"]);
    if let Some(g) = golden("morton_f32_4x4.bin") {
        assert_eq!(encode(d), g);
    }
    destroy(d);

    let b = builder(HURRAY_TYPE_INT32, HURRAY_LAYOUT_HILBERT, &[4, 4]);
    // SAFETY: live builder.
    ok(unsafe { hurray_descriptor_builder_set_hilbert(b, 2, 2) });
    add_cpu(b, &[64]);
    let d = finish(b);
    assert_eq!(
        model(d),
        base(
            ElementType::Int32,
            &[4, 4],
            Layout::Hilbert { order: 2, rank: 2 },
            &[64]
        )
    );
    let (mut o, mut r) = (0u32, 0u32);
    // SAFETY: live descriptor.
    unsafe {
        ok(hurray_descriptor_hilbert(d, &mut o, &mut r));
        assert_eq!((o, r), (2, 2));
        err(
            hurray_descriptor_hilbert(d, &mut o, null_mut()),
            HURRAY_ERR_NULL_POINTER,
            "out_rank",
        );
    }
    only(d, &["hilbert"]);
    destroy(d);
}

#[test]
fn sparse_layouts() {
    let _l = live();
    // COO
    let b = builder(HURRAY_TYPE_FLOAT32, HURRAY_LAYOUT_COO, &[4, 4]);
    // SAFETY: live builder.
    unsafe {
        ok(hurray_descriptor_builder_set_nnz(b, 3));
        ok(hurray_descriptor_builder_set_coo_is_sorted(b, 1));
    }
    add_cpu(b, &[12, 48]);
    let d = finish(b);
    assert_eq!(
        model(d).layout,
        Layout::Coo {
            nnz: 3,
            is_sorted: true
        }
    );
    let (mut nnz, mut sorted) = (0u64, 0u8);
    // SAFETY: live descriptor.
    unsafe {
        ok(hurray_descriptor_nnz(d, &mut nnz));
        ok(hurray_descriptor_coo_is_sorted(d, &mut sorted));
    }
    assert_eq!((nnz, sorted), (3, 1));
    only(d, &["nnz", "coo_is_sorted"]);
    destroy(d);
    // CSR (the golden) and CSC
    for (tag, t, shape, sizes, golden_name) in [
        (
            HURRAY_LAYOUT_CSR,
            HURRAY_TYPE_FLOAT32,
            [3u64, 3],
            [8u64, 16, 32],
            Some("csr_f32_3x3.bin"),
        ),
        (
            HURRAY_LAYOUT_CSC,
            HURRAY_TYPE_FLOAT16,
            [3, 5],
            [4, 16, 48],
            None,
        ),
    ] {
        let b = builder(t, tag, &shape);
        // SAFETY: live builder.
        ok(unsafe { hurray_descriptor_builder_set_nnz(b, 2) });
        add_cpu(b, &sizes);
        let d = finish(b);
        // SAFETY: live descriptor.
        ok(unsafe { hurray_descriptor_nnz(d, &mut nnz) });
        assert_eq!(nnz, 2);
        only(d, &["nnz"]);
        if let Some(g) = golden_name.and_then(golden) {
            assert_eq!(encode(d), g);
        }
        destroy(d);
    }
    // CSF
    let b = builder(HURRAY_TYPE_FLOAT32, HURRAY_LAYOUT_CSF, &[2, 2, 2]);
    // SAFETY: live builder; 3 values.
    unsafe {
        ok(hurray_descriptor_builder_set_nnz(b, 2));
        ok(hurray_descriptor_builder_set_csf_mode_order(
            b,
            [0u32, 1, 2].as_ptr(),
            3,
        ));
    }
    add_cpu(b, &[8, 16, 8, 16, 16, 24, 16]);
    let d = finish(b);
    // SAFETY: live descriptor.
    array(&[0u32, 1, 2], |p, c, n| unsafe {
        hurray_descriptor_csf_mode_order(d, p, c, n)
    });
    only(d, &["nnz", "csf_mode_order"]);
    destroy(d);
}

#[test]
fn block_paged_and_composite_head() {
    let _l = live();
    let fields = HurrayBlockPaged {
        num_pages: 2,
        page_size: 2,
        paged_axis: 0,
        num_seqs: 1,
        layer_index: 3,
        kv_role: HURRAY_KV_ROLE_KEY,
        block_table_index_type: HURRAY_INDEX_TYPE_U32,
    };
    let b = builder(HURRAY_TYPE_FLOAT16, HURRAY_LAYOUT_BLOCK_PAGED, &[4, 2, 2]);
    // SAFETY: live builder; valid struct.
    ok(unsafe { hurray_descriptor_builder_set_block_paged(b, &fields) });
    add_cpu(b, &[32, 8, 8]);
    let d = finish(b);
    assert_eq!(
        model(d).layout,
        Layout::BlockPaged(BlockPaged {
            page_size: 2,
            num_pages: 2,
            paged_axis: 0,
            num_seqs: 1,
            kv_role: KvRole::Key,
            layer_index: 3,
            block_table_index_type: IndexType::U32,
        })
    );
    let mut got = HurrayBlockPaged::default();
    // SAFETY: live descriptor.
    ok(unsafe { hurray_descriptor_block_paged(d, &mut got) });
    assert_eq!(got, fields);
    only(d, &["block_paged"]);
    destroy(d);

    let head = HurrayCompositeHead {
        member_count: 2,
        composition_rule: HURRAY_COMPOSITION_PARTITION,
        combine_op: HURRAY_COMBINE_NONE,
    };
    let b = builder(HURRAY_TYPE_FLOAT32, HURRAY_LAYOUT_COMPOSITE_HEAD, &[8, 8]);
    // SAFETY: live builder; valid struct.
    ok(unsafe { hurray_descriptor_builder_set_composite_head(b, &head) });
    let d = finish(b);
    let mut got = HurrayCompositeHead::default();
    // SAFETY: live descriptor.
    ok(unsafe { hurray_descriptor_composite_head(d, &mut got) });
    assert_eq!(got, head);
    assert_eq!(
        model(d).layout,
        Layout::CompositeHead(CompositeHead {
            rule: CompositionRule::Partition,
            combine_op: CombineOp::None,
            member_count: 2
        })
    );
    only(d, &["composite_head"]);
    if let Some(g) = golden("composite_head_partition.bin") {
        assert_eq!(encode(d), g);
    }
    destroy(d);
}

#[test]
fn extension_layout_private_type_and_extension_type() {
    let _l = live();
    let ext = HurrayExtensionType {
        bit_width: 8,
        exponent_bias: 0,
        packing_factor: 1,
        is_float: 0,
        is_signed: 1,
        ..HurrayExtensionType::default()
    };
    let b = builder(0xF1, 0xF0, &[4]);
    let data = [1u8, 2, 3];
    // SAFETY: live builder; data valid for 3 bytes; struct valid.
    unsafe {
        ok(hurray_descriptor_builder_set_extension_layout(
            b,
            7,
            data.as_ptr(),
            3,
        ));
        ok(hurray_descriptor_builder_set_extension_type(b, &ext));
    }
    add_cpu(b, &[4]);
    let d = finish(b);
    let m = model(d);
    assert_eq!(m.element_type, ElementType::Private(0xF1));
    assert_eq!(
        m.layout,
        Layout::Extension {
            tag: 0xF0,
            id: 7,
            data: data.to_vec()
        }
    );
    assert_eq!(
        m.extension_type,
        Some(ExtensionType {
            bit_width: 8,
            packing_factor: 1,
            is_float: false,
            is_signed: true,
            ..ExtensionType::default()
        })
    );
    let mut id = 0u64;
    let mut got = HurrayExtensionType::default();
    // SAFETY: live descriptor; outs writable.
    unsafe {
        array(&data, |p, c, n| {
            hurray_descriptor_extension_layout(d, &mut id, p, c, n)
        });
        assert_eq!(id, 7);
        let mut n = 0u64;
        err(
            hurray_descriptor_extension_layout(d, null_mut(), null_mut(), 0, &mut n),
            HURRAY_ERR_NULL_POINTER,
            "out_id",
        );
        ok(hurray_descriptor_extension_type(d, &mut got));
    }
    assert_eq!(got, ext);
    assert_eq!(header(d).flags, HURRAY_FLAG_HAS_EXTENSION_TYPE);
    only(d, &["extension_layout", "extension_type"]);
    destroy(d);
}

/// Builds a quantized descriptor and checks the section reads back as given.
#[track_caller]
fn quantized(
    t: u8,
    shape: &[u64],
    sizes: &[u64],
    q: HurrayQuantization,
    trailing: &[u8],
    want: Scheme,
) {
    let b = builder(t, HURRAY_LAYOUT_ROW_MAJOR, shape);
    add_cpu(b, sizes);
    // SAFETY: live builder; trailing valid for its length.
    ok(unsafe {
        hurray_descriptor_builder_set_quantization(b, &q, trailing.as_ptr(), trailing.len() as u64)
    });
    let d = finish(b);
    let m = model(d);
    let want_trailing = if matches!(want, Scheme::Opaque { .. }) {
        Vec::new()
    } else {
        trailing.to_vec()
    };
    assert_eq!(
        m.quantization,
        Some(Quantization {
            scheme: want,
            trailing: want_trailing
        })
    );
    let mut got = HurrayQuantization::default();
    // SAFETY: live descriptor.
    unsafe {
        ok(hurray_descriptor_quantization(d, &mut got));
        array(trailing, |p, c, n| {
            hurray_descriptor_quantization_trailing(d, p, c, n)
        });
    }
    assert_eq!(got, q, "the struct reads back as written");
    assert_eq!(header(d).flags, HURRAY_FLAG_HAS_QUANTIZATION);
    only(d, &["quantization", "quantization_trailing"]);
    destroy(d);
}

#[test]
fn quantization_every_scheme() {
    let _l = live();
    let none = HURRAY_NO_BUFFER;
    let q = |tag, f: &dyn Fn(&mut HurrayQuantization)| {
        let mut q = HurrayQuantization {
            scheme_tag: tag,
            scheme_version: 1,
            scale_buffer_index: none,
            zero_point_buffer_index: none,
            ..HurrayQuantization::default()
        };
        f(&mut q);
        q
    };
    quantized(
        HURRAY_TYPE_INT8,
        &[4, 4],
        &[16],
        q(HURRAY_SCHEME_PER_TENSOR_AFFINE, &|q| {
            q.scale = 0.5;
            q.zero_point = -3;
        }),
        &[9, 9],
        Scheme::PerTensor {
            scale: 0.5,
            zero_point: -3,
        },
    );
    quantized(
        HURRAY_TYPE_INT8,
        &[3, 8],
        &[24, 12, 12],
        q(HURRAY_SCHEME_PER_CHANNEL_AFFINE, &|q| {
            q.axis = 0;
            q.scale_buffer_index = 1;
            q.zero_point_buffer_index = 2;
            q.scale_type_tag = HURRAY_SCALE_TYPE_F32;
        }),
        &[],
        Scheme::PerChannel {
            axis: 0,
            scale_buffer_index: 1,
            zero_point_buffer_index: Some(2),
            scale_type: ScaleType::F32,
        },
    );
    quantized(
        HURRAY_TYPE_INT4,
        &[4, 64],
        &[128, 16],
        q(HURRAY_SCHEME_PER_BLOCK_AFFINE, &|q| {
            q.axis = 1;
            q.block_size = 32;
            q.scale_buffer_index = 1;
            q.flags = HURRAY_QUANT_FLAG_SYMMETRIC;
            q.scale_type_tag = HURRAY_SCALE_TYPE_F16;
        }),
        &[],
        Scheme::PerBlock {
            axis: 1,
            block_size: 32,
            scale_buffer_index: 1,
            zero_point_buffer_index: None,
            scale_type: ScaleType::F16,
        },
    );
    quantized(
        HURRAY_TYPE_UINT4,
        &[2, 64],
        &[64, 8],
        q(HURRAY_SCHEME_NF4, &|q| {
            q.axis = 1;
            q.block_size = 64;
            q.scale_buffer_index = 1;
        }),
        &[],
        Scheme::Nf4 {
            axis: 1,
            block_size: 64,
            scale_buffer_index: 1,
        },
    );
    quantized(
        HURRAY_TYPE_FLOAT8_E4M3,
        &[2, 32],
        &[64, 2],
        q(HURRAY_SCHEME_MXFP, &|q| {
            q.axis = 1;
            q.block_size = 32;
            q.scale_buffer_index = 1;
        }),
        &[],
        Scheme::Mxfp {
            axis: 1,
            block_size: 32,
            scale_buffer_index: 1,
        },
    );
    // A private scheme: version and flags are kept, the payload is opaque.
    quantized(
        HURRAY_TYPE_INT8,
        &[4],
        &[4],
        q(0xF3, &|q| {
            q.scheme_version = 7;
            q.flags = 0x8001;
        }),
        &[1, 2, 3, 4, 5],
        Scheme::Opaque {
            scheme_tag: 0xF3,
            scheme_version: 7,
            flags: 0x8001,
            payload: vec![1, 2, 3, 4, 5],
        },
    );
}

#[test]
fn quantization_golden() {
    let _l = live();
    let Some(g) = golden("quant_per_block_int4_128x128.bin") else {
        return;
    };
    let d = decode(&g);
    let mut q = HurrayQuantization::default();
    // SAFETY: live descriptor.
    ok(unsafe { hurray_descriptor_quantization(d, &mut q) });
    assert_eq!(
        (
            q.scheme_tag,
            q.axis,
            q.block_size,
            q.scale_buffer_index,
            q.zero_point_buffer_index,
            q.flags,
            q.scale_type_tag
        ),
        (
            HURRAY_SCHEME_PER_BLOCK_AFFINE,
            1,
            128,
            1,
            HURRAY_NO_BUFFER,
            HURRAY_QUANT_FLAG_SYMMETRIC,
            HURRAY_SCALE_TYPE_F16
        )
    );
    destroy(d);
}

#[test]
fn shard_statistics_and_member_role() {
    let _l = live();
    let stats = HurrayStatistics {
        nnz: 3,
        sparsity_ratio: 0.25,
        value_min: -1.0,
        value_max: 2.0,
        value_abs_max: 2.0,
        value_mean: 0.5,
        value_stddev: 1.25,
        computed_mask: HURRAY_STAT_NNZ_VALID
            | HURRAY_STAT_SPARSITY_VALID
            | HURRAY_STAT_VALUE_RANGE_VALID
            | HURRAY_STAT_VALUE_STATS_VALID
            | HURRAY_STAT_NAN_INF_VALID,
        nm_n: 0,
        nm_m: 0,
        has_nan: 0,
        has_inf: 1,
    };
    let b = builder(HURRAY_TYPE_FLOAT32, HURRAY_LAYOUT_ROW_MAJOR, &[4]);
    add_cpu(b, &[16]);
    // SAFETY: live builder; arrays valid for 1 value; struct valid.
    unsafe {
        ok(hurray_descriptor_builder_set_shard(
            b,
            [8u64].as_ptr(),
            [4u64].as_ptr(),
            1,
        ));
        ok(hurray_descriptor_builder_set_statistics(b, &stats));
        ok(hurray_descriptor_builder_set_member_role(
            b,
            HURRAY_MEMBER_ROLE_BASE,
        ));
    }
    let d = finish(b);
    let m = model(d);
    assert_eq!(
        m.shard,
        Some(Shard {
            parent_shape: vec![8],
            offset: vec![4]
        })
    );
    assert_eq!(m.composite_member, Some(MemberRole::Base));
    assert_eq!(
        m.statistics,
        Some(Statistics {
            computed_mask: stats.computed_mask,
            nnz: 3,
            sparsity_ratio: 0.25,
            value_min: -1.0,
            value_max: 2.0,
            value_abs_max: 2.0,
            value_mean: 0.5,
            value_stddev: 1.25,
            nm_n: 0,
            nm_m: 0,
            has_nan: 0,
            has_inf: 1,
        })
    );
    let mut got = HurrayStatistics::default();
    let mut role = 9u8;
    let (mut p, mut o, mut n) = ([0u64; 1], [0u64; 1], 0u64);
    // SAFETY: live descriptor; outs writable.
    unsafe {
        ok(hurray_descriptor_statistics(d, &mut got));
        ok(hurray_descriptor_member_role(d, &mut role));
        ok(hurray_descriptor_shard(
            d,
            null_mut(),
            null_mut(),
            0,
            &mut n,
        ));
        assert_eq!(n, 1);
        ok(hurray_descriptor_shard(
            d,
            p.as_mut_ptr(),
            o.as_mut_ptr(),
            1,
            &mut n,
        ));
        err(
            hurray_descriptor_shard(d, p.as_mut_ptr(), null_mut(), 1, &mut n),
            HURRAY_ERR_NULL_POINTER,
            "both",
        );
        err(
            hurray_descriptor_shard(d, p.as_mut_ptr(), o.as_mut_ptr(), 0, &mut n),
            HURRAY_ERR_BUFFER_TOO_SMALL,
            "",
        );
    }
    assert_eq!(
        (got, role, p, o),
        (stats, HURRAY_MEMBER_ROLE_BASE, [8], [4])
    );
    assert_eq!(
        header(d).flags,
        HURRAY_FLAG_HAS_SHARD | HURRAY_FLAG_HAS_STATISTICS | HURRAY_FLAG_HAS_COMPOSITE_MEMBER
    );
    only(d, &["shard", "statistics", "member_role"]);
    destroy(d);
}

#[test]
fn accessors_check_the_handle() {
    let _l = live();
    let b = builder(HURRAY_TYPE_FLOAT32, HURRAY_LAYOUT_ROW_MAJOR, &[1]);
    // A builder is not a descriptor; NULL is reported.
    for (name, s) in probe(b.cast()) {
        assert_eq!(s, HURRAY_ERR_INVALID_ARGUMENT, "{name}");
    }
    for (name, s) in probe(null()) {
        assert_eq!(s, HURRAY_ERR_NULL_POINTER, "{name}");
    }
    let mut b = b;
    // SAFETY: owned builder.
    ok(unsafe { hurray_descriptor_builder_destroy(&mut b) });
}
