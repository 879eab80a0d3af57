//! `hurray_descriptor_view`: one call gives the whole descriptor, every field equal
//! to the model's, for every layout and optional section (golden vectors plus
//! hand-built descriptors), and the view stays the same pointer while the
//! descriptor lives.

mod common;

use common::*;
use hurray_core::layout::TileOrder;
use hurray_core::{
    BlockPaged, BufferHandle, ElementType, ExtensionType, IndexType, KvRole, Layout, MemberRole,
    Shard, Statistics, TensorDescriptor, Tiling,
};
use hurray_ffi::descriptor::HurrayDescriptor;
use hurray_ffi::descriptor_access::{hurray_descriptor_header, hurray_descriptor_shape};
use hurray_ffi::descriptor_view::*;
use hurray_ffi::*;
use std::ptr::{null, null_mut};
use std::sync::Arc;

/// `n` values at `p` (NULL must mean an empty array).
fn arr<T: Copy>(p: *const T, n: usize) -> Vec<T> {
    if p.is_null() {
        assert_eq!(n, 0, "NULL array of {n} entries");
        return Vec::new();
    }
    // SAFETY: the view promises `n` entries at non-NULL `p` while the descriptor lives.
    unsafe { std::slice::from_raw_parts(p, n) }.to_vec()
}

fn view_of(d: *const HurrayDescriptor) -> HurrayDescriptorView {
    let mut v: *const HurrayDescriptorView = null();
    // SAFETY: live descriptor; out writable.
    ok(unsafe { hurray_descriptor_view(d, &mut v) });
    let mut again: *const HurrayDescriptorView = null();
    // SAFETY: as above.
    ok(unsafe { hurray_descriptor_view(d, &mut again) });
    assert_eq!(v, again, "the view is built once and kept");
    // SAFETY: borrowed from the live descriptor.
    unsafe { *v }
}

