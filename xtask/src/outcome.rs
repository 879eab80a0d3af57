//! What each stage of `cargo xtask test` did, the one rule that turns that into a
//! verdict, and the summary the run ends with.
//!
//! A stage returns an [`Outcome`] (or an error). [`Report::record`] applies the rule:
//! an error fails the stage; with `CI` set ([`strict`]), a stage that could not run
//! ([`Outcome::Skipped`]) or ran only in part ([`Outcome::PassedPartly`]) fails too,
//! naming the missing piece; without `CI` both pass with a note. [`Report::summary`]
//! lists the skipped, partial and failed stages and ends with one line counting the
//! stages passed, skipped and failed.
//!
//! A new stage module needs only [`Outcome`]: return `Outcome::Skipped(why)` when a
//! tool it needs is missing (why = what is missing and how to get it), and the rule
//! here decides what that means for the run.

use std::ffi::OsStr;
use std::time::Duration;

use crate::util::Result;

/// What a stage did when it did not fail.
#[derive(Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The stage ran and passed.
    Passed,
    /// The stage ran and passed, but part of it could not run here (a language of the
    /// matrix, one of two compilers); the text names what was left out and why.
    /// Fails the run when `CI` is set.
    PassedPartly(String),
    /// The stage could not run here (a tool is missing); the text says what is missing
    /// and how to install it. Fails the run when `CI` is set.
    Skipped(String),
}

/// The environment variable that makes skips fail: set by CI systems (and `.ci/run`).
pub const CI_VAR: &str = "CI";

/// Whether a value of `CI` makes the run strict: set, not empty (after trimming), and
/// neither `0` nor `false` (in any case).
pub fn strict_from(value: Option<&OsStr>) -> bool {
    let Some(value) = value else {
        return false;
    };
    let value = value.to_string_lossy();
    let value = value.trim();
    !(value.is_empty() || value == "0" || value.eq_ignore_ascii_case("false"))
}

/// Whether this run is strict: `CI` is set to something other than empty, `0` or
/// `false` (see [`strict_from`]).
pub fn strict() -> bool {
    strict_from(std::env::var_os(CI_VAR).as_deref())
}

/// What a stage's result means for the run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Ran and passed.
    Passed,
    /// Ran and passed in part (not strict); what was left out.
    PassedPartly(String),
    /// Could not run (not strict); why.
    Skipped(String),
    /// Failed, or could not run (fully) under CI; why.
    Failed(String),
}

impl Verdict {
    /// The verdict of one stage's result: an error fails; with `strict`, a skip or a
    /// partial pass fails too, its message naming what was missing.
    pub fn of(result: Result<Outcome>, strict: bool) -> Verdict {
        match result {
            Err(err) => Verdict::Failed(err.to_string()),
            Ok(Outcome::Passed) => Verdict::Passed,
            Ok(Outcome::Skipped(why)) if strict => Verdict::Failed(format!(
                "could not run, and `{CI_VAR}` is set (under CI a stage that cannot run fails): {why}"
            )),
            Ok(Outcome::PassedPartly(why)) if strict => Verdict::Failed(format!(
                "ran only in part, and `{CI_VAR}` is set (under CI every part must run): {why}"
            )),
            Ok(Outcome::Skipped(why)) => Verdict::Skipped(why),
            Ok(Outcome::PassedPartly(why)) => Verdict::PassedPartly(why),
        }
    }

    /// Whether the run fails because of this stage.
    pub fn is_failure(&self) -> bool {
        matches!(self, Verdict::Failed(_))
    }

    /// The line printed when stage `name` ends, e.g. `==> [xtask] NAME: ok (1.2s)`.
    pub fn line(&self, name: &str, took: Duration) -> String {
        let secs = took.as_secs_f64();
        match self {
            Verdict::Passed => format!("==> [xtask] {name}: ok ({secs:.1}s)"),
            Verdict::PassedPartly(why) => {
                format!("==> [xtask] {name}: ok, in part ({secs:.1}s): {why}")
            }
            Verdict::Skipped(why) => format!("==> [xtask] {name}: skipped: {why}"),
            Verdict::Failed(why) => format!("==> [xtask] {name}: FAILED ({secs:.1}s): {why}"),
        }
    }
}

/// The verdicts of a run, in stage order, and the stages left unrun.
#[derive(Debug)]
pub struct Report {
    strict: bool,
    stages: Vec<(String, Verdict)>,
    not_run: Vec<String>,
}

impl Report {
    /// An empty report; `strict` as from [`strict`].
    pub fn new(strict: bool) -> Report {
        Report {
            strict,
            stages: Vec::new(),
            not_run: Vec::new(),
        }
    }

    /// Records stage `name`'s result under the rule of [`Verdict::of`]; returns the verdict.
    pub fn record(&mut self, name: &str, result: Result<Outcome>) -> &Verdict {
        self.stages
            .push((name.to_string(), Verdict::of(result, self.strict)));
        &self.stages.last().expect("just pushed").1
    }

    /// Records that stage `name` did not run because an earlier one failed (`--fail-fast`).
    pub fn not_run(&mut self, name: &str) {
        self.not_run.push(name.to_string());
    }

    /// Whether any stage failed: the run's exit status is non-zero exactly then.
    pub fn failed(&self) -> bool {
        self.stages.iter().any(|(_, v)| v.is_failure())
    }

