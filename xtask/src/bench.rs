//! `cargo xtask bench`: every language's benchmarks, then one table.
//!
//! Runs, each with its output shown as it comes:
//!
//! 1. Rust: `cargo bench --workspace --bench "*" -- --output-format bencher` (the
//!    criterion benches of hurray-core, hurray-io and hurray-ffi);
//! 2. C: `tests/c/bench_abi.c` (`cargo xtask bench-c --c-only`);
//! 3. Python: `bindings/python/benchmarks/bench.py` in the development venv;
//! 4. Go: `go test -run '^$' -bench . ./...` in `bindings/go`.
//!
//! 5. Network: a 256 MiB GET on loopback by every language's client, MiB/s and the
//!    ratio to the Rust client (`bench_net.rs`; its own table, printed first);
//!
//! and then prints one table: every figure with the comparison it belongs to
//! (`1.05 x hurray_io_direct`), followed by the measures every language has
//! (open + view of a 1 MiB tensor, a small ABI call, a stream decode) side by side
//! with their ratio to Rust. A suite whose toolchain is missing is skipped with a
//! note; a suite whose output cannot be read is shown raw (above) and named.

use std::fmt::Write as _;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use clap::Args;

use crate::util::{cargo, display, workspace_root, Result};

/// Arguments of `cargo xtask bench`.
#[derive(Debug, Args)]
pub struct BenchArgs {
    /// Shorter runs (criterion 1 s warm-up + 2 s measurement, Go -benchtime 200ms,
    /// Python --quick): numbers are noisier.
    #[arg(long)]
    pub quick: bool,
    /// Only these suites (comma-separated: rust,c,python,go,net).
    #[arg(long)]
    pub only: Option<String>,
    /// Languages of the network table (comma-separated; default every language).
    #[arg(long)]
    pub net_langs: Option<String>,
    /// Passed to `cargo bench --workspace --bench "*"` verbatim, e.g.
    /// `cargo xtask bench -- --bench codec`.
    #[arg(last = true)]
    pub cargo_args: Vec<String>,
}

/// One benchmark figure.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// `rust`, `c`, `python`, `go`.
    pub suite: &'static str,
    /// The benchmark's own name.
    pub name: String,
    /// Seconds per operation.
    pub secs: f64,
    /// What the ratio is against (a row name of the same suite), when it has one.
    pub baseline: Option<String>,
}

/// Runs `cmd`, echoing its output line by line, and returns stdout.
fn tee(cmd: &mut Command) -> Result<String> {
    let shown = display(cmd);
    println!("$ {shown}");
    let mut child = cmd
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| format!("could not start `{shown}`: {e}"))?;
    let mut out = String::new();
    for line in BufReader::new(child.stdout.take().expect("piped")).lines() {
        let line = line?;
        println!("{line}");
        out.push_str(&line);
        out.push('\n');
    }
    let status = child.wait()?;
    if !status.success() {
        return Err(format!("`{shown}` failed: {status}").into());
    }
    Ok(out)
}

fn number(s: &str) -> Option<f64> {
    s.replace(',', "").parse().ok()
}

/// Criterion's bencher lines: `test GROUP/NAME ... bench:   1,234 ns/iter (+/- 5)`.
pub fn parse_criterion(out: &str) -> Vec<Row> {
    let mut rows = Vec::new();
    for line in out.lines() {
        let Some(rest) = line.strip_prefix("test ") else {
            continue;
        };
        let Some((name, figure)) = rest.split_once(" ... bench:") else {
            continue;
        };
        let Some(ns) = figure.split_whitespace().next().and_then(number) else {
            continue;
        };
        rows.push(Row {
            suite: "rust",
            name: name.trim().to_string(),
            secs: ns * 1e-9,
            baseline: None,
        });
    }
    // Ratios: encode and encode_into against decode of the same input; every other
    // group against its first member.
    let names: Vec<String> = rows.iter().map(|r| r.name.clone()).collect();
    for r in &mut rows {
        let Some((group, what)) = r.name.split_once('/') else {
            continue;
        };
        let base = match group {
            "decode" => None,
            "encode" | "encode_into" => Some(format!("decode/{what}")),
            _ => names
                .iter()
                .find(|n| n.starts_with(&format!("{group}/")))
                .filter(|n| **n != r.name)
                .cloned(),
        };
        r.baseline = base.filter(|b| names.contains(b));
    }
    rows
}

