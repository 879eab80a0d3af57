//! Where converted tensors go: an HRRYFILE (through `hurray-io`'s sans-io
//! [`FileEncoder`], which plans the bytes and leaves the writing of each buffer to us,
//! so data streams from its source) or a Hurray stream.

use crate::dtype::Carry;
use crate::error::{Error, Result};
use crate::output::{Data, Output};
use hurray_core::TensorDescriptor;
use hurray_io::file::data_crc::{tensor_crc32c, DATA_CRC32C_KEY};
use hurray_io::file::{FileEncoder, KvEntry, Piece, WriteOptions};
use hurray_io::stream::StreamEncoder;
use hurray_io::{Item, Limits};

/// What a finished sink reports.
#[derive(Debug, Default)]
pub struct Finished {
    /// Bytes written.
    pub bytes: u64,
    /// Things the output format could not carry (said to the user, not silently lost).
    pub notes: Vec<String>,
}

/// A destination for converted tensors.
pub trait Sink {
    /// Adds a file-level KV entry. Sources add KV before their first tensor.
    fn add_kv(&mut self, entry: KvEntry) -> Result<()>;

    /// Writes a plain tensor with one buffer whose bytes come from `data`, transformed
    /// by `carry` into the descriptor's `byte_size`.
    fn tensor(
        &mut self,
        name: &str,
        descriptor: &TensorDescriptor,
        data: Data<'_>,
        carry: Carry,
    ) -> Result<()>;

    /// Writes a tensor or composite whose buffers are in memory; `names` has one name
    /// per tensor in pre-order (head first).
    fn item(&mut self, names: &[&str], item: &Item) -> Result<()>;

    /// Completes the output and moves it into place.
    fn finish(self: Box<Self>) -> Result<Finished>;
}

/// Element count of a descriptor's shape (dynamic dimensions never reach a writer).
fn elements(d: &TensorDescriptor) -> Result<u64> {
    hurray_core::element_count(&d.shape)
        .map_err(|e| Error::format_anywhere("Shape", format_args!("{e}")))
}

/// An HRRYFILE being written.
pub struct FileSink {
    enc: FileEncoder,
    out: Output,
    /// Per-tensor data CRC-32C values in file order, when recording them.
    crcs: Option<Vec<u64>>,
    /// The source's own `hurray.data_crc32c` entry was left out.
    dropped_crc_entry: bool,
}

impl FileSink {
    /// A sink writing an HRRYFILE to `out` with the default options (CRC on,
    /// alignment 4096). With `data_crc32c` it records the CRC-32C of every tensor's
    /// data, as written, in the reserved KV entry `hurray.data_crc32c` (see
    /// `hurray_io::file::data_crc`); a source's own entry of that key is replaced.
    /// Without it, a source's entry is left out (with a note): it is not this
    /// command's to vouch for.
    pub fn new(out: Output, data_crc32c: bool) -> Result<FileSink> {
        Ok(FileSink {
            enc: FileEncoder::new(WriteOptions::default())?,
            out,
            crcs: data_crc32c.then(Vec::new),
            dropped_crc_entry: false,
        })
    }

    fn write_pieces(
        &mut self,
        pieces: Vec<Piece>,
        buffer: &mut dyn FnMut(&mut Output, usize, usize) -> Result<()>,
    ) -> Result<()> {
        for p in pieces {
            match p {
                Piece::Bytes(b) => self.out.write_bytes(&b)?,
                Piece::Zeros(n) => self.out.write_zeros(n)?,
                Piece::Buffer { tensor, buffer: i } => buffer(&mut self.out, tensor, i)?,
            }
        }
        Ok(())
    }
}

impl Sink for FileSink {
    fn add_kv(&mut self, entry: KvEntry) -> Result<()> {
        if entry.key == DATA_CRC32C_KEY {
            // Recomputed at finish when recording; otherwise not carried.
            self.dropped_crc_entry = self.crcs.is_none();
            return Ok(());
        }
        let key = entry.key.clone();
        self.enc
            .add_kv(entry.key, entry.value)
            .map_err(|e| Error::from(e).context(format_args!("KV entry {key:?}")))
    }

    fn tensor(
        &mut self,
        name: &str,
        d: &TensorDescriptor,
        data: Data<'_>,
        carry: Carry,
    ) -> Result<()> {
        let ctx = |e: Error| e.context(format_args!("tensor {name:?}"));
        let n = elements(d).map_err(ctx)?;
        let out_len = d.buffers.first().map_or(0, |b| b.byte_size);
        let pieces = self.enc.tensor(name, d).map_err(|e| ctx(e.into()))?;
        let mut data = Some(data);
        if self.crcs.is_some() {
            self.out.start_crc();
        }
        self.write_pieces(pieces, &mut |out, _, _| match data.take() {
            Some(data) => out.write_data(data, carry, out_len, n, &format!("tensor {name:?}")),
            None => Err(Error::unsupported(
                "a streamed tensor has exactly one buffer",
            )),
        })
        .map_err(ctx)?;
        let crc = self.out.take_crc();
        if let (Some(crcs), Some(crc)) = (&mut self.crcs, crc) {
            crcs.push(u64::from(crc));
        }
        Ok(())
    }

