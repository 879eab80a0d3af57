//! Crash consistency of [`FileWriter`]: a writer process killed with `SIGKILL` at
//! random points, over and over, never leaves a partial destination.
//!
//! The parent test starts a destination holding file `A`, then, [`KILLS`] times,
//! spawns a child writer process (this test binary run again, selecting
//! [`child_writer`]) that rewrites the destination in a loop, `B`, `A`, `B`, ...
//! (`A`: 3 tensors, 3 MiB; `B`: 4 tensors and a KV entry, 5 MiB), alternately with
//! `durable` on and off, and kills it after a random delay. The delays are fractions
//! of the child's runtime measured before the kills start (start-up plus one commit,
//! per mode), drawn from 0 to 1.5, so the kills land in the start-up, while the temporary file is
//! being written, during the `fsync`s and around the renames. After each kill the
//! destination must be byte for byte `A` or `B` (the one before, or a complete new
//! one), and the directory must hold nothing else than at most one temporary file,
//! named with the dead child's PID (see `hurray_io::file::commit`), which the test
//! then removes as a cleaner would.
//!
//! The delays come from a seeded generator (`HURRAY_CRASH_SEED`, printed), so a run
//! can be repeated with the same delays; where exactly each kill lands also depends
//! on scheduling, so an outcome is reproducible in distribution, not kill by kill.
//!
//! What this proves and what it cannot: it proves that the commit is atomic against
//! a crashing process (whatever instant the process dies, observers see the old or
//! the complete new file, never a partial one) in both modes, and that a dead
//! writer leaves at most its own, recognisable, temporary file. It cannot prove
//! durability against an OS crash or a power loss: after `SIGKILL` the kernel still
//! holds every byte written, with or without `fsync`, so the `fsync`s are not
//! exercised here (their order is checked by the unit tests of `file::commit`).

#![cfg(unix)]

use hurray_core::ElementType;
use hurray_io::file::{FileWriter, KvValue, WriteOptions};
use hurray_io::Tensor;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Real kills required (a child that exits by itself does not count).
const KILLS: usize = 200;
/// Set in the child's environment to the destination path.
const CHILD_ENV: &str = "HURRAY_CRASH_CHILD";
/// Set in the child's environment to `1` for durable commits, `0` for scratch.
const DURABLE_ENV: &str = "HURRAY_CRASH_DURABLE";
/// Set in the child's environment to the number of commits to make.
const ROUNDS_ENV: &str = "HURRAY_CRASH_ROUNDS";
/// Kill delays are drawn uniformly from `[0, SPAN)` times the measured runtime of a
/// child that commits once: from its start-up to past its first rename.
const SPAN: f64 = 1.5;
/// The destination's file name.
const DEST: &str = "model.hrry";
const MIB: usize = 1 << 20;

/// SplitMix64: a tiny, seedable generator, enough to spread delays.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `[0, 1)`.
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// A `uint8` tensor of `len` bytes, all `fill` except a position marker every 4 KiB
/// (so two versions differ all along, and a shifted or truncated copy shows).
fn tensor(len: usize, fill: u8) -> Tensor {
    let mut bytes = vec![fill; len];
    for (k, b) in bytes.iter_mut().step_by(4096).enumerate() {
        *b = (k as u8).wrapping_mul(31) ^ fill;
    }
    Tensor::from_dense(ElementType::Uint8, &[len as u64], &bytes).unwrap()
}

/// The two versions of the file: names and tensors, plus KV for `B`.
struct Versions {
    a: Vec<(String, Tensor)>,
    b: Vec<(String, Tensor)>,
}

impl Versions {
    fn new() -> Versions {
        Versions {
            a: (0..3)
                .map(|i| (format!("a{i}"), tensor(MIB, 0x10 + i as u8)))
                .collect(),
            b: (0..4)
                .map(|i| (format!("b{i}"), tensor(5 * MIB / 4, 0x80 + i as u8)))
                .collect(),
        }
    }

    /// Writes version `B` (when `b`) or `A` to `path`.
    fn write(&self, path: &Path, b: bool, durable: bool) {
        let opts = WriteOptions {
            durable,
            ..WriteOptions::default()
        };
        let mut w = FileWriter::create(path, opts).unwrap();
        for (name, t) in if b { &self.b } else { &self.a } {
            w.write_tensor(name, t).unwrap();
        }
        if b {
            w.add_kv("version", KvValue::String("B".into())).unwrap();
        }
        w.finish().unwrap();
    }
}