fn check(m: &TensorDescriptor, v: &HurrayDescriptorView) {
    let r = m.rank();
    assert_eq!(v.header.rank as usize, r);
    assert_eq!(v.header.type_tag, m.element_type.tag());
    assert_eq!(v.header.layout_tag, m.layout.tag());
    assert_eq!(v.header.flags, m.flags());
    assert_eq!(v.header.byte_offset, m.byte_offset);
    assert_eq!(arr(v.shape, r), m.shape);
    let bufs = arr(v.buffers, v.header.buffer_count as usize);
    assert_eq!(bufs.len(), m.buffers.len());
    for (b, h) in bufs.iter().zip(&m.buffers) {
        assert_eq!(
            (b.byte_size, b.alignment, b.device_tag),
            (h.byte_size, h.alignment, h.device.tag())
        );
        assert_eq!(
            (b.sync_mode, b.memory_class),
            (h.sync_mode.tag(), h.memory_class.tag())
        );
    }
    let none = |p: *const u8| p.is_null();
    match &m.layout {
        Layout::Strided { strides } => assert_eq!(&arr(v.strides, r), strides),
        Layout::Tiled(t) => {
            let levels = arr(v.tiling, v.tiling_depth as usize);
            assert_eq!(levels.len(), t.depth());
            let mut cur = Some(t);
            for l in &levels {
                let want = cur.expect("as many levels as the model");
                assert_eq!(arr(l.tile_shape, r), want.tile_shape);
                for (order, tag, strides) in [
                    (&want.outer, l.outer_order, l.outer_strides),
                    (&want.inner, l.inner_order, l.inner_strides),
                ] {
                    match order {
                        TileOrder::Strided(s) => assert_eq!((tag, arr(strides, r)), (3, s.clone())),
                        TileOrder::RowMajor => assert_eq!((tag, strides), (1, null())),
                        TileOrder::ColumnMajor => assert_eq!((tag, strides), (2, null())),
                        TileOrder::Tiled(_) => assert_eq!((tag, strides), (4, null())),
                    }
                }
                cur = match &want.inner {
                    TileOrder::Tiled(n) => Some(n),
                    _ => None,
                };
            }
        }
        Layout::Morton { bits } => assert_eq!(&arr(v.morton_bits, r), bits),
        Layout::Coo { nnz, is_sorted } => {
            assert_eq!((v.nnz, v.coo_is_sorted), (*nnz, u8::from(*is_sorted)))
        }
        Layout::Csr { nnz } | Layout::Csc { nnz } => assert_eq!(v.nnz, *nnz),
        Layout::Csf { nnz, mode_order } => {
            assert_eq!(v.nnz, *nnz);
            assert_eq!(&arr(v.csf_mode_order, r), mode_order);
        }
        Layout::BlockPaged(p) => {
            // SAFETY: non-NULL for a block-paged descriptor (checked by the unwrap).
            let f = unsafe { v.block_paged.as_ref() }.expect("block-paged fields");
            assert_eq!(
                (f.num_pages, f.page_size, f.num_seqs, f.layer_index),
                (p.num_pages, p.page_size, p.num_seqs, p.layer_index)
            );
        }
        Layout::CompositeHead(h) => {
            // SAFETY: as above.
            let f = unsafe { v.composite_head.as_ref() }.expect("head fields");
            assert_eq!(
                (f.member_count, f.composition_rule),
                (h.member_count, h.rule.tag())
            );
        }
        Layout::Hilbert { order, rank } => {
            assert_eq!((v.hilbert_order, v.hilbert_rank), (*order, *rank))
        }
        Layout::Extension { id, data, .. } => {
            assert_eq!(v.extension_layout_id, *id);
            assert_eq!(
                &arr(
                    v.extension_layout_data,
                    v.extension_layout_data_len as usize
                ),
                data
            );
        }
        _ => {}
    }
    if !matches!(m.layout, Layout::BlockPaged(_)) {
        assert!(v.block_paged.is_null());
    }
    if !matches!(m.layout, Layout::Strided { .. }) {
        assert!(v.strides.is_null());
    }
    assert_eq!(v.quantization.is_null(), m.quantization.is_none());
    if let Some(q) = &m.quantization {
        // SAFETY: non-NULL when the section is present.
        assert_eq!(unsafe { (*v.quantization).scheme_tag }, q.scheme.tag());
        assert_eq!(
            arr(
                v.quantization_trailing,
                v.quantization_trailing_len as usize
            ),
            q.trailing
        );
    } else {
        assert!(none(v.quantization_trailing));
    }
    match &m.shard {
        Some(s) => {
            assert_eq!(arr(v.shard_parent_shape, r), s.parent_shape);
            assert_eq!(arr(v.shard_offset, r), s.offset);
        }
        None => assert!(v.shard_parent_shape.is_null() && v.shard_offset.is_null()),
    }
    assert_eq!(v.statistics.is_null(), m.statistics.is_none());
    if let Some(s) = &m.statistics {
        // SAFETY: non-NULL when present.
        assert_eq!(unsafe { (*v.statistics).nnz }, s.nnz);
    }
    assert_eq!(v.extension_type.is_null(), m.extension_type.is_none());
    assert_eq!(v.has_member_role, u8::from(m.composite_member.is_some()));
    if let Some(role) = m.composite_member {
        assert_eq!(v.member_role, role as u8);
    }
}

fn built() -> Vec<TensorDescriptor> {
    use ElementType::*;
    let with = |et, shape: &[u64], layout: Layout, sizes: &[u64]| {
        let mut d = TensorDescriptor::dense(et, shape).unwrap();
        d.layout = layout;
        d.buffers = sizes.iter().map(|&n| BufferHandle::cpu(n)).collect();
        d.validate().unwrap();
        d
    };
    let mut v = vec![
        with(
            Float32,
            &[4, 4],
            Layout::Tiled(Tiling {
                tile_shape: vec![2, 2],
                outer: TileOrder::Strided(vec![2, 1]),
                inner: TileOrder::Tiled(Box::new(Tiling {
                    tile_shape: vec![1, 2],
                    outer: TileOrder::ColumnMajor,
                    inner: TileOrder::RowMajor,
                })),
            }),
            &[64],
        ),
        with(
            Float32,
            &[4, 4],
            Layout::Coo {
                nnz: 3,
                is_sorted: true,
            },
            &[12, 48],
        ),
        with(
            Float32,
            &[2, 3, 4],
            Layout::Csf {
                nnz: 4,
                mode_order: vec![2, 0, 1],
            },
            &[16, 16, 16, 24, 24, 40, 32],
        ),
        with(
            Float16,
            &[9, 2, 8],
            Layout::BlockPaged(BlockPaged {
                page_size: 4,
                num_pages: 5,
                paged_axis: 0,
                num_seqs: 2,
                kv_role: KvRole::Value,
                layer_index: 3,
                block_table_index_type: IndexType::U64,
            }),
            &[640, 24, 24],
        ),
        with(Int32, &[4, 4], Layout::Hilbert { order: 2, rank: 2 }, &[64]),
        with(
            Float32,
            &[4],
            Layout::Extension {
                tag: 0xF1,
                id: 9,
                data: vec![5, 6, 7],
            },
            &[16],
        ),
    ];
    let mut s = TensorDescriptor::dense(Float32, &[2, 3]).unwrap();
    s.shard = Some(Shard {
        parent_shape: vec![4, 3],
        offset: vec![2, 0],
    });
    s.statistics = Some(Statistics {
        computed_mask: 1,
        nnz: 6,
        ..Statistics::default()
    });
    s.composite_member = Some(MemberRole::Correction);
    v.push(s);
    let mut e = TensorDescriptor::dense(Uint8, &[4]).unwrap();
    e.element_type = Private(0xF3);
    e.extension_type = Some(ExtensionType {
        bit_width: 8,
        packing_factor: 1,
        is_float: true,
        sign_bits: 1,
        exponent_bits: 4,
        mantissa_bits: 3,
        exponent_bias: 7,
        has_nan: true,
        ..ExtensionType::default()
    });
    v.push(e);
    v.push(TensorDescriptor::dense(Float32, &[]).unwrap());
    v
}

