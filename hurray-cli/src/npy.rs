//! The NumPy `.npy` header: magic, version, header length, and the Python dict
//! literal `{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }` that
//! describes the array. Parsed strictly and with bounds: the header length is checked
//! against a ceiling and against the bytes that exist before anything is allocated,
//! and the literal parser accepts only the literal forms NumPy writes.
//!
//! (Written here rather than taken from a crate: the readers available allocate the
//! declared header length up front and multiply shapes unchecked.)

use crate::error::{Error, Result};
use std::io::Read;

/// The `.npy` magic string.
pub const MAGIC: &[u8; 6] = b"\x93NUMPY";

/// Largest header accepted, in bytes (NumPy itself refuses more than 10 000 by default).
pub const MAX_HEADER_LEN: u64 = 1 << 20;

/// Deepest nesting the literal parser follows.
const MAX_DEPTH: u32 = 16;

/// A parsed `.npy` header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NpyHeader {
    /// The NumPy type string, e.g. `<f4`.
    pub descr: String,
    /// True for Fortran (column-major) order.
    pub fortran_order: bool,
    /// The shape; `[]` for a scalar.
    pub shape: Vec<u64>,
    /// Bytes before the data: magic, version, length field and header text.
    pub data_offset: u64,
}

impl NpyHeader {
    /// Reads the header from `r`, positioned at the start of a `.npy` stream of
    /// `available` bytes whose first byte is at source offset `at` (for errors).
    ///
    /// Errors: `Truncated`, `Magic`, `Version`, `HeaderLength`, `Header` (the literal
    /// is malformed or lacks a key), each at its absolute offset.
    pub fn read(r: &mut dyn Read, available: u64, at: u64) -> Result<NpyHeader> {
        let mut pre = [0u8; 12];
        let need = |n: u64, what: &str| -> Result<()> {
            if available < n {
                return Err(Error::format(
                    "Truncated",
                    at + available,
                    format_args!("the .npy data ends inside its {what}"),
                ));
            }
            Ok(())
        };
        need(10, "preamble")?;
        r.read_exact(&mut pre[..10])?;
        if &pre[..6] != MAGIC {
            return Err(Error::format(
                "Magic",
                at,
                "not a .npy array (no \\x93NUMPY magic)",
            ));
        }
        let (major, minor) = (pre[6], pre[7]);
        let (len, fixed) = match major {
            1 => (u64::from(u16::from_le_bytes([pre[8], pre[9]])), 10),
            2 | 3 => {
                need(12, "preamble")?;
                r.read_exact(&mut pre[10..12])?;
                (
                    u64::from(u32::from_le_bytes([pre[8], pre[9], pre[10], pre[11]])),
                    12,
                )
            }
            _ => {
                return Err(Error::format(
                    "Version",
                    at + 6,
                    format_args!(".npy format version {major}.{minor} is not 1.x, 2.x or 3.x"),
                ))
            }
        };
        if len > MAX_HEADER_LEN {
            return Err(Error::format(
                "HeaderLength",
                at + 8,
                format_args!("header length {len} exceeds the limit of {MAX_HEADER_LEN} bytes"),
            ));
        }
        if len > available - fixed {
            return Err(Error::format(
                "HeaderLength",
                at + 8,
                format_args!(
                    "header length {len} runs past the end of the data ({available} bytes)"
                ),
            ));
        }
        let mut text = vec![0u8; len as usize];
        r.read_exact(&mut text)?;
        let (descr, fortran_order, shape) = parse_dict(&text, at + fixed)?;
        Ok(NpyHeader {
            descr,
            fortran_order,
            shape,
            data_offset: fixed + len,
        })
    }

    /// Number of elements, or `None` on overflow.
    pub fn elements(&self) -> Option<u64> {
        self.shape.iter().try_fold(1u64, |a, &d| a.checked_mul(d))
    }
}

/// A Python literal, as far as `.npy` headers use them.
#[derive(Debug, PartialEq)]
enum Lit {
    Str(String),
    Bool(bool),
    Int(u64),
    Seq(Vec<Lit>),
    Dict(Vec<(Lit, Lit)>),
}

