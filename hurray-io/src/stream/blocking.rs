//! Blocking `std::io` front ends over the sans-io cores.

use super::decoder::StreamDecoder;
use super::encoder::{Encoded, StreamEncoder};
use crate::error::{Error, Result};
use crate::limits::Limits;
use crate::tensor::{Item, Tensor};
use std::io::{ErrorKind, Read, Write};

/// Reads a byte stream (`streams-and-transport.md` Part A) from any [`Read`] and
/// yields its items: an [`Iterator`] of `Result<Item>` that ends at a clean end of
/// stream.
///
/// Each `read` call goes straight into the slice [`StreamDecoder::demand`] returns,
/// so payload bytes land in their final 64-byte-aligned buffers without an
/// intermediate copy (subject to the decoder's allocation policy for buffers larger
/// than its eager ceiling). Reads are as large as what the stream grammar expects next
/// and never beyond it: for an unbuffered source (a socket) with many small tensors,
/// wrap it in a [`std::io::BufReader`] (which passes large reads through unbuffered).
///
/// Errors: [`Error::Io`] from the reader (`Interrupted` is retried), and every decoder
/// error (truncation, torn composite, limits, descriptor and composite rules). After
/// an error the iterator ends.
pub struct StreamReader<R> {
    inner: R,
    decoder: StreamDecoder,
    done: bool,
}

impl<R: Read> StreamReader<R> {
    /// A reader with the default [`Limits`] and strict decoding.
    pub fn new(inner: R) -> StreamReader<R> {
        StreamReader::with_decoder(inner, StreamDecoder::default())
    }

    /// A reader enforcing `limits` (including cross-machine mode, A.5).
    pub fn with_limits(inner: R, limits: Limits) -> StreamReader<R> {
        StreamReader::with_decoder(inner, StreamDecoder::new(limits))
    }

    /// A reader driving a configured decoder (decode options, eager allocation
    /// ceiling). The decoder should be fresh: its position counts from 0.
    pub fn with_decoder(inner: R, decoder: StreamDecoder) -> StreamReader<R> {
        StreamReader {
            inner,
            decoder,
            done: false,
        }
    }

    /// The decoder (for its position and state).
    pub fn decoder(&self) -> &StreamDecoder {
        &self.decoder
    }

    /// The underlying reader (borrowed).
    pub fn get_ref(&self) -> &R {
        &self.inner
    }

    /// Gives back the underlying reader; bytes the decoder consumed are gone from it.
    pub fn into_inner(self) -> R {
        self.inner
    }
}

impl<R: Read> Iterator for StreamReader<R> {
    type Item = Result<Item>;

    fn next(&mut self) -> Option<Result<Item>> {
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
            match self.inner.read(want) {
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
}

/// Pushing bytes into a decoder: every write is decoded as by
/// [`StreamDecoder::feed`], and completed items wait in
/// [`StreamDecoder::next_item`]. With a [`StreamWriter`] over a `&mut StreamDecoder`
/// the stream never exists as a whole in memory: each payload byte is copied once,
/// from the writer's buffer into the reader's final 64-byte-aligned buffer.
///
/// ```
/// use hurray_io::{Item, StreamDecoder, StreamWriter, Tensor};
/// use hurray_core::ElementType;
///
/// let t = Tensor::from_dense(ElementType::Uint8, &[3], &[1, 2, 3])?;
/// let mut dec = StreamDecoder::default();
/// StreamWriter::new(&mut dec).write_tensor(&t)?;
/// assert_eq!(dec.next_item().transpose()?, Some(Item::Tensor(t)));
/// # Ok::<(), hurray_io::Error>(())
/// ```
///
/// Errors: a write that runs into bad input returns the count of bytes accepted
/// before it (a short write); once the decoder has failed, a write returns an
/// [`ErrorKind::InvalidData`] error wrapping the decoder's error (which
/// [`next_item`](StreamDecoder::next_item) also returns, once); after
/// [`finish`](StreamDecoder::finish), a write fails with [`ErrorKind::Other`].
/// `flush` does nothing. Completed items queue in the decoder until taken, so drain
/// [`next_item`](StreamDecoder::next_item) as you write.
impl Write for StreamDecoder {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        match self.feed(buf) {
            0 => Err(self.refusal()),
            n => Ok(n),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Writes items to any [`Write`] as a byte stream (`streams-and-transport.md` A.3).
///
/// Each item is checked as a whole by the [`StreamEncoder`] before its first byte is
/// written; then its descriptor bytes and the caller's buffers are written directly
/// (buffers are never copied into an intermediate buffer). Nothing is appended when
/// the stream ends: [`flush`](Self::flush) only flushes.
///
/// Errors: the encoder's checks (nothing written, the writer stays usable), or
/// [`Error::Io`]. After an I/O error (or a panic) part-way through an item the
/// stream holds a partial item: the writer is then poisoned, and every later
/// `write_*` or `flush` returns an [`Error::Io`] saying so.
pub struct StreamWriter<W> {
    inner: W,
    encoder: StreamEncoder,
    /// Set while an item is being written; still set afterwards if it was not
    /// written whole.
    failed: bool,
}

impl<W: Write> StreamWriter<W> {
    /// A writer with the default [`Limits`] (not cross-machine).
    pub fn new(inner: W) -> StreamWriter<W> {
        StreamWriter::with_limits(inner, Limits::default())
    }

    /// A writer that enforces `limits` as a reader with the same limits would
    /// (cross-machine mode (A.5), sizes, composite depth and members; see
    /// [`StreamEncoder`]).
    pub fn with_limits(inner: W, limits: Limits) -> StreamWriter<W> {
        StreamWriter {
            inner,
            encoder: StreamEncoder::new(limits),
            failed: false,
        }
    }

    /// Writes one plain tensor. See [`StreamEncoder::encode_tensor`] for the checks.
    pub fn write_tensor(&mut self, tensor: &Tensor) -> Result<()> {
        if self.failed {
            return Err(super::poisoned());
        }
        let e = self.encoder.encode_tensor(tensor)?;
        self.emit(&e)
    }

    /// Writes one item (a tensor, or a composite head followed by its members in
    /// pre-order). See [`StreamEncoder::encode_item`] for the checks.
    pub fn write_item(&mut self, item: &Item) -> Result<()> {
        if self.failed {
            return Err(super::poisoned());
        }
        let e = self.encoder.encode_item(item)?;
        self.emit(&e)
    }

    /// Writes an encoded item; poisoned unless every chunk is written.
    fn emit(&mut self, e: &Encoded<'_>) -> Result<()> {
        self.failed = true;
        e.chunks().try_for_each(|c| self.inner.write_all(c))?;
        self.failed = false;
        Ok(())
    }

    /// True when an earlier write failed part-way through an item (every later
    /// write fails).
    pub fn is_poisoned(&self) -> bool {
        self.failed
    }

    /// Bytes written so far (the stream offset of the next item).
    pub fn position(&self) -> u64 {
        self.encoder.position()
    }

    /// Flushes the underlying writer.
    ///
    /// Errors: [`Error::Io`], also when the writer is poisoned.
    pub fn flush(&mut self) -> Result<()> {
        if self.failed {
            return Err(super::poisoned());
        }
        self.inner.flush()?;
        Ok(())
    }

    /// The underlying writer (borrowed).
    pub fn get_ref(&self) -> &W {
        &self.inner
    }

    /// Gives back the underlying writer, without flushing it.
    pub fn into_inner(self) -> W {
        self.inner
    }
}