/// The child role: does nothing unless [`CHILD_ENV`] is set (so a plain `cargo test`
/// passes it at once); then rewrites the destination `B`, `A`, `B`, ... for
/// [`ROUNDS_ENV`] commits or 10 s, whichever comes first (a bound in case the parent
/// dies without killing it).
#[test]
fn child_writer() {
    let Some(dest) = std::env::var_os(CHILD_ENV) else {
        return;
    };
    let durable = std::env::var(DURABLE_ENV).as_deref() == Ok("1");
    let rounds: u64 = std::env::var(ROUNDS_ENV).unwrap().parse().unwrap();
    let v = Versions::new();
    let start = Instant::now();
    for k in 0..rounds {
        v.write(Path::new(&dest), k % 2 == 0, durable);
        if start.elapsed() > Duration::from_secs(10) {
            break;
        }
    }
}

/// Spawns the child role of this test binary on `dest`.
fn spawn_child(dest: &Path, durable: bool, rounds: u64) -> std::process::Child {
    Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "child_writer", "--test-threads=1", "--quiet"])
        .env(CHILD_ENV, dest)
        .env(DURABLE_ENV, if durable { "1" } else { "0" })
        .env(ROUNDS_ENV, rounds.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// The names in `dir` other than [`DEST`].
fn others(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n != DEST)
        .collect();
    v.sort();
    v
}

#[test]
fn sigkill_at_random_points_never_leaves_a_partial_destination() {
    let seed: u64 = std::env::var("HURRAY_CRASH_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x4855_5252_4159);
    eprintln!("crash test seed {seed} (set HURRAY_CRASH_SEED to repeat)");
    let mut rng = SplitMix(seed);

    let versions = Versions::new();
    let refs = tempfile::tempdir().unwrap();
    let (ref_a, ref_b): (PathBuf, PathBuf) = (refs.path().join("a"), refs.path().join("b"));
    versions.write(&ref_a, false, false);
    versions.write(&ref_b, true, false);
    let (a, b) = (
        std::fs::read(&ref_a).unwrap(),
        std::fs::read(&ref_b).unwrap(),
    );
    assert_ne!(a.len(), b.len());

    let dir = tempfile::tempdir().unwrap();
    let dest = dir.path().join(DEST);
    std::fs::write(&dest, &a).unwrap();

    // Calibrate, per mode: the median time of a child that starts and commits `B`
    // once.
    let calibrate = |durable: bool| {
        let mut runs: Vec<Duration> = (0..3)
            .map(|_| {
                let t = Instant::now();
                let status = spawn_child(&dest, durable, 1).wait().unwrap();
                assert!(status.success(), "the child writer fails: {status:?}");
                t.elapsed()
            })
            .collect();
        runs.sort();
        assert_eq!(std::fs::read(&dest).unwrap(), b, "a finished child wrote B");
        std::fs::write(&dest, &a).unwrap();
        runs[1]
    };
    let (one_scratch, one_durable) = (calibrate(false), calibrate(true));

    let started = Instant::now();
    let (mut kills, mut spawned, mut found_a, mut found_b, mut leftovers) = (0, 0, 0, 0, 0);
    while kills < KILLS {
        spawned += 1;
        assert!(
            spawned <= 2 * KILLS,
            "too many children exited before the kill"
        );
        let durable = spawned % 2 == 0;
        let one = if durable { one_durable } else { one_scratch };
        let delay = one.mul_f64(SPAN * rng.unit());
        let mut child = spawn_child(&dest, durable, 1000);
        let pid = child.id();
        std::thread::sleep(delay);
        child.kill().unwrap();
        let status = child.wait().unwrap();
        if status.signal() == Some(9) {
            kills += 1;
        }

        let now = std::fs::read(&dest).unwrap();
        if now == a {
            found_a += 1;
        } else if now == b {
            found_b += 1;
        } else {
            panic!(
                "after kill {kills} ({delay:?} after spawn, durable {durable}) the \
                 destination is neither A ({} bytes) nor B ({} bytes): {} bytes",
                a.len(),
                b.len(),
                now.len()
            );
        }
        let left = others(dir.path());
        let prefix = format!(".{DEST}.{pid}-");
        assert!(
            left.len() <= 1
                && left
                    .iter()
                    .all(|n| n.starts_with(&prefix) && n.ends_with(".hrry-tmp")),
            "after kill {kills}: unexpected files {left:?} (child pid {pid})"
        );
        for n in &left {
            leftovers += 1;
            std::fs::remove_file(dir.path().join(n)).unwrap();
        }
    }
    eprintln!(
        "{kills} kills ({spawned} children; one child's runtime: durable {one_durable:?}, \
         scratch {one_scratch:?}) in {:?}: \
         destination A {found_a} times, B {found_b} times, a temporary file left \
         {leftovers} times",
        started.elapsed()
    );
    // The kills must have hit both sides of a rename, and a writer mid-file, or the
    // test did not exercise what it claims to.
    assert!(found_a > 0 && found_b > 0, "A {found_a}, B {found_b}");
    assert!(
        leftovers > 0,
        "no kill landed while a temporary file existed"
    );
}
