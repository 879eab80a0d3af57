//! The producer and consumer commands, and two helpers for `cargo xtask`: `locate`
//! (which part of a file a byte offset falls in) and `views` (the demo's open + view
//! + checksum of every tensor of a file).

use crate::build;
use crate::case::{Case, Item};
use crate::check;
use hurray_io::file::WriteOptions;
use hurray_io::{FileReader, FileWriter, StreamReader, StreamWriter};
use std::fs::File;
use std::io::BufWriter;
use std::path::Path;

/// The two containers: file extension and the name used in results.
pub const CONTAINERS: [(&str, &str); 2] = [("hrry", "file"), ("hrrys", "stream")];

/// Writes `case` as `DIR/CASE.hrry` and `DIR/CASE.hrrys`.
///
/// Errors: the first failure, as a sentence.
pub fn produce(case: &Case, dir: &Path) -> Result<(), String> {
    let items = case
        .items
        .iter()
        .map(build::item)
        .collect::<Result<Vec<_>, _>>()?;
    let path = dir.join(format!("{}.hrry", case.name));
    let opts = WriteOptions {
        durable: false,
        ..WriteOptions::default()
    };
    let mut w = FileWriter::create(&path, opts).map_err(|e| format!("create: {e}"))?;
    for (spec, it) in case.items.iter().zip(&items) {
        match it {
            hurray_io::Item::Tensor(t) => w.write_tensor(spec.name(), t),
            hurray_io::Item::Composite(c) => w.write_composite(spec.name(), c),
        }
        .map_err(|e| format!("write {:?}: {e}", spec.name()))?;
    }
    for (k, v) in &case.kv {
        w.add_kv(k.clone(), build::kv(v))
            .map_err(|e| format!("kv {k:?}: {e}"))?;
    }
    w.finish().map_err(|e| format!("finish: {e}"))?;

    let path = dir.join(format!("{}.hrrys", case.name));
    let f = File::create(&path).map_err(|e| format!("create {}: {e}", path.display()))?;
    let mut s = StreamWriter::new(BufWriter::new(f));
    for it in &items {
        s.write_item(it).map_err(|e| format!("stream: {e}"))?;
    }
    s.flush().map_err(|e| format!("stream flush: {e}"))
}

/// Checks the file `path` against `case`.
pub fn check_file(case: &Case, path: &Path) -> Result<(), String> {
    let r = FileReader::open(path).map_err(|e| format!("open: {e}"))?;
    let mut want = Vec::new();
    case.items.iter().for_each(|i| i.names(&mut want));
    let got: Vec<&str> = r.names().collect();
    if got != want {
        return Err(format!("tensor names: expected {want:?}, got {got:?}"));
    }
    let items = r.items().map_err(|e| format!("items: {e}"))?;
    if items.len() != case.items.len() {
        return Err(format!(
            "expected {} top-level items, got {}",
            case.items.len(),
            items.len()
        ));
    }
    for (spec, (name, got)) in case.items.iter().zip(&items) {
        if name != spec.name() {
            return Err(format!("expected item {:?}, got {name:?}", spec.name()));
        }
        check::item(spec, got)?;
    }
    check::kv(&case.kv, &r.kv().to_vec())
}

/// Checks the stream `path` against `case`.
pub fn check_stream(case: &Case, path: &Path) -> Result<(), String> {
    let f = File::open(path).map_err(|e| format!("open: {e}"))?;
    let mut items = StreamReader::new(std::io::BufReader::new(f));
    for (i, spec) in case.items.iter().enumerate() {
        match items.next() {
            None => {
                return Err(format!(
                    "the stream ends after {i} items, expected {}",
                    case.items.len()
                ))
            }
            Some(Err(e)) => return Err(format!("item {i}: {e}")),
            Some(Ok(got)) => check::item(spec, &got)?,
        }
    }
    match items.next() {
        None => Ok(()),
        Some(Ok(_)) => Err(format!(
            "more than the expected {} items in the stream",
            case.items.len()
        )),
        Some(Err(e)) => Err(format!("after the last item: {e}")),
    }
}