#[test]
fn the_view_holds_every_field_of_every_descriptor() {
    let _l = live();
    let mut n = 0;
    for name in golden_names() {
        let d = decode(&golden(&name).unwrap());
        // SAFETY: live own-build descriptor.
        let m = unsafe { &*d }.model().clone();
        check(&m, &view_of(d));
        destroy(d);
        n += 1;
    }
    for m in built() {
        let d = HurrayDescriptor::new(Arc::new(m.clone())).unwrap();
        check(&m, d.view());
        n += 1;
    }
    assert!(n >= 9, "{n} descriptors checked");
}

#[test]
fn view_errors() {
    let mut v: *const HurrayDescriptorView = null();
    // SAFETY: the library checks the pointers.
    unsafe {
        err(
            hurray_descriptor_view(null(), &mut v),
            HURRAY_ERR_NULL_POINTER,
            "descriptor",
        );
    }
    let d = HurrayDescriptor::new(Arc::new(
        TensorDescriptor::dense(ElementType::Int8, &[2]).unwrap(),
    ))
    .unwrap();
    // SAFETY: as above.
    unsafe {
        err(
            hurray_descriptor_view(&d, std::ptr::null_mut()),
            HURRAY_ERR_NULL_POINTER,
            "out",
        )
    };
}

/// Builds a descriptor from `v` (asserting success).
#[track_caller]
fn from_view(v: &HurrayDescriptorView) -> *mut HurrayDescriptor {
    let mut d = std::ptr::null_mut();
    // SAFETY: the view's pointers are live for the call; out writable.
    ok(unsafe { hurray_descriptor_from_view(v, &mut d) });
    d
}

/// The status and message of building from `v`, with nothing left alive.
fn from_view_err(v: &HurrayDescriptorView, code: HurrayStatus, needle: &str) {
    let mut d = std::ptr::null_mut();
    // SAFETY: the view's pointers are live for the call; out writable.
    err(
        unsafe { hurray_descriptor_from_view(v, &mut d) },
        code,
        needle,
    );
    assert!(d.is_null(), "no descriptor on error");
}

#[test]
fn every_descriptor_round_trips_through_from_view_byte_identically() {
    let _l = live();
    let mut cases: Vec<(String, Vec<u8>)> = golden_names()
        .into_iter()
        .map(|n| {
            let b = golden(&n).unwrap();
            (n, b)
        })
        .collect();
    if cases.is_empty() {
        eprintln!("note: no conformance vectors; only hand-built descriptors are checked");
    }
    let golden_count = cases.len();
    for (k, m) in built().into_iter().enumerate() {
        cases.push((format!("built #{k}"), m.encode().unwrap()));
    }
    for (name, bytes) in &cases {
        // Private tags (the hand-built extension cases) need the model route: strict
        // decoding refuses them.
        let model = TensorDescriptor::decode_with(
            bytes,
            &hurray_core::DecodeOptions {
                accept_private: true,
                ..Default::default()
            },
        )
        .unwrap();
        let d = HurrayDescriptor::new(Arc::new(model)).unwrap();
        let v = *d.view();
        let again = from_view(&v);
        assert_eq!(&encode(again), bytes, "{name}: view -> from_view -> encode");
        destroy(again);
        // Output-only header fields may be zero: flags are derived, the length ignored.
        let mut z = v;
        z.header.flags = 0;
        z.header.descriptor_length = 0;
        z.header.version_major = 0;
        let again = from_view(&z);
        assert_eq!(&encode(again), bytes, "{name}: with a zeroed header");
        destroy(again);
    }
    assert_eq!(cases.len(), golden_count + built().len());
    assert!(
        cases.len() >= 9,
        "{} descriptors round-tripped",
        cases.len()
    );
}

