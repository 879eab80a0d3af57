//! The descriptor builder: every golden vector built from C calls reproduces the
//! file byte for byte; a descriptor read through the accessors and written back
//! through the builder is identical; and every builder error path.

mod common;

use common::*;
use hurray_ffi::builder::*;
use hurray_ffi::descriptor::HurrayDescriptor;
use hurray_ffi::descriptor_access::*;
use hurray_ffi::tags::*;
use hurray_ffi::*;
use std::ptr::{null, null_mut};

/// Builds each golden descriptor by hand and compares bytes.
#[test]
fn goldens_built_with_the_builder_match_byte_for_byte() {
    let _l = live();
    type Build = fn() -> *mut HurrayDescriptor;
    type Case = (&'static str, Box<dyn Fn() -> *mut HurrayDescriptor>);
    let dense = |t: u8, shape: &'static [u64], size: u64| {
        let b = builder(t, HURRAY_LAYOUT_ROW_MAJOR, shape);
        add_cpu(b, &[size]);
        finish(b)
    };
    let cases: Vec<Case> = vec![
        (
            "row_major_f32_3x4.bin",
            Box::new(move || dense(HURRAY_TYPE_FLOAT32, &[3, 4], 48)),
        ),
        (
            "row_major_int8_5.bin",
            Box::new(move || dense(HURRAY_TYPE_INT8, &[5], 5)),
        ),
        (
            "row_major_f16_2x2.bin",
            Box::new(move || dense(HURRAY_TYPE_FLOAT16, &[2, 2], 8)),
        ),
        (
            "bool_packed_10.bin",
            Box::new(move || dense(HURRAY_TYPE_BOOL, &[10], 2)),
        ),
        (
            "empty_f32_0x4.bin",
            Box::new(move || dense(HURRAY_TYPE_FLOAT32, &[0, 4], 0)),
        ),
        (
            "strided_f32_3x4.bin",
            Box::new(
                (|| {
                    let b = builder(HURRAY_TYPE_FLOAT32, HURRAY_LAYOUT_STRIDED, &[3, 4]);
                    // SAFETY: live builder; 2 strides.
                    ok(unsafe { hurray_descriptor_builder_set_strides(b, [4i64, 1].as_ptr(), 2) });
                    add_cpu(b, &[48]);
                    finish(b)
                }) as Build,
            ),
        ),
        (
            "morton_f32_4x4.bin",
            Box::new(
                (|| {
                    let b = builder(HURRAY_TYPE_FLOAT32, HURRAY_LAYOUT_MORTON, &[4, 4]);
                    // SAFETY: live builder; 2 values.
                    ok(unsafe {
                        hurray_descriptor_builder_set_morton_bits(b, [2u32, 2].as_ptr(), 2)
                    });
                    add_cpu(b, &[64]);
                    finish(b)
                }) as Build,
            ),
        ),
        (
            "sharded_f32_8x4.bin",
            Box::new(
                (|| {
                    let b = builder(HURRAY_TYPE_FLOAT32, HURRAY_LAYOUT_ROW_MAJOR, &[8, 4]);
                    add_cpu(b, &[128]);
                    // SAFETY: live builder; 2 values each.
                    ok(unsafe {
                        hurray_descriptor_builder_set_shard(
                            b,
                            [8u64, 8].as_ptr(),
                            [0u64, 4].as_ptr(),
                            2,
                        )
                    });
                    finish(b)
                }) as Build,
            ),
        ),
        (
            "csr_f32_3x3.bin",
            Box::new(
                (|| {
                    let b = builder(HURRAY_TYPE_FLOAT32, HURRAY_LAYOUT_CSR, &[3, 3]);
                    // SAFETY: live builder.
                    ok(unsafe { hurray_descriptor_builder_set_nnz(b, 2) });
                    add_cpu(b, &[8, 16, 32]);
                    finish(b)
                }) as Build,
            ),
        ),
        (
            "composite_head_partition.bin",
            Box::new(
                (|| {
                    let b = builder(HURRAY_TYPE_FLOAT32, HURRAY_LAYOUT_COMPOSITE_HEAD, &[8, 8]);
                    let h = HurrayCompositeHead {
                        member_count: 2,
                        composition_rule: HURRAY_COMPOSITION_PARTITION,
                        combine_op: HURRAY_COMBINE_NONE,
                    };
                    // SAFETY: live builder; valid struct.
                    ok(unsafe { hurray_descriptor_builder_set_composite_head(b, &h) });
                    finish(b)
                }) as Build,
            ),
        ),
        (
            "quant_per_block_int4_128x128.bin",
            Box::new(
                (|| {
                    let b = builder(HURRAY_TYPE_INT4, HURRAY_LAYOUT_ROW_MAJOR, &[128, 128]);
                    add_cpu(b, &[8192, 256]);
                    let q = HurrayQuantization {
                        scheme_tag: HURRAY_SCHEME_PER_BLOCK_AFFINE,
                        axis: 1,
                        block_size: 128,
                        scale_buffer_index: 1,
                        zero_point_buffer_index: HURRAY_NO_BUFFER,
                        scale_type_tag: HURRAY_SCALE_TYPE_F16,
                        ..HurrayQuantization::default()
                    };
                    // SAFETY: live builder; valid struct; no trailing bytes.
                    ok(unsafe { hurray_descriptor_builder_set_quantization(b, &q, null(), 0) });
                    finish(b)
                }) as Build,
            ),
        ),
    ];
    let names = golden_names();
    for (name, build) in &cases {
        let Some(g) = golden(name) else { continue };
        let d = build();
        assert_eq!(encode(d), g, "{name}");
        destroy(d);
    }
    for n in &names {
        assert!(
            cases.iter().any(|(c, _)| c == n),
            "golden {n} has no builder case"
        );
    }
}

