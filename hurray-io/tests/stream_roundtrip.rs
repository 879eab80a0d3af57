//! Round trips through the streaming format (`streams-and-transport.md` Part A):
//! every layout family, quantized, empty and device tensors, and composites of every
//! rule (nested too), through the blocking front ends, the tokio front ends and the
//! sans-io decoder fed in random-sized pieces. Received items must equal the sent
//! ones (descriptors and bytes) and every received buffer must be 64-byte aligned (and
//! aligned to its declared alignment).

mod stream_common;

use hurray_io::stream::{Encoded, StreamDecoder, StreamEncoder};
use hurray_io::{Item, Limits, StreamReader, StreamWriter};
use std::io::{BufReader, Read};
use stream_common::*;

fn write_all(items: &[Item]) -> Vec<u8> {
    let mut w = StreamWriter::new(Vec::new());
    for it in items {
        w.write_item(it).unwrap();
    }
    w.flush().unwrap();
    let n = w.position();
    let bytes = w.into_inner();
    assert_eq!(bytes.len() as u64, n);
    bytes
}

fn read_all(r: impl Read) -> Vec<Item> {
    StreamReader::new(r).collect::<Result<_, _>>().unwrap()
}

#[test]
fn blocking_round_trip_of_every_family_and_composite() {
    let items = all_items();
    let bytes = write_all(&items);
    assert_same(&items, &read_all(&bytes[..]));
    assert_same(&items, &read_all(BufReader::new(&bytes[..])));
}

#[test]
fn each_item_alone_round_trips() {
    for (i, item) in all_items().into_iter().enumerate() {
        let bytes = write_all(std::slice::from_ref(&item));
        let got = read_all(&bytes[..]);
        assert_eq!(got.len(), 1, "item {i}");
        assert_same(std::slice::from_ref(&item), &got);
    }
}

#[test]
fn write_tensor_equals_write_item() {
    for (name, t) in tensors() {
        let mut a = StreamWriter::new(Vec::new());
        a.write_tensor(&t).unwrap();
        let mut b = StreamWriter::new(Vec::new());
        b.write_item(&Item::Tensor(t.clone())).unwrap();
        assert_eq!(a.into_inner(), b.into_inner(), "{name}");
    }
}

#[test]
fn the_stream_is_descriptors_and_buffers_back_to_back() {
    // A.1: no header, no padding, no end marker.
    let (_, t) = tensors().into_iter().next().unwrap();
    let bytes = write_all(&[Item::Tensor(t.clone())]);
    let mut want = t.descriptor().encode().unwrap();
    want.extend_from_slice(t.buffers()[0].as_slice());
    assert_eq!(bytes, want);
    assert_eq!(&bytes[..4], b"HRRY");
}

#[test]
fn an_empty_stream_holds_no_items() {
    assert!(read_all(&[][..]).is_empty());
    let mut d = StreamDecoder::default();
    assert!(d.is_clean_boundary());
    d.finish().unwrap();
    assert!(d.next_item().is_none());
    assert!(d.demand().is_empty());
}

/// A reader that returns at most `max` bytes per call, sizes chosen at random.
struct Trickle<'a> {
    data: &'a [u8],
    rng: Rng,
    max: usize,
}

impl Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self
            .rng
            .range(1, self.max)
            .min(buf.len())
            .min(self.data.len());
        buf[..n].copy_from_slice(&self.data[..n]);
        self.data = &self.data[n..];
        Ok(n)
    }
}

#[test]
fn blocking_reader_over_short_reads() {
    let items = all_items();
    let bytes = write_all(&items);
    for seed in 0..20 {
        let r = Trickle {
            data: &bytes,
            rng: Rng(seed),
            max: 1 + seed as usize * 7,
        };
        assert_same(&items, &read_all(r));
    }
}

