//! `cargo xtask matrix`: every language writes every case of `tests/cases/cases.txt`
//! as an HRRYFILE and as a stream, every language reads every language's outputs,
//! and all outputs of one case must be byte-identical across producers.
//!
//! Each language has one program with the same command line (`tests/matrix/README.md`):
//! `produce CASES DIR` writes `CASE.hrry` and `CASE.hrrys` (or `CASE.EXT.na` with the
//! reason it cannot), `consume CASES DIR...` prints one tab-separated line per
//! (producer, container, case): `result PRODUCER CONTAINER CASE pass|fail|na DETAIL`,
//! plus `note TEXT` lines for what it cannot check. This module builds the programs,
//! runs them, prints the producer x consumer tables and the byte-identity check, and
//! checks the hostile column (`hostile.rs`) and that every language renders every
//! element-type and layout tag the same way (`names.rs`), then proves the matrix
//! catches damage: a copy of the Rust outputs with one byte
//! flipped in a buffer and one in a descriptor (file and stream each) must fail
//! exactly those cells in every consumer, with a message naming the case, the
//! producer, the consumer and what differed.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use clap::Args;

use crate::test::Outcome;
use crate::util::{cargo, display, exec, workspace_root, Result};

/// Arguments of `cargo xtask matrix`.
#[derive(Debug, Args)]
pub struct MatrixArgs {
    /// Only these languages (comma-separated: rust,c,python,go).
    #[arg(long)]
    pub only: Option<String>,
    /// Skip the self-test (flipped bytes must fail the right cells).
    #[arg(long)]
    pub no_self_test: bool,
    /// Only the network column (`matrix_net.rs`): skip the file and stream tables,
    /// the hostile and names columns and the self-test.
    #[arg(long)]
    pub net_only: bool,
}

/// A built producer/consumer program: its name and the command line before
/// `produce`/`consume`/`views`.
#[derive(Clone, Debug)]
pub struct Lang {
    /// `rust`, `c`, `python`, `go`, `java`, `node`.
    pub name: &'static str,
    /// Program and leading arguments.
    pub argv: Vec<OsString>,
}

impl Lang {
    /// A command running this program with `args` after its prefix.
    pub fn command<I, S>(&self, args: I) -> Command
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        let mut cmd = Command::new(&self.argv[0]);
        cmd.args(&self.argv[1..])
            .args(args.into_iter().map(Into::into))
            .current_dir(workspace_root());
        cmd
    }
}

/// The language order of the tables.
pub const LANGS: [&str; 6] = ["rust", "c", "python", "go", "java", "node"];

/// The cargo target directory (`$CARGO_TARGET_DIR` or `target/`).
pub fn target_dir() -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) => workspace_root().join(dir),
        None => workspace_root().join("target"),
    }
}

/// The case list.
pub fn cases_file() -> PathBuf {
    workspace_root().join("tests/cases/cases.txt")
}

/// The case names, in file order.
pub fn case_names(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| l.trim().strip_prefix("case "))
        .map(|n| n.trim().to_string())
        .collect()
}

