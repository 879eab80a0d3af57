//! `cargo xtask c-tests` and `cargo xtask bench-c`, and the C stages of
//! `cargo xtask test`: the C test suite in `tests/c/`, the C examples of
//! `docs/c-abi.md`, the two-copies test, and the C benchmark.
//!
//! Every C program is plain C11, compiled by the system compiler (`$CC`, else `cc`)
//! with `-std=c11 -Wall -Wextra -Werror` against the committed `include/hurray.h`, and
//! linked with the hurray-ffi staticlib and `-lpthread -ldl -lm`:
//!
//! - `tests/c/test_*.c`: one program per concept; each ends asserting
//!   `hurray_debug_live_objects() == 0`;
//! - `tests/c/test_two_copies.c`: links nothing, `dlopen`s two separately built copies
//!   of the cdylib (the debug and the release build, each copied to its own file name)
//!   and passes handles between them;
//! - the fenced C blocks of `docs/c-abi.md` whose first line is
//!   `/* example: NAME.c ... */`, extracted and compiled, so the page cannot rot.
//!
//! The suite runs once natively and once under `valgrind` memcheck (leaks of kind
//! definite/indirect and every invalid access fail it). A missing compiler or valgrind
//! skips the stage with a note. Programs get `HURRAY_CONFORMANCE_DIR`
//! (`../shared/conformance`), a fresh `HURRAY_TEST_TMPDIR` and, for a debug library,
//! `HURRAY_TEST_DEBUG_BUILD=1`.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use clap::Args;

use crate::test::{Outcome, Stage};
use crate::util::{cargo, display, exec, workspace_root, Result};

/// Arguments of `cargo xtask c-tests`.
#[derive(Debug, Args)]
pub struct CTestsArgs {
    /// Link the release build of hurray-ffi instead of the debug build (which has the
    /// double-destroy checks).
    #[arg(long)]
    pub release: bool,
    /// Also run every program under valgrind memcheck.
    #[arg(long)]
    pub valgrind: bool,
}

/// Runs `cargo xtask c-tests`.
pub fn run(args: &CTestsArgs) -> Result {
    let profile = if args.release {
        Profile::Release
    } else {
        Profile::Debug
    };
    report(run_suite(profile, false)?);
    if args.valgrind {
        report(run_suite(profile, true)?);
    }
    Ok(())
}

fn report(o: Outcome) {
    if let Outcome::Skipped(why) = o {
        println!("skipped: {why}");
    }
}

/// The C stages of `cargo xtask test`.
pub fn stages() -> Vec<Stage> {
    vec![
        Stage {
            name: "c: tests/c suite, docs/c-abi.md examples and two copies in one process \
                   (cc -std=c11)"
                .into(),
            run: Box::new(|| run_suite(Profile::Debug, false)),
        },
        Stage {
            name: "c: the same programs under valgrind memcheck (no leaks, no invalid accesses)"
                .into(),
            run: Box::new(|| run_suite(Profile::Debug, true)),
        },
    ]
}

/// Which build of hurray-ffi the programs link.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Profile {
    /// `target/debug` (debug assertions: double-destroy detection).
    Debug,
    /// `target/release`.
    Release,
}

impl Profile {
    fn dir(self) -> &'static str {
        match self {
            Profile::Debug => "debug",
            Profile::Release => "release",
        }
    }
}

/// The cargo target directory (`$CARGO_TARGET_DIR`, else `target/`).
fn target_dir() -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) => workspace_root().join(dir),
        None => workspace_root().join("target"),
    }
}

/// The C compiler: `$CC`, else `cc`.
fn compiler() -> String {
    std::env::var("CC")
        .ok()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "cc".into())
}

