//! Writes the seed corpora of the fuzz targets in `fuzz/` (see docs/fuzzing.md):
//! valid inputs made with the library, plus the conformance vectors when their
//! directory is given. `cargo xtask fuzz` runs it before fuzzing.
//!
//! ```text
//! cargo run -p hurray-cli --example fuzz_seeds -- OUT_DIR [CONFORMANCE_DIR]
//! ```
//!
//! Writes `OUT_DIR/<target>/<name>` for the targets `descriptor`, `stream`, `file`,
//! `composite`, `cli_safetensors`, `cli_numpy` and `cli_validate`, replacing what was
//! there. The
//! conformance directory is only read. Stream seeds start with the 4 control bytes
//! the `stream` target reads (flags, three chunk sizes).

#[path = "../../hurray-io/tests/stream_common/mod.rs"]
mod stream_common;

use hurray_core::{ElementType, Shard, TensorDescriptor};
use hurray_io::file::{FileWriterTo, KvArray, KvValue, WriteOptions};
use hurray_io::{Buffer, Composite, Item, StreamWriter, Tensor};
use std::io::Write;
use std::path::{Path, PathBuf};

type Result<T = ()> = std::result::Result<T, Box<dyn std::error::Error>>;

/// The corpus directory of one target.
struct Corpus {
    dir: PathBuf,
    count: usize,
}

impl Corpus {
    fn new(out: &Path, target: &str) -> Result<Corpus> {
        let dir = out.join(target);
        if dir.exists() {
            std::fs::remove_dir_all(&dir)?;
        }
        std::fs::create_dir_all(&dir)?;
        Ok(Corpus { dir, count: 0 })
    }

    fn add(&mut self, name: &str, bytes: &[u8]) -> Result {
        std::fs::write(self.dir.join(name), bytes)?;
        self.count += 1;
        Ok(())
    }
}

/// The control prefixes stream seeds are written with (see the `stream` target):
/// whole; odd small chunks; the `feed` path with small eager allocation; a pool and
/// the blocking reader.
const CONTROLS: [[u8; 4]; 4] = [[0, 0, 0, 0], [0, 1, 7, 200], [3, 64, 3, 0], [12, 5, 0, 9]];

fn stream_of(items: &[Item]) -> Result<Vec<u8>> {
    let mut w = StreamWriter::new(Vec::new());
    for item in items {
        w.write_item(item)?;
    }
    Ok(w.into_inner())
}

fn descriptors_of(item: &Item) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    let mut err = None;
    item.for_each_tensor(&mut |t| {
        if let Err(e) = t.descriptor().encode_into(&mut out) {
            err = Some(e);
        }
    });
    match err {
        Some(e) => Err(e.into()),
        None => Ok(out),
    }
}

fn kv_sample() -> Vec<(&'static str, KvValue)> {
    vec![
        ("producer", KvValue::String("fuzz seeds".into())),
        ("int", KvValue::Int64(-7)),
        ("uint", KvValue::UInt64(u64::MAX)),
        ("float", KvValue::Float64(0.25)),
        ("flag", KvValue::Bool(true)),
        ("bytes", KvValue::Bytes(vec![0, 1, 0xFF])),
        (
            "names",
            KvValue::Array(KvArray::String(vec!["a".into(), String::new()])),
        ),
        ("dims", KvValue::Array(KvArray::UInt64(vec![3, 4]))),
        ("empty", KvValue::Array(KvArray::Float64(Vec::new()))),
    ]
}

fn file_of(items: &[Item], kv: bool, opts: WriteOptions) -> Result<Vec<u8>> {
    let mut w = FileWriterTo::new(Vec::new(), opts)?;
    if kv {
        for (k, v) in kv_sample() {
            w.add_kv(k, v)?;
        }
    }
    for (i, item) in items.iter().enumerate() {
        let name = format!("t{i}");
        match item {
            Item::Tensor(t) => w.write_tensor(&name, t)?,
            Item::Composite(c) => w.write_composite(&name, c)?,
        }
    }
    Ok(w.finish()?)
}

