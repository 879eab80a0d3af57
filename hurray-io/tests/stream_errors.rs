//! Bad and hostile input for the streaming format: truncation at every byte offset
//! (A.2 EOF classification), 10^5 random mutations, oversized claims, cross-machine
//! sync modes (A.5), composite rules (A.4, `layouts.md` §2.11) on both the reading
//! and the writing side, and limits (A.6). Every error names its rule and the
//! absolute stream offset.

mod stream_common;

use hurray_core::{
    BufferHandle, CombineOp, CompositionRule, ElementType, MemberRole, Rule, SyncMode,
    TensorDescriptor, HEADER_LEN,
};
use hurray_io::stream::{StreamDecoder, StreamEncoder, DEFAULT_EAGER_ALLOC, MAX_HONORED_ALIGNMENT};
use hurray_io::{
    BufferPool, Composite, Error, FormatRule, Item, Limits, StreamReader, StreamWriter, Tensor,
};
use stream_common::*;

/// Decodes `bytes` in one feed; returns the items and the final error, if any.
fn decode(bytes: &[u8], dec: StreamDecoder) -> (Vec<Item>, Option<Error>) {
    let mut dec = dec;
    dec.feed(bytes);
    let mut items = Vec::new();
    while let Some(r) = dec.next_item() {
        match r {
            Ok(i) => items.push(i),
            Err(e) => {
                assert!(dec.next_item().is_none(), "the error comes once");
                assert!(dec.demand().is_empty(), "a failed decoder demands nothing");
                let again = dec.finish().unwrap_err();
                assert_eq!(again.to_string(), e.to_string());
                return (items, Some(e));
            }
        }
    }
    let end = dec.finish().err();
    (items, end)
}

fn format_error(e: &Error) -> (FormatRule, u64) {
    match e {
        Error::Format { rule, offset, .. } => (*rule, *offset),
        other => panic!("expected a format error, got {other}"),
    }
}

fn handle_offset(d: &TensorDescriptor, i: usize) -> u64 {
    (HEADER_LEN + 8 * d.rank() + 8 + d.layout.encoded_len() + 1 + 16 * i) as u64
}

#[test]
fn truncation_at_every_offset_is_classified() {
    let mut items = small_items();
    items.push(Item::Composite(overlay()));
    let s = layout_stream(&items);
    let mut torn = 0;
    let mut truncated = 0;
    let mut clean = 0;
    for k in 0..=s.bytes.len() {
        let (got, err) = decode(&s.bytes[..k], StreamDecoder::default());
        let complete = s.item_ends.iter().filter(|&&e| e > 0 && e <= k).count();
        assert_same(&items[..complete], &got);
        if s.item_ends.contains(&k) {
            assert!(
                err.is_none(),
                "cut at item boundary {k} must be a clean end"
            );
            clean += 1;
            continue;
        }
        let err = err.unwrap_or_else(|| panic!("cut at {k} must fail"));
        assert!(err.is_truncation(), "cut at {k}: {err}");
        let (rule, offset) = format_error(&err);
        assert_eq!(offset, k as u64, "error offset is where input ended");
        if s.inner_boundaries.contains(&k) {
            assert_eq!(rule, FormatRule::TornComposite, "cut at {k}");
            torn += 1;
        } else {
            assert_eq!(rule, FormatRule::Truncated, "cut at {k}");
            truncated += 1;
        }
    }
    assert_eq!(clean, items.len() + 1);
    assert!(torn >= 6, "{torn} torn cuts");
    assert!(truncated > 1000);
    println!("{clean} clean, {torn} torn, {truncated} truncated cuts");
}

#[test]
fn blocking_reader_truncation_matches_the_decoder() {
    let items = small_items();
    let s = layout_stream(&items);
    for k in (0..=s.bytes.len()).step_by(7) {
        let results: Vec<_> = StreamReader::new(&s.bytes[..k]).collect();
        let (want_items, want_err) = decode(&s.bytes[..k], StreamDecoder::default());
        let oks = results.iter().filter(|r| r.is_ok()).count();
        assert_eq!(oks, want_items.len(), "cut {k}");
        match (results.last(), want_err) {
            (Some(Err(a)), Some(b)) => assert_eq!(a.to_string(), b.to_string()),
            (_, None) => assert!(results.iter().all(Result::is_ok)),
            (other, Some(b)) => panic!("cut {k}: reader gave {other:?}, decoder {b}"),
        }
    }
}