/// Whether `program --version` runs.
fn has_program(program: &str) -> bool {
    Command::new(program)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// `cargo build -p hurray-ffi --features test-hooks [--release]`: the staticlib and
/// the cdylib, with the test-only panic hook the suite calls.
fn build_library(profile: Profile) -> Result {
    let mut cmd = cargo(["build", "-p", "hurray-ffi", "--features", "test-hooks"]);
    if profile == Profile::Release {
        cmd.arg("--release");
    }
    let shown = display(&cmd);
    exec(&mut cmd).map_err(|e| format!("`{shown}` failed: {e}").into())
}

fn staticlib(profile: Profile) -> PathBuf {
    target_dir().join(profile.dir()).join("libhurray_ffi.a")
}

fn cdylib(profile: Profile) -> PathBuf {
    let name = if cfg!(target_os = "macos") {
        "libhurray_ffi.dylib"
    } else {
        "libhurray_ffi.so"
    };
    target_dir().join(profile.dir()).join(name)
}

/// Compiles one C program, linking `lib` (the staticlib) when given.
fn compile(cc: &str, source: &Path, out: &Path, lib: Option<&Path>, extra: &[&str]) -> Result {
    let root = workspace_root();
    let mut cmd = Command::new(cc);
    cmd.args([
        "-std=c11",
        "-Wall",
        "-Wextra",
        "-Werror",
        "-DHURRAY_TEST_HOOKS",
    ])
    .args(extra)
    .arg("-I")
    .arg(root.join("include"))
    .arg("-I")
    .arg(root.join("tests/c"))
    .arg(source);
    if let Some(lib) = lib {
        cmd.arg(lib);
    }
    cmd.args(["-lpthread", "-ldl", "-lm", "-o"]).arg(out);
    let shown = display(&cmd);
    let output = cmd
        .output()
        .map_err(|e| format!("could not start `{shown}`: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "`{shown}` failed ({}):\n{}{}",
            output.status,
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
        .into());
    }
    Ok(())
}

/// A compiled program and its arguments.
struct Program {
    name: String,
    bin: PathBuf,
    args: Vec<OsString>,
}

/// The C blocks of `docs/c-abi.md` that start with `/* example: NAME.c`, as
/// `(NAME.c, source)`.
pub fn doc_examples(markdown: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut lines = markdown.lines();
    while let Some(line) = lines.next() {
        if line.trim() != "```c" {
            continue;
        }
        let mut body = Vec::new();
        for l in lines.by_ref() {
            if l.trim() == "```" {
                break;
            }
            body.push(l);
        }
        let name = body
            .first()
            .and_then(|l| l.trim().strip_prefix("/* example: "))
            .and_then(|r| r.split_whitespace().next())
            .filter(|n| n.ends_with(".c"));
        if let Some(name) = name {
            out.push((name.to_string(), body.join("\n") + "\n"));
        }
    }
    out
}

/// Builds hurray-ffi and every C program; returns them in run order.
fn build_programs(cc: &str, profile: Profile, work: &Path) -> Result<Vec<Program>> {
    let root = workspace_root();
    build_library(profile)?;
    // The second copy for the two-copies test: the other profile's build.
    let other = match profile {
        Profile::Debug => Profile::Release,
        Profile::Release => Profile::Debug,
    };
    build_library(other)?;
    let lib = staticlib(profile);
    let bin = work.join("bin");
    std::fs::create_dir_all(&bin)?;

    let mut programs = Vec::new();
    let mut sources: Vec<PathBuf> = std::fs::read_dir(root.join("tests/c"))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            let n = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            n.starts_with("test_") && n.ends_with(".c") && n != "test_two_copies.c"
        })
        .collect();
    sources.sort();
    for src in &sources {
        let stem = src.file_stem().unwrap().to_string_lossy().into_owned();
        let out = bin.join(&stem);
        compile(cc, src, &out, Some(&lib), &[])?;
        programs.push(Program {
            name: format!("tests/c/{stem}.c"),
            bin: out,
            args: Vec::new(),
        });
    }

    // docs/c-abi.md examples.
    let doc = root.join("docs/c-abi.md");
    let text =
        std::fs::read_to_string(&doc).map_err(|e| format!("cannot read {}: {e}", doc.display()))?;
    let examples = doc_examples(&text);
    if examples.len() < 2 {
        return Err(format!(
            "docs/c-abi.md has {} `/* example: NAME.c */` C blocks, expected at least 2",
            examples.len()
        )
        .into());
    }
    let ex_dir = work.join("examples");
    std::fs::create_dir_all(&ex_dir)?;
    let conformance = conformance_dir();
    for (name, source) in examples {
        let src = ex_dir.join(&name);
        std::fs::write(&src, source)?;
        let stem = name.trim_end_matches(".c").to_string();
        let out = bin.join(format!("example_{stem}"));
        compile(cc, &src, &out, Some(&lib), &[])?;
        // read_file.c reads the golden file; the others take a scratch path.
        let args = if stem == "read_file" {
            match &conformance {
                Some(c) => vec![c.join("files/basic.hrry").into_os_string()],
                None => {
                    println!("note: [xtask] {name}: compiled, not run (no conformance dir)");
                    continue;
                }
            }
        } else {
            vec![work
                .join("tmp")
                .join(format!("{stem}.hrry"))
                .into_os_string()]
        };
        programs.push(Program {
            name: format!("docs/c-abi.md {name}"),
            bin: out,
            args,
        });
    }

    // Two copies in one process: this profile's cdylib and the other's, each under
    // its own name (RTLD_LOCAL loads them as two libraries with their own statics).
    let two = bin.join("test_two_copies");
    compile(cc, &root.join("tests/c/test_two_copies.c"), &two, None, &[])?;
    let a = work.join("libhurray_copy_a.so");
    let b = work.join("libhurray_copy_b.so");
    std::fs::copy(cdylib(profile), &a)?;
    std::fs::copy(cdylib(other), &b)?;
    programs.push(Program {
        name: format!(
            "tests/c/test_two_copies.c ({} + {} cdylib)",
            profile.dir(),
            other.dir()
        ),
        bin: two,
        args: vec![a.into_os_string(), b.into_os_string()],
    });
    Ok(programs)
}

