//! HRRYFILE benchmarks (run once with `cargo bench -p hurray-io --bench file`).
//!
//! (a) Open a memory-mapped file and get a zero-copy view of its one tensor, for a
//!     1 MiB and a 1 GiB tensor. Opening validates the header, trailer, index (CRC),
//!     KV and descriptors, never the payload, so both should take about the same
//!     time (goal: within 2x): no payload byte is read or copied.
//! (b) Write a file of 100 float32 tensors totalling 1 GiB with `FileWriter` (temp
//!     file + rename; `durable: false`, like the baseline) against `std::fs::write` of
//!     a prepared 1 GiB `Vec`. Files are deleted after each iteration.
//!
//! Disk use: one 1 GiB file for (a) and one at a time for (b), in a temporary
//! directory removed at the end. The summary times each case again (median of a few
//! runs) and prints the ratios.
//!
//! Under `cargo test` (no `--bench` argument) it prints a note and does nothing.

use criterion::{black_box, BenchmarkId, Criterion, Throughput};
use hurray_core::ElementType;
use hurray_io::file::{FileReader, FileWriter, WriteOptions};
use hurray_io::Tensor;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const MIB: usize = 1 << 20;
const GIB: usize = 1 << 30;

fn f32_tensor(bytes: usize, seed: usize) -> Tensor {
    let data: Vec<u8> = (0..bytes).map(|i| (i * 31 + seed) as u8).collect();
    Tensor::from_dense(ElementType::Float32, &[(bytes / 4) as u64], &data).unwrap()
}

fn no_sync() -> WriteOptions {
    WriteOptions {
        durable: false,
        ..WriteOptions::default()
    }
}

fn write_one(path: &Path, t: &Tensor) {
    let mut w = FileWriter::create(path, no_sync()).unwrap();
    w.write_tensor("w", t).unwrap();
    w.finish().unwrap();
}

fn open_and_view(path: &Path) -> usize {
    let r = FileReader::open(path).unwrap();
    let t = r.tensor("w").unwrap().unwrap();
    black_box(t.buffers()[0].as_slice().as_ptr()) as usize
}

struct WriteCase {
    tensors: Vec<Tensor>,
    flat: Vec<u8>,
    dir: PathBuf,
}

impl WriteCase {
    fn new(dir: &Path) -> WriteCase {
        // 100 tensors of 1 GiB / 100, rounded down to whole f32 elements.
        let each = (GIB / 100) & !3;
        let tensors: Vec<Tensor> = (0..100).map(|i| f32_tensor(each, i)).collect();
        let flat: Vec<u8> = (0..GIB).map(|i| (i * 13 + 1) as u8).collect();
        WriteCase {
            tensors,
            flat,
            dir: dir.to_path_buf(),
        }
    }

    fn writer(&self) {
        let path = self.dir.join("hundred.hrry");
        let mut w = FileWriter::create(&path, no_sync()).unwrap();
        for (i, t) in self.tensors.iter().enumerate() {
            w.write_tensor(&format!("t{i:03}"), t).unwrap();
        }
        w.finish().unwrap();
        std::fs::remove_file(&path).unwrap();
    }

    fn baseline(&self) {
        let path = self.dir.join("flat.bin");
        std::fs::write(&path, &self.flat).unwrap();
        std::fs::remove_file(&path).unwrap();
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn time(runs: usize, mut f: impl FnMut()) -> f64 {
    median(
        (0..runs)
            .map(|_| {
                let t0 = Instant::now();
                f();
                t0.elapsed().as_secs_f64()
            })
            .collect(),
    )
}

fn main() {
    if !std::env::args().any(|a| a == "--bench") {
        eprintln!("file benchmarks run only under `cargo bench` (they write 1 GiB files)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let small = dir.path().join("1MiB.hrry");
    let large = dir.path().join("1GiB.hrry");
    write_one(&small, &f32_tensor(MIB, 1));
    write_one(&large, &f32_tensor(GIB, 2));
    assert_eq!(
        FileReader::open(&large)
            .unwrap()
            .tensor("w")
            .unwrap()
            .unwrap()
            .data_len(),
        GIB as u64
    );

    let mut c = Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3))
        .configure_from_args();
    {
        let mut g = c.benchmark_group("file_open_mmap_and_view");
        for (name, path) in [("1MiB", &small), ("1GiB", &large)] {
            g.bench_function(BenchmarkId::from_parameter(name), |b| {
                b.iter(|| open_and_view(path))
            });
        }
        g.finish();
    }
    let w = WriteCase::new(dir.path());
    {
        let mut g = c.benchmark_group("file_write_1GiB");
        g.sample_size(10)
            .measurement_time(Duration::from_secs(30))
            .throughput(Throughput::Bytes(GIB as u64));
        g.bench_function("file_writer_100_tensors", |b| b.iter(|| w.writer()));
        g.bench_function("std_fs_write_1_vec", |b| b.iter(|| w.baseline()));
        g.finish();
    }
    c.final_summary();

    // Summary: medians, in this same process.
    let open_small = time(201, || {
        open_and_view(&small);
    });
    let open_large = time(201, || {
        open_and_view(&large);
    });
    let (mut tw, mut tb) = (Vec::new(), Vec::new());
    for _ in 0..5 {
        tw.push(time(1, || w.writer()));
        tb.push(time(1, || w.baseline()));
    }
    let (tw, tb) = (median(tw), median(tb));
    println!("\nsummary (medians):");
    println!(
        "open + view, 1 MiB tensor: {:8.1} µs\nopen + view, 1 GiB tensor: {:8.1} µs\n  ratio 1 GiB / 1 MiB: {:.2} (goal ≤ 2)",
        open_small * 1e6,
        open_large * 1e6,
        open_large / open_small
    );
    let gibs = |t: f64| 1.0 / t;
    println!(
        "write 100 tensors, 1 GiB, FileWriter: {:7.1} ms ({:.2} GiB/s)\nstd::fs::write of 1 GiB:               {:7.1} ms ({:.2} GiB/s)\n  ratio FileWriter / fs::write: {:.2}",
        tw * 1e3,
        gibs(tw),
        tb * 1e3,
        gibs(tb),
        tw / tb
    );
}
