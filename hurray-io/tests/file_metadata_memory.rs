//! Memory for opening a file and reading its KV section and index stays a small
//! fraction of those sections' bytes (issue 16, item 2): the heap a reader allocates
//! while it opens a file and reads every KV element and every name is counted by a
//! counting global allocator, for the shapes that used to cost 19x to 40x (one KV
//! array of empty strings, one of bools, many composite heads), at a scale a debug
//! test runs quickly (the tables grow linearly, so the ratios are the same at
//! 16.7 M elements; `cargo xtask amplification` measures those files' peak RSS).
//!
//! One test in its own binary, so no other test allocates meanwhile.

use hurray_core::{
    CombineOp, CompositeHead, CompositionRule, ElementType, Layout, TensorDescriptor,
};
use hurray_io::file::{FileWriterTo, KvArray, KvValue, KvValueRef, ReadOptions, WriteOptions};
use hurray_io::{BufferOwner, Composite, FileReader, Tensor};
use std::alloc::{GlobalAlloc, Layout as AllocLayout, System};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::Arc;

/// The system allocator, counting the bytes live now and the peak since a reset.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is forwarded to `System` unchanged; only counters are added.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: AllocLayout) -> *mut u8 {
        // SAFETY: forwarded.
        let p = unsafe { System.alloc(l) };
        if !p.is_null() {
            let now = LIVE.fetch_add(l.size(), Relaxed) + l.size();
            PEAK.fetch_max(now, Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, l: AllocLayout) {
        // SAFETY: forwarded.
        unsafe { System.dealloc(p, l) };
        LIVE.fetch_sub(l.size(), Relaxed);
    }
    unsafe fn realloc(&self, p: *mut u8, l: AllocLayout, new: usize) -> *mut u8 {
        // SAFETY: forwarded.
        let q = unsafe { System.realloc(p, l, new) };
        if !q.is_null() {
            LIVE.fetch_sub(l.size(), Relaxed);
            let now = LIVE.fetch_add(new, Relaxed) + new;
            PEAK.fetch_max(now, Relaxed);
        }
        q
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// Heap bytes allocated at the peak of `f`, beyond what was live before it.
fn peak_of<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let before = LIVE.load(Relaxed);
    PEAK.store(before, Relaxed);
    let out = f();
    (out, PEAK.load(Relaxed) - before)
}

/// Opens `file` (already in memory: its bytes are not counted), reads every KV
/// element and every name, and returns the peak heap of all that with the bytes
/// that matter: the KV section, the index, and the tensor region (descriptors).
fn measure(file: Vec<u8>) -> (usize, u64, u64, u64, usize) {
    let owner: Arc<dyn BufferOwner> = Arc::new(file);
    let (r, peak) = peak_of(|| {
        let r = FileReader::from_owner(owner.clone(), &ReadOptions::default()).unwrap();
        let mut n = 0usize;
        for e in r.kv() {
            match e.value {
                KvValueRef::Array(a) => n += a.iter().count(),
                _ => n += 1,
            }
        }
        n += r.names().map(str::len).sum::<usize>();
        std::hint::black_box(n);
        r
    });
    let t = r.info().trailer;
    let kv = u64::from(t.kv_length);
    let first = if kv > 0 {
        t.kv_offset.min(t.index_offset)
    } else {
        t.index_offset
    };
    let tables = r.catalog().heap_bytes();
    (peak, kv, t.index_length, first - 64, tables)
}

fn write(kv: Option<KvValue>, heads: usize) -> Vec<u8> {
    let mut w = FileWriterTo::new(Vec::new(), WriteOptions::default()).unwrap();
    let head = TensorDescriptor {
        layout: Layout::CompositeHead(CompositeHead {
            rule: CompositionRule::Group,
            combine_op: CombineOp::None,
            member_count: 0,
        }),
        buffers: Vec::new(),
        ..TensorDescriptor::dense(ElementType::Float32, &[4]).unwrap()
    };
    let head = Composite {
        head: Tensor::new(head, Vec::new()).unwrap(),
        members: Vec::new(),
    };
    for i in 0..heads {
        w.write_composite_named(&[&format!("head{i:07}")], &head)
            .unwrap();
    }
    if let Some(v) = kv {
        w.add_kv("k", v).unwrap();
    }
    w.finish().unwrap()
}

#[test]
fn opening_and_reading_metadata_costs_a_fraction_of_its_bytes() {
    const N: usize = 1 << 20;
    let shapes = [
        (
            "1 M empty strings",
            write(
                Some(KvValue::Array(KvArray::String(vec![String::new(); N]))),
                0,
            ),
        ),
        (
            "1 M bools",
            write(
                Some(KvValue::Array(KvArray::Bool(
                    (0..N).map(|i| i % 3 == 0).collect(),
                ))),
                0,
            ),
        ),
        ("100 k composite heads", write(None, 100_000)),
    ];
    for (what, file) in shapes {
        let (peak, kv, index, region, tables) = measure(file);
        let sections = kv + index + region;
        let ratio = peak as f64 / sections as f64;
        println!(
            "{what}: KV {kv} + index {index} + descriptors {region} bytes; peak heap {peak} \
             bytes ({ratio:.3}x), tables {tables} bytes"
        );
        // The goal is memory within 2x of the sections, the sections themselves
        // (mapped or in memory) being 1x: the heap must stay under 1x. What it is:
        // under 0.05x (4 bytes per 64 string elements, 4 bytes per 45-byte index
        // entry and 48-byte descriptor, a few hundred bytes otherwise).
        assert!(
            ratio < 0.25,
            "{what}: peak heap {ratio:.3}x of the sections"
        );
        assert!(
            tables as u64 <= sections / 4,
            "{what}: tables {tables} bytes"
        );
    }
}
