//! The NUL-terminated strings a file reader hands out across the C ABI (tensor
//! names, KV keys, KV string values and string-array elements). The file stores them
//! with length prefixes and no terminator, so the reader keeps NUL-terminated copies,
//! made on the first request for each kind and kept until the reader is destroyed
//! (the strings are borrowed by C).
//!
//! Each kind is one contiguous copy, and where a string lies in it is computed from
//! where it lies in the file, so no per-string offset is stored:
//!
//! - names: entry `i` of the index starts at `8 + Σ_{j<i}(34 + L_j)` in the section
//!   and its copy at `Σ_{j<i}(L_j + 1)`, i.e. 33 bytes less per entry before it;
//! - KV text: per KV entry one `u32` base, then its key and NUL; a string value
//!   follows at `base + key + 1`, element `k` of a string array at
//!   `base + key + 1 + (its offset among the elements − 3 k)` (each element has a
//!   4-byte length prefix in the file and a 1-byte NUL here).
//!
//! So the names copy is smaller than the index section, and the KV text smaller than
//! the KV section, plus 4 bytes per KV entry. An empty string is handed out as one
//! static `""`, so reading only empty strings makes no KV text at all.

use hurray_io::file::index::ENTRY_FIXED_LEN;
use hurray_io::file::KvValueRef;
use hurray_io::FileReader;
use std::sync::OnceLock;

/// Bytes before the first index entry (`index_entry_count`).
const INDEX_COUNT_LEN: u64 = 8;

/// Every empty string handed out: its NUL.
static EMPTY: [u8; 1] = [0];

/// The lazily made copies of one reader.
#[derive(Debug, Default)]
pub(crate) struct FileText {
    names: OnceLock<Box<[u8]>>,
    kv: OnceLock<KvText>,
}

#[derive(Debug)]
struct KvText {
    bytes: Box<[u8]>,
    /// Where each entry's key starts in `bytes`.
    base: Box<[u32]>,
}

impl FileText {
    /// Name `i` with its NUL (`i` in range), from the copy made on first use.
    pub(crate) fn name<'a>(&'a self, r: &FileReader, i: usize) -> Option<&'a [u8]> {
        let e = r.catalog().entry(i)?;
        let names = self.names.get_or_init(|| {
            let mut v = Vec::with_capacity(r.entries().map(|e| e.name.len() + 1).sum::<usize>());
            for e in r.entries() {
                v.extend_from_slice(e.name.as_bytes());
                v.push(0);
            }
            v.into_boxed_slice()
        });
        let rel = e.offset - r.info().trailer.index_offset;
        let at = (rel - INDEX_COUNT_LEN - (ENTRY_FIXED_LEN - 1) * i as u64) as usize;
        names.get(at..at + e.name.len() + 1)
    }

    fn kv<'a>(&'a self, r: &FileReader) -> &'a KvText {
        self.kv.get_or_init(|| {
            let kv = r.kv();
            let mut bytes = Vec::new();
            let mut base = Vec::with_capacity(kv.len());
            for e in kv.iter() {
                base.push(bytes.len() as u32);
                push(&mut bytes, e.key);
                match e.value {
                    KvValueRef::String(s) => push(&mut bytes, s),
                    KvValueRef::Array(a) => a.iter().for_each(|x| {
                        if let KvValueRef::String(s) = x {
                            push(&mut bytes, s);
                        }
                    }),
                    _ => {}
                }
            }
            KvText {
                bytes: bytes.into_boxed_slice(),
                base: base.into_boxed_slice(),
            }
        })
    }

    /// Key `i` with its NUL (`i` in range).
    pub(crate) fn key<'a>(&'a self, r: &FileReader, i: usize) -> Option<&'a [u8]> {
        let key = r.kv().get(i)?.key;
        let t = self.kv(r);
        let at = *t.base.get(i)? as usize;
        t.bytes.get(at..at + key.len() + 1)
    }

    /// The string value of KV entry `i` with its NUL (`i` a string entry).
    pub(crate) fn string<'a>(&'a self, r: &FileReader, i: usize) -> Option<&'a [u8]> {
        let e = r.kv().get(i)?;
        let s = e.value.as_str()?;
        if s.is_empty() {
            return Some(&EMPTY);
        }
        let t = self.kv(r);
        let at = *t.base.get(i)? as usize + e.key.len() + 1;
        t.bytes.get(at..at + s.len() + 1)
    }

    /// Element `k` of the string array of KV entry `i`, with its NUL.
    pub(crate) fn element<'a>(&'a self, r: &FileReader, i: usize, k: usize) -> Option<&'a [u8]> {
        let e = r.kv().get(i)?;
        let a = e.value.as_array()?;
        let s = a.get(k)?.as_str()?;
        if s.is_empty() {
            return Some(&EMPTY);
        }
        let t = self.kv(r);
        let at = *t.base.get(i)? as usize + e.key.len() + 1 + a.offset_of(k)? - 3 * k;
        t.bytes.get(at..at + s.len() + 1)
    }
}