fn has_program(program: &str, arg: &str) -> bool {
    Command::new(program)
        .arg(arg)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

fn run_quiet(cmd: &mut Command) -> Result {
    let shown = display(cmd);
    let out = cmd
        .output()
        .map_err(|e| format!("could not start `{shown}`: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "`{shown}` failed ({}):\n{}{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
        .into())
    }
}

/// The Rust program: `target/release/hurray-matrix`.
pub fn build_rust() -> Result<Lang> {
    exec(&mut cargo([
        "build",
        "--quiet",
        "-p",
        "hurray-matrix",
        "--release",
    ]))
    .map_err(|e| format!("`cargo build -p hurray-matrix --release` failed: {e}"))?;
    Ok(Lang {
        name: "rust",
        argv: vec![target_dir().join("release/hurray-matrix").into()],
    })
}

/// The C program: `tests/matrix/c/matrix.c` and `hostile.c` against the committed
/// header and the release staticlib; `Err(note)` inside when no compiler is found.
pub fn build_c() -> Result<std::result::Result<Lang, String>> {
    let cc = std::env::var("CC")
        .ok()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "cc".into());
    if !has_program(&cc, "--version") {
        return Ok(Err(format!("no C compiler (`{cc}`, set $CC)")));
    }
    exec(&mut cargo([
        "build",
        "--quiet",
        "-p",
        "hurray-ffi",
        "--release",
    ]))
    .map_err(|e| format!("`cargo build -p hurray-ffi --release` failed: {e}"))?;
    let bin = target_dir().join("matrix/bin");
    std::fs::create_dir_all(&bin)?;
    let out = bin.join("c-matrix");
    let root = workspace_root();
    run_quiet(
        Command::new(&cc)
            .args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-O2", "-I"])
            .arg(root.join("include"))
            .arg(root.join("tests/matrix/c/matrix.c"))
            .arg(root.join("tests/matrix/c/hostile.c"))
            .arg(target_dir().join("release/libhurray_ffi.a"))
            .args(["-lpthread", "-ldl", "-lm", "-o"])
            .arg(&out),
    )?;
    Ok(Ok(Lang {
        name: "c",
        argv: vec![out.into()],
    }))
}

/// The Python program, run by the development venv with the extension built into it.
pub fn build_python() -> Result<std::result::Result<Lang, String>> {
    let Some(py) = crate::python::dev_python()? else {
        return Ok(Err(
            "no python3 >= 3.10 with venv (set HURRAY_PYTHON)".into()
        ));
    };
    Ok(Ok(Lang {
        name: "python",
        argv: vec![
            py.into(),
            workspace_root()
                .join("tests/matrix/python/matrix.py")
                .into(),
        ],
    }))
}

/// The Go program: `tests/matrix/go`, a module that uses `bindings/go` through a
/// `replace` directive.
pub fn build_go() -> Result<std::result::Result<Lang, String>> {
    let dir = workspace_root().join("tests/matrix/go");
    if !dir.join("go.mod").is_file() {
        return Ok(Err("tests/matrix/go is not there yet".into()));
    }
    if !has_program("go", "version") {
        return Ok(Err("`go` not found (Go 1.24 or newer)".into()));
    }
    crate::go::build_static_lib()?;
    run_quiet(
        Command::new("go")
            .args(["vet", "."])
            .current_dir(&dir)
            .env("CGO_ENABLED", "1"),
    )?;
    let out = target_dir().join("matrix/bin/go-matrix");
    run_quiet(
        Command::new("go")
            .args(["build", "-o"])
            .arg(&out)
            .arg(".")
            .current_dir(&dir)
            .env("CGO_ENABLED", "1"),
    )?;
    Ok(Ok(Lang {
        name: "go",
        argv: vec![out.into()],
    }))
}

/// The Node program: `node tests/matrix/node/matrix.js` over bindings/node, whose
/// addon `cargo xtask node build` makes (its types must be current).
pub fn build_node() -> Result<std::result::Result<Lang, String>> {
    if !crate::node::has_node() {
        return Ok(Err("`node` not found (Node.js 18 or newer)".into()));
    }
    crate::node::build(true)?;
    Ok(Ok(Lang {
        name: "node",
        argv: vec![
            "node".into(),
            workspace_root().join("tests/matrix/node/matrix.js").into(),
        ],
    }))
}

/// Builds the selected languages' programs; returns them and a note per language
/// that cannot run here.
pub fn build_langs(only: Option<&str>) -> Result<(Vec<Lang>, Vec<String>)> {
    let wanted = |n: &str| only.is_none_or(|o| o.split(',').any(|x| x.trim() == n));
    let mut langs = Vec::new();
    let mut skipped = Vec::new();
    // Python last: maturin builds hurray-ffi with other features into target/release,
    // so building it between C and Go would make cargo rebuild the staticlib twice.
    for name in ["rust", "c", "go", "java", "node", "python"] {
        if !wanted(name) {
            continue;
        }
        let started = Instant::now();
        let built = match name {
            "rust" => Ok(build_rust()?),
            "c" => build_c()?,
            "python" => build_python()?,
            "java" => crate::java::build_matrix()?,
            "node" => build_node()?,
            _ => build_go()?,
        };
        match built {
            Ok(l) => {
                println!(
                    "built the {name} producer/consumer ({:.1}s)",
                    started.elapsed().as_secs_f64()
                );
                langs.push(l);
            }
            Err(why) => skipped.push(format!("{name}: skipped: {why}")),
        }
    }
    langs.sort_by_key(|l: &Lang| LANGS.iter().position(|n| *n == l.name));
    Ok((langs, skipped))
}

// ---------------------------------------------------------------- results

/// What a consumer said about one output.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Status {
    /// Every check passed.
    Pass,
    /// A check failed; the detail says which.
    Fail(String),
    /// The producer could not write it or the consumer cannot read it; why.
    Na(String),
}

/// One (producer, consumer, container, case) result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cell {
    /// Producer (output directory name).
    pub producer: String,
    /// Consumer language.
    pub consumer: String,
    /// `file` or `stream`.
    pub container: String,
    /// Case name.
    pub case: String,
    /// Outcome.
    pub status: Status,
}

