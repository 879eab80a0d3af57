//! `cargo xtask test`: every check the project has, as an ordered list of stages.
//!
//! A stage is a name plus a closure. Stages run in order and the first failure stops
//! the run, naming the stage. A stage whose tool is missing reports itself skipped
//! instead of failing. To add a check (Go, Python, Java, Node ...),
//! push a [`Stage`] in [`stages`]; nothing else needs to change.

use std::time::Instant;

use clap::Args;

use crate::header;
use crate::util::{cargo, display, exec, has_cargo_tool, workspace_root, Result};

/// Arguments of `cargo xtask test`.
#[derive(Debug, Args)]
pub struct TestArgs {
    /// Run only `cargo test` (no fmt, clippy or docs).
    #[arg(long)]
    pub quick: bool,
    /// Also check that the benchmarks compile (`cargo bench --no-run`).
    #[arg(long)]
    pub bench_build: bool,
    /// Run only the stages whose name contains this text (e.g. `--only python:`);
    /// text that matches no stage is an error listing the stage names.
    #[arg(long)]
    pub only: Option<String>,
}

/// What a stage did when it did not fail.
#[derive(Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The stage ran and passed.
    Passed,
    /// The stage could not run here (a tool is missing); the reason is shown.
    Skipped(String),
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
        Stage {
            name: display(&make()),
            run: Box::new(move || exec(&mut make()).map(|()| Outcome::Passed)),
        }
    }

    /// A stage that runs in-process.
    fn task(name: &str, run: impl Fn() -> Result<Outcome> + 'static) -> Stage {
        Stage {
            name: name.to_string(),
            run: Box::new(run),
        }
    }

    /// This stage, skipped with a note unless `cargo <tool>` is installed.
    fn requires_cargo_tool(self, tool: &'static str, component: &'static str) -> Stage {
        let Stage { name, run } = self;
        Stage {
            name,
            run: Box::new(move || {
                if has_cargo_tool(tool) {
                    run()
                } else {
                    Ok(Outcome::Skipped(format!(
                        "`cargo {tool}` not found; install it with `rustup component add {component}`"
                    )))
                }
            }),
        }
    }
}

/// The stages of `cargo xtask test`, in the order they run.
pub fn stages(args: &TestArgs) -> Vec<Stage> {
    let test = Stage::cargo("test --workspace --all-features", &[]);
    if args.quick {
        return vec![test];
    }
    let mut stages = vec![
        Stage::cargo("fmt --all -- --check", &[]).requires_cargo_tool("fmt", "rustfmt"),
        Stage::cargo(
            "clippy --workspace --all-targets --all-features -- -D warnings",
            &[],
        )
        .requires_cargo_tool("clippy", "clippy"),
        Stage::task("cargo xtask header --check", || {
            header::check().map(|()| Outcome::Passed)
        }),
        Stage::task(
            "include/hurray.h compiles as C11 and C++11, included twice",
            header::compile_check,
        ),
        // Doc tests run here too: `cargo test` includes them.
        test,
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
    // Language binding stages (Go, Python, Java, Node) go here, each skipping
    // itself with a note when its toolchain is missing.
    stages.extend(crate::go::stages());
    stages.push(Stage::task(
        "python: maturin develop into target/py-venv, pytest bindings/python/tests",
        crate::python::test_stage,
    ));
    stages.push(Stage::task(
        "python: wheel from `cargo xtask dist` installs and imports in a fresh venv",
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

/// The stages `--only` selects (all of them without it).
///
/// Errors: `--only` matches no stage name; the message lists the names, so a typo
/// cannot pass as a green run of nothing.
pub fn select(stages: Vec<Stage>, only: Option<&str>) -> Result<Vec<Stage>> {
    let Some(only) = only else {
        return Ok(stages);
    };
    let names: Vec<String> = stages.iter().map(|s| s.name.clone()).collect();
    let selected: Vec<Stage> = stages
        .into_iter()
        .filter(|s| s.name.contains(only))
        .collect();
    if selected.is_empty() {
        let list: String = names.iter().map(|n| format!("\n  {n}")).collect();
        return Err(format!(
            "error: [xtask] --only {only:?} matches no stage; the stages are:{list}"
        )
        .into());
    }
    Ok(selected)
}

/// Runs every stage in order, stopping at the first failure.
pub fn run(args: &TestArgs) -> Result {
    let conformance = workspace_root().join("../shared/conformance");
    if !conformance.is_dir() {
        println!(
            "note: [xtask] {} not found; conformance tests will skip themselves",
            conformance.display()
        );
    }
    let selected = select(stages(args), args.only.as_deref())?;
    let all = Instant::now();
    for stage in selected {
        println!("==> [xtask] {}", stage.name);
        let started = Instant::now();
        let outcome = (stage.run)()
            .map_err(|err| format!("error: [xtask] stage `{}` failed: {err}", stage.name))?;
        let secs = started.elapsed().as_secs_f64();
        match outcome {
            Outcome::Passed => println!("==> [xtask] {}: ok ({secs:.1}s)", stage.name),
            Outcome::Skipped(why) => println!("==> [xtask] {}: skipped: {why}", stage.name),
        }
    }
    println!(
        "==> [xtask] all stages passed ({:.1}s)",
        all.elapsed().as_secs_f64()
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(quick: bool, bench_build: bool) -> Vec<String> {
        stages(&TestArgs {
            quick,
            bench_build,
            only: None,
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
            only: None,
        };
        let picked = |only: Option<&str>| {
            select(stages(&args), only).map(|v| v.into_iter().map(|s| s.name).collect::<Vec<_>>())
        };
        assert_eq!(picked(None).unwrap().len(), stages(&args).len());
        let clippy = picked(Some("cargo clippy")).unwrap();
        assert_eq!(clippy.len(), 1);
        assert!(clippy[0].starts_with("cargo clippy"));
        let err = picked(Some("no such stage")).unwrap_err().to_string();
        assert!(err.contains("\"no such stage\" matches no stage"), "{err}");
        for name in names(false, false) {
            assert!(
                err.contains(&format!("\n  {name}")),
                "{name:?} missing from {err}"
            );
        }
    }

    #[test]
    fn quick_runs_only_cargo_test() {
        assert_eq!(names(true, true), ["cargo test --workspace --all-features"]);
    }

    #[test]
    fn full_run_order() {
        let names = names(false, true);
        let order = [
            "cargo fmt",
            "cargo clippy",
            "cargo xtask header --check",
            "include/hurray.h compiles",
            "cargo test",
            "RUSTDOCFLAGS",
            "c: tests/c suite",
            "c: the same programs under valgrind",
            "fuzz: every target",
            "cargo bench",
            "go: bindings/go/include/hurray.h",
            "go: `cargo xtask go dist`",
            "gofmt -l ., go vet",
            "go test -race",
            "go test -tags hurray_debug",
            "python: maturin develop",
            "python: wheel",
            "java: build libhurray_java",
            "java: mvn -B -q package",
            "java: a fresh JVM loads",
            "node: build",
            "node: npm ci, tsc",
            "node: node --expose-gc --test",
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
