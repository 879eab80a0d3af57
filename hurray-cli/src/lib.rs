//! # hurray-cli
//!
//! The `hurray` command: `inspect`, `validate`, `convert`, `dump` and `compare`
//! over Hurray files (HRRYFILE), Hurray streams, safetensors and NumPy files, and
//! `serve`, `get` and `put` over the network transport (`hurray-net`). The
//! binary (`src/main.rs`) only calls [`main`]; each subcommand lives in its own
//! module, and the format logic lives in `hurray-core` and `hurray-io`.
//!
//! Every failure is one line on standard error (`hurray: error: FILE: RULE at byte
//! N: ...`) and exit status 1; a failed `convert` leaves no output file.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod carry;
pub mod cli;
pub mod compare;
pub mod container;
pub mod convert;
pub mod data_rules;
pub mod detect;
pub mod dtype;
pub mod dump;
pub mod error;
pub mod inspect;
pub mod net;
pub mod npy;
pub mod output;
pub mod progress;
pub mod st;
pub mod stats;
pub mod validate;
pub mod values;

use clap::Parser;
use cli::{Cli, Command};
use error::Result;
use std::io::Write;
use std::process::ExitCode;
use std::time::Instant;

/// Runs one parsed command; returns whether it succeeded (for `validate` and
/// `compare`, whether every file passed).
pub fn run(cli: Cli, out: &mut dyn Write) -> Result<bool> {
    match cli.command {
        Command::Inspect(a) => {
            let c = container::Container::open(&a.file)?;
            let size = std::fs::metadata(&a.file)
                .map_err(|e| error::Error::from(e).at_path(&a.file))?
                .len();
            let r = inspect::report(&c, size);
            // Rows are written as they are made: nothing the size of the file's
            // metadata is held, whatever it holds.
            let mut w = std::io::BufWriter::with_capacity(1 << 16, &mut *out);
            if a.json {
                serde_json::to_writer_pretty(&mut w, &r).map_err(|e| {
                    if e.is_io() {
                        error::Error::from(std::io::Error::from(e))
                    } else {
                        error::Error::usage(format_args!("JSON: {e}"))
                    }
                })?;
                writeln!(w)?;
            } else {
                let name = a.file.display().to_string();
                inspect::table::render(&r, &name, &mut w)?;
            }
            w.flush()?;
            Ok(true)
        }
        Command::Validate(a) => {
            let mut all_ok = true;
            for f in &a.files {
                match validate::validate(f) {
                    Ok(summary) => writeln!(out, "{}: ok: {summary}", f.display())?,
                    Err(e) => {
                        all_ok = false;
                        writeln!(out, "{}", with_invalid(&e.to_string(), f))?;
                    }
                }
            }
            Ok(all_ok)
        }
        Command::Convert(a) => {
            let start = Instant::now();
            let opts = convert::ConvertOptions {
                to: a.to,
                durable: !a.no_sync,
                data_crc32c: a.data_crc32c,
            };
            let s = convert::convert(&a.input, &a.output, opts)?;
            let mut line = format!(
                "{} -> {}: {} -> {}, {} tensors, {} bytes written",
                a.input.display(),
                a.output.display(),
                s.from,
                s.to,
                s.tensors,
                s.bytes
            );
            if a.stats {
                line += &format!(" in {:.3} s", start.elapsed().as_secs_f64());
                if let Some(p) = stats::peak_rss() {
                    line += &format!(", peak memory {}", inspect::table::human(p));
                }
            }
            writeln!(out, "{line}")?;
            for n in s.notes {
                eprintln!("hurray: note: {n}");
            }
            Ok(true)
        }
        Command::Dump(a) => {
            let t = dump::find(&a.file, &a.name)?;
            write!(out, "{}", dump::render(&a.name, &t, a.limit)?)?;
            Ok(true)
        }
        Command::Compare(a) => {
            let c = compare::compare(&a.files)?;
            write!(out, "{}", c.report)?;
            Ok(c.same)
        }
        Command::Serve(a) => net::serve(&a, out).map(|()| true),
        Command::Get(a) => net::get(&a, out).map(|()| true),
        Command::Put(a) => net::put(&a, out).map(|()| true),
    }
}

/// `PATH: invalid: ...` from an error line that starts with `PATH: `.
fn with_invalid(line: &str, path: &std::path::Path) -> String {
    let p = format!("{}: ", path.display());
    match line.strip_prefix(&p) {
        Some(rest) => format!("{p}invalid: {rest}"),
        None => format!("{p}invalid: {line}"),
    }
}

/// The `hurray` program: parses the command line, runs it, prints any error as one
/// line on standard error. Exit status 0 on success, 1 on any failure, 2 for a
/// command line clap refuses.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    match run(cli, &mut out) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            // A closed pipe (`hurray dump ... | head`) is not an error worth a message.
            if let error::Kind::Io(io) = e.kind() {
                if io.kind() == std::io::ErrorKind::BrokenPipe {
                    return ExitCode::FAILURE;
                }
            }
            let _ = out.flush();
            eprintln!("hurray: error: {e}");
            ExitCode::FAILURE
        }
    }
}