/// Drives the decoder with `feed` in random-sized pieces.
fn decode_fed(bytes: &[u8], rng: &mut Rng, dec: StreamDecoder) -> Vec<Item> {
    let mut dec = dec;
    let mut out = Vec::new();
    let mut rest = bytes;
    while !rest.is_empty() {
        let n = rng.range(1, 1 + rest.len().min(300)).min(rest.len());
        assert_eq!(dec.feed(&rest[..n]), n);
        rest = &rest[n..];
        while let Some(item) = dec.next_item() {
            out.push(item.unwrap());
        }
    }
    dec.finish().unwrap();
    assert!(dec.next_item().is_none());
    out
}

/// Drives the decoder with demand/advance, writing a random prefix of each demand.
fn decode_demand(bytes: &[u8], rng: &mut Rng, dec: StreamDecoder) -> Vec<Item> {
    let mut dec = dec;
    let mut out = Vec::new();
    let mut rest = bytes;
    loop {
        while let Some(item) = dec.next_item() {
            out.push(item.unwrap());
        }
        if rest.is_empty() {
            break;
        }
        let want = dec.demand();
        assert!(!want.is_empty(), "a live decoder always demands bytes");
        let n = rng.range(1, want.len().min(rest.len()));
        want[..n].copy_from_slice(&rest[..n]);
        dec.advance(n);
        rest = &rest[n..];
    }
    assert_eq!(dec.position(), bytes.len() as u64);
    dec.finish().unwrap();
    out
}

#[test]
fn sans_io_decoder_fed_in_random_chunks() {
    let items = all_items();
    let bytes = write_all(&items);
    for seed in 0..100 {
        let mut rng = Rng(seed);
        assert_same(
            &items,
            &decode_fed(&bytes, &mut rng, StreamDecoder::default()),
        );
        assert_same(
            &items,
            &decode_demand(&bytes, &mut rng, StreamDecoder::default()),
        );
    }
}

#[test]
fn buffers_that_grow_in_place_still_round_trip_aligned() {
    // An eager ceiling of 0 makes every buffer take the growth path (start at 64 KiB,
    // double as bytes arrive); `big` needs several doublings.
    let big = filled(
        hurray_core::TensorDescriptor::dense(hurray_core::ElementType::Uint8, &[300_001]).unwrap(),
        99,
    );
    let big_cuda = filled(
        cuda(&[70_000], hurray_core::SyncMode::ProducerSynced, 4096),
        98,
    );
    let mut items = all_items();
    items.push(Item::Tensor(big));
    items.push(Item::Tensor(big_cuda));
    let bytes = write_all(&items);
    for seed in 0..10 {
        let mut rng = Rng(seed);
        let dec = || StreamDecoder::new(Limits::default()).with_eager_alloc(0);
        assert_same(&items, &decode_fed(&bytes, &mut rng, dec()));
        assert_same(&items, &decode_demand(&bytes, &mut rng, dec()));
    }
}

#[test]
fn demand_during_a_buffer_is_the_final_aligned_allocation() {
    // The slice the decoder lends is the memory the tensor ends up owning: after the
    // last advance, the tensor's buffer starts where the demanded slice started.
    let t = filled(
        hurray_core::TensorDescriptor::dense(hurray_core::ElementType::Float32, &[1000]).unwrap(),
        3,
    );
    let bytes = write_all(&[Item::Tensor(t.clone())]);
    let desc_len = t.descriptor().encoded_len();
    let mut dec = StreamDecoder::default();
    assert_eq!(dec.feed(&bytes[..desc_len]), desc_len);
    let slot = dec.demand();
    assert_eq!(slot.len(), 4000);
    let addr = slot.as_ptr() as usize;
    assert_eq!(addr % 64, 0);
    slot.copy_from_slice(&bytes[desc_len..]);
    dec.advance(4000);
    let Some(Ok(Item::Tensor(got))) = dec.next_item() else {
        panic!("a tensor")
    };
    assert_eq!(got.buffers()[0].as_slice().as_ptr() as usize, addr);
    assert_eq!(got, t);
}

