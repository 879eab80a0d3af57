//! Pushing a stream into a decoder (`impl Write for StreamDecoder`) and decoding into
//! a [`BufferPool`]: every item of the round-trip suite arrives intact and aligned,
//! pooled allocations are reused once the tensors holding them are dropped (same
//! addresses, no new allocations), a bad stream pushed in fails the writer with the
//! decoder's rule and offset, and a caller's `BufferAllocator` provides every buffer
//! (checked for length and alignment, each allocation dropped exactly once).

mod stream_common;

use hurray_io::{
    BufferPool, Error, FormatRule, Item, StreamDecoder, StreamReader, StreamWriter, Tensor,
};
use std::io::Write;
use stream_common::*;

fn drain(dec: &mut StreamDecoder) -> Vec<Item> {
    std::iter::from_fn(|| dec.next_item())
        .collect::<Result<_, _>>()
        .unwrap()
}

fn push(items: &[Item], dec: &mut StreamDecoder) {
    let mut w = StreamWriter::new(&mut *dec);
    for it in items {
        w.write_item(it).unwrap();
    }
    w.flush().unwrap();
}

#[test]
fn a_writer_over_a_decoder_delivers_every_item() {
    let items = all_items();
    for pool in [None, Some(BufferPool::default())] {
        let mut dec = StreamDecoder::default();
        if let Some(p) = &pool {
            dec = dec.with_pool(p.clone());
        }
        push(&items, &mut dec);
        assert!(dec.is_clean_boundary());
        dec.finish().unwrap();
        let got = drain(&mut dec);
        assert_same(&items, &got);
        got.iter().for_each(assert_aligned);
    }
}

#[test]
fn bytes_written_in_odd_pieces_decode_the_same() {
    let items = all_items();
    let mut w = StreamWriter::new(Vec::new());
    items.iter().for_each(|it| w.write_item(it).unwrap());
    let bytes = w.into_inner();
    let mut dec = StreamDecoder::default().with_pool(BufferPool::default());
    for piece in bytes.chunks(13) {
        dec.write_all(piece).unwrap();
    }
    dec.finish().unwrap();
    assert_same(&items, &drain(&mut dec));
}

/// Addresses of every buffer of every tensor in `items`.
fn addresses(items: &[Item]) -> Vec<usize> {
    fn walk(item: &Item, out: &mut Vec<usize>) {
        match item {
            Item::Tensor(t) => out.extend(
                t.buffers()
                    .iter()
                    .filter(|b| !b.is_empty())
                    .map(|b| b.as_slice().as_ptr() as usize),
            ),
            Item::Composite(c) => c.members.iter().for_each(|m| walk(m, out)),
        }
    }
    let mut out = Vec::new();
    items.iter().for_each(|it| walk(it, &mut out));
    out
}

#[test]
fn a_pooled_decoder_reuses_the_memory_of_dropped_tensors() {
    let t = filled(
        hurray_core::TensorDescriptor::dense(hurray_core::ElementType::Float32, &[1 << 18])
            .unwrap(),
        3,
    );
    let items = vec![Item::Tensor(t.clone()); 3];
    let pool = BufferPool::new(16 << 20);
    let mut dec = StreamDecoder::default().with_pool(pool.clone());

    push(&items, &mut dec);
    let first = drain(&mut dec);
    assert_same(&items, &first);
    let first_addrs = addresses(&first);
    assert_eq!(pool.stats().allocated, 3);
    assert_eq!(pool.stats().idle_buffers, 0, "all three are in use");
    drop(first);
    assert_eq!(pool.stats().idle_buffers, 3);

    // The next three tensors land in the same three allocations: no new memory.
    push(&items, &mut dec);
    let second = drain(&mut dec);
    assert_same(&items, &second);
    let mut a = first_addrs.clone();
    let mut b = addresses(&second);
    a.sort_unstable();
    b.sort_unstable();
    assert_eq!(a, b);
    let s = pool.stats();
    assert_eq!((s.allocated, s.reused, s.idle_buffers), (3, 3, 0));

    // A reader over a byte source shares the pool the same way.
    drop(second);
    let mut w = StreamWriter::new(Vec::new());
    w.write_tensor(&t).unwrap();
    let bytes = w.into_inner();
    let got: Vec<Item> =
        StreamReader::with_decoder(&bytes[..], StreamDecoder::default().with_pool(pool.clone()))
            .collect::<Result<_, _>>()
            .unwrap();
    assert_eq!(got, vec![Item::Tensor(t)]);
    assert!(first_addrs.contains(&addresses(&got)[0]));
    assert_eq!(pool.stats().allocated, 3);
}