#[test]
fn random_mutations_never_panic() {
    let base = layout_stream(&small_items()).bytes;
    let mut rng = Rng(0x5EED);
    let (mut ok, mut failed, mut same_bytes) = (0u32, 0u32, 0u32);
    let interesting: [u64; 8] = [0, 1, 0xFF, 0xFFFF_FFFF, 1 << 31, 1 << 32, u64::MAX, 1 << 40];
    // Every other decoder reads into a shared pool, so allocations holding bytes of
    // earlier (valid or broken) streams are reused: results must not change.
    let pool = BufferPool::new(1 << 20);
    for round in 0..100_000 {
        let mut b = base.clone();
        for _ in 0..rng.range(1, 3) {
            if b.is_empty() {
                break;
            }
            let at = rng.below(b.len());
            match rng.below(4) {
                0 => b[at] ^= 1 << rng.below(8),
                1 => b[at] = rng.next_u64() as u8,
                2 => {
                    let v = interesting[rng.below(interesting.len())].to_le_bytes();
                    let w = [4usize, 8][rng.below(2)];
                    let end = (at + w).min(b.len());
                    b[at..end].copy_from_slice(&v[..end - at]);
                }
                _ => b.truncate(at),
            }
        }
        if b.is_empty() {
            continue;
        }
        let mut dec = StreamDecoder::default().with_eager_alloc(4096);
        let pooled = round % 2 == 1;
        if pooled {
            dec = dec.with_pool(pool.clone());
        }
        let mut items = Vec::new();
        let mut error = None;
        let mut rest = &b[..];
        while !rest.is_empty() && error.is_none() {
            let n = rng.range(1, rest.len());
            dec.feed(&rest[..n]);
            rest = &rest[n..];
            while let Some(r) = dec.next_item() {
                match r {
                    Ok(i) => items.push(i),
                    Err(e) => error = Some(e),
                }
            }
            // Growth starts at 64 KiB here; a pooled allocation may be twice that.
            let bound = if pooled { 128 << 10 } else { 64 << 10 };
            assert!(dec.buffer_capacity() <= bound, "claims cost bounded memory");
        }
        if error.is_none() {
            error = dec.finish().err();
        }
        match error {
            Some(_) => failed += 1,
            None => {
                ok += 1;
                // A valid result really is valid: it re-encodes and decodes to itself.
                let mut w = StreamWriter::new(Vec::new());
                for it in &items {
                    w.write_item(it).expect("a decoded item can be written");
                }
                let again = w.into_inner();
                if again == b {
                    same_bytes += 1;
                }
                let (back, err) = decode(&again, StreamDecoder::default());
                assert!(err.is_none());
                assert_eq!(back, items);
            }
        }
    }
    println!("{ok} valid, {failed} rejected, {same_bytes} valid and byte-identical on re-encode");
    assert!(failed > 50_000);
    assert_eq!(same_bytes, ok, "every accepted stream is canonical");
}

#[test]
fn a_4_gib_claim_on_1_kib_of_input_allocates_only_the_eager_ceiling() {
    let d = TensorDescriptor::dense(ElementType::Uint8, &[4 << 30]).unwrap();
    assert_eq!(d.buffers[0].byte_size, 4 << 30);
    let mut bytes = d.encode().unwrap();
    let desc_len = bytes.len();
    bytes.extend(pattern(1024, 1));

    // Default limits accept the claim (64 GiB ceiling); memory follows the evidence.
    let mut dec = StreamDecoder::default();
    assert_eq!(dec.feed(&bytes), bytes.len());
    assert!(dec.next_item().is_none());
    assert!(dec.buffer_capacity() <= DEFAULT_EAGER_ALLOC);
    let err = dec.finish().unwrap_err();
    assert_eq!(
        format_error(&err),
        (FormatRule::Truncated, bytes.len() as u64)
    );

    // A smaller eager ceiling: 64 KiB to start with, whatever the claim.
    let mut dec = StreamDecoder::default().with_eager_alloc(0);
    dec.feed(&bytes);
    assert!(dec.buffer_capacity() <= 64 << 10);

    // A limit rejects the claim before anything is allocated for it.
    let limits = Limits {
        max_buffer_bytes: 1 << 20,
        ..Limits::default()
    };
    let mut dec = StreamDecoder::new(limits);
    assert_eq!(
        dec.feed(&bytes),
        desc_len,
        "nothing of the buffer is consumed"
    );
    assert_eq!(dec.buffer_capacity(), 0);
    let err = dec.next_item().unwrap().unwrap_err();
    assert_eq!(
        format_error(&err),
        (FormatRule::Limit, handle_offset(&d, 0))
    );

    // Through the blocking reader as well.
    let err = StreamReader::new(&bytes[..]).next().unwrap().unwrap_err();
    assert!(err.is_truncation());
}

#[test]
fn growing_buffers_hold_at_most_twice_what_arrived() {
    let d = TensorDescriptor::dense(ElementType::Uint8, &[40 << 20]).unwrap();
    let mut bytes = d.encode().unwrap();
    let desc_len = bytes.len();
    bytes.extend(pattern(3 << 20, 2));
    let mut dec = StreamDecoder::default().with_eager_alloc(1 << 20);
    let mut fed = desc_len;
    dec.feed(&bytes[..desc_len]);
    while fed < bytes.len() {
        let n = (bytes.len() - fed).min(100_000);
        dec.feed(&bytes[fed..fed + n]);
        fed += n;
        let received = fed - desc_len;
        assert!(dec.buffer_capacity() <= (2 * received).max(1 << 20));
    }
    assert!(dec.finish().unwrap_err().is_truncation());
}

