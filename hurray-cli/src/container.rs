//! Opening a Hurray container for `inspect`, `validate` and `dump`: an HRRYFILE is
//! memory-mapped and validated by `hurray-io`; a stream is decoded item by item and
//! only its descriptors are kept (payloads are dropped as soon as each item is read).

use crate::detect::{self, Format};
use crate::error::{Error, Result};
use hurray_core::TensorDescriptor;
use hurray_io::file::FileReader;
use hurray_io::stream::StreamReader;
use hurray_io::{Item, Tensor};
use std::fs::File;
use std::io::BufReader;
use std::path::Path;
use std::sync::Arc;

/// One tensor of a stream: its synthetic name, descriptor and where it starts.
#[derive(Debug, Clone)]
pub struct StreamTensor {
    /// `tensor_0`, `tensor_1`, ... by position; composite members `tensor_3/0`, ...
    pub name: String,
    /// The decoded descriptor.
    pub descriptor: Arc<TensorDescriptor>,
    /// Stream offset of the item this tensor starts (top-level tensors only).
    pub offset: Option<u64>,
    /// Stream offset of its first buffer (top-level tensors with buffers only).
    pub data_offset: Option<u64>,
}

/// An opened Hurray container.
pub enum Container {
    /// A validated HRRYFILE.
    File(Box<FileReader>),
    /// A stream that decoded without error to its end.
    Stream {
        /// Its tensors, in stream order (pre-order for composites).
        tensors: Vec<StreamTensor>,
        /// Its size in bytes.
        len: u64,
    },
}

/// The names a stream's item gets: `tensor_K` for its first tensor, and
/// `tensor_K/i` (nested: `tensor_K/i/j`) for composite members.
pub fn stream_names(k: usize, item: &Item) -> Vec<String> {
    let base = format!("tensor_{k}");
    match item {
        Item::Tensor(_) => vec![base],
        Item::Composite(c) => hurray_io::file::encoder::member_names(&base, c),
    }
}

/// Calls `f` with each item of the stream at `path`, its position and its stream
/// offset; stops early when `f` returns `Some`.
///
/// Errors: every `hurray-io` stream decoding error (rule and byte offset).
pub fn each_stream_item<T>(
    path: &Path,
    mut f: impl FnMut(usize, u64, Item) -> Option<T>,
) -> Result<Option<T>> {
    let file = File::open(path)?;
    let mut reader = StreamReader::new(BufReader::with_capacity(1 << 20, file));
    let mut k = 0;
    loop {
        let at = reader.decoder().position();
        match reader.next() {
            None => return Ok(None),
            Some(Err(e)) => return Err(e.into()),
            Some(Ok(item)) => {
                if let Some(t) = f(k, at, item) {
                    return Ok(Some(t));
                }
                k += 1;
            }
        }
    }
}

impl Container {
    /// Opens `path`, which must be an HRRYFILE or a stream.
    ///
    /// Errors: the file is in another format (`Usage`), or it fails validation.
    pub fn open(path: &Path) -> Result<Container> {
        let open = || -> Result<Container> {
            match detect::detect(path)? {
                Format::HrryFile => Ok(Container::File(Box::new(FileReader::open(path)?))),
                Format::Stream => {
                    let len = std::fs::metadata(path)?.len();
                    let mut tensors = Vec::new();
                    each_stream_item(path, |k, at, item| {
                        let names = stream_names(k, &item);
                        let mut first = true;
                        let mut i = 0;
                        item.for_each_tensor(&mut |t: &Tensor| {
                            let d = t.descriptor_arc();
                            let offset = first.then_some(at);
                            let data_offset = offset
                                .filter(|_| !d.buffers.is_empty())
                                .map(|o| o + d.encoded_len() as u64);
                            tensors.push(StreamTensor {
                                name: names.get(i).cloned().unwrap_or_default(),
                                descriptor: d.clone(),
                                offset,
                                data_offset,
                            });
                            first = false;
                            i += 1;
                        });
                        None::<()>
                    })?;
                    Ok(Container::Stream { tensors, len })
                }
                other => Err(Error::usage(format_args!(
                    "this is a {other} file, not a Hurray file; convert it first \
                     (hurray convert {} OUT.hrry)",
                    path.display()
                ))),
            }
        };
        open().map_err(|e| e.at_path(path))
    }
}
