//! How `inspect` shows a KV value: its type name and its JSON form (bytes as
//! lower-case hex, non-finite floats as strings), written element by element, so a
//! value is never built in memory: `--json` streams it, the table shows a preview
//! cut at [`MAX_VALUE_CHARS`] characters, for which only that much is rendered.

use hurray_io::file::{kv::tag, KvArray, KvArrayRef, KvValue, KvValueRef};
use serde::ser::{Error as _, SerializeSeq};
use serde::{Serialize, Serializer};
use std::fmt;

/// Longest KV value shown in the table before it is cut with `...`.
pub const MAX_VALUE_CHARS: usize = 60;

/// A KV value to show: one read from a file, or an owned one.
#[derive(Clone, Copy)]
pub enum Shown<'a> {
    /// A value read from a file (arrays decoded while they are written out).
    File(KvValueRef<'a>),
    /// An owned value.
    Owned(&'a KvValue),
}

/// The elements of an array, whichever its origin.
enum Elements<'a> {
    File(KvArrayRef<'a>),
    Owned(&'a KvArray),
}

impl<'a> Elements<'a> {
    fn tag(&self) -> u8 {
        match self {
            Elements::File(a) => a.element_tag(),
            Elements::Owned(a) => a.element_tag(),
        }
    }

    fn len(&self) -> usize {
        match self {
            Elements::File(a) => a.len(),
            Elements::Owned(a) => a.len(),
        }
    }

    fn iter(&self) -> Box<dyn Iterator<Item = KvValueRef<'a>> + 'a> {
        match *self {
            Elements::File(a) => Box::new(a.iter()),
            Elements::Owned(a) => Box::new(a.iter()),
        }
    }
}

impl<'a> Shown<'a> {
    /// The scalar, or the array's elements.
    fn split(self) -> Result<KvValueRef<'a>, Elements<'a>> {
        match self {
            Shown::File(KvValueRef::Array(a)) => Err(Elements::File(a)),
            Shown::File(v) => Ok(v),
            Shown::Owned(KvValue::Array(a)) => Err(Elements::Owned(a)),
            Shown::Owned(v) => Ok(v.scalar().expect("not an array")),
        }
    }

    /// The type name: `string`, `int64`, `uint64`, `float64`, `bool`, `bytes`, or
    /// `array<T>`.
    pub fn type_name(self) -> String {
        match self.split() {
            Ok(v) => type_name(v.tag()).to_owned(),
            Err(a) => format!("array<{}>", type_name(a.tag())),
        }
    }

    /// Number of elements of an array, `None` for a scalar.
    pub fn array_len(self) -> Option<usize> {
        self.split().err().map(|a| a.len())
    }

    /// The whole JSON form, compact (what `compare` compares).
    pub fn json(self) -> String {
        serde_json::to_string(&self).unwrap_or_default()
    }

    /// The compact JSON form cut to [`MAX_VALUE_CHARS`] characters (the last three
    /// `...` when it was longer), rendering no more of it than that.
    pub fn preview(self) -> String {
        let mut w = Bounded {
            text: String::new(),
            chars: 0,
        };
        // Stops with an error once past the limit: the rest is never rendered.
        let _ = serde_json::to_writer(&mut w, &self);
        if w.chars <= MAX_VALUE_CHARS {
            w.text
        } else {
            let head: String = w.text.chars().take(MAX_VALUE_CHARS - 3).collect();
            head + "..."
        }
    }
}

/// The type name of a value or element tag.
pub fn type_name(t: u8) -> &'static str {
    match t {
        tag::STRING => "string",
        tag::INT64 => "int64",
        tag::UINT64 => "uint64",
        tag::FLOAT64 => "float64",
        tag::BOOL => "bool",
        tag::BYTES => "bytes",
        _ => "array",
    }
}

impl Serialize for Shown<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.split() {
            Ok(v) => Scalar(v).serialize(s),
            Err(a) => {
                let mut seq = s.serialize_seq(Some(a.len()))?;
                for x in a.iter() {
                    seq.serialize_element(&Scalar(x))?;
                }
                seq.end()
            }
        }
    }
}

/// One scalar (or array element) in its JSON form.
struct Scalar<'a>(KvValueRef<'a>);

impl Serialize for Scalar<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            KvValueRef::String(v) => s.serialize_str(v),
            KvValueRef::Int64(v) => s.serialize_i64(v),
            KvValueRef::UInt64(v) => s.serialize_u64(v),
            KvValueRef::Float64(v) if v.is_finite() => s.serialize_f64(v),
            KvValueRef::Float64(v) => s.collect_str(&v),
            KvValueRef::Bool(v) => s.serialize_bool(v),
            KvValueRef::Bytes(b) => s.collect_str(&Hex(b)),
            KvValueRef::Array(_) => Err(S::Error::custom("KV arrays do not nest")),
        }
    }
}

/// Bytes as lower-case hex, written without building the string.
struct Hex<'a>(&'a [u8]);

impl fmt::Display for Hex<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.iter().try_for_each(|b| write!(f, "{b:02x}"))
    }
}

/// Keeps the first `MAX_VALUE_CHARS + 1` characters written, then refuses more.
struct Bounded {
    text: String,
    chars: usize,
}

impl std::io::Write for Bounded {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        // serde_json writes whole UTF-8 sequences per call, except inside long
        // strings, where a call may end mid-character: keep what is valid.
        let s = match std::str::from_utf8(buf) {
            Ok(s) => s,
            Err(e) => std::str::from_utf8(&buf[..e.valid_up_to()]).unwrap_or_default(),
        };
        for c in s.chars() {
            if self.chars > MAX_VALUE_CHARS {
                return Err(std::io::Error::other("preview is full"));
            }
            self.text.push(c);
            self.chars += 1;
        }
        if self.chars > MAX_VALUE_CHARS {
            return Err(std::io::Error::other("preview is full"));
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn previews_cut_where_the_whole_text_would_be_cut() {
        let values = [
            KvValue::String("x".repeat(100)),
            KvValue::String("é".repeat(59)),
            KvValue::String("é".repeat(58)),
            KvValue::Bytes((0..=255).collect()),
            KvValue::Array(KvArray::Bool(vec![true; 100])),
            KvValue::Array(KvArray::Float64(vec![f64::NAN, 1.5])),
            KvValue::Array(KvArray::String(vec![String::new(); 3])),
            KvValue::Int64(-3),
        ];
        for v in &values {
            let full = Shown::Owned(v).json();
            let want = if full.chars().count() <= MAX_VALUE_CHARS {
                full.clone()
            } else {
                full.chars().take(MAX_VALUE_CHARS - 3).collect::<String>() + "..."
            };
            assert_eq!(Shown::Owned(v).preview(), want, "{full}");
        }
        assert_eq!(
            Shown::Owned(&values[5]).json(),
            r#"["NaN",1.5]"#,
            "non-finite floats as strings"
        );
        assert_eq!(Shown::Owned(&values[4]).type_name(), "array<bool>");
        assert_eq!(Shown::Owned(&values[4]).array_len(), Some(100));
    }
}