#[test]
fn cross_machine_mode_rejects_event_and_consumer_stream_sync() {
    let prefix = filled(
        TensorDescriptor::dense(ElementType::Float32, &[5]).unwrap(),
        1,
    );
    let prefix_len = (prefix.descriptor().encoded_len() + 20) as u64;
    let cross = Limits {
        cross_machine: true,
        ..Limits::default()
    };
    for sync in [SyncMode::Event, SyncMode::ConsumerStream] {
        let t = filled(cuda(&[4, 4], sync, 256), 2);
        let bytes = raw_stream(&[&prefix, &t]);
        let at = prefix_len + handle_offset(t.descriptor(), 0) + 13;
        assert_eq!(
            bytes[at as usize],
            sync.tag(),
            "offset names the sync_mode byte"
        );

        // Reader: the first tensor arrives, the second is rejected at its sync byte.
        let (items, err) = decode(&bytes, StreamDecoder::new(cross));
        assert_eq!(items, vec![Item::Tensor(prefix.clone())]);
        assert_eq!(format_error(&err.unwrap()), (FormatRule::SyncMode, at));
        let results: Vec<_> = StreamReader::with_limits(&bytes[..], cross).collect();
        assert_eq!(results.len(), 2);
        assert_eq!(
            results[1].as_ref().unwrap_err().rule(),
            Some(FormatRule::SyncMode)
        );

        // Same process: allowed.
        let (items, err) = decode(&bytes, StreamDecoder::default());
        assert!(err.is_none());
        assert_eq!(items.len(), 2);

        // Writer: rejected before a byte of the tensor is emitted.
        let mut w = StreamWriter::with_limits(Vec::new(), cross);
        w.write_tensor(&prefix).unwrap();
        let err = w.write_tensor(&t).unwrap_err();
        assert_eq!(
            format_error(&err),
            (FormatRule::SyncMode, prefix_len),
            "writer errors name where the item would start"
        );
        let err = w.write_item(&Item::Tensor(t.clone())).unwrap_err();
        assert_eq!(err.rule(), Some(FormatRule::SyncMode));
        assert_eq!(
            w.into_inner().len() as u64,
            prefix_len,
            "nothing of it written"
        );

        // Inside a group composite too: the whole composite is refused.
        let g = Composite {
            head: filled(
                head(
                    ElementType::Float32,
                    &[1],
                    CompositionRule::Group,
                    CombineOp::None,
                    2,
                ),
                0,
            ),
            members: vec![Item::Tensor(prefix.clone()), Item::Tensor(t.clone())],
        };
        let mut w = StreamWriter::with_limits(Vec::new(), cross);
        assert!(w.write_item(&Item::Composite(g)).is_err());
        assert!(w.into_inner().is_empty());
    }
}

/// A reading case: the raw stream of the tensors, the rule, and the index of the
/// tensor whose start the error names (`None`: the end of the stream).
struct Bad {
    name: &'static str,
    item: Composite,
    rule: FormatRule,
    at_tensor: Option<usize>,
}

fn dense(t: ElementType, shape: &[u64]) -> TensorDescriptor {
    TensorDescriptor::dense(t, shape).unwrap()
}

fn partition_of(members: Vec<TensorDescriptor>) -> Composite {
    let n = members.len() as u32;
    Composite {
        head: filled(
            head(
                ElementType::Float32,
                &[8, 8],
                CompositionRule::Partition,
                CombineOp::None,
                n,
            ),
            0,
        ),
        members: members
            .into_iter()
            .enumerate()
            .map(|(i, d)| Item::Tensor(filled(d, i as u64 + 40)))
            .collect(),
    }
}

fn overlay_of(n: u32, members: Vec<TensorDescriptor>) -> Composite {
    Composite {
        head: filled(
            head(
                ElementType::Float32,
                &[4, 4],
                CompositionRule::Overlay,
                CombineOp::Replace,
                n,
            ),
            0,
        ),
        members: members
            .into_iter()
            .map(|d| Item::Tensor(filled(d, 50)))
            .collect(),
    }
}

