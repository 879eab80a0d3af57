//! Stream write + read of one 256 MiB float32 tensor through memory, against a plain
//! memcpy of 256 MiB, measured in the same run (issue: at least 0.8 of memcpy
//! throughput; Arrow's IPC stream does the same work with one copy in total).
//!
//! Two ways through memory, both exactly the spec's bytes:
//!
//! - **pushed** (`write_push_read*`): a `StreamWriter` over a `&mut StreamDecoder`.
//!   The writer emits the descriptor bytes and then the tensor's own buffer (never
//!   copied by the writer); the decoder copies each payload byte straight into the
//!   final 64-byte-aligned buffer of the tensor it hands out. One copy in total, as
//!   Arrow's. This is the in-process case, and the same path a reader takes from a
//!   socket (kernel buffer -> final buffer).
//! - **materialised** (`write_read*`): the writer fills a `Vec<u8>` (one copy), then a
//!   `StreamReader` reads that slice (a second copy: the stream format has no padding,
//!   so a payload inside a byte buffer is not 64-byte aligned and cannot be handed out
//!   as a view). Two copies: its ideal is half a memcpy's throughput.
//!
//! Where the reader's buffers come from matters as much as the number of copies:
//! fresh memory from the OS costs a page fault and a kernel-zeroed page on first touch
//! (`AlignedBuf::zeroed`: an anonymous mapping advised to use transparent huge pages,
//! the cheapest fresh memory there is), while a copy into mapped memory runs at
//! memcpy speed. The `*_pooled` cases give the decoder a `BufferPool`: each iteration
//! drops the tensor it read, its allocation returns to the pool and the next read
//! fills it again, as a consumer of a steady flow of tensors would (and as Arrow's
//! jemalloc/mimalloc pools do for its writes).
//!
//! Baselines: memcpy into a warm, reused destination, both a plain `Vec` and a
//! huge-page-backed `AlignedBuf` like the reader's own buffers (the faster of the two
//! is the hardware ceiling and the denominator of every ratio); into a fresh
//! allocation (`to_vec`, page faults included); into a fresh `vec![0; n]` (calloc);
//! into a fresh `AlignedBuf::zeroed`.
//!
//! Criterion reports each case's throughput; the summary at the end times each case
//! again (median of several interleaved runs) and prints the ratios to memcpy.

use criterion::{black_box, BenchmarkId, Criterion, Throughput};
use hurray_core::ElementType;
use hurray_io::{AlignedBuf, BufferPool, Item, StreamDecoder, StreamReader, StreamWriter, Tensor};
use std::time::{Duration, Instant};

const SIZE: usize = 256 << 20;

fn tensor() -> Tensor {
    let bytes: Vec<u8> = (0..SIZE).map(|i| (i * 31 + 7) as u8).collect();
    Tensor::from_dense(ElementType::Float32, &[(SIZE / 4) as u64], &bytes).unwrap()
}

fn write(t: &Tensor, out: &mut Vec<u8>) {
    out.clear();
    let mut w = StreamWriter::new(out);
    w.write_tensor(t).unwrap();
}

fn decoder(trusting: bool, pool: Option<&BufferPool>) -> StreamDecoder {
    let mut dec = StreamDecoder::default();
    if trusting {
        dec = dec.with_eager_alloc(usize::MAX);
    }
    if let Some(pool) = pool {
        dec = dec.with_pool(pool.clone());
    }
    dec
}

fn read(bytes: &[u8], trusting: bool, pool: Option<&BufferPool>) -> Item {
    let mut r = StreamReader::with_decoder(bytes, decoder(trusting, pool));
    r.next().unwrap().unwrap()
}

/// Write `t` into a decoder and take the tensor out: the stream never exists whole.
fn write_push_read(t: &Tensor, pool: Option<&BufferPool>) -> Item {
    let mut dec = decoder(false, pool);
    StreamWriter::new(&mut dec).write_tensor(t).unwrap();
    dec.next_item().unwrap().unwrap()
}

struct Cases {
    src: Vec<u8>,
    warm: Vec<u8>,
    warm_huge: AlignedBuf,
    t: Tensor,
    sink: Vec<u8>,
    stream: Vec<u8>,
    pool: BufferPool,
}

impl Cases {
    fn new() -> Cases {
        let t = tensor();
        let mut stream = Vec::new();
        write(&t, &mut stream);
        Cases {
            src: t.buffers()[0].as_slice().to_vec(),
            warm: vec![1u8; SIZE],
            warm_huge: {
                let mut b = AlignedBuf::zeroed(SIZE).unwrap();
                b.as_mut_slice().fill(1);
                b
            },
            t,
            sink: Vec::with_capacity(SIZE + 4096),
            stream,
            pool: BufferPool::default(),
        }
    }

