//! The KV section as a reader keeps it (`file-format.md` §7): validated in full once,
//! then held as a few offsets into the section's own bytes, each value decoded when
//! it is read ([`Kv`], [`KvValueRef`], [`KvArrayRef`]).
//!
//! What a [`KvTable`] costs, whatever the values hold: 8 bytes per entry (where it
//! starts, and its place in key order) plus 4 bytes per [`STEP`] elements of each
//! string or byte-sequence array with more than [`STEP`] elements. The smallest
//! entry is 5 bytes and the smallest array element 1 byte, so the table never
//! exceeds 1.6 times the section, and for a few large arrays it is a fraction of a
//! percent of it.

use super::cursor::{name, Cursor};
use super::kv::{tag, KvArray, KvEntry, KvValue};
use crate::error::{Error, FormatRule, Result};
use crate::limits::Limits;
use std::fmt;
use std::ops::Range;

/// Elements between two remembered offsets of a string or byte-sequence array:
/// reading element `k` skips at most `STEP - 1` length prefixes.
pub const STEP: usize = 64;

/// A validated KV section: where each entry starts and the order of the keys.
/// Values are read from the section's bytes through [`KvTable::view`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KvTable {
    /// Offset of each entry's `key_length`, relative to the section, in file order.
    entries: Vec<u32>,
    /// Entry positions in ascending key-byte order.
    by_key: Vec<u32>,
    /// Per string or byte-sequence array of more than `STEP` elements, in entry
    /// order: its entry position and the offset (relative to the array's first
    /// element) of elements `0, STEP, 2 STEP, …`.
    steps: Vec<(u32, Box<[u32]>)>,
}