/// Reads every field through the accessors and writes it back through the builder.
fn rebuild(d: *const HurrayDescriptor) -> *mut HurrayDescriptor {
    let mut h = HurrayDescriptorHeader::default();
    // SAFETY: d is live; every out-pointer is writable and every array sized by a
    // size query first.
    unsafe {
        ok(hurray_descriptor_header(d, &mut h));
        let mut shape = vec![0u64; h.rank as usize];
        let mut n = 0u64;
        ok(hurray_descriptor_shape(
            d,
            shape.as_mut_ptr(),
            shape.len() as u64,
            &mut n,
        ));
        let b = builder(h.type_tag, h.layout_tag, &shape);
        ok(hurray_descriptor_builder_set_byte_offset(b, h.byte_offset));
        let r = h.rank as u64;
        let mut i64s = vec![0i64; h.rank as usize];
        let mut i64b = vec![0i64; h.rank as usize];
        let mut u64s = vec![0u64; h.rank as usize];
        let mut u64b = vec![0u64; h.rank as usize];
        let mut u32s = vec![0u32; h.rank as usize];
        match h.layout_tag {
            HURRAY_LAYOUT_STRIDED => {
                ok(hurray_descriptor_strides(d, i64s.as_mut_ptr(), r, &mut n));
                ok(hurray_descriptor_builder_set_strides(b, i64s.as_ptr(), r));
            }
            HURRAY_LAYOUT_TILED => {
                let mut depth = 0;
                ok(hurray_descriptor_tiling_depth(d, &mut depth));
                for level in 0..depth {
                    let (mut o, mut i) = (0, 0);
                    ok(hurray_descriptor_tiling_level(d, level, &mut o, &mut i));
                    ok(hurray_descriptor_tile_shape(
                        d,
                        level,
                        u64s.as_mut_ptr(),
                        r,
                        &mut n,
                    ));
                    if o == HURRAY_TILE_ORDER_STRIDED {
                        ok(hurray_descriptor_tile_outer_strides(
                            d,
                            level,
                            i64s.as_mut_ptr(),
                            r,
                            &mut n,
                        ));
                    }
                    if i == HURRAY_TILE_ORDER_STRIDED {
                        ok(hurray_descriptor_tile_inner_strides(
                            d,
                            level,
                            i64b.as_mut_ptr(),
                            r,
                            &mut n,
                        ));
                    }
                    ok(hurray_descriptor_builder_push_tiling_level(
                        b,
                        u64s.as_ptr(),
                        o,
                        i64s.as_ptr(),
                        i,
                        i64b.as_ptr(),
                    ));
                }
            }
            HURRAY_LAYOUT_MORTON => {
                ok(hurray_descriptor_morton_bits(
                    d,
                    u32s.as_mut_ptr(),
                    r,
                    &mut n,
                ));
                ok(hurray_descriptor_builder_set_morton_bits(
                    b,
                    u32s.as_ptr(),
                    r,
                ));
            }
            HURRAY_LAYOUT_COO..=HURRAY_LAYOUT_CSF => {
                let mut nnz = 0;
                ok(hurray_descriptor_nnz(d, &mut nnz));
                ok(hurray_descriptor_builder_set_nnz(b, nnz));
                if h.layout_tag == HURRAY_LAYOUT_COO {
                    let mut s = 0;
                    ok(hurray_descriptor_coo_is_sorted(d, &mut s));
                    ok(hurray_descriptor_builder_set_coo_is_sorted(b, s));
                }
                if h.layout_tag == HURRAY_LAYOUT_CSF {
                    ok(hurray_descriptor_csf_mode_order(
                        d,
                        u32s.as_mut_ptr(),
                        r,
                        &mut n,
                    ));
                    ok(hurray_descriptor_builder_set_csf_mode_order(
                        b,
                        u32s.as_ptr(),
                        r,
                    ));
                }
            }
            HURRAY_LAYOUT_BLOCK_PAGED => {
                let mut f = HurrayBlockPaged::default();
                ok(hurray_descriptor_block_paged(d, &mut f));
                ok(hurray_descriptor_builder_set_block_paged(b, &f));
            }
            HURRAY_LAYOUT_COMPOSITE_HEAD => {
                let mut f = HurrayCompositeHead::default();
                ok(hurray_descriptor_composite_head(d, &mut f));
                ok(hurray_descriptor_builder_set_composite_head(b, &f));
            }
            HURRAY_LAYOUT_HILBERT => {
                let (mut o, mut hr) = (0, 0);
                ok(hurray_descriptor_hilbert(d, &mut o, &mut hr));
                ok(hurray_descriptor_builder_set_hilbert(b, o, hr));
            }
            HURRAY_LAYOUT_EXTENSION_FIRST..=HURRAY_LAYOUT_EXTENSION_LAST => {
                let mut id = 0;
                ok(hurray_descriptor_extension_layout(
                    d,
                    &mut id,
                    null_mut(),
                    0,
                    &mut n,
                ));
                let mut data = vec![0u8; n as usize];
                ok(hurray_descriptor_extension_layout(
                    d,
                    &mut id,
                    data.as_mut_ptr(),
                    n,
                    &mut n,
                ));
                ok(hurray_descriptor_builder_set_extension_layout(
                    b,
                    id,
                    data.as_ptr(),
                    n,
                ));
            }
            _ => {}
        }
        for i in 0..h.buffer_count {
            let mut e = HurrayBufferEntry::default();
            ok(hurray_descriptor_buffer(d, i, &mut e));
            ok(hurray_descriptor_builder_add_buffer(b, &e));
        }
        if h.flags & HURRAY_FLAG_HAS_QUANTIZATION != 0 {
            let mut q = HurrayQuantization::default();
            ok(hurray_descriptor_quantization(d, &mut q));
            ok(hurray_descriptor_quantization_trailing(
                d,
                null_mut(),
                0,
                &mut n,
            ));
            let mut t = vec![0u8; n as usize];
            ok(hurray_descriptor_quantization_trailing(
                d,
                t.as_mut_ptr(),
                n,
                &mut n,
            ));
            ok(hurray_descriptor_builder_set_quantization(
                b,
                &q,
                t.as_ptr(),
                n,
            ));
        }
        if h.flags & HURRAY_FLAG_HAS_SHARD != 0 {
            ok(hurray_descriptor_shard(
                d,
                u64s.as_mut_ptr(),
                u64b.as_mut_ptr(),
                r,
                &mut n,
            ));
            ok(hurray_descriptor_builder_set_shard(
                b,
                u64s.as_ptr(),
                u64b.as_ptr(),
                r,
            ));
        }
        if h.flags & HURRAY_FLAG_HAS_STATISTICS != 0 {
            let mut s = HurrayStatistics::default();
            ok(hurray_descriptor_statistics(d, &mut s));
            ok(hurray_descriptor_builder_set_statistics(b, &s));
        }
        if h.flags & HURRAY_FLAG_HAS_EXTENSION_TYPE != 0 {
            let mut e = HurrayExtensionType::default();
            ok(hurray_descriptor_extension_type(d, &mut e));
            ok(hurray_descriptor_builder_set_extension_type(b, &e));
        }
        if h.flags & HURRAY_FLAG_HAS_COMPOSITE_MEMBER != 0 {
            let mut role = 0;
            ok(hurray_descriptor_member_role(d, &mut role));
            ok(hurray_descriptor_builder_set_member_role(b, role));
        }
        finish(b)
    }
}

