//! Rules on tensor *data* that `element-types.md` states and that container readers
//! do not check (they never look at payload bytes):
//!
//! - `float8_e8m0` bytes `0x00` and `0xFF` are reserved and make the descriptor
//!   invalid (§3, A4);
//! - the unused high bits of the last byte of a 1/2/4-bit tensor, and of the last
//!   3-byte group of a 6-bit tensor, must be 0 (§5).
//!
//! Both are checked on contiguous dense tensors (row- and column-major), the layouts
//! where every stored element is data.

use crate::error::{Error, Result};
use hurray_core::{element_count, ElementType, Layout, Storage, TensorDescriptor};

/// Checks buffer 0 of `d` (`bytes`, whose first byte is at absolute offset `at`).
///
/// Errors: `ReservedValue` and `Padding`, at the absolute offset of the first
/// offending byte.
pub fn check(d: &TensorDescriptor, bytes: &[u8], at: u64) -> Result<()> {
    if !matches!(d.layout, Layout::RowMajor | Layout::ColumnMajor) {
        return Ok(());
    }
    let (Some(storage), Ok(n)) = (d.element_type.storage(), element_count(&d.shape)) else {
        return Ok(());
    };
    let Some(size) = storage.bytes_for(n) else {
        return Ok(());
    };
    let start = usize::try_from(d.byte_offset).unwrap_or(usize::MAX);
    let Some(data) = usize::try_from(size)
        .ok()
        .and_then(|size| bytes.get(start..start.checked_add(size)?))
    else {
        return Ok(());
    };
    let at = at + d.byte_offset;
    if d.element_type == ElementType::Float8E8m0 {
        if let Some(i) = data.iter().position(|&b| b == 0x00 || b == 0xFF) {
            return Err(Error::format(
                "ReservedValue",
                at + i as u64,
                format_args!(
                    "float8_e8m0 code {:#04x} is reserved (element-types.md §3, A4)",
                    data[i]
                ),
            ));
        }
    }
    if matches!(storage, Storage::Packed { .. } | Storage::SixBit) {
        // Bits [n * bits, size * 8) of the data must be zero.
        let used = u128::from(n) * u128::from(storage.bits());
        let first = (used / 8) as usize;
        for (i, &b) in data.iter().enumerate().skip(first) {
            let keep = if i == first { (used % 8) as u32 } else { 0 };
            if b >> keep != 0 {
                return Err(Error::format(
                    "Padding",
                    at + i as u64,
                    format_args!(
                        "the padding bits after the last {} element are not zero (byte {b:#04x}; element-types.md §5)",
                        d.element_type
                    ),
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(t: ElementType, shape: &[u64]) -> TensorDescriptor {
        TensorDescriptor::dense(t, shape).unwrap()
    }

    #[test]
    fn padding_bits_must_be_zero() {
        assert!(check(&d(ElementType::Bool, &[5]), &[0x1F], 0).is_ok());
        let e = check(&d(ElementType::Bool, &[5]), &[0x3F], 10).unwrap_err();
        assert!(e.to_string().starts_with("Padding at byte 10"), "{e}");
        assert!(check(&d(ElementType::Uint4, &[3]), &[0xC5, 0x03], 0).is_ok());
        assert!(check(&d(ElementType::Uint4, &[3]), &[0xC5, 0x13], 0).is_err());
        // 6-bit [5]: two groups, elements 5..8 of the second group must be zero.
        let ok = [0x7F, 0xA0, 0x56, 0x07, 0x00, 0x00];
        assert!(check(&d(ElementType::Float6E2m3, &[5]), &ok, 0).is_ok());
        let bad = [0x7F, 0xA0, 0x56, 0x47, 0x00, 0x00];
        assert!(check(&d(ElementType::Float6E2m3, &[5]), &bad, 0).is_err());
    }

    #[test]
    fn e8m0_reserved_codes() {
        assert!(check(&d(ElementType::Float8E8m0, &[2]), &[1, 0xFE], 0).is_ok());
        let e = check(&d(ElementType::Float8E8m0, &[2]), &[1, 0xFF], 100).unwrap_err();
        assert!(
            e.to_string().starts_with("ReservedValue at byte 101"),
            "{e}"
        );
    }
}
