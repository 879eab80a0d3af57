//! The network column of the matrix (issue 18) and the demo's network step:
//! `net-get`, `net-put` and `net-views` through `hurray-net`'s blocking client, and
//! two helpers for `cargo xtask matrix`: `net-combine` (the served file: every Rust
//! output's top-level items renamed `CASE:NAME`) and `net-compare` (every item of a
//! source directory against what came back, byte for byte).

use crate::case::Case;
use hurray_io::file::WriteOptions;
use hurray_io::{FileReader, FileWriter, Item, StreamWriter};
use hurray_net::{BlockingClient, ClientOptions, GetOptions};
use std::path::Path;

/// The key a case's top-level item is served and put under: `CASE:NAME`.
pub fn key(case: &str, name: &str) -> String {
    format!("{case}:{name}")
}

fn top_names(case: &Case) -> Vec<&str> {
    case.items.iter().map(|i| i.name()).collect()
}

fn connect(addr: &str) -> Result<BlockingClient, String> {
    BlockingClient::connect(addr, ClientOptions::default())
        .map_err(|e| format!("connect {addr}: {e}"))
}

/// Writes `items` (name, item) into a new HRRYFILE at `path` with the producer's
/// writer options, so that the bytes can equal the Rust producer's.
///
/// Errors: the writer's, as a sentence naming the item.
pub fn write_items(path: &Path, items: &[(String, Item)]) -> Result<(), String> {
    let opts = WriteOptions {
        durable: false,
        ..WriteOptions::default()
    };
    let mut w =
        FileWriter::create(path, opts).map_err(|e| format!("create {}: {e}", path.display()))?;
    for (name, it) in items {
        match it {
            Item::Tensor(t) => w.write_tensor(name, t),
            Item::Composite(c) => w.write_composite(name, c),
        }
        .map_err(|e| format!("write {name:?}: {e}"))?;
    }
    w.finish()
        .map_err(|e| format!("finish {}: {e}", path.display()))
}

/// `net-get ADDR CASES OUT_DIR`: GETs every top-level item of every case (key
/// `CASE:NAME`) from the server at `addr` and writes `OUT_DIR/CASE.hrry` holding them
/// under their names, in case order. A case that fails leaves no file (its cells
/// then fail) and is reported on standard error; the connection is opened again
/// after a failure.
///
/// Errors: how many cases failed.
pub fn get(addr: &str, cases: &[Case], out: &Path) -> Result<(), String> {
    std::fs::create_dir_all(out).map_err(|e| format!("{}: {e}", out.display()))?;
    let mut client: Option<BlockingClient> = None;
    let mut failed = 0;
    for c in cases {
        let r = (|| {
            let cl = match client.as_mut() {
                Some(cl) => cl,
                None => client.insert(connect(addr)?),
            };
            let mut items = Vec::new();
            for name in top_names(c) {
                let k = key(&c.name, name);
                let it = cl
                    .get(&k, &GetOptions::default())
                    .map_err(|e| format!("GET {k:?}: {e}"))?;
                items.push((name.to_string(), it));
            }
            write_items(&out.join(format!("{}.hrry", c.name)), &items)
        })();
        if let Err(e) = r {
            eprintln!("rust net-get: case {}: {e}", c.name);
            client = None;
            failed += 1;
        }
    }
    if failed == 0 {
        Ok(())
    } else {
        Err(format!("{failed} case(s) could not be fetched"))
    }
}

/// `net-put ADDR CASES DIR`: opens `DIR/CASE.hrry` of every case and PUTs each
/// top-level item (composites whole) under `CASE:NAME`.
///
/// Errors: how many cases failed (each reported on standard error).
pub fn put(addr: &str, cases: &[Case], dir: &Path) -> Result<(), String> {
    let mut client: Option<BlockingClient> = None;
    let mut failed = 0;
    for c in cases {
        let r = (|| {
            let path = dir.join(format!("{}.hrry", c.name));
            let f = FileReader::open(&path).map_err(|e| format!("{}: {e}", path.display()))?;
            let cl = match client.as_mut() {
                Some(cl) => cl,
                None => client.insert(connect(addr)?),
            };
            for name in top_names(c) {
                let it = f
                    .item(name)
                    .map_err(|e| format!("{name:?}: {e}"))?
                    .ok_or_else(|| format!("{}: no item {name:?}", path.display()))?;
                let k = key(&c.name, name);
                cl.put(&k, &it).map_err(|e| format!("PUT {k:?}: {e}"))?;
            }
            Ok::<(), String>(())
        })();
        if let Err(e) = r {
            eprintln!("rust net-put: case {}: {e}", c.name);
            client = None;
            failed += 1;
        }
    }
    if failed == 0 {
        Ok(())
    } else {
        Err(format!("{failed} case(s) could not be put"))
    }
}