#[test]
fn read_then_rebuild_is_identity() {
    let _l = live();
    use hurray_core::layout::{TileOrder, Tiling};
    use hurray_core::*;
    let mut models: Vec<TensorDescriptor> = golden_names()
        .iter()
        .map(|n| TensorDescriptor::decode(&golden(n).unwrap()).unwrap())
        .collect();
    let base = |t, shape: &[u64], layout, sizes: &[u64]| TensorDescriptor {
        version_minor: 0,
        element_type: t,
        shape: shape.to_vec(),
        byte_offset: 0,
        layout,
        buffers: sizes.iter().map(|&n| BufferHandle::cpu(n)).collect(),
        quantization: None,
        shard: None,
        statistics: None,
        extension_type: None,
        composite_member: None,
    };
    models.push(base(
        ElementType::Float32,
        &[4, 4],
        Layout::Tiled(Tiling {
            tile_shape: vec![2, 2],
            outer: TileOrder::Strided(vec![2, 1]),
            inner: TileOrder::Tiled(Box::new(Tiling {
                tile_shape: vec![1, 2],
                outer: TileOrder::RowMajor,
                inner: TileOrder::Strided(vec![2, 1]),
            })),
        }),
        &[64],
    ));
    models.push(base(
        ElementType::Float32,
        &[4, 4],
        Layout::Coo {
            nnz: 3,
            is_sorted: true,
        },
        &[12, 48],
    ));
    models.push(base(
        ElementType::Float32,
        &[2, 2, 2],
        Layout::Csf {
            nnz: 2,
            mode_order: vec![2, 0, 1],
        },
        &[8, 16, 8, 16, 16, 24, 16],
    ));
    models.push(base(
        ElementType::Float16,
        &[4, 2, 2],
        Layout::BlockPaged(BlockPaged {
            page_size: 2,
            num_pages: 2,
            paged_axis: 0,
            num_seqs: 1,
            kv_role: KvRole::Fused,
            layer_index: u32::MAX,
            block_table_index_type: IndexType::U64,
        }),
        &[32, 16, 16],
    ));
    models.push(base(
        ElementType::Int32,
        &[4, 4],
        Layout::Hilbert { order: 2, rank: 2 },
        &[64],
    ));
    let mut s = base(ElementType::Float32, &[4], Layout::RowMajor, &[16]);
    s.byte_offset = 0;
    s.statistics = Some(Statistics {
        computed_mask: stat_mask::NNZ_VALID | stat_mask::NM_SPARSITY_VALID,
        nnz: 2,
        nm_n: 2,
        nm_m: 4,
        ..Statistics::default()
    });
    s.composite_member = Some(MemberRole::Correction);
    models.push(s);
    let mut q = base(ElementType::Int8, &[3, 8], Layout::RowMajor, &[24, 12, 12]);
    q.quantization = Some(Quantization {
        scheme: Scheme::PerChannel {
            axis: 0,
            scale_buffer_index: 1,
            zero_point_buffer_index: Some(2),
            scale_type: ScaleType::F32,
        },
        trailing: vec![0, 0, 0, 0],
    });
    models.push(q);
    for m in &models {
        let d = from_model(m);
        let r = rebuild(d);
        assert_eq!(encode(r), encode(d), "{m:?}");
        destroy(r);
        destroy(d);
    }
}

