//! A byte-count progress bar on standard error, shown only to a person: when
//! standard error is a terminal and the job is large enough to wait for.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;

/// Jobs smaller than this many bytes never show a bar.
pub const MIN_BYTES: u64 = 64 << 20;

/// A progress bar that may be hidden; every method is a no-op when it is.
#[derive(Debug, Clone)]
pub struct Progress {
    bar: Option<ProgressBar>,
}

impl Progress {
    /// A bar for `total` bytes labelled `label`, shown when standard error is a
    /// terminal and `total` is at least [`MIN_BYTES`].
    pub fn for_bytes(total: u64, label: &str) -> Progress {
        let show = std::io::stderr().is_terminal() && total >= MIN_BYTES;
        if !show {
            return Progress::hidden();
        }
        let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
        if let Ok(style) =
            ProgressStyle::with_template("{msg} [{wide_bar}] {bytes}/{total_bytes} {bytes_per_sec}")
        {
            bar.set_style(style.progress_chars("=> "));
        }
        bar.set_message(label.to_owned());
        Progress { bar: Some(bar) }
    }

    /// A byte counter with a spinner for a job whose size is not known up front,
    /// shown when standard error is a terminal.
    pub fn for_unknown(label: &str) -> Progress {
        if !std::io::stderr().is_terminal() {
            return Progress::hidden();
        }
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
        if let Ok(style) = ProgressStyle::with_template("{msg} {spinner} {bytes} {bytes_per_sec}") {
            bar.set_style(style);
        }
        bar.set_message(label.to_owned());
        Progress { bar: Some(bar) }
    }

    /// A bar that never draws.
    pub fn hidden() -> Progress {
        Progress { bar: None }
    }

    /// Whether the bar draws.
    pub fn is_visible(&self) -> bool {
        self.bar.is_some()
    }

    /// Adds `n` bytes done.
    pub fn inc(&self, n: u64) {
        if let Some(b) = &self.bar {
            b.inc(n);
        }
    }

    /// Removes the bar from the terminal.
    pub fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_jobs_and_pipes_get_no_bar() {
        // Under `cargo test` standard error is captured or piped; either way the bar
        // must stay hidden for a small job.
        let p = Progress::for_bytes(10, "x");
        assert!(!p.is_visible());
        p.inc(5);
        p.finish();
    }
}
