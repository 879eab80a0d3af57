//! Memory-mapped files: the only module of this crate with `unsafe` code.
//!
//! Files are mapped **private** (copy-on-write, `MAP_PRIVATE` with
//! `PROT_READ | PROT_WRITE` on Unix), as ARCHITECTURE.md asks of mapped files: a
//! loaded tensor costs no copy, a language binding may hand out writable views (a
//! write gives this process its own copy of the page and never reaches the file;
//! with a read-only mapping such a write would kill the process with `SIGSEGV`),
//! and the mapping lives exactly as long as the last [`Buffer`](crate::Buffer) that
//! views it (it is the buffers' shared [`BufferOwner`]). This crate itself never
//! writes through the mapping.

use crate::buffer::BufferOwner;
use std::fs::File;
use std::io;
use std::path::Path;

/// A whole file mapped into memory, private (copy-on-write). Cheap to share behind an
/// `Arc`; the bytes stay at one address for the mapping's life.
pub struct MappedFile {
    map: Option<memmap2::MmapMut>,
}

/// The error of opening a directory as a file: the OS's `EISDIR` where the platform
/// has it (so `raw_os_error` reports it), else the `IsADirectory` kind.
pub(crate) fn is_a_directory() -> io::Error {
    #[cfg(unix)]
    {
        // EISDIR is 21 on Linux, the BSDs and macOS.
        io::Error::from_raw_os_error(21)
    }
    #[cfg(not(unix))]
    {
        io::Error::new(io::ErrorKind::IsADirectory, "Is a directory")
    }
}

impl MappedFile {
    /// Maps the whole file at `path`.
    ///
    /// The caller must make sure no one truncates or rewrites the file while it is
    /// mapped (see the safety note below): a truncated file makes reads of the lost
    /// pages fault (`SIGBUS`), and writes by others may show through pages this
    /// process has not copied.
    ///
    /// Errors: the I/O error of opening, measuring or mapping the file; a directory
    /// gives `EISDIR` (kind `IsADirectory`, "Is a directory").
    pub fn open(path: &Path) -> io::Result<MappedFile> {
        let file = File::open(path)?;
        Self::from_file(&file)
    }

    /// Maps the whole of an open file (which may be closed afterwards; the mapping
    /// stays valid).
    ///
    /// Errors: the I/O error of measuring or mapping the file; a directory gives
    /// `EISDIR` (kind `IsADirectory`).
    pub fn from_file(file: &File) -> io::Result<MappedFile> {
        let meta = file.metadata()?;
        if meta.is_dir() {
            // Mapping a directory fails with ENODEV ("No such device"); say what it is.
            return Err(is_a_directory());
        }
        if meta.len() == 0 {
            // Nothing to map (and some platforms refuse empty mappings).
            return Ok(MappedFile { map: None });
        }
        // SAFETY: `map_copy` creates a private (copy-on-write) mapping of the file.
        // Rust's aliasing rules require the mapped bytes not to change while a
        // `&[u8]` to them exists; this crate never writes through the mapping (only
        // foreign code holding a buffer's address may, as with any buffer it is
        // handed, and such a write stays in this process). A private mapping
        // protects the file against writes through this process, but not against
        // another process truncating or modifying the file. That cannot be enforced
        // here; it is the documented contract of `FileReader::open` and
        // `MappedFile::open` that the file stays unchanged while mapped, the same
        // contract every memory-mapping reader of files has. Every byte read from the
        // mapping is treated as untrusted input and bounds-checked before use, so odd
        // contents cannot cause out-of-bounds access.
        let map = unsafe { memmap2::MmapOptions::new().map_copy(file)? };
        Ok(MappedFile { map: Some(map) })
    }

    /// Length of the mapping in bytes (the file size when it was mapped).
    pub fn len(&self) -> usize {
        self.bytes().len()
    }

    /// True for an empty file.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl BufferOwner for MappedFile {
    fn bytes(&self) -> &[u8] {
        match &self.map {
            Some(m) => m,
            None => &[],
        }
    }
}

impl std::fmt::Debug for MappedFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MappedFile")
            .field("len", &self.len())
            .finish()
    }
}