#[test]
fn new_checks_its_arguments() {
    let _l = live();
    let mut b = null_mut();
    let shape = [2u64, 2];
    let big = [1u64; 65];
    // SAFETY: arrays valid for their lengths; the library checks the rest.
    unsafe {
        err(
            hurray_descriptor_builder_new(HURRAY_TYPE_FLOAT32, 1, 2, shape.as_ptr(), null_mut()),
            HURRAY_ERR_NULL_POINTER,
            "out",
        );
        err(
            hurray_descriptor_builder_new(HURRAY_TYPE_FLOAT32, 1, 2, null(), &mut b),
            HURRAY_ERR_NULL_POINTER,
            "shape",
        );
        err(
            hurray_descriptor_builder_new(0x00, 1, 2, shape.as_ptr(), &mut b),
            HURRAY_ERR_INVALID_ARGUMENT,
            "type_tag 0x00",
        );
        err(
            hurray_descriptor_builder_new(0xFF, 1, 2, shape.as_ptr(), &mut b),
            HURRAY_ERR_INVALID_ARGUMENT,
            "type_tag 0xff",
        );
        err(
            hurray_descriptor_builder_new(HURRAY_TYPE_FLOAT32, 0x0C, 2, shape.as_ptr(), &mut b),
            HURRAY_ERR_INVALID_ARGUMENT,
            "layout_tag 0x0c",
        );
        err(
            hurray_descriptor_builder_new(HURRAY_TYPE_FLOAT32, 0, 2, shape.as_ptr(), &mut b),
            HURRAY_ERR_INVALID_ARGUMENT,
            "layout_tag 0x00",
        );
        err(
            hurray_descriptor_builder_new(HURRAY_TYPE_FLOAT32, 1, 65, big.as_ptr(), &mut b),
            HURRAY_ERR_INVALID_ARGUMENT,
            "rank 65",
        );
    }
    assert!(b.is_null());
    // Rank 0 with NULL shape is a scalar.
    let mut b = builder(HURRAY_TYPE_FLOAT64, HURRAY_LAYOUT_ROW_MAJOR, &[]);
    // SAFETY: owned builder.
    ok(unsafe { hurray_descriptor_builder_destroy(&mut b) });
}

