//! The demo's benchmark: converting the real model against `cp` of the same file
//! (best of several runs, page cache warm for both), and the peak memory of a
//! conversion, measured from outside by GNU time when it is installed, else as the
//! CLI reports it (`--stats`, Linux `VmHWM`).

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::util::Result;

/// Runs `cmd` `runs` times (discarding output) and returns the fastest wall time.
pub fn best_of(runs: usize, mut cmd: impl FnMut() -> Command) -> Result<Duration> {
    let mut best = Duration::MAX;
    for _ in 0..runs.max(1) {
        let mut c = cmd();
        let start = Instant::now();
        let status = c.stdout(Stdio::null()).stderr(Stdio::null()).status()?;
        let took = start.elapsed();
        if !status.success() {
            return Err(format!("demo: benchmark command failed: {status}").into());
        }
        best = best.min(took);
    }
    Ok(best)
}

/// Peak resident memory of one run of `cmd` in bytes, and how it was measured.
pub fn peak_memory(mut cmd: Command) -> Result<(u64, &'static str)> {
    let gnu_time = Path::new("/usr/bin/time");
    if gnu_time.is_file() {
        let mut timed = Command::new(gnu_time);
        timed
            .args(["-f", "%M"])
            .arg(cmd.get_program())
            .args(cmd.get_args());
        if let Some(dir) = cmd.get_current_dir() {
            timed.current_dir(dir);
        }
        let out = timed.stdout(Stdio::null()).output()?;
        // GNU time prints the figure (KiB) as the last line of standard error.
        let err = String::from_utf8_lossy(&out.stderr);
        if let Some(kib) = err
            .lines()
            .last()
            .and_then(|l| l.trim().parse::<u64>().ok())
        {
            if out.status.success() {
                return Ok((kib * 1024, "max RSS by /usr/bin/time"));
            }
        }
    }
    let out = cmd.arg("--stats").output()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let peak = text
        .split("peak memory ")
        .nth(1)
        .and_then(parse_size)
        .ok_or("demo: `hurray convert --stats` reported no peak memory on this platform")?;
    Ok((peak, "VmHWM reported by hurray --stats"))
}

/// Parses `12.3 MiB` (as the CLI prints sizes) into bytes.
fn parse_size(s: &str) -> Option<u64> {
    let mut words = s.split_whitespace();
    let v: f64 = words.next()?.parse().ok()?;
    let unit = match words.next()?.trim_end_matches(|c: char| !c.is_alphabetic()) {
        "B" => 1.0,
        "KiB" => 1024.0,
        "MiB" => 1024.0 * 1024.0,
        "GiB" => 1024.0 * 1024.0 * 1024.0,
        _ => return None,
    };
    Some((v * unit) as u64)
}

/// `bytes` in MiB with one decimal.
pub fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / (1024.0 * 1024.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse() {
        assert_eq!(parse_size("3.5 MiB\n"), Some(3_670_016));
        assert_eq!(parse_size("512 KiB, x"), Some(524_288));
        assert_eq!(parse_size("lots"), None);
    }
}