/// A tensor over `d` with zero-filled buffers.
fn zeroed(d: TensorDescriptor) -> Result<Tensor> {
    let bufs = d
        .buffers
        .iter()
        .map(|h| Buffer::copy_from(&vec![0u8; h.byte_size as usize]))
        .collect();
    Ok(Tensor::new(d, bufs)?)
}

/// The conformance descriptors, by file name.
fn conformance_descriptors(conf: &Path) -> Result<Vec<(String, Vec<u8>)>> {
    let mut v = Vec::new();
    for e in std::fs::read_dir(conf.join("descriptors"))? {
        let p = e?.path();
        if p.extension().is_some_and(|x| x == "bin") {
            let name = p
                .file_stem()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned();
            v.push((name, std::fs::read(&p)?));
        }
    }
    v.sort();
    Ok(v)
}

/// The conformance partition head followed by two shards covering it: a `[8, 4]`
/// shard at column 0 made here and the conformance `sharded_f32_8x4` at column 4.
fn conformance_partition(conf: &[(String, Vec<u8>)]) -> Option<Vec<u8>> {
    let get = |n: &str| conf.iter().find(|(name, _)| name == n).map(|(_, b)| b);
    let head = get("composite_head_partition")?;
    let right = get("sharded_f32_8x4")?;
    let mut left = TensorDescriptor::dense(ElementType::Float32, &[8, 4]).ok()?;
    left.shard = Some(Shard {
        parent_shape: vec![8, 8],
        offset: vec![0, 0],
    });
    let mut out = head.clone();
    left.encode_into(&mut out).ok()?;
    out.extend_from_slice(right);
    Some(out)
}

fn hurray_seeds(out: &Path, conf: Option<&Path>) -> Result<Vec<(&'static str, usize)>> {
    let conf_desc = match conf {
        Some(c) => conformance_descriptors(c)?,
        None => Vec::new(),
    };
    let all = stream_common::all_items();
    let small = stream_common::small_items();

    let mut desc = Corpus::new(out, "descriptor")?;
    for (name, bytes) in &conf_desc {
        desc.add(&format!("conformance-{name}"), bytes)?;
    }
    let mut n = 0;
    for item in &all {
        let mut err = None;
        item.for_each_tensor(&mut |t| match t.descriptor().encode() {
            Ok(b) => {
                if let Err(e) = desc.add(&format!("gen-{n}"), &b) {
                    err = Some(e);
                }
                n += 1;
            }
            Err(e) => err = Some(e.into()),
        });
        if let Some(e) = err {
            return Err(e);
        }
    }

    // `cli_validate` gets every stream (without control bytes) and every file.
    let mut cli = Corpus::new(out, "cli_validate")?;
    let mut stream = Corpus::new(out, "stream")?;
    let mut add_stream = |name: &str, body: &[u8], ctls: &[[u8; 4]]| -> Result {
        for (k, ctl) in ctls.iter().enumerate() {
            let mut b = ctl.to_vec();
            b.extend_from_slice(body);
            stream.add(&format!("{name}-c{k}"), &b)?;
        }
        cli.add(&format!("stream-{name}"), body)
    };
    add_stream("empty", &[], &CONTROLS[..1])?;
    add_stream("small-mix", &stream_of(&small)?, &CONTROLS)?;
    for (i, item) in all.iter().enumerate() {
        add_stream(
            &format!("item-{i}"),
            &stream_of(std::slice::from_ref(item))?,
            &CONTROLS[..1],
        )?;
    }
    for (name, bytes) in &conf_desc {
        let d = TensorDescriptor::decode(bytes)?;
        // A composite head alone is not a whole stream item; it is seeded below.
        if let Ok(t) = zeroed(d) {
            if let Ok(s) = stream_of(&[Item::Tensor(t)]) {
                add_stream(&format!("conformance-{name}"), &s, &CONTROLS[..1])?;
            }
        }
    }

    let mut composite = Corpus::new(out, "composite")?;
    for (i, item) in all.iter().enumerate() {
        if matches!(item, Item::Composite(_)) || i % 4 == 0 {
            composite.add(&format!("gen-{i}"), &descriptors_of(item)?)?;
        }
    }
    if let Some(p) = conformance_partition(&conf_desc) {
        composite.add("conformance-partition", &p)?;
        // The same partition as a stream, from its descriptors and zeroed buffers.
        let mut ts = Vec::new();
        let mut rest = &p[..];
        while !rest.is_empty() {
            let (d, used) =
                TensorDescriptor::decode_prefix(rest, &hurray_core::DecodeOptions::strict())?;
            ts.push(zeroed(d)?);
            rest = &rest[used..];
        }
        let mut ts = ts.into_iter();
        if let Some(head) = ts.next() {
            let c = Composite {
                head,
                members: ts.map(Item::Tensor).collect(),
            };
            add_stream(
                "conformance-partition",
                &stream_of(&[Item::Composite(c)])?,
                &CONTROLS,
            )?;
        }
    }
    let stream_count = stream.count;

    let mut file = Corpus::new(out, "file")?;
    let mut add_file = |name: &str, bytes: &[u8]| -> Result {
        file.add(name, bytes)?;
        cli.add(&format!("file-{name}"), bytes)
    };
    if let Some(c) = conf {
        add_file(
            "conformance-basic.hrry",
            &std::fs::read(c.join("files/basic.hrry"))?,
        )?;
    }
    add_file("empty", &file_of(&[], false, WriteOptions::default())?)?;
    add_file("kv-only", &file_of(&[], true, WriteOptions::default())?)?;
    add_file(
        "small-mix-kv",
        &file_of(&small[..3], true, WriteOptions::default())?,
    )?;
    let sorted = WriteOptions {
        sorted_index: true,
        index_crc: false,
        tensor_count_hint: Some(small[3..].iter().map(Item::tensor_count).sum::<usize>() as u64),
        ..WriteOptions::default()
    };
    add_file("small-mix-sorted", &file_of(&small[3..], false, sorted)?)?;
    let compat = WriteOptions {
        reference_compat: true,
        ..WriteOptions::default()
    };
    add_file("reference-compat", &file_of(&small[..2], true, compat)?)?;
    // Every other item, a few per file (files stay small: each buffer sits at 4096).
    let rest: Vec<Item> = all
        .iter()
        .filter(|i| tensor_bytes(i) < 4096)
        .cloned()
        .collect();
    for (k, chunk) in rest.chunks(3).enumerate() {
        add_file(
            &format!("items-{k}"),
            &file_of(chunk, k == 0, WriteOptions::default())?,
        )?;
    }

    let file_count = file.count;
    Ok(vec![
        ("descriptor", desc.count),
        ("stream", stream_count),
        ("composite", composite.count),
        ("file", file_count),
        ("cli_validate", cli.count),
    ])
}