#[test]
fn setters_that_do_not_fit_the_layout_are_not_applicable() {
    let _l = live();
    let mut b = builder(HURRAY_TYPE_FLOAT32, HURRAY_LAYOUT_ROW_MAJOR, &[2, 2]);
    let two_i = [1i64, 1];
    let two_u = [1u64, 1];
    let two_u32 = [1u32, 1];
    // SAFETY: live builder; arrays hold 2 values; structs valid.
    unsafe {
        let na = HURRAY_ERR_NOT_APPLICABLE;
        err(
            hurray_descriptor_builder_set_strides(b, two_i.as_ptr(), 2),
            na,
            "row_major layout (0x01)",
        );
        err(
            hurray_descriptor_builder_push_tiling_level(b, two_u.as_ptr(), 1, null(), 1, null()),
            na,
            "tiling level",
        );
        err(
            hurray_descriptor_builder_set_morton_bits(b, two_u32.as_ptr(), 2),
            na,
            "morton_bits",
        );
        err(hurray_descriptor_builder_set_nnz(b, 1), na, "nnz");
        err(
            hurray_descriptor_builder_set_coo_is_sorted(b, 1),
            na,
            "is_sorted",
        );
        err(
            hurray_descriptor_builder_set_csf_mode_order(b, two_u32.as_ptr(), 2),
            na,
            "mode_order",
        );
        err(
            hurray_descriptor_builder_set_block_paged(b, &HurrayBlockPaged::default()),
            na,
            "block-paged",
        );
        err(
            hurray_descriptor_builder_set_composite_head(b, &HurrayCompositeHead::default()),
            na,
            "composite head",
        );
        err(
            hurray_descriptor_builder_set_hilbert(b, 1, 2),
            na,
            "Hilbert",
        );
        err(
            hurray_descriptor_builder_set_extension_layout(b, 1, null(), 0),
            na,
            "extension layout",
        );
        ok(hurray_descriptor_builder_destroy(&mut b));
    }
    // CSR takes nnz but not is_sorted or mode_order.
    let mut b = builder(HURRAY_TYPE_FLOAT32, HURRAY_LAYOUT_CSR, &[2, 2]);
    // SAFETY: live builder.
    unsafe {
        ok(hurray_descriptor_builder_set_nnz(b, 1));
        err(
            hurray_descriptor_builder_set_coo_is_sorted(b, 1),
            HURRAY_ERR_NOT_APPLICABLE,
            "csr layout (0x07)",
        );
        ok(hurray_descriptor_builder_destroy(&mut b));
    }
}

