//! Blocking file writers over the [`FileEncoder`] core: [`FileWriter`] writes to a
//! path atomically and, by default, durably (a temporary file beside the
//! destination, committed by [`commit`](super::commit) on `finish`),
//! [`FileWriterTo`] writes to any `std::io::Write`.

use super::commit::PendingFile;
use super::encoder::{collect, member_names, FileEncoder, Piece, WriteOptions};
use super::kv::KvValue;
use crate::error::{Error, Result};
use crate::tensor::{Composite, Tensor};
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

const ZEROS: [u8; 8192] = [0; 8192];

/// Writes `pieces` to `sink`; buffers come from `tensors` (pre-order).
pub(crate) fn emit<W: Write>(
    sink: &mut W,
    pieces: &[Piece],
    tensors: &[&Tensor],
) -> io::Result<()> {
    for p in pieces {
        match p {
            Piece::Bytes(b) => sink.write_all(b)?,
            Piece::Zeros(n) => {
                let mut n = *n;
                while n > 0 {
                    let k = n.min(ZEROS.len() as u64) as usize;
                    sink.write_all(&ZEROS[..k])?;
                    n -= k as u64;
                }
            }
            Piece::Buffer { tensor, buffer } => {
                sink.write_all(tensors[*tensor].buffers()[*buffer].as_slice())?
            }
        }
    }
    Ok(())
}

pub(crate) fn poisoned() -> Error {
    Error::Io(io::Error::other(
        "an earlier write to this file failed or was cancelled part-way; the file is \
         abandoned",
    ))
}

/// A file writer over any `std::io::Write` (in memory, a socket, a file you manage).
/// Bytes go out in one pass, never seeking back (§13). There is no rename or cleanup:
/// if you abandon it, whatever was written stays written.
///
/// After an I/O error (or a panic) part-way through a tensor the writer refuses
/// further calls: the sink holds part of it, and the core has already counted all of
/// it. Errors about the content (a duplicate name, an invalid composite) write
/// nothing and leave it usable.
pub struct FileWriterTo<W: Write> {
    enc: FileEncoder,
    sink: W,
    failed: bool,
    /// Per-tensor data CRC-32C values in file order, when recording them.
    data_crcs: Option<Vec<u64>>,
    /// Reserves disk space for `len` bytes at file offset `offset` before they are
    /// written (the path writer's; see [`preallocate`]).
    prealloc: Option<fn(&W, u64, u64)>,
}

impl<W: Write> FileWriterTo<W> {
    /// Starts a file written to `sink`. Nothing is written until the first tensor
    /// (or `finish`).
    ///
    /// Errors: `DataAlignment` for an illegal alignment option.
    pub fn new(sink: W, opts: WriteOptions) -> Result<Self> {
        Ok(FileWriterTo {
            enc: FileEncoder::new(opts)?,
            sink,
            failed: false,
            data_crcs: None,
            prealloc: None,
        })
    }

    /// Records a CRC-32C of every tensor's data in the reserved KV entry
    /// `hurray.data_crc32c` at [`finish`](Self::finish) (see
    /// [`data_crc`](super::data_crc)), so `hurray validate` and
    /// [`data_crc::verify`](super::data_crc::verify) can name a tensor whose bytes
    /// changed. Call before writing the first tensor; off by default.
    pub fn with_data_crc32c(mut self) -> Self {
        self.data_crcs = Some(Vec::new());
        self
    }

    fn record_crcs(&mut self, tensors: &[&Tensor]) {
        if let Some(crcs) = &mut self.data_crcs {
            crcs.extend(tensors.iter().map(|t| {
                u64::from(super::data_crc::tensor_crc32c(
                    t.buffers().iter().map(|b| b.as_slice()),
                ))
            }));
        }
    }

    /// Bytes written so far (as planned by the core).
    pub fn offset(&self) -> u64 {
        self.enc.offset()
    }

    /// Writes planned pieces. The writer is marked failed before the first byte and
    /// cleared only once every piece is out, so whatever interrupts the writing
    /// leaves it poisoned.
    /// `start` is the file offset of the first piece.
    fn run(&mut self, pieces: Result<Vec<Piece>>, tensors: &[&Tensor], start: u64) -> Result<()> {
        let pieces = pieces?;
        if let Some(prealloc) = self.prealloc {
            let len: u64 = pieces
                .iter()
                .map(|p| match p {
                    Piece::Bytes(b) => b.len() as u64,
                    Piece::Zeros(n) => *n,
                    Piece::Buffer { tensor, buffer } => {
                        tensors[*tensor].buffers()[*buffer].len() as u64
                    }
                })
                .sum();
            prealloc(&self.sink, start, len);
        }
        self.failed = true;
        emit(&mut self.sink, &pieces, tensors)?;
        self.failed = false;
        Ok(())
    }

