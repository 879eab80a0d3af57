//! The human-readable form of an inspect [`Report`]: a few summary lines, then a
//! KV table and a tensor table with aligned columns. Rows are made twice, once to
//! size the columns and once to write them, so no table is held in memory; a KV
//! value shows as a preview of at most [`MAX_VALUE_CHARS`](super::value::MAX_VALUE_CHARS)
//! characters, arrays with their element count.

use super::Report;
use std::fmt::Write;
use std::io;

/// `bytes` in binary units, e.g. `86.7 MiB`.
pub fn human(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = bytes as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{bytes} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

/// Renders rows as columns separated by two spaces, each line indented by two.
pub fn columns(header: &[&str], rows: &[Vec<String>], right: &[usize]) -> String {
    let mut out = Vec::new();
    columns_to(&mut out, header, &|| Box::new(rows.iter().cloned()), right)
        .expect("writing to memory");
    String::from_utf8(out).expect("rows are UTF-8")
}

/// The rows of a table, made anew by each call.
pub type RowSource<'a> = dyn Fn() -> Box<dyn Iterator<Item = Vec<String>> + 'a> + 'a;

/// [`columns`] written to `out`, the rows made by `rows` twice (widths, then lines).
///
/// Errors: writing to `out`.
pub fn columns_to(
    out: &mut dyn io::Write,
    header: &[&str],
    rows: &RowSource<'_>,
    right: &[usize],
) -> io::Result<()> {
    // Cells come from the file (names, keys, string values): control characters are
    // escaped so a file cannot move the cursor, recolour the terminal or forge lines.
    let rows = || rows().map(|r| r.iter().map(|c| printable(c)).collect::<Vec<_>>());
    let mut width: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for r in rows() {
        for (w, cell) in width.iter_mut().zip(&r) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: &[&str], out: &mut dyn io::Write| {
        let mut l = String::from(" ");
        for (i, (c, w)) in cells.iter().zip(&width).enumerate() {
            l.push(' ');
            if right.contains(&i) {
                let _ = write!(l, "{c:>w$}");
            } else {
                let _ = write!(l, "{c:<w$}");
            }
            l.push(' ');
        }
        writeln!(out, "{}", l.trim_end())
    };
    line(header, out)?;
    for r in rows() {
        let cells: Vec<&str> = r.iter().map(String::as_str).collect();
        line(&cells, out)?;
    }
    Ok(())
}

/// `s` with every character that could change how a terminal shows the text written
/// as a Rust-style escape (`\u{1b}`, `\n`, `\u{202e}`), and backslashes doubled so an
/// escape cannot be forged; other text is unchanged. Escaped: control characters (C0,
/// DEL, C1: ANSI escapes, carriage returns, newlines), and what Rust's `Debug` escapes
/// as unprintable or invisible: bidirectional overrides and isolates (U+202A-U+202E,
/// U+2066-U+2069), line and paragraph separators (U+2028, U+2029), zero-width and other
/// format characters (U+200B, U+FEFF, ...) and combining marks that would attach to
/// the text before them — the same rule `hurray validate` applies with `{:?}`.
pub fn printable(s: &str) -> String {
    if !s.chars().any(needs_escape) {
        return s.to_owned();
    }
    s.chars()
        .map(|c| {
            if needs_escape(c) {
                c.escape_default().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

fn needs_escape(c: char) -> bool {
    // `escape_debug` leaves a printable character as itself and escapes the rest;
    // quotes are printable text here (it escapes them only for Debug's own quoting).
    c.is_control() || c == '\\' || (c != '"' && c != '\'' && c.escape_debug().nth(1).is_some())
}

fn shape(s: &[Option<u64>]) -> String {
    let dims: Vec<String> = s
        .iter()
        .map(|d| d.map_or_else(|| "?".to_owned(), |n| n.to_string()))
        .collect();
    format!("[{}]", dims.join(", "))
}

/// Writes `r` (for the file named `name`) as text to `out`.
///
/// Errors: writing to `out`.
pub fn render(r: &Report<'_>, name: &str, out: &mut dyn io::Write) -> io::Result<()> {
    let plural =
        |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    match &r.file {
        Some(f) => {
            writeln!(
                out,
                "{name}: HRRYFILE {}, {} bytes ({})",
                f.version,
                r.file_size,
                human(r.file_size)
            )?;
            let crc = match &f.index_crc32c_value {
                Some(v) => format!("index CRC-32C {} ({v})", f.index_crc32c),
                None => format!("index CRC-32C {}", f.index_crc32c),
            };
            let hint = f
                .tensor_count_hint
                .map_or_else(|| "unknown".to_owned(), |n| n.to_string());
            writeln!(
                out,
                "  data alignment {} bytes, {crc}, index {}, tensor count hint {hint}",
                f.data_buffer_alignment,
                if f.sorted_index {
                    "sorted"
                } else {
                    "in write order"
                },
            )?;
        }
        None => {
            writeln!(
                out,
                "{name}: Hurray stream, {} bytes ({})",
                r.file_size,
                human(r.file_size)
            )?;
        }
    }
    writeln!(
        out,
        "  {}, {} data bytes ({})",
        plural(r.tensors.len(), "tensor", "tensors"),
        r.data_bytes,
        human(r.data_bytes)
    )?;
    if r.file.is_some() {
        writeln!(
            out,
            "\nKV metadata: {}",
            plural(r.kv.len(), "entry", "entries")
        )?;
        if !r.kv.is_empty() {
            let kv = r.kv;
            columns_to(
                out,
                &["KEY", "TYPE", "VALUE"],
                &|| {
                    Box::new(kv.iter().map(|k| {
                        let ty = match k.value.array_len() {
                            Some(n) => format!("{}[{n}]", k.ty),
                            None => k.ty,
                        };
                        vec![k.key.to_owned(), ty, k.value.preview()]
                    }))
                },
                &[],
            )?;
        }
    }
    writeln!(out, "\nTensors: {}", r.tensors.len())?;
    if !r.tensors.is_empty() {
        let tensors = r.tensors;
        columns_to(
            out,
            &[
                "NAME", "DTYPE", "SHAPE", "LAYOUT", "BYTES", "QUANT", "DEVICE",
            ],
            &|| {
                Box::new(tensors.iter().map(|t| {
                    vec![
                        t.name,
                        t.dtype,
                        shape(&t.shape),
                        t.layout,
                        t.bytes.to_string(),
                        t.quantization.unwrap_or_else(|| "-".into()),
                        t.device,
                    ]
                }))
            },
            &[4],
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn human_sizes() {
        assert_eq!(human(512), "512 B");
        assert_eq!(human(90_868_376), "86.7 MiB");
    }

    #[test]
    fn file_text_is_escaped() {
        assert_eq!(printable("w\u{1b}[2Jx\ny\r"), "w\\u{1b}[2Jx\\ny\\r");
        assert_eq!(printable("a\\n"), "a\\\\n");
        assert_eq!(printable("plain — ünïcode"), "plain — ünïcode");
        assert_eq!(printable("it's \"quoted\""), "it's \"quoted\"");
        // Bidi override, separators, zero-width space, BOM: escaped, never raw.
        assert_eq!(
            printable("a\u{202e}b\u{2028}c\u{2029}d\u{200b}e\u{feff}f\u{2066}g"),
            "a\\u{202e}b\\u{2028}c\\u{2029}d\\u{200b}e\\u{feff}f\\u{2066}g"
        );
        // A combining mark at the start would attach to the preceding column.
        assert_eq!(printable("\u{301}x"), "\\u{301}x");
        assert_eq!(printable("e\u{301}"), "e\\u{301}");
        let t = columns(&["NAME"], &[vec!["evil\n  forged line".into()]], &[]);
        assert_eq!(t.lines().count(), 2, "{t}");
    }

    #[test]
    fn columns_align() {
        let t = columns(
            &["A", "NUM"],
            &[
                vec!["long name".into(), "1".into()],
                vec!["x".into(), "200".into()],
            ],
            &[1],
        );
        assert_eq!(t, "  A          NUM\n  long name    1\n  x          200\n");
    }
}
