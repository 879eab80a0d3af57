//! `cargo xtask fuzz` and the fuzz stage of `cargo xtask test`: coverage-guided
//! fuzzing of the targets in `fuzz/` with cargo-fuzz (libFuzzer, AddressSanitizer),
//! each for a bounded time (docs/fuzzing.md).
//!
//! Steps:
//!
//! 1. seeds: `cargo run -p hurray-cli --example fuzz_seeds` writes
//!    `target/fuzz-seeds/<target>/` from the library and the conformance vectors in
//!    `../shared/conformance` (only read; without them, generated seeds only);
//! 2. build: `cargo fuzz build --debug-assertions` once for the targets asked for;
//! 3. run each target with `cargo fuzz run` for `--seconds`, with the growing corpus
//!    `target/fuzz-corpus/<target>/` and the seeds, crashes written to
//!    `target/fuzz-artifacts/<target>/`, the whole libFuzzer output to
//!    `target/fuzz-logs/<target>.log`;
//! 4. print per target the executions run (libFuzzer's `stat::number_of_executed_units`)
//!    and what it found; any crash, failed assertion, timeout or out-of-memory fails.
//!
//! Toolchain: the stable toolchain with `RUSTC_BOOTSTRAP=1`, which lets cargo-fuzz
//! pass `-Zsanitizer=address` (the AddressSanitizer runtime ships with stable's
//! standard library on Linux x86_64), so no nightly is needed; cargo-fuzz itself and
//! a C++ compiler (libFuzzer is C++) come from `ci/fuzz.sh` in CI. Missing pieces skip
//! the stage with a note, or fail it under CI.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use clap::Args;

use crate::test::{Outcome, Stage};
use crate::util::{cargo, display, exec, has_cargo_tool, under_ci, workspace_root, Result};

/// The fuzz targets, in the order they run: the `[[bin]]` names of `fuzz/Cargo.toml`.
pub const TARGETS: &[&str] = &[
    "descriptor",
    "stream",
    "file",
    "composite",
    "cli_safetensors",
    "cli_numpy",
    "cli_validate",
    "proto",
];

/// Seconds per target for `cargo xtask fuzz` without `--seconds`.
pub const DEFAULT_SECONDS: u64 = 60;

/// Seconds per target in the fuzz stage of `cargo xtask test`.
pub const STAGE_SECONDS: u64 = 10;

/// Arguments of `cargo xtask fuzz`.
#[derive(Debug, Args)]
pub struct FuzzArgs {
    /// Fuzz only this target (one of descriptor, stream, file, composite,
    /// cli_safetensors, cli_numpy, cli_validate, proto).
    #[arg(long)]
    pub target: Option<String>,
    /// Seconds of fuzzing per target.
    #[arg(long, default_value_t = DEFAULT_SECONDS)]
    pub seconds: u64,
}

/// What one target's run did.
#[derive(Debug, PartialEq, Eq)]
pub struct Report {
    /// The target.
    pub target: String,
    /// Inputs executed (`stat::number_of_executed_units`, else the `Done N runs` line).
    pub executions: Option<u64>,
    /// Inputs added to the corpus (`stat::new_units_added`).
    pub new_units: Option<u64>,
    /// The finding, if any: the kind (`crash`, `timeout`, `oom`, `leak`, ...) and the
    /// artifact libFuzzer wrote.
    pub finding: Option<(String, Option<String>)>,
}

/// Runs `cargo xtask fuzz`.
pub fn run(args: &FuzzArgs) -> Result {
    let targets = select(args.target.as_deref())?;
    if let Some(why) = missing_tools() {
        return Err(format!("error: [xtask] cannot fuzz: {why}").into());
    }
    let reports = fuzz(&targets, args.seconds)?;
    verdict(&reports)
}

/// The fuzz stage of `cargo xtask test`: every target for [`STAGE_SECONDS`].
pub fn stage() -> Stage {
    Stage {
        name: format!(
            "fuzz: every target of fuzz/ for {STAGE_SECONDS} s (cargo fuzz, libFuzzer + \
             AddressSanitizer), seeded with the conformance vectors"
        ),
        run: Box::new(|| {
            if let Some(why) = missing_tools() {
                if under_ci() {
                    return Err(format!("cannot fuzz under CI: {why}").into());
                }
                return Ok(Outcome::Skipped(why));
            }
            let reports = fuzz(TARGETS, STAGE_SECONDS)?;
            verdict(&reports).map(|()| Outcome::Passed)
        }),
    }
}

