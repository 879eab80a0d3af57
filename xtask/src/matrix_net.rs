//! The network column of `cargo xtask matrix` (issue 18): every language's client
//! GETs every case from a `hurray serve` of the Rust outputs and PUTs every case into
//! a `hurray serve --persist` store, and both directions are checked byte for byte.
//!
//! 1. The net cases: `tests/cases/cases.txt` without the cases the transport cannot
//!    carry as written (a buffer whose memory class is not `standard`: the server
//!    serves and accepts STANDARD CPU memory only, docs/network.md S11; their cells are
//!    n/a) and without `kv` lines (file-level KV metadata is not an item: GET and PUT
//!    carry items only). Written to `target/matrix/net/cases.txt`; every program
//!    reads that file.
//! 2. The Rust program produces them into `net/src/`; `hurray-matrix net-combine`
//!    writes `net/served.hrry` holding every top-level item as `CASE:NAME`.
//! 3. get: one `hurray serve net/served.hrry --listen 127.0.0.1:0`; each language's
//!    `net-get ADDR CASES net/get/LANG`; the Rust consumer and the language's own
//!    consumer check every file, and each must equal `net/src/CASE.hrry` byte for
//!    byte.
//! 4. put: per language a fresh `hurray serve ... --persist net/put/LANG.hrry`, the
//!    language's `net-put ADDR CASES net/src`, SIGTERM, then `hurray-matrix
//!    net-compare` requires every persisted item to equal its source item (stream
//!    encodings of descriptor and buffers) byte for byte.
//!
//! A case a language's `net-put` cannot carry is reported by it as a line
//! `na CASE: REASON` (standard output or error) and is n/a in its `put` column.
//!
//! A language whose matrix program has no `net-get`/`net-put` yet shows as "n/a: not
//! implemented"; under CI (`$CI`) that, like a language that cannot be built, fails.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::matrix::{case_names, cases_file, parse_results, Cell, Lang, Status};
use crate::util::{cargo, display, exec, under_ci, workspace_root, Result};

/// The file of each language's matrix program that must mention `net-get` for the
/// language to take part (the commands are not there until its branch adds them).
fn program_source(lang: &str) -> PathBuf {
    let rel = match lang {
        "rust" => "tests/matrix/rust/src/main.rs",
        "c" => "tests/matrix/c/matrix.c",
        "python" => "tests/matrix/python/matrix.py",
        "go" => "tests/matrix/go/main.go",
        "java" => "tests/matrix/java/Matrix.java",
        _ => "tests/matrix/node/matrix.js",
    };
    workspace_root().join(rel)
}

/// Whether `lang`'s program implements the network commands.
pub fn has_net(lang: &str) -> bool {
    std::fs::read_to_string(program_source(lang)).is_ok_and(|s| s.contains("net-get"))
}

/// The net cases (see the module doc) and, per removed case, why.
pub fn net_cases(text: &str) -> (String, Vec<(String, String)>) {
    let mut out = String::new();
    let mut removed = Vec::new();
    let mut block: Vec<&str> = Vec::new();
    let mut flush = |block: &mut Vec<&str>, out: &mut String| {
        let name = block
            .first()
            .and_then(|l| l.trim().strip_prefix("case "))
            .map(|n| n.trim().to_string());
        let odd_memory = block.iter().any(|l| {
            l.split_whitespace()
                .any(|t| t.starts_with("memory=") && t != "memory=standard")
        });
        match name {
            Some(n) if odd_memory => removed.push((
                n,
                "a buffer of a non-standard memory class: the server serves and accepts \
                 STANDARD CPU memory only (docs/network.md S11)"
                    .to_string(),
            )),
            _ => {
                for l in block.iter().filter(|l| !l.trim_start().starts_with("kv ")) {
                    out.push_str(l);
                    out.push('\n');
                }
            }
        }
        block.clear();
    };
    for line in text.lines() {
        if line.trim().starts_with("case ") {
            flush(&mut block, &mut out);
        }
        block.push(line);
    }
    flush(&mut block, &mut out);
    (out, removed)
}

