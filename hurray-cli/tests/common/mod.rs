//! Helpers shared by the CLI integration tests: running the built `hurray` binary
//! and making small input files.

#![allow(dead_code)] // each test binary uses a different subset

use safetensors::tensor::{Dtype, TensorView};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Runs `hurray ARGS...` and returns its output.
pub fn hurray<I, S>(args: I) -> Output
where
    I: IntoIterator<Item = S>,
    S: AsRef<std::ffi::OsStr>,
{
    Command::new(env!("CARGO_BIN_EXE_hurray"))
        .args(args)
        .output()
        .expect("the hurray binary runs")
}

/// Runs `hurray ARGS...` in directory `dir`.
pub fn hurray_in<I, S>(dir: &Path, args: I) -> Output
where
    I: IntoIterator<Item = S>,
    S: AsRef<std::ffi::OsStr>,
{
    Command::new(env!("CARGO_BIN_EXE_hurray"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("the hurray binary runs")
}

/// Standard output as text.
pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Standard error as text.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Asserts success and returns standard output.
pub fn ok(o: Output) -> String {
    assert!(
        o.status.success(),
        "hurray failed: {:?}\nstdout: {}\nstderr: {}",
        o.status,
        stdout(&o),
        stderr(&o)
    );
    stdout(&o)
}

/// Asserts the failure contract: exit status 1 (not a panic's 101), exactly one line
/// on standard error starting `hurray: error: `; returns that line.
pub fn fails(o: Output) -> String {
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "expected exit 1, stderr: {err}");
    assert!(!err.contains("panicked"), "panic: {err}");
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 1, "expected one line, got: {err:?}");
    assert!(lines[0].starts_with("hurray: error: "), "{err}");
    lines[0].to_owned()
}

/// Files in `dir` (names), sorted.
pub fn files_in(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// Writes a safetensors file of `(name, dtype, shape, bytes)` with `metadata`.
pub fn write_safetensors(
    path: &Path,
    tensors: &[(&str, Dtype, Vec<usize>, Vec<u8>)],
    metadata: &[(&str, &str)],
) {
    let views: Vec<(String, TensorView<'_>)> = tensors
        .iter()
        .map(|(n, d, s, b)| (n.to_string(), TensorView::new(*d, s.clone(), b).unwrap()))
        .collect();
    let meta: HashMap<String, String> = metadata
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let meta = (!meta.is_empty()).then_some(meta);
    safetensors::serialize_to_file(views, meta, path).unwrap();
}

/// Deterministic pseudo-random bytes.
pub fn bytes(n: usize, seed: u8) -> Vec<u8> {
    let mut x = u32::from(seed)
        .wrapping_mul(2_654_435_761)
        .wrapping_add(12_345);
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            (x >> 8) as u8
        })
        .collect()
}

/// A small model in the shape of a transformer checkpoint: several float32
/// matrices, a float16 and a bfloat16 tensor, an int64 position table, metadata.
pub fn small_model(dir: &Path) -> PathBuf {
    let p = dir.join("model.safetensors");
    let f16: Vec<u8> = [1.0f32, -2.5, 0.333, 65504.0]
        .iter()
        .flat_map(|&v| half::f16::from_f32(v).to_le_bytes())
        .collect();
    let bf16: Vec<u8> = [1.0f32, -0.5, 3.0e38, 1e-3]
        .iter()
        .flat_map(|&v| half::bf16::from_f32(v).to_le_bytes())
        .collect();
    let pos: Vec<u8> = (0i64..16).flat_map(|v| v.to_le_bytes()).collect();
    write_safetensors(
        &p,
        &[
            (
                "embeddings.word_embeddings.weight",
                Dtype::F32,
                vec![64, 32],
                bytes(64 * 32 * 4, 1),
            ),
            ("embeddings.position_ids", Dtype::I64, vec![1, 16], pos),
            (
                "encoder.layer.0.dense.weight",
                Dtype::F32,
                vec![32, 32],
                bytes(32 * 32 * 4, 2),
            ),
            (
                "encoder.layer.0.dense.bias",
                Dtype::F32,
                vec![32],
                bytes(32 * 4, 3),
            ),
            ("head.half", Dtype::F16, vec![2, 2], f16),
            ("head.brain", Dtype::BF16, vec![4], bf16),
        ],
        &[("format", "pt")],
    );
    p
}
