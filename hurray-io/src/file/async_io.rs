//! Async front end (feature `tokio`): thin layers over the same sans-io cores.
//! [`AsyncFileWriter`] writes a path atomically, [`AsyncFileWriterTo`] writes to any
//! `AsyncWrite`, and [`read_file_async`] reads a whole file into one aligned buffer
//! and validates it with the random-access core.

use super::catalog::ReadOptions;
use super::commit::PendingFile;
use super::encoder::{collect, member_names, FileEncoder, Piece, WriteOptions};
use super::kv::KvValue;
use super::reader::{window_for, FileReader};
use super::writer::poisoned;
use super::HEADER_LEN;
use crate::error::Result;
use crate::tensor::{Composite, Tensor};
use std::io;
use std::path::Path;
use std::sync::Arc;
use tokio::io::{AsyncReadExt, AsyncWrite, AsyncWriteExt, BufWriter};

const ZEROS: [u8; 8192] = [0; 8192];

async fn emit<W: AsyncWrite + Unpin>(
    sink: &mut W,
    pieces: &[Piece],
    tensors: &[&Tensor],
) -> io::Result<()> {
    for p in pieces {
        match p {
            Piece::Bytes(b) => sink.write_all(b).await?,
            Piece::Zeros(n) => {
                let mut n = *n;
                while n > 0 {
                    let k = n.min(ZEROS.len() as u64) as usize;
                    sink.write_all(&ZEROS[..k]).await?;
                    n -= k as u64;
                }
            }
            Piece::Buffer { tensor, buffer } => {
                sink.write_all(tensors[*tensor].buffers()[*buffer].as_slice())
                    .await?
            }
        }
    }
    Ok(())
}

/// An async file writer over any `AsyncWrite`; the async twin of
/// [`FileWriterTo`](super::FileWriterTo), with the same rules and errors.
///
/// Not cancellation-safe, but safe to cancel: a `write_*` future dropped before it
/// completes may have written part of its tensor, so the writer is then poisoned
/// like after an I/O error, and every later call (`finish` included) fails.
pub struct AsyncFileWriterTo<W: AsyncWrite + Unpin> {
    enc: FileEncoder,
    sink: W,
    failed: bool,
}

impl<W: AsyncWrite + Unpin> AsyncFileWriterTo<W> {
    /// Starts a file written to `sink`.
    ///
    /// Errors: `DataAlignment` for an illegal alignment option.
    pub fn new(sink: W, opts: WriteOptions) -> Result<Self> {
        Ok(AsyncFileWriterTo {
            enc: FileEncoder::new(opts)?,
            sink,
            failed: false,
        })
    }

    /// Writes planned pieces. The writer is marked failed before the first byte and
    /// cleared only once every piece is out, so an I/O error or a dropped future
    /// (cancellation) leaves it poisoned.
    async fn run(&mut self, pieces: Result<Vec<Piece>>, tensors: &[&Tensor]) -> Result<()> {
        if self.failed {
            return Err(poisoned());
        }
        let pieces = pieces?;
        self.failed = true;
        emit(&mut self.sink, &pieces, tensors).await?;
        self.failed = false;
        Ok(())
    }

    /// Writes `tensor` under `name`. See [`FileEncoder::tensor`].
    pub async fn write_tensor(&mut self, name: &str, tensor: &Tensor) -> Result<()> {
        if self.failed {
            return Err(poisoned());
        }
        let pieces = self.enc.tensor(name, tensor.descriptor());
        self.run(pieces, &[tensor]).await
    }

    /// Writes a composite with default member names (`name/0`, …), validated first.
    /// See [`FileEncoder::composite`].
    pub async fn write_composite(&mut self, name: &str, c: &Composite) -> Result<()> {
        let names = member_names(name, c);
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        self.write_composite_named(&names, c).await
    }

    /// Writes a composite with explicit pre-order names. See [`FileEncoder::composite`].
    pub async fn write_composite_named(&mut self, names: &[&str], c: &Composite) -> Result<()> {
        if self.failed {
            return Err(poisoned());
        }
        let pieces = self.enc.composite(names, c);
        let mut tensors = Vec::new();
        collect(c, &mut tensors);
        self.run(pieces, &tensors).await
    }

    /// Adds a KV entry. See [`FileEncoder::add_kv`].
    pub fn add_kv(&mut self, key: impl Into<String>, value: KvValue) -> Result<()> {
        if self.failed {
            return Err(poisoned());
        }
        self.enc.add_kv(key, value)
    }

