//! Byte transforms applied chunk by chunk while a tensor's data is copied: bool
//! packing and unpacking, byte swapping, and the `float8_e8m0` reserved-code check.
//! Each works on a chunk at a time so that no tensor is ever held whole in memory.

use crate::dtype::Carry;
use crate::error::{Error, Result};

/// Source bytes per chunk: a multiple of 16 so bool groups (8) and swapped elements
/// (≤ 8 bytes) never straddle two chunks.
pub const CHUNK: usize = 1 << 20;

/// Bytes the source must provide to produce `out_len` bytes under `carry`.
pub fn source_len(carry: Carry, out_len: u64, elements: u64) -> u64 {
    match carry {
        Carry::PackBool => elements,
        Carry::UnpackBool => elements.div_ceil(8),
        _ => out_len,
    }
}

/// Transforms one chunk of source bytes (`src`, whose first byte is at absolute
/// source offset `at`) into `out` (cleared first). For [`Carry::UnpackBool`],
/// `elements_left` is the number of elements still to produce.
///
/// Errors: `Bool` for a byte other than 0 or 1 in bool data, `ReservedValue` for
/// `0x00`/`0xFF` in `float8_e8m0` data, each at its absolute offset.
pub fn apply(
    carry: Carry,
    src: &[u8],
    at: u64,
    elements_left: u64,
    out: &mut Vec<u8>,
) -> Result<()> {
    out.clear();
    match carry {
        Carry::Verbatim => out.extend_from_slice(src),
        Carry::CheckE8m0 => {
            if let Some(i) = src.iter().position(|&b| b == 0x00 || b == 0xFF) {
                return Err(Error::format(
                    "ReservedValue",
                    at + i as u64,
                    format_args!(
                        "float8_e8m0 code {:#04x} is reserved in Hurray (element-types.md §3, A4)",
                        src[i]
                    ),
                ));
            }
            out.extend_from_slice(src);
        }
        Carry::SwapBytes(w) => {
            out.extend_from_slice(src);
            for e in out.chunks_exact_mut(usize::from(w)) {
                e.reverse();
            }
        }
        Carry::PackBool => {
            for (g, group) in src.chunks(8).enumerate() {
                let mut byte = 0u8;
                for (j, &v) in group.iter().enumerate() {
                    match v {
                        0 => {}
                        1 => byte |= 1 << j,
                        _ => {
                            return Err(Error::format(
                                "Bool",
                                at + (g * 8 + j) as u64,
                                format_args!("bool value {v:#04x} is neither 0 nor 1"),
                            ))
                        }
                    }
                }
                out.push(byte);
            }
        }
        Carry::UnpackBool => {
            let n = (src.len() as u64 * 8).min(elements_left) as usize;
            out.extend((0..n).map(|i| (src[i / 8] >> (i % 8)) & 1));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(carry: Carry, src: &[u8], left: u64) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        apply(carry, src, 100, left, &mut out).map(|()| out)
    }

    #[test]
    fn bools_pack_lsb_first_and_unpack_back() {
        // element-types.md §5: bool[5] T,F,T,T,F = 0x0D; bool[9] 1,1,0,0,0,0,0,0,1 = 03 01.
        assert_eq!(run(Carry::PackBool, &[1, 0, 1, 1, 0], 0).unwrap(), [0x0D]);
        let nine = [1, 1, 0, 0, 0, 0, 0, 0, 1];
        assert_eq!(run(Carry::PackBool, &nine, 0).unwrap(), [0x03, 0x01]);
        assert_eq!(run(Carry::UnpackBool, &[0x03, 0x01], 9).unwrap(), nine);
        let e = run(Carry::PackBool, &[1, 0, 2], 0).unwrap_err();
        assert_eq!(
            e.to_string(),
            "Bool at byte 102: bool value 0x02 is neither 0 nor 1"
        );
    }

    #[test]
    fn swaps_and_checks() {
        assert_eq!(
            run(Carry::SwapBytes(4), &[1, 2, 3, 4, 5, 6, 7, 8], 0).unwrap(),
            [4, 3, 2, 1, 8, 7, 6, 5]
        );
        assert_eq!(
            run(Carry::CheckE8m0, &[1, 0x7F, 0xFE], 0).unwrap(),
            [1, 0x7F, 0xFE]
        );
        let e = run(Carry::CheckE8m0, &[1, 0xFF], 0).unwrap_err();
        assert!(
            e.to_string().starts_with("ReservedValue at byte 101"),
            "{e}"
        );
    }

    #[test]
    fn source_lengths() {
        assert_eq!(source_len(Carry::PackBool, 2, 9), 9);
        assert_eq!(source_len(Carry::UnpackBool, 9, 9), 2);
        assert_eq!(source_len(Carry::Verbatim, 16, 4), 16);
    }
}
