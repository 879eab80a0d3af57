//! Reading a safetensors file's header without reading its data: the 8-byte header
//! length, the JSON header (parsed with the `safetensors` crate's own types and
//! validation), and strict checks that every tensor's bytes lie exactly where the
//! header says, with no overlap, gap or trailing byte.
//!
//! Only the header is read into memory (at most 100 MB, the `safetensors` limit, and
//! never more than the file holds); tensor data stays in the file for streaming.

use crate::error::{Error, Result};
use safetensors::tensor::{Dtype, Metadata, TensorInfo};
use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
use std::collections::{BTreeMap, HashSet};
use std::fmt;
use std::fs::File;
use std::io::Read;

/// Largest header the `safetensors` crate accepts, in bytes.
pub const MAX_HEADER_LEN: u64 = 100_000_000;

/// The key under which safetensors keeps its string metadata.
pub const METADATA_KEY: &str = "__metadata__";

/// One tensor of a safetensors file.
#[derive(Clone, Debug, PartialEq)]
pub struct StTensor {
    /// The tensor's name.
    pub name: String,
    /// Its dtype.
    pub dtype: Dtype,
    /// Its shape.
    pub shape: Vec<u64>,
    /// Absolute offset of its first data byte in the file.
    pub start: u64,
    /// Its data length in bytes.
    pub len: u64,
}

/// A safetensors file's header, checked against the file's size.
#[derive(Clone, Debug, PartialEq)]
pub struct StHeader {
    /// Length of the JSON header in bytes (the first 8 bytes of the file).
    pub header_len: u64,
    /// Tensors in data order (ascending offset).
    pub tensors: Vec<StTensor>,
    /// The `__metadata__` map, sorted by key.
    pub metadata: BTreeMap<String, String>,
}

impl StHeader {
    /// Reads and checks the header of `file`, which is `file_len` bytes long.
    ///
    /// Errors name the rule and the absolute byte offset: `Truncated`,
    /// `HeaderLength` (too large, or running past the end of the file), `Utf8`
    /// (the header, and so any name in it, is not UTF-8), `HeaderJson`,
    /// `DuplicateName`, `Metadata`, `TensorInfo`, `SizeOverflow`, `TensorSize`
    /// (offsets that disagree with dtype × shape), `Offsets` (a tensor's data
    /// outside the file, or a gap), `Overlap`, `TrailingBytes`.
    pub fn read(file: &mut File, file_len: u64) -> Result<StHeader> {
        if file_len < 8 {
            return Err(Error::format(
                "Truncated",
                file_len,
                format_args!(
                    "a safetensors file starts with an 8-byte header length; this one has {file_len} bytes"
                ),
            ));
        }
        let mut len_bytes = [0u8; 8];
        file.read_exact(&mut len_bytes)?;
        let n = u64::from_le_bytes(len_bytes);
        if n > MAX_HEADER_LEN {
            return Err(Error::format(
                "HeaderLength",
                0,
                format_args!(
                    "header length {n} exceeds the safetensors limit of {MAX_HEADER_LEN} bytes"
                ),
            ));
        }
        if n > file_len - 8 {
            return Err(Error::format(
                "HeaderLength",
                0,
                format_args!("header length {n} runs past the end of the file ({file_len} bytes)"),
            ));
        }
        // `n` is bounded by the file size and the 100 MB limit.
        let mut header = vec![0u8; n as usize];
        file.read_exact(&mut header)?;
        Self::parse(&header, file_len)
    }

