//! Shape arithmetic (`descriptor.md` §4): element counts with dynamic dimensions and
//! overflow handled as errors, never wrapped.

use crate::descriptor::DYN;
use crate::error::{bail, Result};

/// `N = Π shape[k]` (1 for a scalar, 0 when any dimension is 0).
///
/// Errors: `DynamicDimension` when any dimension is [`DYN`] (even if another is 0:
/// the count is undefined), `SizeOverflow` when the product exceeds `u64`. The error
/// offset is the shape's first byte (20) plus 8 per dimension.
///
/// ```
/// use hurray_core::element_count;
/// assert_eq!(element_count(&[3, 0, 5]).unwrap(), 0);
/// assert_eq!(element_count(&[]).unwrap(), 1);
/// assert!(element_count(&[u64::MAX, 2]).is_err());
/// ```
pub fn element_count(shape: &[u64]) -> Result<u64> {
    if let Some(k) = shape.iter().position(|&d| d == DYN) {
        bail!(
            DynamicDimension,
            20 + 8 * k,
            "shape[{k}] is dynamic, so the element count is undefined"
        );
    }
    let mut n: u64 = 1;
    for (k, &d) in shape.iter().enumerate() {
        match n.checked_mul(d) {
            Some(v) => n = v,
            None if shape.contains(&0) => return Ok(0),
            None => bail!(
                SizeOverflow,
                20 + 8 * k,
                "element count overflows u64 at shape[{k}]"
            ),
        }
    }
    Ok(n)
}

/// Whether any dimension is dynamic.
pub fn has_dynamic(shape: &[u64]) -> bool {
    shape.contains(&DYN)
}
