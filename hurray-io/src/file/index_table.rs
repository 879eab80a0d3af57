//! The index section as a reader keeps it (`file-format.md` §8): validated in full
//! once, then held as the offset of each entry in the section (4 bytes) and, unless
//! the entries are in name order already (`SORTED_INDEX`, or names that happen to
//! ascend), their name order (4 bytes).
//! Entries are read from the section's bytes when asked for ([`Index`],
//! [`IndexEntryRef`]). The smallest entry is 35 bytes, so the table costs at most
//! 8 / 35 of the section.

use super::cursor::{name, Cursor};
use super::index::{IndexEntry, ENTRY_FIXED_LEN};
use crate::error::{Error, FormatRule, Result};
use crate::limits::Limits;
use std::ops::Range;

/// The largest index section a table addresses: entry offsets are kept as `u32`.
pub const MAX_INDEX_SECTION: u64 = u32::MAX as u64;

/// A validated index section: where each entry starts and the order of the names.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct IndexTable {
    /// Offset of each entry's `name_length`, relative to the section, index order.
    entries: Vec<u32>,
    /// Entry positions in ascending name-byte order; empty when `sorted` (the
    /// index order is the name order).
    by_name: Vec<u32>,
    /// The names ascend in index order (`SORTED_INDEX` set, or found so).
    sorted: bool,
}