/// Parses the header dict; `at` is the absolute offset of its first byte.
fn parse_dict(text: &[u8], at: u64) -> Result<(String, bool, Vec<u64>)> {
    let mut p = Parser { text, pos: 0, at };
    let value = p.value(0)?;
    p.skip_ws();
    if p.pos != text.len() {
        return Err(p.err("unexpected text after the header dict"));
    }
    let Lit::Dict(entries) = value else {
        return Err(Error::format(
            "Header",
            at,
            "the header is not a dict literal",
        ));
    };
    let get = |key: &str| {
        entries
            .iter()
            .find(|(k, _)| matches!(k, Lit::Str(s) if s == key))
            .map(|(_, v)| v)
            .ok_or_else(|| Error::format("Header", at, format_args!("the header lacks {key:?}")))
    };
    let descr = match get("descr")? {
        Lit::Str(s) => s.clone(),
        Lit::Seq(_) => {
            return Err(Error::unsupported(
                "structured NumPy dtypes (records) have no Hurray element type",
            ))
        }
        _ => return Err(Error::format("Header", at, "'descr' is not a string")),
    };
    let Lit::Bool(fortran_order) = get("fortran_order")? else {
        return Err(Error::format(
            "Header",
            at,
            "'fortran_order' is not True or False",
        ));
    };
    let Lit::Seq(dims) = get("shape")? else {
        return Err(Error::format("Header", at, "'shape' is not a tuple"));
    };
    let shape = dims
        .iter()
        .map(|d| match d {
            Lit::Int(n) => Ok(*n),
            _ => Err(Error::format(
                "Header",
                at,
                "'shape' holds something other than a non-negative integer",
            )),
        })
        .collect::<Result<Vec<u64>>>()?;
    Ok((descr, *fortran_order, shape))
}

struct Parser<'a> {
    text: &'a [u8],
    pos: usize,
    at: u64,
}

