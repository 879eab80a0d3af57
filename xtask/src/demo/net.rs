//! The demo's network step (issue 18): `hurray serve` the converted model on
//! loopback, and every language's matrix program fetches all of its tensors with its
//! network client (`PROGRAM net-views ADDR FILE`, tests/matrix/README.md) and prints
//! the same CRC-32 table as the file step (`views`); the demo compares every
//! language's table with the Rust program's `views` of the file and prints how long
//! each language took to fetch everything. Every program has the command; one that
//! fails (or lacks it) fails the step.

use std::collections::BTreeMap;
use std::path::Path;

use super::langs::parse_output;
use crate::matrix::{build_langs, Lang};
use crate::matrix_net::Served;
use crate::util::Result;

fn output_of(lang: &Lang, args: &[&std::ffi::OsStr]) -> Result<String> {
    let out = lang.command(args).output()?;
    if !out.status.success() {
        return Err(format!(
            "demo: the {} program failed: {}",
            lang.name,
            String::from_utf8_lossy(&out.stderr).trim()
        )
        .into());
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Runs the step over `file` (a .hrry of plain tensors) with `hurray` (the CLI
/// binary); `only` limits the languages (comma-separated). Returns whether every
/// language that ran fetched every tensor with the CRC-32 the Rust program's `views`
/// of the file gives.
///
/// Errors: a program or the server that cannot start or fails.
pub fn run(hurray: &Path, file: &Path, only: Option<&str>) -> Result<bool> {
    let (langs, skipped) = build_langs(only)?;
    for s in &skipped {
        println!("note: {s}");
    }
    let rust = langs
        .iter()
        .find(|l| l.name == "rust")
        .ok_or("demo: the network step needs the Rust program")?;
    let reference = parse_output(
        "rust",
        &output_of(rust, &["views".as_ref(), file.as_os_str()])?,
    )?
    .crcs;
    let size = std::fs::metadata(file)?.len();
    let server = Served::start(hurray, file, None)?;
    println!(
        "$ hurray serve {} --listen 127.0.0.1:0   (serving on {})",
        file.display(),
        server.addr
    );
    let mut results = Vec::new();
    for l in &langs {
        println!("$ {} net-views {} {}", l.name, server.addr, file.display());
        let o = parse_output(
            l.name,
            &output_of(
                l,
                &["net-views".as_ref(), server.addr.as_ref(), file.as_os_str()],
            )?,
        )?;
        results.push((l.name, o));
    }
    server.stop()?;
    let width = reference
        .iter()
        .map(|(n, _)| n.len())
        .max()
        .unwrap_or(6)
        .max(6);
    print!("  {:<width$}  {:<8}", "TENSOR", "file");
    for (name, _) in &results {
        print!("  {name:<8}");
    }
    println!("  SAME");
    let maps: Vec<BTreeMap<&str, &str>> = results
        .iter()
        .map(|(_, o)| {
            o.crcs
                .iter()
                .map(|(n, c)| (n.as_str(), c.as_str()))
                .collect()
        })
        .collect();
    let mut disagree = Vec::new();
    for (n, want) in &reference {
        print!("  {n:<width$}  {want:<8}");
        let mut same = true;
        for m in &maps {
            let c = m.get(n.as_str()).copied().unwrap_or("-");
            print!("  {c:<8}");
            same &= c == want;
        }
        println!("  {}", if same { "yes" } else { "NO" });
        if !same {
            disagree.push(n.clone());
        }
    }
    for ((name, o), m) in results.iter().zip(&maps) {
        if m.len() != reference.len() {
            disagree.push(format!(
                "{name} listed {} tensors, the file has {}",
                o.crcs.len(),
                reference.len()
            ));
        }
    }
    println!(
        "\nfetch all {} tensors over loopback (connect + every GET, one connection):",
        reference.len()
    );
    for (name, o) in &results {
        println!(
            "  {name:<8} {:>9.3} ms  {:>8.1} MiB/s (file size / time)",
            o.first * 1e3,
            size as f64 / (1 << 20) as f64 / o.first.max(1e-9)
        );
    }
    if disagree.is_empty() {
        let names: Vec<&str> = results.iter().map(|r| r.0).collect();
        println!(
            "\nPASS: every language ({}) fetched all {} tensors with the file's CRC-32s",
            names.join(", "),
            reference.len()
        );
        Ok(true)
    } else {
        println!(
            "\nFAIL: over the network the languages disagree on: {}",
            disagree.join(", ")
        );
        Ok(false)
    }
}
