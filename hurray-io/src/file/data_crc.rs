//! Optional integrity of tensor data: a CRC-32C per tensor, recorded in a reserved
//! KV entry that readers unaware of it simply see as one more KV entry.
//!
//! The HRRYFILE trailer's CRC covers only the index (`file-format.md` §10), so a
//! flipped data byte goes unnoticed. A writer asked for it
//! ([`FileWriterTo::with_data_crc32c`](super::FileWriterTo::with_data_crc32c)) adds
//!
//! ```text
//! key   "hurray.data_crc32c"
//! value array of uint64, one per tensor in file order (ascending descriptor offset,
//!       composite heads and members included): the CRC-32C (Castagnoli, as the index
//!       CRC) of the tensor's buffers concatenated in buffer-table order, padding
//!       excluded; a tensor without buffers records the CRC of no bytes, 0.
//! ```
//!
//! [`verify`] recomputes them. Off by default: files written without it stay byte
//! identical to the reference writer's (the golden files).

use super::kv_table::KvValueRef;
use super::reader::FileReader;
use crate::error::{Error, FormatRule, Result};

/// The reserved KV key holding the per-tensor data CRC-32C values.
pub const DATA_CRC32C_KEY: &str = "hurray.data_crc32c";

/// CRC-32C of `buffers` concatenated (the value recorded per tensor).
pub fn tensor_crc32c<'a>(buffers: impl IntoIterator<Item = &'a [u8]>) -> u32 {
    buffers.into_iter().fold(0, crc32c::crc32c_append)
}

/// What [`verify`] found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DataCrc {
    /// Every tensor's data matched its recorded CRC-32C; the count of tensors.
    Verified(usize),
    /// The file has no `hurray.data_crc32c` entry: its data cannot be checked.
    Absent,
}

/// Recomputes every tensor's data CRC-32C and compares it with the recorded entry.
/// Reads every data byte of the file (a mapped reader touches every page).
///
/// Errors: `FormatRule::DataCrcEntry` when the entry is not an array of uint64, or
/// holds a different number of values than the file has tensors (offset: the KV
/// section); `FormatRule::DataCrcMismatch` when a tensor's data differs (offset: its
/// first data byte; the message names the tensor and both values).
pub fn verify(r: &FileReader) -> Result<DataCrc> {
    let Some(value) = r.kv_get(DATA_CRC32C_KEY) else {
        return Ok(DataCrc::Absent);
    };
    let kv_at = r.info().trailer.kv_offset;
    let Some(recorded) = value
        .as_array()
        .filter(|a| a.element_tag() == crate::file::kv::tag::UINT64)
    else {
        return Err(Error::format(
            FormatRule::DataCrcEntry,
            kv_at,
            format_args!("KV entry {DATA_CRC32C_KEY:?} is not an array of uint64"),
        ));
    };
    let c = r.catalog();
    let order = c.file_order();
    let tensors = order.len();
    if recorded.len() != tensors {
        return Err(Error::format(
            FormatRule::DataCrcEntry,
            kv_at,
            format_args!(
                "KV entry {DATA_CRC32C_KEY:?} holds {} values for {} tensors",
                recorded.len(),
                tensors
            ),
        ));
    }
    let bytes = r.bytes();
    // Every element of a uint64 array reads as UInt64.
    let recorded = recorded.iter().map(|v| match v {
        KvValueRef::UInt64(x) => Some(x),
        _ => None,
    });
    for (i, want) in order.zip(recorded) {
        let ranges = c.buffer_ranges(i).unwrap_or_default();
        // Ranges were validated against the file at open.
        let got = tensor_crc32c(
            ranges
                .iter()
                .map(|r| &bytes[r.start as usize..r.end as usize]),
        );
        if Some(u64::from(got)) != want {
            let e = c.entry(i).expect("position in range");
            return Err(Error::format(
                FormatRule::DataCrcMismatch,
                ranges.first().map_or(e.data_offset, |r| r.start),
                format_args!(
                    "tensor {:?}: data CRC-32C is {got:#010x}, the file records {:#010x}",
                    e.name,
                    want.unwrap_or_default()
                ),
            ));
        }
    }
    Ok(DataCrc::Verified(tensors))
}
