//! Decoding one element of a buffer to text, for every public element type
//! (`element-types.md`): IEEE floats (binary16 and bfloat16 through the `half`
//! crate), the OCP 8-, 6- and 4-bit floats, integers of every width including the
//! packed sub-byte ones, bool, and complex numbers.

use hurray_core::{ElementType, Storage};

/// The text of element `o` (in elements from the start of `bytes`; for sub-byte
/// types, counted from bit 0 of `bytes[0]`), or `None` when it lies outside `bytes`
/// or the type cannot be decoded (private and unknown types).
pub fn element(t: ElementType, bytes: &[u8], o: u64) -> Option<String> {
    match t.storage()? {
        Storage::Bytes(w) => {
            let w = w as usize;
            let start = usize::try_from(o).ok()?.checked_mul(w)?;
            let b = bytes.get(start..start.checked_add(w)?)?;
            whole(t, b)
        }
        Storage::Packed { bits } => {
            let per = u64::from(8 / bits);
            let byte = *bytes.get(usize::try_from(o / per).ok()?)?;
            let shift = (o % per) as u32 * u32::from(bits);
            let code = (byte >> shift) & ((1u16 << bits) - 1) as u8;
            Some(packed(t, code))
        }
        Storage::SixBit => {
            let g = usize::try_from(o / 4).ok()?.checked_mul(3)?;
            let b = bytes.get(g..g + 3)?;
            let group = u32::from(b[0]) | u32::from(b[1]) << 8 | u32::from(b[2]) << 16;
            let code = ((group >> ((o % 4) * 6)) & 0x3F) as u8;
            Some(num(six_bit(t, code)))
        }
    }
}

/// Formats a float the way Rust's `Debug` does: shortest round-trip digits, with an
/// exponent for very large or small magnitudes.
fn num(x: f64) -> String {
    format!("{x:?}")
}

fn le<const N: usize>(b: &[u8]) -> [u8; N] {
    let mut a = [0u8; N];
    a.copy_from_slice(&b[..N]);
    a
}

fn whole(t: ElementType, b: &[u8]) -> Option<String> {
    use ElementType as E;
    Some(match t {
        E::Float16 => format!("{:?}", half::f16::from_le_bytes(le(b))),
        E::Bfloat16 => format!("{:?}", half::bf16::from_le_bytes(le(b))),
        E::Float32 => format!("{:?}", f32::from_le_bytes(le(b))),
        E::Float64 => num(f64::from_le_bytes(le(b))),
        E::Int8 => (b[0] as i8).to_string(),
        E::Uint8 => b[0].to_string(),
        E::Int16 => i16::from_le_bytes(le(b)).to_string(),
        E::Uint16 => u16::from_le_bytes(le(b)).to_string(),
        E::Int32 => i32::from_le_bytes(le(b)).to_string(),
        E::Uint32 => u32::from_le_bytes(le(b)).to_string(),
        E::Int64 => i64::from_le_bytes(le(b)).to_string(),
        E::Uint64 => u64::from_le_bytes(le(b)).to_string(),
        E::Float8E4m3 => num(f8_e4m3(b[0])),
        E::Float8E5m2 => num(half::f16::from_bits(u16::from(b[0]) << 8).to_f64()),
        E::Float8E8m0 => match b[0] {
            0x00 | 0xFF => format!("reserved({:#04x})", b[0]),
            e => num(2f64.powi(i32::from(e) - 127)),
        },
        E::Float128 => num(f128_to_f64(le(b))),
        E::Complex64 => complex(
            f64::from(f32::from_le_bytes(le(b))),
            f64::from(f32::from_le_bytes(le(&b[4..]))),
        ),
        E::Complex128 => complex(f64::from_le_bytes(le(b)), f64::from_le_bytes(le(&b[8..]))),
        _ => return None,
    })
}

fn complex(re: f64, im: f64) -> String {
    if im.is_sign_negative() {
        format!("{re:?}-{:?}j", -im)
    } else {
        format!("{re:?}+{im:?}j")
    }
}

fn packed(t: ElementType, code: u8) -> String {
    use ElementType as E;
    match t {
        E::Bool => (code != 0).to_string(),
        E::Int4 => (((code << 4) as i8) >> 4).to_string(),
        E::Int2 => (((code << 6) as i8) >> 6).to_string(),
        E::Float4E2m1 => {
            const MAG: [f64; 8] = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0];
            let v = MAG[usize::from(code & 7)];
            num(if code & 8 != 0 { -v } else { v })
        }
        _ => code.to_string(),
    }
}

/// A small float with `e_bits` exponent bits, `m_bits` mantissa bits and `bias`,
/// without Inf or NaN codes (the MX 6- and 4-bit formats).
fn minifloat(code: u32, e_bits: u32, m_bits: u32, bias: i32) -> f64 {
    let sign = if code >> (e_bits + m_bits) & 1 == 1 {
        -1.0
    } else {
        1.0
    };
    let e = (code >> m_bits) & ((1 << e_bits) - 1);
    let m = f64::from(code & ((1 << m_bits) - 1)) / f64::from(1u32 << m_bits);
    let v = if e == 0 {
        m * 2f64.powi(1 - bias)
    } else {
        (1.0 + m) * 2f64.powi(e as i32 - bias)
    };
    sign * v
}

