//! An output file that appears only when it is complete: bytes go to a temporary
//! file beside the destination, committed over it by [`Output::finish`] through
//! `hurray-io`'s one commit routine ([`PendingFile`]: `fsync` of the file, rename,
//! `fsync` of the directory; without the syncs when not durable). Any error, or
//! dropping the output unfinished, deletes the temporary file, so a failed command
//! never leaves a partial output behind, and a killed one leaves the destination as
//! it was.
//!
//! Tensor data is copied from its source in bounded chunks (or, for byte ranges of a
//! file copied verbatim, by the kernel without passing through this process), so
//! memory use does not grow with the size of the model.
//!
//! While [`Output::start_crc`] is on, the CRC-32C of the data bytes written is kept
//! (for `convert --data-crc32c`): chunks are summed as they are written, and a kernel
//! copy stays a kernel copy, its source bytes read back once (from the page cache) to
//! be summed.

use crate::carry::{self, CHUNK};
use crate::dtype::Carry;
use crate::error::{Error, Result};
use crate::progress::Progress;
use hurray_io::file::PendingFile;
use std::fs::File;
use std::io::{self, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::Path;

/// Verbatim file-to-file copies go in pieces of this size, so the progress bar moves.
const KERNEL_COPY_PIECE: u64 = 16 << 20;

/// Where a tensor's source bytes are.
pub enum Data<'a> {
    /// `len` bytes of `file` starting at absolute offset `start`.
    Range {
        /// The input file.
        file: &'a File,
        /// Absolute offset of the first byte.
        start: u64,
        /// Number of bytes.
        len: u64,
    },
    /// The next `len` bytes of a reader (a decompressing zip member, ...); `at` is the
    /// source offset of its first byte, for error messages.
    Reader {
        /// The reader.
        reader: &'a mut dyn Read,
        /// Number of bytes.
        len: u64,
        /// Source offset of the first byte.
        at: u64,
    },
    /// Bytes already in memory.
    Memory(&'a [u8]),
}

impl Data<'_> {
    /// Number of source bytes.
    pub fn len(&self) -> u64 {
        match self {
            Data::Range { len, .. } | Data::Reader { len, .. } => *len,
            Data::Memory(b) => b.len() as u64,
        }
    }

    /// True when there are no source bytes.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A file being written; see the [module docs](self).
pub struct Output {
    file: BufWriter<File>,
    pending: PendingFile,
    durable: bool,
    written: u64,
    progress: Progress,
    chunks: Chunks,
    /// CRC-32C of the data bytes written since [`start_crc`](Output::start_crc).
    crc: Option<u32>,
}

impl Output {
    /// Starts the file that will appear at `dest`; when `durable`, [`finish`]
    /// syncs it and its directory (see [`PendingFile::commit`]). `progress` counts
    /// tensor data bytes.
    ///
    /// Errors: the temporary file cannot be created (missing directory, no permission).
    ///
    /// [`finish`]: Output::finish
    pub fn create(dest: &Path, durable: bool, progress: Progress) -> Result<Output> {
        let dir = match dest.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        if dest.file_name().is_none() {
            return Err(Error::usage(format_args!(
                "{} does not name a file",
                dest.display()
            )));
        }
        let (pending, file) = PendingFile::create(dest).map_err(|e| {
            Error::from(e)
                .context(format_args!("cannot create a file in {}", dir.display()))
                .at_path(dest)
        })?;
        Ok(Output {
            file: BufWriter::with_capacity(256 << 10, file),
            pending,
            durable,
            written: 0,
            progress,
            chunks: Chunks::default(),
            crc: None,
        })
    }

    /// Starts summing the CRC-32C of the tensor data written from now on by
    /// [`write_data`](Output::write_data) (not of [`write_bytes`](Output::write_bytes)
    /// or padding).
    pub fn start_crc(&mut self) {
        self.crc = Some(0);
    }

    /// Stops summing and returns the CRC-32C of the data written since
    /// [`start_crc`](Output::start_crc) (`None` when it was not started).
    pub fn take_crc(&mut self) -> Option<u32> {
        self.crc.take()
    }

    /// Bytes written so far.
    pub fn written(&self) -> u64 {
        self.written
    }

    /// Appends `bytes`.
    pub fn write_bytes(&mut self, bytes: &[u8]) -> Result<()> {
        self.file.write_all(bytes)?;
        self.written += bytes.len() as u64;
        Ok(())
    }

    /// Appends `n` zero bytes.
    pub fn write_zeros(&mut self, mut n: u64) -> Result<()> {
        const ZEROS: [u8; 4096] = [0; 4096];
        while n > 0 {
            let k = n.min(ZEROS.len() as u64) as usize;
            self.write_bytes(&ZEROS[..k])?;
            n -= k as u64;
        }
        Ok(())
    }

    /// Appends a tensor's data: `data` transformed by `carry`, which must come to
    /// exactly `out_len` bytes (`elements` is the tensor's element count, used by the
    /// bool transforms). `what` names the tensor in errors.
    ///
    /// Errors: `Truncated` when the source ends early; the [`carry::apply`] errors;
    /// I/O errors.
    pub fn write_data(
        &mut self,
        data: Data<'_>,
        carry: Carry,
        out_len: u64,
        elements: u64,
        what: &str,
    ) -> Result<()> {
        let before = self.written;
        match data {
            Data::Range { file, start, len } if carry == Carry::Verbatim => {
                self.kernel_copy(file, start, len, what)?
            }
            Data::Range { file, start, len } => {
                let mut f = file;
                f.seek(SeekFrom::Start(start))?;
                self.pump(&mut f, len, start, carry, elements, what)?
            }
            Data::Reader { reader, len, at } => {
                self.pump(reader, len, at, carry, elements, what)?
            }
            Data::Memory(bytes) => {
                let len = bytes.len() as u64;
                let mut r = bytes;
                self.pump(&mut r, len, 0, carry, elements, what)?
            }
        }
        let produced = self.written - before;
        if produced != out_len {
            return Err(Error::format_anywhere(
                "TensorSize",
                format_args!("{what}: produced {produced} data bytes, expected {out_len}"),
            ));
        }
        Ok(())
    }

    /// Copies `len` bytes of `src` from `start` verbatim. On Linux `std::io::copy`
    /// between two files uses `copy_file_range`, so the bytes never enter this
    /// process; elsewhere it falls back to a small buffer. While a CRC is being
    /// summed, each piece copied is then read back from `src` (its pages are in the
    /// page cache by now) and summed, so the copy itself stays in the kernel.
    fn kernel_copy(&mut self, src: &File, start: u64, len: u64, what: &str) -> Result<()> {
        self.file.flush()?;
        let mut reader = src;
        reader.seek(SeekFrom::Start(start))?;
        let mut done = 0;
        while done < len {
            let piece = (len - done).min(KERNEL_COPY_PIECE);
            let n = io::copy(&mut reader.take(piece), self.file.get_mut())?;
            if n < piece {
                return Err(truncated(what, start + done + n, len, done + n));
            }
            if let Some(crc) = self.crc {
                reader.seek(SeekFrom::Start(start + done))?;
                self.crc = Some(
                    self.chunks
                        .crc_of(&mut reader, crc, n, start + done, what)?,
                );
            }
            self.written += n;
            self.progress.inc(n);
            done += n;
        }
        Ok(())
    }

    /// Reads `len` source bytes in chunks, transforms each, and appends the result.
    fn pump(
        &mut self,
        src: &mut dyn Read,
        len: u64,
        at: u64,
        carry: Carry,
        elements: u64,
        what: &str,
    ) -> Result<()> {
        let job = Job {
            len,
            at,
            carry,
            elements,
            what,
        };
        let (file, written, crc) = (&mut self.file, &mut self.written, &mut self.crc);
        self.chunks.each(src, &job, &self.progress, &mut |out| {
            file.write_all(out)?;
            *written += out.len() as u64;
            if let Some(c) = crc {
                *c = crc32c::crc32c_append(*c, out);
            }
            Ok(())
        })
    }

    /// Flushes and commits the temporary file over the destination. Returns the
    /// number of bytes written.
    ///
    /// Errors: those of [`PendingFile::commit`], named with the destination.
    pub fn finish(mut self) -> Result<u64> {
        self.file.flush()?;
        self.progress.finish();
        let Output {
            file,
            pending,
            durable,
            written,
            ..
        } = self;
        let file = file.into_inner().map_err(|e| e.into_error())?;
        let dest = pending.dest().to_path_buf();
        pending
            .commit(file, durable)
            .map_err(|e| Error::from(e).at_path(&dest))?;
        Ok(written)
    }
}

/// One tensor's source bytes to read: how many, from which source offset, and how
/// they are transformed.
pub struct Job<'a> {
    /// Source bytes.
    pub len: u64,
    /// Source offset of the first byte (for error messages).
    pub at: u64,
    /// The transform.
    pub carry: Carry,
    /// The tensor's element count (for the bool transforms).
    pub elements: u64,
    /// What is being copied, e.g. `tensor "w"` (for error messages).
    pub what: &'a str,
}

