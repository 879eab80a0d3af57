//! Hostile input never panics: a valid file truncated at every byte offset, and 10^5
//! random mutations (with and without a repaired index CRC), each yield an error or
//! a valid file whose every part can then be read.

#[path = "stream_common/mod.rs"]
mod stream_common;

use hurray_io::file::{
    Catalog, FileReader, FileWriterTo, KvArray, KvValue, ReadOptions, SequentialReader,
    WriteOptions,
};
use hurray_io::{BufferOwner, Item};
use std::sync::Arc;
use stream_common::*;

/// A small file with plain, sparse, quantized and empty tensors, a nested composite,
/// an empty group and KV of several types.
fn sample() -> Vec<u8> {
    let mut w = FileWriterTo::new(Vec::new(), WriteOptions::default()).unwrap();
    w.add_kv("s", KvValue::String("x".into())).unwrap();
    w.add_kv("a", KvValue::Array(KvArray::Bool(vec![true, false])))
        .unwrap();
    for (i, item) in small_items().iter().enumerate() {
        match item {
            Item::Tensor(t) => w.write_tensor(&format!("t{i}"), t).unwrap(),
            Item::Composite(c) => w.write_composite(&format!("c{i}"), c).unwrap(),
        }
    }
    w.add_kv("b", KvValue::Bytes(vec![1, 2])).unwrap();
    w.finish().unwrap()
}

/// Reads every part of a file that opened: items, tensors, KV, descriptors. A
/// mutation may break a buffer-content rule (a sparse index, a scale): then that
/// tensor's lookup, and every item holding it, is a content error, never a panic.
fn exercise(r: &FileReader) {
    let mut n = 0;
    match r.items() {
        Ok(items) => {
            for (name, item) in items {
                assert!(r.item(&name).unwrap().is_some());
                item.for_each_tensor(&mut |t| {
                    for b in t.buffers() {
                        n += b.as_slice().iter().map(|&x| x as usize).sum::<usize>();
                    }
                });
            }
        }
        Err(e) => assert!(matches!(e, hurray_io::Error::Content { .. }), "{e}"),
    }
    for (name, t) in r.tensors() {
        match t {
            Ok(t) => assert_eq!(r.descriptor(name).as_deref(), Some(t.descriptor())),
            Err(e) => assert!(matches!(e, hurray_io::Error::Content { .. }), "{e}"),
        }
    }
    for e in r.kv() {
        assert_eq!(r.kv_get(e.key), Some(e.value));
    }
    std::hint::black_box(n);
}

fn sequential(bytes: &[u8]) -> hurray_io::Result<usize> {
    let all = SequentialReader::new(bytes)?.read_all()?;
    Ok(all.items.len())
}

/// A file held by an owner without copying (to keep 10^5 opens cheap).
struct Shared(Arc<Vec<u8>>);
impl BufferOwner for Shared {
    fn bytes(&self) -> &[u8] {
        &self.0
    }
}

#[test]
fn truncation_at_every_offset_is_an_error() {
    let file = sample();
    assert!(file.len() > 20_000, "the sample spans several pages");
    FileReader::from_bytes(&file).unwrap();
    let opts = ReadOptions::default();
    for n in 0..file.len() {
        let e = Catalog::parse(Arc::new(file[..n].to_vec()), &opts)
            .expect_err("a truncated file is rejected");
        std::hint::black_box(e.to_string());
    }
    for n in 0..file.len() {
        let e = sequential(&file[..n]).expect_err("a truncated file is rejected");
        std::hint::black_box(e.to_string());
    }
    assert_eq!(sequential(&file).unwrap(), small_items().len());
}

/// Applies one random mutation: flip bits, set bytes, or overwrite an 8- or 4-byte
/// field with an extreme or nearby value.
fn mutate(b: &mut [u8], rng: &mut Rng) {
    let n = b.len();
    // Bias towards structure: header, descriptors and the end of the file.
    let at = match rng.below(4) {
        0 => rng.below(64.min(n)),
        1 => n - 1 - rng.below(600.min(n)),
        2 => rng.below(200.min(n)),
        _ => rng.below(n),
    };
    match rng.below(6) {
        0 => b[at] ^= 1 << rng.below(8),
        1 => b[at] = rng.next_u64() as u8,
        2 | 3 => {
            let w = if rng.below(2) == 0 { 8 } else { 4 };
            if at + w <= n {
                let v: u64 = match rng.below(6) {
                    0 => 0,
                    1 => u64::MAX,
                    2 => 1 << 32,
                    3 => rng.below(1 << 20) as u64,
                    4 => rng.next_u64(),
                    _ => {
                        let mut cur = [0u8; 8];
                        cur[..w].copy_from_slice(&b[at..at + w]);
                        u64::from_le_bytes(cur)
                            .wrapping_add(rng.below(17) as u64)
                            .wrapping_sub(8)
                    }
                };
                b[at..at + w].copy_from_slice(&v.to_le_bytes()[..w]);
            }
        }
        4 => {
            for _ in 0..rng.range(2, 6) {
                let i = rng.below(n);
                b[i] = rng.next_u64() as u8;
            }
        }
        _ => b[at] = 0,
    }
}

/// Recomputes the index CRC from the (possibly mutated) trailer, when it can.
fn repair_crc(b: &mut [u8]) {
    let n = b.len();
    let t = n - 40;
    let o = u64::from_le_bytes(b[t..t + 8].try_into().unwrap());
    let l = u64::from_le_bytes(b[t + 8..t + 16].try_into().unwrap());
    if let Some(end) = o.checked_add(l) {
        if end <= t as u64 {
            let c = crc32c::crc32c(&b[o as usize..end as usize]);
            b[t + 28..t + 32].copy_from_slice(&c.to_le_bytes());
        }
    }
}

#[test]
fn random_mutations_never_panic() {
    let file = sample();
    let mut rng = Rng(0x5EED_F11E);
    let opts = ReadOptions::default();
    let (mut ok, mut err, mut seq_ok) = (0, 0, 0);
    for i in 0..100_000u32 {
        let mut b = file.clone();
        for _ in 0..rng.range(1, 3) {
            mutate(&mut b, &mut rng);
        }
        if i % 2 == 0 {
            repair_crc(&mut b);
        }
        let b = Arc::new(b);
        match FileReader::from_owner(Arc::new(Shared(b.clone())), &opts) {
            Ok(r) => {
                ok += 1;
                exercise(&r);
            }
            Err(e) => {
                err += 1;
                std::hint::black_box(e.to_string());
            }
        }
        if i % 16 == 0 && sequential(&b).is_ok() {
            seq_ok += 1;
        }
    }
    println!("{ok} mutated files still valid, {err} rejected, {seq_ok} valid sequentially");
    assert!(err > 50_000, "most mutations must be caught");
    assert!(
        ok > 100,
        "some mutations (padding, data bytes) leave a valid file"
    );
}
