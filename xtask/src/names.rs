//! The names column of `cargo xtask matrix`: one rendering of every element-type and
//! layout tag in all six languages (issue 12 item 2).
//!
//! Every matrix program has a `names` command that prints, for each tag 0..=255,
//! `type<TAB>0x2a<TAB>NAME` and then `layout<TAB>0x2a<TAB>NAME`, the name being what
//! that language's public API renders (Rust `ElementType::name`, C
//! `hurray_type_name` / `hurray_layout_name`, Python `hurray.type_name` /
//! `hurray.layout_name`, Go `DType.String` / `Layout.String`, Java
//! `ElementType.nameOf` / `Layout.nameOf`, Node `typeName` / `layoutName`). Each
//! output must equal, byte for byte, the text built here from the one declaration
//! (`hurray_core::tables`) and the Rust program's output; a difference fails the
//! matrix and names the language, the table and the tag. All 256 tags are listed,
//! so every assigned tag, every unassigned one (`0x2a`, `0x7f`, `0x00`, `0xff`) and
//! every private one (`0xf0`..`0xfe`) is compared.

use std::fmt::Write as _;

use hurray_core::tables;

use crate::matrix::Lang;
use crate::util::{display, Result};

/// What every program's `names` command must print.
pub fn expected() -> String {
    let mut s = String::new();
    for tag in 0..=255u8 {
        let _ = writeln!(s, "type\t0x{tag:02x}\t{}", tables::type_name(tag));
    }
    for tag in 0..=255u8 {
        let _ = writeln!(s, "layout\t0x{tag:02x}\t{}", tables::layout_name(tag));
    }
    s
}

/// How many differing tags one language's report lists before summing up the rest.
const SHOWN: usize = 8;

/// The differences of `got` (language `lang`'s output) from `want` (`against` names
/// the source of `want`), one message per differing line; empty when identical.
pub fn compare(lang: &str, got: &str, want: &str, against: &str) -> Vec<String> {
    if got == want {
        return Vec::new();
    }
    let mut out = Vec::new();
    let (g, w): (Vec<&str>, Vec<&str>) = (got.lines().collect(), want.lines().collect());
    let mut differing = 0;
    for (i, wl) in w.iter().enumerate() {
        let gl = g.get(i).copied();
        if gl == Some(*wl) {
            continue;
        }
        differing += 1;
        if differing > SHOWN {
            continue;
        }
        let mut f = wl.splitn(3, '\t');
        let (kind, tag, name) = (
            f.next().unwrap_or(""),
            f.next().unwrap_or(""),
            f.next().unwrap_or(""),
        );
        let got_name = match gl.map(|l| l.splitn(3, '\t').collect::<Vec<_>>()) {
            Some(p) if p.len() == 3 && p[0] == kind && p[1] == tag => format!("{:?}", p[2]),
            Some(_) => format!("line {:?}", gl.unwrap_or("")),
            None => "nothing (output ends early)".to_string(),
        };
        out.push(format!(
            "names: {lang}: {kind} tag {tag}: got {got_name}, want {name:?} ({against})"
        ));
    }
    if differing > SHOWN {
        out.push(format!(
            "names: {lang}: ... and {} more differing tags ({against})",
            differing - SHOWN
        ));
    }
    if g.len() > w.len() {
        out.push(format!(
            "names: {lang}: {} extra lines after the last tag, first {:?} ({against})",
            g.len() - w.len(),
            g[w.len()]
        ));
    }
    if out.is_empty() {
        // Same lines, different bytes: line endings or a missing final newline.
        let at = got
            .bytes()
            .zip(want.bytes())
            .position(|(a, b)| a != b)
            .unwrap_or(got.len().min(want.len()));
        out.push(format!(
            "names: {lang}: same lines but not byte-identical (first difference at byte {at}: line endings or final newline) ({against})"
        ));
    }
    out
}

