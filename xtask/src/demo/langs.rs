//! The demo's cross-language step: the Rust, C, Python, Go, Java and Node programs of
//! the matrix (`tests/matrix/`) each open the same `.hrry` (memory-mapped), take a
//! zero-copy view of every tensor and print a CRC-32 of every tensor's bytes, plus
//! the time they took to open the file and view all tensors (checksums not included):
//! `time`, that first pass in a fresh process, and `warm`, the fastest of the further
//! passes the program then makes in the same process. The demo prints one table,
//! tensor x language, a verdict, and both times per language with their ratios to C
//! and to Rust.

use std::collections::BTreeMap;
use std::path::Path;

use crate::matrix::{build_langs, Lang};
use crate::util::Result;

/// What one language reported.
struct Views {
    /// (tensor, CRC-32) in file order.
    crcs: Vec<(String, String)>,
    /// The first open + view in a fresh process, seconds: the fastest over the runs.
    first: f64,
    /// The fastest open + view in the same process, seconds, over all runs; `None`
    /// when the program reports no `warm` line.
    warm: Option<f64>,
}

/// One run of a `views` program, parsed.
#[derive(Debug, PartialEq)]
pub(super) struct Output {
    /// (tensor, CRC-32) in file order (`view NAME CRC32` lines).
    pub(super) crcs: Vec<(String, String)>,
    /// `time SECONDS`: the first open + view in this process.
    pub(super) first: f64,
    /// `warm SECONDS`: the fastest later open + view in this process, if printed.
    pub(super) warm: Option<f64>,
}

/// Parses a `views` program's standard output: tab-separated lines named by their
/// first field; lines of other names are ignored.
///
/// Errors: no `time` line, or a `time`/`warm` value that is not a number.
pub(super) fn parse_output(lang: &str, text: &str) -> Result<Output> {
    let seconds = |what: &str, s: &str| -> Result<f64> {
        s.parse().map_err(|_| {
            format!("demo: the {lang} program's `{what}` line has {s:?}, not seconds").into()
        })
    };
    let (mut crcs, mut first, mut warm) = (Vec::new(), None, None);
    for line in text.lines() {
        let f: Vec<&str> = line.split('\t').collect();
        match f.as_slice() {
            ["view", name, crc] => crcs.push((name.to_string(), crc.to_string())),
            ["time", s, ..] => first = Some(seconds("time", s)?),
            ["warm", s, ..] => warm = Some(seconds("warm", s)?),
            _ => {}
        }
    }
    let first = first.ok_or_else(|| format!("demo: the {lang} program printed no `time` line"))?;
    Ok(Output { crcs, first, warm })
}

/// Runs `lang`'s `views` program `runs` times (fresh processes) on `file`; keeps the
/// fastest first and warm figures. Errors: a run that fails, or checksums that change.
fn run_views(lang: &Lang, file: &Path, runs: usize) -> Result<Views> {
    let mut best: Option<Views> = None;
    for _ in 0..runs.max(1) {
        let out = lang
            .command(["views".into(), file.as_os_str().to_owned()])
            .output()?;
        if !out.status.success() {
            return Err(format!(
                "demo: the {} program failed on {}: {}",
                lang.name,
                file.display(),
                String::from_utf8_lossy(&out.stderr).trim()
            )
            .into());
        }
        let o = parse_output(lang.name, &String::from_utf8_lossy(&out.stdout))?;
        best = Some(match best {
            None => Views {
                crcs: o.crcs,
                first: o.first,
                warm: o.warm,
            },
            Some(b) if b.crcs != o.crcs => {
                return Err(format!(
                    "demo: the {} program's checksums changed between runs",
                    lang.name
                )
                .into())
            }
            Some(b) => Views {
                crcs: b.crcs,
                first: b.first.min(o.first),
                warm: match (b.warm, o.warm) {
                    (Some(x), Some(y)) => Some(x.min(y)),
                    (x, y) => x.or(y),
                },
            },
        });
    }
    Ok(best.expect("at least one run"))
}

/// `secs` in milliseconds, and its ratio to the C and the Rust figure ("-" where
/// one is missing), as table cells.
fn cells(secs: Option<f64>, c: Option<f64>, rust: Option<f64>) -> String {
    let ratio = |base: Option<f64>| match (secs, base) {
        (Some(s), Some(b)) if b > 0.0 => format!("{:.2}", s / b),
        _ => "-".into(),
    };
    let ms = secs.map_or("-".into(), |s| format!("{:.3}", s * 1e3));
    format!("{ms:>9}  {:>6}  {:>6}", ratio(c), ratio(rust))
}