fn bad_cases() -> Vec<Bad> {
    use ElementType::{Float32, Float64};
    let half = |off: u64| shard(dense(Float32, &[8, 4]), &[8, 8], &[0, off]);
    let mut correction = shard(dense(Float32, &[4, 4]), &[4, 4], &[0, 0]);
    correction.composite_member = Some(MemberRole::Correction);
    let mut base = correction.clone();
    base.composite_member = Some(MemberRole::Base);
    let mut small_base = shard(dense(Float32, &[2, 4]), &[4, 4], &[0, 0]);
    small_base.composite_member = Some(MemberRole::Base);
    let mut with_role = half(4);
    with_role.composite_member = Some(MemberRole::Base);
    vec![
        Bad {
            name: "partition overlap",
            item: partition_of(vec![half(0), half(3)]),
            rule: FormatRule::CompositeMember,
            at_tensor: None,
        },
        Bad {
            name: "partition gap",
            item: partition_of(vec![
                half(0),
                shard(dense(Float32, &[8, 3]), &[8, 8], &[0, 4]),
            ]),
            rule: FormatRule::CompositeMember,
            at_tensor: None,
        },
        Bad {
            name: "partition member without shard",
            item: partition_of(vec![half(0), dense(Float32, &[8, 4])]),
            rule: FormatRule::CompositeMember,
            at_tensor: Some(2),
        },
        Bad {
            name: "partition member of another type",
            item: partition_of(vec![
                half(0),
                shard(dense(Float64, &[8, 4]), &[8, 8], &[0, 4]),
            ]),
            rule: FormatRule::CompositeMember,
            at_tensor: Some(2),
        },
        Bad {
            name: "partition member with a wrong parent shape",
            item: partition_of(vec![
                half(0),
                shard(dense(Float32, &[8, 4]), &[8, 9], &[0, 4]),
            ]),
            rule: FormatRule::CompositeMember,
            at_tensor: Some(2),
        },
        Bad {
            name: "partition member with a composite-member section",
            item: partition_of(vec![half(0), with_role]),
            rule: FormatRule::CompositeMember,
            at_tensor: Some(2),
        },
        Bad {
            name: "overlay without base (member 0 a correction)",
            item: overlay_of(2, vec![correction.clone(), correction.clone()]),
            rule: FormatRule::CompositeMember,
            at_tensor: Some(1),
        },
        Bad {
            name: "overlay without members",
            item: overlay_of(0, vec![]),
            rule: FormatRule::CompositeMember,
            at_tensor: Some(0),
        },
        Bad {
            name: "overlay base not spanning the head",
            item: overlay_of(1, vec![small_base]),
            rule: FormatRule::CompositeMember,
            at_tensor: Some(1),
        },
        Bad {
            name: "overlay second base",
            item: overlay_of(2, vec![base.clone(), base]),
            rule: FormatRule::CompositeMember,
            at_tensor: Some(2),
        },
        Bad {
            name: "nesting deeper than 8",
            item: deep_group(9),
            rule: FormatRule::CompositeDepth,
            at_tensor: Some(8),
        },
    ]
}

/// Pre-order tensors of an item.
fn flatten(item: &Item) -> Vec<&Tensor> {
    let mut v = Vec::new();
    item.for_each_tensor(&mut |t| v.push(t));
    v
}

#[test]
fn composite_rule_violations_are_rejected_when_read() {
    let prefix = filled(dense(ElementType::Int8, &[7]), 9);
    for case in bad_cases() {
        let item = Item::Composite(case.item);
        let mut tensors = vec![&prefix];
        tensors.extend(flatten(&item));
        let bytes = raw_stream(&tensors);
        let starts: Vec<u64> = tensors
            .iter()
            .scan(0u64, |pos, t| {
                let s = *pos;
                *pos += (t.descriptor().encoded_len() + t.data_len() as usize) as u64;
                Some(s)
            })
            .collect();
        let (items, err) = decode(&bytes, StreamDecoder::default());
        assert_eq!(items, vec![Item::Tensor(prefix.clone())], "{}", case.name);
        let err = err.unwrap_or_else(|| panic!("{}: accepted", case.name));
        let want_at = match case.at_tensor {
            Some(i) => starts[i + 1],
            None => bytes.len() as u64,
        };
        assert_eq!(
            format_error(&err),
            (case.rule, want_at),
            "{}: {err}",
            case.name
        );
    }
}

#[test]
fn composite_rule_violations_are_rejected_before_writing() {
    for case in bad_cases() {
        let mut w = StreamWriter::new(Vec::new());
        let err = w.write_item(&Item::Composite(case.item)).unwrap_err();
        assert_eq!(err.rule(), Some(case.rule), "{}: {err}", case.name);
        assert!(
            w.into_inner().is_empty(),
            "{}: bytes were written",
            case.name
        );
    }
}

#[test]
fn the_depth_limit_is_configurable() {
    let limits = Limits {
        max_composite_depth: 2,
        ..Limits::default()
    };
    let ok = Item::Composite(nested());
    let deep = Item::Composite(deep_group(3));
    for item in [&ok, &deep] {
        let bytes = raw_stream(&flatten(item));
        let (items, err) = decode(&bytes, StreamDecoder::new(limits));
        if std::ptr::eq(item, &ok) {
            assert!(err.is_none());
            assert_eq!(items, vec![ok.clone()]);
        } else {
            assert_eq!(err.unwrap().rule(), Some(FormatRule::CompositeDepth));
        }
    }
    let mut w = StreamWriter::with_limits(Vec::new(), limits);
    w.write_item(&ok).unwrap();
    assert_eq!(
        w.write_item(&deep).unwrap_err().rule(),
        Some(FormatRule::CompositeDepth)
    );
    // Default limit: 8 levels pass, 9 fail.
    let bytes = raw_stream(&flatten(&Item::Composite(deep_group(8))));
    assert!(decode(&bytes, StreamDecoder::default()).1.is_none());
}