#[test]
fn from_view_builds_from_a_caller_struct_and_refuses_bad_views() {
    let _l = live();
    let shape = [3u64, 4];
    let buffers = [HurrayBufferEntry {
        byte_size: 48,
        alignment: 64,
        ..HurrayBufferEntry::default()
    }];
    let strides = [4i64, 1];
    // A view filled in by hand, as a C caller would (zeroed, then the fields it needs).
    // SAFETY: HurrayDescriptorView is plain data; all-zero is NULL pointers and zeros.
    let mut base: HurrayDescriptorView = unsafe { std::mem::zeroed() };
    base.header.type_tag = ElementType::Float32.tag();
    base.header.layout_tag = 3; // strided
    base.header.rank = 2;
    base.header.buffer_count = 1;
    base.shape = shape.as_ptr();
    base.buffers = buffers.as_ptr();
    base.strides = strides.as_ptr();
    let d = from_view(&base);
    let mut want = TensorDescriptor::dense(ElementType::Float32, &shape).unwrap();
    want.layout = Layout::Strided {
        strides: strides.to_vec(),
    };
    assert_eq!(encode(d), want.encode().unwrap());
    destroy(d);

    let with = |f: &dyn Fn(&mut HurrayDescriptorView)| {
        let mut v = base;
        f(&mut v);
        v
    };
    let small = [HurrayBufferEntry {
        byte_size: 47,
        ..buffers[0]
    }];
    let bad_sync = [HurrayBufferEntry {
        sync_mode: 0x7E,
        ..buffers[0]
    }];
    let parent = [6u64, 4];
    let cases: Vec<(&str, HurrayDescriptorView, HurrayStatus, &str)> = vec![
        (
            "strided without strides",
            with(&|v| v.strides = null()),
            HURRAY_ERR_NULL_POINTER,
            "view->strides",
        ),
        (
            "a field of another layout",
            with(&|v| v.nnz = 5),
            HURRAY_ERR_INVALID_ARGUMENT,
            "view->nnz is set but the strided layout",
        ),
        (
            "flags that contradict the sections",
            with(&|v| v.header.flags = 2),
            HURRAY_ERR_INVALID_ARGUMENT,
            "header.flags",
        ),
        (
            "an unassigned type",
            with(&|v| v.header.type_tag = 0x7F),
            HURRAY_ERR_INVALID_ARGUMENT,
            "type_tag 0x7f",
        ),
        (
            "an unassigned layout",
            with(&|v| {
                v.header.layout_tag = 0x7F;
                v.strides = null();
            }),
            HURRAY_ERR_INVALID_ARGUMENT,
            "layout_tag 0x7f",
        ),
        (
            "rank too large",
            with(&|v| v.header.rank = 65),
            HURRAY_ERR_INVALID_ARGUMENT,
            "rank 65",
        ),
        (
            "a buffer too small for the strides",
            with(&|v| v.buffers = small.as_ptr()),
            HURRAY_ERR_DESCRIPTOR,
            "at byte",
        ),
        (
            "a reserved sync mode",
            with(&|v| v.buffers = bad_sync.as_ptr()),
            HURRAY_ERR_INVALID_SYNC_MODE,
            "sync_mode 0x7e",
        ),
        (
            "buffers missing",
            with(&|v| v.buffers = null()),
            HURRAY_ERR_NULL_POINTER,
            "view->buffers",
        ),
        (
            "half a shard",
            with(&|v| v.shard_parent_shape = parent.as_ptr()),
            HURRAY_ERR_INVALID_ARGUMENT,
            "view->shard_offset is NULL",
        ),
        (
            "member role flag out of range",
            with(&|v| v.has_member_role = 2),
            HURRAY_ERR_INVALID_ARGUMENT,
            "has_member_role is 2",
        ),
        (
            "tiled without levels",
            with(&|v| {
                v.header.layout_tag = 4;
                v.strides = null();
            }),
            HURRAY_ERR_INVALID_ARGUMENT,
            "tiling_depth is 0",
        ),
        (
            "block-paged without its fields",
            with(&|v| {
                v.header.layout_tag = 10;
                v.strides = null();
            }),
            HURRAY_ERR_NULL_POINTER,
            "view->block_paged is NULL",
        ),
        (
            "a future minor version",
            with(&|v| v.header.version_minor = 9),
            HURRAY_ERR_INVALID_ARGUMENT,
            "version_minor is 9",
        ),
    ];
    for (name, v, code, needle) in cases {
        eprintln!("case: {name}");
        from_view_err(&v, code, needle);
    }
    let mut d = std::ptr::null_mut();
    // SAFETY: the library checks the pointers.
    unsafe {
        err(
            hurray_descriptor_from_view(null(), &mut d),
            HURRAY_ERR_NULL_POINTER,
            "view",
        );
        err(
            hurray_descriptor_from_view(&base, std::ptr::null_mut()),
            HURRAY_ERR_NULL_POINTER,
            "out",
        );
    }
}

