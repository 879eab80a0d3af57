//! `hurray compare REFERENCE OTHER...`: whether files in any supported format hold
//! the same tensors: per tensor its name, Hurray dtype, shape and a CRC-32C of its
//! bytes in Hurray form (so a safetensors `BOOL` tensor and its bit-packed Hurray
//! copy compare equal), plus the KV metadata. Prints a table and a verdict.
//!
//! Each file is read as a conversion source and streamed through a checksum, so
//! comparing needs no more memory than converting.

use crate::convert::sink::{Finished, Sink};
use crate::convert::{open_source, Source};
use crate::detect;
use crate::dtype::Carry;
use crate::error::{Error, Result};
use crate::inspect::table::human;
use crate::output::{Chunks, Data, Job};
use crate::progress::Progress;
use hurray_core::TensorDescriptor;
use hurray_io::file::data_crc::DATA_CRC32C_KEY;
use hurray_io::file::KvEntry;
use hurray_io::Item;
use std::fmt::Write;
use std::io::{Seek, SeekFrom};
use std::path::{Path, PathBuf};

/// What identifies one tensor's content.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Digest {
    /// Name (position-based for streams).
    pub name: String,
    /// Element type name.
    pub dtype: String,
    /// Shape.
    pub shape: Vec<u64>,
    /// Layout name.
    pub layout: String,
    /// Bytes in Hurray form (all buffers).
    pub bytes: u64,
    /// CRC-32C of those bytes, buffers in order.
    pub crc: u32,
}

/// The digests of one file.
#[derive(Debug)]
pub struct FileDigest {
    /// The file.
    pub path: PathBuf,
    /// Its format.
    pub format: detect::Format,
    /// Whether its tensors have names.
    pub has_names: bool,
    /// Tensors in file order.
    pub tensors: Vec<Digest>,
    /// KV entries as `(key, value)` text, in file order.
    pub kv: Vec<(String, String)>,
}

/// A sink that writes nothing and checksums everything.
#[derive(Default)]
struct DigestSink {
    tensors: Vec<Digest>,
    kv: Vec<(String, String)>,
    chunks: Chunks,
}

fn digest_of(name: &str, d: &TensorDescriptor, bytes: u64, crc: u32) -> Digest {
    Digest {
        name: name.to_owned(),
        dtype: d.element_type.to_string(),
        shape: d.shape.clone(),
        layout: d.layout.name().to_owned(),
        bytes,
        crc,
    }
}

impl Sink for DigestSink {
    fn add_kv(&mut self, entry: KvEntry) -> Result<()> {
        let text = crate::inspect::kv_json(&entry.value);
        self.kv.push((entry.key, text));
        Ok(())
    }

    fn tensor(
        &mut self,
        name: &str,
        d: &TensorDescriptor,
        data: Data<'_>,
        carry: Carry,
    ) -> Result<()> {
        let elements = hurray_core::element_count(&d.shape).unwrap_or(0);
        let what = format!("tensor {name:?}");
        let (mut crc, mut bytes) = (0u32, 0u64);
        let mut sum = |b: &[u8]| {
            crc = crc32c::crc32c_append(crc, b);
            bytes += b.len() as u64;
            Ok(())
        };
        let job = |len, at| Job {
            len,
            at,
            carry,
            elements,
            what: &what,
        };
        let hidden = Progress::hidden();
        match data {
            Data::Range { file, start, len } => {
                let mut f = file;
                f.seek(SeekFrom::Start(start))?;
                self.chunks
                    .each(&mut f, &job(len, start), &hidden, &mut sum)?;
            }
            Data::Reader { reader, len, at } => {
                self.chunks.each(reader, &job(len, at), &hidden, &mut sum)?;
            }
            Data::Memory(m) => {
                let mut r = m;
                self.chunks
                    .each(&mut r, &job(m.len() as u64, 0), &hidden, &mut sum)?;
            }
        }
        self.tensors.push(digest_of(name, d, bytes, crc));
        Ok(())
    }

    fn item(&mut self, names: &[&str], item: &Item) -> Result<()> {
        let mut i = 0;
        item.for_each_tensor(&mut |t| {
            let crc = t
                .buffers()
                .iter()
                .fold(0, |c, b| crc32c::crc32c_append(c, b.as_slice()));
            let name = names.get(i).copied().unwrap_or("");
            self.tensors
                .push(digest_of(name, t.descriptor(), t.data_len(), crc));
            i += 1;
        });
        Ok(())
    }

    fn finish(self: Box<Self>) -> Result<Finished> {
        Ok(Finished::default())
    }
}

/// Reads and checksums every tensor of the file at `path`.
///
/// Errors: those of opening and reading it as a conversion source.
pub fn digest(path: &Path) -> Result<FileDigest> {
    let run = || -> Result<FileDigest> {
        let format = detect::detect(path)?;
        let mut source: Box<dyn Source> = open_source(path, format)?;
        let mut sink = DigestSink::default();
        source.feed(&mut sink)?;
        Ok(FileDigest {
            path: path.to_path_buf(),
            format,
            has_names: source.has_names(),
            tensors: sink.tensors,
            kv: sink.kv,
        })
    };
    run().map_err(|e| e.at_path(path))
}