#[test]
fn a_bare_head_is_written_only_without_members() {
    let mut w = StreamWriter::new(Vec::new());
    let h = partition().head;
    let err = w.write_tensor(&h).unwrap_err();
    assert_eq!(err.rule(), Some(FormatRule::TornComposite));
    let err = w.write_item(&Item::Tensor(h)).unwrap_err();
    assert_eq!(err.rule(), Some(FormatRule::TornComposite));
    // As a member, too: the writer would otherwise emit a torn composite.
    let mut g = group();
    g.members[0] = Item::Tensor(partition().head);
    assert!(w.write_item(&Item::Composite(g)).is_err());
    assert!(w.into_inner().is_empty());
    // member_count 0 is fine and reads back as an empty composite.
    let mut w = StreamWriter::new(Vec::new());
    w.write_tensor(&empty_group().head).unwrap();
    let got: Vec<_> = StreamReader::new(&w.into_inner()[..])
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(got, vec![Item::Composite(empty_group())]);
}

#[test]
fn limits_reject_before_allocating() {
    let t = filled(dense(ElementType::Float32, &[3, 4]), 1);
    let bytes = raw_stream(&[&t, &t]);
    let one = bytes.len() as u64 / 2;
    // Descriptor too long for the limit: rejected at descriptor_length (byte 6).
    let limits = Limits {
        max_descriptor_bytes: 40,
        ..Limits::default()
    };
    let (_, err) = decode(&bytes, StreamDecoder::new(limits));
    assert_eq!(format_error(&err.unwrap()), (FormatRule::Limit, 6));
    // Buffer over the limit: rejected at the handle's byte_size, in the second tensor.
    let limits = Limits {
        max_buffer_bytes: 47,
        ..Limits::default()
    };
    let (items, err) = decode(
        &raw_stream(&[&filled(dense(ElementType::Float32, &[3]), 1), &t]),
        StreamDecoder::new(limits),
    );
    assert_eq!(items.len(), 1);
    let at = (items[0].descriptor().encoded_len() + 12) as u64 + handle_offset(t.descriptor(), 0);
    assert_eq!(format_error(&err.unwrap()), (FormatRule::Limit, at));
    // An alignment above what the reader can honour.
    let mut d = dense(ElementType::Float32, &[16]);
    d.buffers[0].alignment = MAX_HONORED_ALIGNMENT * 2;
    let (_, err) = decode(
        &raw_stream(&[&filled(d.clone(), 1)]),
        StreamDecoder::default(),
    );
    assert_eq!(
        format_error(&err.unwrap()),
        (FormatRule::Limit, handle_offset(&d, 0) + 8)
    );
    let _ = one;
}

#[test]
fn descriptor_errors_name_the_tensor_and_the_field() {
    let t = filled(dense(ElementType::Float32, &[2]), 1);
    let mut bytes = raw_stream(&[&t, &t]);
    let second = bytes.len() / 2;
    bytes[second + 14] = 0; // type_tag 0 is invalid
    let (items, err) = decode(&bytes, StreamDecoder::default());
    assert_eq!(items.len(), 1);
    match err.unwrap() {
        Error::Descriptor { at, source } => {
            assert_eq!(at, second as u64);
            assert_eq!(source.rule, Rule::TypeTagInvalid);
            assert_eq!(at + source.offset as u64, second as u64 + 14);
        }
        other => panic!("{other}"),
    }
    // A file is not a stream: "HRRYFILE" fails the version check at byte 4.
    let (_, err) = decode(
        b"HRRYFILE\x01\x00\x00\x00\x00\x00",
        StreamDecoder::default(),
    );
    match err.unwrap() {
        Error::Descriptor { at: 0, source } => assert_eq!(source.rule, Rule::VersionMajor),
        other => panic!("{other}"),
    }
}

#[test]
fn items_before_an_error_are_delivered_first() {
    let t = filled(dense(ElementType::Float32, &[2]), 1);
    let mut bytes = raw_stream(&[&t, &t]);
    let garbage = b"garbage, not a descriptor";
    bytes.extend_from_slice(garbage);
    let results: Vec<_> = StreamReader::new(&bytes[..]).collect();
    assert_eq!(results.len(), 3);
    assert!(results[0].is_ok() && results[1].is_ok());
    let at_garbage = (bytes.len() - garbage.len()) as u64;
    assert!(matches!(&results[2], Err(Error::Descriptor { at, .. }) if *at == at_garbage));
}

#[test]
fn encoder_errors_leave_position_unchanged() {
    let mut enc = StreamEncoder::new(Limits::default());
    let good = Item::Composite(partition());
    let n = enc.encode_item(&good).unwrap().len();
    assert_eq!(enc.position(), n);
    let bad = Item::Composite(bad_cases().remove(0).item);
    let err = enc.encode_item(&bad).unwrap_err();
    assert_eq!(enc.position(), n);
    // The close-time error names the start of the item in the stream.
    assert_eq!(format_error(&err), (FormatRule::CompositeMember, n));
    // An invalid descriptor built by hand is refused by the encoder too.
    let mut d = dense(ElementType::Float32, &[2]);
    d.buffers = vec![BufferHandle::cpu(4)];
    assert!(Tensor::new(d, vec![hurray_io::Buffer::copy_from(&[0; 4])])
        .map(|t| enc.encode_tensor(&t).map(|_| ()))
        .unwrap()
        .is_err());
}