/// `tests/c/bench_abi.c`'s lines.
pub fn parse_c(out: &str) -> Vec<Row> {
    let mut rows = Vec::new();
    for line in out.lines() {
        let line = line.trim();
        if let Some((name, rest)) = line.split_once(':') {
            if let Some(ns) = rest
                .trim()
                .strip_suffix(')')
                .and_then(|_| rest.split_whitespace().next())
                .and_then(number)
                .filter(|_| rest.contains("ns/call"))
            {
                rows.push(Row {
                    suite: "c",
                    name: name.trim().to_string(),
                    secs: ns * 1e-9,
                    baseline: None,
                });
                continue;
            }
            if name.starts_with("stream decode") {
                if let Some(ms) = rest
                    .split_whitespace()
                    .skip_while(|w| *w != "median")
                    .nth(1)
                    .and_then(number)
                {
                    rows.push(Row {
                        suite: "c",
                        name: name.trim().to_string(),
                        secs: ms * 1e-3,
                        baseline: None,
                    });
                }
            }
        }
    }
    rows
}

/// `bindings/python/benchmarks/bench.py`'s lines.
pub fn parse_python(out: &str) -> Vec<Row> {
    let mut rows: Vec<Row> = Vec::new();
    fn push(rows: &mut Vec<Row>, name: &str, secs: f64, base: Option<&str>) {
        rows.push(Row {
            suite: "python",
            name: name.to_string(),
            secs,
            baseline: base.map(str::to_string),
        })
    }
    let ms_after = |line: &str, label: &str| -> Option<f64> {
        let at = line.find(label)? + label.len();
        line[at..].split_whitespace().next().and_then(number)
    };
    for line in out.lines() {
        let l = line.trim();
        for (label, name, base) in [
            (
                "hurray.load + numpy.asarray",
                "MiniLM: hurray.load + numpy.asarray",
                None,
            ),
            (
                "safe_open + get_tensor",
                "MiniLM: safetensors safe_open + get_tensor",
                Some("MiniLM: hurray.load + numpy.asarray"),
            ),
            (
                "safetensors.numpy.load_file",
                "MiniLM: safetensors.numpy.load_file",
                Some("MiniLM: hurray.load + numpy.asarray"),
            ),
        ] {
            if l.starts_with(label) {
                if let Some(ms) = ms_after(l, label) {
                    push(&mut rows, name, ms * 1e-3, base);
                }
            }
        }
        // "   1 MiB   hurray  0.022 ms   numpy.load(mmap_mode='r')  0.063 ms"
        if let (Some((size, _)), Some(h), Some(n)) = (
            l.split_once(" MiB"),
            ms_after(l, "hurray"),
            ms_after(l, "numpy.load(mmap_mode='r')"),
        ) {
            let size = size.trim();
            let ours = format!("open + view one {size} MiB tensor: hurray.load + numpy.asarray");
            let first = rows
                .iter()
                .find(|r| {
                    r.name.starts_with("open + view one") && r.name.ends_with("numpy.asarray")
                })
                .map(|r| r.name.clone());
            push(
                &mut rows,
                &ours,
                h * 1e-3,
                first.as_deref().filter(|f| *f != ours),
            );
            push(
                &mut rows,
                &format!("open + view one {size} MiB tensor: numpy.load(mmap_mode='r')"),
                n * 1e-3,
                Some(&ours),
            );
        }
        // "t.shape   20.1 ns   t._noop()   22.0 ns   ratio 0.91x"
        if let (Some(s), Some(n)) = (ms_after(l, "t.shape"), ms_after(l, "t._noop()")) {
            push(
                &mut rows,
                "t._noop() (a native no-op method)",
                n * 1e-9,
                None,
            );
            push(
                &mut rows,
                "t.shape",
                s * 1e-9,
                Some("t._noop() (a native no-op method)"),
            );
        }
    }
    rows
}