/// Runs every language's `names` command and compares each output with the one
/// declaration's text and with the Rust program's output; prints one summary line
/// and returns the failures.
pub fn run(langs: &[Lang]) -> Result<Vec<String>> {
    let want = expected();
    let mut outputs = Vec::new();
    let mut fails = Vec::new();
    for lang in langs {
        let mut cmd = lang.command(["names"]);
        let shown = display(&cmd);
        let out = cmd
            .output()
            .map_err(|e| format!("could not start `{shown}`: {e}"))?;
        if !out.status.success() {
            fails.push(format!(
                "names: {}: `{shown}` failed ({}): {}",
                lang.name,
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            ));
            continue;
        }
        outputs.push((lang.name, String::from_utf8_lossy(&out.stdout).into_owned()));
    }
    let rust = outputs
        .iter()
        .find(|(n, _)| *n == "rust")
        .map(|(_, o)| o.clone());
    for (name, got) in &outputs {
        fails.extend(compare(name, got, &want, "hurray_core::tables"));
        if let Some(rust) = rust.as_deref().filter(|_| *name != "rust") {
            if rust == want {
                // Already compared with the same text above.
                continue;
            }
            fails.extend(compare(name, got, rust, "the Rust program's output"));
        }
    }
    let same: Vec<&str> = outputs
        .iter()
        .filter(|(_, o)| *o == want)
        .map(|(n, _)| *n)
        .collect();
    println!(
        "\nnames (every type and layout tag 0x00..0xff, {} lines): identical to hurray_core::tables in {}/{} languages{}",
        want.lines().count(),
        same.len(),
        langs.len(),
        if same.is_empty() {
            String::new()
        } else {
            format!(" ({})", same.join(", "))
        }
    );
    Ok(fails)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_expected_text_lists_every_tag_of_both_tables() {
        let e = expected();
        assert_eq!(e.lines().count(), 512);
        assert!(e.starts_with("type\t0x00\tunknown(0x00)\ntype\t0x01\tfloat16\n"));
        assert!(e.contains("\ntype\t0x2a\tunknown(0x2a)\n"));
        assert!(e.contains("\ntype\t0x7f\tunknown(0x7f)\n"));
        assert!(e.contains("\ntype\t0xf3\tprivate(0xf3)\n"));
        assert!(e.contains("\nlayout\t0x0b\tcomposite_head\n"));
        assert!(e.contains("\nlayout\t0xfe\tprivate(0xfe)\n"));
        assert!(e.ends_with("\nlayout\t0xff\tunknown(0xff)\n"));
    }

    #[test]
    fn identical_output_passes() {
        let e = expected();
        assert!(compare("go", &e, &e, "x").is_empty());
    }

    #[test]
    fn a_differing_tag_names_the_language_table_and_tag() {
        let e = expected();
        let bad = e.replace("type\t0xf3\tprivate(0xf3)", "type\t0xf3\textension");
        assert_eq!(
            compare("python", &bad, &e, "hurray_core::tables"),
            vec![
                "names: python: type tag 0xf3: got \"extension\", want \"private(0xf3)\" (hurray_core::tables)"
                    .to_string()
            ]
        );
        let bad = e.replace("layout\t0x2a\tunknown(0x2a)", "layout\t0x2a\tdtype(0x2a)");
        let f = compare("go", &bad, &e, "t");
        assert_eq!(f.len(), 1);
        assert!(
            f[0].contains("go: layout tag 0x2a: got \"dtype(0x2a)\""),
            "{f:?}"
        );
    }

    #[test]
    fn short_long_and_crlf_outputs_fail() {
        let e = expected();
        let short: String = e.lines().take(300).map(|l| format!("{l}\n")).collect();
        let f = compare("node", &short, &e, "t");
        assert_eq!(f.len(), SHOWN + 1, "{f:?}");
        assert!(
            f[0].contains("layout tag 0x2c: got nothing (output ends early)"),
            "{f:?}"
        );
        assert!(f[SHOWN].contains("and 204 more differing tags"), "{f:?}");
        let long = format!("{e}extra\n");
        let f = compare("java", &long, &e, "t");
        assert_eq!(
            f,
            vec!["names: java: 1 extra lines after the last tag, first \"extra\" (t)".to_string()]
        );
        let crlf = e.replace('\n', "\r\n");
        let f = compare("c", &crlf, &e, "t");
        assert_eq!(f.len(), 1, "{f:?}");
        assert!(
            f[0].contains("not byte-identical (first difference at byte 23"),
            "{f:?}"
        );
    }
}