/// The reviewer's hostile shape: a float32 [n] partition head and n one-element
/// members at offsets [i] (each a 4-byte buffer), as a composite.
fn one_element_partition(n: u32) -> Composite {
    let members = (0..u64::from(n))
        .map(|i| {
            let d = shard(dense(ElementType::Float32, &[1]), &[u64::from(n)], &[i]);
            let b = hurray_io::Buffer::copy_from(&(i as f32).to_le_bytes());
            Item::Tensor(Tensor::new(d, vec![b]).unwrap())
        })
        .collect();
    Composite {
        head: filled(
            head(
                ElementType::Float32,
                &[u64::from(n)],
                CompositionRule::Partition,
                CombineOp::None,
                n,
            ),
            0,
        ),
        members,
    }
}

#[test]
fn a_60k_member_partition_is_written_and_decoded() {
    // Just under the default member limit. The close-time check is a sweep (its
    // comparison count is asserted by the unit tests of `composite`); the time is
    // printed as a sanity check only.
    let n = 60_000;
    assert!(n < Limits::default().max_composite_members);
    let c = one_element_partition(n);
    let item = Item::Composite(c);
    let started = std::time::Instant::now();
    let mut w = StreamWriter::new(Vec::new());
    w.write_item(&item).unwrap();
    let bytes = w.into_inner();
    let wrote = started.elapsed();
    assert_eq!(bytes, raw_stream(&flatten(&item)));
    let started = std::time::Instant::now();
    let (items, err) = decode(&bytes, StreamDecoder::default());
    eprintln!(
        "{n} members, {} bytes: written in {wrote:?}, decoded in {:?}",
        bytes.len(),
        started.elapsed()
    );
    assert!(err.is_none(), "{err:?}");
    assert_eq!(items, vec![item]);
}

#[test]
fn member_count_above_the_limit_is_rejected_at_the_head() {
    let limit = Limits::default().max_composite_members;
    let prefix = filled(dense(ElementType::Int8, &[3]), 1);
    let prefix_len = raw_stream(&[&prefix]).len();
    // A head declaring one member too many, and no member at all: rejected as soon
    // as the head's descriptor is complete, at the head's offset.
    let over = filled(
        head(
            ElementType::Float32,
            &[u64::from(limit) + 1],
            CompositionRule::Partition,
            CombineOp::None,
            limit + 1,
        ),
        0,
    );
    let bytes = raw_stream(&[&prefix, &over]);
    let mut dec = StreamDecoder::default();
    assert_eq!(dec.feed(&bytes), bytes.len());
    assert!(matches!(dec.next_item(), Some(Ok(Item::Tensor(_)))));
    let err = dec.next_item().unwrap().unwrap_err();
    assert_eq!(format_error(&err), (FormatRule::Limit, prefix_len as u64));
    assert!(dec.demand().is_empty(), "no member is read");
    // The same head is refused by the writer, before its members are looked at.
    let c = Composite {
        head: over,
        members: Vec::new(),
    };
    let mut w = StreamWriter::new(Vec::new());
    w.write_tensor(&prefix).unwrap();
    let err = w.write_item(&Item::Composite(c)).unwrap_err();
    assert_eq!(format_error(&err), (FormatRule::Limit, prefix_len as u64));
    assert_eq!(w.into_inner().len(), prefix_len, "nothing of it written");

    // A configured limit: the members that follow the head are never consumed.
    let limits = Limits {
        max_composite_members: 3,
        ..Limits::default()
    };
    let item = Item::Composite(one_element_partition(4));
    let bytes = raw_stream(&flatten(&item));
    let head_len = item.descriptor().encoded_len();
    let mut dec = StreamDecoder::new(limits);
    assert_eq!(dec.feed(&bytes), head_len, "stops after the head");
    assert_eq!(
        format_error(&dec.next_item().unwrap().unwrap_err()),
        (FormatRule::Limit, 0)
    );
    let err = StreamWriter::with_limits(Vec::new(), limits)
        .write_item(&item)
        .unwrap_err();
    assert_eq!(format_error(&err), (FormatRule::Limit, 0));
    // Three members are fine.
    let item = Item::Composite(one_element_partition(3));
    let mut w = StreamWriter::with_limits(Vec::new(), limits);
    w.write_item(&item).unwrap();
    let (items, err) = decode(&w.into_inner(), StreamDecoder::new(limits));
    assert!(err.is_none());
    assert_eq!(items, vec![item]);
}

#[test]
fn alignments_up_to_2_mib_are_written_and_read_back_aligned() {
    assert_eq!(MAX_HONORED_ALIGNMENT, hurray_io::file::MAX_DATA_ALIGNMENT);
    let mut items = Vec::new();
    for (i, align) in [128, 4096, 8192, 1 << 16, MAX_HONORED_ALIGNMENT]
        .into_iter()
        .enumerate()
    {
        // Small and larger-than-the-slack buffers.
        for n in [3u64, 300_000] {
            let mut d = dense(ElementType::Float32, &[n]);
            d.buffers[0].alignment = align;
            items.push(Item::Tensor(filled(d, i as u64)));
        }
    }
    let mut w = StreamWriter::new(Vec::new());
    for item in &items {
        w.write_item(item).unwrap();
    }
    let bytes = w.into_inner();
    let (got, err) = decode(&bytes, StreamDecoder::default());
    assert!(err.is_none(), "{err:?}");
    assert_same(&items, &got);
    // Through the growing path too (buffers above the eager ceiling).
    let (got, err) = decode(&bytes, StreamDecoder::default().with_eager_alloc(0));
    assert!(err.is_none(), "{err:?}");
    assert_same(&items, &got);
}