/// `go test -bench` lines: `BenchmarkX/sub-2   1234   5678 ns/op ...`.
pub fn parse_go(out: &str) -> Vec<Row> {
    let mut rows: Vec<Row> = Vec::new();
    for line in out.lines() {
        let mut w = line.split_whitespace();
        let (Some(name), Some(_iters), Some(ns), Some("ns/op")) =
            (w.next(), w.next(), w.next(), w.next())
        else {
            continue;
        };
        let Some(name) = name.strip_prefix("Benchmark") else {
            continue;
        };
        let Some(ns) = number(ns) else { continue };
        // Drop the -GOMAXPROCS suffix.
        let name = match name.rsplit_once('-') {
            Some((n, p)) if p.chars().all(|c| c.is_ascii_digit()) => n.to_string(),
            _ => name.to_string(),
        };
        let group = name.split('/').next().unwrap_or("").to_string();
        let baseline = rows
            .iter()
            .find(|r| r.name.split('/').next() == Some(group.as_str()) && r.name.contains('/'))
            .map(|r| r.name.clone());
        rows.push(Row {
            suite: "go",
            name,
            secs: ns * 1e-9,
            baseline,
        });
    }
    // Stream reads against the fresh-mapping baseline, the page-fault floor.
    let fresh = rows
        .iter()
        .find(|r| r.name.starts_with("StreamReadBaselineFreshMapping"))
        .map(|r| r.name.clone());
    for r in &mut rows {
        if r.name == "StreamRead/hurray.Reader" && fresh.is_some() {
            r.baseline = fresh.clone();
        }
    }
    rows
}

/// A duration with a unit that fits.
pub fn human(secs: f64) -> String {
    match secs {
        s if s < 1e-6 => format!("{:.1} ns", s * 1e9),
        s if s < 1e-3 => format!("{:.2} us", s * 1e6),
        s if s < 1.0 => format!("{:.3} ms", s * 1e3),
        s => format!("{s:.3} s"),
    }
}

/// Measures every language has, by suite and row name (the first that exists).
const ACROSS: &[(&str, &[(&str, &str)])] = &[
    (
        "open a file + zero-copy view of one 1 MiB tensor",
        &[
            ("rust", "file_open_mmap_and_view/1MiB"),
            (
                "python",
                "open + view one 1 MiB tensor: hurray.load + numpy.asarray",
            ),
            ("go", "OpenView/1MiB"),
        ],
    ),
    (
        "the same for a 1 GiB tensor",
        &[
            ("rust", "file_open_mmap_and_view/1GiB"),
            (
                "python",
                "open + view one 1024 MiB tensor: hurray.load + numpy.asarray",
            ),
            ("go", "OpenView/1024MiB"),
        ],
    ),
    (
        "one small call through the C ABI",
        &[
            ("rust", "abi_call/hurray_tensor_abi_version"),
            ("c", "hurray_tensor_abi_version"),
            ("python", "t.shape"),
            ("go", "SmallCall/Tensor.Rank"),
        ],
    ),
    (
        "decode a 64 MiB stream through the C ABI",
        &[
            ("rust", "stream_decode_64MiB/c_abi"),
            ("c", "stream decode 64 MiB (C ABI, 1 MiB reads)"),
        ],
    ),
];