    /// Parses the JSON header bytes (which start at byte 8 of a file of `file_len`
    /// bytes). See [`read`](Self::read).
    pub fn parse(header: &[u8], file_len: u64) -> Result<StHeader> {
        let header_len = header.len() as u64;
        let data_start = 8 + header_len;
        if let Err(e) = std::str::from_utf8(header) {
            return Err(Error::format(
                "Utf8",
                8 + e.valid_up_to() as u64,
                "the JSON header (which holds the tensor names) is not valid UTF-8",
            ));
        }
        let entries: Entries = serde_json::from_slice(header).map_err(|e| {
            Error::format(
                "HeaderJson",
                8 + json_error_offset(header, e.line(), e.column()),
                format_args!("the header is not a safetensors JSON object: {e}"),
            )
        })?;

        let mut seen = HashSet::new();
        let mut metadata: BTreeMap<String, String> = BTreeMap::new();
        let mut tensors = Vec::new();
        for (name, value) in entries.0 {
            if !seen.insert(name.clone()) {
                return Err(Error::format_anywhere(
                    "DuplicateName",
                    format_args!("the header names {name:?} twice"),
                ));
            }
            if name == METADATA_KEY {
                metadata = serde_json::from_value(value).map_err(|e| {
                    Error::format_anywhere(
                        "Metadata",
                        format_args!("{METADATA_KEY} is not a map of strings to strings: {e}"),
                    )
                })?;
                continue;
            }
            let info: TensorInfo = serde_json::from_value(value).map_err(|e| {
                Error::format_anywhere("TensorInfo", format_args!("tensor {name:?}: {e}"))
            })?;
            tensors.push((name, info));
        }
        tensors.sort_by_key(|(_, info)| info.data_offsets);

        let data_len = file_len.checked_sub(data_start).ok_or_else(|| {
            Error::format(
                "HeaderLength",
                0,
                format_args!(
                    "header length {header_len} runs past the end of the file ({file_len} bytes)"
                ),
            )
        })?;
        let mut out = Vec::with_capacity(tensors.len());
        let mut end_of_previous: Option<(&str, u64, u64)> = None;
        for (name, info) in &tensors {
            let (s, e) = (info.data_offsets.0 as u64, info.data_offsets.1 as u64);
            let abs = |x: u64| data_start.saturating_add(x);
            if e < s {
                return Err(Error::format(
                    "Offsets",
                    abs(s),
                    format_args!(
                        "tensor {name:?} has data_offsets [{s}, {e}): the end is before the start"
                    ),
                ));
            }
            if e > data_len {
                return Err(Error::format(
                    "Offsets",
                    abs(s),
                    format_args!(
                        "tensor {name:?} claims bytes up to {} but the file ends at {file_len}",
                        abs(e)
                    ),
                ));
            }
            let size = tensor_size(info).ok_or_else(|| {
                Error::format(
                    "SizeOverflow",
                    abs(s),
                    format_args!(
                        "tensor {name:?}: the size of {} {:?} overflows",
                        info.dtype, info.shape
                    ),
                )
            })??;
            if size != e - s {
                return Err(Error::format(
                    "TensorSize",
                    abs(s),
                    format_args!(
                        "tensor {name:?} is {} {:?} = {size} bytes, but its data_offsets [{s}, {e}) span {} bytes",
                        info.dtype,
                        info.shape,
                        e - s
                    ),
                ));
            }
            let prev_end = end_of_previous.map_or(0, |(_, _, pe)| pe);
            if s < prev_end {
                let (pn, ps, pe) = end_of_previous.unwrap_or(("", 0, 0));
                return Err(Error::format(
                    "Overlap",
                    abs(s),
                    format_args!("tensor {name:?} [{s}, {e}) overlaps tensor {pn:?} [{ps}, {pe})"),
                ));
            }
            if s > prev_end {
                return Err(Error::format(
                    "Offsets",
                    abs(prev_end),
                    format_args!(
                        "data bytes [{prev_end}, {s}) before tensor {name:?} belong to no tensor"
                    ),
                ));
            }
            end_of_previous = Some((name, s, e));
            out.push(StTensor {
                name: name.clone(),
                dtype: info.dtype,
                shape: info.shape.iter().map(|&d| d as u64).collect(),
                start: abs(s),
                len: e - s,
            });
        }
        let end = end_of_previous.map_or(0, |(_, _, e)| e);
        if end != data_len {
            return Err(Error::format(
                "TrailingBytes",
                data_start + end,
                format_args!(
                    "{} bytes after the last tensor's data belong to no tensor",
                    data_len - end
                ),
            ));
        }

        // The crate's own validation must agree with ours.
        let crate_meta = (!metadata.is_empty()).then(|| {
            metadata
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect()
        });
        Metadata::new(crate_meta, tensors).map_err(|e| {
            Error::format_anywhere("Safetensors", format_args!("the header is invalid: {e}"))
        })?;

        Ok(StHeader {
            header_len,
            tensors: out,
            metadata,
        })
    }

    /// Absolute offset of the first data byte.
    pub fn data_start(&self) -> u64 {
        8 + self.header_len
    }
}

/// Bytes of a tensor per its dtype and shape: `None` on overflow, `Some(Err)` when
/// the bit count is not a whole number of bytes (sub-byte dtypes).
fn tensor_size(info: &TensorInfo) -> Option<Result<u64>> {
    let elements = info
        .shape
        .iter()
        .try_fold(1u64, |a, &d| a.checked_mul(d as u64))?;
    let bits = elements.checked_mul(info.dtype.bitsize() as u64)?;
    if bits % 8 != 0 {
        return Some(Err(Error::format_anywhere(
            "TensorSize",
            format_args!(
                "{elements} elements of {} are {bits} bits, not a whole number of bytes",
                info.dtype
            ),
        )));
    }
    Some(Ok(bits / 8))
}