fn push(v: &mut Vec<u8>, s: &str) {
    v.extend_from_slice(s.as_bytes());
    v.push(0);
}

#[cfg(test)]
mod tests {
    use super::*;
    use hurray_core::ElementType;
    use hurray_io::file::{FileWriterTo, KvArray, KvValue, WriteOptions};
    use hurray_io::Tensor;

    #[test]
    fn every_string_is_found_with_its_nul() {
        let mut w = FileWriterTo::new(Vec::new(), WriteOptions::default()).unwrap();
        let t = Tensor::from_dense(ElementType::Int8, &[1], &[7]).unwrap();
        let names = ["a", "bé", "", "long name"];
        for n in names.iter().filter(|n| !n.is_empty()) {
            w.write_tensor(n, &t).unwrap();
        }
        let strings: Vec<String> = (0..150).map(|i| "x".repeat(i % 7)).collect();
        w.add_kv("s", KvValue::String("héllo".into())).unwrap();
        w.add_kv("n", KvValue::Int64(3)).unwrap();
        w.add_kv("arr", KvValue::Array(KvArray::String(strings.clone())))
            .unwrap();
        w.add_kv("e", KvValue::String(String::new())).unwrap();
        let r = FileReader::from_bytes(&w.finish().unwrap()).unwrap();
        let text = FileText::default();
        let z = |s: &str| [s.as_bytes(), &[0]].concat();
        for (i, n) in r.names().enumerate() {
            assert_eq!(text.name(&r, i).unwrap(), z(n));
        }
        assert_eq!(text.name(&r, 3), None);
        for (i, k) in ["s", "n", "arr", "e"].iter().enumerate() {
            assert_eq!(text.key(&r, i).unwrap(), z(k));
        }
        assert_eq!(text.string(&r, 0).unwrap(), z("héllo"));
        assert_eq!(text.string(&r, 1), None);
        assert_eq!(text.string(&r, 3).unwrap(), z(""));
        for (k, s) in strings.iter().enumerate() {
            assert_eq!(text.element(&r, 2, k).unwrap(), z(s));
        }
        assert_eq!(text.element(&r, 2, strings.len()), None);
    }

    #[test]
    fn empty_strings_make_no_copy() {
        let mut w = FileWriterTo::new(Vec::new(), WriteOptions::default()).unwrap();
        w.add_kv(
            "a",
            KvValue::Array(KvArray::String(vec![String::new(); 100])),
        )
        .unwrap();
        w.add_kv("e", KvValue::String(String::new())).unwrap();
        let r = FileReader::from_bytes(&w.finish().unwrap()).unwrap();
        let text = FileText::default();
        for k in 0..100 {
            assert_eq!(text.element(&r, 0, k).unwrap(), b"\0");
        }
        assert_eq!(text.string(&r, 1).unwrap(), b"\0");
        assert!(text.kv.get().is_none(), "no KV text was made");
        assert_eq!(text.key(&r, 1).unwrap(), b"e\0");
        assert!(text.kv.get().is_some());
    }
}
