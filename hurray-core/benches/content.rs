//! The buffer-content check (`hurray_core::content`) on a CSR matrix with 10^7
//! non-zeros, against one `memcpy` pass over the same buffers (issue goal: the check
//! within 2x of the copy). Both read every byte of `col_indices` and `row_ptr`; the
//! copy also moves `values`, which the check never reads, so the ratio printed is
//! the check's time over the time to copy all three buffers once.
//!
//! `cargo bench -p hurray-core --bench content`; the summary line at the end prints
//! the medians and the ratio.

use criterion::{criterion_group, Criterion};
use hurray_core::content::check_content;
use hurray_core::{BufferHandle, ElementType, Layout, TensorDescriptor};
use std::hint::black_box;
use std::time::{Duration, Instant};

const ROWS: u64 = 100_000;
const COLS: u64 = 1_000_000;
const NNZ: u64 = 10_000_000;

/// A valid CSR f32 [ROWS, COLS] with NNZ entries, 100 per row at spread columns.
fn csr() -> (TensorDescriptor, Vec<Vec<u8>>) {
    let per_row = NNZ / ROWS;
    let values = vec![0u8; (NNZ * 4) as usize];
    let mut cols = Vec::with_capacity((NNZ * 8) as usize);
    let mut ptr = Vec::with_capacity(((ROWS + 1) * 8) as usize);
    ptr.extend(0u64.to_le_bytes());
    for r in 0..ROWS {
        for k in 0..per_row {
            cols.extend((k * (COLS / per_row) + r % 7).to_le_bytes());
        }
        ptr.extend(((r + 1) * per_row).to_le_bytes());
    }
    let mut d = TensorDescriptor::dense(ElementType::Float32, &[ROWS, COLS]).unwrap();
    d.layout = Layout::Csr { nnz: NNZ };
    let bufs = vec![values, cols, ptr];
    d.buffers = bufs
        .iter()
        .map(|b| BufferHandle::cpu(b.len() as u64))
        .collect();
    d.validate().unwrap();
    (d, bufs)
}

fn bench(c: &mut Criterion) {
    let (d, bufs) = csr();
    let slices: Vec<&[u8]> = bufs.iter().map(|b| b.as_slice()).collect();
    check_content(&d, &slices).expect("the benchmark matrix is valid");
    let mut dst: Vec<Vec<u8>> = bufs.iter().map(|b| vec![1u8; b.len()]).collect();
    let mut g = c.benchmark_group("content_csr_1e7");
    g.sample_size(20).measurement_time(Duration::from_secs(4));
    g.bench_function("check_content", |b| {
        b.iter(|| check_content(black_box(&d), black_box(&slices)).unwrap())
    });
    g.bench_function("memcpy_all_buffers", |b| {
        b.iter(|| {
            for (s, t) in bufs.iter().zip(dst.iter_mut()) {
                t.copy_from_slice(black_box(s));
            }
            black_box(&dst);
        })
    });
    g.finish();
    // A summary from medians of our own timing, so the ratio is printed in one line.
    let median = |f: &mut dyn FnMut()| {
        let mut t: Vec<f64> = (0..15)
            .map(|_| {
                let s = Instant::now();
                f();
                s.elapsed().as_secs_f64()
            })
            .collect();
        t.sort_by(f64::total_cmp);
        t[t.len() / 2]
    };
    let check = median(&mut || check_content(&d, &slices).unwrap());
    let copy = median(&mut || {
        for (s, t) in bufs.iter().zip(dst.iter_mut()) {
            t.copy_from_slice(black_box(s));
        }
        black_box(&dst);
    });
    println!(
        "summary: CSR nnz 1e7 ({} MiB of buffers): check_content {:.2} ms, memcpy of all buffers {:.2} ms, ratio {:.2} (goal <= 2)",
        bufs.iter().map(Vec::len).sum::<usize>() >> 20,
        check * 1e3,
        copy * 1e3,
        check / copy
    );
}

criterion_group!(benches, bench);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
}
