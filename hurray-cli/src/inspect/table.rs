//! The human-readable form of an inspect [`Report`]: a few summary lines, then a
//! KV table and a tensor table with aligned columns.

use super::Report;
use std::fmt::Write;

/// Longest KV value shown in the table before it is cut with `...`.
const MAX_VALUE_CHARS: usize = 60;

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
    // Cells come from the file (names, keys, string values): control characters are
    // escaped so a file cannot move the cursor, recolour the terminal or forge lines.
    let rows: Vec<Vec<String>> = rows
        .iter()
        .map(|r| r.iter().map(|c| printable(c)).collect())
        .collect();
    let rows = rows.as_slice();
    let mut width: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for r in rows {
        for (w, cell) in width.iter_mut().zip(r) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    let line = |cells: Vec<&str>, out: &mut String| {
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
        out.push_str(l.trim_end());
        out.push('\n');
    };
    line(header.to_vec(), &mut out);
    for r in rows {
        line(r.iter().map(String::as_str).collect(), &mut out);
    }
    out
}

fn shape(s: &[Option<u64>]) -> String {
    let dims: Vec<String> = s
        .iter()
        .map(|d| d.map_or_else(|| "?".to_owned(), |n| n.to_string()))
        .collect();
    format!("[{}]", dims.join(", "))
}

/// `s` with every control character (C0, DEL, C1: ANSI escapes, carriage returns,
/// newlines, ...) written as a Rust-style escape (`\u{1b}`, `\n`), and backslashes
/// doubled so an escape cannot be forged; other text is unchanged.
pub fn printable(s: &str) -> String {
    if !s.chars().any(|c| c.is_control() || c == '\\') {
        return s.to_owned();
    }
    s.chars()
        .map(|c| {
            if c.is_control() || c == '\\' {
                c.escape_default().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

fn cut(s: String) -> String {
    if s.chars().count() <= MAX_VALUE_CHARS {
        s
    } else {
        let head: String = s.chars().take(MAX_VALUE_CHARS - 3).collect();
        head + "..."
    }
}

/// Renders `r` (for the file named `name`) as text.
pub fn render(r: &Report, name: &str) -> String {
    let mut out = String::new();
    let plural =
        |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    match &r.file {
        Some(f) => {
            let _ = writeln!(
                out,
                "{name}: HRRYFILE {}, {} bytes ({})",
                f.version,
                r.file_size,
                human(r.file_size)
            );
            let crc = match &f.index_crc32c_value {
                Some(v) => format!("index CRC-32C {} ({v})", f.index_crc32c),
                None => format!("index CRC-32C {}", f.index_crc32c),
            };
            let hint = f
                .tensor_count_hint
                .map_or_else(|| "unknown".to_owned(), |n| n.to_string());
            let _ = writeln!(
                out,
                "  data alignment {} bytes, {crc}, index {}, tensor count hint {hint}",
                f.data_buffer_alignment,
                if f.sorted_index {
                    "sorted"
                } else {
                    "in write order"
                },
            );
        }
        None => {
            let _ = writeln!(
                out,
                "{name}: Hurray stream, {} bytes ({})",
                r.file_size,
                human(r.file_size)
            );
        }
    }
    let _ = writeln!(
        out,
        "  {}, {} data bytes ({})",
        plural(r.tensors.len(), "tensor", "tensors"),
        r.data_bytes,
        human(r.data_bytes)
    );
    if r.file.is_some() {
        let _ = writeln!(
            out,
            "\nKV metadata: {}",
            plural(r.kv.len(), "entry", "entries")
        );
        if !r.kv.is_empty() {
            let rows: Vec<Vec<String>> =
                r.kv.iter()
                    .map(|k| vec![k.key.clone(), k.ty.clone(), cut(k.value.to_string())])
                    .collect();
            out += &columns(&["KEY", "TYPE", "VALUE"], &rows, &[]);
        }
    }
    let _ = writeln!(out, "\nTensors: {}", r.tensors.len());
    if !r.tensors.is_empty() {
        let rows: Vec<Vec<String>> = r
            .tensors
            .iter()
            .map(|t| {
                vec![
                    t.name.clone(),
                    t.dtype.clone(),
                    shape(&t.shape),
                    t.layout.clone(),
                    t.bytes.to_string(),
                    t.quantization.clone().unwrap_or_else(|| "-".into()),
                    t.device.clone(),
                ]
            })
            .collect();
        out += &columns(
            &[
                "NAME", "DTYPE", "SHAPE", "LAYOUT", "BYTES", "QUANT", "DEVICE",
            ],
            &rows,
            &[4],
        );
    }
    out
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
