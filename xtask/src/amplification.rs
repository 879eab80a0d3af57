//! `cargo xtask amplification`: how much memory each reader needs to open a file and
//! read its KV section and index, against those sections' bytes (issue 16, item 2).
//!
//! `hurray-matrix amplification-files` writes the files (one KV array of 16.7 M
//! empty strings, one of 16.7 M bools, 1 M composite heads, and a tiny baseline file;
//! `tests/matrix/rust/src/amplify.rs`). Every language's matrix program then runs
//! `metadata FILE` (open, read every KV value in full with the language's own API,
//! read every name) under `/usr/bin/time`, and the languages with a ranged KV
//! accessor also `metadata FILE ranged` (arrays read in windows of 65 536
//! elements); the CLI runs `inspect` and `inspect --json`. The table gives each
//! peak RSS, the same program's peak on the tiny file (the runtime's own cost), and
//! `(peak - baseline) / section bytes`, where the section bytes are the KV section
//! plus the index, and for the heads file also the descriptors the reader must
//! decode (every byte before the index but the header). The peak includes the pages
//! of the mapped file the reader touched, so reading a section whole costs 1x by
//! itself.
//!
//! `--only`, `--files` (strings, bools, heads) and `--mode` (whole, ranged)
//! measure a few cells at a time: each run is slow.
//!
//! Nothing here asserts: memory peaks depend on the allocator and the runtime, so
//! the numbers are for people; the default test suite checks the table sizes.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use clap::Args;

use crate::matrix::build_langs;
use crate::util::{cargo, exec, workspace_root, Result};

/// Arguments of `cargo xtask amplification`.
#[derive(Debug, Args)]
pub struct AmplificationArgs {
    /// Only these languages (comma-separated: rust,c,python,go,java,node; the CLI
    /// is measured with rust).
    #[arg(long)]
    pub only: Option<String>,
    /// Only these files (comma-separated: strings,bools,heads); the tiny baseline
    /// is always measured.
    #[arg(long)]
    pub files: Option<String>,
    /// Only this mode of the languages' `metadata`: `whole` or `ranged` (the CLI
    /// rows count as whole).
    #[arg(long, value_parser = ["whole", "ranged"])]
    pub mode: Option<String>,
}

/// The files measured (the first is the baseline).
const FILES: [&str; 4] = [
    "tiny.hrry",
    "kv_strings.hrry",
    "kv_bools.hrry",
    "heads.hrry",
];

/// Languages whose `metadata` also has a `ranged` mode.
const RANGED: [&str; 3] = ["go", "java", "node"];

/// Section sizes of a file, from its trailer.
#[derive(Clone, Copy, Debug)]
struct Sections {
    index: u64,
    kv: u64,
    /// Bytes between the header and the first section: the tensor region.
    region: u64,
}

fn sections(path: &Path) -> Result<Sections> {
    let b = std::fs::read(path)?;
    let t = b
        .len()
        .checked_sub(40)
        .map(|at| &b[at..])
        .ok_or("file shorter than a trailer")?;
    let u64_at = |o: usize| u64::from_le_bytes(t[o..o + 8].try_into().expect("8 bytes"));
    let (index_offset, index) = (u64_at(0), u64_at(8));
    let (kv_offset, kv) = (
        u64_at(16),
        u64::from(u32::from_le_bytes(t[24..28].try_into().expect("4 bytes"))),
    );
    let first = if kv > 0 {
        kv_offset.min(index_offset)
    } else {
        index_offset
    };
    Ok(Sections {
        index,
        kv,
        region: first.saturating_sub(64),
    })
}