/// What a writer with `limits` makes of `t`, and what a reader with `limits` makes
/// of `t`'s raw bytes: both accept, or both refuse with the same rule.
#[track_caller]
fn writer_and_reader_agree(t: &Tensor, limits: Limits) -> Option<FormatRule> {
    let prefix = filled(dense(ElementType::Int8, &[5]), 3);
    let mut w = StreamWriter::with_limits(Vec::new(), limits);
    w.write_tensor(&prefix).unwrap();
    let wrote = w.write_tensor(t);
    let written = w.into_inner();
    let (items, read) = decode(&raw_stream(&[&prefix, t]), StreamDecoder::new(limits));
    match (wrote, read) {
        (Ok(()), None) => {
            assert_eq!(items, vec![Item::Tensor(prefix), Item::Tensor(t.clone())]);
            None
        }
        (Err(we), Some(re)) => {
            let at = raw_stream(&[&prefix]).len() as u64;
            assert_eq!(
                format_error(&we),
                (format_error(&re).0, at),
                "writer error names the item start"
            );
            assert_eq!(written.len() as u64, at, "nothing of it written");
            Some(format_error(&re).0)
        }
        (w, r) => panic!("writer {w:?} but reader {r:?}"),
    }
}

#[test]
fn the_writer_refuses_exactly_what_the_reader_refuses() {
    let defaults = Limits::default();
    let aligned = |align: u32, n: u64| {
        let mut d = dense(ElementType::Float32, &[n]);
        d.buffers[0].alignment = align;
        filled(d, 1)
    };
    let t = aligned(MAX_HONORED_ALIGNMENT, 4);
    assert_eq!(writer_and_reader_agree(&t, defaults), None);
    let t = aligned(MAX_HONORED_ALIGNMENT * 2, 4);
    assert_eq!(
        writer_and_reader_agree(&t, defaults),
        Some(FormatRule::Limit)
    );
    // An empty buffer's alignment is not honoured, so not limited either.
    let t = aligned(MAX_HONORED_ALIGNMENT * 2, 0);
    assert_eq!(writer_and_reader_agree(&t, defaults), None);
    // Descriptor and buffer sizes, at and just past the limit.
    let t = filled(dense(ElementType::Float32, &[3, 4]), 1);
    let len = t.descriptor().encoded_len() as u32;
    for (max, want) in [(len, None), (len - 1, Some(FormatRule::Limit))] {
        let limits = Limits {
            max_descriptor_bytes: max,
            ..defaults
        };
        assert_eq!(writer_and_reader_agree(&t, limits), want);
    }
    for (max, want) in [(48, None), (47, Some(FormatRule::Limit))] {
        let limits = Limits {
            max_buffer_bytes: max,
            ..defaults
        };
        assert_eq!(writer_and_reader_agree(&t, limits), want);
    }
    // Cross-machine mode.
    let cross = Limits {
        cross_machine: true,
        ..defaults
    };
    let t = filled(cuda(&[4, 4], SyncMode::Event, 256), 2);
    assert_eq!(
        writer_and_reader_agree(&t, cross),
        Some(FormatRule::SyncMode)
    );
    assert_eq!(writer_and_reader_agree(&t, defaults), None);
}

/// A sink that fails once, after `accept` bytes, then accepts everything.
struct FailOnce {
    data: Vec<u8>,
    accept: usize,
    failed: bool,
}

impl std::io::Write for FailOnce {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        if !self.failed {
            let room = self.accept - self.data.len();
            if room == 0 {
                self.failed = true;
                return Err(std::io::Error::other("disk full"));
            }
            let n = room.min(b.len());
            self.data.extend_from_slice(&b[..n]);
            return Ok(n);
        }
        self.data.extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn an_io_error_part_way_through_an_item_poisons_the_stream_writer() {
    let t = filled(dense(ElementType::Float32, &[64]), 1);
    let item = Item::Composite(partition());
    // Part of a descriptor, of a buffer, of a composite's member.
    for accept in [0, 10, raw_stream(&[&t]).len() - 1] {
        let mut w = StreamWriter::new(FailOnce {
            data: Vec::new(),
            accept,
            failed: false,
        });
        assert!(matches!(w.write_tensor(&t), Err(Error::Io(_))));
        assert!(w.is_poisoned());
        // The sink would take these now; the writer refuses them.
        for err in [
            w.write_tensor(&t).unwrap_err(),
            w.write_item(&item).unwrap_err(),
            w.flush().unwrap_err(),
        ] {
            assert!(matches!(err, Error::Io(_)));
            assert!(err.to_string().contains("abandoned"), "{err}");
        }
        assert_eq!(w.into_inner().data.len(), accept, "nothing more written");
    }
    let mut w = StreamWriter::new(FailOnce {
        data: Vec::new(),
        accept: 100,
        failed: false,
    });
    assert!(w.write_item(&item).is_err());
    assert!(w.write_tensor(&t).is_err());

    // Errors about the content write nothing and do not poison.
    let mut w = StreamWriter::new(Vec::new());
    let bad = Item::Composite(bad_cases().remove(0).item);
    assert_eq!(
        w.write_item(&bad).unwrap_err().rule(),
        Some(FormatRule::CompositeMember)
    );
    assert!(!w.is_poisoned());
    w.write_tensor(&t).unwrap();
    let (items, err) = decode(&w.into_inner(), StreamDecoder::default());
    assert!(err.is_none());
    assert_eq!(items, vec![Item::Tensor(t)]);
}

#[cfg(feature = "tokio")]
mod cancellation {
    use super::*;
    use hurray_io::stream::AsyncStreamWriter;
    use std::future::Future;
    use std::pin::{pin, Pin};
    use std::task::{Context, Poll, Waker};