/// `net-combine CASES DIR OUT`: the file `cargo xtask matrix` serves: every top-level
/// item of every `DIR/CASE.hrry`, renamed `CASE:NAME`, in case order (a case without
/// a file is left out).
///
/// Errors: an unreadable file or a writer error.
pub fn combine(cases: &[Case], dir: &Path, out: &Path) -> Result<(), String> {
    let mut all = Vec::new();
    let mut readers = Vec::new();
    for c in cases {
        let path = dir.join(format!("{}.hrry", c.name));
        if !path.is_file() {
            continue;
        }
        let f = FileReader::open(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        for name in top_names(c) {
            let it = f
                .item(name)
                .map_err(|e| format!("{}: {name:?}: {e}", path.display()))?
                .ok_or_else(|| format!("{}: no item {name:?}", path.display()))?;
            all.push((key(&c.name, name), it));
        }
        readers.push(f);
    }
    write_items(out, &all)
}

/// The bytes an item is compared by: its stream encoding (descriptors and buffers).
fn encode(it: &Item) -> Result<Vec<u8>, String> {
    let mut w = StreamWriter::new(Vec::new());
    w.write_item(it).map_err(|e| format!("encode: {e}"))?;
    w.flush().map_err(|e| format!("encode: {e}"))?;
    Ok(w.get_ref().clone())
}

/// `None` when equal, else where they first differ.
pub fn diff_items(want: &Item, got: &Item) -> Result<Option<String>, String> {
    let (a, b) = (encode(want)?, encode(got)?);
    if a == b {
        return Ok(None);
    }
    let at = a
        .iter()
        .zip(&b)
        .position(|(x, y)| x != y)
        .unwrap_or(a.len().min(b.len()));
    Ok(Some(format!(
        "stream encodings differ at byte {at} (expected {} bytes, got {})",
        a.len(),
        b.len()
    )))
}

/// `net-compare CASES SRC_DIR OTHER LABEL`: every top-level item of every
/// `SRC_DIR/CASE.hrry` against the same item in `OTHER`: a directory of `CASE.hrry`
/// files holding it under `NAME` (what `net-get` wrote) or one file holding it under
/// `CASE:NAME` (what `hurray serve --persist` wrote). Prints one
/// `result LABEL net CASE pass|fail|na DETAIL` line per case; `na` when the
/// directory has `CASE.hrry.na` (the reason).
pub fn compare(cases: &[Case], src: &Path, other: &Path, label: &str) -> Result<(), String> {
    for (case, st, detail) in compare_cases(cases, src, other)? {
        println!("result\t{label}\tnet\t{case}\t{st}\t{detail}");
    }
    Ok(())
}

/// What [`compare`] prints, as (case, `pass`|`fail`|`na`, detail) per case.
///
/// Errors: `other` is a file that cannot be opened.
pub fn compare_cases(
    cases: &[Case],
    src: &Path,
    other: &Path,
) -> Result<Vec<(String, &'static str, String)>, String> {
    let mut out = Vec::new();
    let one = if other.is_file() {
        Some(FileReader::open(other).map_err(|e| format!("{}: {e}", other.display()))?)
    } else {
        None
    };
    for c in cases {
        let mut na = None;
        let r = (|| {
            let sp = src.join(format!("{}.hrry", c.name));
            let s = FileReader::open(&sp).map_err(|e| format!("source {}: {e}", sp.display()))?;
            let opened;
            let (o, prefixed) = match &one {
                Some(f) => (f, true),
                None => {
                    let p = other.join(format!("{}.hrry", c.name));
                    if !p.is_file() {
                        let nap = other.join(format!("{}.hrry.na", c.name));
                        if let Ok(why) = std::fs::read_to_string(&nap) {
                            na = Some(why.trim().replace(['\t', '\n'], " "));
                            return Ok(());
                        }
                        return Err(format!("no {}", p.display()));
                    }
                    opened = FileReader::open(&p).map_err(|e| format!("{}: {e}", p.display()))?;
                    (&opened, false)
                }
            };
            for name in top_names(c) {
                let want = s
                    .item(name)
                    .map_err(|e| format!("source {name:?}: {e}"))?
                    .ok_or_else(|| format!("source has no {name:?}"))?;
                let on = if prefixed {
                    key(&c.name, name)
                } else {
                    name.to_string()
                };
                let got = o
                    .item(&on)
                    .map_err(|e| format!("{on:?}: {e}"))?
                    .ok_or_else(|| format!("no item {on:?}"))?;
                if let Some(d) = diff_items(&want, &got)? {
                    return Err(format!("item {on:?}: {d}"));
                }
            }
            Ok::<(), String>(())
        })();
        let (st, detail) = match (&na, r) {
            (Some(why), _) => ("na", why.clone()),
            (None, Ok(())) => ("pass", String::new()),
            (None, Err(e)) => ("fail", e.replace(['\t', '\n'], " ")),
        };
        out.push((c.name.clone(), st, detail));
    }
    Ok(out)
}

/// `net-views ADDR FILE`: the demo's network step. GETs every tensor named in
/// FILE's index (FILE is only read for the names, in index order) from the server at
/// `addr` over one connection and prints `view NAME CRC32` (CRC-32, zlib polynomial,
/// of the buffers' bytes in order, the same as `views`) and `time SECONDS` (connect
/// plus every GET).
///
/// Errors: the first failed connect or GET.
pub fn views(addr: &str, file: &Path) -> Result<(), String> {
    let (crcs, secs) = fetch_crcs(addr, file)?;
    for (n, crc) in &crcs {
        println!("view\t{n}\t{crc:08x}");
    }
    println!("time\t{secs:.6}");
    Ok(())
}

/// What [`views`] prints: (name, CRC-32) per tensor of FILE's index, fetched from
/// `addr`, and the seconds that connect plus every GET took.
///
/// Errors: FILE cannot be opened; the first failed connect or GET.
pub fn fetch_crcs(addr: &str, file: &Path) -> Result<(Vec<(String, u32)>, f64), String> {
    let r = FileReader::open(file).map_err(|e| format!("{}: {e}", file.display()))?;
    let names: Vec<String> = r.tensors().map(|(n, _)| n.to_string()).collect();
    let t0 = std::time::Instant::now();
    let mut cl = connect(addr)?;
    let mut got = Vec::with_capacity(names.len());
    for n in &names {
        got.push(
            cl.get_tensor(n, &GetOptions::default())
                .map_err(|e| format!("GET {n:?}: {e}"))?,
        );
    }
    let secs = t0.elapsed().as_secs_f64();
    let crcs = names
        .into_iter()
        .zip(&got)
        .map(|(n, t)| {
            let mut crc = crc32fast::Hasher::new();
            t.buffers().iter().for_each(|b| crc.update(b.as_slice()));
            (n, crc.finalize())
        })
        .collect();
    Ok((crcs, secs))
}

/// `net-bench ADDR KEY [REPEATS]`: the Rust row of `cargo xtask bench`'s network
/// table: connects, GETs `key` `repeats` times (default 3) on that connection, each
/// into fresh memory dropped before the next, and prints the fastest as
/// `net_get rust BYTES SECONDS` (data bytes received, the GET's wall time; connect
/// excluded), as the Python and Node scripts do.
///
/// Errors: the connect or a GET.
pub fn bench(addr: &str, key: &str, repeats: usize) -> Result<(), String> {
    let mut cl = connect(addr)?;
    let (mut best, mut bytes) = (f64::MAX, 0u64);
    for _ in 0..repeats.max(1) {
        let t0 = std::time::Instant::now();
        let it = cl
            .get(key, &GetOptions::default())
            .map_err(|e| format!("GET {key:?}: {e}"))?;
        best = best.min(t0.elapsed().as_secs_f64());
        bytes = 0;
        it.for_each_tensor(&mut |t| bytes += t.data_len());
    }
    println!("net_get rust {bytes} {best:.6}");
    Ok(())
}