impl KvTable {
    /// Validates a KV section (`bytes` = exactly `kv_length` bytes found at absolute
    /// offset `base`), rejecting everything §14 items 9–11, 20–22 and 25 name, and
    /// records where its entries lie. Nothing is allocated from a count before it
    /// is checked against the bytes that exist; strings are checked for UTF-8 and
    /// bools for 0/1 in place, without being copied.
    ///
    /// Errors (absolute offsets): `Limit` (more than `limits.max_kv_entries`),
    /// `SectionLength` (an entry runs past the section, or bytes follow the last one),
    /// `Utf8` (empty or non-UTF-8 key, non-UTF-8 string), `KvValueTag` (reserved,
    /// private or invalid value tag; array element tag outside `0x01`–`0x06`),
    /// `KvBool`, `DuplicateKey` (at the second entry's first byte). When a section
    /// breaks several rules, the one met first reading it front to back is reported.
    pub fn parse(bytes: &[u8], base: u64, limits: &Limits) -> Result<KvTable> {
        let mut c = Cursor::new(bytes, base, "KV");
        let count_at = c.at();
        let count = c.u32("kv_count")?;
        if u64::from(count) > limits.max_kv_entries {
            return Err(Error::format(
                FormatRule::Limit,
                count_at,
                format_args!(
                    "kv_count {count} exceeds the limit of {}",
                    limits.max_kv_entries
                ),
            ));
        }
        // Checked before allocating. Smallest entry: key_length, the tag, a bool (an
        // empty key is rejected later, with its own rule).
        if u64::from(count) * 4 > c.remaining() as u64 {
            return Err(Error::format(
                FormatRule::SectionLength,
                count_at,
                format_args!(
                    "kv_count {count} entries cannot fit in {} bytes",
                    c.remaining()
                ),
            ));
        }
        let mut t = KvTable {
            entries: Vec::with_capacity(count as usize),
            by_key: Vec::new(),
            steps: Vec::new(),
        };
        // One pass for everything but duplicates; it stops at the first broken rule.
        // `keyed` entries have a valid key (the one a failure stopped in included,
        // when its key was read before the failure).
        let mut failure = None;
        let mut keyed = 0;
        for i in 0..count {
            let at = (c.at() - base) as u32;
            if let Err(e) = name(&mut c, "KV key") {
                failure = Some(e);
                break;
            }
            t.entries.push(at);
            keyed += 1;
            if let Err(e) = check_value(&mut c, i, &mut t.steps) {
                failure = Some(e);
                break;
            }
        }
        // Duplicate keys, found by sorting: the one reported is the entry at which a
        // front-to-back reader would first have seen a key again.
        t.by_key = (0..keyed).collect();
        let key = |i: u32| key_bytes(bytes, t.entries[i as usize]);
        t.by_key
            .sort_unstable_by(|&a, &b| key(a).cmp(key(b)).then(a.cmp(&b)));
        let again = t
            .by_key
            .windows(2)
            .filter(|w| key(w[0]) == key(w[1]))
            .map(|w| w[1])
            .min();
        if let Some(i) = again {
            let k = String::from_utf8_lossy(key(i));
            return Err(Error::format(
                FormatRule::DuplicateKey,
                base + u64::from(t.entries[i as usize]),
                format_args!("KV key {k:?} appears twice"),
            ));
        }
        if let Some(e) = failure {
            return Err(e);
        }
        c.finish()?;
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

    /// Bytes of memory this table holds beyond its own struct (its vectors'
    /// capacities), for accounting.
    pub fn heap_bytes(&self) -> usize {
        4 * (self.entries.capacity() + self.by_key.capacity())
            + self.steps.capacity() * std::mem::size_of::<(u32, Box<[u32]>)>()
            + self.steps.iter().map(|(_, s)| 4 * s.len()).sum::<usize>()
    }

    /// The entries, read from `section`: the bytes this table was parsed from.
    /// With other bytes, values read are meaningless (never out of bounds).
    pub fn view<'a>(&'a self, section: &'a [u8]) -> Kv<'a> {
        Kv {
            table: self,
            bytes: section,
        }
    }
}

/// Checks the value of entry `i` (the cursor is at its tag) and records the steps of
/// a long string or byte-sequence array.
fn check_value(c: &mut Cursor<'_>, i: u32, steps: &mut Vec<(u32, Box<[u32]>)>) -> Result<()> {
    let tag_at = c.at();
    let t = c.u8("value_tag")?;
    if t != tag::ARRAY {
        return match t {
            tag::STRING => check_str(c),
            tag::INT64 | tag::UINT64 | tag::FLOAT64 => c.take(8, kind(t)).map(drop),
            tag::BOOL => check_bools(c, 1),
            tag::BYTES => check_blob(c, "byte sequence").map(drop),
            _ => Err(bad_tag(tag_at, t, "KV value tag")),
        };
    }
    let tag_at = c.at();
    let t = c.u8("array element tag")?;
    let min = match t {
        tag::STRING | tag::BYTES => 4,
        tag::INT64 | tag::UINT64 | tag::FLOAT64 => 8,
        tag::BOOL => 1,
        tag::ARRAY => {
            return Err(Error::format(
                FormatRule::KvValueTag,
                tag_at,
                "KV arrays cannot nest (element tag 0x07)",
            ))
        }
        _ => return Err(bad_tag(tag_at, t, "KV array element tag")),
    };
    let count_at = c.at();
    let n = c.u32("array element count")? as usize;
    // Checked before anything is sized from it: every element needs `min` bytes.
    if n as u64 * min > c.remaining() as u64 {
        return Err(Error::format(
            FormatRule::SectionLength,
            count_at,
            format_args!(
                "{n} array elements cannot fit in the {} bytes left",
                c.remaining()
            ),
        ));
    }
    match t {
        tag::BOOL => check_bools(c, n),
        tag::INT64 | tag::UINT64 | tag::FLOAT64 => c.take(n * 8, kind(t)).map(drop),
        _ => {
            let first = c.at();
            let mut marks = Vec::with_capacity(if n > STEP { n.div_ceil(STEP) } else { 0 });
            for k in 0..n {
                if n > STEP && k % STEP == 0 {
                    // Relative to the first element, inside a u32 section.
                    marks.push((c.at() - first) as u32);
                }
                if t == tag::STRING {
                    check_str(c)?;
                } else {
                    check_blob(c, "byte sequence")?;
                }
            }
            if n > STEP {
                steps.push((i, marks.into_boxed_slice()));
            }
            Ok(())
        }
    }
}

fn kind(t: u8) -> &'static str {
    match t {
        tag::INT64 => "int64",
        tag::UINT64 => "uint64",
        _ => "float64",
    }
}

