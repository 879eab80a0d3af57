//! `hurray convert IN OUT`: safetensors, `.npy`/`.npz`, HRRYFILE or stream in;
//! HRRYFILE, stream or safetensors out. A source is checked whole before the output
//! is created, data then streams from input to output in bounded chunks, and the
//! output appears only when complete (see [`crate::output`]).

pub mod from_hurray;
pub mod from_npy;
pub mod from_st;
pub mod sink;
pub mod to_st;

use crate::detect::{self, Format};
use crate::error::{Error, Result};
use crate::output::Output;
use crate::progress::Progress;
use hurray_core::{ElementType, TensorDescriptor, MAX_RANK};
use sink::{FileSink, Finished, Sink, StreamSink};
use std::path::Path;

/// A source of tensors for a sink.
pub trait Source {
    /// Data bytes to copy (for the progress bar).
    fn data_bytes(&self) -> u64;
    /// Number of tensors, when known before reading (0 for a stream).
    fn tensor_count(&self) -> usize;
    /// Whether its tensors have names (a stream's do not).
    fn has_names(&self) -> bool;
    /// Hands every KV entry, then every tensor, to `sink`.
    fn feed(&mut self, sink: &mut dyn Sink) -> Result<()>;
}

/// What a conversion did.
#[derive(Debug)]
pub struct Summary {
    /// Input format.
    pub from: Format,
    /// Output format.
    pub to: Format,
    /// Tensors converted (for a stream input: unknown, 0).
    pub tensors: usize,
    /// Bytes written.
    pub bytes: u64,
    /// Things the output could not carry.
    pub notes: Vec<String>,
}

/// A row-major host descriptor of `element_type` and `shape`.
///
/// Errors: `Rank` above 64; the descriptor error for a size that overflows.
pub fn dense(element_type: ElementType, shape: &[u64]) -> Result<TensorDescriptor> {
    if shape.len() > MAX_RANK {
        return Err(Error::unsupported(format_args!(
            "rank {} exceeds Hurray's maximum of {MAX_RANK}",
            shape.len()
        )));
    }
    TensorDescriptor::dense(element_type, shape)
        .map_err(|source| hurray_io::Error::Descriptor { at: 0, source }.into())
}

/// Opens `input` as a source of the given format.
pub fn open_source(input: &Path, from: Format) -> Result<Box<dyn Source>> {
    Ok(match from {
        Format::Safetensors => Box::new(from_st::SafetensorsSource::open(input)?),
        Format::Npy => Box::new(from_npy::NpySource::open(input)?),
        Format::Npz => Box::new(from_npy::NpzSource::open(input)?),
        Format::HrryFile => Box::new(from_hurray::HrryFileSource::open(input)?),
        Format::Stream => Box::new(from_hurray::StreamSource::open(input)?),
    })
}

/// How to write the output.
#[derive(Clone, Copy, Debug, Default)]
pub struct ConvertOptions {
    /// Output format, overriding the one the output's extension names.
    pub to: Option<Format>,
    /// `fsync` the output before it is renamed into place and its directory after
    /// (off for scratch outputs: `--no-sync`).
    pub durable: bool,
    /// Record each tensor's data CRC-32C in an HRRYFILE output (`--data-crc32c`;
    /// see `hurray_io::file::data_crc`).
    pub data_crc32c: bool,
}

/// Checks an HRRYFILE input's recorded data CRC-32C values (the reserved KV entry
/// `hurray.data_crc32c`), when it has them, before anything is converted: a tensor
/// whose bytes changed since they were recorded is refused rather than carried into
/// the output (where `--data-crc32c` would record fresh values for the damaged
/// bytes). Reads every data byte of such an input once; a file without the entry
/// costs nothing.
///
/// Errors: `DataCrcMismatch` naming the tensor (or a malformed entry), with the
/// input's path.
fn check_recorded_crcs(input: &Path) -> Result<()> {
    let r = hurray_io::FileReader::open(input).map_err(|e| Error::from(e).at_path(input))?;
    if r.kv_get(hurray_io::file::data_crc::DATA_CRC32C_KEY)
        .is_some()
    {
        hurray_io::file::data_crc::verify(&r).map_err(|e| Error::from(e).at_path(input))?;
    }
    Ok(())
}

/// Converts `input` to `output` as `opts` say.
///
/// Errors: any error of the source (named with the input path) or of writing (named
/// with the output path); `Usage` for `data_crc32c` with an output that is not an
/// HRRYFILE; `DataCrcMismatch` for an HRRYFILE input whose recorded data CRC-32C
/// values do not match its data. On error no output file exists (an existing one is
/// left as it was).
pub fn convert(input: &Path, output: &Path, opts: ConvertOptions) -> Result<Summary> {
    let ConvertOptions {
        to,
        durable,
        data_crc32c,
    } = opts;
    let from = detect::detect(input)?;
    let to = detect::output_format(output, to)?;
    if data_crc32c && to != Format::HrryFile {
        return Err(Error::usage(format_args!(
            "--data-crc32c records the CRCs in an HRRYFILE's KV metadata; a {to} output \
             has no place for them"
        )));
    }
    if from == Format::HrryFile {
        check_recorded_crcs(input)?;
    }
    let label = format!("{} -> {}", from, to);
    if to == Format::Safetensors {
        if from != Format::HrryFile {
            return Err(Error::unsupported(format_args!(
                "{from} to safetensors; convert to .hrry first"
            ))
            .at_path(input));
        }
        let src = from_hurray::HrryFileSource::open(input).map_err(|e| e.at_path(input))?;
        let (tensors, bytes, notes) =
            to_st::convert(&src, output, durable, &label).map_err(|e| e.at_path(output))?;
        return Ok(Summary {
            from,
            to,
            tensors,
            bytes,
            notes,
        });
    }
    let mut source = open_source(input, from).map_err(|e| e.at_path(input))?;
    let progress = Progress::for_bytes(source.data_bytes(), &label);
    let out = Output::create(output, durable, progress)?;
    let mut sink: Box<dyn Sink> = match to {
        Format::Stream => Box::new(StreamSink::new(out)),
        _ => Box::new(FileSink::new(out, data_crc32c)?),
    };
    source.feed(sink.as_mut()).map_err(|e| e.at_path(input))?;
    let Finished { bytes, mut notes } = sink.finish().map_err(|e| e.at_path(output))?;
    if to == Format::Stream && source.has_names() && source.tensor_count() > 0 {
        notes.push(format!(
            "a stream has no tensor names: {} names were not carried (tensors keep their order)",
            source.tensor_count()
        ));
    }
    Ok(Summary {
        from,
        to,
        tensors: source.tensor_count(),
        bytes,
        notes,
    })
}