#[test]
fn encoder_points_at_the_callers_buffers() {
    let items = all_items();
    let mut enc = StreamEncoder::default();
    for item in &items {
        let e: Encoded<'_> = enc.encode_item(item).unwrap();
        let mut addrs = Vec::new();
        item.for_each_tensor(&mut |t| {
            for b in t.buffers() {
                if !b.is_empty() {
                    addrs.push(b.as_slice().as_ptr());
                }
            }
        });
        let chunk_addrs: Vec<_> = e.chunks().map(|c| c.as_ptr()).collect();
        for a in &addrs {
            assert!(
                chunk_addrs.contains(a),
                "buffer chunk is not the caller's memory"
            );
        }
        let total: usize = e.chunks().map(<[u8]>::len).sum();
        assert_eq!(total as u64, e.len());
        let desc: usize = {
            let mut n = 0;
            item.for_each_tensor(&mut |t| n += t.descriptor().encoded_len());
            n
        };
        assert_eq!(e.descriptor_bytes().len(), desc);
        assert_eq!(e.chunk_count(), e.chunks().count());
        assert!(e.chunk(e.chunk_count()).is_none());
    }
}

#[test]
fn composites_come_back_whole_with_their_structure() {
    let items = vec![Item::Composite(nested()), Item::Composite(overlay())];
    let got = read_all(&write_all(&items)[..]);
    let Item::Composite(n) = &got[0] else {
        panic!("a composite")
    };
    assert_eq!(n.members.len(), 2);
    assert!(matches!(&n.members[0], Item::Composite(inner) if inner.members.len() == 2));
    assert_eq!(got[0].tensor_count(), 5);
    assert_eq!(got[1].tensor_count(), 3);
}

#[cfg(feature = "tokio")]
mod tokio_front_ends {
    use super::*;
    use hurray_io::stream::{AsyncStreamReader, AsyncStreamWriter};

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn async_round_trip_through_a_small_pipe() {
        let items = all_items();
        // A 61-byte pipe forces many partial reads and writes.
        let (client, server) = tokio::io::duplex(61);
        let sent = items.clone();
        let writer = tokio::spawn(async move {
            let mut w = AsyncStreamWriter::new(client);
            for it in &sent {
                w.write_item(it).await.unwrap();
            }
            w.flush().await.unwrap();
            w.shutdown().await.unwrap();
        });
        let mut r = AsyncStreamReader::new(server);
        let mut got = Vec::new();
        while let Some(item) = r.next_item().await {
            got.push(item.unwrap());
        }
        writer.await.unwrap();
        assert_same(&items, &got);
        assert!(r.next_item().await.is_none());
    }

    #[tokio::test]
    async fn async_and_blocking_produce_the_same_bytes() {
        let items = all_items();
        let mut w = AsyncStreamWriter::new(Vec::new());
        for it in &items {
            w.write_item(it).await.unwrap();
        }
        for (_, t) in tensors() {
            w.write_tensor(&t).await.unwrap();
        }
        let bytes = w.into_inner();
        let mut want = write_all(&items);
        let mut bw = StreamWriter::new(Vec::new());
        for (_, t) in tensors() {
            bw.write_tensor(&t).unwrap();
        }
        want.extend(bw.into_inner());
        assert_eq!(bytes, want);
        let mut r = AsyncStreamReader::with_limits(&bytes[..], Limits::default());
        let mut got = Vec::new();
        while let Some(item) = r.next_item().await {
            got.push(item.unwrap());
        }
        assert_eq!(got.len(), items.len() + tensors().len());
        assert_same(&items, &got[..items.len()]);
    }

    #[tokio::test]
    async fn async_reader_reports_truncation() {
        let bytes = write_all(&[Item::Composite(partition())]);
        let cut = &bytes[..bytes.len() - 5];
        let mut r = AsyncStreamReader::new(cut);
        let err = r.next_item().await.unwrap().unwrap_err();
        assert!(err.is_truncation());
        assert_eq!(err.rule(), Some(hurray_io::FormatRule::Truncated));
        assert!(r.next_item().await.is_none());
    }
}