#[test]
fn stale_bytes_of_a_reused_allocation_never_reach_a_tensor() {
    let pool = BufferPool::default();
    let d = hurray_core::TensorDescriptor::dense(hurray_core::ElementType::Uint8, &[4096]).unwrap();
    let old = Tensor::from_dense(hurray_core::ElementType::Uint8, &[4096], &[0xAA; 4096]).unwrap();
    let mut dec = StreamDecoder::default().with_pool(pool.clone());
    push(&[Item::Tensor(old)], &mut dec);
    drop(drain(&mut dec));

    // A cut stream: the reused allocation is filled half-way, then input ends.
    let new = filled(d, 9);
    let mut w = StreamWriter::new(Vec::new());
    w.write_tensor(&new).unwrap();
    let bytes = w.into_inner();
    let cut = bytes.len() - 2048;
    let mut dec = StreamDecoder::default().with_pool(pool.clone());
    dec.write_all(&bytes[..cut]).unwrap();
    let err = dec.finish().unwrap_err();
    assert!(
        matches!(err, Error::Format { rule: FormatRule::Truncated, offset, .. } if offset == cut as u64),
        "{err:?}"
    );
    assert!(dec.next_item().is_none(), "no partial tensor is handed out");

    // The whole stream into the same (reused) allocation: exactly the new bytes.
    let mut dec = StreamDecoder::default().with_pool(pool.clone());
    dec.write_all(&bytes).unwrap();
    let got = drain(&mut dec);
    assert_eq!(got, vec![Item::Tensor(new)]);
    assert!(pool.stats().reused >= 2);
}

#[test]
fn a_bad_stream_pushed_in_fails_the_writer_with_the_rule_and_offset() {
    let t = Tensor::from_dense(hurray_core::ElementType::Uint8, &[8], &[1; 8]).unwrap();
    let mut w = StreamWriter::new(Vec::new());
    w.write_tensor(&t).unwrap();
    let mut bytes = w.into_inner();
    let good = bytes.clone();
    bytes.extend_from_slice(&good);
    let second = good.len();
    bytes[second] = b'X'; // the second descriptor's magic

    let mut dec = StreamDecoder::default();
    let err = dec.write_all(&bytes).unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::InvalidData);
    let inner = err.into_inner().unwrap().downcast::<Error>().unwrap();
    match *inner {
        Error::Descriptor { at, ref source } => {
            assert_eq!(at, second as u64);
            assert_eq!(source.offset, 0, "{source}");
        }
        ref other => panic!("unexpected {other:?}"),
    }
    // The first tensor arrived; then the same error once; then nothing.
    assert_eq!(dec.next_item().unwrap().unwrap(), Item::Tensor(t));
    assert!(matches!(
        dec.next_item(),
        Some(Err(Error::Descriptor { .. }))
    ));
    assert!(dec.next_item().is_none());
    assert!(dec.write(&[0]).is_err());

    let mut done = StreamDecoder::default();
    done.finish().unwrap();
    let err = done.write(&good).unwrap_err();
    assert!(err.to_string().contains("finished"), "{err}");
    assert_eq!(done.write(&[]).unwrap(), 0);
}

#[test]
fn the_owner_of_a_pooled_buffer_shows_only_that_buffer() {
    let pool = BufferPool::default();
    let big = Tensor::from_dense(hurray_core::ElementType::Uint8, &[8192], &[0xAA; 8192]).unwrap();
    let mut dec = StreamDecoder::default().with_pool(pool.clone());
    push(&[Item::Tensor(big)], &mut dec);
    drop(drain(&mut dec));
    let small =
        Tensor::from_dense(hurray_core::ElementType::Uint8, &[4100], &[0x11; 4100]).unwrap();
    push(&[Item::Tensor(small)], &mut dec);
    let got = drain(&mut dec);
    assert_eq!(
        pool.stats().reused,
        1,
        "the 8192-byte allocation was reused"
    );
    let Item::Tensor(t) = &got[0] else {
        panic!("not a tensor")
    };
    let b = &t.buffers()[0];
    assert_eq!(
        b.owner().bytes().len(),
        4100,
        "no stale tail behind the buffer"
    );
    assert!(b.owner().bytes().iter().all(|&x| x == 0x11));
    assert_eq!(b.owner().bytes().as_ptr(), b.as_slice().as_ptr());
}

