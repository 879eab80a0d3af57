//! The descriptor codec (`descriptor.md`): strict and permissive decoding of
//! arbitrary bytes. Checks: error offsets lie within the input; strict acceptance
//! implies permissive acceptance of the same value; `decode_prefix` and
//! `peek_descriptor_length` agree with `decode`; every accepted descriptor
//! re-encodes to bytes that decode to the same value, and a strictly accepted
//! minor-0 descriptor re-encodes to exactly the input bytes.
#![no_main]

use hurray_core::{peek_descriptor_length, DecodeOptions, TensorDescriptor};
use hurray_fuzz::same_descriptor;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let strict = TensorDescriptor::decode(data);
    let permissive = TensorDescriptor::decode_with(data, &DecodeOptions::permissive());
    if let Err(e) = &strict {
        assert!(
            e.offset <= data.len(),
            "error offset {} beyond the {} input bytes: {e}",
            e.offset,
            data.len()
        );
    }
    if let Ok(d) = &strict {
        // Permissive decoding accepts everything strict decoding does, as the same value.
        let p = permissive
            .as_ref()
            .expect("permissive accepts what strict accepts");
        assert!(same_descriptor(p, d), "permissive differs");
        // The framing agrees with the decoder.
        assert_eq!(peek_descriptor_length(data).ok(), Some(data.len() as u32));
        let (p, used) = TensorDescriptor::decode_prefix(data, &DecodeOptions::strict())
            .expect("decode_prefix accepts what decode accepts");
        assert!(same_descriptor(&p, d) && used == data.len());
        // Re-encoding: the encoder's validation accepts what the decoder accepted.
        let bytes = d.encode().expect("a strictly decoded descriptor encodes");
        assert_eq!(bytes.len(), d.encoded_len());
        // Strict decoding accepts only the canonical encoding of a minor-0
        // descriptor (every byte is a field or a reserved byte checked to be zero),
        // so re-encoding gives the input back; a difference means a byte was
        // ignored. A higher minor may carry bytes this version skips.
        if d.version_minor == 0 {
            assert!(
                bytes == data,
                "re-encoding a minor-0 descriptor changed its bytes"
            );
        }
        let again = TensorDescriptor::decode(&bytes).expect("re-encoded bytes decode");
        assert!(
            same_descriptor(&again, d),
            "round trip changed the descriptor"
        );
    }
    if let Ok(d) = &permissive {
        // Opaque (unknown) parts may refuse to encode; when they do encode, the bytes
        // decode permissively to the same value.
        if let Ok(bytes) = d.encode() {
            let again = TensorDescriptor::decode_with(&bytes, &DecodeOptions::permissive())
                .expect("re-encoded permissive descriptor decodes");
            assert!(same_descriptor(&again, d));
        }
    }
    // A descriptor followed by more bytes: the prefix decoder stops at its length.
    if let Ok((d, used)) = TensorDescriptor::decode_prefix(data, &DecodeOptions::permissive()) {
        assert!(used <= data.len());
        let whole = TensorDescriptor::decode_with(&data[..used], &DecodeOptions::permissive())
            .expect("the prefix decodes on its own");
        assert!(same_descriptor(&whole, &d));
    }
});