/// One consumer result line: `result PRODUCER CONTAINER CASE STATUS DETAIL`
/// (tab-separated).
pub fn result_line(producer: &str, container: &str, case: &str, outcome: &Result<(), String>) {
    let (status, detail) = match outcome {
        Ok(()) => ("pass", String::new()),
        Err(e) => ("fail", e.replace(['\t', '\n'], " ")),
    };
    println!("result\t{producer}\t{container}\t{case}\t{status}\t{detail}");
}

/// Checks every case of every producer directory; prints one result line per
/// (producer, container, case). A `CASE.EXT.na` file from the producer says it could
/// not write that container; its text becomes an `na` result.
pub fn consume(cases: &[Case], dirs: &[&Path]) {
    for dir in dirs {
        let producer = dir.file_name().map_or("?".into(), |n| n.to_string_lossy());
        for case in cases {
            for (ext, container) in CONTAINERS {
                let path = dir.join(format!("{}.{ext}", case.name));
                let na = dir.join(format!("{}.{ext}.na", case.name));
                if let Ok(why) = std::fs::read_to_string(&na) {
                    println!(
                        "result\t{producer}\t{container}\t{}\tna\tproducer: {}",
                        case.name,
                        why.trim()
                    );
                    continue;
                }
                let outcome = if path.exists() {
                    if ext == "hrry" {
                        check_file(case, &path)
                    } else {
                        check_stream(case, &path)
                    }
                } else {
                    Err(format!("no output {}", path.display()))
                };
                result_line(&producer, container, &case.name, &outcome);
            }
        }
    }
}

/// Which part of an HRRYFILE byte `offset` lies in, as a phrase.
pub fn locate_in_file(bytes: &[u8], offset: u64) -> String {
    let r = match FileReader::from_bytes(bytes) {
        Ok(r) => r,
        Err(e) => return format!("(the file does not open: {e})"),
    };
    let info = r.info();
    let t = &info.trailer;
    if offset < 64 {
        return format!("file header byte {offset}");
    }
    if offset >= info.file_len.saturating_sub(40) {
        return format!("trailer byte {}", offset - (info.file_len - 40));
    }
    if t.kv_length > 0 && (t.kv_offset..t.kv_offset + u64::from(t.kv_length)).contains(&offset) {
        return format!("KV section byte {}", offset - t.kv_offset);
    }
    if (t.index_offset..t.index_offset + t.index_length).contains(&offset) {
        return format!("index byte {}", offset - t.index_offset);
    }
    for e in r.entries() {
        let d = e.descriptor_offset;
        if (d..d + u64::from(e.descriptor_length)).contains(&offset) {
            return format!("descriptor of tensor {:?}, byte {}", e.name, offset - d);
        }
        if let Some(desc) = r.descriptor(e.name) {
            let align = u64::from(info.data_buffer_alignment());
            let mut at = e.data_offset;
            for (i, b) in desc.buffers.iter().enumerate() {
                if (at..at + b.byte_size).contains(&offset) {
                    return format!("buffer {i} of tensor {:?}, byte {}", e.name, offset - at);
                }
                at = (at + b.byte_size).div_ceil(align) * align;
            }
        }
    }
    "padding".into()
}