    /// Writes `tensor` under `name` (its descriptor, padding, then its buffers).
    ///
    /// Errors: [`Error::Content`] when the tensor's buffer contents break a content
    /// rule (checked unless already known good; nothing is written); see
    /// [`FileEncoder::tensor`]; [`Error::Io`] when the sink fails (or failed before).
    pub fn write_tensor(&mut self, name: &str, tensor: &Tensor) -> Result<()> {
        if self.failed {
            return Err(poisoned());
        }
        tensor.validate_content()?;
        let start = self.enc.offset();
        let pieces = self.enc.tensor(name, tensor.descriptor());
        self.run(pieces, &[tensor], start)?;
        self.record_crcs(&[tensor]);
        Ok(())
    }

    /// Writes a composite whose head is named `name` and whose members get the
    /// default names of [`member_names`] (`name/0`,
    /// `name/1`, nested `name/1/0`, …). The whole composite is validated before any
    /// byte of it is written.
    ///
    /// Errors: see [`FileEncoder::composite`].
    pub fn write_composite(&mut self, name: &str, c: &Composite) -> Result<()> {
        let names = member_names(name, c);
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        self.write_composite_named(&names, c)
    }

    /// Writes a composite with explicit names for all its tensors, in pre-order.
    ///
    /// Errors: [`Error::Content`] when a member's buffer contents break a content
    /// rule (nothing is written); see [`FileEncoder::composite`].
    pub fn write_composite_named(&mut self, names: &[&str], c: &Composite) -> Result<()> {
        if self.failed {
            return Err(poisoned());
        }
        let mut tensors = Vec::new();
        collect(c, &mut tensors);
        tensors.iter().try_for_each(|t| t.validate_content())?;
        let start = self.enc.offset();
        let pieces = self.enc.composite(names, c);
        self.run(pieces, &tensors, start)?;
        self.record_crcs(&tensors);
        Ok(())
    }

    /// Adds a KV entry (written after the tensors, in the order added).
    ///
    /// Errors: see [`FileEncoder::add_kv`].
    pub fn add_kv(&mut self, key: impl Into<String>, value: KvValue) -> Result<()> {
        if self.failed {
            return Err(poisoned());
        }
        self.enc.add_kv(key, value)
    }

    /// Writes KV, index and trailer, flushes, and returns the sink.
    ///
    /// Errors: see [`FileEncoder::finish`]; [`Error::Io`].
    pub fn finish(mut self) -> Result<W> {
        if self.failed {
            return Err(poisoned());
        }
        if let Some(crcs) = self.data_crcs.take() {
            self.enc.add_data_crc32c(crcs)?;
        }
        let start = self.enc.offset();
        let pieces = self.enc.finish();
        self.run(pieces, &[], start)?;
        self.sink.flush()?;
        Ok(self.sink)
    }
}