fn conformance_dir() -> Option<PathBuf> {
    let c = workspace_root().join("../shared/conformance");
    c.join("manifest.json").is_file().then_some(c)
}

/// The valgrind command line every program runs under in the valgrind stage.
pub const VALGRIND: &[&str] = &[
    "valgrind",
    "--error-exitcode=1",
    "--leak-check=full",
    "--errors-for-leak-kinds=definite,indirect",
    "--show-possibly-lost=no",
    "-q",
];

/// Builds and runs the suite (natively, or under valgrind).
pub fn run_suite(profile: Profile, valgrind: bool) -> Result<Outcome> {
    let cc = compiler();
    if !has_program(&cc) {
        return Ok(Outcome::Skipped(format!(
            "no C compiler (`{cc}`, set $CC); install gcc or clang to run the C suite"
        )));
    }
    if valgrind && !has_program("valgrind") {
        return Ok(Outcome::Skipped(
            "valgrind not found; install it (CI does: ci/c.sh) to run the suite under memcheck"
                .into(),
        ));
    }
    let work = target_dir().join("xtask/c-tests").join(profile.dir());
    let programs = build_programs(&cc, profile, &work)?;
    let tmp = work.join("tmp");
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp)?;
    let mut failed = Vec::new();
    for p in &programs {
        let mut cmd = if valgrind {
            let mut c = Command::new(VALGRIND[0]);
            c.args(&VALGRIND[1..]).arg(&p.bin);
            c
        } else {
            Command::new(&p.bin)
        };
        cmd.args(&p.args)
            .env("HURRAY_TEST_TMPDIR", &tmp)
            .env("RUST_BACKTRACE", "0")
            .env(
                "HURRAY_TEST_DEBUG_BUILD",
                if profile == Profile::Debug { "1" } else { "0" },
            );
        match conformance_dir() {
            Some(c) => cmd.env("HURRAY_CONFORMANCE_DIR", c),
            None => cmd.env_remove("HURRAY_CONFORMANCE_DIR"),
        };
        println!(
            "--- {}{}",
            p.name,
            if valgrind { " (valgrind)" } else { "" }
        );
        let started = Instant::now();
        let status = cmd
            .status()
            .map_err(|e| format!("could not start {}: {e}", p.bin.display()))?;
        println!(
            "--- {}: {} ({:.1}s)",
            p.name,
            if status.success() { "ok" } else { "FAILED" },
            started.elapsed().as_secs_f64()
        );
        if !status.success() {
            failed.push(format!("{} ({status})", p.name));
        }
    }
    if failed.is_empty() {
        Ok(Outcome::Passed)
    } else {
        Err(format!("C programs failed: {}", failed.join(", ")).into())
    }
}

