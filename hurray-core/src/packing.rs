//! Sub-byte packing (`element-types.md` §5): one byte per element out of, and back
//! into, the packed bit stream of `bool`, the 2- and 4-bit types and the 6-bit types.
//!
//! Bindings use these for their explicit copying paths (NumPy `bool`, Java and Node
//! unpacked bool copies, `int4` as `int8`): the packing rule lives here once.
//!
//! ```
//! use hurray_core::{packing, ElementType};
//! // bool[5] = T, F, T, T, F is the byte 0x0D (element-types.md §5 worked packings).
//! assert_eq!(packing::unpack(ElementType::Bool, &[0x0D], 5).unwrap(), [1, 0, 1, 1, 0]);
//! assert_eq!(packing::pack(ElementType::Bool, &[1, 0, 1, 1, 0]).unwrap(), [0x0D]);
//! // int4[3] = -1, 3, -8 is 3F 08; signed codes come back sign-extended.
//! assert_eq!(packing::unpack(ElementType::Int4, &[0x3F, 0x08], 3).unwrap(), [0xFF, 3, 0xF8]);
//! ```

use crate::{ElementType, Storage};

/// Why a packing call was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PackingError {
    /// The type is not stored in sub-byte codes (or is private: its packing lives in
    /// its extension-type section).
    #[error("element type {0} is not a built-in sub-byte type (element-types.md §5)")]
    NotSubByte(&'static str),
    /// The packed bytes are fewer than `count` elements need.
    #[error(
        "{count} elements of {ty} need {need} bytes, the buffer has {have} (element-types.md §7)"
    )]
    Short {
        /// The element type.
        ty: &'static str,
        /// Elements asked for.
        count: u64,
        /// Bytes needed.
        need: u64,
        /// Bytes given.
        have: u64,
    },
    /// An element does not fit the type's width (for example 2 for `bool`, 16 for `uint4`).
    #[error(
        "element {index} = {value:#04x} does not fit {ty}'s {bits} bits (element-types.md §5)"
    )]
    TooWide {
        /// The element type.
        ty: &'static str,
        /// Element index.
        index: usize,
        /// The offending value.
        value: u8,
        /// The type's width in bits.
        bits: u32,
    },
}

fn width(ty: ElementType) -> Result<u32, PackingError> {
    match ty.storage() {
        Some(Storage::Packed { bits }) => Ok(u32::from(bits)),
        Some(Storage::SixBit) => Ok(6),
        _ => Err(PackingError::NotSubByte(ty.name())),
    }
}

fn signed(ty: ElementType) -> bool {
    matches!(ty, ElementType::Int4 | ElementType::Int2)
}

/// The `bits`-wide code of element `i`: stream bits `[i·bits, i·bits + bits − 1]`,
/// LSB first (§5's one rule, which also covers the 6-bit groups).
fn code_at(bytes: &[u8], i: u64, bits: u32) -> u8 {
    let start = i * u64::from(bits);
    let byte = (start / 8) as usize;
    let shift = (start % 8) as u32;
    let lo = u16::from(bytes[byte]);
    let hi = if shift + bits > 8 {
        u16::from(bytes[byte + 1])
    } else {
        0
    };
    (((lo | hi << 8) >> shift) & ((1 << bits) - 1)) as u8
}

/// The first `count` elements of a packed buffer, one byte each: `bool` as 0 or 1,
/// unsigned codes as they are, `int4`/`int2` sign-extended to two's-complement
/// `i8` (returned as its byte), float4/float6 as their raw codes.
///
/// Errors: [`PackingError::NotSubByte`] for a whole-byte or private type;
/// [`PackingError::Short`] when `packed` holds fewer than `count` elements.
/// Allocation: one `Vec` of `count` bytes (owned by the caller).
pub fn unpack(ty: ElementType, packed: &[u8], count: u64) -> Result<Vec<u8>, PackingError> {
    let bits = width(ty)?;
    let need = ty
        .storage()
        .and_then(|s| s.bytes_for(count))
        .unwrap_or(u64::MAX);
    if need > packed.len() as u64 {
        return Err(PackingError::Short {
            ty: ty.name(),
            count,
            need,
            have: packed.len() as u64,
        });
    }
    let sign = signed(ty);
    let mut out = Vec::with_capacity(count as usize);
    if bits == 1 {
        // The common case (bool masks) a byte at a time.
        for i in 0..count {
            out.push((packed[(i / 8) as usize] >> (i % 8)) & 1);
        }
        return Ok(out);
    }
    for i in 0..count {
        let c = code_at(packed, i, bits);
        out.push(if sign && c >> (bits - 1) == 1 {
            c | !((1u8 << bits) - 1)
        } else {
            c
        });
    }
    Ok(out)
}

