//! The KV metadata section (`file-format.md` §7): model-level key/value pairs with
//! typed values, their encoder and their strict parser.

use super::kv_table::{KvTable, KvValueRef};
use super::MAX_NAME_LEN;
use crate::error::{Error, FormatRule, Result};
use crate::limits::Limits;
use std::collections::HashSet;

/// Value tags (§7.3).
pub mod tag {
    /// UTF-8 string.
    pub const STRING: u8 = 0x01;
    /// Signed 64-bit integer.
    pub const INT64: u8 = 0x02;
    /// Unsigned 64-bit integer.
    pub const UINT64: u8 = 0x03;
    /// IEEE 754 binary64.
    pub const FLOAT64: u8 = 0x04;
    /// Boolean (one byte, 0 or 1).
    pub const BOOL: u8 = 0x05;
    /// Opaque byte sequence.
    pub const BYTES: u8 = 0x06;
    /// Homogeneous array of one of the tags above.
    pub const ARRAY: u8 = 0x07;
}

/// One KV value (§7.3). Strings and byte sequences are at most `u32::MAX` bytes.
#[derive(Clone, Debug, PartialEq)]
pub enum KvValue {
    /// `0x01`: a UTF-8 string.
    String(String),
    /// `0x02`: a signed 64-bit integer.
    Int64(i64),
    /// `0x03`: an unsigned 64-bit integer.
    UInt64(u64),
    /// `0x04`: a binary64 float (any bit pattern, NaN included).
    Float64(f64),
    /// `0x05`: a boolean.
    Bool(bool),
    /// `0x06`: opaque bytes.
    Bytes(Vec<u8>),
    /// `0x07`: a homogeneous array; arrays do not nest.
    Array(KvArray),
}

/// A homogeneous KV array (tag `0x07`): the element type is the variant, so an empty
/// array still has an element tag (A14). At most `u32::MAX` elements.
#[derive(Clone, Debug, PartialEq)]
pub enum KvArray {
    /// Strings (element tag `0x01`).
    String(Vec<String>),
    /// Signed integers (`0x02`).
    Int64(Vec<i64>),
    /// Unsigned integers (`0x03`).
    UInt64(Vec<u64>),
    /// Floats (`0x04`).
    Float64(Vec<f64>),
    /// Booleans (`0x05`).
    Bool(Vec<bool>),
    /// Byte sequences (`0x06`).
    Bytes(Vec<Vec<u8>>),
}

/// One KV entry: a key (1..=65 535 bytes of UTF-8, unique in its file) and a value.
#[derive(Clone, Debug, PartialEq)]
pub struct KvEntry {
    /// The key.
    pub key: String,
    /// The value.
    pub value: KvValue,
}

impl KvValue {
    /// The value tag byte.
    pub fn tag(&self) -> u8 {
        match self {
            KvValue::String(_) => tag::STRING,
            KvValue::Int64(_) => tag::INT64,
            KvValue::UInt64(_) => tag::UINT64,
            KvValue::Float64(_) => tag::FLOAT64,
            KvValue::Bool(_) => tag::BOOL,
            KvValue::Bytes(_) => tag::BYTES,
            KvValue::Array(_) => tag::ARRAY,
        }
    }