/// Peak RSS in KiB of `cmd` (stdout discarded), measured by GNU time.
/// Peak RSS in KiB of one run, and whether the program reported that a whole-value
/// KV read was refused by the library's bound (a `kv_refused` line).
fn peak_kib(program: &[std::ffi::OsString], args: &[&str], path: &Path) -> Result<(u64, bool)> {
    let out = Command::new("/usr/bin/time")
        .args(["-f", "peak_rss_kib %M"])
        .args(program)
        .args(args.iter().take(1))
        .arg(path)
        .args(args.iter().skip(1))
        .current_dir(workspace_root())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .map_err(|e| format!("could not run /usr/bin/time: {e}"))?;
    let err = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() {
        return Err(format!("{:?} {args:?} {}: {err}", program[0], path.display()).into());
    }
    let refused = String::from_utf8_lossy(&out.stdout)
        .lines()
        .any(|l| l.starts_with("kv_refused\t"));
    let kib = err
        .lines()
        .rev()
        .find_map(|l| l.strip_prefix("peak_rss_kib "))
        .and_then(|v| v.trim().parse().ok())
        .ok_or_else(|| format!("no peak in {err:?}"))?;
    Ok((kib, refused))
}

fn mib(kib: u64) -> String {
    format!("{:.1}", kib as f64 / 1024.0)
}

/// Runs the measurements and prints the table.
pub fn run(args: &AmplificationArgs) -> Result {
    if !Path::new("/usr/bin/time").exists() {
        return Err("/usr/bin/time (GNU time) is needed to measure peak RSS".into());
    }
    let (langs, skipped) = build_langs(args.only.as_deref())?;
    exec(&mut cargo([
        "build",
        "--quiet",
        "--release",
        "-p",
        "hurray-cli",
        "-p",
        "hurray-matrix",
    ]))
    .map_err(|e| format!("`cargo build --release -p hurray-cli -p hurray-matrix`: {e}"))?;
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map_or_else(|| workspace_root().join("target"), PathBuf::from);
    let dir = target.join("amplification");
    if !FILES.iter().all(|f| dir.join(f).is_file()) {
        exec(
            Command::new(target.join("release/hurray-matrix"))
                .arg("amplification-files")
                .arg(&dir),
        )
        .map_err(|e| format!("hurray-matrix amplification-files: {e}"))?;
    }
    let whole = args.mode.as_deref() != Some("ranged");
    let ranged = args.mode.as_deref() != Some("whole");
    let file_wanted = |f: &str| {
        args.files.as_deref().is_none_or(|o| {
            o.split(',')
                .any(|x| f.strip_prefix("kv_").unwrap_or(f) == format!("{}.hrry", x.trim()))
        })
    };
    let mut programs: Vec<(String, Vec<std::ffi::OsString>, Vec<&str>)> = Vec::new();
    for l in &langs {
        if whole {
            programs.push((l.name.to_owned(), l.argv.clone(), vec!["metadata"]));
        }
        if ranged && RANGED.contains(&l.name) {
            programs.push((
                format!("{} ranged", l.name),
                l.argv.clone(),
                vec!["metadata", "ranged"],
            ));
        }
    }
    if whole && langs.iter().any(|l| l.name == "rust") {
        let cli = vec![target.join("release/hurray").into_os_string()];
        programs.push(("cli inspect".into(), cli.clone(), vec!["inspect"]));
        programs.push(("cli inspect --json".into(), cli, vec!["inspect", "--json"]));
    }
    println!(
        "{:<20} {:<16} {:>10} {:>10} {:>12} {:>8}",
        "reader", "file", "peak MiB", "base MiB", "section MiB", "ratio"
    );
    for (name, prog, a) in &programs {
        let (base, _) = peak_kib(prog, a, &dir.join(FILES[0]))?;
        for f in FILES[1..].iter().filter(|f| file_wanted(f)) {
            let s = sections(&dir.join(f))?;
            let bytes = s.kv + s.index + if *f == "heads.hrry" { s.region } else { 0 };
            let (peak, refused) = peak_kib(prog, a, &dir.join(f))?;
            let ratio = (peak.saturating_sub(base) * 1024) as f64 / bytes as f64;
            println!(
                "{name:<20} {f:<16} {:>10} {:>10} {:>12} {ratio:>7.2}x{}",
                mib(peak),
                mib(base),
                format!("{:.1}", bytes as f64 / (1 << 20) as f64),
                if refused {
                    "  (whole read refused: KV array past the bound)"
                } else {
                    ""
                },
            );
        }
    }
    for s in skipped {
        println!("{s}");
    }
    Ok(())
}