/// Reusable buffers for reading a source in chunks and transforming each.
#[derive(Default)]
pub struct Chunks {
    scratch: Vec<u8>,
    carried: Vec<u8>,
}

impl Chunks {
    /// Reads `job.len` bytes of `src` in chunks of at most [`CHUNK`], transforms
    /// each by `job.carry` and hands the result to `out`, counting source bytes on
    /// `progress`.
    ///
    /// Errors: `Truncated` when `src` ends early, the [`carry::apply`] errors, and
    /// those of `out`.
    pub fn each(
        &mut self,
        src: &mut dyn Read,
        job: &Job<'_>,
        progress: &Progress,
        out: &mut dyn FnMut(&[u8]) -> Result<()>,
    ) -> Result<()> {
        let Job {
            len,
            at,
            carry,
            elements,
            what,
        } = *job;
        let mut done = 0u64;
        let mut elements_left = elements;
        while done < len {
            let want = (len - done).min(CHUNK as u64) as usize;
            self.scratch.resize(want, 0);
            let got = read_full(src, &mut self.scratch)?;
            if got < want {
                return Err(truncated(
                    what,
                    at + done + got as u64,
                    len,
                    done + got as u64,
                ));
            }
            carry::apply(
                carry,
                &self.scratch,
                at + done,
                elements_left,
                &mut self.carried,
            )?;
            if carry == Carry::UnpackBool {
                elements_left -= self.carried.len() as u64;
            }
            out(&self.carried)?;
            progress.inc(want as u64);
            done += want as u64;
        }
        Ok(())
    }
}

