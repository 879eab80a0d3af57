//! The index section (`file-format.md` §8): one entry per stored tensor (composite
//! heads and members included) giving its name and where its descriptor and data lie.

use super::cursor::{name, Cursor};
use crate::error::{Error, FormatRule, Result};
use crate::limits::Limits;
use std::collections::HashSet;

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

    /// Absolute offsets of the entry's `descriptor_offset`, `descriptor_length`,
    /// `data_offset` and `data_length` fields, for an entry starting at `at`.
    pub(crate) fn field_offsets(&self, at: u64) -> [u64; 4] {
        let f = at + 2 + self.name.len() as u64;
        [f, f + 8, f + 12, f + 20]
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
/// offset `base`). `sorted` is the header's `SORTED_INDEX` flag.
///
/// Errors (absolute offsets): `Limit` (more entries than `limits.max_tensors`, at the
/// count), `SectionLength` (the count cannot fit, an entry runs past the section, or
/// bytes follow the last entry), `Utf8` (empty or non-UTF-8 name), `ReservedNonZero`
/// (entry `flags`), `DuplicateName` and `SortedIndex` (at the offending entry).
pub fn parse_index(
    bytes: &[u8],
    base: u64,
    sorted: bool,
    limits: &Limits,
) -> Result<Vec<IndexEntry>> {
    parse_located(bytes, base, sorted, limits).map(|(e, _)| e)
}

/// [`parse_index`], also returning the absolute offset of each entry.
pub(crate) fn parse_located(
    bytes: &[u8],
    base: u64,
    sorted: bool,
    limits: &Limits,
) -> Result<(Vec<IndexEntry>, Vec<u64>)> {
    let mut c = Cursor::new(bytes, base, "index");
    let count = c.u64("index_entry_count")?;
    if count > limits.max_tensors {
        return Err(Error::format(
            FormatRule::Limit,
            base,
            format_args!(
                "index_entry_count {count} exceeds the limit of {}",
                limits.max_tensors
            ),
        ));
    }
    // Checked before allocating: every entry needs at least its 34 fixed bytes.
    if count
        .checked_mul(ENTRY_FIXED_LEN)
        .is_none_or(|n| n > c.remaining() as u64)
    {
        return Err(Error::format(
            FormatRule::SectionLength,
            base,
            format_args!(
                "index_entry_count {count} entries cannot fit in {} bytes",
                c.remaining()
            ),
        ));
    }
    let n = count as usize;
    let mut entries: Vec<IndexEntry> = Vec::with_capacity(n);
    let mut offsets = Vec::with_capacity(n);
    let mut names = HashSet::with_capacity(n);
    for _ in 0..n {
        let at = c.at();
        let name = name(&mut c, "tensor name")?;
        let descriptor_offset = c.u64("descriptor_offset")?;
        let descriptor_length = c.u32("descriptor_length")?;
        let data_offset = c.u64("data_offset")?;
        let data_length = c.u64("data_length")?;
        let flags_at = c.at();
        let flags = c.u32("entry flags")?;
        if flags != 0 {
            return Err(Error::format(
                FormatRule::ReservedNonZero,
                flags_at,
                format_args!("index entry flags are {flags:#010x}, not 0"),
            ));
        }
        if !names.insert(name) {
            return Err(Error::format(
                FormatRule::DuplicateName,
                at,
                format_args!("tensor name {name:?} appears twice in the index"),
            ));
        }
        if sorted {
            if let Some(prev) = entries.last() {
                if prev.name.as_bytes() >= name.as_bytes() {
                    return Err(Error::format(
                        FormatRule::SortedIndex,
                        at,
                        format_args!("SORTED_INDEX is set but {name:?} follows {:?}", prev.name),
                    ));
                }
            }
        }
        entries.push(IndexEntry {
            name: name.to_owned(),
            descriptor_offset,
            descriptor_length,
            data_offset,
            data_length,
        });
        offsets.push(at);
    }
    c.finish()?;
    Ok((entries, offsets))
}