    /// Accepts `accept` bytes, then answers `Pending` once, then accepts everything.
    pub struct StallOnce {
        pub data: Vec<u8>,
        accept: usize,
        stalled: bool,
    }

    impl StallOnce {
        pub fn new(accept: usize) -> StallOnce {
            StallOnce {
                data: Vec::new(),
                accept,
                stalled: false,
            }
        }
    }

    impl tokio::io::AsyncWrite for StallOnce {
        fn poll_write(
            mut self: Pin<&mut Self>,
            cx: &mut Context<'_>,
            buf: &[u8],
        ) -> Poll<std::io::Result<usize>> {
            let this = &mut *self;
            if !this.stalled {
                let room = this.accept - this.data.len();
                if room == 0 {
                    this.stalled = true;
                    cx.waker().wake_by_ref();
                    return Poll::Pending;
                }
                let n = room.min(buf.len());
                this.data.extend_from_slice(&buf[..n]);
                return Poll::Ready(Ok(n));
            }
            this.data.extend_from_slice(buf);
            Poll::Ready(Ok(buf.len()))
        }
        fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
            Poll::Ready(Ok(()))
        }
        fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
            Poll::Ready(Ok(()))
        }
    }

    /// Polls `f` once and drops it (what `select!` or a timeout does to a loser).
    fn poll_once_and_drop<F: Future>(f: F) -> bool {
        let f = pin!(f);
        f.poll(&mut Context::from_waker(Waker::noop())).is_pending()
    }

    #[tokio::test]
    async fn a_dropped_write_future_poisons_the_async_stream_writer() {
        let t = filled(dense(ElementType::Float32, &[64]), 1);
        let item = Item::Composite(partition());
        for accept in [0, 10, raw_stream(&[&t]).len() - 1] {
            let mut w = AsyncStreamWriter::new(StallOnce::new(accept));
            assert!(poll_once_and_drop(w.write_tensor(&t)));
            assert!(w.is_poisoned());
            for err in [
                w.write_tensor(&t).await.unwrap_err(),
                w.write_item(&item).await.unwrap_err(),
                w.flush().await.unwrap_err(),
                w.shutdown().await.unwrap_err(),
            ] {
                assert!(matches!(err, Error::Io(_)));
                assert!(err.to_string().contains("abandoned"), "{err}");
            }
            assert_eq!(w.into_inner().data.len(), accept, "nothing more written");
        }
        // A stall that is waited out is not a failure.
        let mut w = AsyncStreamWriter::new(StallOnce::new(10));
        w.write_tensor(&t).await.unwrap();
        w.write_item(&item).await.unwrap();
        assert!(!w.is_poisoned());
        let (items, err) = decode(&w.into_inner().data, StreamDecoder::default());
        assert!(err.is_none());
        assert_eq!(items, vec![Item::Tensor(t), item]);
    }
}

#[test]
fn composite_depth_is_capped_at_64_whatever_the_limits_say() {
    let limits = Limits {
        max_composite_depth: u32::MAX,
        ..Limits::default()
    };
    assert_eq!(limits.composite_depth(), 64);
    // 64 levels pass; the 65th head is refused where it starts, before its members.
    for (levels, ok) in [(64, true), (65, false), (3000, false)] {
        let item = Item::Composite(deep_group(levels));
        let tensors = flatten(&item);
        let bytes = raw_stream(&tensors);
        let (items, err) = decode(&bytes, StreamDecoder::new(limits));
        if ok {
            assert!(err.is_none(), "{levels}: {err:?}");
            assert_eq!(items, vec![item.clone()]);
        } else {
            let at = raw_stream(&tensors[..64]).len() as u64;
            match err {
                Some(Error::Format {
                    rule: FormatRule::CompositeDepth,
                    offset,
                    ..
                }) => assert_eq!(offset, at, "{levels}"),
                other => panic!("{levels} levels: {other:?}"),
            }
        }
        let mut w = StreamWriter::with_limits(Vec::new(), limits);
        assert_eq!(w.write_item(&item).is_ok(), ok, "writer, {levels} levels");
    }
}
