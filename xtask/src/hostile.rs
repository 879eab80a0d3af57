//! The hostile column of `cargo xtask matrix`: every language's reader, and
//! `hurray validate`, must refuse every file and stream of the hostile corpus (one
//! per buffer-content rule, `tests/matrix/rust/src/hostile.rs`) with an error naming
//! the rule. The Python program also reports its SciPy path (`build`, `scipy-build`,
//! `scipy-view`) for every CSR and CSC case: a hostile index array must never reach
//! SciPy. Where valgrind is installed, the C and Python programs also run over the
//! whole corpus under memcheck, which must report no invalid access.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use crate::matrix::{parse_results, Cell, Lang, Status};
use crate::util::{cargo, display, exec, Result};

/// One line of the corpus manifest (`CASE RULE LAYOUT ...`).
#[derive(Clone, Debug, PartialEq, Eq)]
struct CorpusCase {
    /// File stem.
    name: String,
    /// The content rule every error must name.
    rule: String,
    /// Layout name (`csr`, `coo`, `row_major`, ...).
    layout: String,
}

/// Parses `manifest.tsv`: one [`CorpusCase`] per line with at least three fields.
fn parse_manifest(text: &str) -> Vec<CorpusCase> {
    text.lines()
        .filter_map(|l| {
            let mut f = l.split('\t');
            match (f.next(), f.next(), f.next()) {
                (Some(name), Some(rule), Some(layout)) if !name.is_empty() => Some(CorpusCase {
                    name: name.into(),
                    rule: rule.into(),
                    layout: layout.into(),
                }),
                _ => None,
            }
        })
        .collect()
}

/// Writes the corpus with the Rust program into `dir`; returns its cases.
fn write_corpus(rust: &Lang, dir: &Path) -> Result<Vec<CorpusCase>> {
    if dir.exists() {
        std::fs::remove_dir_all(dir)?;
    }
    let mut cmd = rust.command([std::ffi::OsStr::new("hostile-corpus"), dir.as_os_str()]);
    exec(&mut cmd)?;
    Ok(parse_manifest(&std::fs::read_to_string(
        dir.join("manifest.tsv"),
    )?))
}

/// The containers of the Python program's SciPy path (`tests/matrix/python/hostile.py`).
const SCIPY_PATH: [&str; 3] = ["build", "scipy-build", "scipy-view"];

/// The containers `consumer` must report for `case`: `file` and `stream` for every
/// consumer; the Python program (also under memcheck) adds its SciPy path for
/// every CSR and CSC case.
fn required(consumer: &str, case: &CorpusCase) -> Vec<&'static str> {
    let mut v = vec!["file", "stream"];
    if consumer.split('+').next() == Some("python") && matches!(case.layout.as_str(), "csr" | "csc")
    {
        v.extend(SCIPY_PATH);
    }
    v
}