/// A u32-length-prefixed blob (`what`: "string value" or "byte sequence"); returns
/// its absolute start and its bytes.
fn check_blob<'a>(c: &mut Cursor<'a>, what: &str) -> Result<(u64, &'a [u8])> {
    let len = if what == "byte sequence" {
        c.u32("byte sequence length")?
    } else {
        c.u32("string length")?
    } as usize;
    let at = c.at();
    Ok((at, c.take(len, what)?))
}

fn check_str(c: &mut Cursor<'_>) -> Result<()> {
    let (at, b) = check_blob(c, "string value")?;
    std::str::from_utf8(b).map(drop).map_err(|e| {
        Error::format(
            FormatRule::Utf8,
            at + e.valid_up_to() as u64,
            "KV string value is not valid UTF-8",
        )
    })
}

fn check_bools(c: &mut Cursor<'_>, n: usize) -> Result<()> {
    let at = c.at();
    let b = c.take(n, "bool")?;
    match b.iter().position(|&v| v > 1) {
        None => Ok(()),
        Some(k) => Err(Error::format(
            FormatRule::KvBool,
            at + k as u64,
            format_args!("KV bool is {:#04x}, not 0 or 1", b[k]),
        )),
    }
}

/// The error for a value or element tag this reader does not accept.
pub(crate) fn bad_tag(at: u64, t: u8, what: &str) -> Error {
    let kind = match t {
        0x08..=0xEF | 0x00 => "reserved",
        0xF0..=0xFE => "implementation-private without an agreement",
        _ => "invalid",
    };
    Error::format(
        FormatRule::KvValueTag,
        at,
        format_args!("{what} {t:#04x} is {kind}"),
    )
}

// ---------------------------------------------------------------- bounded reading
//
// Reads of a validated section. They cannot fail on the bytes the table was built
// from; on any other bytes (a file changed under its mapping, against the reader's
// contract) they yield nothing rather than read out of bounds or panic.

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

/// The key bytes of the entry at `at`.
fn key_bytes(b: &[u8], at: u32) -> &[u8] {
    let at = at as usize;
    u16_at(b, at)
        .and_then(|n| b.get(at + 2..at + 2 + n as usize))
        .unwrap_or_default()
}

fn utf8(b: &[u8]) -> &str {
    std::str::from_utf8(b).unwrap_or_default()
}

/// A u32-length-prefixed blob at `at`: its bytes and the offset after it.
fn blob_at(b: &[u8], at: usize) -> Option<(&[u8], usize)> {
    let n = u32_at(b, at)? as usize;
    let end = (at + 4).checked_add(n)?;
    Some((b.get(at + 4..end)?, end))
}

// ---------------------------------------------------------------- views

/// The KV entries of an open file, in file order: a view over the validated
/// section that decodes each value when it is read (borrowed from the reader).
#[derive(Clone, Copy)]
pub struct Kv<'a> {
    table: &'a KvTable,
    bytes: &'a [u8],
}

impl fmt::Debug for Kv<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<'a> Kv<'a> {
    /// Number of entries.
    pub fn len(&self) -> usize {
        self.table.len()
    }

    /// True when there are none (also when the file has no KV section).
    pub fn is_empty(&self) -> bool {
        self.table.is_empty()
    }