/// The one table: every row with its comparison, then the cross-language measures.
pub fn table(rows: &[Row], missing: &[String]) -> String {
    let mut out = String::new();
    let w = rows
        .iter()
        .map(|r| r.name.len())
        .max()
        .unwrap_or(10)
        .clamp(10, 64);
    let _ = writeln!(
        out,
        "{:<7} {:<w$} {:>11}   ratio (what it compares)",
        "suite", "benchmark", "time/op"
    );
    for r in rows {
        let ratio = r
            .baseline
            .as_ref()
            .and_then(|b| rows.iter().find(|x| x.suite == r.suite && &x.name == b))
            .map(|b| format!("{:>7.2} x {}", r.secs / b.secs, b.name))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "{:<7} {:<w$} {:>11}   {ratio}",
            r.suite,
            r.name,
            human(r.secs)
        );
    }
    let _ = writeln!(out, "\nthe same measure in every language (ratio to Rust):");
    for (what, members) in ACROSS {
        let found: Vec<(&str, &Row)> = members
            .iter()
            .filter_map(|(s, n)| {
                rows.iter()
                    .find(|r| r.suite == *s && r.name == *n)
                    .map(|r| (*s, r))
            })
            .collect();
        if found.is_empty() {
            continue;
        }
        let _ = writeln!(out, "  {what}:");
        let rust = found
            .iter()
            .find(|(s, _)| *s == "rust")
            .map(|(_, r)| r.secs);
        for (s, r) in &found {
            let ratio = rust
                .map(|b| format!("{:>7.2} x rust", r.secs / b))
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "    {s:<7} {:>11}   {ratio}   ({})",
                human(r.secs),
                r.name
            );
        }
    }
    for m in missing {
        let _ = writeln!(out, "note: {m}");
    }
    out
}

fn rust_suite(args: &BenchArgs) -> Result<Vec<Row>> {
    let mut cmd = cargo(["bench", "--workspace", "--bench", "*"]);
    cmd.args(&args.cargo_args)
        .arg("--")
        .args(["--output-format", "bencher"]);
    if args.quick {
        cmd.args(["--warm-up-time", "1", "--measurement-time", "2"]);
    }
    Ok(parse_criterion(&tee(&mut cmd)?))
}

fn c_suite(_: &BenchArgs) -> Result<Vec<Row>> {
    let exe = std::env::current_exe()?;
    let out = tee(Command::new(exe)
        .args(["bench-c", "--c-only"])
        .current_dir(workspace_root()))?;
    Ok(parse_c(&out))
}

fn python_suite(args: &BenchArgs) -> Result<Vec<Row>> {
    let py = crate::python::dev_python()?.ok_or("skipped: no python3 >= 3.10")?;
    // bench.py compares with safetensors, which the test venv does not need.
    let has = |m: &str| {
        Command::new(&py)
            .args(["-c", &format!("import {m}")])
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    if !has("safetensors") {
        let mut pip = Command::new(&py);
        pip.args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "safetensors",
        ]);
        println!("$ {}", display(&pip));
        pip.status()?;
    }
    let mut cmd = Command::new(py);
    cmd.arg(workspace_root().join("bindings/python/benchmarks/bench.py"))
        .current_dir(workspace_root());
    if args.quick {
        cmd.arg("--quick");
    }
    Ok(parse_python(&tee(&mut cmd)?))
}

fn go_suite(args: &BenchArgs) -> Result<Vec<Row>> {
    let has_go = Command::new("go")
        .arg("version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !has_go {
        return Err("skipped: `go` not found".into());
    }
    crate::go::build_static_lib()?;
    let mut cmd = Command::new("go");
    cmd.args(["test", "-run", "^$", "-bench", ".", "-count", "1"])
        .args(if args.quick {
            vec!["-benchtime", "200ms"]
        } else {
            vec![]
        })
        .arg(".")
        .current_dir(crate::go::module_dir())
        .env("CGO_ENABLED", "1");
    Ok(parse_go(&tee(&mut cmd)?))
}

