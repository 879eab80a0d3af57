//! Which format a file is in: from its first bytes when they say (`HRRYFILE`, `HRRY`,
//! the NumPy and zip magics), else from its extension.

use crate::error::{Error, Result};
use std::fmt;
use std::fs::File;
use std::io::Read;
use std::path::Path;

/// A file format the CLI reads or writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// The HRRYFILE container (`.hrry`).
    #[value(name = "hrry")]
    HrryFile,
    /// The bare Hurray stream (`.hrrys`).
    #[value(name = "stream")]
    Stream,
    /// safetensors (`.safetensors`).
    Safetensors,
    /// A NumPy array (`.npy`); input only.
    #[value(skip)]
    Npy,
    /// A NumPy archive of arrays (`.npz`); input only.
    #[value(skip)]
    Npz,
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Format::HrryFile => "HRRYFILE",
            Format::Stream => "Hurray stream",
            Format::Safetensors => "safetensors",
            Format::Npy => "npy",
            Format::Npz => "npz",
        })
    }
}

/// The format named by a path's extension, if any.
pub fn from_extension(path: &Path) -> Option<Format> {
    let ext = path.extension()?.to_str()?.to_ascii_lowercase();
    Some(match ext.as_str() {
        "hrry" => Format::HrryFile,
        "hrrys" => Format::Stream,
        "safetensors" => Format::Safetensors,
        "npy" => Format::Npy,
        "npz" => Format::Npz,
        _ => return None,
    })
}

/// The format of the file at `path`, from its first bytes, else its extension.
///
/// Errors: the file cannot be read, or nothing identifies its format.
pub fn detect(path: &Path) -> Result<Format> {
    let mut head = Vec::with_capacity(9);
    File::open(path)
        .and_then(|f| f.take(9).read_to_end(&mut head))
        .map_err(|e| Error::from(e).at_path(path))?;
    if let Some(f) = from_magic(&head) {
        return Ok(f);
    }
    if let Some(f) = from_extension(path) {
        return Ok(f);
    }
    // A safetensors file has no magic, but its JSON header opens at byte 8.
    if head.len() == 9 && head[8] == b'{' {
        return Ok(Format::Safetensors);
    }
    Err(Error::usage(
        "cannot tell the format (not HRRYFILE, a Hurray stream, safetensors, .npy or .npz); \
         name it by its extension",
    )
    .at_path(path))
}

/// The format the first bytes of a file announce, if they announce one.
pub fn from_magic(head: &[u8]) -> Option<Format> {
    if head.starts_with(b"HRRYFILE") {
        Some(Format::HrryFile)
    } else if head.starts_with(b"HRRY") {
        Some(Format::Stream)
    } else if head.starts_with(crate::npy::MAGIC) {
        Some(Format::Npy)
    } else if head.starts_with(b"PK\x03\x04") || head.starts_with(b"PK\x05\x06") {
        Some(Format::Npz)
    } else {
        None
    }
}

/// The format to write `path` in: `explicit` when given, else from the extension.
///
/// Errors: no format given and the extension names none, or a format that can only
/// be read.
pub fn output_format(path: &Path, explicit: Option<Format>) -> Result<Format> {
    let f = explicit.or_else(|| from_extension(path)).ok_or_else(|| {
        Error::usage(
            "cannot tell the output format from the name; use .hrry, .hrrys or .safetensors, \
             or --to hrry|stream|safetensors",
        )
        .at_path(path)
    })?;
    if matches!(f, Format::Npy | Format::Npz) {
        return Err(Error::unsupported(format_args!("writing {f} files")).at_path(path));
    }
    Ok(f)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn magic_wins_over_extension() {
        assert_eq!(from_magic(b"HRRYFILE\x01"), Some(Format::HrryFile));
        assert_eq!(from_magic(b"HRRY\x01\x00"), Some(Format::Stream));
        assert_eq!(from_magic(b"\x93NUMPY\x01\x00"), Some(Format::Npy));
        assert_eq!(from_magic(b"PK\x03\x04"), Some(Format::Npz));
        assert_eq!(from_magic(b"\x10\x00\x00\x00\x00\x00\x00\x00{"), None);
        assert_eq!(
            from_extension(Path::new("a/b.SafeTensors")),
            Some(Format::Safetensors)
        );
        assert_eq!(
            output_format(Path::new("x.hrrys"), None).unwrap(),
            Format::Stream
        );
        assert!(output_format(Path::new("x.bin"), None).is_err());
        assert!(output_format(Path::new("x.npy"), None).is_err());
        assert_eq!(
            output_format(Path::new("x.bin"), Some(Format::HrryFile)).unwrap(),
            Format::HrryFile
        );
    }
}
