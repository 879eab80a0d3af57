//! `cargo xtask test`: every check the project has, as an ordered list of stages.
//!
//! A stage is a name plus a closure returning an [`Outcome`]. Stages run in order;
//! by default every stage runs even after one fails (`--fail-fast` stops at the
//! first failure), and the run ends with the summary of [`Report`]: the skipped and
//! failed stages by name, then one line counting the stages passed, skipped and
//! failed. The exit status is non-zero exactly when a stage failed.
//!
//! A stage whose tool is missing returns [`Outcome::Skipped`]; what that means is
//! decided in one place ([`crate::outcome`]): a note locally, a failure naming the
//! stage when `CI` is set. To add a check, push a [`Stage`] (built with
//! [`Stage::task`], optionally [`Stage::requires`]) in [`stages`]; nothing else needs
//! to change.

use std::time::Instant;

use clap::Args;

use crate::header;
pub use crate::outcome::Outcome;
use crate::outcome::{strict, Report, CI_VAR};
use crate::util::{cargo, display, exec, has_cargo_tool, workspace_root, Result};

/// Arguments of `cargo xtask test`.
#[derive(Debug, Args)]
pub struct TestArgs {
    /// Run only `cargo test` (and the check that ../shared/conformance is present).
    #[arg(long)]
    pub quick: bool,
    /// Also check that the benchmarks compile (`cargo bench --no-run`).
    #[arg(long)]
    pub bench_build: bool,
    /// Run only the stages whose name contains this text (e.g. `--only python:`);
    /// repeat it to select more (`--only java --only node:`). Text that matches no
    /// stage is an error listing the stage names.
    #[arg(long)]
    pub only: Vec<String>,
    /// Stop at the first failed stage (the rest are listed as not run) instead of
    /// running every stage.
    #[arg(long)]
    pub fail_fast: bool,
}

/// One step of `cargo xtask test`.
pub struct Stage {
    /// Shown in the stage header, e.g. `cargo test --workspace`.
    pub name: String,
    /// Runs the stage from the workspace root.
    pub run: Box<dyn Fn() -> Result<Outcome>>,
}

impl Stage {
    /// A stage that runs `cargo <args>` (split on whitespace) with extra environment
    /// variables, named after that command line.
    fn cargo(args: &'static str, env: &'static [(&'static str, &'static str)]) -> Stage {
        let make = move || {
            let mut cmd = cargo(args.split_whitespace());
            cmd.envs(env.iter().copied());
            cmd
        };
        Stage::task(&display(&make()), move || {
            exec(&mut make()).map(|()| Outcome::Passed)
        })
    }

    /// A stage that runs in-process (from the workspace root), named `name`.
    pub fn task(name: &str, run: impl Fn() -> Result<Outcome> + 'static) -> Stage {
        Stage {
            name: name.to_string(),
            run: Box::new(run),
        }
    }

    /// This stage, skipped when `missing` returns why it cannot run here (what is
    /// missing and how to install it); `missing` is asked when the stage starts.
    pub fn requires(self, missing: impl Fn() -> Option<String> + 'static) -> Stage {
        let Stage { name, run } = self;
        Stage::task(&name, move || match missing() {
            Some(why) => Ok(Outcome::Skipped(why)),
            None => run(),
        })
    }

    /// This stage, skipped unless `cargo <tool>` is installed.
    fn requires_cargo_tool(self, tool: &'static str, component: &'static str) -> Stage {
        self.requires(move || {
            (!has_cargo_tool(tool)).then(|| {
                format!(
                    "`cargo {tool}` not found; install it with `rustup component add {component}`"
                )
            })
        })
    }
}

/// The stage that checks the golden vectors are there: the Rust, C, Go, Java, Node
/// and Python tests read `../shared/conformance` and skip those tests when it is
/// absent, so its absence is a skip here (a failure under CI, where it must exist).
fn conformance_stage() -> Stage {
    Stage::task(
        "conformance: ../shared/conformance/manifest.json is present (the golden vectors the tests read)",
        || Ok(conformance_outcome(&workspace_root().join("../shared/conformance"))),
    )
}

