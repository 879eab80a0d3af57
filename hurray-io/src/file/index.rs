//! The index section (`file-format.md` §8): one entry per stored tensor (composite
//! heads and members included) giving its name and where its descriptor and data lie.

use super::index_table::IndexTable;
use crate::error::Result;
use crate::limits::Limits;

/// Fixed bytes of an entry besides its name (§8.2: size = 34 + name length).
pub const ENTRY_FIXED_LEN: u64 = 34;

/// One index entry. Offsets are absolute byte offsets, lengths are byte counts.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct IndexEntry {
    /// The tensor's name: 1..=65 535 bytes of UTF-8, unique in the file, opaque.
    pub name: String,
    /// Offset of the descriptor's first byte (`HRRY`), a multiple of 8.
    pub descriptor_offset: u64,
    /// Length of the descriptor in bytes; equals the descriptor's own
    /// `descriptor_length` (its bytes 6–9).
    pub descriptor_length: u32,
    /// Offset of buffer 0 (a multiple of `data_buffer_alignment` when the tensor has
    /// buffers; meaningless for a composite head).
    pub data_offset: u64,
    /// Bytes from buffer 0's start to the last buffer's end: buffer sizes plus the
    /// padding between buffers, without the padding after the last. 0 for heads.
    pub data_length: u64,
}

impl IndexEntry {
    /// Encoded size of the entry in bytes.
    pub fn encoded_len(&self) -> u64 {
        ENTRY_FIXED_LEN + self.name.len() as u64
    }
}

/// Encodes an index section: `index_entry_count`, then the entries in the given order.
/// Names must be non-empty and at most 65 535 bytes (the writer checks them when
/// tensors are added; here a longer name is refused with `Limit`).
pub fn encode_index(entries: &[IndexEntry]) -> Result<Vec<u8>> {
    let len = entries
        .iter()
        .fold(8u64, |a, e| a.saturating_add(e.encoded_len()));
    let mut out = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
    out.extend_from_slice(&(entries.len() as u64).to_le_bytes());
    for e in entries {
        super::kv::check_key(&e.name, 0, "tensor name")?;
        out.extend_from_slice(&(e.name.len() as u16).to_le_bytes());
        out.extend_from_slice(e.name.as_bytes());
        out.extend_from_slice(&e.descriptor_offset.to_le_bytes());
        out.extend_from_slice(&e.descriptor_length.to_le_bytes());
        out.extend_from_slice(&e.data_offset.to_le_bytes());
        out.extend_from_slice(&e.data_length.to_le_bytes());
        out.extend_from_slice(&0u32.to_le_bytes());
    }
    Ok(out)
}

/// Parses an index section (`bytes` = exactly `index_length` bytes found at absolute
/// offset `base`; `sorted` is the header's `SORTED_INDEX` flag) into owned entries:
/// [`IndexTable::parse`], then a copy of every entry. A file reader keeps the
/// [`IndexTable`] instead.
///
/// Errors: those of [`IndexTable::parse`].
pub fn parse_index(
    bytes: &[u8],
    base: u64,
    sorted: bool,
    limits: &Limits,
) -> Result<Vec<IndexEntry>> {
    let t = IndexTable::parse(bytes, base, sorted, limits)?;
    Ok(t.view(bytes, base).iter().map(|e| e.to_owned()).collect())
}
