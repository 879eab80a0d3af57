//! Composite binding (`layouts.md` §2.11, `streams-and-transport.md` A.4): the input
//! is descriptors back to back (a head, then its members, nested heads followed by
//! theirs). Each gets zero-filled buffers of its declared sizes; heads are bound to
//! the members that follow them, into a `hurray_io::Composite` and through the C
//! ABI's Rust face (`HurrayItem::composite` + `push`). Checks: the FFI item converts
//! back to the same item; the stream encoder and the file writer refuse every
//! composite `composite::validate` refuses, and write every one it accepts unless a
//! writer `Limit` applies; what they write reads back unchanged through the stream
//! decoder and the file reader.
#![no_main]

use hurray_core::{DecodeOptions, DeviceTag, Layout, TensorDescriptor};
use hurray_ffi::item::HurrayItem;
use hurray_fuzz::{decode_stream, encode_item, same_item, touch, Feeding};
use hurray_io::file::{FileReader, FileWriterTo, WriteOptions};
use hurray_io::{composite, Buffer, Composite, FormatRule, Item, Limits, Tensor};
use libfuzzer_sys::fuzz_target;

/// Zero-filled buffers of at most this many bytes in total per input.
const BUDGET: u64 = 1 << 20;
/// Nesting beyond this is not built (the readers stop at 64; this is far beyond 8).
const MAX_NEST: u32 = 16;

/// The descriptors at the start of `data`, each with zero-filled buffers, until one
/// does not decode or the byte budget runs out.
fn tensors(mut data: &[u8]) -> Vec<Tensor> {
    let mut out = Vec::new();
    let mut budget = BUDGET;
    while let Ok((d, used)) = TensorDescriptor::decode_prefix(data, &DecodeOptions::strict()) {
        data = &data[used..];
        let need = d
            .buffers
            .iter()
            .try_fold(0u64, |a, b| a.checked_add(b.byte_size));
        let Some(need) = need.filter(|&n| n <= budget) else {
            break;
        };
        budget -= need;
        let bufs = d
            .buffers
            .iter()
            .map(|b| Buffer::copy_from(&vec![0u8; b.byte_size as usize]))
            .collect();
        // Sized from the descriptor; buffer-content checks may still refuse zeros.
        let Ok(t) = Tensor::new(d, bufs) else { break };
        out.push(t);
    }
    out
}

/// The next item: a tensor, or a head with the members after it. `None` when the
/// tensors run out inside a composite (a torn composite binds to nothing).
fn bind(ts: &mut std::vec::IntoIter<Tensor>, depth: u32) -> Option<Item> {
    let t = ts.next()?;
    let Layout::CompositeHead(h) = &t.descriptor().layout else {
        return Some(Item::Tensor(t));
    };
    if depth >= MAX_NEST {
        return None;
    }
    let n = h.member_count;
    let mut members = Vec::new();
    for _ in 0..n {
        members.push(bind(ts, depth + 1)?);
    }
    Some(Item::Composite(Composite { head: t, members }))
}

/// The same item bound through the FFI handles, and back (`None` when the FFI
/// refuses it: a nesting or count limit, or, on the way back, a device buffer).
fn through_ffi(item: &Item) -> Option<Item> {
    let h = HurrayItem::from_io(item.clone()).ok()?;
    let mut on_cpu = true;
    item.for_each_tensor(&mut |t| {
        on_cpu &= t
            .descriptor()
            .buffers
            .iter()
            .all(|b| b.device == DeviceTag::Cpu);
    });
    match h.to_io() {
        Ok(back) => Some(back),
        Err(e) if on_cpu => panic!("a complete CPU item does not convert back: {e:?}"),
        Err(_) => None,
    }
}

fn check(item: &Item) {
    touch(item);
    if let Some(back) = through_ffi(item) {
        assert!(same_item(&back, item), "the FFI item differs");
    }
    let limits = Limits::default();
    let valid = match item {
        Item::Composite(c) => {
            composite::validate(c, limits.composite_depth(), limits.max_composite_members)
        }
        Item::Tensor(_) => Ok(()),
    };
    let stream = encode_item(item);
    // And they write every valid item, unless a writer limit stands in the way
    // (e.g. a buffer alignment a stream reader cannot honour).
    if let (Ok(()), Err(e)) = (&valid, &stream) {
        if e.rule() != Some(FormatRule::Limit) {
            panic!("the stream encoder refuses a valid item: {e}");
        }
    }
    if let (Err(e), Ok(_)) = (&valid, &stream) {
        panic!("the stream encoder wrote a composite validate refuses: {e}");
    }
    if let Ok(bytes) = &stream {
        let back = decode_stream(bytes, Feeding::WHOLE);
        assert_eq!(back.end, Ok(()), "an encoded item decodes cleanly");
        assert_eq!(back.items.len(), 1);
        assert!(
            same_item(&back.items[0], item),
            "stream round trip changed it"
        );
    }
    let mut w = FileWriterTo::new(Vec::new(), WriteOptions::default()).expect("defaults");
    let written = match item {
        Item::Tensor(t) => w.write_tensor("t", t),
        Item::Composite(c) => w.write_composite("c", c),
    };
    if let (Err(e), Ok(())) = (&valid, &written) {
        panic!("the file writer wrote a composite validate refuses: {e}");
    }
    if let (Ok(()), Err(e)) = (&valid, &written) {
        if e.rule() != Some(FormatRule::Limit) {
            panic!("the file writer refuses a valid item: {e}");
        }
    }
    if written.is_ok() {
        let bytes = w.finish().expect("a file with one written item finishes");
        let r = FileReader::from_bytes(&bytes).expect("a written file reads");
        let items = r
            .items()
            .expect("a written file's contents pass: the writer checked them");
        assert_eq!(items.len(), 1);
        assert!(same_item(&items[0].1, item), "file round trip changed it");
    }
}

fuzz_target!(|data: &[u8]| {
    let mut ts = tensors(data).into_iter();
    while let Some(item) = bind(&mut ts, 0) {
        check(&item);
    }
});