    /// Entry `i` in file order, `None` past the end.
    pub fn get(&self, i: usize) -> Option<KvEntryRef<'a>> {
        let at = *self.table.entries.get(i)? as usize;
        let key = key_bytes(self.bytes, at as u32);
        let v = at + 2 + key.len();
        Some(KvEntryRef {
            key: utf8(key),
            value: self.value_at(i, v).unwrap_or(KvValueRef::Bytes(&[])),
        })
    }

    /// The entries in file order.
    pub fn iter(&self) -> KvIter<'a> {
        KvIter {
            kv: *self,
            range: 0..self.len(),
        }
    }

    /// Position of the entry whose key is `key` (byte-exact), by binary search.
    pub fn position(&self, key: &str) -> Option<usize> {
        let t = self.table;
        t.by_key
            .binary_search_by(|&i| key_bytes(self.bytes, t.entries[i as usize]).cmp(key.as_bytes()))
            .ok()
            .map(|p| t.by_key[p] as usize)
    }

    /// The value stored under `key` (byte-exact).
    pub fn value(&self, key: &str) -> Option<KvValueRef<'a>> {
        self.position(key)
            .and_then(|i| self.get(i))
            .map(|e| e.value)
    }

    /// An owned copy of every entry.
    pub fn to_vec(&self) -> Vec<KvEntry> {
        self.iter().map(|e| e.to_owned()).collect()
    }

    /// The value of entry `i`, whose tag is at `at`.
    fn value_at(&self, i: usize, at: usize) -> Option<KvValueRef<'a>> {
        let b = self.bytes;
        let t = *b.get(at)?;
        let p = at + 1;
        Some(match t {
            tag::STRING => KvValueRef::String(utf8(blob_at(b, p)?.0)),
            tag::INT64 => KvValueRef::Int64(u64_at(b, p)? as i64),
            tag::UINT64 => KvValueRef::UInt64(u64_at(b, p)?),
            tag::FLOAT64 => KvValueRef::Float64(f64::from_bits(u64_at(b, p)?)),
            tag::BOOL => KvValueRef::Bool(*b.get(p)? != 0),
            tag::BYTES => KvValueRef::Bytes(blob_at(b, p)?.0),
            _ => {
                let element_tag = *b.get(p)?;
                let count = u32_at(b, p + 1)?;
                let first = p + 5;
                let steps = self
                    .table
                    .steps
                    .binary_search_by_key(&(i as u32), |s| s.0)
                    .map_or(&[][..], |k| &self.table.steps[k].1[..]);
                KvValueRef::Array(KvArrayRef {
                    element_tag,
                    count,
                    bytes: b.get(first..).unwrap_or_default(),
                    steps,
                })
            }
        })
    }
}

impl<'a> IntoIterator for Kv<'a> {
    type Item = KvEntryRef<'a>;
    type IntoIter = KvIter<'a>;
    fn into_iter(self) -> KvIter<'a> {
        self.iter()
    }
}

/// The entries of a [`Kv`] view, in file order.
#[derive(Clone, Debug)]
pub struct KvIter<'a> {
    kv: Kv<'a>,
    range: Range<usize>,
}

impl<'a> Iterator for KvIter<'a> {
    type Item = KvEntryRef<'a>;
    fn next(&mut self) -> Option<KvEntryRef<'a>> {
        self.range.next().and_then(|i| self.kv.get(i))
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.range.size_hint()
    }
}

impl<'a> DoubleEndedIterator for KvIter<'a> {
    fn next_back(&mut self) -> Option<KvEntryRef<'a>> {
        self.range.next_back().and_then(|i| self.kv.get(i))
    }
}

impl ExactSizeIterator for KvIter<'_> {}

/// One KV entry read from a file: its key and value, borrowed from the reader.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct KvEntryRef<'a> {
    /// The key (1..=65 535 bytes of UTF-8).
    pub key: &'a str,
    /// The value.
    pub value: KvValueRef<'a>,
}

impl KvEntryRef<'_> {
    /// An owned copy.
    pub fn to_owned(&self) -> KvEntry {
        KvEntry {
            key: self.key.to_owned(),
            value: self.value.to_owned(),
        }
    }
}

/// One KV value read from a file (§7.3), borrowed from the reader: strings and bytes
/// are slices of the file, arrays are [`KvArrayRef`] views decoded element by element.
/// As an array element it is never `Array`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum KvValueRef<'a> {
    /// `0x01`: a UTF-8 string.
    String(&'a str),
    /// `0x02`: a signed 64-bit integer.
    Int64(i64),
    /// `0x03`: an unsigned 64-bit integer.
    UInt64(u64),
    /// `0x04`: a binary64 float (any bit pattern, NaN included).
    Float64(f64),
    /// `0x05`: a boolean.
    Bool(bool),
    /// `0x06`: opaque bytes.
    Bytes(&'a [u8]),
    /// `0x07`: a homogeneous array.
    Array(KvArrayRef<'a>),
}

impl<'a> KvValueRef<'a> {
    /// The value tag byte.
    pub fn tag(&self) -> u8 {
        match self {
            KvValueRef::String(_) => tag::STRING,
            KvValueRef::Int64(_) => tag::INT64,
            KvValueRef::UInt64(_) => tag::UINT64,
            KvValueRef::Float64(_) => tag::FLOAT64,
            KvValueRef::Bool(_) => tag::BOOL,
            KvValueRef::Bytes(_) => tag::BYTES,
            KvValueRef::Array(_) => tag::ARRAY,
        }
    }

    /// The string, if this is a string value.
    pub fn as_str(&self) -> Option<&'a str> {
        match self {
            KvValueRef::String(s) => Some(s),
            _ => None,
        }
    }

    /// The integer, if this is an int64 value.
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            KvValueRef::Int64(v) => Some(*v),
            _ => None,
        }
    }

    /// The array, if this is an array value.
    pub fn as_array(&self) -> Option<KvArrayRef<'a>> {
        match self {
            KvValueRef::Array(a) => Some(*a),
            _ => None,
        }
    }

    /// An owned copy (arrays are decoded in full).
    pub fn to_owned(&self) -> KvValue {
        match *self {
            KvValueRef::String(s) => KvValue::String(s.to_owned()),
            KvValueRef::Int64(v) => KvValue::Int64(v),
            KvValueRef::UInt64(v) => KvValue::UInt64(v),
            KvValueRef::Float64(v) => KvValue::Float64(v),
            KvValueRef::Bool(v) => KvValue::Bool(v),
            KvValueRef::Bytes(b) => KvValue::Bytes(b.to_vec()),
            KvValueRef::Array(a) => KvValue::Array(a.to_owned()),
        }
    }
}