fn tensor_bytes(item: &Item) -> u64 {
    let mut n = 0;
    item.for_each_tensor(&mut |t| n += t.data_len());
    n
}

/// A `.npy` array (format 1.0, or 2.0 with a 4-byte header length).
fn npy(version: u8, descr: &str, fortran: bool, shape: &str, data: &[u8]) -> Vec<u8> {
    let dict = format!(
        "{{'descr': '{descr}', 'fortran_order': {}, 'shape': {shape}, }}",
        if fortran { "True" } else { "False" }
    );
    let fixed = if version == 1 { 10 } else { 12 };
    let mut text = dict.into_bytes();
    while (fixed + text.len() + 1) % 64 != 0 {
        text.push(b' ');
    }
    text.push(b'\n');
    let mut v = b"\x93NUMPY".to_vec();
    v.extend([version, 0]);
    if version == 1 {
        v.extend((text.len() as u16).to_le_bytes());
    } else {
        v.extend((text.len() as u32).to_le_bytes());
    }
    v.extend(text);
    v.extend(data);
    v
}

/// A safetensors file: `(name, dtype, shape, data)` in data order, plus metadata.
fn safetensors(tensors: &[(&str, &str, &[u64], &[u8])], meta: Option<&str>) -> Vec<u8> {
    let mut entries = Vec::new();
    if let Some(m) = meta {
        entries.push(format!("\"__metadata__\":{m}"));
    }
    let mut at = 0;
    let mut data = Vec::new();
    for (name, dtype, shape, bytes) in tensors {
        let dims: Vec<String> = shape.iter().map(u64::to_string).collect();
        entries.push(format!(
            "\"{name}\":{{\"dtype\":\"{dtype}\",\"shape\":[{}],\"data_offsets\":[{at},{}]}}",
            dims.join(","),
            at + bytes.len()
        ));
        at += bytes.len();
        data.extend_from_slice(bytes);
    }
    let mut header = format!("{{{}}}", entries.join(",")).into_bytes();
    while header.len() % 8 != 0 {
        header.push(b' ');
    }
    let mut v = (header.len() as u64).to_le_bytes().to_vec();
    v.extend(header);
    v.extend(data);
    v
}

