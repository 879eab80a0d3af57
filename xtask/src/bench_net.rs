//! `cargo xtask bench`'s network table (issue 18, Must show 3): one `hurray serve` of
//! a 256 MiB `uint8` tensor on loopback; every language's client GETs it and the
//! table prints MiB/s and each language's time as a ratio to the Rust client's in
//! the same run (goal: within 1.5x).
//!
//! Each client is a program taking `ADDR KEY` and printing one line
//! `net_get LANG BYTES SECONDS` (the data bytes received and the GET's wall time,
//! connect excluded; every client takes the best of 3 GETs on one connection):
//! Rust and C are the matrix programs' `net-bench` command; the
//! bindings' are `bindings/<lang>/bench/net_get.*` (`.py` run by the development
//! venv, `.go` by `go run` in the module, `.java` by the source launcher against the
//! matrix program's class path, `.js` by `node`). A language without its script is
//! n/a. Every client runs [`RUNS`] times (fresh processes, the clients taking turns)
//! and keeps its fastest.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::matrix::{build_langs, target_dir, Lang};
use crate::matrix_net::{build_cli, Served};
use crate::util::{display, workspace_root, Result};

/// Size of the served tensor, bytes.
pub const BYTES: u64 = 256 << 20;
/// Runs per client; the fastest counts.
pub const RUNS: usize = 3;
/// The served tensor's name.
pub const KEY: &str = "net_bench";

/// Writes a safetensors file of one `U8` tensor of `bytes` bytes (a byte pattern
/// that is not all zeros) for `hurray convert`.
fn write_safetensors(path: &Path, bytes: u64) -> Result {
    use std::io::Write;
    let header =
        format!(r#"{{"{KEY}":{{"dtype":"U8","shape":[{bytes}],"data_offsets":[0,{bytes}]}}}}"#);
    let mut f = std::io::BufWriter::new(std::fs::File::create(path)?);
    f.write_all(&(header.len() as u64).to_le_bytes())?;
    f.write_all(header.as_bytes())?;
    let chunk: Vec<u8> = (0..1u32 << 20)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8)
        .collect();
    let mut left = bytes;
    while left > 0 {
        let n = left.min(chunk.len() as u64) as usize;
        f.write_all(&chunk[..n])?;
        left -= n as u64;
    }
    f.flush()?;
    Ok(())
}

/// The command of a binding's `net_get.*` script, `None` when it has none.
fn script_command(lang: &Lang) -> Result<Option<Command>> {
    let dir = workspace_root()
        .join("bindings")
        .join(lang.name)
        .join("bench");
    let Some(script) = std::fs::read_dir(&dir).ok().and_then(|rd| {
        rd.filter_map(|e| e.ok().map(|e| e.path())).find(|p| {
            p.file_stem()
                .is_some_and(|s| s == "net_get" || s == "NetGet")
        })
    }) else {
        return Ok(None);
    };
    let ext = script.extension().and_then(|e| e.to_str()).unwrap_or("");
    let cmd = match ext {
        "py" | "js" => {
            // The matrix program's interpreter (the dev venv's python, node).
            let mut c = Command::new(&lang.argv[0]);
            c.arg(&script);
            c
        }
        "go" => {
            let mut c = Command::new("go");
            c.arg("run")
                .arg(&script)
                .current_dir(crate::go::module_dir())
                .env("CGO_ENABLED", "1");
            c
        }
        "java" => {
            // java -cp CP Matrix -> java -cp CP SCRIPT (the source-file launcher).
            let mut c = Command::new(&lang.argv[0]);
            c.args(&lang.argv[1..lang.argv.len() - 1]).arg(&script);
            c
        }
        _ => return Err(format!("{}: no way to run a .{ext} script", script.display()).into()),
    };
    Ok(Some(cmd))
}

/// Parses `net_get LANG BYTES SECONDS`.
pub fn parse_line(out: &str) -> Option<(String, u64, f64)> {
    out.lines().find_map(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        match f.as_slice() {
            ["net_get", lang, bytes, secs] => {
                Some((lang.to_string(), bytes.parse().ok()?, secs.parse().ok()?))
            }
            _ => None,
        }
    })
}

