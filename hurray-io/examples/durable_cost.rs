//! What durability costs: writes one 64 MiB file (8 float32 tensors of 8 MiB) with
//! `FileWriter`, `durable` on (`fsync` of the file before the rename, of the
//! directory after) and off, alternately, and prints the median and the fastest of
//! each.
//!
//! ```text
//! cargo run --release -p hurray-io --example durable_cost [-- DIR [RUNS]]
//! ```
//!
//! `DIR` (default: a temporary directory under `$TMPDIR`) should be on the disk you
//! care about: on tmpfs `fsync` is free. After each scratch write the file is synced
//! outside the timing, so no run inherits another's dirty pages. The numbers depend
//! entirely on the disk and the file system; nothing here asserts on them.

use hurray_core::ElementType;
use hurray_io::file::{FileWriter, WriteOptions};
use hurray_io::Tensor;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const MIB: usize = 1 << 20;

fn write(path: &Path, tensors: &[Tensor], durable: bool) -> Duration {
    let opts = WriteOptions {
        durable,
        ..WriteOptions::default()
    };
    let t = Instant::now();
    let mut w = FileWriter::create(path, opts).unwrap();
    for (i, x) in tensors.iter().enumerate() {
        w.write_tensor(&format!("t{i}"), x).unwrap();
    }
    w.finish().unwrap();
    let took = t.elapsed();
    if !durable {
        std::fs::File::open(path).unwrap().sync_all().unwrap();
    }
    std::fs::remove_file(path).unwrap();
    took
}

fn summary(mut v: Vec<Duration>) -> (Duration, Duration) {
    v.sort();
    (v[v.len() / 2], v[0])
}

fn main() {
    let mut args = std::env::args().skip(1);
    let temp;
    let dir: PathBuf = match args.next() {
        Some(d) => d.into(),
        None => {
            temp = tempfile::tempdir().unwrap();
            temp.path().to_path_buf()
        }
    };
    let runs: usize = args.next().map_or(9, |r| r.parse().unwrap());
    let tensors: Vec<Tensor> = (0..8u8)
        .map(|i| {
            let bytes: Vec<u8> = (0..8 * MIB).map(|k| (k as u8).wrapping_add(i)).collect();
            Tensor::from_dense(ElementType::Float32, &[(2 * MIB) as u64], &bytes).unwrap()
        })
        .collect();
    let path = dir.join("cost.hrry");
    write(&path, &tensors, true); // warm-up
    let (mut durable, mut scratch) = (Vec::new(), Vec::new());
    for _ in 0..runs {
        durable.push(write(&path, &tensors, true));
        scratch.push(write(&path, &tensors, false));
    }
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let (dm, df) = summary(durable);
    let (sm, sf) = summary(scratch);
    println!("64 MiB file in {}, {runs} runs each:", dir.display());
    println!(
        "  durable (fsync file + dir): median {:8.1} ms, fastest {:8.1} ms",
        ms(dm),
        ms(df)
    );
    println!(
        "  durable: false            : median {:8.1} ms, fastest {:8.1} ms",
        ms(sm),
        ms(sf)
    );
    println!("  ratio of medians           {:.2}x", ms(dm) / ms(sm));
}