#[test]
fn from_view_nests_tiling_levels_and_checks_their_chain() {
    let _l = live();
    let m = &built()[0]; // two levels: strided outer grid, then column-major tiles
    let d = HurrayDescriptor::new(Arc::new(m.clone())).unwrap();
    let v = *d.view();
    let levels = arr(v.tiling, v.tiling_depth as usize);
    let mut broken = levels.clone();
    broken[0].inner_order = 1; // level 1 follows, so level 0 must nest
    let mut w = v;
    w.tiling = broken.as_ptr();
    from_view_err(
        &w,
        HURRAY_ERR_INVALID_ARGUMENT,
        "tiling[0].inner_order must be TILED",
    );
    let mut w = v;
    w.tiling_depth = 1; // level 0 says TILED but is now the last
    from_view_err(
        &w,
        HURRAY_ERR_INVALID_ARGUMENT,
        "tiling[0].inner_order is TILED",
    );
    let mut broken = levels.clone();
    broken[0].outer_strides = null();
    let mut w = v;
    w.tiling = broken.as_ptr();
    from_view_err(&w, HURRAY_ERR_NULL_POINTER, "view->tiling[0].outer_strides");
    let mut w = v;
    w.tiling_depth = 9;
    from_view_err(&w, HURRAY_ERR_INVALID_ARGUMENT, "1 to 8 levels");
    let again = from_view(&v);
    assert_eq!(encode(again), m.encode().unwrap());
    destroy(again);
}

#[test]
fn header_and_shape_agree_with_the_view() {
    let _l = live();
    let mut m = TensorDescriptor::dense(ElementType::Float32, &[2, 3, 4]).unwrap();
    m.buffers = vec![BufferHandle {
        byte_size: 96,
        alignment: 128,
        ..BufferHandle::cpu(96)
    }];
    let d = from_model(&m);
    let v = view_of(d);
    let mut h = HurrayDescriptorHeader::default();
    let (mut shape, mut n) = ([0u64; 3], 0u64);
    // SAFETY: live descriptor; outs writable (or NULL to test the checks).
    unsafe {
        ok(hurray_descriptor_header(d, &mut h));
        assert_eq!(h, v.header);
        assert_eq!(h.descriptor_length as usize, encode(d).len());
        assert_eq!((h.rank, h.buffer_count), (3, 1));
        ok(hurray_descriptor_shape(d, null_mut(), 0, &mut n));
        assert_eq!(n, 3, "a NULL array asks for the rank");
        err(
            hurray_descriptor_shape(d, shape.as_mut_ptr(), 2, &mut n),
            HURRAY_ERR_BUFFER_TOO_SMALL,
            "3 elements",
        );
        ok(hurray_descriptor_shape(d, shape.as_mut_ptr(), 3, &mut n));
        assert_eq!(shape.to_vec(), arr(v.shape, 3));
        assert_eq!(shape, [2, 3, 4]);
        err(
            hurray_descriptor_header(d, null_mut()),
            HURRAY_ERR_NULL_POINTER,
            "out",
        );
        err(
            hurray_descriptor_header(null(), &mut h),
            HURRAY_ERR_NULL_POINTER,
            "descriptor",
        );
    }
    assert_eq!(arr(v.buffers, 1)[0].alignment, 128);
    destroy(d);
}