/// Runs a client once; its seconds, or why it failed.
fn once(mut cmd: Command, addr: &str) -> std::result::Result<f64, String> {
    cmd.args([addr, KEY]);
    let shown = display(&cmd);
    let out = cmd
        .output()
        .map_err(|e| format!("could not start `{shown}`: {e}"))?;
    match parse_line(&String::from_utf8_lossy(&out.stdout)) {
        Some((_, bytes, secs)) if out.status.success() && bytes == BYTES => Ok(secs),
        Some((_, bytes, _)) if bytes != BYTES => {
            Err(format!("`{shown}` received {bytes} bytes, not {BYTES}"))
        }
        _ => Err(format!(
            "`{shown}` ({}) printed no `net_get LANG BYTES SECONDS` line: {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        )),
    }
}

/// The table: one row per language, MiB/s and the ratio of its time to Rust's.
pub fn table(rows: &[(String, std::result::Result<f64, String>)]) -> String {
    let mut out = String::new();
    let mib = BYTES as f64 / (1 << 20) as f64;
    let rust = rows
        .iter()
        .find(|r| r.0 == "rust")
        .and_then(|r| r.1.as_ref().ok().copied());
    let _ = writeln!(
        out,
        "  {:<8} {:>10} {:>10} {:>9}",
        "client", "seconds", "MiB/s", "x rust"
    );
    for (name, r) in rows {
        match r {
            Ok(s) => {
                let ratio = rust.map_or("-".to_string(), |b| format!("{:.2}", s / b));
                let _ = writeln!(out, "  {name:<8} {s:>10.4} {:>10.1} {ratio:>9}", mib / s);
            }
            Err(why) => {
                let _ = writeln!(out, "  {name:<8} n/a: {why}");
            }
        }
    }
    out
}

/// Runs the network benchmark; `only` limits the languages. Returns the failures.
pub fn run(only: Option<&str>) -> Result<Vec<String>> {
    let hurray = build_cli()?;
    let mut only_langs = only.map(str::to_string);
    if let Some(o) = &mut only_langs {
        if !o.split(',').any(|x| x.trim() == "rust") {
            o.push_str(",rust");
        }
    }
    let (langs, skipped) = build_langs(only_langs.as_deref())?;
    let dir: PathBuf = target_dir().join("bench-net");
    std::fs::create_dir_all(&dir)?;
    let file = dir.join("net_bench.hrry");
    if !file.is_file() {
        let st = dir.join("net_bench.safetensors");
        write_safetensors(&st, BYTES)?;
        crate::util::exec(Command::new(&hurray).arg("convert").arg(&st).arg(&file))?;
        std::fs::remove_file(&st)?;
    }
    let server = Served::start(&hurray, &file, None)?;
    println!(
        "$ hurray serve {} --listen 127.0.0.1:0  (a {} MiB uint8 tensor; best of {RUNS} GETs per client)",
        file.display(),
        BYTES >> 20
    );
    // The clients take turns, run after run, so that a busy machine slows them alike.
    let mut clients: Vec<(&Lang, std::result::Result<f64, String>)> = Vec::new();
    for l in &langs {
        let r = if matches!(l.name, "rust" | "c") || script_command(l)?.is_some() {
            Ok(f64::MAX)
        } else {
            Err(format!("n/a: no bindings/{}/bench/net_get.* yet", l.name))
        };
        clients.push((l, r));
    }
    for _ in 0..RUNS {
        for (l, best) in clients.iter_mut() {
            let Ok(b) = best else { continue };
            let cmd = if matches!(l.name, "rust" | "c") {
                l.command(["net-bench"])
            } else {
                script_command(l)?.expect("found above")
            };
            *best = once(cmd, &server.addr).map(|s| s.min(*b));
        }
    }
    let mut rows: Vec<(String, std::result::Result<f64, String>)> = Vec::new();
    let mut fails = Vec::new();
    for (l, r) in clients {
        if let Err(e) = &r {
            if !e.starts_with("n/a: ") {
                fails.push(format!("{}: {e}", l.name));
            }
        }
        rows.push((
            l.name.to_string(),
            r.map_err(|e| e.trim_start_matches("n/a: ").to_string()),
        ));
    }
    for s in skipped {
        if let Some((name, why)) = s.split_once(':') {
            rows.push((name.to_string(), Err(why.trim().to_string())));
        }
    }
    rows.sort_by_key(|r| crate::matrix::LANGS.iter().position(|n| *n == r.0));
    server.stop()?;
    println!(
        "\n==> [xtask bench] network: GET of a {} MiB tensor on loopback",
        BYTES >> 20
    );
    print!("{}", table(&rows));
    Ok(fails)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_parse_and_the_table_gives_ratios_to_rust() {
        assert_eq!(
            parse_line("x\nnet_get go 268435456 0.5\n"),
            Some(("go".into(), 268_435_456, 0.5))
        );
        assert_eq!(parse_line("net_get go many 0.5"), None);
        let t = table(&[
            ("rust".into(), Ok(0.25)),
            ("go".into(), Ok(0.5)),
            ("node".into(), Err("no script".into())),
        ]);
        assert!(t.contains("1024.0"), "{t}");
        assert!(t.contains("2.00"), "{t}");
        assert!(t.contains("node     n/a: no script"), "{t}");
    }
}