/// A running `hurray serve`.
pub struct Served {
    child: Child,
    /// Its standard output, kept open so that its last line does not hit a closed
    /// pipe (which would make it fail).
    stdout: BufReader<std::process::ChildStdout>,
    /// `host:port` it listens on.
    pub addr: String,
}

impl Served {
    /// Starts `hurray serve FILE --listen 127.0.0.1:0 [--persist P]` and reads the
    /// address from its `hurray: serving N tensors on ADDR` line.
    ///
    /// Errors: it could not start or exited before printing the line.
    pub fn start(hurray: &Path, file: &Path, persist: Option<&Path>) -> Result<Served> {
        let mut cmd = Command::new(hurray);
        cmd.arg("serve").arg(file).args(["--listen", "127.0.0.1:0"]);
        if let Some(p) = persist {
            cmd.arg("--persist").arg(p);
        }
        let shown = display(&cmd);
        let mut child = cmd
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| format!("could not start `{shown}`: {e}"))?;
        // The address line, read on a thread so that a server that never prints it
        // fails the run after 60 s instead of hanging it.
        let mut stdout = BufReader::new(child.stdout.take().expect("piped"));
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let r = stdout.read_line(&mut line).map(|_| line);
            let _ = tx.send((r, stdout));
        });
        let (line, stdout) = match rx.recv_timeout(Duration::from_secs(60)) {
            Ok((Ok(line), stdout)) => (line, stdout),
            Ok((Err(e), _)) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("`{shown}`: {e}").into());
            }
            Err(_) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("`{shown}` printed no address within 60 s").into());
            }
        };
        match line.trim().rsplit_once(" on ") {
            Some((_, addr)) if line.starts_with("hurray: serving") => Ok(Served {
                child,
                stdout,
                addr: addr.to_string(),
            }),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                Err(format!("`{shown}` printed {line:?}, not its address").into())
            }
        }
    }

    /// SIGTERM, then waits up to 30 s for the graceful shutdown (which writes the
    /// `--persist` file).
    ///
    /// Errors: it did not stop in time (then it is killed) or exited with failure.
    pub fn stop(mut self) -> Result {
        let pid = self.child.id().to_string();
        exec(Command::new("kill").args(["-TERM", &pid]))?;
        let t0 = Instant::now();
        loop {
            if let Some(st) = self.child.try_wait()? {
                let mut rest = String::new();
                let _ = std::io::Read::read_to_string(&mut self.stdout, &mut rest);
                return if st.success() {
                    Ok(())
                } else {
                    Err(format!("hurray serve exited with {st}").into())
                };
            }
            if t0.elapsed() > Duration::from_secs(30) {
                let _ = self.child.kill();
                let _ = self.child.wait();
                return Err("hurray serve did not stop within 30 s of SIGTERM".into());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// `target/release/hurray`, built.
pub fn build_cli() -> Result<PathBuf> {
    exec(&mut cargo([
        "build",
        "--quiet",
        "-p",
        "hurray-cli",
        "--release",
    ]))
    .map_err(|e| format!("`cargo build -p hurray-cli --release` failed: {e}"))?;
    Ok(crate::matrix::target_dir().join("release/hurray"))
}

fn cell(lang: &str, column: &str, case: &str, status: Status) -> Cell {
    Cell {
        producer: lang.to_string(),
        consumer: column.to_string(),
        container: "net".to_string(),
        case: case.to_string(),
        status,
    }
}

/// The `na CASE: REASON` lines of a program's output, as (case, reason).
pub fn na_lines(text: &str) -> Vec<(String, String)> {
    text.lines()
        .filter_map(|l| l.strip_prefix("na ")?.split_once(": "))
        .map(|(c, why)| (c.trim().to_string(), why.trim().to_string()))
        .collect()
}

/// Runs `lang`'s program with `args`; returns the `na CASE: REASON` lines it wrote
/// (standard output or error: a case it cannot carry), as (case, reason).
fn run_lang(
    lang: &Lang,
    args: &[&std::ffi::OsStr],
) -> std::result::Result<Vec<(String, String)>, String> {
    let mut cmd = lang.command(args);
    let shown = display(&cmd);
    let out = cmd
        .output()
        .map_err(|e| format!("could not start `{shown}`: {e}"))?;
    let err = String::from_utf8_lossy(&out.stderr);
    if out.status.success() {
        let text = format!("{}{err}", String::from_utf8_lossy(&out.stdout));
        Ok(na_lines(&text))
    } else {
        let tail: Vec<&str> = err.lines().rev().take(4).collect();
        Err(format!(
            "`{shown}` exited with {}: {}",
            out.status,
            tail.into_iter().rev().collect::<Vec<_>>().join(" / ")
        ))
    }
}

/// The four columns of one language: `get` (the Rust consumer over what its
/// net-get wrote), `get-own` (the language's own consumer over the same files),
/// `get-bytes` (those files against the Rust producer's) and `put` (the persisted
/// store against the sources).
pub const COLUMNS: [&str; 4] = ["get", "get-own", "get-bytes", "put"];

/// `consumer`'s `consume` over `out` (what `lang`'s net-get wrote): one cell of
/// column `column` per case (file container), a failure for a case it printed no
/// result for.
///
/// Errors: the consumer cannot be started.
fn consumed(
    consumer: &Lang,
    column: &str,
    lang: &str,
    cases_path: &std::ffi::OsStr,
    out: &Path,
    cases: &[String],
) -> Result<Vec<Cell>> {
    let shown = consumer
        .command(["consume".as_ref(), cases_path, out.as_os_str()])
        .output()?;
    let (got, notes) = parse_results(column, &String::from_utf8_lossy(&shown.stdout));
    if column == "get" {
        for n in notes {
            println!("  note: {lang} net-get: {n}");
        }
    }
    let mut cells = Vec::new();
    let mut seen = Vec::new();
    for mut g in got.into_iter().filter(|g| g.container == "file") {
        seen.push(g.case.clone());
        g.producer = lang.to_string();
        g.container = "net".into();
        cells.push(g);
    }
    for case in cases.iter().filter(|c| !seen.contains(c)) {
        cells.push(cell(
            lang,
            column,
            case,
            Status::Fail(format!(
                "no result from the {} consumer: {}",
                consumer.name,
                String::from_utf8_lossy(&shown.stderr).trim()
            )),
        ));
    }
    Ok(cells)
}

/// Runs the network column for `langs` (the Rust program among them); returns the
/// failures (one sentence each). Prints the table.
pub fn run(langs: &[Lang], skipped: &[String]) -> Result<Vec<String>> {
    let started = Instant::now();
    let rust = langs
        .iter()
        .find(|l| l.name == "rust")
        .ok_or("the network column needs the Rust program")?;
    let hurray = build_cli()?;
    let dir = crate::matrix::target_dir().join("matrix/net");
    if dir.exists() {
        std::fs::remove_dir_all(&dir)?;
    }
    std::fs::create_dir_all(&dir)?;
    let (text, removed) = net_cases(&std::fs::read_to_string(cases_file())?);
    let cases_path = dir.join("cases.txt");
    std::fs::write(&cases_path, &text)?;
    let cases = case_names(&text);
    let src = dir.join("src");
    let served_file = dir.join("served.hrry");
    let c = cases_path.as_os_str();
    run_lang(rust, &["produce".as_ref(), c, src.as_os_str()])?;
    run_lang(
        rust,
        &[
            "net-combine".as_ref(),
            c,
            src.as_os_str(),
            served_file.as_os_str(),
        ],
    )?;
    println!(
        "\n==> [matrix] network column: {} cases over `hurray serve` on loopback ({} n/a)",
        cases.len(),
        removed.len()
    );

    let mut cells: Vec<Cell> = Vec::new();
    let mut fails: Vec<String> = Vec::new();
    let mut rows: Vec<(String, Option<String>)> = Vec::new();
    let net_langs: Vec<&Lang> = langs.iter().filter(|l| has_net(l.name)).collect();
    for l in langs {
        if !has_net(l.name) {
            rows.push((l.name.to_string(), Some("n/a: not implemented".into())));
        } else {
            rows.push((l.name.to_string(), None));
        }
    }
    for s in skipped {
        if let Some((name, _)) = s.split_once(':') {
            rows.push((
                name.to_string(),
                Some(format!("n/a: {}", s[name.len() + 1..].trim())),
            ));
        }
    }
    rows.sort_by_key(|r| crate::matrix::LANGS.iter().position(|n| *n == r.0));

    // GET: one server for every language.
    {
        let server = Served::start(&hurray, &served_file, None)?;
        for l in &net_langs {
            let out = dir.join("get").join(l.name);
            let t0 = Instant::now();
            if let Err(e) = run_lang(
                l,
                &["net-get".as_ref(), server.addr.as_ref(), c, out.as_os_str()],
            ) {
                fails.push(format!("{} net-get: {e}", l.name));
            }
            // The Rust consumer, then the language's own, over what it fetched.
            for (consumer, column) in [(rust, "get"), (*l, "get-own")] {
                cells.extend(consumed(consumer, column, l.name, c, &out, &cases)?);
            }
            for case in &cases {
                let mine = out.join(format!("{case}.hrry"));
                let want = src.join(format!("{case}.hrry"));
                let st = match (std::fs::read(&want), std::fs::read(&mine)) {
                    (Ok(a), Ok(b)) => match crate::matrix::compare_bytes(&a, &b) {
                        None => Status::Pass,
                        Some((_, what)) => Status::Fail(format!(
                            "not byte-identical to the Rust producer's: {what}"
                        )),
                    },
                    (_, Err(_)) => {
                        match std::fs::read_to_string(out.join(format!("{case}.hrry.na"))) {
                            Ok(why) => Status::Na(why.trim().to_string()),
                            Err(_) => {
                                Status::Fail(format!("{} net-get wrote no {case}.hrry", l.name))
                            }
                        }
                    }
                    (Err(e), _) => Status::Fail(format!("no Rust source: {e}")),
                };
                cells.push(cell(l.name, "get-bytes", case, st));
            }
            println!("  {} net-get: {:.2}s", l.name, t0.elapsed().as_secs_f64());
        }
        server.stop()?;
    }

    // PUT: a fresh persisting server per language (the served file is one small
    // source, whose names cannot collide with `CASE:NAME` keys).
    let first = cases
        .iter()
        .map(|c| src.join(format!("{c}.hrry")))
        .find(|p| p.is_file())
        .ok_or("the Rust producer wrote no file")?;
    for l in &net_langs {
        let persist = dir.join("put").join(format!("{}.hrry", l.name));
        std::fs::create_dir_all(persist.parent().unwrap())?;
        let t0 = Instant::now();
        let server = Served::start(&hurray, &first, Some(&persist))?;
        let na = match run_lang(
            l,
            &["net-put".as_ref(), server.addr.as_ref(), c, src.as_os_str()],
        ) {
            Ok(na) => na,
            Err(e) => {
                fails.push(format!("{} net-put: {e}", l.name));
                Vec::new()
            }
        };
        if let Err(e) = server.stop() {
            fails.push(format!("{} net-put: the server: {e}", l.name));
        }
        let mut cmd = rust.command([
            "net-compare".as_ref(),
            c,
            src.as_os_str(),
            persist.as_os_str(),
            l.name.as_ref(),
        ]);
        let out = cmd.output()?;
        let (got, _) = parse_results("put", &String::from_utf8_lossy(&out.stdout));
        let seen: Vec<String> = got.iter().map(|g| g.case.clone()).collect();
        for mut g in got {
            g.consumer = "put".into();
            // A case the language said it cannot put (`na CASE: REASON`) is n/a.
            if let Some((_, why)) = na.iter().find(|(c, _)| *c == g.case) {
                g.status = Status::Na(why.clone());
            }
            cells.push(g);
        }
        for case in cases.iter().filter(|c| !seen.contains(c)) {
            cells.push(cell(
                l.name,
                "put",
                case,
                Status::Fail(format!(
                    "no comparison: {}",
                    String::from_utf8_lossy(&out.stderr).trim()
                )),
            ));
        }
        println!("  {} net-put: {:.2}s", l.name, t0.elapsed().as_secs_f64());
    }
    for l in &net_langs {
        for (case, why) in &removed {
            for col in COLUMNS {
                cells.push(cell(l.name, col, case, Status::Na(why.clone())));
            }
        }
    }

    print!("\n{}", net_table(&rows, &cells));
    // Why cells are n/a, once per reason: the languages and the cases.
    let mut na: BTreeMap<String, (Vec<String>, Vec<String>)> = BTreeMap::new();
    for c in &cells {
        if let Status::Na(why) = &c.status {
            let e = na.entry(why.clone()).or_default();
            if !e.0.contains(&c.producer) {
                e.0.push(c.producer.clone());
            }
            if !e.1.contains(&c.case) {
                e.1.push(c.case.clone());
            }
        }
    }
    if !na.is_empty() {
        println!("n/a:");
        for (why, (ls, cs)) in na {
            println!("  {}: {why} ({})", ls.join(","), cs.join(", "));
        }
    }
    println!("  (kv lines are left out of the net cases: file-level KV metadata is not an item)");
    for c in &cells {
        if let Status::Fail(d) = &c.status {
            fails.push(format!(
                "network {}: case {}, language {}: {d}",
                c.consumer, c.case, c.producer
            ));
        }
    }
    if under_ci() {
        for (name, why) in &rows {
            if let Some(why) = why {
                fails.push(format!(
                    "network: {name}: {why} (CI requires every language)"
                ));
            }
        }
    }
    println!(
        "==> [matrix] network column: {} ({:.1}s)",
        if fails.is_empty() { "PASS" } else { "FAIL" },
        started.elapsed().as_secs_f64()
    );
    Ok(fails)
}

/// One row per language: `ok N/N +Kna` per column, or why it did not run.
pub fn net_table(rows: &[(String, Option<String>)], cells: &[Cell]) -> String {
    let mut out = String::new();
    let _ = write!(out, "{:<20}", "network: language");
    for c in COLUMNS {
        let _ = write!(out, "{c:<18}");
    }
    out.push('\n');
    for (name, why) in rows {
        let _ = write!(out, "  {name:<18}");
        if let Some(why) = why {
            let _ = writeln!(out, "{why}");
            continue;
        }
        for col in COLUMNS {
            let s = crate::matrix::tally(
                cells
                    .iter()
                    .filter(|c| &c.producer == name && c.consumer == col),
            );
            let _ = write!(out, "{s:<18}");
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn net_cases_drop_memory_classes_and_kv_lines() {
        let text = "# c\ncase a\n  tensor x uint8 1 row_major\n    buffer 1 u8 1\n  kv k int64 7\n\
                    case b\n  tensor x float32 4 row_major\n    buffer 16 memory=unified f32 1 2 3 4\n\
                    case c\n  tensor x uint8 1 row_major\n    buffer 1 memory=standard u8 2\n";
        let (out, removed) = net_cases(text);
        assert_eq!(case_names(&out), ["a", "c"]);
        assert!(!out.contains("kv k"), "{out}");
        assert!(out.starts_with("# c\ncase a\n"), "{out}");
        assert_eq!(removed.len(), 1);
        assert_eq!(removed[0].0, "b");
        assert!(removed[0].1.contains("S11"));
    }

    #[test]
    fn na_lines_name_case_and_reason() {
        let got = na_lines(
            "python net-put: case x: boom\nna several_items: no composites: at all\nnote y\n",
        );
        assert_eq!(
            got,
            [(
                "several_items".to_string(),
                "no composites: at all".to_string()
            )]
        );
    }

    #[test]
    fn table_rows_count_and_explain() {
        let cells = vec![
            cell("rust", "get", "a", Status::Pass),
            cell("rust", "get", "b", Status::Fail("x".into())),
            cell("rust", "put", "a", Status::Na("y".into())),
        ];
        let rows = vec![
            ("rust".to_string(), None),
            ("go".to_string(), Some("n/a: not implemented".to_string())),
        ];
        let t = net_table(&rows, &cells);
        assert!(t.contains("FAIL 1/2"), "{t}");
        assert!(t.contains("ok 0/0 +1na"), "{t}");
        assert!(t.contains("go                n/a: not implemented"), "{t}");
        assert!(
            t.starts_with("network: language   get               get-own"),
            "{t}"
        );
    }
}