/// Passed when `dir/manifest.json` exists, else skipped naming `dir`.
fn conformance_outcome(dir: &std::path::Path) -> Outcome {
    if dir.join("manifest.json").is_file() {
        Outcome::Passed
    } else {
        Outcome::Skipped(format!(
            "{} not found; the conformance tests of every language skip themselves \
             (put the shared folder beside the repository)",
            dir.display()
        ))
    }
}

/// The stages of `cargo xtask test`, in the order they run.
pub fn stages(args: &TestArgs) -> Vec<Stage> {
    let test = Stage::cargo("test --workspace --all-features", &[]);
    if args.quick {
        return vec![conformance_stage(), test];
    }
    let mut stages = vec![
        conformance_stage(),
        Stage::cargo("fmt --all -- --check", &[]).requires_cargo_tool("fmt", "rustfmt"),
        Stage::cargo(
            "clippy --workspace --all-targets --all-features -- -D warnings",
            &[],
        )
        .requires_cargo_tool("clippy", "clippy"),
        Stage::task("cargo xtask header --check", || {
            header::check().map(|()| Outcome::Passed)
        }),
        Stage::task("cargo xtask codegen --check", || {
            crate::codegen::check().map(|()| Outcome::Passed)
        }),
        Stage::task(
            "include/hurray.h compiles as C11 and C++11, included twice",
            header::compile_check,
        ),
        // Doc tests run here too: `cargo test` includes them.
        test,
        // Issue 17, Must show 2 at full size: a parallel get of 256 MiB reassembles
        // exactly (ignored in the debug run above for its memory and time).
        Stage::cargo(
            "test --release -p hurray-net --test end_to_end -- --ignored",
            &[],
        ),
        Stage::cargo(
            "doc --workspace --no-deps --all-features",
            &[("RUSTDOCFLAGS", "-D warnings")],
        ),
    ];
    // The C suite (tests/c, docs/c-abi.md examples, two copies), then under valgrind.
    stages.extend(crate::c_tests::stages());
    // Every fuzz target briefly (fuzz/, docs/fuzzing.md).
    stages.push(crate::fuzz::stage());
    if args.bench_build {
        stages.push(Stage::cargo("bench --workspace --no-run", &[]));
    }
    // Language binding stages (Go, Python, Java, Node) go here, each returning
    // `Outcome::Skipped` when its toolchain is missing.
    stages.extend(crate::go::stages());
    stages.push(Stage::task(
        "python: maturin develop into target/py-venv, pytest bindings/python/tests",
        crate::python::test_stage,
    ));
    stages.push(Stage::task(
        "python: scale-out, Dask LocalCluster and local Ray (installed into target/py-venv), \
         pytest bindings/python/tests_scaleout",
        crate::python::scaleout_stage,
    ));
    stages.push(Stage::task(
        "dist: Python wheel (hurray-tensors, manylinux2014 via zig, auditwheel show) and sdist; the wheel installs into a fresh venv, `import hurray` reads and writes",
        crate::python::wheel_stage,
    ));
    stages.extend(crate::java::stages());
    stages.extend(crate::node::stages());
    // Every language writes and reads every case of tests/cases (tests/matrix).
    stages.push(Stage::task(
        "matrix: every language's producer x every language's consumer over tests/cases \
         (file + stream), byte identity, flipped-byte self-test",
        crate::matrix::stage,
    ));
    stages
}

/// The stages `--only` selects: those whose name contains any of the `only` texts
/// (all of them when `only` is empty), in run order.
///
/// Errors: a text matches no stage name; the message lists the names, so a typo
/// cannot pass as a green run of nothing.
pub fn select(stages: Vec<Stage>, only: &[String]) -> Result<Vec<Stage>> {
    if only.is_empty() {
        return Ok(stages);
    }
    if let Some(unmatched) = only
        .iter()
        .find(|o| !stages.iter().any(|s| s.name.contains(o.as_str())))
    {
        let list: String = stages.iter().map(|s| format!("\n  {}", s.name)).collect();
        return Err(format!(
            "error: [xtask] --only {unmatched:?} matches no stage; the stages are:{list}"
        )
        .into());
    }
    Ok(stages
        .into_iter()
        .filter(|s| only.iter().any(|o| s.name.contains(o.as_str())))
        .collect())
}