impl Chunks {
    /// Extends `crc` (a CRC-32C) over the next `len` bytes of `src`, read in chunks
    /// of at most [`CHUNK`]; `at` is their source offset (for errors).
    ///
    /// Errors: `Truncated` when `src` ends early; I/O errors.
    pub fn crc_of(
        &mut self,
        src: &mut dyn Read,
        mut crc: u32,
        len: u64,
        at: u64,
        what: &str,
    ) -> Result<u32> {
        let mut done = 0u64;
        while done < len {
            let want = (len - done).min(CHUNK as u64) as usize;
            self.scratch.resize(want, 0);
            let got = read_full(src, &mut self.scratch)?;
            if got < want {
                return Err(truncated(
                    what,
                    at + done + got as u64,
                    len,
                    done + got as u64,
                ));
            }
            crc = crc32c::crc32c_append(crc, &self.scratch);
            done += want as u64;
        }
        Ok(crc)
    }
}

/// Reads until `buf` is full or the reader ends; returns the bytes read.
fn read_full(r: &mut dyn Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

fn truncated(what: &str, at: u64, len: u64, got: u64) -> Error {
    Error::format(
        "Truncated",
        at,
        format_args!("{what}: the input ends after {got} of its {len} data bytes"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_appears_until_finish_and_nothing_on_drop() {
        let dir = tempfile::tempdir().unwrap();
        let dest = dir.path().join("out.bin");
        let mut o = Output::create(&dest, true, Progress::hidden()).unwrap();
        o.write_bytes(b"abc").unwrap();
        assert!(!dest.exists());
        drop(o);
        assert!(!dest.exists());
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);

        let mut o = Output::create(&dest, true, Progress::hidden()).unwrap();
        o.write_bytes(b"abc").unwrap();
        o.write_zeros(2).unwrap();
        assert_eq!(o.finish().unwrap(), 5);
        assert_eq!(std::fs::read(&dest).unwrap(), b"abc\0\0");
    }

    #[test]
    fn ranges_copy_verbatim_or_transformed_and_short_sources_fail() {
        let dir = tempfile::tempdir().unwrap();
        let src_path = dir.path().join("src");
        std::fs::write(&src_path, [9, 9, 1, 0, 1, 1, 0, 9]).unwrap();
        let src = File::open(&src_path).unwrap();
        let dest = dir.path().join("out");
        let mut o = Output::create(&dest, true, Progress::hidden()).unwrap();
        let range = |start, len| Data::Range {
            file: &src,
            start,
            len,
        };
        o.write_data(range(2, 5), Carry::Verbatim, 5, 5, "t")
            .unwrap();
        o.write_data(range(2, 5), Carry::PackBool, 1, 5, "t")
            .unwrap();
        let e = o
            .write_data(range(6, 5), Carry::Verbatim, 5, 5, "t")
            .unwrap_err();
        assert!(e.to_string().starts_with("Truncated at byte 8"), "{e}");
        drop(o);
        assert!(!dest.exists());
    }
}
