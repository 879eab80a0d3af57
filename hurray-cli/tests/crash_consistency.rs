//! `hurray convert` killed with `SIGKILL` part-way leaves its output as it was or
//! complete, never partial, with and without `--no-sync`.
//!
//! The output starts as a valid HRRYFILE (`old`, from a small model); each round
//! converts an 8 MiB safetensors file over it and kills the command after a delay
//! spread over its measured runtime (a golden-ratio sequence, the same on every run,
//! from 0 to 1.5 runtimes). After each kill the output must be byte for byte `old`
//! or the complete conversion, and at most one temporary file, named with the dead
//! command's PID, may lie beside it. This is the CLI's share of the proof; the
//! 200-kill test of the shared commit routine is `hurray-io`'s `crash_consistency`.
//! Like it, it proves atomicity against a killed process, not durability against a
//! power loss (see that test's docs).

#![cfg(unix)]

mod common;

use common::*;
use safetensors::tensor::Dtype;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Real kills required (a command that finishes before its kill does not count).
const KILLS: usize = 50;

fn convert(input: &Path, output: &Path, no_sync: bool) -> std::process::Child {
    let mut c = Command::new(env!("CARGO_BIN_EXE_hurray"));
    c.arg("convert").arg(input).arg(output);
    if no_sync {
        c.arg("--no-sync");
    }
    c.stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

#[test]
fn a_killed_convert_leaves_the_output_old_or_complete() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("big.safetensors");
    let tensors: Vec<_> = (0..4u8)
        .map(|i| {
            let mut b = vec![i; 2 << 20];
            b[0] = 0xA0 | i;
            (
                ["w0", "w1", "w2", "w3"][i as usize],
                Dtype::U8,
                vec![2 << 20],
                b,
            )
        })
        .collect();
    write_safetensors(&input, &tensors, &[("producer", "crash test")]);

    let refs = tempfile::tempdir().unwrap();
    let old_path = refs.path().join("old.hrry");
    let new_path = refs.path().join("new.hrry");
    let small = small_model(refs.path());
    ok(hurray([
        "convert".as_ref(),
        small.as_os_str(),
        old_path.as_os_str(),
    ]));
    ok(hurray([
        "convert".as_ref(),
        input.as_os_str(),
        new_path.as_os_str(),
    ]));
    let old = std::fs::read(&old_path).unwrap();
    let new = std::fs::read(&new_path).unwrap();

    let work = tempfile::tempdir().unwrap();
    let out = work.path().join("out.hrry");
    let reset = || std::fs::write(&out, &old).unwrap();

    let time_one = |no_sync: bool| {
        let mut runs: Vec<Duration> = (0..3)
            .map(|_| {
                reset();
                let t = Instant::now();
                assert!(convert(&input, &out, no_sync).wait().unwrap().success());
                t.elapsed()
            })
            .collect();
        runs.sort();
        assert_eq!(std::fs::read(&out).unwrap(), new, "--no-sync {no_sync}");
        runs[1]
    };
    let (one_sync, one_no_sync) = (time_one(false), time_one(true));

    reset();
    let (mut kills, mut spawned, mut found_old, mut found_new) = (0, 0u32, 0, 0);
    while kills < KILLS {
        spawned += 1;
        assert!(
            spawned <= 4 * KILLS as u32,
            "too many commands finished first"
        );
        let no_sync = spawned % 2 == 1;
        let one = if no_sync { one_no_sync } else { one_sync };
        // Golden-ratio fractions spread evenly over [0, 1.5).
        let frac = (f64::from(spawned) * 0.618_033_988_749_895).fract();
        let delay = one.mul_f64(1.5 * frac);
        let mut child = convert(&input, &out, no_sync);
        let pid = child.id();
        std::thread::sleep(delay);
        child.kill().unwrap();
        let status = child.wait().unwrap();
        let killed = status.signal() == Some(9);
        kills += usize::from(killed);

        let now = std::fs::read(&out).unwrap();
        if now == old {
            found_old += 1;
        } else if now == new {
            found_new += 1;
        } else {
            panic!(
                "killed {delay:?} after start (--no-sync {no_sync}): the output has {} \
                 bytes, neither old ({}) nor new ({})",
                now.len(),
                old.len(),
                new.len()
            );
        }
        let prefix = format!(".out.hrry.{pid}-");
        let left: Vec<String> = files_in(work.path())
            .into_iter()
            .filter(|n| n != "out.hrry")
            .collect();
        assert!(
            left.len() <= 1
                && left
                    .iter()
                    .all(|n| n.starts_with(&prefix) && n.ends_with(".hrry-tmp")),
            "unexpected files {left:?} (pid {pid})"
        );
        for n in left {
            std::fs::remove_file(work.path().join(n)).unwrap();
        }
        if now == new {
            reset();
        }
    }
    eprintln!(
        "{kills} kills of {spawned} conversions (runtime {one_sync:?}, --no-sync \
         {one_no_sync:?}): output old {found_old} times, new {found_new} times"
    );
    assert!(found_old > 0);
}