/// Which part of a stream byte `offset` lies in: the descriptor or a buffer of a
/// tensor of item N (a stream is descriptors and buffers back to back).
pub fn locate_in_stream(bytes: &[u8], offset: u64) -> String {
    let mut reader = StreamReader::new(bytes);
    let mut n = 0usize;
    let mut at = 0u64;
    loop {
        match reader.next() {
            Some(Ok(it)) => {
                let mut found = None;
                let mut k = 0usize;
                it.for_each_tensor(&mut |t| {
                    let d = t.descriptor().encoded_len() as u64;
                    if found.is_none() && (at..at + d).contains(&offset) {
                        found = Some(format!(
                            "item {n}, tensor {k}: descriptor byte {}",
                            offset - at
                        ));
                    }
                    at += d;
                    for (i, b) in t.buffers().iter().enumerate() {
                        let len = b.len() as u64;
                        if found.is_none() && (at..at + len).contains(&offset) {
                            found = Some(format!(
                                "item {n}, tensor {k}: buffer {i} byte {}",
                                offset - at
                            ));
                        }
                        at += len;
                    }
                    k += 1;
                });
                if let Some(f) = found {
                    return f;
                }
                n += 1;
            }
            Some(Err(e)) => return format!("item {n}, which does not decode: {e}"),
            None => return "past the last item".into(),
        }
    }
}

/// How many more times the demo's `views` programs open and view the file in the
/// same process, after the first (timed) pass; the best of them is the `warm` figure.
pub const WARM_RUNS: usize = 200;

/// Opens `path` (memory-mapped) and takes every tensor, in index order.
fn open_all(path: &Path) -> Result<(FileReader, Vec<(String, hurray_io::Tensor)>), String> {
    let r = FileReader::open(path).map_err(|e| format!("open: {e}"))?;
    let tensors = r
        .tensors()
        .map(|(n, t)| {
            t.map(|t| (n.to_string(), t))
                .map_err(|e| format!("{n}: {e}"))
        })
        .collect::<Result<_, _>>()?;
    Ok((r, tensors))
}

/// A zero-copy view (a slice of the mapping) of every buffer of every tensor.
fn view_all(tensors: &[(String, hurray_io::Tensor)]) -> Vec<(&str, Vec<&[u8]>)> {
    tensors
        .iter()
        .map(|(n, t)| {
            (
                n.as_str(),
                t.buffers().iter().map(|b| b.as_slice()).collect(),
            )
        })
        .collect()
}

/// The demo's Rust column: opens `path` (memory-mapped), takes a zero-copy view of
/// every tensor's buffers, then prints `view NAME CRC32` lines (CRC-32, the zlib
/// polynomial, over the buffers' bytes in order) and `time OPEN_AND_VIEW_SECONDS`
/// (this first pass, in a fresh process). Then it drops everything and opens and
/// views the file [`WARM_RUNS`] more times, and prints `warm SECONDS`: the fastest
/// of those open + view passes (dropping the reader and tensors is outside the
/// timing, as in the first pass).
pub fn views(path: &Path) -> Result<(), String> {
    let t0 = std::time::Instant::now();
    let (r, tensors) = open_all(path)?;
    let views = view_all(&tensors);
    let secs = t0.elapsed().as_secs_f64();
    let base = r.bytes().as_ptr_range();
    for (name, bufs) in &views {
        let mut crc = crc32fast::Hasher::new();
        for b in bufs {
            if !b.is_empty() && !base.contains(&b.as_ptr()) {
                return Err(format!("{name}: the view is not inside the mapped file"));
            }
            crc.update(b);
        }
        println!("view\t{name}\t{:08x}", crc.finalize());
    }
    println!("time\t{secs:.6}");
    let count = views.len();
    drop(views);
    drop((r, tensors));
    let mut warm = f64::MAX;
    for _ in 0..WARM_RUNS {
        let t0 = std::time::Instant::now();
        let (r, tensors) = open_all(path)?;
        let views = view_all(&tensors);
        warm = warm.min(t0.elapsed().as_secs_f64());
        if std::hint::black_box(&views).len() != count {
            return Err(format!(
                "a warm pass listed {} tensors, the first {count}",
                views.len()
            ));
        }
        drop(views);
        drop((r, tensors));
    }
    println!("warm\t{warm:.6}");
    Ok(())
}

/// Whether a case contains a composite (used by tests).
pub fn has_composite(case: &Case) -> bool {
    case.items.iter().any(|i| matches!(i, Item::Composite(_)))
}