impl Cell {
    /// The sentence a failure is reported with.
    pub fn describe(&self) -> String {
        let what = match &self.status {
            Status::Pass => "passed".to_string(),
            Status::Fail(d) => d.clone(),
            Status::Na(d) => format!("n/a: {d}"),
        };
        format!(
            "case {}, producer {}, consumer {} ({}): {what}",
            self.case, self.producer, self.consumer, self.container
        )
    }
}

/// Parses a consumer's stdout into cells and notes.
/// One table cell's text for `cells`: `ok N/N`, or `FAIL F/N` when any failed, plus
/// ` +Kna` for the n/a ones (not counted in N).
pub fn tally<'a>(cells: impl Iterator<Item = &'a Cell>) -> String {
    let (mut pass, mut fail, mut na) = (0, 0, 0);
    for c in cells {
        match c.status {
            Status::Pass => pass += 1,
            Status::Fail(_) => fail += 1,
            Status::Na(_) => na += 1,
        }
    }
    let mut s = if fail > 0 {
        format!("FAIL {fail}/{}", pass + fail)
    } else {
        format!("ok {pass}/{pass}")
    };
    if na > 0 {
        let _ = write!(s, " +{na}na");
    }
    s
}

pub fn parse_results(consumer: &str, stdout: &str) -> (Vec<Cell>, Vec<String>) {
    let mut cells = Vec::new();
    let mut notes = Vec::new();
    for line in stdout.lines() {
        let f: Vec<&str> = line.splitn(6, '\t').collect();
        match f.as_slice() {
            ["result", producer, container, case, status, rest @ ..] => {
                let detail = rest.first().copied().unwrap_or("").to_string();
                let status = match *status {
                    "pass" => Status::Pass,
                    "na" => Status::Na(detail),
                    _ => Status::Fail(if detail.is_empty() {
                        format!("status {status:?} without detail")
                    } else {
                        detail
                    }),
                };
                cells.push(Cell {
                    producer: producer.to_string(),
                    consumer: consumer.to_string(),
                    container: container.to_string(),
                    case: case.to_string(),
                    status,
                });
            }
            ["note", text, ..] => notes.push(text.to_string()),
            _ => {}
        }
    }
    (cells, notes)
}

/// Runs `lang`'s consumer over the producer directories; cells it did not report are
/// failures ("no result"), so a consumer that crashes midway fails its cells.
pub fn consume(
    lang: &Lang,
    cases: &[String],
    dirs: &[PathBuf],
) -> Result<(Vec<Cell>, Vec<String>)> {
    let mut cmd = lang.command([OsString::from("consume"), cases_file().into()]);
    cmd.args(dirs);
    let shown = display(&cmd);
    let out = cmd
        .output()
        .map_err(|e| format!("could not start `{shown}`: {e}"))?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let (mut cells, mut notes) = parse_results(lang.name, &stdout);
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        let tail: Vec<&str> = err.lines().rev().take(5).collect();
        notes.push(format!(
            "the {} consumer exited with {}: {}",
            lang.name,
            out.status,
            tail.into_iter().rev().collect::<Vec<_>>().join(" / ")
        ));
    }
    let seen: BTreeSet<(String, String, String)> = cells
        .iter()
        .map(|c| (c.producer.clone(), c.container.clone(), c.case.clone()))
        .collect();
    for dir in dirs {
        let producer = dir.file_name().unwrap().to_string_lossy().into_owned();
        for case in cases {
            for container in ["file", "stream"] {
                let key = (producer.clone(), container.to_string(), case.clone());
                if !seen.contains(&key) {
                    cells.push(Cell {
                        producer: producer.clone(),
                        consumer: lang.name.to_string(),
                        container: container.to_string(),
                        case: case.clone(),
                        status: Status::Fail(format!("no result from the {} consumer", lang.name)),
                    });
                }
            }
        }
    }
    Ok((cells, notes))
}

/// Runs every producer into `out/<lang>`; returns the failures (a producer that
/// fails still leaves what it wrote, and its missing outputs fail their cells).
pub fn produce(langs: &[Lang], out: &Path) -> Result<Vec<String>> {
    let mut failures = Vec::new();
    for lang in langs {
        let dir = out.join(lang.name);
        if dir.exists() {
            std::fs::remove_dir_all(&dir)?;
        }
        std::fs::create_dir_all(&dir)?;
        let started = Instant::now();
        let mut cmd = lang.command([
            OsString::from("produce"),
            cases_file().into(),
            dir.clone().into(),
        ]);
        let shown = display(&cmd);
        let o = cmd
            .output()
            .map_err(|e| format!("could not start `{shown}`: {e}"))?;
        println!(
            "  {} producer: {:.2}s",
            lang.name,
            started.elapsed().as_secs_f64()
        );
        if !o.status.success() {
            failures.push(format!(
                "the {} producer failed ({}): {}",
                lang.name,
                o.status,
                String::from_utf8_lossy(&o.stderr).trim()
            ));
        }
    }
    Ok(failures)
}