impl PartialEq<KvValue> for KvValueRef<'_> {
    fn eq(&self, other: &KvValue) -> bool {
        match (self, other) {
            (KvValueRef::String(a), KvValue::String(b)) => a == b,
            (KvValueRef::Int64(a), KvValue::Int64(b)) => a == b,
            (KvValueRef::UInt64(a), KvValue::UInt64(b)) => a == b,
            (KvValueRef::Float64(a), KvValue::Float64(b)) => a == b,
            (KvValueRef::Bool(a), KvValue::Bool(b)) => a == b,
            (KvValueRef::Bytes(a), KvValue::Bytes(b)) => a == b,
            (KvValueRef::Array(a), KvValue::Array(b)) => a == b,
            _ => false,
        }
    }
}

/// A homogeneous KV array read from a file (tag `0x07`): its element tag, its
/// length, and its elements decoded on access from the file's bytes. Fixed-size
/// elements (int64, uint64, float64, bool) are read in O(1); string and byte
/// elements in O([`STEP`]) by [`get`](Self::get), in O(1) each by
/// [`iter`](Self::iter).
#[derive(Clone, Copy)]
pub struct KvArrayRef<'a> {
    element_tag: u8,
    count: u32,
    /// From the first element to the end of the section.
    bytes: &'a [u8],
    /// Offsets of elements `0, STEP, …` (strings and byte sequences), relative to
    /// `bytes`; empty for up to `STEP` elements.
    steps: &'a [u32],
}

impl fmt::Debug for KvArrayRef<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KvArrayRef")
            .field("element_tag", &self.element_tag)
            .field("len", &self.count)
            .finish()
    }
}

impl<'a> KvArrayRef<'a> {
    /// The element tag (`0x01`–`0x06`).
    pub fn element_tag(&self) -> u8 {
        self.element_tag
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.count as usize
    }