/// The targets `--target` names (all without it).
fn select(target: Option<&str>) -> Result<Vec<&'static str>> {
    match target {
        None => Ok(TARGETS.to_vec()),
        Some(t) => match TARGETS.iter().find(|&&x| x == t) {
            Some(&x) => Ok(vec![x]),
            None => Err(format!(
                "error: [xtask] no fuzz target {t:?}; the targets are: {}",
                TARGETS.join(", ")
            )
            .into()),
        },
    }
}

/// Why fuzzing cannot run here, if it cannot: cargo-fuzz, a C++ compiler or the
/// AddressSanitizer runtime is missing.
fn missing_tools() -> Option<String> {
    if !has_cargo_tool("fuzz") {
        return Some(
            "`cargo fuzz` not found; install it with `cargo install --locked cargo-fuzz` \
             (ci/fuzz.sh does)"
                .into(),
        );
    }
    let cxx = std::env::var("CXX").unwrap_or_else(|_| "c++".into());
    let has_cxx = Command::new(&cxx)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !has_cxx {
        return Some(format!(
            "no C++ compiler (`{cxx}`, set $CXX) to build libFuzzer; install g++ or clang"
        ));
    }
    if !has_asan_runtime() {
        return Some(
            "this Rust toolchain ships no AddressSanitizer runtime for the host \
             (librustc-*_rt.asan in its target libdir); fuzzing needs Linux or macOS"
                .into(),
        );
    }
    None
}

/// Whether the active toolchain's host libdir holds the AddressSanitizer runtime.
fn has_asan_runtime() -> bool {
    let out = |args: &[&str]| {
        Command::new("rustc")
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
    };
    let Some(libdir) = out(&["--print", "target-libdir"]) else {
        return false;
    };
    std::fs::read_dir(libdir.trim()).is_ok_and(|dir| {
        dir.filter_map(|e| e.ok())
            .any(|e| e.file_name().to_string_lossy().contains("_rt.asan"))
    })
}

/// The workspace's target directory (`$CARGO_TARGET_DIR`, else `target/`).
fn target_dir() -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(d) => workspace_root().join(d),
        None => workspace_root().join("target"),
    }
}

/// A `cargo fuzz <sub>` command on the stable toolchain with unstable flags allowed
/// (see the module documentation).
fn cargo_fuzz(sub: &str) -> Command {
    let mut cmd = cargo(["fuzz", sub, "--fuzz-dir", "fuzz", "--debug-assertions"]);
    cmd.env("RUSTC_BOOTSTRAP", "1");
    cmd
}

/// Writes the seed corpora into `target/fuzz-seeds/`.
fn write_seeds(seeds: &Path) -> Result {
    let conformance = workspace_root().join("../shared/conformance");
    let mut cmd = cargo([
        "run",
        "--quiet",
        "-p",
        "hurray-cli",
        "--example",
        "fuzz_seeds",
        "--",
    ]);
    cmd.arg(seeds);
    if conformance.join("descriptors").is_dir() {
        cmd.arg(&conformance);
    } else {
        println!(
            "note: [xtask] {} not found; fuzzing with generated seeds only",
            conformance.display()
        );
    }
    exec(&mut cmd).map_err(|e| format!("`{}`: {e}", display(&cmd)).into())
}