    /// Writes KV, index and trailer, flushes and returns the sink.
    ///
    /// Errors: as [`FileWriterTo::finish`](super::FileWriterTo::finish), including
    /// the poisoned writer's error after a failed or cancelled write.
    pub async fn finish(mut self) -> Result<W> {
        if self.failed {
            return Err(poisoned());
        }
        let pieces = self.enc.finish();
        self.run(pieces, &[]).await?;
        self.sink.flush().await?;
        Ok(self.sink)
    }
}

/// The async twin of [`FileWriter`](super::FileWriter): writes to a temporary file
/// beside the destination and renames it on [`finish`](Self::finish); dropping it
/// unfinished, or any error, removes the temporary file.
///
/// A `write_*` future dropped before it completes poisons the writer (see
/// [`AsyncFileWriterTo`]): `finish` then fails and nothing is renamed into place.
pub struct AsyncFileWriter {
    inner: AsyncFileWriterTo<BufWriter<tokio::fs::File>>,
    pending: PendingFile,
}

impl AsyncFileWriter {
    /// Starts writing the file that will appear at `path`.
    ///
    /// Errors: `DataAlignment`; [`Error::Io`](crate::Error::Io) when the temporary file cannot be created.
    pub async fn create(path: impl AsRef<Path>, opts: WriteOptions) -> Result<Self> {
        let dest = path.as_ref().to_path_buf();
        let enc = FileEncoder::new(opts)?;
        // Creating a file is one blocking metadata operation, as in tokio::fs.
        let (pending, file) = tokio::task::spawn_blocking(move || PendingFile::create(dest))
            .await
            .map_err(io::Error::other)??;
        Ok(AsyncFileWriter {
            inner: AsyncFileWriterTo {
                enc,
                sink: BufWriter::with_capacity(1 << 20, tokio::fs::File::from_std(file)),
                failed: false,
            },
            pending,
        })
    }

    /// See [`AsyncFileWriterTo::write_tensor`].
    pub async fn write_tensor(&mut self, name: &str, tensor: &Tensor) -> Result<()> {
        self.inner.write_tensor(name, tensor).await
    }

    /// See [`AsyncFileWriterTo::write_composite`].
    pub async fn write_composite(&mut self, name: &str, c: &Composite) -> Result<()> {
        self.inner.write_composite(name, c).await
    }

    /// See [`AsyncFileWriterTo::write_composite_named`].
    pub async fn write_composite_named(&mut self, names: &[&str], c: &Composite) -> Result<()> {
        self.inner.write_composite_named(names, c).await
    }

    /// See [`AsyncFileWriterTo::add_kv`].
    pub fn add_kv(&mut self, key: impl Into<String>, value: KvValue) -> Result<()> {
        self.inner.add_kv(key, value)
    }

    /// Writes the end of the file and commits it like
    /// [`FileWriter::finish`](super::FileWriter::finish) (with `durable`: `fsync`,
    /// rename, directory `fsync`; see [`commit`](super::commit)).
    ///
    /// Errors: as [`FileWriter::finish`](super::FileWriter::finish).
    ///
    /// Cancellation: dropping the future before the commit starts (while the end of
    /// the file is written and flushed) removes the temporary file and leaves the
    /// destination as it was. The commit runs on a blocking thread that completes
    /// even if the future is dropped meanwhile: then the destination holds the
    /// complete new file, or, if the commit failed before its rename, is as it was.
    /// Either way it is never half-written.
    pub async fn finish(self) -> Result<()> {
        let durable = self.inner.enc.options().durable;
        let sink = self.inner.finish().await?;
        let file = sink.into_inner().into_std().await;
        // From here the blocking task owns the temporary file: it commits it, or
        // removes it when the commit fails before the rename.
        let pending = self.pending;
        tokio::task::spawn_blocking(move || pending.commit(file, durable))
            .await
            .map_err(io::Error::other)??;
        Ok(())
    }
}

/// Reads the whole file at `path` into one 64-byte-aligned allocation and validates
/// it (the random-access core); tensors are views into that allocation.
///
/// Errors: [`Error::Io`](crate::Error::Io); `Limit` when the file is too large to hold in memory; the
/// rules of [`Catalog::parse`](super::Catalog::parse).
pub async fn read_file_async(path: impl AsRef<Path>, opts: &ReadOptions) -> Result<FileReader> {
    let mut f = tokio::fs::File::open(path.as_ref()).await?;
    let len = f.metadata().await?.len();
    let mut head = [0u8; HEADER_LEN];
    let n = usize::try_from(len).unwrap_or(usize::MAX).min(HEADER_LEN);
    f.read_exact(&mut head[..n]).await?;
    let mut w = window_for(len, &head[..n])?;
    let buf = w.as_mut_slice();
    buf[..n].copy_from_slice(&head[..n]);
    f.read_exact(&mut buf[n..]).await?;
    FileReader::from_owner(Arc::new(w), opts)
}