// ---------------------------------------------------------------- byte identity

/// One producer's output compared with the reference producer's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Same {
    /// Byte for byte the same.
    Identical,
    /// Differs: where (byte offset) and, when known, which part of the container.
    Differs(String),
    /// One of the two did not write it (n/a or missing).
    NotCompared,
}

/// Compares `a` and `b`; the first differing offset and the sizes.
pub fn compare_bytes(a: &[u8], b: &[u8]) -> Option<(usize, String)> {
    if a == b {
        return None;
    }
    let at = a
        .iter()
        .zip(b)
        .position(|(x, y)| x != y)
        .unwrap_or(a.len().min(b.len()));
    let what = match (a.get(at), b.get(at)) {
        (Some(x), Some(y)) => format!("byte {at}: 0x{x:02x} vs 0x{y:02x}"),
        _ => format!("lengths {} vs {}", a.len(), b.len()),
    };
    Some((at, what))
}

/// For every case and container, each producer's output against `reference`'s.
/// `locate` names the part of the file an offset falls in.
pub fn identity(
    reference: &str,
    producers: &[String],
    cases: &[String],
    out: &Path,
    locate: &dyn Fn(&Path, usize) -> String,
) -> Vec<(String, String, String, Same)> {
    let mut rows = Vec::new();
    for p in producers.iter().filter(|p| *p != reference) {
        for case in cases {
            for (ext, container) in [("hrry", "file"), ("hrrys", "stream")] {
                let a = out.join(reference).join(format!("{case}.{ext}"));
                let b = out.join(p).join(format!("{case}.{ext}"));
                let same = match (std::fs::read(&a), std::fs::read(&b)) {
                    (Ok(x), Ok(y)) => match compare_bytes(&x, &y) {
                        None => Same::Identical,
                        Some((at, what)) => {
                            Same::Differs(format!("{what} ({} in {reference}'s)", locate(&a, at)))
                        }
                    },
                    _ => Same::NotCompared,
                };
                rows.push((p.clone(), container.to_string(), case.clone(), same));
            }
        }
    }
    rows
}

/// `hurray-matrix locate FILE OFFSET` through the Rust program.
fn locator(rust: Option<&Lang>) -> impl Fn(&Path, usize) -> String + '_ {
    move |file: &Path, at: usize| {
        let Some(r) = rust else {
            return "region unknown".into();
        };
        let out = r
            .command([OsString::from("locate"), file.into(), at.to_string().into()])
            .output();
        match out {
            Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout).trim().to_string(),
            _ => "region unknown".into(),
        }
    }
}

// ---------------------------------------------------------------- report

fn pad(s: &str, w: usize) -> String {
    format!("{s:<w$}")
}

/// The producer x consumer table of one container.
pub fn table(
    container: &str,
    producers: &[String],
    consumers: &[String],
    cells: &[Cell],
) -> String {
    let mut out = String::new();
    let w = 17;
    let _ = write!(
        out,
        "{}",
        pad(&format!("{container}: producer \\ consumer"), 30)
    );
    for c in consumers {
        let _ = write!(out, "{}", pad(c, w));
    }
    out.push('\n');
    for p in producers {
        let _ = write!(out, "{}", pad(&format!("  {p}"), 30));
        for c in consumers {
            let s = tally(
                cells
                    .iter()
                    .filter(|x| &x.producer == p && &x.consumer == c && x.container == container),
            );
            let _ = write!(out, "{}", pad(&s, w));
        }
        out.push('\n');
    }
    out
}

/// Why cells are n/a, grouped: "python producer: REASON (N cases: a, b, ...)".
pub fn na_summary(cells: &[Cell]) -> Vec<String> {
    let mut groups: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for c in cells {
        if let Status::Na(why) = &c.status {
            let key = match why.strip_prefix("producer: ") {
                Some(w) => format!("{} producer: {w}", c.producer),
                None => format!(
                    "{} consumer: {}",
                    c.consumer,
                    why.strip_prefix("consumer: ").unwrap_or(why)
                ),
            };
            groups
                .entry(format!("{key} [{}]", c.container))
                .or_default()
                .insert(c.case.clone());
        }
    }
    groups
        .into_iter()
        .map(|(k, v)| {
            format!(
                "{k}: {} case(s): {}",
                v.len(),
                v.into_iter().collect::<Vec<_>>().join(", ")
            )
        })
        .collect()
}

