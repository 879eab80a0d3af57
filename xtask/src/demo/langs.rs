//! The demo's cross-language step: the Rust, C, Python, Go and Java programs of the matrix
//! (`tests/matrix/`) each open the same `.hrry` (memory-mapped), take a zero-copy
//! view of every tensor and print a CRC-32 of every tensor's bytes, plus the time
//! they took to open the file and view all tensors (checksums not included). The
//! demo prints one table, tensor x language, and a verdict.

use std::collections::BTreeMap;
use std::path::Path;

use crate::matrix::{build_langs, Lang};
use crate::util::Result;

/// What one language reported.
struct Views {
    /// (tensor, CRC-32) in file order.
    crcs: Vec<(String, String)>,
    /// Fastest open + view time, seconds.
    secs: f64,
}

fn run_views(lang: &Lang, file: &Path, runs: usize) -> Result<Views> {
    let mut best = f64::MAX;
    let mut crcs = Vec::new();
    for i in 0..runs.max(1) {
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
        let text = String::from_utf8_lossy(&out.stdout);
        let mut these = Vec::new();
        for line in text.lines() {
            let f: Vec<&str> = line.split('\t').collect();
            match f.as_slice() {
                ["view", name, crc] => these.push((name.to_string(), crc.to_string())),
                ["time", s] => best = best.min(s.parse().unwrap_or(f64::MAX)),
                _ => {}
            }
        }
        if i == 0 {
            crcs = these;
        } else if these != crcs {
            return Err(format!(
                "demo: the {} program's checksums changed between runs",
                lang.name
            )
            .into());
        }
    }
    Ok(Views { crcs, secs: best })
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
    println!(
        "\nopen + zero-copy view of all {} tensors (best of {runs}, inside each program, checksums excluded):",
        names.len()
    );
    for (name, v) in &results {
        println!(
            "  {name:<8} {:>9.3} ms  {:>5.2} x {}",
            v.secs * 1e3,
            v.secs / results[0].1.secs,
            results[0].0
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
