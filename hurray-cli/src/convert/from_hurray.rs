//! Hurray containers as conversion sources.
//!
//! - An HRRYFILE is opened (memory-mapped and fully validated) with `hurray-io`;
//!   single-buffer tensors are then copied from file byte ranges, so their pages are
//!   never brought into this process; composites and multi-buffer tensors go through
//!   the mapped views.
//! - A stream is read item by item with `hurray-io`'s `StreamReader`, so at most one
//!   item is in memory at a time. Streams carry no names: tensors are named
//!   `tensor_0`, `tensor_1`, ... by position (composite members `tensor_3/0`, ...).

use super::sink::Sink;
use super::Source;
use crate::dtype::Carry;
use crate::error::{Error, Result};
use crate::output::Data;
use hurray_io::file::FileReader;
use hurray_io::stream::StreamReader;
use hurray_io::Item;
use std::fs::File;
use std::io::BufReader;
use std::path::Path;

/// An HRRYFILE, validated.
pub struct HrryFileSource {
    reader: FileReader,
    file: File,
}

impl HrryFileSource {
    /// Opens and validates the file at `path`.
    ///
    /// Errors: every `hurray-io` read error (rule and byte offset).
    pub fn open(path: &Path) -> Result<HrryFileSource> {
        let reader = FileReader::open(path)?;
        let file = File::open(path)?;
        Ok(HrryFileSource { reader, file })
    }

    /// The validated reader.
    pub fn reader(&self) -> &FileReader {
        &self.reader
    }

    /// The file, for byte-range copies.
    pub fn file(&self) -> &File {
        &self.file
    }
}

impl Source for HrryFileSource {
    fn data_bytes(&self) -> u64 {
        let c = self.reader.catalog();
        (0..c.len())
            .filter_map(|i| c.descriptor_at(i))
            .map(|d| d.buffers.iter().map(|b| b.byte_size).sum::<u64>())
            .sum()
    }

    fn tensor_count(&self) -> usize {
        self.reader.len()
    }

    fn has_names(&self) -> bool {
        true
    }

    fn feed(&mut self, sink: &mut dyn Sink) -> Result<()> {
        for e in self.reader.kv() {
            sink.add_kv(e.to_owned())?;
        }
        let c = self.reader.catalog();
        let mut order = c.file_order();
        for (name, item) in self.reader.items()? {
            let n = item.tensor_count();
            let names: Vec<&str> = order
                .by_ref()
                .take(n)
                .filter_map(|j| c.entry(j).map(|e| e.name))
                .collect();
            let ranges = c.position(&name).and_then(|i| c.buffer_ranges(i));
            match (&item, ranges.as_deref()) {
                (Item::Tensor(t), Some([r])) => {
                    let data = Data::Range {
                        file: &self.file,
                        start: r.start,
                        len: r.end - r.start,
                    };
                    sink.tensor(&name, t.descriptor(), data, Carry::Verbatim)?;
                }
                _ => sink.item(&names, &item)?,
            }
        }
        Ok(())
    }
}

/// A Hurray stream, read item by item.
pub struct StreamSource {
    path: std::path::PathBuf,
    len: u64,
    count: usize,
}

impl StreamSource {
    /// Prepares to read the stream at `path` (nothing is decoded yet).
    pub fn open(path: &Path) -> Result<StreamSource> {
        let len = std::fs::metadata(path)?.len();
        Ok(StreamSource {
            path: path.to_path_buf(),
            len,
            count: 0,
        })
    }
}

impl Source for StreamSource {
    fn data_bytes(&self) -> u64 {
        self.len
    }

    /// Tensors fed so far (0 before [`feed`](Source::feed)).
    fn tensor_count(&self) -> usize {
        self.count
    }

    fn has_names(&self) -> bool {
        false
    }

    fn feed(&mut self, sink: &mut dyn Sink) -> Result<()> {
        let reader = StreamReader::new(BufReader::with_capacity(1 << 20, File::open(&self.path)?));
        for (k, item) in reader.enumerate() {
            let item = item.map_err(Error::from)?;
            let names = crate::container::stream_names(k, &item);
            let refs: Vec<&str> = names.iter().map(String::as_str).collect();
            sink.item(&refs, &item)?;
            self.count += refs.len();
        }
        Ok(())
    }
}
