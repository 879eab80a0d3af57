//! The stream decoder (`streams-and-transport.md` Part A). The first 4 input bytes
//! choose how the rest is fed (flags, then three chunk sizes used in turn); the rest
//! is the stream. Checks: the same bytes fed whole and in chunks give the same items
//! and the same end (error text included); every buffer of every item is read; a
//! stream that decodes strictly decodes permissively to the same items; every item
//! re-encodes and decodes back to itself, and a clean stream of minor-0 descriptors
//! re-encodes to exactly its bytes. Control flags (byte 0): bit 0 feeds through
//! `feed` instead of `demand`/`advance`, bit 1 makes buffers above 4 KiB grow in
//! steps, bit 2 takes buffers from a pool shared by all runs, bit 3 reads through
//! the blocking `StreamReader` from a reader that returns a few bytes per call.
#![no_main]

use hurray_fuzz::{
    assert_stream_round_trip, decode_stream, encode_item, split_control, touch, Feeding,
};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let (ctl, body) = split_control(data);
    let whole = decode_stream(body, Feeding::WHOLE);
    let chunked = decode_stream(body, Feeding::from_control(ctl));
    assert!(
        whole.same(&chunked),
        "chunking changed the result: whole {:?}, chunked ({:?}) {:?}",
        whole.end,
        Feeding::from_control(ctl),
        chunked.end
    );
    for item in &whole.items {
        touch(item);
    }
    if whole.end.is_ok() {
        let permissive = decode_stream(
            body,
            Feeding {
                permissive: true,
                ..Feeding::WHOLE
            },
        );
        assert!(permissive.same(&whole), "permissive decoding differs");
    }
    for item in &whole.items {
        assert_stream_round_trip(item);
    }
    // A clean stream of minor-0 descriptors is canonical: its items re-encode to
    // exactly its bytes (the stream format has no framing or padding of its own).
    let mut minor0 = true;
    for item in &whole.items {
        item.for_each_tensor(&mut |t| minor0 &= t.descriptor().version_minor == 0);
    }
    if whole.end.is_ok() && minor0 {
        let mut again = Vec::new();
        for item in &whole.items {
            again.extend(encode_item(item).expect("checked by the round trip above"));
        }
        assert!(
            again == body,
            "re-encoding a minor-0 stream changed its bytes"
        );
    }
});