    /// True when the array has no elements.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Element `k` (never an `Array`), `None` past the end.
    pub fn get(&self, k: usize) -> Option<KvValueRef<'a>> {
        if k >= self.len() {
            return None;
        }
        let b = self.bytes;
        Some(match self.element_tag {
            tag::BOOL => KvValueRef::Bool(*b.get(k)? != 0),
            tag::INT64 => KvValueRef::Int64(u64_at(b, k * 8)? as i64),
            tag::UINT64 => KvValueRef::UInt64(u64_at(b, k * 8)?),
            tag::FLOAT64 => KvValueRef::Float64(f64::from_bits(u64_at(b, k * 8)?)),
            t => {
                let at = self.offset_of(k)?;
                let (blob, _) = blob_at(b, at)?;
                if t == tag::STRING {
                    KvValueRef::String(utf8(blob))
                } else {
                    KvValueRef::Bytes(blob)
                }
            }
        })
    }

    /// The elements as stored, for int64, uint64 and float64 arrays (8 little-endian
    /// bytes each) and bool arrays (1 byte, 0 or 1, each), borrowed from the section
    /// (no alignment promised); `None` for string and byte-sequence arrays, whose
    /// elements carry length prefixes.
    pub fn fixed_bytes(&self) -> Option<&'a [u8]> {
        let size = match self.element_tag {
            tag::BOOL => 1,
            tag::INT64 | tag::UINT64 | tag::FLOAT64 => 8,
            _ => return None,
        };
        self.bytes.get(..self.len().checked_mul(size)?)
    }

    /// Offset of the length prefix of string or byte element `k`, relative to the
    /// first element.
    pub fn offset_of(&self, k: usize) -> Option<usize> {
        if k >= self.len() {
            return None;
        }
        let (mut at, from) = match self.steps.get(k / STEP) {
            Some(&s) => (s as usize, k - k % STEP),
            None => (0, 0),
        };
        for _ in from..k {
            at = blob_at(self.bytes, at)?.1;
        }
        Some(at)
    }

    /// The elements in order.
    pub fn iter(&self) -> KvArrayIter<'a> {
        KvArrayIter {
            array: *self,
            k: 0,
            at: 0,
        }
    }

    /// An owned copy of every element.
    pub fn to_owned(&self) -> KvArray {
        fn all<T>(a: &KvArrayRef<'_>, f: impl Fn(KvValueRef<'_>) -> Option<T>) -> Vec<T> {
            a.iter().filter_map(f).collect()
        }
        match self.element_tag {
            tag::STRING => KvArray::String(all(self, |v| v.as_str().map(str::to_owned))),
            tag::INT64 => KvArray::Int64(all(self, |v| v.as_i64())),
            tag::UINT64 => KvArray::UInt64(all(self, |v| match v {
                KvValueRef::UInt64(x) => Some(x),
                _ => None,
            })),
            tag::FLOAT64 => KvArray::Float64(all(self, |v| match v {
                KvValueRef::Float64(x) => Some(x),
                _ => None,
            })),
            tag::BOOL => KvArray::Bool(all(self, |v| match v {
                KvValueRef::Bool(x) => Some(x),
                _ => None,
            })),
            _ => KvArray::Bytes(all(self, |v| match v {
                KvValueRef::Bytes(x) => Some(x.to_vec()),
                _ => None,
            })),
        }
    }
}

impl PartialEq for KvArrayRef<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.element_tag == other.element_tag
            && self.count == other.count
            && self.iter().eq(other.iter())
    }
}

impl PartialEq<KvArray> for KvArrayRef<'_> {
    fn eq(&self, other: &KvArray) -> bool {
        self.element_tag == other.element_tag()
            && self.len() == other.len()
            && self.to_owned() == *other
    }
}

/// The elements of a [`KvArrayRef`], in order.
#[derive(Clone, Debug)]
pub struct KvArrayIter<'a> {
    array: KvArrayRef<'a>,
    k: usize,
    /// Offset of element `k` (strings and byte sequences).
    at: usize,
}

impl<'a> Iterator for KvArrayIter<'a> {
    type Item = KvValueRef<'a>;

    fn next(&mut self) -> Option<KvValueRef<'a>> {
        let a = &self.array;
        if self.k >= a.len() {
            return None;
        }
        let v = match a.element_tag {
            tag::STRING | tag::BYTES => {
                let Some((blob, next)) = blob_at(a.bytes, self.at) else {
                    self.k = a.len();
                    return None;
                };
                self.at = next;
                if a.element_tag == tag::STRING {
                    KvValueRef::String(utf8(blob))
                } else {
                    KvValueRef::Bytes(blob)
                }
            }
            _ => a.get(self.k)?,
        };
        self.k += 1;
        Some(v)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.array.len() - self.k;
        (n, Some(n))
    }
}

