//! The Rust consumer's checks: what was read against what the case says. Every
//! check returns the first difference as a sentence ("tensor \"x\": buffer 0 byte 3:
//! expected 0x41, got 0x40").

use crate::build;
use crate::case::{Item, KvSpec};
use hurray_io::file::{KvArray, KvEntry};
use hurray_io::KvValue;

/// The first differing byte of two byte strings, as a sentence; `None` when equal.
pub fn first_difference(what: &str, want: &[u8], got: &[u8]) -> Option<String> {
    if want == got {
        return None;
    }
    let differing =
        want.iter().zip(got).filter(|(a, b)| a != b).count() + want.len().abs_diff(got.len());
    match want.iter().zip(got).position(|(a, b)| a != b) {
        Some(i) => Some(format!(
            "{what} byte {i}: expected 0x{:02x}, got 0x{:02x} ({differing} of {} bytes differ)",
            want[i],
            got[i],
            want.len()
        )),
        None => Some(format!(
            "{what}: expected {} bytes, got {}",
            want.len(),
            got.len()
        )),
    }
}

fn same<T: std::fmt::Debug>(what: &str, want: T, got: T) -> Result<(), String> {
    let (w, g) = (format!("{want:?}"), format!("{got:?}"));
    if w == g {
        return Ok(());
    }
    // Same structure: name only the first differing field ("nnz: expected 3, got 259").
    let (wp, gp): (Vec<&str>, Vec<&str>) = (w.split(", ").collect(), g.split(", ").collect());
    if wp.len() == gp.len() && wp.len() > 1 {
        if let Some((a, b)) = wp.iter().zip(&gp).find(|(a, b)| a != b) {
            let field = |s: &str| {
                let s = s.rsplit(['{', '(', '[']).next().unwrap_or(s);
                s.trim_matches(|c: char| c == ' ' || c == '}' || c == ')' || c == ']')
                    .to_string()
            };
            let (fa, fb) = (field(a), field(b));
            if let (Some((name, va)), Some((_, vb))) = (fa.split_once(": "), fb.split_once(": ")) {
                return Err(format!("{what}: {name}: expected {va}, got {vb}"));
            }
            return Err(format!("{what}: expected {fa}, got {fb} (in {w})"));
        }
    }
    Err(format!("{what}: expected {w}, got {g}"))
}

/// Checks one item read back against its spec.
pub fn item(spec: &Item, got: &hurray_io::Item) -> Result<(), String> {
    match (spec, got) {
        (Item::Tensor(t), hurray_io::Item::Tensor(g)) => {
            let at = |e: String| format!("tensor {:?}: {e}", t.name);
            let want = build::tensor_descriptor(t)?;
            let d = g.descriptor();
            same("dtype", want.element_type, d.element_type).map_err(at)?;
            same("shape", &want.shape, &d.shape).map_err(at)?;
            same("layout", &want.layout, &d.layout).map_err(at)?;
            same("byte_offset", want.byte_offset, d.byte_offset).map_err(at)?;
            same("buffer count", want.buffers.len(), d.buffers.len()).map_err(at)?;
            for (i, (w, h)) in want.buffers.iter().zip(&d.buffers).enumerate() {
                same(&format!("buffer {i} entry"), w, h).map_err(at)?;
            }
            same("quantization", &want.quantization, &d.quantization).map_err(at)?;
            same("shard", &want.shard, &d.shard).map_err(at)?;
            same("statistics", &want.statistics, &d.statistics).map_err(at)?;
            same("extension type", &want.extension_type, &d.extension_type).map_err(at)?;
            same("member role", &want.composite_member, &d.composite_member).map_err(at)?;
            same("descriptor", &want, d).map_err(at)?;
            for (i, (b, got)) in t.buffers.iter().zip(g.buffers()).enumerate() {
                if let Some(e) = first_difference(&format!("buffer {i}"), &b.bytes, got.as_slice())
                {
                    return Err(at(e));
                }
            }
            Ok(())
        }
        (Item::Composite(c), hurray_io::Item::Composite(g)) => {
            let at = |e: String| format!("composite {:?}: {e}", c.name);
            let want = build::head_descriptor(c)?;
            same("head descriptor", &want, g.head.descriptor()).map_err(at)?;
            same("member count", c.members.len(), g.members.len()).map_err(at)?;
            for (m, gm) in c.members.iter().zip(&g.members) {
                item(m, gm)?;
            }
            Ok(())
        }
        (Item::Tensor(t), _) => Err(format!(
            "tensor {:?}: expected a tensor, got a composite",
            t.name
        )),
        (Item::Composite(c), _) => Err(format!(
            "composite {:?}: expected a composite, got a plain tensor",
            c.name
        )),
    }
}

fn f64s_same(a: &[f64], b: &[f64]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits())
}

/// Whether a KV value read equals its spec (floats bit for bit).
pub fn kv_same(spec: &KvSpec, got: &KvValue) -> bool {
    match (build::kv(spec), got) {
        (KvValue::Float64(a), KvValue::Float64(b)) => a.to_bits() == b.to_bits(),
        (KvValue::Array(KvArray::Float64(a)), KvValue::Array(KvArray::Float64(b))) => {
            f64s_same(&a, b)
        }
        (w, g) => w == *g,
    }
}

/// Checks a file's KV entries against the case's, in order.
pub fn kv(spec: &[(String, KvSpec)], got: &[KvEntry]) -> Result<(), String> {
    for (i, (key, v)) in spec.iter().enumerate() {
        let Some(e) = got.get(i) else {
            return Err(format!(
                "KV: expected {} entries, got {}",
                spec.len(),
                got.len()
            ));
        };
        if e.key != *key {
            return Err(format!(
                "KV entry {i}: expected key {key:?}, got {:?}",
                e.key
            ));
        }
        if !kv_same(v, &e.value) {
            return Err(format!(
                "KV {key:?}: expected {:?}, got {:?}",
                build::kv(v),
                e.value
            ));
        }
    }
    if got.len() != spec.len() {
        return Err(format!(
            "KV: expected {} entries, got {}",
            spec.len(),
            got.len()
        ));
    }
    Ok(())
}