impl IndexTable {
    /// Validates an index section (`bytes` = exactly `index_length` bytes found at
    /// absolute offset `base`; `sorted` is the header's `SORTED_INDEX` flag) and
    /// records where its entries lie.
    ///
    /// Errors (absolute offsets): `Limit` (a section over [`MAX_INDEX_SECTION`]
    /// bytes, or more entries than `limits.max_tensors`, at the count),
    /// `SectionLength` (the count cannot fit, an entry runs past the section, or
    /// bytes follow the last entry), `Utf8` (empty or non-UTF-8 name),
    /// `ReservedNonZero` (entry `flags`), `DuplicateName` and `SortedIndex` (at the
    /// offending entry). When a section breaks several rules, the one met first
    /// reading it front to back is reported.
    pub fn parse(bytes: &[u8], base: u64, sorted: bool, limits: &Limits) -> Result<IndexTable> {
        if bytes.len() as u64 > MAX_INDEX_SECTION {
            return Err(Error::format(
                FormatRule::Limit,
                base,
                format_args!(
                    "an index section of {} bytes is more than the {MAX_INDEX_SECTION} this \
                     reader addresses",
                    bytes.len()
                ),
            ));
        }
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
        let mut t = IndexTable {
            entries: Vec::with_capacity(count as usize),
            by_name: Vec::new(),
            sorted,
        };
        // One pass for everything but (unsorted) duplicates; it stops at the first
        // broken rule, and `entries` then holds the entries read whole before it.
        let mut failure = None;
        for _ in 0..count {
            let at = c.at();
            match check_entry(&mut c, at, sorted, bytes, &t.entries) {
                Ok(()) => t.entries.push((at - base) as u32),
                Err(e) => {
                    failure = Some(e);
                    break;
                }
            }
        }
        let ascending = (1..t.entries.len())
            .all(|i| name_bytes(bytes, t.entries[i - 1]) < name_bytes(bytes, t.entries[i]));
        if !sorted && !ascending {
            // Duplicates, found by sorting: the entry reported is the one at which a
            // front-to-back reader would first have seen a name again.
            t.by_name = (0..t.entries.len() as u32).collect();
            let name = |i: u32| name_bytes(bytes, t.entries[i as usize]);
            t.by_name
                .sort_unstable_by(|&a, &b| name(a).cmp(name(b)).then(a.cmp(&b)));
            let again = t
                .by_name
                .windows(2)
                .filter(|w| name(w[0]) == name(w[1]))
                .map(|w| w[1])
                .min();
            if let Some(i) = again {
                return Err(duplicate(
                    base + u64::from(t.entries[i as usize]),
                    &String::from_utf8_lossy(name(i)),
                ));
            }
        }
        if let Some(e) = failure {
            return Err(e);
        }
        c.finish()?;
        // Strictly ascending names need no name order of their own.
        t.sorted = sorted || ascending;
        Ok(t)
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when there are no entries.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Bytes of memory this table holds beyond its own struct, for accounting.
    pub fn heap_bytes(&self) -> usize {
        4 * (self.entries.capacity() + self.by_name.capacity())
    }

    /// The entries, read from `section` (the bytes this table was parsed from,
    /// which start at absolute offset `base`). With other bytes, entries read are
    /// meaningless (never out of bounds).
    pub fn view<'a>(&'a self, section: &'a [u8], base: u64) -> Index<'a> {
        Index {
            table: self,
            bytes: section,
            base,
        }
    }
}

fn duplicate(at: u64, name: &str) -> Error {
    Error::format(
        FormatRule::DuplicateName,
        at,
        format_args!("tensor name {name:?} appears twice in the index"),
    )
}

/// Checks one entry (the cursor at its first byte, absolute `at`); `before` are the
/// entries read so far (relative offsets into `bytes`).
fn check_entry(
    c: &mut Cursor<'_>,
    at: u64,
    sorted: bool,
    bytes: &[u8],
    before: &[u32],
) -> Result<()> {
    let name = name(c, "tensor name")?;
    c.u64("descriptor_offset")?;
    c.u32("descriptor_length")?;
    c.u64("data_offset")?;
    c.u64("data_length")?;
    let flags_at = c.at();
    let flags = c.u32("entry flags")?;
    if flags != 0 {
        return Err(Error::format(
            FormatRule::ReservedNonZero,
            flags_at,
            format_args!("index entry flags are {flags:#010x}, not 0"),
        ));
    }
    if !sorted {
        return Ok(());
    }
    let Some(&prev) = before.last() else {
        return Ok(());
    };
    let prev = name_bytes(bytes, prev);
    if prev < name.as_bytes() {
        return Ok(());
    }
    // The names before are strictly ascending: a duplicate among them is found by
    // binary search, and a duplicate is reported before an order violation.
    let seen = before
        .binary_search_by(|&o| name_bytes(bytes, o).cmp(name.as_bytes()))
        .is_ok();
    if seen {
        return Err(duplicate(at, name));
    }
    Err(Error::format(
        FormatRule::SortedIndex,
        at,
        format_args!(
            "SORTED_INDEX is set but {name:?} follows {:?}",
            String::from_utf8_lossy(prev)
        ),
    ))
}

// ---------------------------------------------------------------- bounded reading

fn u16_at(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(
        b.get(at..at.checked_add(2)?)?.try_into().ok()?,
    ))
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(
        b.get(at..at.checked_add(4)?)?.try_into().ok()?,
    ))
}

fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(
        b.get(at..at.checked_add(8)?)?.try_into().ok()?,
    ))
}

/// The name bytes of the entry at relative offset `at` (empty on bytes other than
/// the validated section).
fn name_bytes(b: &[u8], at: u32) -> &[u8] {
    let at = at as usize;
    u16_at(b, at)
        .and_then(|n| b.get(at + 2..at + 2 + n as usize))
        .unwrap_or_default()
}

// ---------------------------------------------------------------- views

/// The index entries of an open file, in index order: a view over the validated
/// section, borrowed from the reader.
#[derive(Clone, Copy, Debug)]
pub struct Index<'a> {
    table: &'a IndexTable,
    bytes: &'a [u8],
    base: u64,
}

impl<'a> Index<'a> {
    /// Number of entries.
    pub fn len(&self) -> usize {
        self.table.len()
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.table.is_empty()
    }