#[test]
fn setter_argument_errors() {
    let _l = live();
    let mut b = builder(HURRAY_TYPE_FLOAT32, HURRAY_LAYOUT_STRIDED, &[2, 2]);
    let three = [1i64, 1, 1];
    // SAFETY: live builder; arrays valid for the lengths given; structs readable.
    unsafe {
        let inv = HURRAY_ERR_INVALID_ARGUMENT;
        err(
            hurray_descriptor_builder_set_strides(b, three.as_ptr(), 3),
            inv,
            "has 3 values; the rank is 2",
        );
        err(
            hurray_descriptor_builder_set_strides(b, null(), 2),
            HURRAY_ERR_NULL_POINTER,
            "strides",
        );
        err(
            hurray_descriptor_builder_set_strides(null_mut(), three.as_ptr(), 2),
            HURRAY_ERR_NULL_POINTER,
            "builder",
        );
        err(
            hurray_descriptor_builder_add_buffer(b, null()),
            HURRAY_ERR_NULL_POINTER,
            "entry",
        );
        let bad = |f: &dyn Fn(&mut HurrayBufferEntry)| {
            let mut e = cpu(16);
            f(&mut e);
            e
        };
        err(
            hurray_descriptor_builder_add_buffer(b, &bad(&|e| e.device_tag = 0x20)),
            inv,
            "device_tag 0x20",
        );
        err(
            hurray_descriptor_builder_add_buffer(b, &bad(&|e| e.memory_class = 0x09)),
            inv,
            "memory_class 0x09",
        );
        err(
            hurray_descriptor_builder_add_buffer(b, &bad(&|e| e.sync_mode = 3)),
            HURRAY_ERR_INVALID_SYNC_MODE,
            "sync_mode 0x03",
        );
        for _ in 0..255 {
            ok(hurray_descriptor_builder_add_buffer(b, &cpu(0)));
        }
        err(
            hurray_descriptor_builder_add_buffer(b, &cpu(0)),
            HURRAY_ERR_OUT_OF_RANGE,
            "at most 255",
        );
        let q = |tag: u8, st: u8| HurrayQuantization {
            scheme_tag: tag,
            scale_type_tag: st,
            ..HurrayQuantization::default()
        };
        err(
            hurray_descriptor_builder_set_quantization(b, null(), null(), 0),
            HURRAY_ERR_NULL_POINTER,
            "`q`",
        );
        err(
            hurray_descriptor_builder_set_quantization(b, &q(0, 0), null(), 0),
            inv,
            "scheme_tag 0x00",
        );
        err(
            hurray_descriptor_builder_set_quantization(b, &q(6, 0), null(), 0),
            inv,
            "scheme_tag 0x06",
        );
        err(
            hurray_descriptor_builder_set_quantization(b, &q(2, 4), null(), 0),
            inv,
            "scale_type_tag 0x04",
        );
        err(
            hurray_descriptor_builder_set_quantization(b, &q(1, 0), null(), 3),
            HURRAY_ERR_NULL_POINTER,
            "trailing",
        );
        err(
            hurray_descriptor_builder_set_quantization(b, &q(1, 0), null(), u64::MAX),
            inv,
            "overflow",
        );
        err(
            hurray_descriptor_builder_set_shard(b, [1u64].as_ptr(), [1u64].as_ptr(), 1),
            inv,
            "the rank is 2",
        );
        err(
            hurray_descriptor_builder_set_shard(b, null(), [1u64, 1].as_ptr(), 2),
            HURRAY_ERR_NULL_POINTER,
            "parent_shape",
        );
        err(
            hurray_descriptor_builder_set_statistics(b, null()),
            HURRAY_ERR_NULL_POINTER,
            "stats",
        );
        let ext = HurrayExtensionType {
            bit_width: 8,
            packing_factor: 1,
            is_signed: 2,
            ..Default::default()
        };
        err(
            hurray_descriptor_builder_set_extension_type(b, &ext),
            inv,
            "is_signed is 2",
        );
        err(
            hurray_descriptor_builder_set_extension_type(b, null()),
            HURRAY_ERR_NULL_POINTER,
            "ext",
        );
        err(
            hurray_descriptor_builder_set_member_role(b, 2),
            inv,
            "member_role 0x02",
        );
        ok(hurray_descriptor_builder_destroy(&mut b));
    }
    let mut b = builder(HURRAY_TYPE_FLOAT32, HURRAY_LAYOUT_BLOCK_PAGED, &[4, 2, 2]);
    let mut c = builder(HURRAY_TYPE_FLOAT32, HURRAY_LAYOUT_COMPOSITE_HEAD, &[2]);
    let mut e = builder(0xF0, 0xF5, &[2]);
    let mut coo = builder(HURRAY_TYPE_FLOAT32, HURRAY_LAYOUT_COO, &[2]);
    // SAFETY: live builders; structs readable.
    unsafe {
        let inv = HURRAY_ERR_INVALID_ARGUMENT;
        let bp = |f: &dyn Fn(&mut HurrayBlockPaged)| {
            let mut v = HurrayBlockPaged {
                page_size: 1,
                ..Default::default()
            };
            f(&mut v);
            v
        };
        err(
            hurray_descriptor_builder_set_block_paged(b, &bp(&|v| v.kv_role = 3)),
            inv,
            "kv_role 0x03",
        );
        err(
            hurray_descriptor_builder_set_block_paged(b, &bp(&|v| v.block_table_index_type = 2)),
            inv,
            "block_table_index_type 0x02",
        );
        err(
            hurray_descriptor_builder_set_block_paged(b, null()),
            HURRAY_ERR_NULL_POINTER,
            "fields",
        );
        let ch = |r, o| HurrayCompositeHead {
            member_count: 1,
            composition_rule: r,
            combine_op: o,
        };
        err(
            hurray_descriptor_builder_set_composite_head(c, &ch(0xF0, 0)),
            inv,
            "composition_rule 0xf0",
        );
        err(
            hurray_descriptor_builder_set_composite_head(c, &ch(1, 3)),
            inv,
            "combine_op 0x03",
        );
        err(
            hurray_descriptor_builder_set_extension_layout(e, 1, null(), 1),
            HURRAY_ERR_NULL_POINTER,
            "data",
        );
        err(
            hurray_descriptor_builder_set_extension_layout(e, 1, [0u8].as_ptr(), 1 << 32),
            inv,
            "exceeds",
        );
        err(
            hurray_descriptor_builder_set_coo_is_sorted(coo, 2),
            inv,
            "is_sorted is 2",
        );
        for p in [&mut b, &mut c, &mut e, &mut coo] {
            ok(hurray_descriptor_builder_destroy(p));
        }
    }
}

