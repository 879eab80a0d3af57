//! Element-type correspondences between safetensors, NumPy and Hurray, and how the
//! bytes of each travel (as they are, or re-packed / byte-swapped / checked).

use hurray_core::ElementType;
use safetensors::Dtype;

/// How a source tensor's bytes become the Hurray buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Carry {
    /// Byte for byte.
    Verbatim,
    /// One byte per element (0 or 1) packed to one bit per element
    /// (`element-types.md` §5); any other byte is refused.
    PackBool,
    /// Byte for byte, refusing `0x00` and `0xFF`, which Hurray reserves in
    /// `float8_e8m0` data (`element-types.md` §3, A4).
    CheckE8m0,
    /// Big-endian elements of this many bytes, swapped to little-endian.
    SwapBytes(u8),
    /// One bit per element unpacked to one byte per element (Hurray `bool` to
    /// safetensors `BOOL`).
    UnpackBool,
}

/// A source element type and how its bytes are carried.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mapping {
    /// The Hurray element type.
    pub element_type: ElementType,
    /// How the bytes travel.
    pub carry: Carry,
}

impl Mapping {
    fn verbatim(element_type: ElementType) -> Mapping {
        Mapping {
            element_type,
            carry: Carry::Verbatim,
        }
    }
}

/// The Hurray type of a safetensors dtype, or why there is none.
///
/// Sub-byte types (`F4`, `F6_*`) are carried byte for byte: safetensors stores them as
/// packed little-endian bit streams, element 0 in the low bits, which is Hurray's
/// packing rule (`element-types.md` §5).
pub fn from_safetensors(d: Dtype) -> Result<Mapping, String> {
    use ElementType as E;
    let t = match d {
        Dtype::BOOL => {
            return Ok(Mapping {
                element_type: E::Bool,
                carry: Carry::PackBool,
            })
        }
        Dtype::F8_E8M0 => {
            return Ok(Mapping {
                element_type: E::Float8E8m0,
                carry: Carry::CheckE8m0,
            })
        }
        Dtype::F4 => E::Float4E2m1,
        Dtype::F6_E2M3 => E::Float6E2m3,
        Dtype::F6_E3M2 => E::Float6E3m2,
        Dtype::U8 => E::Uint8,
        Dtype::I8 => E::Int8,
        Dtype::F8_E5M2 => E::Float8E5m2,
        Dtype::F8_E4M3 => E::Float8E4m3,
        Dtype::I16 => E::Int16,
        Dtype::U16 => E::Uint16,
        Dtype::F16 => E::Float16,
        Dtype::BF16 => E::Bfloat16,
        Dtype::I32 => E::Int32,
        Dtype::U32 => E::Uint32,
        Dtype::F32 => E::Float32,
        Dtype::C64 => E::Complex64,
        Dtype::F64 => E::Float64,
        Dtype::I64 => E::Int64,
        Dtype::U64 => E::Uint64,
        Dtype::F8_E4M3FNUZ | Dtype::F8_E5M2FNUZ => {
            return Err(format!(
                "safetensors dtype {d} has no Hurray element type (FNUZ float8 uses a \
                 different bias and NaN code than Hurray's OCP float8_e4m3/float8_e5m2)"
            ))
        }
        other => {
            return Err(format!(
                "safetensors dtype {other} has no Hurray element type"
            ))
        }
    };
    Ok(Mapping::verbatim(t))
}

/// The safetensors dtype of a Hurray element type, or why there is none.
pub fn to_safetensors(t: ElementType) -> Result<Dtype, String> {
    use ElementType as E;
    Ok(match t {
        E::Float16 => Dtype::F16,
        E::Bfloat16 => Dtype::BF16,
        E::Float32 => Dtype::F32,
        E::Float64 => Dtype::F64,
        E::Int8 => Dtype::I8,
        E::Uint8 => Dtype::U8,
        E::Int16 => Dtype::I16,
        E::Uint16 => Dtype::U16,
        E::Int32 => Dtype::I32,
        E::Uint32 => Dtype::U32,
        E::Int64 => Dtype::I64,
        E::Uint64 => Dtype::U64,
        E::Bool => Dtype::BOOL,
        E::Float8E4m3 => Dtype::F8_E4M3,
        E::Float8E5m2 => Dtype::F8_E5M2,
        E::Float8E8m0 => Dtype::F8_E8M0,
        E::Float4E2m1 => Dtype::F4,
        E::Float6E2m3 => Dtype::F6_E2M3,
        E::Float6E3m2 => Dtype::F6_E3M2,
        E::Complex64 => Dtype::C64,
        other => {
            return Err(format!(
                "Hurray element type {other} has no safetensors dtype"
            ))
        }
    })
}

