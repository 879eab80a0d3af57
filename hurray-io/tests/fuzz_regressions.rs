//! Inputs found by the fuzz targets in `fuzz/` (docs/fuzzing.md), kept as ordinary
//! tests so `cargo test` checks them without the fuzzer. Each names its target and
//! what the input showed.

#[path = "stream_common/mod.rs"]
mod stream_common;

use hurray_core::{DecodeOptions, Layout, TensorDescriptor};
use hurray_io::file::{FileReader, FileWriterTo, SequentialReader, WriteOptions};
use hurray_io::{FormatRule, Item, Limits, StreamDecoder};

/// `composite` target: a group head (f32 [1], 4 members) followed by a CSR member
/// (f32 [3, 3], nnz 2) whose `values` buffer declares `u64::MAX` bytes: legal for a
/// descriptor (`byte_size` may exceed the minimum, descriptor.md), so the buffer
/// sizes of one descriptor can sum past `u64::MAX`. The target summed them
/// unchecked and overflowed; readers must not.
const HUGE_CSR_MEMBER: &[u8] = &[
    0x48, 0x52, 0x52, 0x59, 0x01, 0x00, 0x2d, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0x0b,
    0x01, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x03, 0x00, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00, 0x00, 0x48, 0x52, 0x52,
    0x59, 0x01, 0x00, 0x6d, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0x07, 0x02, 0x00, 0x00,
    0x00, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
    0xff, 0xff, 0x40, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x40, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x20, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x40, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
];

#[test]
fn composite_member_declaring_u64_max_bytes_is_refused_by_the_stream_limit() {
    let opts = DecodeOptions::strict();
    let (head, used) = TensorDescriptor::decode_prefix(HUGE_CSR_MEMBER, &opts).unwrap();
    assert_eq!(used, 45);
    assert!(matches!(head.layout, Layout::CompositeHead(h) if h.member_count == 4));
    let member = TensorDescriptor::decode(&HUGE_CSR_MEMBER[used..]).unwrap();
    assert_eq!(member.layout, Layout::Csr { nnz: 2 });
    let sizes: Vec<u64> = member.buffers.iter().map(|b| b.byte_size).collect();
    assert_eq!(sizes, [u64::MAX, 16, 32]);
    assert_eq!(
        sizes.iter().try_fold(0u64, |a, &b| a.checked_add(b)),
        None,
        "the sizes overflow a u64 sum"
    );

    // As a stream: the member's buffer is refused against max_buffer_bytes before
    // anything is allocated, naming the buffer's handle (byte 61 of the member's
    // descriptor, which starts at 45).
    let mut dec = StreamDecoder::new(Limits::default());
    assert_eq!(dec.feed(HUGE_CSR_MEMBER), HUGE_CSR_MEMBER.len());
    let e = dec.next_item().expect("an error").unwrap_err();
    assert_eq!(e.rule(), Some(FormatRule::Limit), "{e}");
    assert!(
        e.to_string().starts_with("Limit at byte 106: buffer 0 "),
        "{e}"
    );
    assert!(dec.next_item().is_none());
}

/// A reference-compatible file (composite heads padded to `data_buffer_alignment`,
/// A5) holding `stream_common::nested()`, and the end of its first head's
/// descriptor rounded up to 8: where the padding after that head begins.
fn padded_heads() -> (Vec<u8>, usize) {
    let opts = WriteOptions {
        reference_compat: true,
        ..WriteOptions::default()
    };
    let mut w = FileWriterTo::new(Vec::new(), opts).unwrap();
    w.write_composite("n", &stream_common::nested()).unwrap();
    let bytes = w.finish().unwrap();
    let r = FileReader::from_bytes(&bytes).unwrap();
    let head = r.catalog().entry(0).unwrap();
    assert_eq!(head.name, "n");
    let end = (head.descriptor_offset + u64::from(head.descriptor_length)).next_multiple_of(8);
    let next = r.catalog().entry(1).unwrap().descriptor_offset;
    assert!(next >= end + 8, "the head is padded ({end}..{next})");
    (bytes, end as usize)
}

/// `file` target: non-zero bytes in the padding after a composite head. Padding is
/// "zero padding" but no reader rule checks it; the random-access reader relies on
/// index offsets (A1, A5) and reads the file, the sequential reader must look at
/// the padding to find the next descriptor and refuses it, naming a rule.
#[test]
fn non_zero_head_padding_reads_at_random_but_not_sequentially() {
    let (clean, pad) = padded_heads();
    let mut dirty = clean.clone();
    dirty[pad..pad + 8].fill(0xFF);
    let a = FileReader::from_bytes(&clean).unwrap().items().unwrap();
    let b = FileReader::from_bytes(&dirty).unwrap().items().unwrap();
    assert!(a == b, "the padding bytes change nothing at random access");
    assert!(matches!(&b[0].1, Item::Composite(c) if c.members.len() == 2));
    SequentialReader::new(&clean[..])
        .and_then(|r| r.read_all())
        .unwrap();
    let e = SequentialReader::new(&dirty[..])
        .and_then(|r| r.read_all())
        .unwrap_err();
    assert!(e.rule().is_some(), "a format error naming its rule: {e}");
}

/// `file` target: a `tensor_count_hint` larger than the tensors present. The hint is
/// advisory for the random-access reader (which uses the index); the sequential
/// reader, which has only the hint to know where the tensor region ends, refuses
/// the file, naming a rule.
#[test]
fn wrong_tensor_count_hint_reads_at_random_but_not_sequentially() {
    let mut b = FileWriterTo::new(Vec::new(), WriteOptions::default())
        .unwrap()
        .finish()
        .unwrap();
    assert_eq!(b.len(), 112, "header, empty index, trailer");
    b[28..36].copy_from_slice(&5u64.to_le_bytes());
    let r = FileReader::from_bytes(&b).unwrap();
    assert_eq!((r.len(), r.info().header.tensor_count_hint), (0, 5));
    let e = SequentialReader::new(&b[..])
        .and_then(|r| r.read_all())
        .unwrap_err();
    assert!(e.rule().is_some(), "a format error naming its rule: {e}");
}