impl Parser<'_> {
    fn err(&self, what: &str) -> Error {
        Error::format("Header", self.at + self.pos as u64, what)
    }

    fn skip_ws(&mut self) {
        while self
            .text
            .get(self.pos)
            .is_some_and(|b| b.is_ascii_whitespace())
        {
            self.pos += 1;
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.skip_ws();
        self.text.get(self.pos).copied()
    }

    fn eat(&mut self, b: u8) -> bool {
        if self.peek() == Some(b) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn value(&mut self, depth: u32) -> Result<Lit> {
        if depth > MAX_DEPTH {
            return Err(self.err("the header nests too deeply"));
        }
        match self.peek() {
            Some(q @ (b'\'' | b'"')) => self.string(q),
            Some(b'(') => self.seq(b')', depth),
            Some(b'[') => self.seq(b']', depth),
            Some(b'{') => self.dict(depth),
            Some(b'0'..=b'9') => self.int(),
            Some(b'T' | b'F') => self.word(),
            _ => Err(self.err("expected a literal")),
        }
    }

    fn word(&mut self) -> Result<Lit> {
        for (w, v) in [(&b"True"[..], true), (&b"False"[..], false)] {
            if self.text[self.pos..].starts_with(w) {
                self.pos += w.len();
                return Ok(Lit::Bool(v));
            }
        }
        Err(self.err("expected True or False"))
    }

    fn int(&mut self) -> Result<Lit> {
        let start = self.pos;
        let mut n: u64 = 0;
        while let Some(d @ b'0'..=b'9') = self.text.get(self.pos).copied() {
            n = n
                .checked_mul(10)
                .and_then(|n| n.checked_add(u64::from(d - b'0')))
                .ok_or_else(|| self.err("integer overflows u64"))?;
            self.pos += 1;
        }
        if self.text.get(self.pos) == Some(&b'L') {
            self.pos += 1; // Python 2 long suffix
        }
        debug_assert!(self.pos > start);
        Ok(Lit::Int(n))
    }

    fn string(&mut self, quote: u8) -> Result<Lit> {
        self.pos += 1;
        let mut out = Vec::new();
        loop {
            let Some(&b) = self.text.get(self.pos) else {
                return Err(self.err("unterminated string"));
            };
            self.pos += 1;
            match b {
                b'\\' => {
                    let Some(&e) = self.text.get(self.pos) else {
                        return Err(self.err("unterminated string"));
                    };
                    self.pos += 1;
                    out.push(match e {
                        b'\\' | b'\'' | b'"' => e,
                        b'n' => b'\n',
                        b't' => b'\t',
                        b'r' => b'\r',
                        _ => return Err(self.err("unsupported escape in a string")),
                    });
                }
                _ if b == quote => break,
                _ => out.push(b),
            }
        }
        String::from_utf8(out)
            .map(Lit::Str)
            .map_err(|_| self.err("a string in the header is not UTF-8"))
    }

    fn seq(&mut self, close: u8, depth: u32) -> Result<Lit> {
        self.pos += 1;
        let mut items = Vec::new();
        loop {
            if self.eat(close) {
                return Ok(Lit::Seq(items));
            }
            items.push(self.value(depth + 1)?);
            if !self.eat(b',') {
                if self.eat(close) {
                    return Ok(Lit::Seq(items));
                }
                return Err(self.err("expected ',' or the end of a sequence"));
            }
        }
    }

    fn dict(&mut self, depth: u32) -> Result<Lit> {
        self.pos += 1;
        let mut entries = Vec::new();
        loop {
            if self.eat(b'}') {
                return Ok(Lit::Dict(entries));
            }
            let k = self.value(depth + 1)?;
            if !self.eat(b':') {
                return Err(self.err("expected ':' in the header dict"));
            }
            let v = self.value(depth + 1)?;
            entries.push((k, v));
            if !self.eat(b',') {
                if self.eat(b'}') {
                    return Ok(Lit::Dict(entries));
                }
                return Err(self.err("expected ',' or '}' in the header dict"));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn npy(dict: &str, major: u8) -> Vec<u8> {
        let mut v = MAGIC.to_vec();
        v.extend([major, 0]);
        if major == 1 {
            v.extend((dict.len() as u16).to_le_bytes());
        } else {
            v.extend((dict.len() as u32).to_le_bytes());
        }
        v.extend(dict.as_bytes());
        v
    }

    fn read(bytes: &[u8]) -> Result<NpyHeader> {
        NpyHeader::read(&mut &bytes[..], bytes.len() as u64, 0)
    }

    #[test]
    fn numpy_headers_parse() {
        let dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }          \n";
        let h = read(&npy(dict, 1)).unwrap();
        assert_eq!(h.descr, "<f4");
        assert!(!h.fortran_order);
        assert_eq!(h.shape, [3, 4]);
        assert_eq!(h.data_offset, 10 + dict.len() as u64);
        let h = read(&npy(
            "{'descr': '|b1', 'fortran_order': True, 'shape': (5,), }",
            2,
        ))
        .unwrap();
        assert_eq!((h.shape.as_slice(), h.fortran_order), (&[5u64][..], true));
        let h = read(&npy(
            "{\"shape\": (), \"fortran_order\": False, \"descr\": \"<i8\"}",
            3,
        ))
        .unwrap();
        assert!(h.shape.is_empty());
        assert_eq!(h.elements(), Some(1));
    }

    #[test]
    fn mutated_headers_never_panic() {
        let good = npy(
            "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }",
            1,
        );
        let mut x = 0x2545_F491u32;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x
        };
        for _ in 0..5000 {
            let mut b = good.clone();
            for _ in 0..1 + next() % 4 {
                let i = next() as usize % b.len();
                b[i] = match next() % 3 {
                    0 => next() as u8,
                    1 => b"0123456789(),{}'\"\\:TF"[next() as usize % 21],
                    _ => b[i].wrapping_add(1),
                };
            }
            let cut = b.len() - next() as usize % 8;
            let _ = read(&b[..cut]);
        }
    }

    #[test]
    fn bad_headers_are_refused() {
        let rule = |b: &[u8]| match read(b).unwrap_err().kind() {
            crate::error::Kind::Format { rule, .. } => rule.to_string(),
            k => format!("{k:?}"),
        };
        assert_eq!(rule(b"\x93NUMPY\x01"), "Truncated");
        assert_eq!(rule(b"NOTNPY\x01\x00\x00\x00"), "Magic");
        assert_eq!(rule(b"\x93NUMPY\x07\x00\x00\x00"), "Version");
        assert_eq!(rule(b"\x93NUMPY\x01\x00\xff\x00{}"), "HeaderLength");
        let mut huge = MAGIC.to_vec();
        huge.extend([2, 0]);
        huge.extend(u32::MAX.to_le_bytes());
        assert_eq!(rule(&huge), "HeaderLength");
        assert_eq!(rule(&npy("{'descr': '<f4', 'shape': (1,)}", 1)), "Header");
        assert_eq!(
            rule(&npy(
                "{'descr': '<f4', 'fortran_order': False, 'shape': (-1,)}",
                1
            )),
            "Header"
        );
        assert_eq!(
            rule(&npy(
                "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,)}",
                1
            )),
            "Header"
        );
        assert_eq!(rule(&npy(&"(".repeat(100), 1)), "Header");
        assert!(matches!(
            read(&npy(
                "{'descr': [('a', '<i4')], 'fortran_order': False, 'shape': (1,)}",
                1
            ))
            .unwrap_err()
            .kind(),
            crate::error::Kind::Unsupported(_)
        ));
    }
}