/// The comparison of several files against the first.
#[derive(Debug)]
pub struct Comparison {
    /// The text report (table and verdict).
    pub report: String,
    /// True when every file matches the reference.
    pub same: bool,
}

/// How `other`'s version of a tensor compares with the reference's.
fn cell(reference: &Digest, other: Option<&Digest>) -> Option<String> {
    let Some(o) = other else {
        return Some("missing".into());
    };
    if o.dtype != reference.dtype {
        return Some(format!("dtype {}", o.dtype));
    }
    if o.shape != reference.shape {
        return Some(format!("shape {:?}", o.shape));
    }
    if o.layout != reference.layout {
        return Some(format!("layout {}", o.layout));
    }
    if o.bytes != reference.bytes || o.crc != reference.crc {
        return Some(format!("DIFFERS {:#010x}", o.crc));
    }
    None
}

/// Compares the files at `paths` (at least two) against the first.
///
/// Errors: a file cannot be read; fewer than two files.
pub fn compare(paths: &[PathBuf]) -> Result<Comparison> {
    if paths.len() < 2 {
        return Err(Error::usage(
            "compare needs a reference file and at least one other",
        ));
    }
    let files = paths
        .iter()
        .map(|p| digest(p))
        .collect::<Result<Vec<_>>>()?;
    let reference = &files[0];
    let by_name = files.iter().all(|f| f.has_names);
    let mut out = String::new();
    let _ = writeln!(out, "Reference [1] {}", reference.path.display());
    for (i, f) in files.iter().enumerate() {
        let _ = writeln!(
            out,
            "  [{}] {} ({}, {} tensors, {} data bytes)",
            i + 1,
            f.path.display(),
            f.format,
            f.tensors.len(),
            human(f.tensors.iter().map(|t| t.bytes).sum())
        );
    }
    let mut header = vec![
        "TENSOR".to_owned(),
        "DTYPE".into(),
        "SHAPE".into(),
        "BYTES".into(),
        "CRC-32C".into(),
    ];
    header.extend((2..=files.len()).map(|i| format!("[{i}]")));
    let mut rows = Vec::new();
    let mut differing = 0usize;
    for (k, r) in reference.tensors.iter().enumerate() {
        let mut row = vec![
            r.name.clone(),
            r.dtype.clone(),
            format!("{:?}", r.shape),
            r.bytes.to_string(),
            format!("{:#010x}", r.crc),
        ];
        let mut same = true;
        for f in &files[1..] {
            let other = if by_name {
                f.tensors.iter().find(|t| t.name == r.name)
            } else {
                f.tensors.get(k)
            };
            match cell(r, other) {
                None => row.push("same".into()),
                Some(why) => {
                    same = false;
                    row.push(why);
                }
            }
        }
        differing += usize::from(!same);
        rows.push(row);
    }
    let mut problems = Vec::new();
    for f in &files[1..] {
        let extra = if by_name {
            f.tensors
                .iter()
                .filter(|t| !reference.tensors.iter().any(|r| r.name == t.name))
                .count()
        } else {
            f.tensors.len().saturating_sub(reference.tensors.len())
        };
        if extra > 0 {
            problems.push(format!(
                "{} has {extra} tensors the reference lacks",
                f.path.display()
            ));
        }
        let comparable_kv = !matches!(
            f.format,
            detect::Format::Stream | detect::Format::Npy | detect::Format::Npz
        ) && !matches!(
            reference.format,
            detect::Format::Stream | detect::Format::Npy | detect::Format::Npz
        );
        if comparable_kv {
            // The reserved data CRC-32C entry describes the data, which the CRC column
            // compares byte for byte; whether a file recorded it is not a difference.
            let user_kv = |kv: &[(String, String)]| {
                let mut kv: Vec<(String, String)> = kv
                    .iter()
                    .filter(|(k, _)| k != DATA_CRC32C_KEY)
                    .cloned()
                    .collect();
                kv.sort();
                kv
            };
            let (a, b) = (user_kv(&reference.kv), user_kv(&f.kv));
            if a != b {
                problems.push(format!("{} has different KV metadata", f.path.display()));
            }
        }
    }
    out.push('\n');
    out += &crate::inspect::table::columns(
        &header.iter().map(String::as_str).collect::<Vec<_>>(),
        &rows,
        &[3],
    );
    if !reference.kv.is_empty() {
        let kv: Vec<String> = reference
            .kv
            .iter()
            .map(|(k, v)| crate::inspect::table::printable(&format!("{k} = {v}")))
            .collect();
        let _ = writeln!(out, "\nKV metadata of the reference: {}", kv.join(", "));
    }
    let same = differing == 0 && problems.is_empty();
    let n = reference.tensors.len();
    if same {
        let all = match files.len() {
            2 => "both files".to_owned(),
            k => format!("all {k} files"),
        };
        let _ = writeln!(
            out,
            "\nPASS: all {n} tensors have the same name, dtype, shape and bytes in {all}; KV metadata is the same."
        );
    } else {
        let _ = write!(out, "\nFAIL: {differing} of {n} tensors differ");
        for p in &problems {
            let _ = write!(out, "; {p}");
        }
        out.push_str(".\n");
    }
    Ok(Comparison { report: out, same })
}