/// The byte-identity table: per producer and container, identical / compared.
pub fn identity_table(reference: &str, rows: &[(String, String, String, Same)]) -> String {
    let mut out = format!("byte identity against {reference}'s output (cases both wrote):\n");
    let mut producers: Vec<&String> = Vec::new();
    for r in rows {
        if !producers.contains(&&r.0) {
            producers.push(&r.0);
        }
    }
    for p in producers {
        let _ = write!(out, "  {}", pad(p, 14));
        for container in ["file", "stream"] {
            let mine: Vec<_> = rows
                .iter()
                .filter(|r| &r.0 == p && r.1 == container)
                .collect();
            let same = mine.iter().filter(|r| r.3 == Same::Identical).count();
            let compared = mine.iter().filter(|r| r.3 != Same::NotCompared).count();
            let _ = write!(
                out,
                "{}",
                pad(
                    &format!(
                        "{container}: {same}/{compared} identical{}",
                        if same == compared { "" } else { " (DIFFERS)" }
                    ),
                    32
                )
            );
        }
        out.push('\n');
    }
    out
}

/// Everything one run of the matrix found.
pub struct Report {
    /// All cells.
    pub cells: Vec<Cell>,
    /// Notes per consumer ("python: ...").
    pub notes: Vec<String>,
    /// Byte identity rows.
    pub identity: Vec<(String, String, String, Same)>,
    /// Producers in table order.
    pub producers: Vec<String>,
}

/// Runs every consumer over `dirs` and compares bytes against `reference`.
pub fn check(
    langs: &[Lang],
    cases: &[String],
    out: &Path,
    producers: &[String],
    reference: &str,
) -> Result<Report> {
    let dirs: Vec<PathBuf> = producers.iter().map(|p| out.join(p)).collect();
    let mut cells = Vec::new();
    let mut notes = Vec::new();
    for lang in langs {
        let started = Instant::now();
        let (c, n) = consume(lang, cases, &dirs)?;
        println!(
            "  {} consumer: {} results ({:.2}s)",
            lang.name,
            c.len(),
            started.elapsed().as_secs_f64()
        );
        cells.extend(c);
        notes.extend(
            n.into_iter()
                .map(|n| format!("{} consumer: {n}", lang.name)),
        );
    }
    let rust = langs.iter().find(|l| l.name == "rust");
    let identity = identity(reference, producers, cases, out, &locator(rust));
    Ok(Report {
        cells,
        notes,
        identity,
        producers: producers.to_vec(),
    })
}

fn print_report(r: &Report, consumers: &[String], reference: &str) {
    for container in ["file", "stream"] {
        println!();
        print!("{}", table(container, &r.producers, consumers, &r.cells));
    }
    println!();
    print!("{}", identity_table(reference, &r.identity));
    let na = na_summary(&r.cells);
    if !na.is_empty() {
        println!("\nn/a (what a language cannot express; the cell is not counted):");
        for n in na {
            println!("  {n}");
        }
    }
    let notes: BTreeSet<&String> = r.notes.iter().collect();
    if !notes.is_empty() {
        println!("\nnotes (checks a consumer cannot make):");
        for n in notes {
            println!("  {n}");
        }
    }
}

fn failures(r: &Report) -> Vec<String> {
    let mut f: Vec<String> = r
        .cells
        .iter()
        .filter(|c| matches!(c.status, Status::Fail(_)))
        .map(Cell::describe)
        .collect();
    for (p, container, case, same) in &r.identity {
        if let Same::Differs(what) = same {
            f.push(format!(
                "case {case}, producer {p} ({container}): not byte-identical: {what}"
            ));
        }
    }
    f
}

// ---------------------------------------------------------------- self-test

/// One deliberate corruption: which output, which byte (relative to where), and what
/// each consumer must then say.
pub struct Flip {
    /// Case.
    pub case: &'static str,
    /// `hrry` or `hrrys`.
    pub ext: &'static str,
    /// Byte to flip (bit 0).
    pub offset: Offset,
    /// The region `locate` must name (a prefix).
    pub region: &'static str,
    /// Texts the failure detail must contain.
    pub expect: &'static [&'static str],
}