/// The Hurray type of a NumPy type string (`'<f4'`, `'|b1'`, `'>i8'`), or why there
/// is none. Byte order `'='` means this machine's.
pub fn from_numpy(descr: &str) -> Result<Mapping, String> {
    use ElementType as E;
    let refuse = |why: &str| Err(format!("NumPy dtype {descr:?} {why}"));
    let mut chars = descr.chars();
    let (order, rest) = match chars.next() {
        Some(c @ ('<' | '>' | '|' | '=')) => (c, chars.as_str()),
        _ => ('|', descr),
    };
    let Some(kind) = rest.chars().next() else {
        return refuse("has no Hurray element type (not a plain numeric type)");
    };
    let Ok(size) = rest[kind.len_utf8()..].parse::<u8>() else {
        return refuse("has no Hurray element type (not a plain numeric type)");
    };
    let t = match (kind, size) {
        ('b', 1) => {
            return Ok(Mapping {
                element_type: E::Bool,
                carry: Carry::PackBool,
            })
        }
        ('i', 1) => E::Int8,
        ('u', 1) => E::Uint8,
        ('i', 2) => E::Int16,
        ('u', 2) => E::Uint16,
        ('i', 4) => E::Int32,
        ('u', 4) => E::Uint32,
        ('i', 8) => E::Int64,
        ('u', 8) => E::Uint64,
        ('f', 2) => E::Float16,
        ('f', 4) => E::Float32,
        ('f', 8) => E::Float64,
        ('c', 8) => E::Complex64,
        ('c', 16) => E::Complex128,
        ('f', _) => return refuse("has no Hurray element type (extended precision)"),
        ('V', _) => return refuse("is a raw void type (bfloat16 and float8 from ml_dtypes are stored so); it has no Hurray element type"),
        _ => return refuse("has no Hurray element type"),
    };
    let big = order == '>' || (order == '=' && cfg!(target_endian = "big"));
    let carry = match (big, t.storage()) {
        (true, Some(hurray_core::Storage::Bytes(w))) if w > 1 => {
            // Complex numbers swap each half.
            let half = if matches!(t, E::Complex64 | E::Complex128) {
                w / 2
            } else {
                w
            };
            Carry::SwapBytes(half as u8)
        }
        _ => Carry::Verbatim,
    };
    Ok(Mapping {
        element_type: t,
        carry,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_hurray_type_with_a_safetensors_dtype_maps_back() {
        for &t in ElementType::ALL {
            if let Ok(d) = to_safetensors(t) {
                assert_eq!(from_safetensors(d).unwrap().element_type, t, "{t}");
            }
        }
        assert!(to_safetensors(ElementType::Int4).is_err());
        assert!(to_safetensors(ElementType::Complex128).is_err());
        assert!(from_safetensors(Dtype::F8_E4M3FNUZ)
            .unwrap_err()
            .contains("FNUZ"));
    }

    #[test]
    fn numpy_type_strings() {
        let m = |s| from_numpy(s).unwrap();
        assert_eq!(m("<f4"), Mapping::verbatim(ElementType::Float32));
        assert_eq!(m("|u1"), Mapping::verbatim(ElementType::Uint8));
        assert_eq!(m("|b1").carry, Carry::PackBool);
        assert_eq!(m(">i8").carry, Carry::SwapBytes(8));
        assert_eq!(m(">c16").carry, Carry::SwapBytes(8));
        assert_eq!(m(">i1").carry, Carry::Verbatim);
        for bad in ["<U5", "|O", "<f16", "|V2", "<M8[ns]", "", "<"] {
            assert!(from_numpy(bad).is_err(), "{bad}");
        }
    }
}
