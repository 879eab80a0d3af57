//! Async tokio front ends over the sans-io cores (feature `tokio`).

use super::decoder::StreamDecoder;
use super::encoder::{Encoded, StreamEncoder};
use crate::error::{Error, Result};
use crate::limits::Limits;
use crate::tensor::{Item, Tensor};
use std::io::ErrorKind;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// Reads a byte stream (`streams-and-transport.md` Part A) from a tokio
/// [`AsyncRead`]: the async twin of [`StreamReader`](super::StreamReader), with the
/// same decoder, checks and errors. Payload bytes are read straight into their final
/// 64-byte-aligned buffers.
pub struct AsyncStreamReader<R> {
    inner: R,
    decoder: StreamDecoder,
    done: bool,
}

impl<R: AsyncRead + Unpin> AsyncStreamReader<R> {
    /// A reader with the default [`Limits`] and strict decoding.
    pub fn new(inner: R) -> AsyncStreamReader<R> {
        AsyncStreamReader::with_decoder(inner, StreamDecoder::default())
    }

    /// A reader enforcing `limits` (including cross-machine mode, A.5).
    pub fn with_limits(inner: R, limits: Limits) -> AsyncStreamReader<R> {
        AsyncStreamReader::with_decoder(inner, StreamDecoder::new(limits))
    }

    /// A reader driving a configured (fresh) decoder.
    pub fn with_decoder(inner: R, decoder: StreamDecoder) -> AsyncStreamReader<R> {
        AsyncStreamReader {
            inner,
            decoder,
            done: false,
        }
    }

    /// The next item; `None` at a clean end of stream (and after an error).
    ///
    /// Errors: [`Error::Io`] from the reader, and every decoder error.
    ///
    /// Cancellation-safe: bytes are handed to the decoder as soon as a read returns,
    /// so dropping the future loses nothing; the next call continues where it stopped.
    pub async fn next_item(&mut self) -> Option<Result<Item>> {
        if self.done {
            return None;
        }
        loop {
            if let Some(r) = self.decoder.next_item() {
                self.done = r.is_err();
                return Some(r);
            }
            let want = self.decoder.demand();
            if want.is_empty() {
                self.done = true;
                return None;
            }
            match self.inner.read(want).await {
                Ok(0) => {
                    self.done = true;
                    return self.decoder.finish().err().map(Err);
                }
                Ok(n) => self.decoder.advance(n),
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => {
                    self.done = true;
                    return Some(Err(Error::Io(e)));
                }
            }
        }
    }

    /// The decoder (for its position and state).
    pub fn decoder(&self) -> &StreamDecoder {
        &self.decoder
    }

    /// Gives back the underlying reader.
    pub fn into_inner(self) -> R {
        self.inner
    }
}

/// Writes items to a tokio [`AsyncWrite`] as a byte stream: the async twin of
/// [`StreamWriter`](super::StreamWriter), with the same checks before the first byte
/// of each item and no copies of the caller's buffers.
///
/// Not cancellation-safe, but safe to cancel: a `write_*` future dropped before it
/// completes may have written part of its item, so the writer is then poisoned, as
/// after an I/O error part-way through an item, and every later `write_*`, `flush`
/// or `shutdown` returns an [`Error::Io`] saying so.
pub struct AsyncStreamWriter<W> {
    inner: W,
    encoder: StreamEncoder,
    /// Set while an item is being written; still set afterwards if it was not
    /// written whole (an I/O error, or the future was dropped).
    failed: bool,
}

impl<W: AsyncWrite + Unpin> AsyncStreamWriter<W> {
    /// A writer with the default [`Limits`] (not cross-machine).
    pub fn new(inner: W) -> AsyncStreamWriter<W> {
        AsyncStreamWriter::with_limits(inner, Limits::default())
    }

    /// A writer enforcing `limits` as a reader with the same limits would (see
    /// [`StreamEncoder`]).
    pub fn with_limits(inner: W, limits: Limits) -> AsyncStreamWriter<W> {
        AsyncStreamWriter {
            inner,
            encoder: StreamEncoder::new(limits),
            failed: false,
        }
    }

    /// Writes one plain tensor (see [`StreamEncoder::encode_tensor`]).
    pub async fn write_tensor(&mut self, tensor: &Tensor) -> Result<()> {
        if self.failed {
            return Err(super::poisoned());
        }
        let e = self.encoder.encode_tensor(tensor)?;
        self.emit(&e).await
    }

    /// Writes one item (see [`StreamEncoder::encode_item`]).
    pub async fn write_item(&mut self, item: &Item) -> Result<()> {
        if self.failed {
            return Err(super::poisoned());
        }
        let e = self.encoder.encode_item(item)?;
        self.emit(&e).await
    }

    /// Writes an encoded item; poisoned unless every chunk is written.
    async fn emit(&mut self, e: &Encoded<'_>) -> Result<()> {
        self.failed = true;
        for c in e.chunks() {
            self.inner.write_all(c).await?;
        }
        self.failed = false;
        Ok(())
    }

    /// True when an earlier write failed or was cancelled part-way through an item.
    pub fn is_poisoned(&self) -> bool {
        self.failed
    }

    /// Flushes the underlying writer.
    ///
    /// Errors: [`Error::Io`], also when the writer is poisoned.
    pub async fn flush(&mut self) -> Result<()> {
        if self.failed {
            return Err(super::poisoned());
        }
        self.inner.flush().await?;
        Ok(())
    }

    /// Flushes and shuts down the underlying writer (for a socket: half-close, so
    /// the peer sees a clean end of stream).
    ///
    /// Errors: [`Error::Io`], also when the writer is poisoned (nothing is done; the
    /// stream is abandoned, and a reader sees it end inside an item, a truncation,
    /// once the writer is dropped).
    pub async fn shutdown(&mut self) -> Result<()> {
        if self.failed {
            return Err(super::poisoned());
        }
        self.inner.shutdown().await?;
        Ok(())
    }

    /// Gives back the underlying writer, without flushing it.
    pub fn into_inner(self) -> W {
        self.inner
    }
}