// ---------------------------------------------------------------- bench

/// Arguments of `cargo xtask bench-c`.
#[derive(Debug, Args)]
pub struct BenchCArgs {
    /// Skip the Rust side of the comparison (`cargo bench -p hurray-ffi --bench abi`).
    #[arg(long)]
    pub c_only: bool,
}

/// Runs `cargo xtask bench-c`: `tests/c/bench_abi.c` against the release staticlib
/// (`-O2`), then the Rust criterion bench that decodes the same 64 MiB stream through
/// hurray-io directly and through the C ABI.
pub fn bench(args: &BenchCArgs) -> Result {
    let cc = compiler();
    if !has_program(&cc) {
        return Err(format!("no C compiler (`{cc}`, set $CC)").into());
    }
    build_library(Profile::Release)?;
    let work = target_dir().join("xtask/c-tests/bench");
    std::fs::create_dir_all(&work)?;
    let out = work.join("bench_abi");
    let src = workspace_root().join("tests/c/bench_abi.c");
    compile(
        &cc,
        &src,
        &out,
        Some(&staticlib(Profile::Release)),
        &["-O2", "-DNDEBUG"],
    )?;
    println!("==> [xtask] {}", out.display());
    exec(&mut Command::new(&out)).map_err(|e| format!("bench_abi failed: {e}"))?;
    if !args.c_only {
        let mut cmd = cargo(["bench", "-p", "hurray-ffi", "--bench", "abi"]);
        let shown = display(&cmd);
        println!("==> [xtask] {shown}");
        exec(&mut cmd).map_err(|e| format!("`{shown}` failed: {e}"))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doc_examples_are_extracted_by_marker() {
        let md = "text\n```c\n/* example: a.c - one */\nint main(void) { return 0; }\n```\n\
                  ```c\nint not_an_example;\n```\n```c\n/* example: b.c */\n```\n";
        let ex = doc_examples(md);
        assert_eq!(ex.len(), 2);
        assert_eq!(ex[0].0, "a.c");
        assert!(ex[0].1.contains("int main"));
        assert_eq!(ex[1].0, "b.c");
    }

    #[test]
    fn the_abi_page_has_two_examples() {
        let text = std::fs::read_to_string(workspace_root().join("docs/c-abi.md")).unwrap();
        let names: Vec<String> = doc_examples(&text).into_iter().map(|e| e.0).collect();
        assert!(names.contains(&"read_file.c".to_string()), "{names:?}");
        assert!(names.contains(&"wrap_memory.c".to_string()), "{names:?}");
    }

    /// The ownership table of `docs/c-abi.md` lists every function of the header.
    #[test]
    fn the_abi_page_lists_every_function() {
        let root = workspace_root();
        let header = std::fs::read_to_string(root.join("include/hurray.h")).unwrap();
        let doc = std::fs::read_to_string(root.join("docs/c-abi.md")).unwrap();
        let mut missing = Vec::new();
        let mut seen = 0;
        for line in header.lines() {
            let Some(at) = line.find("hurray_") else {
                continue;
            };
            let (ret, rest) = line.split_at(at);
            if !["HurrayStatus ", "uint32_t ", "int64_t ", "const char *"].contains(&ret) {
                continue;
            }
            let Some(name) = rest.split('(').next().filter(|_| rest.contains('(')) else {
                continue;
            };
            seen += 1;
            if !doc.contains(&format!("| `{name}` |")) {
                missing.push(name.to_string());
            }
        }
        assert!(seen > 80, "parsed only {seen} functions from the header");
        assert!(
            missing.is_empty(),
            "docs/c-abi.md's ownership table lacks: {missing:?}"
        );
    }
}
