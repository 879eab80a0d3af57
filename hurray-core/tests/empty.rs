//! Empty tensors (`descriptor.md` §4: a 0 dimension is valid and readers MUST accept
//! it; `layouts.md` §1.9: zero-size buffers). Three round-trip vectors: row-major
//! float32 `[0]`, row-major float32 `[3,0,5]`, and a CSR float32 4×5 with `nnz = 0`
//! (buffers 0, 0 and (4+1)·8 = 40 bytes). The expected bytes below are written out by
//! hand from the field tables of `descriptor.md` §2–§6 and `layouts.md` §2.7.

use hurray_core::{
    element_count, BufferHandle, DecodeOptions, ElementType, Layout, Rule, TensorDescriptor,
};

/// Hex dump, for readable failures.
fn hex(b: &[u8]) -> String {
    b.iter()
        .map(|x| format!("{x:02X}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Build → encode → compare with the hand-computed bytes → decode (strict and
/// permissive) → compare with the model → re-encode identically.
fn round_trip(name: &str, d: &TensorDescriptor, expected: &[u8]) {
    let bytes = d.encode().unwrap_or_else(|e| panic!("{name}: encode: {e}"));
    assert_eq!(
        hex(&bytes),
        hex(expected),
        "{name}: encoding differs from the hand-computed vector"
    );
    assert_eq!(d.encoded_len(), expected.len(), "{name}: encoded_len");
    let len = u32::from_le_bytes(expected[6..10].try_into().unwrap()) as usize;
    assert_eq!(len, expected.len(), "{name}: descriptor_length field");
    assert_eq!(
        hurray_core::peek_descriptor_length(&bytes).unwrap() as usize,
        len
    );
    for opts in [DecodeOptions::strict(), DecodeOptions::permissive()] {
        let back = TensorDescriptor::decode_with(&bytes, &opts)
            .unwrap_or_else(|e| panic!("{name}: decode: {e}"));
        assert_eq!(&back, d, "{name}: decoded model differs");
        assert_eq!(back.encode().unwrap(), bytes, "{name}: re-encoding differs");
    }
    // Followed by other data, the descriptor still frames itself.
    let mut stream = bytes.clone();
    stream.extend_from_slice(&[0xAA; 5]);
    let (back, used) = TensorDescriptor::decode_prefix(&stream, &DecodeOptions::strict()).unwrap();
    assert_eq!((&back, used), (d, expected.len()), "{name}: decode_prefix");
}

#[test]
fn empty_vector_shape_0() {
    let d = TensorDescriptor::dense(ElementType::Float32, &[0]).unwrap();
    assert_eq!(element_count(&d.shape).unwrap(), 0);
    assert_eq!(d.buffers, vec![BufferHandle::cpu(0)]);
    // 20 (header) + 8·1 (shape) + 8 (byte_offset) + 0 (row-major) + 1 + 16·1 = 53.
    #[rustfmt::skip]
    let expected: [u8; 53] = [
        0x48, 0x52, 0x52, 0x59,                         //  0 magic "HRRY"
        0x01, 0x00,                                     //  4 version 1.0
        0x35, 0x00, 0x00, 0x00,                         //  6 descriptor_length = 53
        0x00, 0x00, 0x00, 0x00,                         // 10 flags = 0
        0x03,                                           // 14 type_tag = float32
        0x01,                                           // 15 layout_tag = row-major
        0x01, 0x00, 0x00, 0x00,                         // 16 rank = 1
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // 20 shape[0] = 0
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // 28 byte_offset = 0
        0x01,                                           // 36 buffer_count = 1
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // 37 byte_size = 0
        0x40, 0x00, 0x00, 0x00,                         // 45 alignment = 64
        0x00, 0x00, 0x00, 0x00,                         // 49 CPU, sync 0, STANDARD, reserved
    ];
    round_trip("float32 [0]", &d, &expected);
}

#[test]
fn empty_vector_shape_3_0_5() {
    let d = TensorDescriptor::dense(ElementType::Float32, &[3, 0, 5]).unwrap();
    assert_eq!(element_count(&d.shape).unwrap(), 0);
    assert_eq!(d.buffers[0].byte_size, 0);
    // 20 + 8·3 + 8 + 0 + 1 + 16 = 69 = 0x45.
    #[rustfmt::skip]
    let expected: [u8; 69] = [
        0x48, 0x52, 0x52, 0x59,                         //  0 magic
        0x01, 0x00,                                     //  4 version 1.0
        0x45, 0x00, 0x00, 0x00,                         //  6 descriptor_length = 69
        0x00, 0x00, 0x00, 0x00,                         // 10 flags = 0
        0x03, 0x01,                                     // 14 float32, row-major
        0x03, 0x00, 0x00, 0x00,                         // 16 rank = 3
        0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // 20 shape[0] = 3
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // 28 shape[1] = 0
        0x05, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // 36 shape[2] = 5
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // 44 byte_offset = 0
        0x01,                                           // 52 buffer_count = 1
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // 53 byte_size = 0
        0x40, 0x00, 0x00, 0x00,                         // 61 alignment = 64
        0x00, 0x00, 0x00, 0x00,                         // 65 CPU, sync 0, STANDARD, reserved
    ];
    round_trip("float32 [3,0,5]", &d, &expected);
}

#[test]
fn empty_vector_csr_4x5_nnz_0() {
    let d = TensorDescriptor {
        version_minor: 0,
        element_type: ElementType::Float32,
        shape: vec![4, 5],
        byte_offset: 0,
        layout: Layout::Csr { nnz: 0 },
        // values: 0·4, col_indices: 0·8, row_ptr: (shape[0] + 1)·8 = 40.
        buffers: vec![
            BufferHandle::cpu(0),
            BufferHandle::cpu(0),
            BufferHandle::cpu(40),
        ],
        quantization: None,
        shard: None,
        statistics: None,
        extension_type: None,
        composite_member: None,
    };
    // 20 + 8·2 + 8 + 16 (nnz, _reserved[8]) + 1 + 16·3 = 109 = 0x6D.
    #[rustfmt::skip]
    let expected: [u8; 109] = [
        0x48, 0x52, 0x52, 0x59,                         //   0 magic
        0x01, 0x00,                                     //   4 version 1.0
        0x6D, 0x00, 0x00, 0x00,                         //   6 descriptor_length = 109
        0x00, 0x00, 0x00, 0x00,                         //  10 flags = 0
        0x03, 0x07,                                     //  14 float32, CSR
        0x02, 0x00, 0x00, 0x00,                         //  16 rank = 2
        0x04, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, //  20 shape[0] = 4
        0x05, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, //  28 shape[1] = 5
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, //  36 byte_offset = 0
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, //  44 nnz = 0
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, //  52 _reserved
        0x03,                                           //  60 buffer_count = 3
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, //  61 values: byte_size 0
        0x40, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, //  69 alignment 64, CPU ...
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, //  77 col_indices: byte_size 0
        0x40, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, //  85 alignment 64, CPU ...
        0x28, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, //  93 row_ptr: byte_size 40
        0x40, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // 101 alignment 64, CPU ...
    ];
    round_trip("CSR float32 4x5 nnz 0", &d, &expected);

    // row_ptr still needs shape[0] + 1 entries when nnz = 0.
    let mut small = d.clone();
    small.buffers[2].byte_size = 32;
    let e = small.encode().unwrap_err();
    assert_eq!((e.rule, e.offset), (Rule::BufferTooSmall, 93));
}

/// Empty tensors keep every other rule: the data buffer may be empty with any
/// power-of-two alignment, but `byte_offset` must still fit in it.
#[test]
fn empty_tensors_keep_the_other_rules() {
    let mut d = TensorDescriptor::dense(ElementType::Float32, &[3, 0, 5]).unwrap();
    for a in [1, 2, 8, 64, 4096] {
        d.buffers[0].alignment = a;
        let b = d.encode().unwrap();
        assert_eq!(TensorDescriptor::decode(&b).unwrap(), d, "alignment {a}");
    }
    d.buffers[0].alignment = 3;
    assert_eq!(d.encode().unwrap_err().rule, Rule::Alignment);
    d.buffers[0].alignment = 64;
    d.byte_offset = 1;
    let e = d.encode().unwrap_err();
    assert_eq!((e.rule, e.offset), (Rule::ByteOffset, 44));

    // A 0 dimension next to a dynamic one: the count is undefined, sizes are not checked.
    let mut dynamic = TensorDescriptor::dense(ElementType::Float32, &[0]).unwrap();
    dynamic.shape = vec![hurray_core::DYN, 0];
    assert!(element_count(&dynamic.shape).is_err());
    let b = dynamic.encode().unwrap();
    assert_eq!(TensorDescriptor::decode(&b).unwrap(), dynamic);

    // Sub-byte and 6-bit types: 0 elements take 0 bytes.
    for t in [
        ElementType::Bool,
        ElementType::Int4,
        ElementType::Float6E2m3,
    ] {
        let d = TensorDescriptor::dense(t, &[0, 7]).unwrap();
        assert_eq!(d.buffers[0].byte_size, 0, "{t}");
        assert_eq!(TensorDescriptor::decode(&d.encode().unwrap()).unwrap(), d);
    }
}