#[test]
fn tiling_levels_must_nest_properly() {
    let _l = live();
    let shape = [4u64, 4];
    let mut b = builder(HURRAY_TYPE_FLOAT32, HURRAY_LAYOUT_TILED, &shape);
    let t = [1u64, 1];
    let mut d = null_mut();
    // SAFETY: live builder; arrays hold 2 values.
    unsafe {
        err(
            hurray_descriptor_builder_finish(b, &mut d),
            HURRAY_ERR_STATE,
            "push_tiling_level",
        );
        err(
            hurray_descriptor_builder_push_tiling_level(b, t.as_ptr(), 4, null(), 1, null()),
            HURRAY_ERR_INVALID_ARGUMENT,
            "outer_order 4",
        );
        err(
            hurray_descriptor_builder_push_tiling_level(b, t.as_ptr(), 1, null(), 5, null()),
            HURRAY_ERR_INVALID_ARGUMENT,
            "inner_order 5",
        );
        err(
            hurray_descriptor_builder_push_tiling_level(b, t.as_ptr(), 3, null(), 1, null()),
            HURRAY_ERR_NULL_POINTER,
            "outer_strides",
        );
        err(
            hurray_descriptor_builder_push_tiling_level(b, null(), 1, null(), 1, null()),
            HURRAY_ERR_NULL_POINTER,
            "tile_shape",
        );
        for _ in 0..8 {
            ok(hurray_descriptor_builder_push_tiling_level(
                b,
                t.as_ptr(),
                1,
                null(),
                4,
                null(),
            ));
        }
        err(
            hurray_descriptor_builder_push_tiling_level(b, t.as_ptr(), 1, null(), 1, null()),
            HURRAY_ERR_OUT_OF_RANGE,
            "at most 8",
        );
        err(
            hurray_descriptor_builder_finish(b, &mut d),
            HURRAY_ERR_STATE,
            "inner order TILED but no level 8",
        );
        ok(hurray_descriptor_builder_destroy(&mut b));

        let mut b = builder(HURRAY_TYPE_FLOAT32, HURRAY_LAYOUT_TILED, &shape);
        ok(hurray_descriptor_builder_push_tiling_level(
            b,
            t.as_ptr(),
            1,
            null(),
            1,
            null(),
        ));
        err(
            hurray_descriptor_builder_push_tiling_level(b, t.as_ptr(), 1, null(), 1, null()),
            HURRAY_ERR_STATE,
            "does not nest",
        );
        ok(hurray_descriptor_builder_destroy(&mut b));
    }
    assert!(d.is_null());
}