/// Reserves the blocks of `len` bytes at `offset` of the file under `sink` before
/// they are written (`fallocate` with `FALLOC_FL_KEEP_SIZE`: the size is left to
/// the writes). On ext4, a file written without reserved blocks and then renamed
/// over an existing file has all its dirty pages flushed by the rename
/// (`auto_da_alloc`), which made a non-durable `save` over an existing 256 MiB
/// file about three times slower than writing it; with the blocks reserved the
/// rename is a rename. Used only on ext4 (see [`wants_prealloc`]): elsewhere it
/// buys nothing, and on tmpfs `fallocate` would zero pages the writes then fill.
/// Best effort: an error just skips it. Linux only (elsewhere a no-op).
fn preallocate(sink: &BufWriter<File>, offset: u64, len: u64) {
    #[cfg(target_os = "linux")]
    if len > 0 {
        let _ = rustix::fs::fallocate(
            sink.get_ref(),
            rustix::fs::FallocateFlags::KEEP_SIZE,
            offset,
            len,
        );
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (sink, offset, len);
}

/// True when `file` lives on ext4 (`EXT4_SUPER_MAGIC`, shared by ext2/3/4), where
/// [`preallocate`] pays off.
fn wants_prealloc(file: &File) -> bool {
    #[cfg(target_os = "linux")]
    {
        const EXT4_SUPER_MAGIC: u64 = 0xEF53;
        rustix::fs::fstatfs(file).is_ok_and(|s| s.f_type as u64 == EXT4_SUPER_MAGIC)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = file;
        false
    }
}

/// Writes a file at a path, atomically: bytes go to a temporary file in the same
/// directory, which [`finish`](Self::finish) renames over the destination. Dropping
/// the writer without finishing, or any failure, removes the temporary file and
/// leaves the destination untouched (no file, or the previous one). A process
/// killed while writing leaves the destination untouched too, and its temporary
/// file behind (see [`commit`](super::commit) for its name).
///
/// With [`WriteOptions::durable`] (the default) `finish` also `fsync`s the file
/// before the rename and the directory after it, so the new file survives a power
/// loss; turn it off for scratch files.
///
/// ```
/// use hurray_io::file::{FileReader, FileWriter, KvValue, WriteOptions};
/// use hurray_io::Tensor;
/// use hurray_core::ElementType;
/// let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("model.hrry");
/// let mut w = FileWriter::create(&path, WriteOptions::default()).unwrap();
/// w.write_tensor("w", &Tensor::from_dense(ElementType::Float32, &[2], &[0; 8]).unwrap()).unwrap();
/// w.add_kv("producer", KvValue::String("me".into())).unwrap();
/// w.finish().unwrap();
/// let r = FileReader::open(&path).unwrap();
/// assert_eq!(r.kv_get("producer").unwrap().as_str(), Some("me"));
/// ```
pub struct FileWriter {
    inner: FileWriterTo<BufWriter<File>>,
    pending: PendingFile,
}

impl FileWriter {
    /// Starts writing the file that will appear at `path` when finished.
    ///
    /// Errors: `DataAlignment` for an illegal alignment option; [`Error::Io`] when
    /// the temporary file cannot be created (for example, the directory is missing).
    pub fn create(path: impl AsRef<Path>, opts: WriteOptions) -> Result<FileWriter> {
        let enc = FileEncoder::new(opts)?;
        let (pending, file) = PendingFile::create(path)?;
        // A durable file is synced before its rename, so no dirty page is left to
        // flush there: preallocating would only add extent conversions.
        let prealloc =
            (!opts.durable && wants_prealloc(&file)).then_some(preallocate as fn(&_, u64, u64));
        Ok(FileWriter {
            inner: FileWriterTo {
                enc,
                sink: BufWriter::with_capacity(1 << 20, file),
                failed: false,
                data_crcs: None,
                prealloc,
            },
            pending,
        })
    }

    /// See [`FileWriterTo::with_data_crc32c`].
    pub fn with_data_crc32c(mut self) -> Self {
        self.inner = self.inner.with_data_crc32c();
        self
    }

    /// The path the file will have once finished.
    pub fn path(&self) -> &Path {
        self.pending.dest()
    }

    /// Bytes written so far.
    pub fn offset(&self) -> u64 {
        self.inner.offset()
    }

    /// See [`FileWriterTo::write_tensor`].
    pub fn write_tensor(&mut self, name: &str, tensor: &Tensor) -> Result<()> {
        self.inner.write_tensor(name, tensor)
    }

    /// See [`FileWriterTo::write_composite`].
    pub fn write_composite(&mut self, name: &str, c: &Composite) -> Result<()> {
        self.inner.write_composite(name, c)
    }

    /// See [`FileWriterTo::write_composite_named`].
    pub fn write_composite_named(&mut self, names: &[&str], c: &Composite) -> Result<()> {
        self.inner.write_composite_named(names, c)
    }

    /// See [`FileWriterTo::add_kv`].
    pub fn add_kv(&mut self, key: impl Into<String>, value: KvValue) -> Result<()> {
        self.inner.add_kv(key, value)
    }

    /// Writes KV, index and trailer, flushes, and commits the temporary file to the
    /// destination, replacing any file there: with `durable` (the default), the file
    /// is `fsync`ed before the rename and its directory after it (see
    /// [`commit`](super::commit)).
    ///
    /// Errors: see [`FileEncoder::finish`]; [`Error::Io`]. On error the temporary
    /// file is removed and the destination is left as it was, with one exception:
    /// when `durable` and syncing the directory after the rename fails, the new file
    /// is already in place, and the error says so.
    pub fn finish(self) -> Result<()> {
        let durable = self.inner.enc.options().durable;
        let sink = self.inner.finish()?;
        let file = sink.into_inner().map_err(|e| e.into_error())?;
        Ok(self.pending.commit(file, durable)?)
    }
}