impl ExactSizeIterator for KvArrayIter<'_> {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::file::kv::encode_kv;

    fn entries() -> Vec<KvEntry> {
        let strings: Vec<String> = (0..200).map(|i| "é".repeat(i % 5)).collect();
        vec![
            KvEntry {
                key: "s".into(),
                value: KvValue::String("héllo".into()),
            },
            KvEntry {
                key: "i".into(),
                value: KvValue::Int64(-5),
            },
            KvEntry {
                key: "u".into(),
                value: KvValue::UInt64(u64::MAX),
            },
            KvEntry {
                key: "f".into(),
                value: KvValue::Float64(1.5),
            },
            KvEntry {
                key: "b".into(),
                value: KvValue::Bool(true),
            },
            KvEntry {
                key: "y".into(),
                value: KvValue::Bytes(vec![0, 255]),
            },
            KvEntry {
                key: "a".into(),
                value: KvValue::Array(KvArray::String(strings)),
            },
            KvEntry {
                key: "e".into(),
                value: KvValue::Array(KvArray::Bool(vec![])),
            },
            KvEntry {
                key: "z".into(),
                value: KvValue::Array(KvArray::Bytes(
                    (0..70u8).map(|i| vec![i; i as usize]).collect(),
                )),
            },
            KvEntry {
                key: "n".into(),
                value: KvValue::Array(KvArray::Float64(vec![1.0, -0.5])),
            },
        ]
    }

    #[test]
    fn views_read_what_was_written() {
        let want = entries();
        let b = encode_kv(&want).unwrap();
        let t = KvTable::parse(&b, 0, &Limits::default()).unwrap();
        let kv = t.view(&b);
        assert_eq!(kv.len(), want.len());
        assert_eq!(kv.to_vec(), want);
        for (i, e) in want.iter().enumerate() {
            assert_eq!(kv.position(&e.key), Some(i));
            assert_eq!(kv.value(&e.key).unwrap(), e.value);
        }
        assert_eq!(kv.position("missing"), None);
        // Random access into a string array with steps, every element.
        let KvValue::Array(KvArray::String(s)) = &want[6].value else {
            unreachable!()
        };
        let a = kv.value("a").unwrap().as_array().unwrap();
        for (k, w) in s.iter().enumerate().rev() {
            assert_eq!(a.get(k), Some(KvValueRef::String(w)));
        }
        assert_eq!(a.get(s.len()), None);
        // Two string/bytes arrays over STEP elements: two step tables.
        assert_eq!(t.steps.len(), 2);
        assert_eq!(t.steps[0].1.len(), 200usize.div_ceil(STEP));
    }

    #[test]
    fn the_first_duplicate_in_file_order_is_reported() {
        let mk = |k: &str| KvEntry {
            key: k.into(),
            value: KvValue::Bool(false),
        };
        // "b" repeats at entry 3, "a" at entry 4: entry 3 is reported.
        let mut b = encode_kv(&[mk("a"), mk("b"), mk("c")]).unwrap();
        let extra = encode_kv(&[mk("b"), mk("a")]).unwrap();
        b.extend_from_slice(&extra[4..]);
        b[..4].copy_from_slice(&5u32.to_le_bytes());
        let e = KvTable::parse(&b, 100, &Limits::default()).unwrap_err();
        assert_eq!(e.rule(), Some(FormatRule::DuplicateKey));
        // Entries are 2 + 1 + 1 + 1 bytes: entry 3 starts at 4 + 3 * 5.
        assert!(matches!(e, Error::Format { offset: 119, .. }), "{e}");
        assert!(e.to_string().contains("\"b\""), "{e}");
    }

    #[test]
    fn a_duplicate_before_a_broken_value_wins() {
        let mk = |k: &str| KvEntry {
            key: k.into(),
            value: KvValue::Bool(false),
        };
        let mut b = encode_kv(&[mk("a"), mk("b")]).unwrap();
        let last = b.len() - 1;
        b[last] = 7; // the second entry's bool
        b[last - 2] = b'a'; // its key
        let e = KvTable::parse(&b, 0, &Limits::default()).unwrap_err();
        assert_eq!(e.rule(), Some(FormatRule::DuplicateKey));
        // Without the duplicate, the bool is reported.
        let mut b = encode_kv(&[mk("a"), mk("b")]).unwrap();
        let last = b.len() - 1;
        b[last] = 7;
        let e = KvTable::parse(&b, 0, &Limits::default()).unwrap_err();
        assert_eq!(e.rule(), Some(FormatRule::KvBool));
    }

    #[test]
    fn other_bytes_read_as_nothing_never_out_of_bounds() {
        let want = entries();
        let b = encode_kv(&want).unwrap();
        let t = KvTable::parse(&b, 0, &Limits::default()).unwrap();
        for cut in [0, 1, 7, b.len() / 2, b.len() - 1] {
            let kv = t.view(&b[..cut]);
            for e in kv.iter() {
                if let KvValueRef::Array(a) = e.value {
                    let _ = a.iter().count();
                    let _ = a.get(a.len().saturating_sub(1));
                }
            }
        }
    }
}