    fn run(&mut self, case: &str) {
        match case {
            "memcpy_warm" => {
                self.warm.copy_from_slice(black_box(&self.src));
                black_box(&self.warm);
            }
            "memcpy_warm_hugepages" => {
                self.warm_huge
                    .as_mut_slice()
                    .copy_from_slice(black_box(&self.src));
                black_box(&self.warm_huge);
            }
            "memcpy_fresh" => {
                black_box(black_box(&self.src).to_vec());
            }
            "calloc_copy" => {
                let mut v = vec![0u8; SIZE];
                v.copy_from_slice(black_box(&self.src));
                black_box(v);
            }
            "aligned_zeroed_copy" => {
                let mut b = AlignedBuf::zeroed(SIZE).unwrap();
                b.as_mut_slice().copy_from_slice(black_box(&self.src));
                black_box(b);
            }
            "write" => write(black_box(&self.t), &mut self.sink),
            "read_default" => {
                black_box(read(black_box(&self.stream), false, None));
            }
            "read_trusting" => {
                black_box(read(black_box(&self.stream), true, None));
            }
            "read_pooled" => {
                black_box(read(black_box(&self.stream), false, Some(&self.pool)));
            }
            "write_push_read" => {
                black_box(write_push_read(black_box(&self.t), None));
            }
            "write_push_read_pooled" => {
                black_box(write_push_read(black_box(&self.t), Some(&self.pool)));
            }
            "write_read_default" => {
                write(black_box(&self.t), &mut self.sink);
                black_box(read(&self.sink, false, None));
            }
            "write_read_pooled" => {
                write(black_box(&self.t), &mut self.sink);
                black_box(read(&self.sink, false, Some(&self.pool)));
            }
            other => panic!("unknown case {other}"),
        }
    }
}

const CASES: [&str; 13] = [
    "memcpy_warm",
    "memcpy_warm_hugepages",
    "memcpy_fresh",
    "calloc_copy",
    "aligned_zeroed_copy",
    "write",
    "read_default",
    "read_trusting",
    "read_pooled",
    "write_push_read",
    "write_push_read_pooled",
    "write_read_default",
    "write_read_pooled",
];

fn main() {
    let mut cases = Cases::new();
    let sent = Item::Tensor(cases.t.clone());
    assert_eq!(read(&cases.stream, true, None), sent);
    assert_eq!(read(&cases.stream, false, Some(&cases.pool)), sent);
    assert_eq!(write_push_read(&cases.t, None), sent);
    for _ in 0..2 {
        let got = write_push_read(&cases.t, Some(&cases.pool));
        assert_eq!(got, sent);
    }
    // Steady state: the pooled cases reuse one allocation.
    assert_eq!(cases.pool.stats().allocated, 1, "{:?}", cases.pool);

    let mut c = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3))
        .configure_from_args();
    {
        let mut g = c.benchmark_group("stream_256MiB_f32");
        g.throughput(Throughput::Bytes(SIZE as u64));
        for case in CASES {
            g.bench_function(BenchmarkId::from_parameter(case), |b| {
                b.iter(|| cases.run(case))
            });
        }
        g.finish();
    }
    c.final_summary();

    // Summary: medians of a few runs of each case, interleaved, in this same process.
    const RUNS: usize = 7;
    let mut times: Vec<Vec<f64>> = vec![Vec::new(); CASES.len()];
    for _ in 0..RUNS {
        for (i, case) in CASES.iter().enumerate() {
            let t0 = Instant::now();
            cases.run(case);
            times[i].push(t0.elapsed().as_secs_f64());
        }
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let med: Vec<f64> = times.iter_mut().map(median).collect();
    let gib = SIZE as f64 / f64::from(1u32 << 30);
    println!("\nsummary (median of {RUNS} runs, 256 MiB payload):");
    // The denominator: the faster of the two warm memcpys (into a plain `Vec`, and
    // into a huge-page-backed allocation like the reader's own buffers).
    let best = med[0].min(med[1]);
    println!(
        "{:<24} {:>8} {:>8} {:>13} {:>12}",
        "case", "ms", "GiB/s", "vs best cpy", "vs fresh cpy"
    );
    for (i, case) in CASES.iter().enumerate() {
        println!(
            "{:<24} {:>8.1} {:>8.2} {:>13.2} {:>12.2}",
            case,
            med[i] * 1e3,
            gib / med[i],
            best / med[i],
            med[2] / med[i],
        );
    }
    println!(
        "(ratio = memcpy time / case time; write_push_read* is one copy in total, \
         write_read* two, so their ideals are 1.0 and 0.5)"
    );
    let pool = cases.pool.stats();
    println!(
        "pool: {} allocations from the system, {} reuses",
        pool.allocated, pool.reused
    );
}
