//! `cargo xtask demo`: the main job, end to end on a real model.
//!
//! 1. Fetch all-MiniLM-L6-v2's `model.safetensors` (once; cached in `target/demo/`).
//! 2. Build the `hurray` CLI (release).
//! 3. Convert the model to `.hrry`, inspect and validate it, dump a few values.
//! 4. Convert it back to safetensors.
//! 5. Verify that every tensor's bytes are identical to the source: `hurray compare`
//!    prints a table with a CRC-32C per tensor and a verdict.
//! 6. Every language: the Rust, C, Python, Go, Java and Node programs of
//!    `tests/matrix/` open the same `.hrry`, take zero-copy views of every tensor and
//!    print a CRC-32 per tensor; one table (tensor x language), a verdict, and each
//!    language's open + view time: the first in a fresh process, and the best of the
//!    warm passes it then makes in the same process (`langs.rs`).
//! 7. Every language over the network: `hurray serve` the `.hrry` on loopback and
//!    every program's `net-views` fetches all tensors with its client and prints the
//!    same CRC-32 table, compared with the file's (`net.rs`).
//! 8. Benchmark: conversion against `cp` of the same file, and the conversion's peak
//!    memory against the model's size.
//!
//! Every step prints the command it runs, so a reader can repeat it by hand.

mod bench;
mod langs;
mod model;
mod net;

use std::path::{Path, PathBuf};
use std::process::Command;

use clap::Args;

use crate::util::{cargo, exec, workspace_root, Result};

/// Arguments of `cargo xtask demo`.
#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Use this safetensors file instead of fetching the real model.
    #[arg(long, value_name = "FILE")]
    pub model: Option<PathBuf>,
    /// Benchmark runs per command (the fastest counts).
    #[arg(long, default_value_t = 5)]
    pub runs: usize,
    /// Only the network step (7) over this existing .hrry of plain tensors (no
    /// download, no conversion); `--only` limits its languages.
    #[arg(long, value_name = "HRRY")]
    pub net_only: Option<PathBuf>,
    /// With `--net-only`: only these languages (comma-separated, rust among them).
    #[arg(long)]
    pub only: Option<String>,
}

/// Lines of `hurray inspect` shown before the tensor table is cut short.
const INSPECT_LINES: usize = 24;

/// The `hurray` binary built by cargo for the release profile.
fn hurray_binary() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace_root().join("target"));
    let target = if target.is_absolute() {
        target
    } else {
        workspace_root().join(target)
    };
    target.join("release").join("hurray")
}

/// `path` relative to the workspace root when it lies inside it (for display).
fn rel(path: &Path) -> String {
    path.strip_prefix(workspace_root())
        .unwrap_or(path)
        .display()
        .to_string()
}

/// The demo's view of the CLI: runs `hurray ARGS`, echoing the command line.
struct Hurray {
    bin: PathBuf,
}

impl Hurray {
    fn command(&self, args: &[&str]) -> Command {
        let mut c = Command::new(&self.bin);
        c.args(args).current_dir(workspace_root());
        c
    }

    /// Runs and returns standard output; fails with the command's own error line.
    fn run(&self, args: &[&str]) -> Result<String> {
        println!("$ hurray {}", args.join(" "));
        let out = self.command(args).output()?;
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        eprint!("{}", String::from_utf8_lossy(&out.stderr));
        if !out.status.success() {
            print!("{text}");
            return Err(
                format!("demo: `hurray {}` failed ({})", args.join(" "), out.status).into(),
            );
        }
        Ok(text)
    }

    /// Runs and prints all of standard output.
    fn show(&self, args: &[&str]) -> Result<String> {
        let text = self.run(args)?;
        print!("{text}");
        Ok(text)
    }
}

fn step(n: u32, title: &str) {
    println!("\n==> [demo] {n}. {title}");
}

/// Whether two files have the same bytes (read in chunks).
fn same_bytes(a: &Path, b: &Path) -> Result<bool> {
    use std::io::Read;
    if std::fs::metadata(a)?.len() != std::fs::metadata(b)?.len() {
        return Ok(false);
    }
    let (mut fa, mut fb) = (std::fs::File::open(a)?, std::fs::File::open(b)?);
    let (mut ba, mut bb) = (vec![0u8; 1 << 20], vec![0u8; 1 << 20]);
    loop {
        let n = fa.read(&mut ba)?;
        if n == 0 {
            return Ok(true);
        }
        fb.read_exact(&mut bb[..n])?;
        if ba[..n] != bb[..n] {
            return Ok(false);
        }
    }
}

