//! The stream decoder (`streams-and-transport.md` Part A). The first 4 input bytes
//! choose how the rest is fed (flags, then three chunk sizes used in turn); the rest
//! is the stream. Checks: the same bytes fed whole and in chunks give the same items
//! and the same end (error text included); every buffer of every item is read; a
//! stream that decodes strictly decodes permissively to the same items; every item
//! re-encodes and decodes back to itself.
#![no_main]

use hurray_fuzz::{assert_stream_round_trip, decode_stream, split_control, touch, Feeding};
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
});
