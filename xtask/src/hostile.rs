//! The hostile column of `cargo xtask matrix`: every language's reader, and
//! `hurray validate`, must refuse every file and stream of the hostile corpus (one
//! per buffer-content rule, `tests/matrix/rust/src/hostile.rs`) with an error naming
//! the rule. Where valgrind is installed, the C program and the Python SciPy path
//! also run over the whole corpus under memcheck, which must report no invalid
//! access.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::matrix::{parse_results, Cell, Lang, Status};
use crate::util::{cargo, display, exec, Result};

/// Writes the corpus with the Rust program into `dir`; returns its case names.
fn write_corpus(rust: &Lang, dir: &Path) -> Result<Vec<String>> {
    if dir.exists() {
        std::fs::remove_dir_all(dir)?;
    }
    let mut cmd = rust.command([std::ffi::OsStr::new("hostile-corpus"), dir.as_os_str()]);
    exec(&mut cmd)?;
    let manifest = std::fs::read_to_string(dir.join("manifest.tsv"))?;
    Ok(manifest
        .lines()
        .filter_map(|l| l.split('\t').next())
        .filter(|s| !s.is_empty())
        .map(String::from)
        .collect())
}

/// Runs `cmd` (a consumer's `hostile DIR`) and turns its result lines into cells;
/// every (case, container) without a line is a failure, so a crash fails its cells.
fn cells_of(consumer: &str, cmd: &mut Command, cases: &[String]) -> Vec<Cell> {
    let shown = display(cmd);
    let (stdout, crashed) = match cmd.output() {
        Ok(o) => (
            String::from_utf8_lossy(&o.stdout).into_owned(),
            (!o.status.success()).then(|| {
                format!(
                    "`{shown}` exited with {}: {}",
                    o.status,
                    String::from_utf8_lossy(&o.stderr).trim()
                )
            }),
        ),
        Err(e) => (
            String::new(),
            Some(format!("could not start `{shown}`: {e}")),
        ),
    };
    let (mut cells, _) = parse_results(consumer, &stdout);
    for case in cases {
        for container in ["file", "stream"] {
            if !cells
                .iter()
                .any(|c| c.case == *case && c.container == container)
            {
                cells.push(Cell {
                    producer: "hostile".into(),
                    consumer: consumer.into(),
                    container: container.into(),
                    case: case.clone(),
                    status: Status::Fail(
                        crashed
                            .clone()
                            .unwrap_or_else(|| "no result line".to_string()),
                    ),
                });
            }
        }
    }
    if let Some(why) = crashed {
        if cells.iter().all(|c| c.status == Status::Pass) {
            cells.push(Cell {
                producer: "hostile".into(),
                consumer: consumer.into(),
                container: "-".into(),
                case: "(exit status)".into(),
                status: Status::Fail(why),
            });
        }
    }
    cells
}

/// `hurray validate` over every file and stream: must exit 1 and name the rule.
fn cli_cells(dir: &Path, cases: &[String]) -> Result<Vec<Cell>> {
    exec(&mut cargo([
        "build",
        "--quiet",
        "-p",
        "hurray-cli",
        "--release",
    ]))?;
    let cli = crate::util::workspace_root().join("target/release/hurray");
    let manifest = std::fs::read_to_string(dir.join("manifest.tsv"))?;
    let mut cells = Vec::new();
    for line in manifest.lines() {
        let mut f = line.split('\t');
        let (Some(case), Some(rule)) = (f.next(), f.next()) else {
            continue;
        };
        if !cases.iter().any(|c| c == case) {
            continue;
        }
        for (container, ext) in [("file", "hrry"), ("stream", "hrrys")] {
            let out = Command::new(&cli)
                .arg("validate")
                .arg(dir.join(format!("{case}.{ext}")))
                .output()?;
            let text = format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            let status = if out.status.code() == Some(1) && text.contains(rule) {
                Status::Pass
            } else {
                Status::Fail(format!(
                    "`hurray validate` exited with {} and did not name {rule}: {}",
                    out.status,
                    text.trim()
                ))
            };
            cells.push(Cell {
                producer: "hostile".into(),
                consumer: "cli".into(),
                container: container.into(),
                case: case.into(),
                status,
            });
        }
    }
    Ok(cells)
}

/// `valgrind` when installed.
fn valgrind() -> Option<PathBuf> {
    Command::new("valgrind")
        .arg("--version")
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|_| PathBuf::from("valgrind"))
}

/// A consumer's command under memcheck: any invalid access (or other memcheck
/// error) makes it exit with 99; leaks are not errors here (the interpreters keep
/// memory until exit).
fn under_memcheck(vg: &Path, lang: &Lang, dir: &Path) -> Command {
    let mut cmd = Command::new(vg);
    cmd.args([
        "--tool=memcheck",
        "--error-exitcode=99",
        "--leak-check=no",
        "--track-origins=no",
        "--quiet",
    ])
    .args(&lang.argv)
    .arg("hostile")
    .arg(dir)
    .current_dir(crate::util::workspace_root())
    // CPython's small-object allocator reads uninitialised memory by design.
    .env("PYTHONMALLOC", "malloc");
    cmd
}

/// One row of the summary: consumer, passed files, passed streams, total.
fn summary(consumer: &str, cells: &[Cell], cases: usize) -> String {
    let ok = |k: &str| {
        cells
            .iter()
            .filter(|c| c.consumer == consumer && c.container == k && c.status == Status::Pass)
            .count()
    };
    format!(
        "  {consumer:<16} file {}/{cases}  stream {}/{cases}",
        ok("file"),
        ok("stream")
    )
}

/// Runs the hostile column over `langs` (plus the CLI, plus memcheck runs of C and
/// Python when valgrind is there); returns one line per failed cell.
pub fn run(langs: &[Lang], out: &Path) -> Result<Vec<String>> {
    let rust = langs
        .iter()
        .find(|l| l.name == "rust")
        .ok_or("the hostile column needs the Rust program")?;
    let dir = out.join("hostile");
    let cases = write_corpus(rust, &dir)?;
    println!(
        "\n==> [matrix] hostile corpus: {} cases (one per content rule and layout) x {{file, stream}}; every reader must refuse each, naming the rule",
        cases.len()
    );
    let mut cells = Vec::new();
    let mut consumers = Vec::new();
    for lang in langs {
        let mut cmd = lang.command([std::ffi::OsStr::new("hostile"), dir.as_os_str()]);
        cells.extend(cells_of(lang.name, &mut cmd, &cases));
        consumers.push(lang.name.to_string());
    }
    cells.extend(cli_cells(&dir, &cases)?);
    consumers.push("cli".into());
    match valgrind() {
        Some(vg) => {
            for lang in langs.iter().filter(|l| l.name == "c" || l.name == "python") {
                let name = format!("{}+memcheck", lang.name);
                let mut cmd = under_memcheck(&vg, lang, &dir);
                cells.extend(cells_of(&name, &mut cmd, &cases));
                consumers.push(name);
            }
        }
        None => println!(
            "note: valgrind not found; the memcheck runs of the C and Python consumers are skipped"
        ),
    }
    for c in &consumers {
        println!("{}", summary(c, &cells, cases.len()));
    }
    Ok(cells
        .iter()
        .filter(|c| c.status != Status::Pass)
        .map(|c| {
            format!(
                "hostile case {} ({}), consumer {}: {}",
                c.case,
                c.container,
                c.consumer,
                match &c.status {
                    Status::Fail(d) | Status::Na(d) => d.as_str(),
                    Status::Pass => "",
                }
            )
        })
        .collect())
}
