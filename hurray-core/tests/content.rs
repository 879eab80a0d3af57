//! Buffer-content rules (`hurray_core::content`): the spec's own examples pass, and
//! each rule, broken once, is reported with its rule, buffer and byte offset.

use hurray_core::content::{check_content, has_content_rules, ContentRule};
use hurray_core::{
    BlockPaged, BufferHandle, ElementType, IndexType, KvRole, Layout, Quantization, ScaleType,
    Scheme, TensorDescriptor,
};

fn le64(v: &[u64]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}
fn le32(v: &[u32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}
fn f32s(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}
fn i32s(v: &[i32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// A validated descriptor with `layout` over `shape` whose buffer sizes are `bufs`' lengths.
fn desc(et: ElementType, shape: &[u64], layout: Layout, bufs: &[Vec<u8>]) -> TensorDescriptor {
    let mut d = TensorDescriptor::dense(et, shape).unwrap();
    d.layout = layout;
    d.buffers = bufs
        .iter()
        .map(|b| BufferHandle::cpu(b.len() as u64))
        .collect();
    d.validate().expect("descriptor is valid");
    d
}

/// What a failed check reports: rule, buffer, byte offset in the buffer.
type Found = (ContentRule, usize, u64);
/// One CSF level: `pos_L`, `crd_L`.
type Level<'a> = (&'a [u64], &'a [u64]);

fn check(d: &TensorDescriptor, bufs: &[Vec<u8>]) -> Result<(), Found> {
    let slices: Vec<&[u8]> = bufs.iter().map(|b| b.as_slice()).collect();
    check_content(d, &slices).map_err(|e| (e.rule, e.buffer, e.offset))
}

// ---- CSR / CSC (layouts.md §2.7, §2.8) ------------------------------------------------

fn csr(col: &[u64], row_ptr: &[u64]) -> (TensorDescriptor, Vec<Vec<u8>>) {
    let nnz = col.len() as u64;
    let bufs = vec![f32s(&vec![1.0; col.len()]), le64(col), le64(row_ptr)];
    let rows = row_ptr.len() as u64 - 1;
    (
        desc(ElementType::Float32, &[rows, 5], Layout::Csr { nnz }, &bufs),
        bufs,
    )
}

#[test]
fn csr_spec_example_passes() {
    // layouts.md §2.7: shape [4,5], col_indices [0,3,2,1,4], row_ptr [0,2,3,5,5].
    let (d, b) = csr(&[0, 3, 2, 1, 4], &[0, 2, 3, 5, 5]);
    assert!(has_content_rules(&d));
    assert_eq!(check(&d, &b), Ok(()));
}

#[test]
fn csr_each_rule() {
    use ContentRule::*;
    let cases: &[(&[u64], &[u64], Found)] = &[
        (&[0, 3, 2, 1, 4], &[1, 2, 3, 5, 5], (PointerStart, 2, 0)),
        (&[0, 3, 2, 1, 4], &[0, 2, 3, 5, 4], (PointerOrder, 2, 32)),
        (&[0, 3, 2, 1, 4], &[0, 2, 6, 3, 5], (PointerOrder, 2, 24)),
        (&[0, 3, 2, 1, 4], &[0, 2, 3, 4, 4], (PointerEnd, 2, 32)),
        (&[0, 5, 2, 1, 4], &[0, 2, 3, 5, 5], (IndexRange, 1, 8)),
        (&[3, 0, 2, 1, 4], &[0, 2, 3, 5, 5], (IndexOrder, 1, 8)),
        (&[0, 3, 2, 4, 4], &[0, 2, 3, 5, 5], (IndexOrder, 1, 32)),
    ];
    for (col, ptr, want) in cases {
        let (d, b) = csr(col, ptr);
        assert_eq!(check(&d, &b), Err(*want), "col {col:?} row_ptr {ptr:?}");
    }
}

#[test]
fn csc_checks_rows_against_shape0() {
    // layouts.md §2.8 example: values [1,4,3,2,5], row_indices [0,2,1,0,2], col_ptr [0,1,2,3,4,5].
    let rows = le64(&[0, 2, 1, 0, 2]);
    let bufs = vec![f32s(&[1.0; 5]), rows, le64(&[0, 1, 2, 3, 4, 5])];
    let d = desc(ElementType::Float32, &[4, 5], Layout::Csc { nnz: 5 }, &bufs);
    assert_eq!(check(&d, &bufs), Ok(()));
    let mut bad = bufs.clone();
    bad[1] = le64(&[0, 2, 4, 0, 2]); // row 4 of a 4-row matrix
    assert_eq!(check(&d, &bad), Err((ContentRule::IndexRange, 1, 16)));
}

#[test]
fn empty_csr_passes_and_nnz_zero_needs_zero_pointers() {
    let (d, b) = csr(&[], &[0, 0, 0]);
    assert_eq!(check(&d, &b), Ok(()));
    let (d, b) = csr(&[], &[0, 1, 0]);
    assert_eq!(check(&d, &b), Err((ContentRule::PointerOrder, 2, 16)));
}

// ---- COO (layouts.md §2.6) -------------------------------------------------------------

fn coo(indices: &[u64], sorted: bool) -> (TensorDescriptor, Vec<Vec<u8>>) {
    let nnz = indices.len() as u64 / 2;
    let bufs = vec![f32s(&vec![0.5; nnz as usize]), le64(indices)];
    let layout = Layout::Coo {
        nnz,
        is_sorted: sorted,
    };
    (desc(ElementType::Float32, &[4, 4], layout, &bufs), bufs)
}

#[test]
fn coo_rules() {
    use ContentRule::*;
    // The spec example, sorted: [0,1], [2,0], [3,3].
    let (d, b) = coo(&[0, 1, 2, 0, 3, 3], true);
    assert_eq!(check(&d, &b), Ok(()));
    let (d, b) = coo(&[3, 3, 0, 1, 2, 0], false);
    assert_eq!(check(&d, &b), Ok(()));
    let (d, b) = coo(&[0, 1, 2, 4, 3, 3], false);
    assert_eq!(check(&d, &b), Err((IndexRange, 1, 24)));
    let (d, b) = coo(&[2, 0, 0, 1, 2, 0], false);
    assert_eq!(check(&d, &b), Err((DuplicateCoordinate, 1, 32)));
    let (d, b) = coo(&[0, 1, 0, 1, 3, 3], true);
    assert_eq!(check(&d, &b), Err((SortOrder, 1, 16)));
    let (d, b) = coo(&[2, 0, 0, 1, 3, 3], true);
    assert_eq!(check(&d, &b), Err((SortOrder, 1, 16)));
}

#[test]
fn coo_duplicates_found_when_the_shape_overflows_u128() {
    // 3 dims of 2^63: the linear index does not fit in u128, so tuples are compared.
    let big = 1u64 << 63;
    let idx = le64(&[1, 2, 3, 7, 7, 7, 1, 2, 3]);
    let bufs = vec![f32s(&[1.0; 3]), idx];
    let layout = Layout::Coo {
        nnz: 3,
        is_sorted: false,
    };
    let mut d = desc(ElementType::Float32, &[1, 1, 1], layout, &bufs);
    d.shape = vec![big, big, big];
    d.validate()
        .expect("a sparse shape may exceed u64 elements");
    assert_eq!(
        check(&d, &bufs),
        Err((ContentRule::DuplicateCoordinate, 1, 48))
    );
}

// ---- CSF (layouts.md §2.9) -------------------------------------------------------------

fn csf_bufs(levels: &[(&[u64], &[u64])], nnz: usize) -> Vec<Vec<u8>> {
    let mut bufs = vec![f32s(&vec![1.0; nnz])];
    for (pos, crd) in levels {
        bufs.push(le64(pos));
        bufs.push(le64(crd));
    }
    bufs
}

#[test]
fn csf_spec_example_and_rules() {
    use ContentRule::*;
    // layouts.md §2.9: shape [2,3,4], identity order, nnz 4.
    let example: [(&[u64], &[u64]); 3] = [
        (&[0, 2], &[0, 1]),
        (&[0, 2, 3], &[0, 2, 1]),
        (&[0, 1, 2, 4], &[1, 3, 0, 2]),
    ];
    let layout = Layout::Csf {
        nnz: 4,
        mode_order: vec![0, 1, 2],
    };
    let bufs = csf_bufs(&example, 4);
    let d = desc(ElementType::Float32, &[2, 3, 4], layout.clone(), &bufs);
    assert_eq!(check(&d, &bufs), Ok(()));

    let mut cases: Vec<([Level; 3], Found)> = Vec::new();
    let mut c = example;
    c[1].0 = &[0, 3, 2]; // pos_1 decreasing
    cases.push((c, (PointerOrder, 3, 16)));
    let mut c = example;
    c[1].1 = &[0, 3, 1]; // crd_1 = 3 >= shape[1]
    cases.push((c, (IndexRange, 4, 8)));
    let mut c = example;
    c[2].1 = &[1, 3, 2, 2]; // a repeat inside a sibling slice
    cases.push((c, (IndexOrder, 6, 24)));
    let mut c = example;
    c[0].0 = &[1, 2];
    cases.push((c, (PointerStart, 1, 0)));
    let mut c = example;
    c[1] = (&[0, 2, 2], &[0, 2]); // 2 nodes at level 1: level 2 then ends at 2, not nnz 4
    cases.push((c, (PointerEnd, 5, 24)));
    let mut c = example;
    c[2].0 = &[0, 1, 2, 5]; // pos_2 ends at 5: crd_2 holds only 4
    cases.push((c, (ContentSize, 6, 0)));
    for (levels, want) in cases {
        let b = csf_bufs(&levels, 4);
        // Buffer sizes of the broken cases may differ from the example's: describe them.
        let d = desc(ElementType::Float32, &[2, 3, 4], layout.clone(), &b);
        assert_eq!(check(&d, &b), Err(want), "{levels:?}");
    }
}

#[test]
fn csf_empty_passes() {
    let levels: [(&[u64], &[u64]); 3] = [(&[0, 0], &[]), (&[0], &[]), (&[0], &[])];
    let bufs = csf_bufs(&levels, 0);
    let layout = Layout::Csf {
        nnz: 0,
        mode_order: vec![2, 0, 1],
    };
    let d = desc(ElementType::Float32, &[2, 3, 4], layout, &bufs);
    assert_eq!(check(&d, &bufs), Ok(()));
}

// ---- Block-paged (layouts.md §2.10) ----------------------------------------------------

fn paged(table: &[u32], seq_ptr: &[u32]) -> (TensorDescriptor, Vec<Vec<u8>>) {
    let p = BlockPaged {
        page_size: 4,
        num_pages: 5,
        paged_axis: 0,
        num_seqs: seq_ptr.len() as u32 - 1,
        kv_role: KvRole::Key,
        layer_index: 3,
        block_table_index_type: IndexType::U32,
    };
    let pool = vec![0u8; 5 * 4 * 2 * 8 * 2];
    let bufs = vec![pool, le32(table), le32(seq_ptr)];
    (
        desc(
            ElementType::Float16,
            &[9, 2, 8],
            Layout::BlockPaged(p),
            &bufs,
        ),
        bufs,
    )
}

#[test]
fn paged_rules() {
    use ContentRule::*;
    // Two sequences of 6 and 3 tokens: pages [4, 1] and [2].
    let (d, b) = paged(&[4, 1, 2], &[0, 2, 3]);
    assert_eq!(check(&d, &b), Ok(()));
    let (d, b) = paged(&[4, 5, 2], &[0, 2, 3]);
    assert_eq!(check(&d, &b), Err((PageIndex, 1, 4)));
    let (d, b) = paged(&[4, 1, 2], &[0, 3, 2, 3]);
    assert_eq!(check(&d, &b), Err((PointerOrder, 2, 8)));
    // seq_ptr ends past the block table's entries.
    let (d, b) = paged(&[4, 1, 2], &[0, 2, 4]);
    assert_eq!(check(&d, &b), Err((ContentSize, 1, 0)));
    // A buffer may be larger than needed (layouts.md §5): the third entry is unused.
    let (d, b) = paged(&[4, 1, 9], &[0, 1, 2]);
    assert_eq!(check(&d, &b), Ok(()));
    let (d, b) = paged(&[4, 1, 2], &[1, 2, 3]);
    assert_eq!(check(&d, &b), Err((PointerStart, 2, 0)));
    let (d, b) = paged(&[], &[0]);
    assert_eq!(check(&d, &b), Ok(()));
}

// ---- Quantization parameters (quantization.md §8, §9 items 14–15) -----------------------

fn quantized(
    et: ElementType,
    shape: &[u64],
    scheme: Scheme,
    params: Vec<Vec<u8>>,
) -> (TensorDescriptor, Vec<Vec<u8>>) {
    let mut d = TensorDescriptor::dense(et, shape).unwrap();
    let mut bufs = vec![vec![0u8; d.buffers[0].byte_size as usize]];
    for p in params {
        d.buffers.push(BufferHandle::cpu(p.len() as u64));
        bufs.push(p);
    }
    d.quantization = Some(Quantization::from(scheme));
    d.validate().expect("valid quantized descriptor");
    (d, bufs)
}

fn per_channel(scales: &[f32], zps: Option<&[i32]>) -> (TensorDescriptor, Vec<Vec<u8>>) {
    let scheme = Scheme::PerChannel {
        axis: 0,
        scale_buffer_index: 1,
        zero_point_buffer_index: zps.map(|_| 2),
        scale_type: ScaleType::F32,
    };
    let mut params = vec![f32s(scales)];
    if let Some(z) = zps {
        params.push(i32s(z));
    }
    quantized(ElementType::Int8, &[2, 4], scheme, params)
}

#[test]
fn per_channel_scales_and_zero_points() {
    use ContentRule::*;
    // quantization.md §8.2 example: scales [0.5, 0.25], zero points [-1, 3].
    let (d, b) = per_channel(&[0.5, 0.25], Some(&[-1, 3]));
    assert_eq!(check(&d, &b), Ok(()));
    for bad in [0.0, -0.0, f32::INFINITY, f32::NAN] {
        let (d, b) = per_channel(&[0.5, bad], None);
        assert_eq!(check(&d, &b), Err((ScaleValue, 1, 4)), "scale {bad}");
    }
    let (d, b) = per_channel(&[-0.5, 0.25], None);
    assert_eq!(
        check(&d, &b),
        Ok(()),
        "negative per-channel scales are allowed"
    );
    let (d, b) = per_channel(&[0.5, 0.25], Some(&[-1, 128]));
    assert_eq!(check(&d, &b), Err((ZeroPointRange, 2, 4)));
    let (d, b) = per_channel(&[0.5, 0.25], Some(&[-129, 0]));
    assert_eq!(check(&d, &b), Err((ZeroPointRange, 2, 0)));
}

#[test]
fn per_block_half_scales_and_shared_buffer() {
    use ContentRule::*;
    let f16 = |bits: &[u16]| -> Vec<u8> { bits.iter().flat_map(|b| b.to_le_bytes()).collect() };
    // §8.3 example B: uint4 [6], block 4, f16 scales [0.5, 2.0] = 0x3800, 0x4000.
    let scheme = |zp: Option<u32>, t: ScaleType| Scheme::PerBlock {
        axis: 0,
        block_size: 4,
        scale_buffer_index: 1,
        zero_point_buffer_index: zp,
        scale_type: t,
    };
    let ok = quantized(
        ElementType::Uint4,
        &[6],
        scheme(Some(2), ScaleType::F16),
        vec![f16(&[0x3800, 0x4000]), i32s(&[8, 7])],
    );
    assert_eq!(check(&ok.0, &ok.1), Ok(()));
    for (bits, t) in [
        (0x7C00u16, ScaleType::F16),
        (0xFC00, ScaleType::F16),
        (0x7E00, ScaleType::F16),
        (0x8000, ScaleType::F16),
        (0x7F80, ScaleType::Bf16),
        (0x7FC1, ScaleType::Bf16),
        (0x0000, ScaleType::Bf16),
    ] {
        let (d, b) = quantized(
            ElementType::Uint4,
            &[6],
            scheme(None, t),
            vec![f16(&[0x3800, bits])],
        );
        assert_eq!(
            check(&d, &b),
            Err((ScaleValue, 1, 2)),
            "{t:?} bits {bits:#06x}"
        );
    }
    // A shared scale / zero-point buffer: two f16 scales, then two i32 zero points.
    let mut shared = f16(&[0x3800, 0x4000]);
    shared.extend(i32s(&[8, 16]));
    let (d, b) = quantized(
        ElementType::Uint4,
        &[6],
        scheme(Some(1), ScaleType::F16),
        vec![shared],
    );
    assert_eq!(check(&d, &b), Err((ZeroPointRange, 1, 8)));
}

#[test]
fn nf4_and_mxfp_scales() {
    use ContentRule::*;
    let nf4 = |absmax: &[f32]| {
        let s = Scheme::Nf4 {
            axis: 1,
            block_size: 8,
            scale_buffer_index: 1,
        };
        quantized(ElementType::Uint4, &[2, 16], s, vec![f32s(absmax)])
    };
    let (d, b) = nf4(&[0.5, 1.0, 0.0, 0.25]);
    assert_eq!(check(&d, &b), Ok(()), "NF4 allows a zero absmax");
    let (d, b) = nf4(&[0.5, 1.0, -2.0, 0.25]);
    assert_eq!(check(&d, &b), Err((ScaleValue, 1, 8)));
    let (d, b) = nf4(&[0.5, 1.0, 2.0, f32::NAN]);
    assert_eq!(check(&d, &b), Err((ScaleValue, 1, 12)));

    let mx = |scales: &[u8]| {
        let s = Scheme::Mxfp {
            axis: 0,
            block_size: 32,
            scale_buffer_index: 1,
        };
        quantized(ElementType::Float4E2m1, &[64], s, vec![scales.to_vec()])
    };
    let (d, b) = mx(&[0x7F, 0x82]);
    assert_eq!(check(&d, &b), Ok(()));
    let (d, b) = mx(&[0x7F, 0x00]);
    assert_eq!(check(&d, &b), Err((ScaleValue, 1, 1)));
    let (d, b) = mx(&[0xFF, 0x82]);
    assert_eq!(check(&d, &b), Err((ScaleValue, 1, 0)));
}

#[test]
fn e8m0_data_and_dense_tensors() {
    let d = TensorDescriptor::dense(ElementType::Float8E8m0, &[4]).unwrap();
    assert!(has_content_rules(&d));
    assert_eq!(check(&d, &[vec![1, 0x7F, 0xFE, 3]]), Ok(()));
    assert_eq!(
        check(&d, &[vec![1, 0x7F, 0xFF, 3]]),
        Err((ContentRule::E8m0Reserved, 0, 2))
    );
    let plain = TensorDescriptor::dense(ElementType::Float32, &[4]).unwrap();
    assert!(!has_content_rules(&plain));
    assert_eq!(check(&plain, &[vec![0xFF; 16]]), Ok(()));
}

#[test]
fn wrong_buffer_sizes_are_errors_not_panics() {
    let (d, mut b) = csr(&[0, 3, 2, 1, 4], &[0, 2, 3, 5, 5]);
    b[2].pop();
    assert_eq!(check(&d, &b), Err((ContentRule::ContentSize, 2, 0)));
    b.pop();
    assert!(check(&d, &b).is_err());
}