fn six_bit(t: ElementType, code: u8) -> f64 {
    match t {
        ElementType::Float6E2m3 => minifloat(u32::from(code), 2, 3, 1),
        _ => minifloat(u32::from(code), 3, 2, 3),
    }
}

/// OCP OFP8 E4M3: bias 7, no infinities, NaN only at S.1111.111.
fn f8_e4m3(b: u8) -> f64 {
    if b & 0x7F == 0x7F {
        return f64::NAN;
    }
    minifloat(u32::from(b), 4, 3, 7)
}

/// IEEE binary128 rounded to binary64 (values outside its range become 0 or ±inf).
fn f128_to_f64(b: [u8; 16]) -> f64 {
    let bits = u128::from_le_bytes(b);
    let sign = if bits >> 127 == 1 { -1.0 } else { 1.0 };
    let e = ((bits >> 112) & 0x7FFF) as i32;
    let m = bits & ((1u128 << 112) - 1);
    let frac = (m >> 60) as f64 / (1u64 << 52) as f64;
    if e == 0x7FFF {
        return if m == 0 {
            sign * f64::INFINITY
        } else {
            f64::NAN
        };
    }
    if e == 0 {
        return sign * frac * 2f64.powi(-16382);
    }
    sign * (1.0 + frac) * 2f64.powi(e - 16383)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ElementType as E;

    fn one(t: ElementType, b: &[u8]) -> String {
        element(t, b, 0).unwrap()
    }

    #[test]
    fn floats_from_the_spec_examples() {
        // element-types.md §3 wire examples.
        assert_eq!(one(E::Float16, &[0x00, 0x3C]), "1.0");
        assert_eq!(one(E::Bfloat16, &[0x80, 0x3F]), "1.0");
        assert_eq!(one(E::Float32, &[0, 0, 0x80, 0x3F]), "1.0");
        assert_eq!(one(E::Float16, &[0xFF, 0x7B]), "65504.0");
        assert_eq!(one(E::Float8E4m3, &[0x7E]), "448.0");
        assert_eq!(one(E::Float8E4m3, &[0x7F]), "NaN");
        assert_eq!(one(E::Float8E5m2, &[0x7B]), "57344.0");
        assert_eq!(one(E::Float8E8m0, &[0x7F]), "1.0");
        assert_eq!(one(E::Float8E8m0, &[0xFF]), "reserved(0xff)");
        assert_eq!(
            one(E::Complex64, &[0, 0, 0x80, 0x3F, 0, 0, 0, 0x40]),
            "1.0+2.0j"
        );
        let mut one128 = [0u8; 16];
        one128[14] = 0xFF;
        one128[15] = 0x3F;
        assert_eq!(one(E::Float128, &one128), "1.0");
    }

    #[test]
    fn sub_byte_codes_follow_the_packing_rule() {
        // uint4[3] = 5, 12, 3 -> C5 03; int4[3] = -1, 3, -8 -> 3F 08.
        let u4: Vec<String> = (0..3)
            .map(|i| element(E::Uint4, &[0xC5, 0x03], i).unwrap())
            .collect();
        assert_eq!(u4, ["5", "12", "3"]);
        let i4: Vec<String> = (0..3)
            .map(|i| element(E::Int4, &[0x3F, 0x08], i).unwrap())
            .collect();
        assert_eq!(i4, ["-1", "3", "-8"]);
        // uint2[5] = 1, 2, 3, 0, 3 -> 39 03; bool[5] T,F,T,T,F -> 0D.
        let u2: Vec<String> = (0..5)
            .map(|i| element(E::Uint2, &[0x39, 0x03], i).unwrap())
            .collect();
        assert_eq!(u2, ["1", "2", "3", "0", "3"]);
        assert_eq!(element(E::Int2, &[0x02], 0).unwrap(), "-2");
        let b: Vec<String> = (0..5)
            .map(|i| element(E::Bool, &[0x0D], i).unwrap())
            .collect();
        assert_eq!(b, ["true", "false", "true", "true", "false"]);
        // 6-bit [4] = 0x3F, 0x01, 0x2A, 0x15 -> 7F A0 56 (E2M3: -7.5, 0.125, -1.25, 3.25).
        let f6: Vec<String> = (0..4)
            .map(|i| element(E::Float6E2m3, &[0x7F, 0xA0, 0x56], i).unwrap())
            .collect();
        assert_eq!(f6, ["-7.5", "0.125", "-1.25", "3.25"]);
        assert_eq!(element(E::Float6E3m2, &[0x1F, 0, 0], 0).unwrap(), "28.0");
        assert_eq!(element(E::Float4E2m1, &[0x97], 1).unwrap(), "-0.5");
        assert_eq!(element(E::Float4E2m1, &[0x97], 0).unwrap(), "6.0");
    }

    #[test]
    fn out_of_range_and_opaque_types_give_none() {
        assert_eq!(element(E::Float32, &[0; 4], 1), None);
        assert_eq!(element(E::Float6E2m3, &[0; 2], 0), None);
        assert_eq!(element(E::Private(0xF0), &[0; 4], 0), None);
    }
}