/// Where a flip goes.
pub enum Offset {
    /// From the start of the output.
    Start(usize),
    /// From the end.
    End(usize),
}

/// The self-test's corruptions: in `csr`, byte 4 of buffer 0 (file; data at the
/// 4096 alignment: a value, seen by comparing bytes) and byte 37 of buffer 2
/// (stream, 3 from the end: `row_ptr[4]` no longer equals `nnz`, which every
/// reader's content check reports as `PointerEnd` in buffer 2); in
/// `statistics`, the second byte of the statistics `nnz` (descriptor byte 70: 3
/// becomes 259) in the file (descriptor at 64) and in the stream (descriptor at 0).
pub const FLIPS: [Flip; 4] = [
    Flip {
        case: "csr",
        ext: "hrry",
        offset: Offset::Start(4096 + 4),
        region: "buffer 0 of tensor \"s\", byte 4",
        expect: &["buffer 0 byte 4", "0x00", "0x01"],
    },
    Flip {
        case: "csr",
        ext: "hrrys",
        offset: Offset::End(3),
        region: "item 0, tensor 0: buffer 2 byte 37",
        expect: &["PointerEnd", "buffer 2"],
    },
    Flip {
        case: "statistics",
        ext: "hrry",
        offset: Offset::Start(64 + 70),
        region: "descriptor of tensor \"x\", byte 70",
        expect: &["statistics", "nnz", "3", "259"],
    },
    Flip {
        case: "statistics",
        ext: "hrrys",
        offset: Offset::Start(70),
        region: "item 0, tensor 0: descriptor byte 70",
        expect: &["statistics", "nnz", "3", "259"],
    },
];

/// The corrupted producer's name.
pub const FLIPPED: &str = "rust+flipped";

/// Judges the self-test's cells: the flipped outputs must fail in every consumer
/// with the expected detail, every other cell must match the clean run. Returns the
/// lines to print, or the reasons it failed.
pub fn judge_self_test(
    clean: &[Cell],
    flipped: &[Cell],
    identity: &[(String, String, String, Same)],
) -> std::result::Result<Vec<String>, Vec<String>> {
    let mut lines = Vec::new();
    let mut bad = Vec::new();
    let is_flipped = |case: &str, container: &str| {
        FLIPS
            .iter()
            .find(|f| f.case == case && (f.ext == "hrry") == (container == "file"))
    };
    for c in flipped.iter().filter(|c| c.producer == FLIPPED) {
        match is_flipped(&c.case, &c.container) {
            Some(f) => match &c.status {
                Status::Fail(d)
                    if f.expect
                        .iter()
                        .all(|e| d.to_lowercase().contains(&e.to_lowercase())) =>
                {
                    lines.push(format!("caught: {}", c.describe()));
                }
                _ => bad.push(format!(
                    "expected a failure mentioning {:?}: {}",
                    f.expect,
                    c.describe()
                )),
            },
            None => {
                let twin = clean.iter().find(|x| {
                    x.producer == "rust"
                        && x.consumer == c.consumer
                        && x.container == c.container
                        && x.case == c.case
                });
                let same = twin.is_some_and(|t| {
                    std::mem::discriminant(&t.status) == std::mem::discriminant(&c.status)
                });
                if !same {
                    bad.push(format!(
                        "an untouched output changed outcome: {} (clean: {})",
                        c.describe(),
                        twin.map_or("missing".into(), Cell::describe)
                    ));
                }
            }
        }
    }
    for f in &FLIPS {
        let container = if f.ext == "hrry" { "file" } else { "stream" };
        let row = identity
            .iter()
            .find(|r| r.0 == FLIPPED && r.1 == container && r.2 == f.case);
        match row {
            Some((_, _, _, Same::Differs(what))) => {
                lines.push(format!(
                    "byte identity: case {}, producer {FLIPPED} ({container}): {what}",
                    f.case
                ));
            }
            other => bad.push(format!(
                "byte identity did not flag case {} ({container}): {other:?}",
                f.case
            )),
        }
    }
    let others = identity
        .iter()
        .filter(|r| r.0 == FLIPPED && matches!(r.3, Same::Differs(_)))
        .count();
    if others != FLIPS.len() {
        bad.push(format!(
            "byte identity flagged {others} outputs of {FLIPPED}, expected {}",
            FLIPS.len()
        ));
    }
    if bad.is_empty() {
        Ok(lines)
    } else {
        Err(bad)
    }
}