    /// The closing lines: each skipped, partial, failed and unrun stage with its
    /// reason, then, always last, the count line
    /// `cargo xtask test: P stages passed, S skipped, F failed (...)`. Stages passed in
    /// part count as passed (and say so in the count line).
    pub fn summary(&self, took: Duration) -> Vec<String> {
        let mut lines = Vec::new();
        let (mut passed, mut partly, mut skipped, mut failed) = (0, 0, 0, 0);
        for (name, verdict) in &self.stages {
            match verdict {
                Verdict::Passed => passed += 1,
                Verdict::PassedPartly(why) => {
                    passed += 1;
                    partly += 1;
                    lines.push(format!("==> [xtask] passed in part: {name}: {why}"));
                }
                Verdict::Skipped(why) => {
                    skipped += 1;
                    lines.push(format!("==> [xtask] skipped: {name}: {why}"));
                }
                Verdict::Failed(why) => {
                    failed += 1;
                    lines.push(format!("==> [xtask] FAILED: {name}: {why}"));
                }
            }
        }
        for name in &self.not_run {
            lines.push(format!("==> [xtask] not run (--fail-fast): {name}"));
        }
        let plural = if passed == 1 { "" } else { "s" };
        let mut counts = format!("cargo xtask test: {passed} stage{plural} passed");
        if partly > 0 {
            counts += &format!(" ({partly} in part)");
        }
        counts += &format!(", {skipped} skipped, {failed} failed");
        if !self.not_run.is_empty() {
            counts += &format!(", {} not run", self.not_run.len());
        }
        counts += &format!(" ({:.1}s", took.as_secs_f64());
        if self.strict {
            counts += &format!("; {CI_VAR} is set: a stage that cannot run fails");
        }
        counts += ")";
        lines.push(counts);
        lines
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os(s: &str) -> Option<&OsStr> {
        Some(OsStr::new(s))
    }

    #[test]
    fn ci_values_that_make_the_run_strict() {
        for on in ["true", "1", "yes", "TRUE", "github-actions"] {
            assert!(strict_from(os(on)), "CI={on:?} should be strict");
        }
        for off in ["", "  ", "0", "false", "False", "FALSE", " false "] {
            assert!(!strict_from(os(off)), "CI={off:?} should not be strict");
        }
        assert!(!strict_from(None));
    }

    #[test]
    fn a_skip_fails_only_under_ci_and_names_what_is_missing() {
        let skip = || Ok(Outcome::Skipped("`go` not found".into()));
        assert_eq!(
            Verdict::of(skip(), false),
            Verdict::Skipped("`go` not found".into())
        );
        let Verdict::Failed(why) = Verdict::of(skip(), true) else {
            panic!("a skip under CI must fail");
        };
        assert!(
            why.contains("`go` not found") && why.contains("`CI`"),
            "{why}"
        );

        let part = || Ok(Outcome::PassedPartly("java: skipped".into()));
        assert_eq!(
            Verdict::of(part(), false),
            Verdict::PassedPartly("java: skipped".into())
        );
        assert!(Verdict::of(part(), true).is_failure());

        assert_eq!(Verdict::of(Ok(Outcome::Passed), true), Verdict::Passed);
        let err = Verdict::of(Err("exit status: 101".into()), false);
        assert_eq!(err, Verdict::Failed("exit status: 101".into()));
    }

    fn report(strict: bool) -> Report {
        let mut r = Report::new(strict);
        r.record("cargo test", Ok(Outcome::Passed));
        r.record("go test", Ok(Outcome::Skipped("`go` not found".into())));
        r.record("matrix", Ok(Outcome::PassedPartly("go: skipped".into())));
        r.record("cargo fmt", Ok(Outcome::Passed));
        r
    }

    #[test]
    fn locally_skips_are_counted_and_listed_and_the_count_line_is_last() {
        let r = report(false);
        assert!(!r.failed());
        let lines = r.summary(Duration::from_millis(1500));
        assert_eq!(
            lines,
            [
                "==> [xtask] skipped: go test: `go` not found",
                "==> [xtask] passed in part: matrix: go: skipped",
                "cargo xtask test: 3 stages passed (1 in part), 1 skipped, 0 failed (1.5s)",
            ]
        );
    }

    #[test]
    fn under_ci_the_same_run_fails_naming_the_stages() {
        let r = report(true);
        assert!(r.failed());
        let lines = r.summary(Duration::from_secs(2));
        assert_eq!(lines.len(), 3, "{lines:?}");
        assert!(
            lines[0].starts_with("==> [xtask] FAILED: go test: could not run")
                && lines[0].ends_with("`go` not found"),
            "{}",
            lines[0]
        );
        assert!(
            lines[1].starts_with("==> [xtask] FAILED: matrix: ran only in part"),
            "{}",
            lines[1]
        );
        assert_eq!(
            lines[2],
            "cargo xtask test: 2 stages passed, 0 skipped, 2 failed \
             (2.0s; CI is set: a stage that cannot run fails)"
        );
    }

    #[test]
    fn a_failure_fails_without_ci_and_unrun_stages_are_counted() {
        let mut r = Report::new(false);
        r.record("cargo test", Err("exit status: 101".into()));
        r.not_run("cargo doc");
        assert!(r.failed());
        let lines = r.summary(Duration::ZERO);
        assert_eq!(
            lines,
            [
                "==> [xtask] FAILED: cargo test: exit status: 101",
                "==> [xtask] not run (--fail-fast): cargo doc",
                "cargo xtask test: 0 stages passed, 0 skipped, 1 failed, 1 not run (0.0s)",
            ]
        );
    }

    #[test]
    fn stage_end_lines() {
        let t = Duration::from_millis(2340);
        assert_eq!(Verdict::Passed.line("x", t), "==> [xtask] x: ok (2.3s)");
        assert_eq!(
            Verdict::Skipped("no go".into()).line("x", t),
            "==> [xtask] x: skipped: no go"
        );
        assert_eq!(
            Verdict::Failed("boom".into()).line("x", t),
            "==> [xtask] x: FAILED (2.3s): boom"
        );
    }
}
