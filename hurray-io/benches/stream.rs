//! Stream write + read of one 256 MiB float32 tensor through memory, against a plain
//! memcpy of 256 MiB, measured in the same run.
//!
//! What "one copy" means here: the writer copies each payload byte once (tensor
//! buffer -> the `Vec<u8>` sink; with a socket that copy is the kernel's), and the
//! reader copies each byte once (`&[u8]` source -> the tensor's final aligned buffer;
//! with a socket, kernel buffer -> final buffer). A round trip through memory is
//! therefore two copies, and its ideal throughput is half a memcpy's; each half on
//! its own should come close to one memcpy.
//!
//! Memcpy baselines: into a warm, reused destination (the hardware ceiling); into a
//! fresh allocation (`to_vec`, page faults included), which is what any reader that
//! hands out a new tensor must pay at least; into a fresh `vec![0; n]` (calloc: pages
//! the kernel zeroes on first touch); and into a fresh `AlignedBuf::zeroed`, which is
//! the floor for this reader. `AlignedBuf::zeroed` writes nothing up front: below
//! 1 MiB it is a calloc, from 1 MiB on an anonymous mapping advised to use
//! transparent huge pages, so the kernel zeroes pages on first touch (2 MiB at a
//! time where huge pages are granted) and the copy is the only pass over the bytes.
//!
//! The reader is measured with its default allocation policy and with a trusting
//! one (`with_eager_alloc(usize::MAX)`). By default a buffer of up to 1 GiB
//! (`DEFAULT_EAGER_ALLOC`) is allocated at its final size as soon as its descriptor
//! is accepted (address space only; pages commit as bytes arrive), and only larger
//! ones grow by doubling; so for this 256 MiB tensor both policies allocate once and
//! write each byte once, and should measure the same.
//!
//! Criterion reports each case's throughput; the summary at the end times each case
//! again (median of several runs) and prints the ratios to memcpy.

use criterion::{black_box, BenchmarkId, Criterion, Throughput};
use hurray_core::ElementType;
use hurray_io::{AlignedBuf, Item, StreamDecoder, StreamReader, StreamWriter, Tensor};
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

fn read(bytes: &[u8], trusting: bool) -> Item {
    let mut dec = StreamDecoder::default();
    if trusting {
        dec = dec.with_eager_alloc(usize::MAX);
    }
    let mut r = StreamReader::with_decoder(bytes, dec);
    r.next().unwrap().unwrap()
}

struct Cases {
    src: Vec<u8>,
    warm: Vec<u8>,
    t: Tensor,
    sink: Vec<u8>,
    stream: Vec<u8>,
}

impl Cases {
    fn new() -> Cases {
        let t = tensor();
        let mut stream = Vec::new();
        write(&t, &mut stream);
        Cases {
            src: t.buffers()[0].as_slice().to_vec(),
            warm: vec![1u8; SIZE],
            t,
            sink: Vec::with_capacity(SIZE + 4096),
            stream,
        }
    }

    fn run(&mut self, case: &str) {
        match case {
            "memcpy_warm" => {
                self.warm.copy_from_slice(black_box(&self.src));
                black_box(&self.warm);
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
                black_box(read(black_box(&self.stream), false));
            }
            "read_trusting" => {
                black_box(read(black_box(&self.stream), true));
            }
            "write_read_default" => {
                write(black_box(&self.t), &mut self.sink);
                black_box(read(&self.sink, false));
            }
            "write_read_trusting" => {
                write(black_box(&self.t), &mut self.sink);
                black_box(read(&self.sink, true));
            }
            other => panic!("unknown case {other}"),
        }
    }
}

const CASES: [&str; 9] = [
    "memcpy_warm",
    "memcpy_fresh",
    "calloc_copy",
    "aligned_zeroed_copy",
    "write",
    "read_default",
    "read_trusting",
    "write_read_default",
    "write_read_trusting",
];

fn main() {
    let mut cases = Cases::new();
    assert_eq!(read(&cases.stream, true), Item::Tensor(cases.t.clone()));

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
    println!(
        "{:<22} {:>9} {:>9} {:>12} {:>12}",
        "case", "ms", "GiB/s", "vs warm cpy", "vs fresh cpy"
    );
    for (i, case) in CASES.iter().enumerate() {
        println!(
            "{:<22} {:>9.1} {:>9.2} {:>12.2} {:>12.2}",
            case,
            med[i] * 1e3,
            gib / med[i],
            med[0] / med[i],
            med[1] / med[i],
        );
    }
    println!(
        "(ratio = memcpy time / case time; a write+read round trip is two copies, \
         so its ideal ratio is 0.5)"
    );
}