    fn item(&mut self, names: &[&str], item: &Item) -> Result<()> {
        let ctx = |e: Error| e.context(format_args!("tensor {:?}", names.first().unwrap_or(&"")));
        let mut tensors = Vec::new();
        item.for_each_tensor(&mut |t| tensors.push(t));
        let pieces = match item {
            Item::Tensor(t) => self
                .enc
                .tensor(names.first().copied().unwrap_or(""), t.descriptor()),
            Item::Composite(c) => self.enc.composite(names, c),
        }
        .map_err(|e| ctx(e.into()))?;
        self.write_pieces(pieces, &mut |out, t, b| {
            let bytes = tensors
                .get(t)
                .and_then(|t| t.buffers().get(b))
                .ok_or_else(|| {
                    Error::unsupported("the encoder asked for a buffer that does not exist")
                })?;
            let len = bytes.len() as u64;
            out.write_data(
                Data::Memory(bytes.as_slice()),
                Carry::Verbatim,
                len,
                len,
                "buffer",
            )
        })
        .map_err(ctx)?;
        // Buffers in memory: each tensor's CRC straight from them (pre-order, the
        // order they were written in).
        if let Some(crcs) = &mut self.crcs {
            crcs.extend(
                tensors
                    .iter()
                    .map(|t| u64::from(tensor_crc32c(t.buffers().iter().map(|b| b.as_slice())))),
            );
        }
        Ok(())
    }

    fn finish(mut self: Box<Self>) -> Result<Finished> {
        let mut notes = Vec::new();
        if let Some(crcs) = self.crcs.take() {
            self.enc.add_data_crc32c(crcs)?;
        }
        if self.dropped_crc_entry {
            notes.push(format!(
                "the input's data CRC-32C entry ({DATA_CRC32C_KEY:?}) was not carried; \
                 --data-crc32c records a fresh one"
            ));
        }
        let pieces = self.enc.finish()?;
        self.write_pieces(pieces, &mut |_, _, _| {
            Err(Error::unsupported("the file end holds no tensor buffer"))
        })?;
        let bytes = self.out.finish()?;
        Ok(Finished { bytes, notes })
    }
}

/// A Hurray stream being written. A stream carries tensors only: KV entries are
/// counted and reported as dropped (names are the caller's to report).
pub struct StreamSink {
    enc: StreamEncoder,
    out: Output,
    dropped_kv: usize,
}

impl StreamSink {
    /// A sink writing a stream to `out`.
    pub fn new(out: Output) -> StreamSink {
        StreamSink {
            enc: StreamEncoder::new(Limits::default()),
            out,
            dropped_kv: 0,
        }
    }
}

impl Sink for StreamSink {
    fn add_kv(&mut self, _entry: KvEntry) -> Result<()> {
        self.dropped_kv += 1;
        Ok(())
    }

    fn tensor(
        &mut self,
        name: &str,
        d: &TensorDescriptor,
        data: Data<'_>,
        carry: Carry,
    ) -> Result<()> {
        let ctx = |e: Error| e.context(format_args!("tensor {name:?}"));
        let n = elements(d).map_err(ctx)?;
        let bytes = d.encode().map_err(|source| {
            ctx(hurray_io::Error::Descriptor {
                at: self.out.written(),
                source,
            }
            .into())
        })?;
        if d.buffers.len() != 1 {
            return Err(ctx(Error::unsupported(
                "a streamed tensor has exactly one buffer",
            )));
        }
        self.out.write_bytes(&bytes)?;
        let what = format!("tensor {name:?}");
        self.out
            .write_data(data, carry, d.buffers[0].byte_size, n, &what)
            .map_err(ctx)
    }

    fn item(&mut self, names: &[&str], item: &Item) -> Result<()> {
        let encoded = self.enc.encode_item(item).map_err(|e| {
            Error::from(e).context(format_args!("tensor {:?}", names.first().unwrap_or(&"")))
        })?;
        for chunk in encoded.chunks() {
            let len = chunk.len() as u64;
            self.out
                .write_data(Data::Memory(chunk), Carry::Verbatim, len, len, "buffer")?;
        }
        Ok(())
    }

    fn finish(self: Box<Self>) -> Result<Finished> {
        let mut notes = Vec::new();
        if self.dropped_kv > 0 {
            notes.push(format!(
                "a stream has no KV metadata: {} not carried",
                crate::validate::plural(self.dropped_kv, "KV entry was", "KV entries were")
            ));
        }
        let bytes = self.out.finish()?;
        Ok(Finished { bytes, notes })
    }
}