    /// The string, if this is a string value.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            KvValue::String(s) => Some(s),
            _ => None,
        }
    }

    /// The integer, if this is an int64 value.
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            KvValue::Int64(v) => Some(*v),
            _ => None,
        }
    }

    /// A scalar as a borrowed value; `None` for an array (see [`KvArray::iter`]).
    pub fn scalar(&self) -> Option<KvValueRef<'_>> {
        Some(match self {
            KvValue::String(s) => KvValueRef::String(s),
            KvValue::Int64(v) => KvValueRef::Int64(*v),
            KvValue::UInt64(v) => KvValueRef::UInt64(*v),
            KvValue::Float64(v) => KvValueRef::Float64(*v),
            KvValue::Bool(v) => KvValueRef::Bool(*v),
            KvValue::Bytes(b) => KvValueRef::Bytes(b),
            KvValue::Array(_) => return None,
        })
    }

    /// Encoded payload size in bytes (after the tag), or `None` when a length does
    /// not fit its u32 prefix.
    fn payload_len(&self) -> Option<u64> {
        Some(match self {
            KvValue::String(s) => 4 + u64::from(u32::try_from(s.len()).ok()?),
            KvValue::Bytes(b) => 4 + u64::from(u32::try_from(b.len()).ok()?),
            KvValue::Int64(_) | KvValue::UInt64(_) | KvValue::Float64(_) => 8,
            KvValue::Bool(_) => 1,
            KvValue::Array(a) => 5 + a.payload_len()?,
        })
    }

    fn write(&self, out: &mut Vec<u8>) {
        out.push(self.tag());
        match self {
            KvValue::String(s) => put_blob(out, s.as_bytes()),
            KvValue::Int64(v) => out.extend_from_slice(&v.to_le_bytes()),
            KvValue::UInt64(v) => out.extend_from_slice(&v.to_le_bytes()),
            KvValue::Float64(v) => out.extend_from_slice(&v.to_le_bytes()),
            KvValue::Bool(v) => out.push(u8::from(*v)),
            KvValue::Bytes(b) => put_blob(out, b),
            KvValue::Array(a) => a.write(out),
        }
    }
}

impl KvArray {
    /// The element tag (`0x01`–`0x06`).
    pub fn element_tag(&self) -> u8 {
        match self {
            KvArray::String(_) => tag::STRING,
            KvArray::Int64(_) => tag::INT64,
            KvArray::UInt64(_) => tag::UINT64,
            KvArray::Float64(_) => tag::FLOAT64,
            KvArray::Bool(_) => tag::BOOL,
            KvArray::Bytes(_) => tag::BYTES,
        }
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        match self {
            KvArray::String(v) => v.len(),
            KvArray::Int64(v) => v.len(),
            KvArray::UInt64(v) => v.len(),
            KvArray::Float64(v) => v.len(),
            KvArray::Bool(v) => v.len(),
            KvArray::Bytes(v) => v.len(),
        }
    }

    /// True when the array has no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Element `k` as a borrowed value (never an `Array`), `None` past the end.
    pub fn get(&self, k: usize) -> Option<KvValueRef<'_>> {
        Some(match self {
            KvArray::String(v) => KvValueRef::String(v.get(k)?),
            KvArray::Int64(v) => KvValueRef::Int64(*v.get(k)?),
            KvArray::UInt64(v) => KvValueRef::UInt64(*v.get(k)?),
            KvArray::Float64(v) => KvValueRef::Float64(*v.get(k)?),
            KvArray::Bool(v) => KvValueRef::Bool(*v.get(k)?),
            KvArray::Bytes(v) => KvValueRef::Bytes(v.get(k)?),
        })
    }

    /// The elements as borrowed values, in order (the same items as
    /// [`KvArrayRef::iter`](super::KvArrayRef::iter) yields for a file's array).
    pub fn iter(&self) -> impl ExactSizeIterator<Item = KvValueRef<'_>> + '_ {
        (0..self.len()).map(move |k| self.get(k).expect("k < len"))
    }

    /// Size of the elements in bytes (without the element tag and count).
    fn payload_len(&self) -> Option<u64> {
        u32::try_from(self.len()).ok()?;
        fn blobs(v: impl Iterator<Item = usize>) -> Option<u64> {
            let mut a = 0u64;
            for n in v {
                a = a.checked_add(4 + u64::from(u32::try_from(n).ok()?))?;
            }
            Some(a)
        }
        let n = self.len() as u64;
        match self {
            KvArray::String(v) => blobs(v.iter().map(String::len)),
            KvArray::Bytes(v) => blobs(v.iter().map(Vec::len)),
            KvArray::Bool(_) => Some(n),
            _ => n.checked_mul(8),
        }
    }

    fn write(&self, out: &mut Vec<u8>) {
        out.push(self.element_tag());
        out.extend_from_slice(&(self.len() as u32).to_le_bytes());
        match self {
            KvArray::String(v) => v.iter().for_each(|s| put_blob(out, s.as_bytes())),
            KvArray::Int64(v) => v
                .iter()
                .for_each(|x| out.extend_from_slice(&x.to_le_bytes())),
            KvArray::UInt64(v) => v
                .iter()
                .for_each(|x| out.extend_from_slice(&x.to_le_bytes())),
            KvArray::Float64(v) => v
                .iter()
                .for_each(|x| out.extend_from_slice(&x.to_le_bytes())),
            KvArray::Bool(v) => v.iter().for_each(|&x| out.push(u8::from(x))),
            KvArray::Bytes(v) => v.iter().for_each(|b| put_blob(out, b)),
        }
    }
}