/// Seeds, builds and runs `targets` for `seconds` each; prints a line per target.
fn fuzz(targets: &[&str], seconds: u64) -> Result<Vec<Report>> {
    let base = target_dir();
    let seeds = base.join("fuzz-seeds");
    write_seeds(&seeds)?;

    let mut build = cargo_fuzz("build");
    if let [one] = targets {
        build.arg(one);
    }
    println!("==> [xtask] {}", display(&build));
    exec(&mut build).map_err(|e| format!("`{}`: {e}", display(&build)))?;

    let logs = base.join("fuzz-logs");
    std::fs::create_dir_all(&logs)?;
    let mut reports = Vec::new();
    for &t in targets {
        let corpus = base.join("fuzz-corpus").join(t);
        let artifacts = base.join("fuzz-artifacts").join(t);
        std::fs::create_dir_all(&corpus)?;
        std::fs::create_dir_all(&artifacts)?;
        // Targets without generated seeds (proto) start from an empty directory.
        std::fs::create_dir_all(seeds.join(t))?;
        let log_path = logs.join(format!("{t}.log"));
        let log = std::fs::File::create(&log_path)?;
        let mut cmd = cargo_fuzz("run");
        cmd.arg(t)
            .arg(&corpus)
            .arg(seeds.join(t))
            .arg("--")
            .arg(format!("-max_total_time={seconds}"))
            .arg("-print_final_stats=1")
            .arg("-timeout=10")
            .arg("-rss_limit_mb=2048")
            .arg(format!("-artifact_prefix={}/", artifacts.display()))
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log);
        let started = Instant::now();
        let status = cmd
            .status()
            .map_err(|e| format!("`{}`: could not start: {e}", display(&cmd)))?;
        let secs = started.elapsed().as_secs_f64();
        let text = std::fs::read_to_string(&log_path).unwrap_or_default();
        let mut r = parse(t, &text);
        if !status.success() && r.finding.is_none() {
            r.finding = Some((format!("exit {status} without a libFuzzer report"), None));
        }
        println!("fuzz: {} ({secs:.0} s)", describe(&r));
        if r.finding.is_some() {
            println!("      log: {}", log_path.display());
            for line in excerpt(&text) {
                println!("      | {line}");
            }
        }
        reports.push(r);
    }
    Ok(reports)
}

/// One line about a report: target, executions, corpus growth, finding.
fn describe(r: &Report) -> String {
    let runs = r
        .executions
        .map_or("? executions".to_string(), |n| format!("{n} executions"));
    let new = r
        .new_units
        .map_or(String::new(), |n| format!(", {n} new corpus inputs"));
    let found = match &r.finding {
        None => "no crash".to_string(),
        Some((kind, Some(a))) => format!("FOUND {kind}: {a}"),
        Some((kind, None)) => format!("FOUND {kind}"),
    };
    format!("{}: {runs}{new}, {found}", r.target)
}

/// The summary, and an error when any target found something.
fn verdict(reports: &[Report]) -> Result {
    let found: Vec<&Report> = reports.iter().filter(|r| r.finding.is_some()).collect();
    let total: u64 = reports.iter().filter_map(|r| r.executions).sum();
    println!(
        "fuzz: {} targets, {total} executions, {} with findings",
        reports.len(),
        found.len()
    );
    if found.is_empty() {
        return Ok(());
    }
    let names: Vec<&str> = found.iter().map(|r| r.target.as_str()).collect();
    Err(format!(
        "fuzzing found inputs that fail: {}; reproduce with \
         `RUSTC_BOOTSTRAP=1 cargo fuzz run --fuzz-dir fuzz -a TARGET ARTIFACT` and add each \
         to the regression tests (docs/fuzzing.md)",
        names.join(", ")
    )
    .into())
}

/// Reads libFuzzer's output: the final statistics and any artifact it wrote.
pub fn parse(target: &str, log: &str) -> Report {
    let stat = |key: &str| {
        log.lines()
            .rev()
            .filter_map(|l| l.trim().strip_prefix(key))
            .find_map(|rest| rest.trim().parse::<u64>().ok())
    };
    // `Done 207427 runs in 11 second(s)`: printed when the time is up.
    let done = log
        .lines()
        .rev()
        .filter_map(|l| l.strip_prefix("Done "))
        .find_map(|rest| rest.split_whitespace().next()?.parse::<u64>().ok());
    let executions = stat("stat::number_of_executed_units:").or(done);
    let artifact = log
        .lines()
        .rev()
        .find_map(|l| l.split_once("Test unit written to "))
        .map(|(_, path)| path.trim().to_string());
    let kind = artifact.as_deref().map(|a| {
        let file = Path::new(a)
            .file_name()
            .map_or(String::new(), |f| f.to_string_lossy().into_owned());
        file.split('-').next().unwrap_or("crash").to_string()
    });
    Report {
        target: target.to_string(),
        executions,
        new_units: stat("stat::new_units_added:"),
        finding: kind.map(|k| (k, artifact)),
    }
}