/// Copies the Rust outputs to `out/rust+flipped`, flips the [`FLIPS`] bytes, reruns
/// every consumer over it and judges the result.
pub fn self_test(langs: &[Lang], cases: &[String], out: &Path, clean: &[Cell]) -> Result {
    let src = out.join("rust");
    let dst = out.join(FLIPPED);
    if dst.exists() {
        std::fs::remove_dir_all(&dst)?;
    }
    std::fs::create_dir_all(&dst)?;
    for e in std::fs::read_dir(&src)? {
        let e = e?;
        std::fs::copy(e.path(), dst.join(e.file_name()))?;
    }
    let rust = langs.iter().find(|l| l.name == "rust");
    let locate = locator(rust);
    println!(
        "\nself-test: a copy of rust's outputs as producer {FLIPPED}, with one bit flipped in:"
    );
    for f in &FLIPS {
        let path = dst.join(format!("{}.{}", f.case, f.ext));
        let mut bytes = std::fs::read(&path)?;
        let at = match f.offset {
            Offset::Start(n) => n,
            Offset::End(n) => bytes.len() - n,
        };
        let region = locate(&src.join(format!("{}.{}", f.case, f.ext)), at);
        if !region.starts_with(f.region) {
            return Err(format!(
                "self-test: byte {at} of {}.{} is in {region}, not in {}; update FLIPS in xtask/src/matrix.rs",
                f.case, f.ext, f.region
            )
            .into());
        }
        bytes[at] ^= 0x01;
        std::fs::write(&path, bytes)?;
        println!("  {}.{} byte {at}: {region}", f.case, f.ext);
    }
    let report = check(langs, cases, out, &[FLIPPED.into()], "rust")?;
    match judge_self_test(clean, &report.cells, &report.identity) {
        Ok(lines) => {
            for l in lines {
                println!("  {l}");
            }
            let n = report
                .cells
                .iter()
                .filter(|c| c.producer == FLIPPED)
                .count();
            println!(
                "self-test: PASS ({} consumers x {} outputs of {FLIPPED}: the {} flipped outputs fail in every consumer, nothing else changed)",
                langs.len(),
                n / langs.len().max(1),
                FLIPS.len()
            );
            Ok(())
        }
        Err(bad) => Err(format!("self-test FAILED:\n  {}", bad.join("\n  ")).into()),
    }
}

// ---------------------------------------------------------------- entry points

/// Runs `cargo xtask matrix`.
pub fn run(args: &MatrixArgs) -> Result {
    run_matrix(args).map(|_| ())
}

/// Runs the matrix; returns the notes of the languages that could not run here
/// (`LANG: skipped: why`), empty when every selected language ran.
fn run_matrix(args: &MatrixArgs) -> Result<Vec<String>> {
    let started = Instant::now();
    let text = std::fs::read_to_string(cases_file())?;
    let cases = case_names(&text);
    let (langs, skipped) = build_langs(args.only.as_deref())?;
    for s in &skipped {
        println!("note: {s}");
    }
    if !langs.iter().any(|l| l.name == "rust") {
        return Err("the matrix needs the Rust program (the reference producer)".into());
    }
    if args.net_only {
        let fails = crate::matrix_net::run(&langs, &skipped)?;
        for f in &fails {
            println!("  {f}");
        }
        return if fails.is_empty() {
            Ok(skipped)
        } else {
            Err(format!("matrix (network column): {} failure(s)", fails.len()).into())
        };
    }
    let out = target_dir().join("matrix/out");
    println!(
        "==> [matrix] {} cases x {{file, stream}}: {} producers, {} consumers",
        cases.len(),
        langs.len(),
        langs.len()
    );
    let producer_failures = produce(&langs, &out)?;
    let producers: Vec<String> = langs.iter().map(|l| l.name.to_string()).collect();
    let report = check(&langs, &cases, &out, &producers, "rust")?;
    print_report(&report, &producers, "rust");
    let mut fails = failures(&report);
    fails.extend(producer_failures);
    fails.extend(crate::hostile::run(&langs, &out)?);
    fails.extend(crate::names::run(&langs)?);
    fails.extend(crate::matrix_net::run(&langs, &skipped)?);
    if !fails.is_empty() {
        println!("\nFAILURES:");
        for f in &fails {
            println!("  {f}");
        }
    }
    if !args.no_self_test && fails.is_empty() {
        self_test(&langs, &cases, &out, &report.cells)?;
    }
    println!(
        "\n==> [matrix] {} ({:.1}s){}",
        if fails.is_empty() { "PASS" } else { "FAIL" },
        started.elapsed().as_secs_f64(),
        if skipped.is_empty() {
            String::new()
        } else {
            format!("; {}", skipped.join("; "))
        }
    );
    if fails.is_empty() {
        Ok(skipped)
    } else {
        Err(format!("matrix: {} failure(s)", fails.len()).into())
    }
}