/// Runs the demo.
pub fn run(args: &DemoArgs) -> Result {
    if let Some(file) = &args.net_only {
        let file = file
            .canonicalize()
            .map_err(|e| format!("demo: {}: {e}", file.display()))?;
        exec(&mut cargo([
            "build",
            "--release",
            "--quiet",
            "-p",
            "hurray-cli",
        ]))?;
        step(
            7,
            "every language fetches every tensor over loopback: a CRC-32 per tensor",
        );
        return if net::run(&hurray_binary(), &file, args.only.as_deref())? {
            Ok(())
        } else {
            Err("demo: the languages disagree over the network".into())
        };
    }
    let dir = workspace_root().join("target").join("demo");
    std::fs::create_dir_all(&dir)?;

    step(
        1,
        "the model: all-MiniLM-L6-v2 (sentence embeddings), model.safetensors",
    );
    let source = match &args.model {
        Some(m) => m
            .canonicalize()
            .map_err(|e| format!("demo: {}: {e}", m.display()))?,
        None => model::ensure(&dir)?,
    };
    let size = std::fs::metadata(&source)?.len();
    println!("{} ({size} bytes, {})", rel(&source), bench::mib(size));

    step(2, "build the hurray CLI (release)");
    let mut build = cargo(["build", "--release", "--quiet", "-p", "hurray-cli"]);
    println!("$ cargo build --release -p hurray-cli");
    exec(&mut build).map_err(|e| format!("demo: building hurray-cli failed: {e}"))?;
    let h = Hurray {
        bin: hurray_binary(),
    };

    let src = rel(&source);
    let hrry = rel(&dir.join("model.hrry"));
    let back = rel(&dir.join("roundtrip.safetensors"));

    step(
        3,
        "convert safetensors -> HRRYFILE, inspect, validate, dump",
    );
    h.show(&["convert", "--stats", &src, &hrry])?;
    let shown = h.run(&["inspect", &hrry])?;
    let lines: Vec<&str> = shown.lines().collect();
    for l in lines.iter().take(INSPECT_LINES) {
        println!("{l}");
    }
    if lines.len() > INSPECT_LINES {
        println!(
            "  ... {} more tensors (`target/release/hurray inspect {hrry}` lists all)",
            lines.len() - INSPECT_LINES
        );
    }
    h.show(&["validate", &hrry])?;
    h.show(&[
        "dump",
        &hrry,
        "embeddings.word_embeddings.weight",
        "--limit",
        "4",
    ])?;

    step(4, "convert HRRYFILE -> safetensors");
    h.show(&["convert", "--stats", &hrry, &back])?;

    step(5, "verify: every tensor's bytes against the source");
    let verdict = h.run(&["compare", &src, &hrry, &back]);
    let (passed, report) = match verdict {
        Ok(text) => (true, text),
        Err(e) => (false, e.to_string()),
    };
    print!("{report}");
    let identical = same_bytes(&source, &workspace_root().join(&back))?;
    println!(
        "{back} is byte-for-byte identical to {src}: {}",
        if identical {
            "yes"
        } else {
            "no (tensors are; the file layout differs)"
        }
    );

    step(
        6,
        "every language opens the same .hrry: zero-copy views, a CRC-32 per tensor",
    );
    let languages_agree = langs::run(&workspace_root().join(&hrry), args.runs)?;

    step(
        7,
        "every language fetches every tensor over loopback: a CRC-32 per tensor",
    );
    let net_agree = net::run(&h.bin, &workspace_root().join(&hrry), None)?;

    step(8, "benchmark: convert vs cp, peak memory");
    let runs = args.runs;
    let copy = rel(&dir.join("copy.safetensors"));
    let bench_out = rel(&dir.join("bench.hrry"));
    let cp = bench::best_of(runs, || {
        let mut c = Command::new("cp");
        c.args([&src, &copy]).current_dir(workspace_root());
        c
    })?;
    let to_hrry = bench::best_of(runs, || h.command(&["convert", &src, &bench_out]))?;
    let from_hrry = bench::best_of(runs, || h.command(&["convert", &hrry, &back]))?;
    let (peak_to, how) = bench::peak_memory(h.command(&["convert", &src, &bench_out]))?;
    let (peak_from, _) = bench::peak_memory(h.command(&["convert", &hrry, &back]))?;
    std::fs::remove_file(workspace_root().join(&copy)).ok();
    std::fs::remove_file(workspace_root().join(&bench_out)).ok();
    let secs = |d: std::time::Duration| d.as_secs_f64();
    let throughput = |d| size as f64 / secs(d) / (1024.0 * 1024.0 * 1024.0);
    println!(
        "best of {runs} runs, page cache warm, model {}:",
        bench::mib(size)
    );
    let row = |what: &str, d: std::time::Duration| {
        println!(
            "  {what:<38} {:>7.3} s  {:>5.2} GiB/s  {:>5.2} x cp",
            secs(d),
            throughput(d),
            secs(d) / secs(cp)
        )
    };
    row("cp (the same file)", cp);
    row("hurray convert  safetensors -> hrry", to_hrry);
    row("hurray convert  hrry -> safetensors", from_hrry);
    println!(
        "peak memory ({how}), against the model's {}:",
        bench::mib(size)
    );
    for (what, peak) in [
        ("hurray convert  safetensors -> hrry", peak_to),
        ("hurray convert  hrry -> safetensors", peak_from),
    ] {
        println!(
            "  {what:<38} {:>9}  {:>5.1} % of the model",
            bench::mib(peak),
            100.0 * peak as f64 / size as f64
        );
    }
    println!();
    if passed && languages_agree && net_agree {
        println!("Verdict: PASS (every tensor of the model survived safetensors -> hrry -> safetensors unchanged, and every language reads the same bytes from the .hrry, from the file and over the network)");
        Ok(())
    } else if !passed {
        Err("Verdict: FAIL (the round trip changed a tensor: see step 5)".into())
    } else if !languages_agree {
        Err("Verdict: FAIL (the languages disagree: see step 6)".into())
    } else {
        Err("Verdict: FAIL (the languages disagree over the network: see step 7)".into())
    }
}
