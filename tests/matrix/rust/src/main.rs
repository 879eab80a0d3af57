//! `hurray-matrix`: the Rust producer and consumer of the cross-language matrix.
//!
//! ```text
//! hurray-matrix produce CASES OUT_DIR     write CASE.hrry and CASE.hrrys for every case
//! hurray-matrix consume CASES DIR...      check every producer directory (result lines)
//! hurray-matrix locate FILE OFFSET...     name the part of a file/stream at each offset
//! hurray-matrix views FILE                the demo: open, view and checksum every tensor
//! hurray-matrix hostile-corpus OUT_DIR    write the hostile corpus (`hostile.rs`)
//! hurray-matrix hostile DIR               every hostile file and stream must be refused
//! hurray-matrix metadata FILE             open, read every KV value and name (amplification)
//! hurray-matrix amplification-files DIR   write the files of `cargo xtask amplification`
//! hurray-matrix names                     every type and layout tag's rendered name
//! hurray-matrix net-get ADDR CASES OUT    GET every case's items (`CASE:NAME`) into OUT
//! hurray-matrix net-put ADDR CASES DIR    PUT every item of DIR's cases as `CASE:NAME`
//! hurray-matrix net-views ADDR FILE       the demo's network step (`views` over GET)
//! hurray-matrix net-bench ADDR KEY [N]    best of N GETs (3): `net_get rust BYTES SECONDS`
//! hurray-matrix net-combine CASES DIR OUT the served file: DIR's items as `CASE:NAME`
//! hurray-matrix net-compare CASES SRC OTHER LABEL  items of SRC against OTHER, byte for byte
//! ```

use hurray_matrix::{amplify, case, hostile, net, run};
use std::path::Path;
use std::process::ExitCode;

fn load(path: &str) -> Result<Vec<case::Case>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
    case::parse(&text).map_err(|e| format!("{path}: {e}"))
}

/// `names` command: the name of every element-type tag and every layout tag (0..=255) as a
/// Rust user renders it (`ElementType::name`, `Layout::name` through
/// `tables::layout_name`), one `type|layout<TAB>0x2a<TAB>NAME` line each; `cargo
/// xtask matrix` requires every language's lines to be these, byte for byte.
fn tag_names() {
    use hurray_core::ElementType;
    let mut out = String::new();
    for tag in 0..=255u8 {
        let t = ElementType::from_tag(tag).unwrap_or(ElementType::Unknown(tag));
        out.push_str(&format!("type\t0x{tag:02x}\t{}\n", t.name()));
    }
    for tag in 0..=255u8 {
        let name = hurray_core::tables::layout_name(tag);
        out.push_str(&format!("layout\t0x{tag:02x}\t{name}\n"));
    }
    print!("{out}");
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let r = match args
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .as_slice()
    {
        ["produce", cases, out] => load(cases).and_then(|cases| {
            std::fs::create_dir_all(out).map_err(|e| format!("{out}: {e}"))?;
            let mut failed = 0;
            for c in &cases {
                if let Err(e) = run::produce(c, Path::new(out)) {
                    eprintln!("rust producer: case {}: {e}", c.name);
                    failed += 1;
                }
            }
            if failed == 0 {
                Ok(())
            } else {
                Err(format!("{failed} case(s) could not be written"))
            }
        }),
        ["consume", cases, dirs @ ..] => load(cases).map(|cases| {
            let dirs: Vec<&Path> = dirs.iter().map(Path::new).collect();
            run::consume(&cases, &dirs);
        }),
        ["locate", file, offsets @ ..] => std::fs::read(file)
            .map_err(|e| format!("{file}: {e}"))
            .map(|bytes| {
                for o in offsets {
                    let o: u64 = o.parse().unwrap_or(u64::MAX);
                    let at = if bytes.starts_with(b"HRRYFILE") {
                        run::locate_in_file(&bytes, o)
                    } else {
                        run::locate_in_stream(&bytes, o)
                    };
                    println!("{at}");
                }
            }),
        ["views", file] => run::views(Path::new(file)),
        ["hostile-corpus", out] => hostile::write_corpus(Path::new(out)),
        ["hostile", dir] => hostile::consume(Path::new(dir)),
        ["metadata", file] => amplify::metadata(Path::new(file)),
        ["names"] => {
            tag_names();
            Ok(())
        }
        ["net-get", addr, cases, out] => {
            load(cases).and_then(|c| net::get(addr, &c, Path::new(out)))
        }
        ["net-put", addr, cases, dir] => {
            load(cases).and_then(|c| net::put(addr, &c, Path::new(dir)))
        }
        ["net-views", addr, file] => net::views(addr, Path::new(file)),
        ["net-bench", addr, key] => net::bench(addr, key, 3),
        ["net-bench", addr, key, n] => n
            .parse()
            .map_err(|_| format!("REPEATS {n:?} is not a count"))
            .and_then(|n| net::bench(addr, key, n)),
        ["net-combine", cases, dir, out] => {
            load(cases).and_then(|c| net::combine(&c, Path::new(dir), Path::new(out)))
        }
        ["net-compare", cases, src, other, label] => {
            load(cases).and_then(|c| net::compare(&c, Path::new(src), Path::new(other), label))
        }
        ["amplification-files", dir] => std::fs::create_dir_all(dir)
            .map_err(|e| format!("{dir}: {e}"))
            .and_then(|()| amplify::write_files(Path::new(dir))),
        _ => Err(
            "usage: hurray-matrix produce CASES OUT | consume CASES DIR... | \
                  locate FILE OFFSET... | views FILE | hostile-corpus OUT | hostile DIR | \
                  metadata FILE | amplification-files DIR | names | net-get ADDR CASES OUT | \
                  net-put ADDR CASES DIR | net-views ADDR FILE | net-bench ADDR KEY | net-combine CASES DIR OUT | \
                  net-compare CASES SRC OTHER LABEL"
                .into(),
        ),
    };
    match r {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("hurray-matrix: {e}");
            ExitCode::FAILURE
        }
    }
}