/// Runs `cargo xtask bench`: every suite (a failing one is noted and the others
/// still run), then the table. Fails when a suite failed.
pub fn run(args: &BenchArgs) -> Result {
    type Suite = fn(&BenchArgs) -> Result<Vec<Row>>;
    let suites: [(&str, &str, Suite); 4] = [
        ("rust", "criterion benches of the workspace", rust_suite),
        ("c", "tests/c/bench_abi.c", c_suite),
        (
            "python",
            "bindings/python/benchmarks/bench.py",
            python_suite,
        ),
        ("go", "go test -bench in bindings/go", go_suite),
    ];
    let mut rows = Vec::new();
    let mut notes = Vec::new();
    let mut failed = Vec::new();
    for (name, what, suite) in suites {
        if !args
            .only
            .as_deref()
            .is_none_or(|o| o.split(',').any(|x| x.trim() == name))
        {
            continue;
        }
        println!("\n==> [xtask bench] {name}: {what}");
        match suite(args) {
            Ok(r) if r.is_empty() => {
                notes.push(format!("{name}: no figures found in the output above"));
                failed.push(name);
            }
            Ok(r) => rows.extend(r),
            Err(e) => {
                let e = e.to_string();
                if !e.starts_with("skipped") {
                    failed.push(name);
                }
                notes.push(format!("{name}: {e}"));
            }
        }
    }
    if args
        .only
        .as_deref()
        .is_none_or(|o| o.split(',').any(|x| x.trim() == "net"))
    {
        println!("\n==> [xtask bench] net: a 256 MiB GET on loopback, every language's client");
        match crate::bench_net::run(args.net_langs.as_deref()) {
            Ok(f) if f.is_empty() => {}
            Ok(f) => {
                notes.extend(f.into_iter().map(|f| format!("net: {f}")));
                failed.push("net");
            }
            Err(e) => {
                notes.push(format!("net: {e}"));
                failed.push("net");
            }
        }
    }
    println!("\n==> [xtask bench] every figure, one table (time per operation)");
    print!("{}", table(&rows, &notes));
    if failed.is_empty() {
        Ok(())
    } else {
        Err(format!("bench: suites failed: {}", failed.join(", ")).into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn criterion_bencher_lines() {
        let out = "test decode/f32 ... bench:       1,000 ns/iter (+/- 5)\n\
                   test encode/f32 ... bench:       2,000 ns/iter (+/- 5)\n\
                   test stream/direct ... bench:   10 ns/iter (+/- 1)\n\
                   test stream/c_abi ... bench:   11 ns/iter (+/- 1)\n\
                   test foo ... ok\n";
        let r = parse_criterion(out);
        assert_eq!(r.len(), 4);
        assert_eq!(r[0].baseline, None);
        assert_eq!(r[1].baseline.as_deref(), Some("decode/f32"));
        assert_eq!(r[2].baseline, None);
        assert_eq!(r[3].baseline.as_deref(), Some("stream/direct"));
        assert!((r[1].secs - 2e-6).abs() < 1e-12);
        let t = table(&r, &[]);
        assert!(t.contains("2.00 x decode/f32"), "{t}");
    }

    #[test]
    fn c_python_go_lines() {
        let c = parse_c(
            "hurray_tensor_abi_version:    1.50 ns/call (median of 9 x 1000 calls; best 1.40)\n\
             stream decode 64 MiB (C ABI, 1 MiB reads): median 12.50 ms (5.00 GiB/s), best 12.00 ms, x\n",
        );
        assert_eq!(c.len(), 2);
        assert!((c[0].secs - 1.5e-9).abs() < 1e-15);
        assert!((c[1].secs - 12.5e-3).abs() < 1e-12);
        let p = parse_python(
            "   hurray.load + numpy.asarray         0.400 ms\n\
                safe_open + get_tensor             54.000 ms   ratio  135.0x\n\
                   1 MiB   hurray    0.022 ms   numpy.load(mmap_mode='r')    0.063 ms\n\
                t.shape   20.0 ns   t._noop()   22.0 ns   ratio 0.91x\n",
        );
        let names: Vec<&str> = p.iter().map(|r| r.name.as_str()).collect();
        assert!(
            names.contains(&"MiniLM: safetensors safe_open + get_tensor"),
            "{names:?}"
        );
        assert!(names.contains(&"open + view one 1 MiB tensor: hurray.load + numpy.asarray"));
        assert!(names.contains(&"t.shape"));
        let g = parse_go(
            "BenchmarkOpenView/1MiB-2   9537   25141 ns/op\n\
             BenchmarkOpenView/1024MiB-2   6040   35057 ns/op\n",
        );
        assert_eq!(g[1].name, "OpenView/1024MiB");
        assert_eq!(g[1].baseline.as_deref(), Some("OpenView/1MiB"));
        let all: Vec<Row> = c.into_iter().chain(p).chain(g).collect();
        let t = table(&all, &[]);
        assert!(
            t.contains("open a file + zero-copy view of one 1 MiB tensor"),
            "{t}"
        );
    }
}