    /// Entry `i` in index order, `None` past the end.
    pub fn get(&self, i: usize) -> Option<IndexEntryRef<'a>> {
        let rel = *self.table.entries.get(i)?;
        let name = name_bytes(self.bytes, rel);
        let f = rel as usize + 2 + name.len();
        let b = self.bytes;
        Some(IndexEntryRef {
            name: std::str::from_utf8(name).unwrap_or_default(),
            descriptor_offset: u64_at(b, f).unwrap_or_default(),
            descriptor_length: u32_at(b, f + 8).unwrap_or_default(),
            data_offset: u64_at(b, f + 12).unwrap_or_default(),
            data_length: u64_at(b, f + 20).unwrap_or_default(),
            offset: self.base + u64::from(rel),
        })
    }

    /// The entries in index order.
    pub fn iter(&self) -> IndexIter<'a> {
        IndexIter {
            index: *self,
            range: 0..self.len(),
        }
    }

    /// Index position of the entry named `name` (byte-exact), by binary search.
    pub fn position(&self, name: &str) -> Option<usize> {
        let t = self.table;
        let key = |o: u32| name_bytes(self.bytes, o);
        if t.sorted {
            t.entries
                .binary_search_by(|&o| key(o).cmp(name.as_bytes()))
                .ok()
        } else {
            t.by_name
                .binary_search_by(|&i| key(t.entries[i as usize]).cmp(name.as_bytes()))
                .ok()
                .map(|p| t.by_name[p] as usize)
        }
    }
}

impl<'a> IntoIterator for Index<'a> {
    type Item = IndexEntryRef<'a>;
    type IntoIter = IndexIter<'a>;
    fn into_iter(self) -> IndexIter<'a> {
        self.iter()
    }
}

/// The entries of an [`Index`] view, in index order.
#[derive(Clone, Debug)]
pub struct IndexIter<'a> {
    index: Index<'a>,
    range: Range<usize>,
}

impl<'a> Iterator for IndexIter<'a> {
    type Item = IndexEntryRef<'a>;
    fn next(&mut self) -> Option<IndexEntryRef<'a>> {
        self.range.next().and_then(|i| self.index.get(i))
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.range.size_hint()
    }
    fn nth(&mut self, n: usize) -> Option<IndexEntryRef<'a>> {
        self.range.nth(n).and_then(|i| self.index.get(i))
    }
}

impl<'a> DoubleEndedIterator for IndexIter<'a> {
    fn next_back(&mut self) -> Option<IndexEntryRef<'a>> {
        self.range.next_back().and_then(|i| self.index.get(i))
    }
}

impl ExactSizeIterator for IndexIter<'_> {}

/// One index entry read from a file, borrowed from the reader: the fields of
/// [`IndexEntry`] with the name a slice of the file, plus where the entry lies.
/// Offsets are absolute byte offsets, lengths byte counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct IndexEntryRef<'a> {
    /// The tensor's name: 1..=65 535 bytes of UTF-8, unique in the file, opaque.
    pub name: &'a str,
    /// Offset of the descriptor's first byte (`HRRY`).
    pub descriptor_offset: u64,
    /// Length of the descriptor in bytes (equal to its own `descriptor_length`).
    pub descriptor_length: u32,
    /// Offset of buffer 0 (meaningless for a composite head).
    pub data_offset: u64,
    /// Bytes from buffer 0's start to the last buffer's end; 0 for heads.
    pub data_length: u64,
    /// Absolute offset of the entry's first byte (its `name_length`) in the index.
    pub offset: u64,
}

impl IndexEntryRef<'_> {
    /// An owned copy (without [`offset`](Self::offset)).
    pub fn to_owned(&self) -> IndexEntry {
        IndexEntry {
            name: self.name.to_owned(),
            descriptor_offset: self.descriptor_offset,
            descriptor_length: self.descriptor_length,
            data_offset: self.data_offset,
            data_length: self.data_length,
        }
    }

    /// Encoded size of the entry in bytes.
    pub fn encoded_len(&self) -> u64 {
        ENTRY_FIXED_LEN + self.name.len() as u64
    }

    /// Absolute offsets of the entry's `descriptor_offset`, `descriptor_length`,
    /// `data_offset` and `data_length` fields.
    pub fn field_offsets(&self) -> [u64; 4] {
        let f = self.offset + 2 + self.name.len() as u64;
        [f, f + 8, f + 12, f + 20]
    }
}