/// Memory of a test allocator: a `Vec` viewed from an offset (0 for aligned, 1 for
/// misaligned), counting drops.
struct TestMem {
    bytes: Vec<u8>,
    at: usize,
    len: usize,
    drops: std::sync::Arc<std::sync::atomic::AtomicUsize>,
}

impl hurray_io::BufferMemory for TestMem {
    fn as_slice(&self) -> &[u8] {
        &self.bytes[self.at..self.at + self.len]
    }
    fn as_mut_slice(&mut self) -> &mut [u8] {
        &mut self.bytes[self.at..self.at + self.len]
    }
}

impl Drop for TestMem {
    fn drop(&mut self) {
        self.drops.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }
}

/// Hands out `Vec`s, 64-byte aligned (or deliberately off by one, or short).
struct TestAlloc {
    skew: usize,
    short: usize,
    calls: std::sync::atomic::AtomicUsize,
    drops: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    addrs: std::sync::Mutex<Vec<(usize, usize)>>,
}

impl TestAlloc {
    fn new(skew: usize, short: usize) -> std::sync::Arc<TestAlloc> {
        std::sync::Arc::new(TestAlloc {
            skew,
            short,
            calls: Default::default(),
            drops: Default::default(),
            addrs: Default::default(),
        })
    }
}

impl hurray_io::BufferAllocator for TestAlloc {
    fn allocate(&self, len: usize, align: usize) -> Option<Box<dyn hurray_io::BufferMemory>> {
        self.calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let bytes = vec![0xEEu8; len + align + 64];
        let base = bytes.as_ptr() as usize;
        let at = (align - base % align) % align + self.skew;
        self.addrs.lock().unwrap().push((base + at, len));
        Some(Box::new(TestMem {
            bytes,
            at,
            len: len - self.short,
            drops: self.drops.clone(),
        }))
    }
}

#[test]
fn a_custom_allocator_provides_every_buffer_and_sees_it_dropped_once() {
    let items = all_items();
    let alloc = TestAlloc::new(0, 0);
    let mut dec = StreamDecoder::default().with_allocator(alloc.clone());
    push(&items, &mut dec);
    let got = drain(&mut dec);
    assert_same(&items, &got);
    got.iter().for_each(assert_aligned);
    let calls = alloc.calls.load(std::sync::atomic::Ordering::SeqCst);
    let addrs = addresses(&got);
    assert_eq!(addrs.len(), calls, "one allocation per non-empty buffer");
    let ranges = alloc.addrs.lock().unwrap().clone();
    for a in &addrs {
        assert!(
            ranges.iter().any(|&(s, l)| *a >= s && *a < s + l),
            "buffer at {a:#x} is not in the allocator's memory"
        );
    }
    assert_eq!(alloc.drops.load(std::sync::atomic::Ordering::SeqCst), 0);
    drop(got);
    assert_eq!(alloc.drops.load(std::sync::atomic::Ordering::SeqCst), calls);
}

#[test]
fn an_allocator_returning_misaligned_or_short_memory_fails_the_stream() {
    let t = Tensor::from_dense(hurray_core::ElementType::Uint8, &[100], &[5; 100]).unwrap();
    let mut w = StreamWriter::new(Vec::new());
    w.write_tensor(&t).unwrap();
    let bytes = w.into_inner();
    for (skew, short, what) in [(1, 0, "address"), (0, 1, "bytes")] {
        let alloc = TestAlloc::new(skew, short);
        let mut dec = StreamDecoder::default().with_allocator(alloc.clone());
        assert!(dec.write_all(&bytes).is_err());
        match dec.next_item() {
            Some(Err(Error::Format {
                rule: FormatRule::Limit,
                detail,
                ..
            })) => assert!(
                detail.contains("allocator") && detail.contains(what),
                "{detail}"
            ),
            other => panic!("{what}: {other:?}"),
        }
        assert_eq!(alloc.drops.load(std::sync::atomic::Ordering::SeqCst), 1);
    }
}