/// Stage of `cargo xtask test`: the whole matrix with its self-test; passed in part
/// when a language could not run here.
pub fn stage() -> Result<Outcome> {
    let skipped = run_matrix(&MatrixArgs {
        only: None,
        no_self_test: false,
        net_only: false,
    })?;
    Ok(if skipped.is_empty() {
        Outcome::Passed
    } else {
        Outcome::PassedPartly(skipped.join("; "))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(p: &str, c: &str, k: &str, case: &str, s: Status) -> Cell {
        Cell {
            producer: p.into(),
            consumer: c.into(),
            container: k.into(),
            case: case.into(),
            status: s,
        }
    }

    #[test]
    fn results_parse() {
        let out = "note\tKV not checked\nresult\trust\tfile\tcsr\tpass\t\n\
                   result\tc\tstream\tcsr\tfail\ttensor \"s\": buffer 0 byte 4\n\
                   result\tpython\tfile\tx\tna\tproducer: no composites\ngarbage\n";
        let (cells, notes) = parse_results("go", out);
        assert_eq!(notes, ["KV not checked"]);
        assert_eq!(cells.len(), 3);
        assert_eq!(cells[0].status, Status::Pass);
        assert_eq!(
            cells[1].describe(),
            "case csr, producer c, consumer go (stream): tensor \"s\": buffer 0 byte 4"
        );
        assert_eq!(
            cells[2].status,
            Status::Na("producer: no composites".into())
        );
    }

    #[test]
    fn tables_count_pass_fail_na() {
        let cells = vec![
            cell("rust", "c", "file", "a", Status::Pass),
            cell("rust", "c", "file", "b", Status::Fail("x".into())),
            cell("rust", "c", "file", "c", Status::Na("producer: y".into())),
            cell("rust", "c", "stream", "a", Status::Pass),
        ];
        let t = table("file", &["rust".into()], &["c".into()], &cells);
        assert!(t.contains("FAIL 1/2 +1na"), "{t}");
        let t = table("stream", &["rust".into()], &["c".into()], &cells);
        assert!(t.contains("ok 1/1"), "{t}");
        assert_eq!(
            na_summary(&cells),
            ["rust producer: y [file]: 1 case(s): c"]
        );
    }

    #[test]
    fn byte_comparison_names_the_offset() {
        assert_eq!(compare_bytes(b"abc", b"abc"), None);
        assert_eq!(
            compare_bytes(b"abc", b"abd").unwrap().1,
            "byte 2: 0x63 vs 0x64"
        );
        assert_eq!(compare_bytes(b"ab", b"abc").unwrap().1, "lengths 2 vs 3");
    }

    #[test]
    fn case_names_come_from_case_lines() {
        assert_eq!(
            case_names("# x\ncase a\n  tensor t\ncase b_2\n"),
            ["a", "b_2"]
        );
        let all = case_names(&std::fs::read_to_string(cases_file()).unwrap());
        for f in &FLIPS {
            assert!(all.iter().any(|c| c == f.case), "{} is not a case", f.case);
        }
    }

    /// The self-test judge accepts exactly the expected failures and rejects a
    /// matrix that misses one, or that fails an untouched cell.
    #[test]
    fn self_test_judge() {
        let mut clean = Vec::new();
        let mut flipped = Vec::new();
        let mut ident = Vec::new();
        for case in ["csr", "statistics", "other"] {
            for k in ["file", "stream"] {
                clean.push(cell("rust", "c", k, case, Status::Pass));
                let f = FLIPS
                    .iter()
                    .find(|f| f.case == case && (f.ext == "hrry") == (k == "file"));
                let status = match f {
                    Some(f) => Status::Fail(f.expect.join(" ")),
                    None => Status::Pass,
                };
                flipped.push(cell(FLIPPED, "c", k, case, status));
                ident.push((
                    FLIPPED.to_string(),
                    k.to_string(),
                    case.to_string(),
                    if f.is_some() {
                        Same::Differs("byte 1".into())
                    } else {
                        Same::Identical
                    },
                ));
            }
        }
        assert!(judge_self_test(&clean, &flipped, &ident).is_ok());
        let mut missed = flipped.clone();
        missed[0].status = Status::Pass;
        assert!(judge_self_test(&clean, &missed, &ident).is_err());
        let mut extra = flipped.clone();
        extra[5].status = Status::Fail("?".into());
        assert!(judge_self_test(&clean, &extra, &ident).is_err());
    }
}