impl PartialEq<IndexEntry> for IndexEntryRef<'_> {
    fn eq(&self, o: &IndexEntry) -> bool {
        self.name == o.name
            && self.descriptor_offset == o.descriptor_offset
            && self.descriptor_length == o.descriptor_length
            && self.data_offset == o.data_offset
            && self.data_length == o.data_length
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::file::index::encode_index;

    fn entry(name: &str, d: u64) -> IndexEntry {
        IndexEntry {
            name: name.into(),
            descriptor_offset: d,
            descriptor_length: 20,
            data_offset: 4096,
            data_length: 0,
        }
    }

    #[test]
    fn entries_read_back_and_are_found_by_name() {
        let want: Vec<IndexEntry> = ["w", "b", "ab", "a", "z"]
            .iter()
            .enumerate()
            .map(|(i, n)| entry(n, 64 + 8 * i as u64))
            .collect();
        let b = encode_index(&want).unwrap();
        let t = IndexTable::parse(&b, 1000, false, &Limits::default()).unwrap();
        let ix = t.view(&b, 1000);
        assert_eq!(ix.len(), 5);
        let mut at = 1008;
        for (i, (e, w)) in ix.iter().zip(&want).enumerate() {
            assert_eq!(e, *w);
            assert_eq!(e.offset, at);
            at += e.encoded_len();
            assert_eq!(ix.position(&w.name), Some(i));
        }
        assert_eq!(ix.position("c"), None);
        assert_eq!(t.heap_bytes(), 40);
        assert!(!t.sorted);

        let mut sorted = want.clone();
        sorted.sort_by(|a, b| a.name.cmp(&b.name));
        let b = encode_index(&sorted).unwrap();
        // Ascending names need no name order, flagged or not.
        for flag in [true, false] {
            let t = IndexTable::parse(&b, 0, flag, &Limits::default()).unwrap();
            assert!(t.by_name.is_empty() && t.sorted);
            let ix = t.view(&b, 0);
            for (i, w) in sorted.iter().enumerate() {
                assert_eq!(ix.position(&w.name), Some(i));
            }
            assert_eq!(ix.position("aa"), None);
        }
    }

    #[test]
    fn duplicates_and_order_are_reported_where_a_front_to_back_reader_would() {
        let names = |n: &[&str]| -> Vec<IndexEntry> { n.iter().map(|n| entry(n, 64)).collect() };
        let rule = |n: &[&str], sorted: bool| {
            let b = encode_index(&names(n)).unwrap();
            let e = IndexTable::parse(&b, 0, sorted, &Limits::default()).unwrap_err();
            let Error::Format { offset, .. } = e else {
                panic!("{e}")
            };
            (e.rule().unwrap(), offset)
        };
        // Entries are 35 bytes (one-letter names) after the 8-byte count.
        assert_eq!(
            rule(&["a", "b", "b", "a"], false),
            (FormatRule::DuplicateName, 8 + 2 * 35)
        );
        assert_eq!(
            rule(&["a", "b", "c", "a"], true),
            (FormatRule::DuplicateName, 8 + 3 * 35)
        );
        assert_eq!(
            rule(&["a", "c", "b"], true),
            (FormatRule::SortedIndex, 8 + 2 * 35)
        );
        assert_eq!(rule(&["a", "a"], true), (FormatRule::DuplicateName, 8 + 35));
    }

    #[test]
    fn other_bytes_read_as_nothing_never_out_of_bounds() {
        let want: Vec<IndexEntry> = (0..10).map(|i| entry(&format!("t{i}"), 64)).collect();
        let b = encode_index(&want).unwrap();
        let t = IndexTable::parse(&b, 0, false, &Limits::default()).unwrap();
        for cut in [0, 1, 9, b.len() / 2] {
            let ix = t.view(&b[..cut], 0);
            assert_eq!(ix.iter().count(), 10);
            let _ = ix.position("t3");
        }
    }
}
