//! One rejection test per MUST-reject rule of `file-format.md` §14 (and the limits),
//! each asserting the specific [`FormatRule`] and absolute byte offset the readers
//! report. Files are forged from a valid one: fields are patched in place, and the
//! index CRC is recomputed where the rule under test is not the CRC itself.

#[path = "stream_common/mod.rs"]
mod stream_common;

use hurray_core::{ElementType, Layout, Rule, TensorDescriptor};
use hurray_io::file::index::{encode_index, parse_index, IndexEntry};
use hurray_io::file::kv::encode_kv;
use hurray_io::file::{
    flags, FileReader, FileWriterTo, KvEntry, KvValue, ReadOptions, SequentialReader, WriteOptions,
};
use hurray_io::{Error, FormatRule, Item, Limits, Tensor};
use stream_common::*;

// ---------------------------------------------------------------- helpers

fn dense(t: ElementType, shape: &[u64], seed: u64) -> Tensor {
    filled(TensorDescriptor::dense(t, shape).unwrap(), seed)
}

/// `a` (f32 [2,2]: descriptor 64..125, data 4096..4112), `b` (i8 [3]: descriptor
/// 4112..4165, data 8192..8195), KV {k: "v", n: 1} at 8200 (added first, so the KV flag
/// is set), then the index and trailer.
fn base() -> Vec<u8> {
    let mut w = FileWriterTo::new(Vec::new(), WriteOptions::default()).unwrap();
    w.add_kv("k", KvValue::String("v".into())).unwrap();
    w.add_kv("n", KvValue::Int64(1)).unwrap();
    w.write_tensor("a", &dense(ElementType::Float32, &[2, 2], 1))
        .unwrap();
    w.write_tensor("b", &dense(ElementType::Int8, &[3], 2))
        .unwrap();
    w.finish().unwrap()
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap())
}
fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
}
fn put_u64(b: &mut [u8], at: usize, v: u64) {
    b[at..at + 8].copy_from_slice(&v.to_le_bytes());
}
fn put_u32(b: &mut [u8], at: usize, v: u32) {
    b[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

/// Where things are in a (valid) file.
struct Loc {
    /// Trailer start.
    t: usize,
    index_offset: usize,
    index_length: usize,
    kv_offset: usize,
    /// (entry start, entry) in index order.
    entries: Vec<(usize, IndexEntry)>,
}

impl Loc {
    fn of(b: &[u8]) -> Loc {
        let t = b.len() - 40;
        let index_offset = u64_at(b, t) as usize;
        let index_length = u64_at(b, t + 8) as usize;
        let flags = u32_at(b, 12);
        let list = parse_index(
            &b[index_offset..index_offset + index_length],
            index_offset as u64,
            flags & flags::SORTED_INDEX != 0,
            &Limits::default(),
        )
        .unwrap();
        let mut at = index_offset + 8;
        let mut entries = Vec::new();
        for e in list {
            let n = e.encoded_len() as usize;
            entries.push((at, e));
            at += n;
        }
        Loc {
            t,
            index_offset,
            index_length,
            kv_offset: u64_at(b, t + 16) as usize,
            entries,
        }
    }
    /// Absolute offset of field `f` (0 descriptor_offset, 1 descriptor_length,
    /// 2 data_offset, 3 data_length, 4 flags) of entry `i`.
    fn field(&self, i: usize, f: usize) -> usize {
        let (at, e) = &self.entries[i];
        at + 2 + e.name.len() + [0, 8, 12, 20, 28][f]
    }
}

/// Recomputes the index CRC from the trailer's index fields (when the flag is set).
fn fix_crc(b: &mut [u8]) {
    let t = b.len() - 40;
    if u32_at(b, 12) & flags::HAS_INDEX_CRC32C == 0 {
        return;
    }
    let (o, l) = (u64_at(b, t) as usize, u64_at(b, t + 8) as usize);
    let c = crc32c::crc32c(&b[o..o + l]);
    put_u32(b, t + 28, c);
}

/// Replaces everything from `region_end` on with the given KV bytes (if any), the
/// given index bytes and a fresh trailer (CRC per the header flag).
fn reassemble(b: &[u8], region_end: usize, kv: Option<&[u8]>, index: &[u8]) -> Vec<u8> {
    let mut out = b[..region_end].to_vec();
    let (mut kv_offset, mut kv_length) = (0u64, 0u32);
    if let Some(kv) = kv {
        kv_offset = out.len() as u64;
        kv_length = kv.len() as u32;
        out.extend_from_slice(kv);
        while out.len() % 8 != 0 {
            out.push(0);
        }
    }
    let index_offset = out.len() as u64;
    out.extend_from_slice(index);
    let mut tr = vec![0u8; 40];
    put_u64(&mut tr, 0, index_offset);
    put_u64(&mut tr, 8, index.len() as u64);
    put_u64(&mut tr, 16, kv_offset);
    put_u32(&mut tr, 24, kv_length);
    tr[36..40].copy_from_slice(b"HRRY");
    out.extend_from_slice(&tr);
    fix_crc(&mut out);
    out
}

/// Raw index entry bytes (any name bytes, any flags).
fn raw_entry(name: &[u8], e: &IndexEntry, flags: u32) -> Vec<u8> {
    let mut v = (name.len() as u16).to_le_bytes().to_vec();
    v.extend_from_slice(name);
    v.extend_from_slice(&e.descriptor_offset.to_le_bytes());
    v.extend_from_slice(&e.descriptor_length.to_le_bytes());
    v.extend_from_slice(&e.data_offset.to_le_bytes());
    v.extend_from_slice(&e.data_length.to_le_bytes());
    v.extend_from_slice(&flags.to_le_bytes());
    v
}

fn raw_index(entries: &[Vec<u8>]) -> Vec<u8> {
    let mut v = (entries.len() as u64).to_le_bytes().to_vec();
    entries.iter().for_each(|e| v.extend_from_slice(e));
    v
}

/// Raw KV section from raw entries.
fn raw_kv(entries: &[Vec<u8>]) -> Vec<u8> {
    let mut v = (entries.len() as u32).to_le_bytes().to_vec();
    entries.iter().for_each(|e| v.extend_from_slice(e));
    v
}

fn kv_entry(key: &[u8], tag: u8, payload: &[u8]) -> Vec<u8> {
    let mut v = (key.len() as u16).to_le_bytes().to_vec();
    v.extend_from_slice(key);
    v.push(tag);
    v.extend_from_slice(payload);
    v
}

fn open_err(b: &[u8]) -> Error {
    FileReader::from_bytes(b).expect_err("the file must be rejected")
}

fn open_err_with(b: &[u8], limits: Limits) -> Error {
    let opts = ReadOptions {
        limits,
        ..ReadOptions::default()
    };
    FileReader::from_bytes_with(b, &opts).expect_err("the file must be rejected")
}

fn rule_at(e: &Error) -> (FormatRule, u64) {
    match e {
        Error::Format { rule, offset, .. } => (*rule, *offset),
        other => panic!("expected a format error, got {other}"),
    }
}

/// Rejected with `rule` at `offset` by the random-access reader.
#[track_caller]
fn rejects(b: &[u8], rule: FormatRule, offset: usize) {
    assert_eq!(rule_at(&open_err(b)), (rule, offset as u64));
}

/// Also rejected, with the same rule, by the sequential reader.
#[track_caller]
fn rejects_sequentially(b: &[u8], rule: FormatRule) -> u64 {
    let e = SequentialReader::new(b)
        .and_then(|r| r.read_all())
        .expect_err("the sequential reader must reject too");
    let (r, at) = rule_at(&e);
    assert_eq!(r, rule, "{e}");
    at
}

/// The region end (KV offset) of [`base`].
const REGION_END: usize = 8200;

fn base_entries() -> Vec<IndexEntry> {
    Loc::of(&base())
        .entries
        .into_iter()
        .map(|(_, e)| e)
        .collect()
}

fn base_kv() -> Vec<u8> {
    encode_kv(&[
        KvEntry {
            key: "k".into(),
            value: KvValue::String("v".into()),
        },
        KvEntry {
            key: "n".into(),
            value: KvValue::Int64(1),
        },
    ])
    .unwrap()
}

// ---------------------------------------------------------------- sanity

#[test]
fn the_base_file_and_its_reassembly_are_valid() {
    let b = base();
    let l = Loc::of(&b);
    assert_eq!(l.kv_offset, REGION_END);
    assert_eq!(l.entries[0].1.descriptor_offset, 64);
    assert_eq!(l.entries[1].1.descriptor_offset, 4112);
    let again = reassemble(
        &b,
        REGION_END,
        Some(&base_kv()),
        &encode_index(&base_entries()).unwrap(),
    );
    assert_eq!(again, b);
    FileReader::from_bytes(&b).unwrap();
    SequentialReader::new(&b[..]).unwrap().read_all().unwrap();
}

// ------------------------------------------------ §14.1 explicit rejections

#[test]
fn r01_bad_file_magic() {
    let mut b = base();
    b[7] = b'F';
    rejects(&b, FormatRule::Magic, 0);
    rejects_sequentially(&b, FormatRule::Magic);
    // A stream is not a file either.
    let mut s = base();
    s[4..8].copy_from_slice(&[1, 0, 61, 0]);
    rejects(&s, FormatRule::Magic, 0);
}

#[test]
fn r02_r03_container_major_above_or_below() {
    for major in [2u8, 0, 0xFF] {
        let mut b = base();
        b[8] = major;
        rejects(&b, FormatRule::ContainerVersion, 8);
        rejects_sequentially(&b, FormatRule::ContainerVersion);
    }
    // A newer minor of major 1 is read.
    let mut b = base();
    b[9] = 3;
    FileReader::from_bytes(&b).unwrap();
}

#[test]
fn r04_reserved_file_flags() {
    for bit in [3u32, 7, 31] {
        let mut b = base();
        let f = u32_at(&b, 12) | (1 << bit);
        put_u32(&mut b, 12, f);
        rejects(&b, FormatRule::ReservedFlags, 12);
        rejects_sequentially(&b, FormatRule::ReservedFlags);
    }
}

#[test]
fn r05_bad_trailer_magic() {
    let mut b = base();
    let n = b.len();
    b[n - 1] = b'Z';
    rejects(&b, FormatRule::Magic, n - 4);
    rejects_sequentially(&b, FormatRule::Magic);
}

#[test]
fn r06_index_running_into_the_trailer() {
    let b = base();
    let l = Loc::of(&b);
    let mut x = b.clone();
    put_u64(&mut x, l.t + 8, l.index_length as u64 + 1);
    rejects(&x, FormatRule::OutOfBounds, l.t);
    // The sum overflows u64.
    let mut x = b.clone();
    put_u64(&mut x, l.t, u64::MAX - 7);
    rejects(&x, FormatRule::OutOfBounds, l.t);
    let mut x = b.clone();
    put_u64(&mut x, l.t + 8, u64::MAX);
    rejects_with_limit_or_bounds(&x, l.t);
    rejects_sequentially(&x, FormatRule::Limit);
}

/// A huge `index_length` is first refused by the index-size limit.
fn rejects_with_limit_or_bounds(b: &[u8], t: usize) {
    assert_eq!(rule_at(&open_err(b)), (FormatRule::Limit, (t + 8) as u64));
    let unlimited = Limits {
        max_index_bytes: u64::MAX,
        ..Limits::default()
    };
    assert_eq!(
        rule_at(&open_err_with(b, unlimited)),
        (FormatRule::OutOfBounds, t as u64)
    );
}

#[test]
fn r07_crc_mismatch() {
    let b = base();
    let l = Loc::of(&b);
    let mut x = b.clone();
    x[l.index_offset + 10] ^= 1; // a name byte
    rejects(&x, FormatRule::CrcMismatch, l.t + 28);
    rejects_sequentially(&x, FormatRule::CrcMismatch);
    let mut x = b.clone();
    put_u32(&mut x, l.t + 28, u32_at(&b, l.t + 28) ^ 0x8000_0000);
    rejects(&x, FormatRule::CrcMismatch, l.t + 28);
    // With the flag set, a stored 0 is a CRC like any other (A4).
    let mut x = b.clone();
    put_u32(&mut x, l.t + 28, 0);
    rejects(&x, FormatRule::CrcMismatch, l.t + 28);
}

#[test]
fn r08_crc_present_without_the_flag() {
    let mut b = base();
    let f = u32_at(&b, 12) & !flags::HAS_INDEX_CRC32C;
    put_u32(&mut b, 12, f);
    let t = b.len() - 40;
    rejects(&b, FormatRule::CrcWithoutFlag, t + 28);
    rejects_sequentially(&b, FormatRule::CrcWithoutFlag);
    // The same file with the CRC field zeroed is valid, unverified.
    put_u32(&mut b, t + 28, 0);
    let r = FileReader::from_bytes(&b).unwrap();
    assert_eq!(r.info().crc, hurray_io::file::CrcStatus::Absent);
}

fn with_kv(kv: &[u8]) -> Vec<u8> {
    reassemble(
        &base(),
        REGION_END,
        Some(kv),
        &encode_index(&base_entries()).unwrap(),
    )
}

#[test]
fn r09_duplicate_kv_key() {
    let e1 = kv_entry(b"key", 0x02, &5i64.to_le_bytes());
    let e2 = kv_entry(b"key", 0x05, &[1]);
    let b = with_kv(&raw_kv(&[e1.clone(), e2]));
    rejects(&b, FormatRule::DuplicateKey, REGION_END + 4 + e1.len());
    rejects_sequentially(&b, FormatRule::DuplicateKey);
    // Keys differing in case are distinct.
    let e2 = kv_entry(b"KEY", 0x05, &[1]);
    FileReader::from_bytes(&with_kv(&raw_kv(&[e1, e2]))).unwrap();
}

#[test]
fn r10_kv_bool_other_than_0_or_1() {
    for v in [2u8, 0xFF] {
        let b = with_kv(&raw_kv(&[kv_entry(b"flag", 0x05, &[v])]));
        rejects(&b, FormatRule::KvBool, REGION_END + 4 + 2 + 4 + 1);
        rejects_sequentially(&b, FormatRule::KvBool);
    }
    // Inside an array too.
    let mut payload = vec![0x05];
    payload.extend_from_slice(&3u32.to_le_bytes());
    payload.extend_from_slice(&[1, 0, 7]);
    let b = with_kv(&raw_kv(&[kv_entry(b"flags", 0x07, &payload)]));
    rejects(&b, FormatRule::KvBool, REGION_END + 4 + 2 + 5 + 1 + 5 + 2);
}

#[test]
fn r11_reserved_private_and_invalid_kv_tags() {
    for tag in [0x00u8, 0x08, 0x42, 0xEF, 0xF0, 0xFE, 0xFF] {
        let b = with_kv(&raw_kv(&[kv_entry(b"x", tag, &[0; 8])]));
        rejects(&b, FormatRule::KvValueTag, REGION_END + 4 + 2 + 1);
        rejects_sequentially(&b, FormatRule::KvValueTag);
    }
}

#[test]
fn r12_index_descriptor_length_mismatch() {
    let b = base();
    let l = Loc::of(&b);
    for delta in [1i64, -1, 8] {
        let mut x = b.clone();
        let f = l.field(1, 1);
        put_u32(&mut x, f, (53 + delta) as u32);
        fix_crc(&mut x);
        rejects(&x, FormatRule::IndexEntry, f);
        rejects_sequentially(&x, FormatRule::IndexEntry);
    }
}

/// A file holding `partition()` under "p" (head at 64, members after), then
/// `extra` as a top-level tensor named "x" (if any).
fn partition_file(extra: Option<&Tensor>) -> Vec<u8> {
    let mut w = FileWriterTo::new(Vec::new(), WriteOptions::default()).unwrap();
    w.write_composite("p", &partition()).unwrap();
    if let Some(t) = extra {
        w.write_tensor("x", t).unwrap();
    }
    w.finish().unwrap()
}

/// Sets the head's `member_count` (descriptor bytes are not covered by the CRC).
fn set_member_count(b: &mut [u8], head_at: usize, n: u32) {
    // Head layout fields follow the 20-byte header, shape (8·rank), byte_offset (8):
    // composition_rule, combine_op, 2 reserved, then member_count.
    let rank = u32_at(b, head_at + 16) as usize;
    let at = head_at + 20 + 8 * rank + 8 + 4;
    put_u32(b, at, n);
}

#[test]
fn r13_torn_composite() {
    // Drop the last member's index entry: the head has fewer than member_count
    // tensors after it.
    let b = partition_file(None);
    let l = Loc::of(&b);
    let entries: Vec<IndexEntry> = l.entries.iter().take(2).map(|(_, e)| e.clone()).collect();
    let region_end = l.index_offset;
    let x = reassemble(&b, region_end, None, &encode_index(&entries).unwrap());
    rejects(&x, FormatRule::TornComposite, 64);
    // Raise member_count past the end of the file's tensors.
    let mut x = b.clone();
    set_member_count(&mut x, 64, 3);
    rejects(&x, FormatRule::TornComposite, 64);
    rejects_sequentially(&x, FormatRule::TornComposite);
}

#[test]
fn r14_composite_member_and_close_time_rules() {
    // A third "member" without a shard section.
    let plain = dense(ElementType::Float32, &[8, 4], 9);
    let mut b = partition_file(Some(&plain));
    set_member_count(&mut b, 64, 3);
    let l = Loc::of(&b);
    let x_at = l.entries[3].1.descriptor_offset as usize;
    rejects(&b, FormatRule::CompositeMember, x_at);
    assert_eq!(
        rejects_sequentially(&b, FormatRule::CompositeMember),
        x_at as u64
    );
    // Only one of the two halves counted: the partition leaves a gap (close time, at
    // the head).
    let mut b = partition_file(None);
    set_member_count(&mut b, 64, 1);
    rejects(&b, FormatRule::CompositeMember, 64);
    rejects_sequentially(&b, FormatRule::CompositeMember);
    // An overlay head with member_count 0.
    let mut w = FileWriterTo::new(Vec::new(), WriteOptions::default()).unwrap();
    w.write_composite("o", &overlay()).unwrap();
    let mut b = w.finish().unwrap();
    set_member_count(&mut b, 64, 0);
    rejects(&b, FormatRule::CompositeMember, 64);
}

#[test]
fn composite_member_count_is_limited_at_the_head() {
    // Both readers refuse a head declaring more members than the limit, at the head,
    // before looking at its members.
    let b = partition_file(None);
    let limits = Limits {
        max_composite_members: 1,
        ..Limits::default()
    };
    assert_eq!(rule_at(&open_err_with(&b, limits)), (FormatRule::Limit, 64));
    let opts = ReadOptions {
        limits,
        ..ReadOptions::default()
    };
    let e = SequentialReader::with_options(&b[..], &opts)
        .and_then(|r| r.read_all())
        .unwrap_err();
    assert_eq!(rule_at(&e), (FormatRule::Limit, 64));
    // The default limit: one member too many is a limit error, not a torn composite.
    let limit = Limits::default().max_composite_members;
    let mut x = b.clone();
    set_member_count(&mut x, 64, limit + 1);
    rejects(&x, FormatRule::Limit, 64);
    assert_eq!(rejects_sequentially(&x, FormatRule::Limit), 64);
    // The writers refuse such a head before anything is written.
    let mut c = partition();
    let mut d = c.head.descriptor().clone();
    if let Layout::CompositeHead(h) = &mut d.layout {
        h.member_count = limit + 1;
    }
    c.head = Tensor::new(d, Vec::new()).unwrap();
    let mut w = FileWriterTo::new(Vec::new(), WriteOptions::default()).unwrap();
    let e = w.write_composite("p", &c).unwrap_err();
    assert_eq!(e.rule(), Some(FormatRule::Limit));
    assert_eq!(w.offset(), 0, "nothing written");
}

#[test]
fn r15_composites_nested_deeper_than_8() {
    let mut w = FileWriterTo::new(
        Vec::new(),
        WriteOptions {
            max_composite_depth: 9,
            ..WriteOptions::default()
        },
    )
    .unwrap();
    w.write_composite("deep", &deep_group(9)).unwrap();
    let b = w.finish().unwrap();
    let l = Loc::of(&b);
    // Entries are in pre-order: the ninth head is entry 8.
    let ninth = l.entries[8].1.descriptor_offset as usize;
    rejects(&b, FormatRule::CompositeDepth, ninth);
    rejects_sequentially(&b, FormatRule::CompositeDepth);
    // Eight levels are fine; a configured limit of 9 reads nine.
    let opts = ReadOptions {
        limits: Limits {
            max_composite_depth: 9,
            ..Limits::default()
        },
        ..ReadOptions::default()
    };
    let r = FileReader::from_bytes_with(&b, &opts).unwrap();
    assert!(matches!(r.item("deep"), Ok(Some(Item::Composite(_)))));
}

#[test]
fn r16_descriptor_level_rejections() {
    let b = base();
    // Reserved descriptor flag bit (descriptor bytes 10–13) of `b` at 4112.
    let mut x = b.clone();
    x[4112 + 13] = 0x80;
    match open_err(&x) {
        Error::Descriptor { at, source } => {
            assert_eq!(
                (at, source.rule, source.offset),
                (4112, Rule::ReservedFlags, 10)
            )
        }
        e => panic!("{e}"),
    }
    // Bad descriptor magic where the index points.
    let mut x = b.clone();
    x[64] = b'X';
    match open_err(&x) {
        Error::Descriptor { at, source } => assert_eq!((at, source.rule), (64, Rule::Magic)),
        e => panic!("{e}"),
    }
    // Unsupported descriptor major.
    let mut x = b.clone();
    x[64 + 4] = 2;
    match open_err(&x) {
        Error::Descriptor { at, source } => {
            assert_eq!((at, source.rule), (64, Rule::VersionMajor))
        }
        e => panic!("{e}"),
    }
    // A reserved buffer-handle byte (the last byte of `a`'s only handle).
    let mut x = b.clone();
    x[64 + 61 - 1] = 1;
    match open_err(&x) {
        Error::Descriptor { at, source } => {
            assert_eq!((at, source.rule), (64, Rule::ReservedNonZero))
        }
        e => panic!("{e}"),
    }
}

// ------------------------------------------------ §14.2 MUST-level constraints

#[test]
fn r17_data_buffer_alignment() {
    for a in [0u32, 1000, 2048, 4095, 6144, 4 << 20] {
        let mut b = base();
        put_u32(&mut b, 16, a);
        rejects(&b, FormatRule::DataAlignment, 16);
        rejects_sequentially(&b, FormatRule::DataAlignment);
    }
}

#[test]
fn r18_first_descriptor_offset() {
    for v in [0u64, 60, 65, 68] {
        let mut b = base();
        put_u64(&mut b, 20, v);
        rejects(&b, FormatRule::Placement, 20);
        rejects_sequentially(&b, FormatRule::Placement);
    }
    // 72 is legal but the first descriptor is then not there.
    let mut b = base();
    put_u64(&mut b, 20, 72);
    let l = Loc::of(&b);
    rejects(&b, FormatRule::Placement, l.field(0, 0));
}

#[test]
fn r19_reserved_bytes() {
    for at in [10usize, 11, 36, 50, 63] {
        let mut b = base();
        b[at] = 1;
        rejects(&b, FormatRule::ReservedNonZero, at);
        rejects_sequentially(&b, FormatRule::ReservedNonZero);
    }
    let mut b = base();
    let t = b.len() - 40;
    b[t + 34] = 1;
    rejects(&b, FormatRule::ReservedNonZero, t + 34);
    // Index entry flags.
    let b = base();
    let l = Loc::of(&b);
    let mut x = b.clone();
    put_u32(&mut x, l.field(1, 4), 1);
    fix_crc(&mut x);
    rejects(&x, FormatRule::ReservedNonZero, l.field(1, 4));
    rejects_sequentially(&x, FormatRule::ReservedNonZero);
}

#[test]
fn r20_index_count_and_section_lengths() {
    let b = base();
    let l = Loc::of(&b);
    let entries = base_entries();
    let mut index = encode_index(&entries).unwrap();
    // Count larger than the entries present.
    put_u64(&mut index, 0, 3);
    let x = reassemble(&b, REGION_END, Some(&base_kv()), &index);
    rejects(&x, FormatRule::SectionLength, l.index_offset);
    // An absurd count is refused before any allocation.
    put_u64(&mut index, 0, u64::MAX);
    let x = reassemble(&b, REGION_END, Some(&base_kv()), &index);
    rejects(&x, FormatRule::Limit, l.index_offset);
    // Count smaller: trailing bytes after the last entry.
    put_u64(&mut index, 0, 1);
    let x = reassemble(&b, REGION_END, Some(&base_kv()), &index);
    rejects(&x, FormatRule::SectionLength, l.entries[1].0);
    // A truncated last entry.
    let full = encode_index(&entries).unwrap();
    let x = reassemble(&b, REGION_END, Some(&base_kv()), &full[..full.len() - 1]);
    rejects(&x, FormatRule::SectionLength, l.field(1, 4));
    // A name running past the section.
    let mut idx = full.clone();
    let name_len_at = l.entries[1].0 - l.index_offset;
    idx[name_len_at..name_len_at + 2].copy_from_slice(&500u16.to_le_bytes());
    let x = reassemble(&b, REGION_END, Some(&base_kv()), &idx);
    rejects(&x, FormatRule::SectionLength, l.entries[1].0 + 2);
    // KV: count too large, trailing bytes, a string length past the section.
    let mut kv = base_kv();
    put_u32(&mut kv, 0, 3);
    rejects(
        &with_kv(&kv),
        FormatRule::SectionLength,
        REGION_END + kv.len(),
    );
    let mut kv = base_kv();
    kv.extend_from_slice(&[0, 0, 0]);
    rejects(
        &with_kv(&kv),
        FormatRule::SectionLength,
        REGION_END + kv.len() - 3,
    );
    let kv = raw_kv(&[kv_entry(b"s", 0x01, &[100, 0, 0, 0, b'x'])]);
    rejects(
        &with_kv(&kv),
        FormatRule::SectionLength,
        REGION_END + 4 + 4 + 4,
    );
    // An array count that cannot fit is refused before allocating.
    let mut payload = vec![0x02];
    payload.extend_from_slice(&u32::MAX.to_le_bytes());
    let kv = raw_kv(&[kv_entry(b"a", 0x07, &payload)]);
    rejects(
        &with_kv(&kv),
        FormatRule::SectionLength,
        REGION_END + 4 + 4 + 1,
    );
    // A section shorter than its own count field.
    rejects_sequentially(
        &reassemble(&b, REGION_END, Some(&base_kv()), &[0; 4]),
        FormatRule::SectionLength,
    );
}

#[test]
fn r21_empty_name_or_key() {
    let b = base();
    let l = Loc::of(&b);
    let entries = base_entries();
    let idx = raw_index(&[
        raw_entry(b"", &entries[0], 0),
        raw_entry(b"b", &entries[1], 0),
    ]);
    let x = reassemble(&b, REGION_END, Some(&base_kv()), &idx);
    rejects(&x, FormatRule::Utf8, l.index_offset + 8);
    let b = with_kv(&raw_kv(&[kv_entry(b"", 0x05, &[1])]));
    rejects(&b, FormatRule::Utf8, REGION_END + 4);
}

#[test]
fn r22_bad_utf8() {
    let b = base();
    let l = Loc::of(&b);
    let entries = base_entries();
    let idx = raw_index(&[
        raw_entry(b"a", &entries[0], 0),
        raw_entry(b"b\xFF", &entries[1], 0),
    ]);
    let x = reassemble(&b, REGION_END, Some(&base_kv()), &idx);
    rejects(&x, FormatRule::Utf8, l.entries[1].0 + 2 + 1);
    rejects_sequentially(&x, FormatRule::Utf8);
    // KV key, KV string value, string inside an array.
    let b = with_kv(&raw_kv(&[kv_entry(b"\xC3", 0x05, &[1])]));
    rejects(&b, FormatRule::Utf8, REGION_END + 4 + 2);
    let b = with_kv(&raw_kv(&[kv_entry(b"s", 0x01, &[2, 0, 0, 0, b'o', 0x80])]));
    rejects(&b, FormatRule::Utf8, REGION_END + 4 + 2 + 1 + 1 + 4 + 1);
    let mut payload = vec![0x01, 1, 0, 0, 0];
    payload.extend_from_slice(&[1, 0, 0, 0, 0xFE]);
    let b = with_kv(&raw_kv(&[kv_entry(b"s", 0x07, &payload)]));
    rejects(&b, FormatRule::Utf8, REGION_END + 4 + 4 + 5 + 4);
}

#[test]
fn r23_duplicate_names() {
    let b = base();
    let l = Loc::of(&b);
    let mut entries = base_entries();
    entries[1].name = "a".into();
    let x = reassemble(
        &b,
        REGION_END,
        Some(&base_kv()),
        &encode_index(&entries).unwrap(),
    );
    rejects(&x, FormatRule::DuplicateName, l.entries[1].0);
    rejects_sequentially(&x, FormatRule::DuplicateName);
}

#[test]
fn r24_sorted_flag_on_an_unsorted_index() {
    // Entries in write order: "a", "b" is sorted; swap to "b", "a".
    let b = base();
    let l = Loc::of(&b);
    let mut entries = base_entries();
    entries.swap(0, 1);
    let mut x = reassemble(
        &b,
        REGION_END,
        Some(&base_kv()),
        &encode_index(&entries).unwrap(),
    );
    let f = u32_at(&x, 12) | flags::SORTED_INDEX;
    put_u32(&mut x, 12, f);
    rejects(&x, FormatRule::SortedIndex, l.index_offset + 8 + 35);
    // A prefix sorts first: "ab" then "a" is unsorted, "a" then "ab" sorted.
    entries[0].name = "ab".into();
    entries[1].name = "a".into();
    let mut x = reassemble(
        &b,
        REGION_END,
        Some(&base_kv()),
        &encode_index(&entries).unwrap(),
    );
    put_u32(&mut x, 12, f);
    rejects(&x, FormatRule::SortedIndex, l.index_offset + 8 + 36);
    rejects_sequentially(&x, FormatRule::SortedIndex);
}

#[test]
fn r25_kv_array_element_tags() {
    for tag in [0x07u8, 0x00, 0x08, 0xFF] {
        let mut payload = vec![tag];
        payload.extend_from_slice(&0u32.to_le_bytes());
        let b = with_kv(&raw_kv(&[kv_entry(b"a", 0x07, &payload)]));
        rejects(&b, FormatRule::KvValueTag, REGION_END + 4 + 4);
    }
    // An empty array with a valid element tag is fine (A14).
    let mut payload = vec![0x03];
    payload.extend_from_slice(&0u32.to_le_bytes());
    FileReader::from_bytes(&with_kv(&raw_kv(&[kv_entry(b"a", 0x07, &payload)]))).unwrap();
}

#[test]
fn r26_misaligned_offsets() {
    let b = base();
    let l = Loc::of(&b);
    // kv_offset, index_offset.
    let mut x = b.clone();
    put_u64(&mut x, l.t + 16, REGION_END as u64 + 4);
    rejects(&x, FormatRule::Placement, l.t + 16);
    let mut x = b.clone();
    put_u64(&mut x, l.t, l.index_offset as u64 - 4);
    rejects(&x, FormatRule::Placement, l.t);
    // A descriptor offset not a multiple of 8.
    let mut x = b.clone();
    put_u64(&mut x, l.field(1, 0), 4116);
    fix_crc(&mut x);
    rejects(&x, FormatRule::Placement, l.field(1, 0));
    // A data_offset not at align(end of descriptor, A).
    for v in [4097u64, 12288] {
        let mut x = b.clone();
        put_u64(&mut x, l.field(0, 2), v);
        fix_crc(&mut x);
        rejects(&x, FormatRule::Placement, l.field(0, 2));
    }
}

#[test]
fn r27_offsets_outside_the_file_and_overlaps() {
    let b = base();
    let l = Loc::of(&b);
    // Descriptor into the trailer.
    let mut x = b.clone();
    put_u64(&mut x, l.field(1, 0), (l.t as u64 - 16) & !7);
    fix_crc(&mut x);
    rejects(&x, FormatRule::OutOfBounds, l.field(1, 0));
    // Descriptor offset near u64::MAX (the sum overflows).
    let mut x = b.clone();
    put_u64(&mut x, l.field(1, 0), u64::MAX - 7);
    fix_crc(&mut x);
    rejects(&x, FormatRule::OutOfBounds, l.field(1, 0));
    // KV into the trailer, and KV overlapping the index.
    let mut x = b.clone();
    put_u32(&mut x, l.t + 24, (l.t - REGION_END + 1) as u32);
    rejects(&x, FormatRule::OutOfBounds, l.t + 16);
    let mut x = b.clone();
    put_u32(&mut x, l.t + 24, (l.index_offset - REGION_END + 8) as u32);
    rejects(&x, FormatRule::Overlap, l.t + 16);
    // A section in the header.
    let mut x = b.clone();
    put_u64(&mut x, l.t + 16, 8);
    rejects(&x, FormatRule::Placement, l.t + 16);
    // Two index entries naming the same descriptor.
    let mut x = b.clone();
    for f in 0..4 {
        let from = l.field(0, f);
        let to = l.field(1, f);
        let v = u64_at(&b, from);
        if f == 1 {
            put_u32(&mut x, to, v as u32);
        } else {
            put_u64(&mut x, to, v);
        }
    }
    fix_crc(&mut x);
    rejects(&x, FormatRule::Overlap, l.field(1, 0));
}

#[test]
fn r27_overlapping_tensor_data() {
    // `big`'s data (8192 bytes from 4096) holds a valid descriptor at its start; a
    // forged entry "inner" points there, its data at 8192 inside `big`'s data too.
    let inner = TensorDescriptor::dense(ElementType::Int8, &[3]).unwrap();
    let enc = inner.encode().unwrap();
    let mut data = vec![0u8; 8192];
    data[..enc.len()].copy_from_slice(&enc);
    let big = Tensor::new(
        TensorDescriptor::dense(ElementType::Uint8, &[8192]).unwrap(),
        vec![hurray_io::Buffer::copy_from(&data)],
    )
    .unwrap();
    let mut w = FileWriterTo::new(Vec::new(), WriteOptions::default()).unwrap();
    w.write_tensor("big", &big).unwrap();
    let b = w.finish().unwrap();
    let l = Loc::of(&b);
    let mut entries = base_entries_of(&b);
    entries.push(IndexEntry {
        name: "inner".into(),
        descriptor_offset: 4096,
        descriptor_length: enc.len() as u32,
        data_offset: 8192,
        data_length: 3,
    });
    let x = reassemble(&b, l.index_offset, None, &encode_index(&entries).unwrap());
    // Sorted by start, `inner`'s descriptor [4096, 4149) comes before `big`'s data
    // [4096, 12288), which is reported at big's data_offset field.
    rejects(&x, FormatRule::Overlap, l.field(0, 2));
}

fn base_entries_of(b: &[u8]) -> Vec<IndexEntry> {
    Loc::of(b).entries.into_iter().map(|(_, e)| e).collect()
}

#[test]
fn r28_data_length_against_the_buffer_table() {
    let b = base();
    let l = Loc::of(&b);
    for v in [15u64, 17, 0] {
        let mut x = b.clone();
        put_u64(&mut x, l.field(0, 3), v);
        fix_crc(&mut x);
        rejects(&x, FormatRule::IndexEntry, l.field(0, 3));
        rejects_sequentially(&x, FormatRule::IndexEntry);
    }
    // A head with data_length ≠ 0.
    let b = partition_file(None);
    let l = Loc::of(&b);
    let mut x = b.clone();
    put_u64(&mut x, l.field(0, 3), 8);
    fix_crc(&mut x);
    rejects(&x, FormatRule::IndexEntry, l.field(0, 3));
}

#[test]
fn r29_kv_flag_without_kv_fields() {
    let b = base();
    let l = Loc::of(&b);
    // Flag set (base sets it), trailer KV fields zeroed.
    let mut x = b.clone();
    put_u64(&mut x, l.t + 16, 0);
    put_u32(&mut x, l.t + 24, 0);
    rejects(&x, FormatRule::KvPresence, l.t + 16);
    rejects_sequentially(&x, FormatRule::KvPresence);
    // Only one of the two fields zero.
    let mut x = b.clone();
    put_u32(&mut x, l.t + 24, 0);
    rejects(&x, FormatRule::KvPresence, l.t + 16);
    // Flag clear with KV present is fine (A2).
    let mut x = b.clone();
    let f = u32_at(&x, 12) & !flags::HAS_KV_METADATA;
    put_u32(&mut x, 12, f);
    assert_eq!(FileReader::from_bytes(&x).unwrap().kv().len(), 2);
}

#[test]
fn r30_count_hint_not_landing_on_a_section() {
    for hint in [1u64, 3] {
        let mut b = base();
        put_u64(&mut b, 28, hint);
        // The random-access reader treats the hint as advisory.
        FileReader::from_bytes(&b).unwrap();
        let at = rejects_sequentially(&b, FormatRule::TensorCountHint);
        assert_eq!(at, if hint == 1 { 4112 } else { REGION_END as u64 });
    }
}

#[test]
fn too_small_files() {
    let b = base();
    for n in [0usize, 10, 63, 64, 103] {
        assert_eq!(open_err(&b[..n]).rule(), Some(FormatRule::Truncated), "{n}");
    }
}

#[test]
fn a_file_cut_short_is_truncated_not_a_bad_magic() {
    let b = base();
    // Every cut past header + trailer size: inside data, padding, KV, index, trailer.
    let mut truncated = 0;
    for n in 104..b.len() {
        let e = open_err(&b[..n]);
        let (rule, at) = rule_at(&e);
        if rule == FormatRule::Truncated {
            assert_eq!(at, n as u64, "{e}");
            assert!(
                e.to_string()
                    .starts_with(&format!("Truncated at byte {n}: the file ends at byte {n}")),
                "{e}"
            );
            truncated += 1;
        } else {
            // The cut left a byte of "HRRY" in its place at the new end (or the
            // whole of it: a descriptor's magic, then another rule fails).
            let tail = &b[n - 4..n];
            assert!(
                tail.iter().zip(b"HRRY").any(|(a, m)| a == m),
                "{n}: {e} (tail {tail:02x?})"
            );
        }
    }
    // Nearly every cut is reported as truncation, and every cut inside the trailer.
    let cuts = b.len() - 104;
    assert!(truncated * 100 >= cuts * 95, "{truncated} of {cuts}");
    for k in 1..=3 {
        assert_eq!(
            rule_at(&open_err(&b[..b.len() - k])).0,
            FormatRule::Truncated
        );
    }
}

#[test]
fn a_directory_is_reported_as_a_directory() {
    let dir = tempfile::tempdir().unwrap();
    let e = FileReader::open(dir.path()).expect_err("a directory is not a file");
    match &e {
        Error::Io(io) => {
            assert_eq!(io.kind(), std::io::ErrorKind::IsADirectory, "{e}");
            #[cfg(unix)]
            assert_eq!(io.raw_os_error(), Some(21), "{e}");
        }
        other => panic!("expected an I/O error, got {other}"),
    }
    assert!(!e.to_string().contains("No such device"), "{e}");
}

// ------------------------------------------------ limits

#[test]
fn limits_are_enforced() {
    let b = base();
    let l = Loc::of(&b);
    let lim = |f: fn(&mut Limits)| {
        let mut x = Limits::default();
        f(&mut x);
        x
    };
    let check = |limits: Limits, at: usize| {
        assert_eq!(
            rule_at(&open_err_with(&b, limits)),
            (FormatRule::Limit, at as u64)
        );
        let opts = ReadOptions {
            limits,
            ..ReadOptions::default()
        };
        let e = SequentialReader::with_options(&b[..], &opts)
            .and_then(|r| r.read_all())
            .unwrap_err();
        assert_eq!(e.rule(), Some(FormatRule::Limit));
    };
    check(lim(|l| l.max_tensors = 1), l.index_offset);
    check(lim(|l| l.max_index_bytes = 40), l.t + 8);
    check(lim(|l| l.max_kv_bytes = 10), l.t + 24);
    check(lim(|l| l.max_kv_entries = 1), REGION_END);
    check(lim(|l| l.max_descriptor_bytes = 60), l.field(0, 1));
    check(lim(|l| l.max_buffer_bytes = 8), 64);
}

#[test]
fn a_buffer_declaring_more_alignment_than_the_file_is_refused() {
    let mut d = TensorDescriptor::dense(ElementType::Float32, &[4]).unwrap();
    d.buffers[0].alignment = 8192;
    let t = filled(d, 3);
    let mut w = FileWriterTo::new(Vec::new(), WriteOptions::default()).unwrap();
    let e = w.write_tensor("t", &t).unwrap_err();
    assert_eq!(e.rule(), Some(FormatRule::Limit));
    // With an 8192 alignment it is written and read back aligned.
    let mut w = FileWriterTo::new(
        Vec::new(),
        WriteOptions {
            data_buffer_alignment: 8192,
            ..WriteOptions::default()
        },
    )
    .unwrap();
    w.write_tensor("t", &t).unwrap();
    let b = w.finish().unwrap();
    let r = FileReader::from_bytes(&b).unwrap();
    assert_eq!(
        r.tensor("t").unwrap().unwrap().buffers()[0]
            .as_slice()
            .as_ptr() as usize
            % 8192,
        0
    );
    let s = SequentialReader::new(&b[..]).unwrap().read_all().unwrap();
    assert_aligned(&s.items[0].1);
    // Patching the file's alignment down to 4096 makes the promise unkeepable.
    let mut x = b.clone();
    put_u32(&mut x, 16, 4096);
    // (The data_offset no longer matches align(E, 4096) either, but the handle is
    // checked first.)
    assert_eq!(open_err(&x).rule(), Some(FormatRule::Limit));
}