/// The lines of a failing run worth printing: the panic message or sanitizer
/// report, then the backtrace frames in this repository's code (at most 30 lines);
/// without such a report, the last 20 lines.
fn excerpt(log: &str) -> Vec<&str> {
    let lines: Vec<&str> = log.lines().collect();
    let Some(start) = lines.iter().position(|l| {
        l.contains("panicked at")
            || l.contains("ERROR: AddressSanitizer")
            || l.contains("ERROR: libFuzzer")
    }) else {
        return lines[lines.len().saturating_sub(20)..].to_vec();
    };
    let mut out = Vec::new();
    let mut in_trace = false;
    for (i, &l) in lines[start..].iter().enumerate() {
        if l.trim_start().starts_with("stack backtrace:") || l.contains("#0 0x") {
            in_trace = true;
        }
        let ours = l.contains("fuzz_targets/")
            || l.contains("hurray-")
            || l.contains("hurray_")
            || l.contains("fuzz/src/");
        if !in_trace || ours || l.contains("Test unit written to") {
            // A frame's location follows its name: keep the pair together.
            if in_trace && l.trim_start().starts_with("at ") && i > 0 {
                if let Some(prev) = lines.get(start + i - 1) {
                    if out.last() != Some(prev) {
                        out.push(*prev);
                    }
                }
            }
            out.push(l);
        }
        if out.len() >= 30 {
            break;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_match_the_fuzz_manifest() {
        let manifest = std::fs::read_to_string(workspace_root().join("fuzz/Cargo.toml")).unwrap();
        let mut bins = Vec::new();
        let mut in_bin = false;
        for line in manifest.lines().map(str::trim) {
            if line.starts_with('[') {
                in_bin = line == "[[bin]]";
            } else if in_bin {
                if let Some(v) = line.strip_prefix("name = ") {
                    bins.push(v.trim_matches('"').to_string());
                }
            }
        }
        assert_eq!(bins, TARGETS);
        for t in TARGETS {
            let src = workspace_root().join(format!("fuzz/fuzz_targets/{t}.rs"));
            assert!(src.is_file(), "{} missing", src.display());
        }
    }

    #[test]
    fn parses_a_clean_run() {
        let log = "INFO: Seed: 1\n#2\tINITED cov: 5 ft: 5 corp: 1/1b exec/s: 0 rss: 30Mb\n\
                   Done 207427 runs in 11 second(s)\n\
                   stat::number_of_executed_units: 207427\n\
                   stat::average_exec_per_sec:     18857\n\
                   stat::new_units_added:          894\n";
        let r = parse("descriptor", log);
        assert_eq!(r.executions, Some(207427));
        assert_eq!(r.new_units, Some(894));
        assert_eq!(r.finding, None);
        assert_eq!(
            describe(&r),
            "descriptor: 207427 executions, 894 new corpus inputs, no crash"
        );
    }

    #[test]
    fn parses_a_crash() {
        let log = "thread '<unnamed>' panicked at fuzz_targets/file.rs:9:5:\nboom\n\
                   ==1== ERROR: libFuzzer: deadly signal\n\
                   MS: 1 ChangeBit-; base unit: 0\n\
                   artifact_prefix='/t/a/'; Test unit written to /t/a/crash-abc123\n\
                   stat::number_of_executed_units: 3141\n";
        let r = parse("file", log);
        assert_eq!(r.executions, Some(3141));
        assert_eq!(
            r.finding,
            Some(("crash".to_string(), Some("/t/a/crash-abc123".to_string())))
        );
        assert_eq!(
            excerpt(log)[0],
            "thread '<unnamed>' panicked at fuzz_targets/file.rs:9:5:"
        );
        let t = parse("stream", "Test unit written to /x/timeout-99\n");
        assert_eq!(t.finding.unwrap().0, "timeout");
        assert_eq!(t.executions, None);
        // Without final stats, the `Done` line counts.
        assert_eq!(
            parse("x", "Done 12 runs in 1 second(s)\n").executions,
            Some(12)
        );
    }

    #[test]
    fn select_refuses_unknown_targets() {
        assert_eq!(select(None).unwrap(), TARGETS);
        assert_eq!(select(Some("file")).unwrap(), ["file"]);
        let e = select(Some("nope")).unwrap_err().to_string();
        assert!(e.contains("\"nope\"") && e.contains("cli_numpy"), "{e}");
    }
}