#[test]
fn finish_reports_missing_fields_and_broken_rules_and_can_be_retried() {
    let _l = live();
    let mut d = null_mut();
    // Every layout with required fields says which setter is missing.
    for (tag, setter) in [
        (HURRAY_LAYOUT_STRIDED, "set_strides"),
        (HURRAY_LAYOUT_MORTON, "set_morton_bits"),
        (HURRAY_LAYOUT_COO, "set_nnz"),
        (HURRAY_LAYOUT_CSR, "set_nnz"),
        (HURRAY_LAYOUT_CSC, "set_nnz"),
        (HURRAY_LAYOUT_CSF, "set_nnz"),
        (HURRAY_LAYOUT_BLOCK_PAGED, "set_block_paged"),
        (HURRAY_LAYOUT_COMPOSITE_HEAD, "set_composite_head"),
        (HURRAY_LAYOUT_HILBERT, "set_hilbert"),
        (0xF7, "set_extension_layout"),
    ] {
        let mut b = builder(HURRAY_TYPE_FLOAT32, tag, &[2, 2]);
        // SAFETY: live builder.
        unsafe {
            err(
                hurray_descriptor_builder_finish(b, &mut d),
                HURRAY_ERR_STATE,
                setter,
            );
            ok(hurray_descriptor_builder_destroy(&mut b));
        }
    }
    let mut b = builder(HURRAY_TYPE_FLOAT32, HURRAY_LAYOUT_CSF, &[2, 2]);
    // SAFETY: live builder.
    unsafe {
        ok(hurray_descriptor_builder_set_nnz(b, 0));
        err(
            hurray_descriptor_builder_finish(b, &mut d),
            HURRAY_ERR_STATE,
            "set_csf_mode_order",
        );
        ok(hurray_descriptor_builder_destroy(&mut b));
    }
    // A broken rule names it and its byte offset; fixing it and finishing again works.
    let mut b = builder(HURRAY_TYPE_FLOAT32, HURRAY_LAYOUT_ROW_MAJOR, &[3, 4]);
    add_cpu(b, &[47]);
    // SAFETY: live builder.
    unsafe {
        err(
            hurray_descriptor_builder_finish(b, &mut d),
            HURRAY_ERR_DESCRIPTOR,
            "at byte",
        );
        err(
            hurray_descriptor_builder_finish(b, null_mut()),
            HURRAY_ERR_NULL_POINTER,
            "out",
        );
        err(
            hurray_descriptor_builder_finish(null_mut(), &mut d),
            HURRAY_ERR_NULL_POINTER,
            "builder",
        );
    }
    assert!(d.is_null());
    ok(hurray_ffi_destroy_builder(&mut b));
    let b = builder(HURRAY_TYPE_FLOAT32, HURRAY_LAYOUT_ROW_MAJOR, &[3, 4]);
    add_cpu(b, &[48]);
    // Statistics with a reserved mask bit are refused at finish.
    let s = HurrayStatistics {
        computed_mask: 0x40,
        ..Default::default()
    };
    // SAFETY: live builder.
    unsafe {
        ok(hurray_descriptor_builder_set_statistics(b, &s));
        err(
            hurray_descriptor_builder_finish(b, &mut d),
            HURRAY_ERR_DESCRIPTOR,
            "computed_mask",
        );
        ok(hurray_descriptor_builder_set_statistics(
            b,
            &HurrayStatistics::default(),
        ));
    }
    // Finish twice: two independent descriptors; the builder outlives neither.
    let mut d2 = null_mut();
    // SAFETY: live builder.
    ok(unsafe { hurray_descriptor_builder_finish(b, &mut d2) });
    let d1 = finish(b);
    assert_eq!(encode(d1), encode(d2));
    destroy(d1);
    destroy(d2);
}

fn hurray_ffi_destroy_builder(b: &mut *mut HurrayDescriptorBuilder) -> HurrayStatus {
    // SAFETY: an owned builder pointer.
    unsafe { hurray_descriptor_builder_destroy(b) }
}

#[test]
fn builder_handle_checks() {
    let _l = live();
    let d = decode(
        &hurray_core::TensorDescriptor::dense(hurray_core::ElementType::Int8, &[1])
            .unwrap()
            .encode()
            .unwrap(),
    );
    // SAFETY: a descriptor passed as a builder is a wrong-kind handle, which is reported.
    unsafe {
        err(
            hurray_descriptor_builder_set_byte_offset(d.cast(), 0),
            HURRAY_ERR_INVALID_ARGUMENT,
            "not a HurrayDescriptorBuilder",
        );
        let mut p = d.cast::<HurrayDescriptorBuilder>();
        err(
            hurray_descriptor_builder_destroy(&mut p),
            HURRAY_ERR_INVALID_ARGUMENT,
            "not a HurrayDescriptorBuilder",
        );
        ok(hurray_descriptor_builder_destroy(null_mut()));
        let mut n: *mut HurrayDescriptorBuilder = null_mut();
        ok(hurray_descriptor_builder_destroy(&mut n));
    }
    destroy(d);
}