/// Runs the step; returns whether every language saw the same bytes in every tensor.
pub fn run(file: &Path, runs: usize) -> Result<bool> {
    let (langs, skipped) = build_langs(None)?;
    for s in &skipped {
        println!("note: {s}");
    }
    let mut results: Vec<(&'static str, Views)> = Vec::new();
    for lang in &langs {
        let v = run_views(lang, file, runs)?;
        results.push((lang.name, v));
    }
    let Some((_, reference)) = results.first() else {
        return Err("demo: no language program could be built".into());
    };
    let names: Vec<&String> = reference.crcs.iter().map(|(n, _)| n).collect();
    let maps: Vec<BTreeMap<&str, &str>> = results
        .iter()
        .map(|(_, v)| {
            v.crcs
                .iter()
                .map(|(n, c)| (n.as_str(), c.as_str()))
                .collect()
        })
        .collect();
    let width = names.iter().map(|n| n.len()).max().unwrap_or(6).max(6);
    print!("  {:<width$}", "TENSOR");
    for (name, _) in &results {
        print!("  {name:<8}");
    }
    println!("  SAME");
    let mut disagree = Vec::new();
    for n in &names {
        print!("  {n:<width$}");
        let mut seen = Vec::new();
        for m in &maps {
            let c = m.get(n.as_str()).copied().unwrap_or("-");
            print!("  {c:<8}");
            seen.push(c);
        }
        let same = seen.iter().all(|c| *c == seen[0] && *c != "-");
        println!("  {}", if same { "yes" } else { "NO" });
        if !same {
            disagree.push(n.as_str());
        }
    }
    for (lang, m) in results.iter().zip(&maps) {
        if m.len() != names.len() {
            disagree.push(lang.0);
            println!(
                "  the {} program listed {} tensors, the {} program {}",
                lang.0,
                m.len(),
                results[0].0,
                names.len()
            );
        }
    }
    let figure = |lang: &str, f: fn(&Views) -> Option<f64>| {
        results
            .iter()
            .find(|(n, _)| *n == lang)
            .and_then(|(_, v)| f(v))
    };
    let first = |v: &Views| Some(v.first);
    let warm = |v: &Views| v.warm;
    println!(
        "\nopen + zero-copy view of all {} tensors, timed inside each program, checksums excluded\n\
         (first: the first open in a fresh process, best of {runs} processes; warm: the fastest\n\
         of the further opens each program then makes in the same process, over all {runs}):",
        names.len()
    );
    println!(
        "  {:<8} {:>9}  {:>6}  {:>6}    {:>9}  {:>6}  {:>6}",
        "", "first ms", "x c", "x rust", "warm ms", "x c", "x rust"
    );
    for (name, v) in &results {
        println!(
            "  {name:<8} {}    {}",
            cells(Some(v.first), figure("c", first), figure("rust", first)),
            cells(v.warm, figure("c", warm), figure("rust", warm))
        );
    }
    let langs: Vec<&str> = results.iter().map(|r| r.0).collect();
    if disagree.is_empty() {
        println!(
            "\nPASS: every language ({}) sees the same bytes in all {} tensors (CRC-32 of every tensor identical){}",
            langs.join(", "),
            names.len(),
            if skipped.is_empty() {
                String::new()
            } else {
                format!("; {}", skipped.join("; "))
            }
        );
        Ok(true)
    } else {
        println!("\nFAIL: the languages disagree on: {}", disagree.join(", "));
        Ok(false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_views_output() {
        let text =
            "view\ta\t0000000a\nview\tb\t0000000b\ntime\t0.002500\nnote\tx\nwarm\t0.000125\n";
        let o = parse_output("c", text).unwrap();
        assert_eq!(
            o.crcs,
            vec![
                ("a".to_string(), "0000000a".to_string()),
                ("b".to_string(), "0000000b".to_string())
            ]
        );
        assert_eq!(o.first, 0.0025);
        assert_eq!(o.warm, Some(0.000125));
    }

    #[test]
    fn older_programs_without_warm_still_parse() {
        let o = parse_output("c", "view\ta\t01\ntime\t0.5\n").unwrap();
        assert_eq!((o.first, o.warm), (0.5, None));
    }

    #[test]
    fn refuses_output_without_time_or_with_bad_seconds() {
        let e = parse_output("go", "view\ta\t01\n").unwrap_err().to_string();
        assert!(e.contains("go program printed no `time` line"), "{e}");
        let e = parse_output("go", "time\tsoon\n").unwrap_err().to_string();
        assert!(e.contains("`time` line has \"soon\""), "{e}");
        let e = parse_output("go", "time\t1\nwarm\t-\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("`warm` line"), "{e}");
    }

    #[test]
    fn cells_give_ms_and_ratios_or_dashes() {
        assert_eq!(
            cells(Some(0.002), Some(0.001), Some(0.004)),
            format!("{:>9}  {:>6}  {:>6}", "2.000", "2.00", "0.50")
        );
        assert_eq!(
            cells(None, Some(0.001), None),
            format!("{:>9}  {:>6}  {:>6}", "-", "-", "-")
        );
        assert_eq!(
            cells(Some(0.001), None, Some(0.001)),
            format!("{:>9}  {:>6}  {:>6}", "1.000", "-", "1.00")
        );
    }
}