/// Packs one byte per element into the type's stream (§5), padding bits zero.
/// `bool` takes 0 and 1 (any other byte is refused, not coerced); signed types take
/// the two's-complement byte of a value in range (−8…7 for `int4`, −2…1 for `int2`).
///
/// Errors: [`PackingError::NotSubByte`]; [`PackingError::TooWide`] naming the first
/// element that does not fit. Returns `⌈…⌉` bytes as §7 sizes them (owned).
pub fn pack(ty: ElementType, elements: &[u8]) -> Result<Vec<u8>, PackingError> {
    let bits = width(ty)?;
    let n = elements.len() as u64;
    let size = ty.storage().and_then(|s| s.bytes_for(n)).unwrap_or(0) as usize;
    let mut out = vec![0u8; size];
    let mask = (1u16 << bits) - 1;
    let sign = signed(ty);
    for (index, &value) in elements.iter().enumerate() {
        let fits = if sign {
            let v = value as i8;
            let half = 1i8 << (bits - 1);
            (-half..half).contains(&v)
        } else {
            u16::from(value) <= mask
        };
        if !fits {
            return Err(PackingError::TooWide {
                ty: ty.name(),
                index,
                value,
                bits,
            });
        }
        let code = u16::from(value) & mask;
        let start = index as u64 * u64::from(bits);
        let byte = (start / 8) as usize;
        let shift = (start % 8) as u32;
        let spread = code << shift;
        out[byte] |= spread as u8;
        if shift + bits > 8 {
            out[byte + 1] |= (spread >> 8) as u8;
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ElementType::*;

    /// Every worked packing of element-types.md §5, both directions.
    #[test]
    fn worked_packings() {
        let cases: &[(ElementType, &[u8], &[u8])] = &[
            (Bool, &[1, 0, 1, 1, 0], &[0x0D]),
            (Uint4, &[5, 12, 3], &[0xC5, 0x03]),
            (Uint2, &[3, 1, 2], &[0x27]),
            (Float6E2m3, &[1, 2, 4, 8], &[0x81, 0x40, 0x20]),
            (Bool, &[1, 1, 0, 0, 0, 0, 0, 0, 1], &[0x03, 0x01]),
            (Int4, &[0xFF, 3, 0xF8], &[0x3F, 0x08]),
            (Uint2, &[1, 2, 3, 0, 3], &[0x39, 0x03]),
            (Float6E3m2, &[0x3F, 0x01, 0x2A, 0x15], &[0x7F, 0xA0, 0x56]),
            (
                Float6E3m2,
                &[0x3F, 0x01, 0x2A, 0x15, 0x07],
                &[0x7F, 0xA0, 0x56, 0x07, 0x00, 0x00],
            ),
        ];
        for (ty, elems, wire) in cases {
            assert_eq!(pack(*ty, elems).unwrap(), *wire, "{ty:?} {elems:?}");
            assert_eq!(
                unpack(*ty, wire, elems.len() as u64).unwrap(),
                *elems,
                "{ty:?}"
            );
        }
    }

    #[test]
    fn refusals_name_the_rule() {
        assert_eq!(
            unpack(Float32, &[0; 4], 1),
            Err(PackingError::NotSubByte("float32"))
        );
        let e = unpack(Bool, &[0xFF], 9).unwrap_err();
        assert!(
            e.to_string().contains("need 2 bytes, the buffer has 1"),
            "{e}"
        );
        let e = pack(Bool, &[1, 2]).unwrap_err();
        assert_eq!(
            e,
            PackingError::TooWide {
                ty: "bool",
                index: 1,
                value: 2,
                bits: 1
            }
        );
        assert!(pack(Int4, &[8]).is_err());
        assert!(pack(Int2, &[0xFE]).is_ok()); // −2
        assert!(pack(Int2, &[0xFD]).is_err()); // −3
    }

    proptest::proptest! {
        #[test]
        fn round_trips(codes in proptest::collection::vec(0u8..=255, 0..200), t in 0usize..7) {
            let ty = [Bool, Uint2, Int2, Uint4, Int4, Float4E2m1, Float6E2m3][t];
            let bits = width(ty).unwrap();
            // A valid element of each type from an arbitrary byte.
            let elems: Vec<u8> = codes.iter().map(|c| {
                let code = c & ((1u8 << bits) - 1);
                if signed(ty) && code >> (bits - 1) == 1 { code | !((1u8 << bits) - 1) } else { code }
            }).collect();
            let packed = pack(ty, &elems).unwrap();
            proptest::prop_assert_eq!(unpack(ty, &packed, elems.len() as u64).unwrap(), elems);
        }
    }
}