fn put_blob(out: &mut Vec<u8>, b: &[u8]) {
    out.extend_from_slice(&(b.len() as u32).to_le_bytes());
    out.extend_from_slice(b);
}

/// Checks a key a writer is about to store: 1..=65 535 bytes (it is UTF-8 by type).
///
/// Errors: `Utf8` (empty key; the spec's "empty name" rule shares this variant) or
/// `Limit` (longer than 65 535 bytes), at `offset`.
pub(crate) fn check_key(key: &str, offset: u64, what: &str) -> Result<()> {
    if key.is_empty() {
        return Err(Error::format(
            FormatRule::Utf8,
            offset,
            format_args!("{what} is empty"),
        ));
    }
    if key.len() > MAX_NAME_LEN {
        return Err(Error::format(
            FormatRule::Limit,
            offset,
            format_args!("{what} is {} bytes, more than 65535", key.len()),
        ));
    }
    Ok(())
}

/// Encoded size of one entry in bytes, or `None` when a length overflows its prefix.
pub(crate) fn entry_len(e: &KvEntry) -> Option<u64> {
    (3 + e.key.len() as u64).checked_add(e.value.payload_len()?)
}

/// Encodes a KV section (§7.2): `kv_count`, then the entries in the given order.
///
/// Errors (offset 0, the section does not know where it will go): `Utf8` or `Limit`
/// for a bad key, `DuplicateKey`, `Limit` when a length overflows its u32 prefix or
/// the section reaches 4 GiB (`kv_length` is a u32).
pub fn encode_kv(entries: &[KvEntry]) -> Result<Vec<u8>> {
    let mut total = 4u64;
    let mut keys = HashSet::with_capacity(entries.len());
    for e in entries {
        check_key(&e.key, 0, "KV key")?;
        if !keys.insert(e.key.as_str()) {
            return Err(Error::format(
                FormatRule::DuplicateKey,
                0,
                format_args!("KV key {:?} appears twice", e.key),
            ));
        }
        total = entry_len(e)
            .and_then(|n| total.checked_add(n))
            .filter(|&t| t <= u64::from(u32::MAX))
            .ok_or_else(|| {
                Error::format(
                    FormatRule::Limit,
                    0,
                    "the KV section would reach 4 GiB (kv_length is a u32)",
                )
            })?;
    }
    let count = u32::try_from(entries.len())
        .map_err(|_| Error::format(FormatRule::Limit, 0, "more than u32::MAX KV entries"))?;
    let mut out = Vec::with_capacity(total as usize);
    out.extend_from_slice(&count.to_le_bytes());
    for e in entries {
        out.extend_from_slice(&(e.key.len() as u16).to_le_bytes());
        out.extend_from_slice(e.key.as_bytes());
        e.value.write(&mut out);
    }
    debug_assert_eq!(out.len() as u64, total);
    Ok(out)
}

/// Parses a KV section (`bytes` = exactly `kv_length` bytes found at absolute offset
/// `base`) into owned entries: [`KvTable::parse`], then a copy of every value. A
/// file reader keeps the [`KvTable`] instead, which decodes values when read.
///
/// Errors: those of [`KvTable::parse`].
pub fn parse_kv(bytes: &[u8], base: u64, limits: &Limits) -> Result<Vec<KvEntry>> {
    Ok(KvTable::parse(bytes, base, limits)?.view(bytes).to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_value_type_round_trips() {
        let entries = vec![
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
                value: KvValue::Array(KvArray::String(vec!["x".into(), String::new()])),
            },
            KvEntry {
                key: "e".into(),
                value: KvValue::Array(KvArray::Bool(vec![])),
            },
        ];
        let b = encode_kv(&entries).unwrap();
        assert_eq!(parse_kv(&b, 0, &Limits::default()).unwrap(), entries);
    }
}