/// Runs `cmd` (a consumer's `hostile DIR`) and turns its result lines into cells;
/// every (case, container) without a line is a failure, so a crash fails its cells.
fn cells_of(consumer: &str, cmd: &mut Command, cases: &[CorpusCase]) -> Vec<Cell> {
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
        for container in required(consumer, case) {
            if !cells
                .iter()
                .any(|c| c.case == case.name && c.container == container)
            {
                cells.push(Cell {
                    producer: "hostile".into(),
                    consumer: consumer.into(),
                    container: container.into(),
                    case: case.name.clone(),
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
fn cli_cells(dir: &Path, cases: &[CorpusCase]) -> Result<Vec<Cell>> {
    exec(&mut cargo([
        "build",
        "--quiet",
        "-p",
        "hurray-cli",
        "--release",
    ]))?;
    let cli = crate::util::workspace_root().join("target/release/hurray");
    let mut cells = Vec::new();
    for case in cases {
        let rule = &case.rule;
        for (container, ext) in [("file", "hrry"), ("stream", "hrrys")] {
            let out = Command::new(&cli)
                .arg("validate")
                .arg(dir.join(format!("{}.{ext}", case.name)))
                .output()?;
            let text = format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            let status = if out.status.code() == Some(1) && text.contains(rule.as_str()) {
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
                case: case.name.clone(),
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
/// memory until exit). The Python run reads `tests/matrix/python/valgrind.supp`:
/// CPython 3.11's own definedness errors and one glibc loader read, each explained
/// there.
fn under_memcheck(vg: &Path, lang: &Lang, dir: &Path) -> Command {
    let mut cmd = Command::new(vg);
    cmd.args([
        "--tool=memcheck",
        "--error-exitcode=99",
        "--leak-check=no",
        "--track-origins=no",
        "--quiet",
    ]);
    if lang.name == "python" {
        let supp = crate::util::workspace_root().join("tests/matrix/python/valgrind.supp");
        cmd.arg(format!("--suppressions={}", supp.display()));
    }
    cmd.args(&lang.argv)
        .arg("hostile")
        .arg(dir)
        .current_dir(crate::util::workspace_root())
        // CPython's small-object allocator reads uninitialised memory by design.
        .env("PYTHONMALLOC", "malloc");
    cmd
}

/// One row of the summary: the consumer, then `CONTAINER passed/required` for each
/// container it must report (`file`, `stream`, and the Python SciPy path).
fn summary(consumer: &str, cells: &[Cell], cases: &[CorpusCase]) -> String {
    let mut row = format!("  {consumer:<16}");
    for container in ["file", "stream"].into_iter().chain(SCIPY_PATH) {
        let wanted: Vec<&CorpusCase> = cases
            .iter()
            .filter(|c| required(consumer, c).contains(&container))
            .collect();
        if wanted.is_empty() {
            continue;
        }
        let ok = wanted
            .iter()
            .filter(|case| {
                cells.iter().any(|c| {
                    c.consumer == consumer
                        && c.container == container
                        && c.case == case.name
                        && c.status == Status::Pass
                })
            })
            .count();
        let _ = write!(row, " {container} {ok}/{}", wanted.len());
    }
    row
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
        "\n==> [matrix] hostile corpus: {} cases (one per content rule and layout) x {{file, stream}}; every reader must refuse each, naming the rule (Python also on its SciPy path for the {} CSR/CSC cases)",
        cases.len(),
        cases
            .iter()
            .filter(|c| required("python", c).len() > 2)
            .count()
    );
    let mut cells = Vec::new();
    // Each consumer and the seconds its run took.
    let mut consumers: Vec<(String, f64)> = Vec::new();
    for lang in langs {
        let started = Instant::now();
        let mut cmd = lang.command([std::ffi::OsStr::new("hostile"), dir.as_os_str()]);
        cells.extend(cells_of(lang.name, &mut cmd, &cases));
        consumers.push((lang.name.to_string(), started.elapsed().as_secs_f64()));
    }
    let started = Instant::now();
    cells.extend(cli_cells(&dir, &cases)?);
    consumers.push(("cli".into(), started.elapsed().as_secs_f64()));
    match valgrind() {
        Some(vg) => {
            for lang in langs.iter().filter(|l| l.name == "c" || l.name == "python") {
                let started = Instant::now();
                let name = format!("{}+memcheck", lang.name);
                let mut cmd = under_memcheck(&vg, lang, &dir);
                cells.extend(cells_of(&name, &mut cmd, &cases));
                consumers.push((name, started.elapsed().as_secs_f64()));
            }
        }
        None => println!(
            "note: valgrind not found; the memcheck runs of the C and Python consumers are skipped"
        ),
    }
    for (c, secs) in &consumers {
        println!("{} ({secs:.1}s)", summary(c, &cells, &cases));
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

#[cfg(test)]
mod tests {
    use super::*;

    fn case(name: &str, layout: &str) -> CorpusCase {
        CorpusCase {
            name: name.into(),
            rule: "PointerOrder".into(),
            layout: layout.into(),
        }
    }

    fn cell(consumer: &str, container: &str, case: &str, status: Status) -> Cell {
        Cell {
            producer: "hostile".into(),
            consumer: consumer.into(),
            container: container.into(),
            case: case.into(),
            status,
        }
    }

    #[test]
    fn manifest_lines_need_three_fields() {
        let got = parse_manifest("a\tPointerOrder\tcsr\tfloat32\t4,5\t20,40,40\nb\tScaleValue\n\n");
        assert_eq!(got, vec![case("a", "csr")]);
    }

    #[test]
    fn only_python_reports_the_scipy_path_and_only_for_csr_csc() {
        assert_eq!(required("c", &case("a", "csr")), ["file", "stream"]);
        assert_eq!(required("python", &case("a", "coo")), ["file", "stream"]);
        for consumer in ["python", "python+memcheck"] {
            assert_eq!(
                required(consumer, &case("a", "csc")),
                ["file", "stream", "build", "scipy-build", "scipy-view"]
            );
        }
    }

    #[test]
    fn a_missing_scipy_line_fails_its_cell() {
        let out = "result\thostile\tfile\ta\tpass\tPointerOrder\n\
                   result\thostile\tstream\ta\tpass\tPointerOrder\n\
                   result\thostile\tbuild\ta\tpass\tPointerOrder\n\
                   result\thostile\tscipy-build\ta\tpass\tPointerOrder\n";
        let mut cmd = Command::new("printf");
        cmd.arg(out);
        let cells = cells_of("python", &mut cmd, &[case("a", "csr")]);
        let failed: Vec<&Cell> = cells.iter().filter(|c| c.status != Status::Pass).collect();
        assert_eq!(failed.len(), 1, "{cells:?}");
        assert_eq!(failed[0].container, "scipy-view");
        assert_eq!(failed[0].status, Status::Fail("no result line".into()));
    }

    #[test]
    fn summary_counts_each_required_container() {
        let cases = [case("a", "csr"), case("b", "coo")];
        let mut cells = vec![
            cell("python", "file", "a", Status::Pass),
            cell("python", "file", "b", Status::Pass),
            cell("python", "stream", "a", Status::Pass),
            cell("python", "stream", "b", Status::Fail("x".into())),
            cell("python", "scipy-view", "a", Status::Pass),
            cell("c", "file", "a", Status::Pass),
        ];
        assert_eq!(
            summary("python", &cells, &cases),
            "  python           file 2/2 stream 1/2 build 0/1 scipy-build 0/1 scipy-view 1/1"
        );
        cells.push(cell("c", "stream", "a", Status::Pass));
        assert_eq!(
            summary("c", &cells, &cases),
            "  c                file 1/2 stream 1/2"
        );
    }
}