/// Runs a stage; a panic inside it is that stage's failure, not the end of the run.
fn run_stage(stage: &Stage) -> Result<Outcome> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| (stage.run)())).unwrap_or_else(
        |panic| {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic".into());
            Err(format!("panicked: {what}").into())
        },
    )
}

/// Runs `stages` in order, printing each one's header and end line, and records
/// their verdicts (`strict`: skips fail); with `fail_fast`, stops at the first
/// failure and records the rest as not run.
pub fn execute(stages: Vec<Stage>, strict: bool, fail_fast: bool) -> Report {
    let mut report = Report::new(strict);
    let mut stages = stages.into_iter();
    for stage in stages.by_ref() {
        println!("==> [xtask] {}", stage.name);
        let started = Instant::now();
        let result = run_stage(&stage);
        let verdict = report.record(&stage.name, result);
        println!("{}", verdict.line(&stage.name, started.elapsed()));
        if fail_fast && verdict.is_failure() {
            break;
        }
    }
    for stage in stages {
        report.not_run(&stage.name);
    }
    report
}

/// Runs the selected stages in order (all of them, or up to the first failure with
/// `--fail-fast`), then prints the summary of [`Report`], whose count line is the
/// last line of the run.
///
/// Errors: `--only` matches no stage (before anything runs); any stage failed (the
/// error is the count line, so `main` prints it last, on stderr).
pub fn run(args: &TestArgs) -> Result {
    let selected = select(stages(args), &args.only)?;
    let strict = strict();
    if strict {
        println!(
            "note: [xtask] `{CI_VAR}` is set: a stage that cannot run here (missing tool, \
             missing ../shared) fails the run"
        );
    }
    let all = Instant::now();
    let report = execute(selected, strict, args.fail_fast);
    let mut lines = report.summary(all.elapsed());
    let counts = lines.pop().expect("the summary ends with the count line");
    for line in lines {
        println!("{line}");
    }
    if report.failed() {
        Err(counts.into())
    } else {
        println!("{counts}");
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(quick: bool, bench_build: bool) -> Vec<String> {
        stages(&TestArgs {
            quick,
            bench_build,
            only: Vec::new(),
            fail_fast: false,
        })
        .into_iter()
        .map(|s| s.name)
        .collect()
    }

    #[test]
    fn only_selects_by_substring_and_refuses_to_match_nothing() {
        let args = TestArgs {
            quick: false,
            bench_build: false,
            only: Vec::new(),
            fail_fast: false,
        };
        let picked = |only: &[&str]| {
            let only: Vec<String> = only.iter().map(|o| o.to_string()).collect();
            select(stages(&args), &only).map(|v| v.into_iter().map(|s| s.name).collect::<Vec<_>>())
        };
        assert_eq!(picked(&[]).unwrap().len(), stages(&args).len());
        let clippy = picked(&["cargo clippy"]).unwrap();
        assert_eq!(clippy.len(), 1);
        assert!(clippy[0].starts_with("cargo clippy"));
        // Several texts: the union, in run order.
        let two = picked(&["node: build", "conformance:"]).unwrap();
        assert_eq!(two.len(), 2, "{two:?}");
        assert!(two[0].starts_with("conformance:") && two[1].starts_with("node: build"));
        // One text that matches nothing fails the whole selection.
        let err = picked(&["cargo clippy", "no such stage"])
            .unwrap_err()
            .to_string();
        assert!(err.contains("\"no such stage\" matches no stage"), "{err}");
        for name in names(false, false) {
            assert!(
                err.contains(&format!("\n  {name}")),
                "{name:?} missing from {err}"
            );
        }
    }

    /// Fake stages: one of each outcome, a panic, an error.
    fn fakes() -> Vec<Stage> {
        vec![
            Stage::task("a", || Ok(Outcome::Passed)),
            Stage::task("b", || Ok(Outcome::Passed)).requires(|| Some("`b-tool` not found".into())),
            Stage::task("c", || panic!("c broke")),
            Stage::task("d", || Err("exit status: 1".into())),
            Stage::task("e", || Ok(Outcome::Passed)).requires(|| None),
        ]
    }

    fn counts(report: &Report) -> String {
        let lines = report.summary(std::time::Duration::ZERO);
        lines.last().unwrap().clone()
    }

    #[test]
    fn every_stage_runs_after_a_failure_and_panics_are_failures() {
        let report = execute(fakes(), false, false);
        assert!(report.failed());
        let lines = report.summary(std::time::Duration::ZERO);
        assert_eq!(
            lines,
            [
                "==> [xtask] skipped: b: `b-tool` not found",
                "==> [xtask] FAILED: c: panicked: c broke",
                "==> [xtask] FAILED: d: exit status: 1",
                "cargo xtask test: 2 stages passed, 1 skipped, 2 failed (0.0s)",
            ]
        );
    }

    #[test]
    fn fail_fast_stops_at_the_first_failure() {
        let report = execute(fakes(), false, true);
        assert_eq!(
            counts(&report),
            "cargo xtask test: 1 stage passed, 1 skipped, 1 failed, 2 not run (0.0s)"
        );
    }

    #[test]
    fn under_ci_a_missing_tool_fails_its_stage() {
        let stages = vec![
            Stage::task("a", || Ok(Outcome::Passed)),
            Stage::task("b", || Ok(Outcome::Passed)).requires(|| Some("`b-tool` not found".into())),
        ];
        let report = execute(stages, true, false);
        assert!(report.failed());
        let lines = report.summary(std::time::Duration::ZERO);
        assert!(
            lines[0].starts_with("==> [xtask] FAILED: b: could not run")
                && lines[0].ends_with("`b-tool` not found"),
            "{lines:?}"
        );
        let local = execute(
            vec![Stage::task("b", || Ok(Outcome::Passed)).requires(|| Some("x".into()))],
            false,
            false,
        );
        assert!(!local.failed());
        assert_eq!(
            counts(&local),
            "cargo xtask test: 0 stages passed, 1 skipped, 0 failed (0.0s)"
        );
    }

    #[test]
    fn a_missing_conformance_folder_is_a_skip_naming_it() {
        let dir = workspace_root().join("target/xtask/conformance-check");
        let _ = std::fs::remove_dir_all(&dir);
        let Outcome::Skipped(why) = conformance_outcome(&dir) else {
            panic!("no folder must be a skip");
        };
        assert!(why.contains("conformance-check not found"), "{why}");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("manifest.json"), "{}").unwrap();
        assert_eq!(conformance_outcome(&dir), Outcome::Passed);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn quick_runs_only_cargo_test() {
        let names = names(true, true);
        assert_eq!(names.len(), 2, "{names:?}");
        assert!(names[0].starts_with("conformance: "), "{names:?}");
        assert_eq!(names[1], "cargo test --workspace --all-features");
    }

    #[test]
    fn full_run_order() {
        let names = names(false, true);
        let order = [
            "conformance: ../shared/conformance",
            "cargo fmt",
            "cargo clippy",
            "cargo xtask header --check",
            "cargo xtask codegen --check",
            "include/hurray.h compiles",
            "cargo test",
            "cargo test --release -p hurray-net",
            "RUSTDOCFLAGS",
            "c: tests/c suite",
            "c: the same programs under valgrind",
            "fuzz: every target",
            "cargo bench",
            "go: bindings/go/include/hurray.h",
            "dist: Go module proxy",
            "gofmt -l ., go vet",
            "go test -race",
            "go test -tags hurray_debug",
            "python: maturin develop",
            "python: scale-out",
            "dist: Python wheel",
            "java: build libhurray_java",
            "java: mvn -B -q package",
            "java: a fresh JVM loads",
            "dist: Maven repository folder",
            "node: build",
            "node: npm ci, tsc",
            "node: node --expose-gc --test",
            "dist: npm tarball",
            "matrix: every language",
        ];
        assert_eq!(names.len(), order.len());
        for (name, prefix) in names.iter().zip(order) {
            assert!(
                name.starts_with(prefix),
                "{name:?} should start with {prefix:?}"
            );
        }
        assert!(!self::names(false, false)
            .iter()
            .any(|n| n.contains("bench")));
    }
}
