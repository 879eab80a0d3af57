//! The committed header, include/hurray.h, against the Rust side: the ABI version and
//! every status code have the values Rust has; every export of the sources is
//! declared (and nothing else); names are prefixed; handles are opaque; and every
//! export's doc comment has an `Ownership:` line. (Drift of the whole text is
//! `cargo xtask header --check`; compiling it as C and C++ is an xtask stage.)

use hurray_ffi::*;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

fn header() -> String {
    std::fs::read_to_string(root().join("include/hurray.h")).expect("include/hurray.h is committed")
}

/// `(name, value)` of every `#define NAME VALUE` in the header.
fn defines(h: &str) -> Vec<(String, String)> {
    h.lines()
        .filter_map(|l| l.strip_prefix("#define "))
        .map(|rest| {
            let mut it = rest.splitn(2, ' ');
            (
                it.next().unwrap().to_string(),
                it.next().unwrap_or("").trim().to_string(),
            )
        })
        .collect()
}

#[test]
fn abi_version_matches_the_rust_constant() {
    let h = header();
    let v: Vec<_> = defines(&h)
        .into_iter()
        .filter(|(n, _)| n == "HURRAY_C_ABI_VERSION")
        .collect();
    assert_eq!(v.len(), 1, "exactly one HURRAY_C_ABI_VERSION");
    assert_eq!(v[0].1.parse::<u32>().unwrap(), HURRAY_C_ABI_VERSION);
    assert_eq!(HURRAY_C_ABI_VERSION, 10);
    assert_eq!(hurray_ffi::abi::hurray_c_abi_version(), 10);
}

#[test]
fn status_codes_match_rust_and_their_names() {
    let h = header();
    let mut seen = 0;
    for (name, value) in defines(&h) {
        if name == "HURRAY_OK" || name.starts_with("HURRAY_ERR_") {
            let v: HurrayStatus = value.parse().unwrap_or_else(|_| panic!("{name} = {value}"));
            assert_eq!(status_name(v), name, "{name} = {v}");
            seen += 1;
        }
    }
    assert_eq!(seen, STATUSES.len(), "every status code is in the header");
    assert_eq!(
        seen, 22,
        "20 before the network client, + CANCELLED and TIMEOUT"
    );
}

#[test]
fn names_are_prefixed_and_handles_opaque() {
    let h = header();
    for (name, _) in defines(&h) {
        assert!(
            name.starts_with("HURRAY_"),
            "#define {name} lacks the HURRAY_ prefix"
        );
    }
    for l in h.lines().filter(|l| l.starts_with("typedef ")) {
        assert!(
            l.contains(" Hurray") || l.contains("(*Hurray"),
            "typedef without the Hurray prefix: {l}"
        );
    }
    for t in [
        "HurrayTensor",
        "HurrayDescriptor",
        "HurrayBuffer",
        "HurrayBufferList",
        "HurrayItem",
        "HurrayStreamDecoder",
        "HurrayStreamEncoder",
        "HurrayFileReader",
        "HurrayFileWriter",
    ] {
        assert!(
            h.contains(&format!("typedef struct {t} {t};")),
            "{t} is not declared opaque"
        );
        assert!(
            !h.contains(&format!("struct {t} {{")),
            "{t}'s fields leak into the header"
        );
    }
    for s in [
        "HurrayBufferSync",
        "HurrayDescriptorHeader",
        "HurrayBufferEntry",
        "HurrayStatistics",
    ] {
        assert!(
            h.contains(&format!("typedef struct {s} {{")),
            "{s} is emitted in full"
        );
    }
    assert!(h.contains("#ifndef HURRAY_H") && h.contains("extern \"C\" {"));
}

/// The source files of the modules `lib.rs` declares, recursively (what cbindgen
/// reads too; files not declared as modules are not part of the library).
fn module_files() -> Vec<PathBuf> {
    fn visit(file: PathBuf, dir: PathBuf, out: &mut Vec<PathBuf>) {
        let text = std::fs::read_to_string(&file).unwrap();
        out.push(file);
        for l in text.lines() {
            let l = l
                .trim()
                .trim_start_matches("pub(crate) ")
                .trim_start_matches("pub ");
            if let Some(m) = l.strip_prefix("mod ").and_then(|r| r.strip_suffix(';')) {
                let flat = dir.join(format!("{m}.rs"));
                if flat.exists() {
                    visit(flat, dir.join(m), out);
                } else {
                    visit(dir.join(m).join("mod.rs"), dir.join(m), out);
                }
            }
        }
    }
    let src = root().join("hurray-ffi/src");
    let mut files = Vec::new();
    visit(src.join("lib.rs"), src, &mut files);
    files
}

/// Names of the `#[no_mangle]` exports in the crate's sources.
fn exports() -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for p in module_files() {
        let s = std::fs::read_to_string(&p).unwrap();
        for (i, l) in s.lines().enumerate() {
            if let Some(rest) = l.split("extern \"C\" fn ").nth(1) {
                if !l.starts_with("pub ") {
                    continue;
                }
                let name = rest.split('(').next().unwrap().to_string();
                // The export's doc comment: the `///` lines above its attributes.
                let lines: Vec<&str> = s.lines().take(i).collect();
                let doc: Vec<&str> = lines
                    .iter()
                    .rev()
                    .skip_while(|l| l.starts_with("#["))
                    .take_while(|l| l.starts_with("///"))
                    .copied()
                    .collect();
                assert!(
                    doc.iter().any(|l| l.contains("Ownership:")),
                    "{}: {name}'s doc comment has no `Ownership:` line",
                    p.display()
                );
                out.insert(name);
            }
        }
    }
    out
}

#[test]
fn every_export_is_declared_and_documented() {
    let h = header();
    let declared: BTreeSet<String> = h
        .lines()
        .filter_map(|l| {
            let i = l.find("hurray_")?;
            let rest = &l[i..];
            let name = rest.split('(').next()?;
            (rest.contains('(') && !l.starts_with("//") && !l.starts_with(' '))
                .then(|| name.to_string())
        })
        .collect();
    let exported = exports();
    assert!(exported.len() > 60, "found {} exports", exported.len());
    assert_eq!(
        exported, declared,
        "the header and the sources disagree; run `cargo xtask header`"
    );
}