fn cli_seeds(out: &Path) -> Result<Vec<(&'static str, usize)>> {
    let f32s: Vec<u8> = (0..12)
        .flat_map(|i| (i as f32 * 0.5).to_le_bytes())
        .collect();
    let mut st = Corpus::new(out, "cli_safetensors")?;
    st.add("empty", &safetensors(&[], None))?;
    st.add(
        "mix",
        &safetensors(
            &[
                ("w", "F32", &[3, 4], &f32s),
                ("mask", "BOOL", &[5], &[1, 0, 1, 1, 0]),
                (
                    "ids",
                    "I64",
                    &[2],
                    &[1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0],
                ),
                ("h", "BF16", &[2, 1], &[0x80, 0x3F, 0x00, 0xC0]),
            ],
            Some(r#"{"format":"pt","note":"seed"}"#),
        ),
    )?;
    st.add(
        "small-types",
        &safetensors(
            &[
                ("scalar", "F64", &[], &1.5f64.to_le_bytes()),
                ("none", "U8", &[0, 3], &[]),
                ("e4m3", "F8_E4M3", &[2], &[0x38, 0xB8]),
                ("e8m0", "F8_E8M0", &[2], &[127, 128]),
                ("half", "F16", &[1], &[0x00, 0x3C]),
            ],
            None,
        ),
    )?;

    let mut np = Corpus::new(out, "cli_numpy")?;
    np.add("f32", &npy(1, "<f4", false, "(3, 4)", &f32s))?;
    np.add(
        "fortran-u1",
        &npy(1, "|u1", true, "(2, 3)", &[1, 4, 2, 5, 3, 6]),
    )?;
    np.add("bool", &npy(1, "|b1", false, "(3,)", &[1, 0, 1]))?;
    np.add(
        "big-endian",
        &npy(
            1,
            ">i4",
            false,
            "(2,)",
            &[0, 0, 1, 0, 0xFF, 0xFF, 0xFF, 0xFE],
        ),
    )?;
    np.add(
        "scalar-v2",
        &npy(2, "<f8", false, "()", &2.5f64.to_le_bytes()),
    )?;
    np.add(
        "complex",
        &npy(1, "<c8", false, "(1,)", &[0, 0, 0x80, 0x3F, 0, 0, 0, 0x40]),
    )?;
    np.add("empty", &npy(1, "<i2", false, "(0, 5)", &[]))?;
    let mut z = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let deflated = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    z.start_file("a.npy", deflated)?;
    z.write_all(&npy(1, "<f4", false, "(3, 4)", &f32s))?;
    z.start_file("b/c.npy", zip::write::SimpleFileOptions::default())?;
    z.write_all(&npy(1, "<i2", false, "(1, 1)", &[7, 0]))?;
    np.add("archive.npz", &z.finish()?.into_inner())?;
    Ok(vec![("cli_safetensors", st.count), ("cli_numpy", np.count)])
}

fn main() -> Result {
    let mut args = std::env::args_os().skip(1);
    let Some(out) = args.next().map(PathBuf::from) else {
        return Err("usage: fuzz_seeds OUT_DIR [CONFORMANCE_DIR]".into());
    };
    let conf = args.next().map(PathBuf::from);
    if let Some(c) = &conf {
        if !c.is_dir() {
            return Err(format!("{} is not a directory", c.display()).into());
        }
    }
    let mut counts = hurray_seeds(&out, conf.as_deref())?;
    counts.extend(cli_seeds(&out)?);
    for (target, n) in counts {
        println!("{target}: {n} seeds");
    }
    Ok(())
}
