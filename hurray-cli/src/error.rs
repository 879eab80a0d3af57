//! The CLI's error type: one value per failure, displayed as a single line that names
//! the file, the rule that was broken and, where there is one, the byte offset.

use std::fmt;
use std::path::{Path, PathBuf};

/// What went wrong, without the file it happened in.
#[derive(Debug)]
pub enum Kind {
    /// Input content broke a rule of its format: `rule` names it, `offset` is the
    /// absolute byte offset in the input where it was found (when known).
    Format {
        /// Short name of the rule, e.g. `HeaderLength` or `Offsets`.
        rule: &'static str,
        /// Absolute byte offset in the input.
        offset: Option<u64>,
        /// What was found.
        detail: String,
    },
    /// A Hurray container error (already names its rule and offset).
    Hurray(hurray_io::Error),
    /// The input is valid but cannot be represented in the requested output (a dtype
    /// without an equivalent, a layout safetensors cannot hold, ...).
    Unsupported(String),
    /// Reading or writing failed.
    Io(std::io::Error),
    /// The command was asked for something that does not exist (a tensor name, a
    /// format that cannot be detected, ...).
    Usage(String),
}

/// An error of a `hurray` subcommand, tied to the file it concerns (when there is one).
#[derive(Debug)]
pub struct Error {
    path: Option<PathBuf>,
    context: Option<String>,
    kind: Kind,
}

/// Result type of the CLI.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// A format error at a known byte offset.
    pub fn format(rule: &'static str, offset: u64, detail: impl fmt::Display) -> Error {
        Kind::Format {
            rule,
            offset: Some(offset),
            detail: detail.to_string(),
        }
        .into()
    }

    /// A format error without a precise offset.
    pub fn format_anywhere(rule: &'static str, detail: impl fmt::Display) -> Error {
        Kind::Format {
            rule,
            offset: None,
            detail: detail.to_string(),
        }
        .into()
    }

    /// The input cannot be represented in the requested output.
    pub fn unsupported(detail: impl fmt::Display) -> Error {
        Kind::Unsupported(detail.to_string()).into()
    }

    /// The command asked for something that does not exist.
    pub fn usage(detail: impl fmt::Display) -> Error {
        Kind::Usage(detail.to_string()).into()
    }

    /// Attaches the file this error concerns, unless one is attached already.
    pub fn at_path(mut self, path: &Path) -> Error {
        if self.path.is_none() {
            self.path = Some(path.to_path_buf());
        }
        self
    }

    /// Says what was being done (e.g. `tensor "w"`), unless that is said already.
    pub fn context(mut self, what: impl fmt::Display) -> Error {
        if self.context.is_none() {
            self.context = Some(what.to_string());
        }
        self
    }

    /// What went wrong.
    pub fn kind(&self) -> &Kind {
        &self.kind
    }
}

impl From<Kind> for Error {
    fn from(kind: Kind) -> Error {
        Error {
            path: None,
            context: None,
            kind,
        }
    }
}

impl From<hurray_io::Error> for Error {
    fn from(e: hurray_io::Error) -> Error {
        match e {
            hurray_io::Error::Io(io) => io.into(),
            other => Kind::Hurray(other).into(),
        }
    }
}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Error {
        // Errors raised inside `Read`/`Write` adapters travel as `io::Error`; unwrap them.
        match e.downcast::<Error>() {
            Ok(inner) => inner,
            Err(e) => Kind::Io(e).into(),
        }
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Kind::Format {
                rule,
                offset: Some(o),
                detail,
            } => write!(f, "{rule} at byte {o}: {detail}"),
            Kind::Format {
                rule,
                offset: None,
                detail,
            } => write!(f, "{rule}: {detail}"),
            Kind::Hurray(e) => write!(f, "{e}"),
            Kind::Unsupported(d) => write!(f, "unsupported: {d}"),
            Kind::Io(e) => write!(f, "{e}"),
            Kind::Usage(d) => f.write_str(d),
        }
    }
}

impl fmt::Display for Error {
    /// One line: `PATH: WHAT`, with any line breaks of inner messages flattened.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut text = String::new();
        if let Some(p) = &self.path {
            text += &format!("{}: ", p.display());
        }
        if let Some(c) = &self.context {
            text += &format!("{c}: ");
        }
        text += &self.kind.to_string();
        f.write_str(&text.replace(['\r', '\n'], " "))
    }
}

impl std::error::Error for Error {}

/// Wraps a CLI error so it can travel through an `io::Read` or `io::Write`
/// implementation; [`Error`]'s `From<io::Error>` unwraps it again.
pub fn into_io(e: Error) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidData, e)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_are_one_line_and_name_path_rule_offset() {
        let e = Error::format("HeaderLength", 0, "runs\npast the end").at_path(Path::new("m.st"));
        assert_eq!(
            e.to_string(),
            "m.st: HeaderLength at byte 0: runs past the end"
        );
    }

    #[test]
    fn cli_errors_survive_a_trip_through_io_error() {
        let io = into_io(Error::format("Bool", 17, "byte 2 is not 0 or 1"));
        let back = Error::from(io);
        assert_eq!(back.to_string(), "Bool at byte 17: byte 2 is not 0 or 1");
        let plain = Error::from(std::io::Error::other("disk full"));
        assert_eq!(plain.to_string(), "disk full");
    }
}