/// Byte offset (from the start of `text`) of serde_json's 1-based line and column.
fn json_error_offset(text: &[u8], line: usize, column: usize) -> u64 {
    let line_start = if line <= 1 {
        0
    } else {
        text.iter()
            .enumerate()
            .filter(|&(_, &b)| b == b'\n')
            .nth(line - 2)
            .map_or(text.len(), |(i, _)| i + 1)
    };
    (line_start + column.saturating_sub(1)).min(text.len()) as u64
}

/// The header's top-level entries in file order, duplicates kept (so they can be
/// refused; a map would silently keep one of them).
struct Entries(Vec<(String, serde_json::Value)>);

impl<'de> Deserialize<'de> for Entries {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Entries, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Entries;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(
                self,
                mut map: A,
            ) -> std::result::Result<Entries, A::Error> {
                let mut out = Vec::new();
                while let Some(entry) = map.next_entry::<String, serde_json::Value>()? {
                    out.push(entry);
                }
                Ok(Entries(out))
            }
        }
        d.deserialize_map(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(json: &str, data_len: u64) -> Result<StHeader> {
        let file_len = 8 + json.len() as u64 + data_len;
        StHeader::parse(json.as_bytes(), file_len)
    }

    fn rule(r: Result<StHeader>) -> String {
        let e = r.unwrap_err();
        match e.kind() {
            crate::error::Kind::Format { rule, .. } => rule.to_string(),
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn a_good_header_in_data_order() {
        let h = parse(
            r#"{"__metadata__":{"format":"pt"},"b":{"dtype":"I8","shape":[3],"data_offsets":[8,11]},"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}"#,
            11,
        )
        .unwrap();
        assert_eq!(h.tensors[0].name, "a");
        assert_eq!(h.tensors[1].start, h.data_start() + 8);
        assert_eq!(h.metadata["format"], "pt");
    }

    #[test]
    fn lies_are_refused_with_their_rule() {
        let one = |offs: &str, shape: &str| {
            format!(r#"{{"a":{{"dtype":"F32","shape":{shape},"data_offsets":{offs}}}}}"#)
        };
        assert_eq!(rule(parse(&one("[0,8]", "[2]"), 4)), "Offsets");
        assert_eq!(rule(parse(&one("[0,8]", "[3]"), 8)), "TensorSize");
        assert_eq!(rule(parse(&one("[0,8]", "[2]"), 12)), "TrailingBytes");
        assert_eq!(rule(parse(&one("[8,0]", "[2]"), 8)), "Offsets");
        assert_eq!(
            rule(parse(&one("[0,8]", "[18446744073709551615, 4]"), 8)),
            "SizeOverflow"
        );
        let overlap = r#"{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}}"#;
        assert_eq!(rule(parse(overlap, 12)), "Overlap");
        let dup = r#"{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}"#;
        assert_eq!(rule(parse(dup, 1)), "DuplicateName");
        assert_eq!(rule(parse("[1,2]", 0)), "HeaderJson");
        assert_eq!(
            rule(parse(
                r#"{"a":{"dtype":"Q9","shape":[1],"data_offsets":[0,1]}}"#,
                1
            )),
            "TensorInfo"
        );
        assert_eq!(rule(StHeader::parse(b"{\"\xff\":1}", 16)), "Utf8");
    }

    #[test]
    fn mutated_headers_never_panic() {
        let good = br#"{"__metadata__":{"k":"v"},"a":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]},"b":{"dtype":"BOOL","shape":[3],"data_offsets":[16,19]}}"#;
        let mut x = 0x9E37_79B9u32;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x
        };
        for _ in 0..5000 {
            let mut h = good.to_vec();
            for _ in 0..1 + next() % 4 {
                let i = next() as usize % h.len();
                h[i] = match next() % 3 {
                    0 => next() as u8,
                    1 => b"0123456789[],{}\":-"[next() as usize % 17],
                    _ => h[i].wrapping_add(1),
                };
            }
            let _ = StHeader::parse(&h, 8 + h.len() as u64 + u64::from(next() % 40));
        }
    }

    #[test]
    fn json_offsets_count_lines() {
        assert_eq!(json_error_offset(b"{\n  x", 2, 3), 4);
        assert_eq!(json_error_offset(b"{x", 1, 2), 1);
    }
}
