//! B.9 transcoding: row-major ↔ column-major, element-preserving, under a memory cap.
//!
//! Scope (decided, see `docs/network.md`): dense tensors with one buffer and no
//! quantization section, of any built-in element type:
//!
//! - whole-byte types (`Storage::Bytes`, 1–16 bytes): elements are moved as byte
//!   groups;
//! - sub-byte types (bool, int4/uint4, int2/uint2, fp4, fp6: `Storage::Packed` and
//!   `SixBit`): the buffer is unpacked to one byte per element with
//!   [`hurray_core::packing::unpack`], permuted, and packed again with
//!   [`hurray_core::packing::pack`] (padding bits zero). Element values, including
//!   their raw codes, are preserved.
//!
//! Private element types (no known width) are not transcoded. Rank 0 and 1 tensors
//! have the same bytes in both orders: only the tag changes, nothing is copied.
//!
//! The memory cap counts every buffer a transcode materialises at once
//! ([`transcode_cost`]): the output for whole-byte types; for sub-byte types the
//! unpacked copy, its permutation and the packed output.

use hurray_core::packing;
use hurray_core::{Layout, Storage, TensorDescriptor};

/// Whether [`transcode`] can turn `d` into layout tag `to` (1 or 2).
pub fn can_transcode(d: &TensorDescriptor, to: u8) -> bool {
    let from_ok = matches!(d.layout, Layout::RowMajor | Layout::ColumnMajor);
    from_ok
        && (to == 0x01 || to == 0x02)
        && d.buffers.len() == 1
        && d.quantization.is_none()
        && d.storage().is_some()
        && d.extension_type.is_none()
}

/// Bytes of the transcoded buffer (the contiguous size of the elements); `None` when
/// the type has no known size or on overflow.
pub fn transcoded_size(d: &TensorDescriptor) -> Option<u64> {
    d.storage()?
        .bytes_for(hurray_core::element_count(&d.shape).ok()?)
}

/// Bytes a transcode of `d` materialises at its peak (what the cap is compared with);
/// `None` as for [`transcoded_size`].
pub fn transcode_cost(d: &TensorDescriptor) -> Option<u64> {
    let out = transcoded_size(d)?;
    match d.storage()? {
        Storage::Bytes(_) => Some(out),
        _ => hurray_core::element_count(&d.shape)
            .ok()?
            .checked_mul(2)?
            .checked_add(out),
    }
}

/// Converts `data` (buffer 0 of `d`) from `d`'s layout to layout tag `to`.
/// Returns the new descriptor (layout changed, `byte_offset` 0, buffer 0's
/// `byte_size` = the contiguous element bytes) and the new bytes (64-byte aligned),
/// or `None` when the rank is ≤ 1 or the layout already is `to` (no copy needed: only
/// the tag changes) — check [`can_transcode`] first.
///
/// # Panics
/// When `data` is shorter than `byte_offset` + the element bytes (the caller passes a
/// buffer that matches its validated descriptor), `d` is not transcodable, or the
/// allocation fails.
pub fn transcode(
    d: &TensorDescriptor,
    data: &[u8],
    to: u8,
) -> (TensorDescriptor, Option<hurray_io::AlignedBuf>) {
    let mut out = d.clone();
    out.layout = if to == 0x01 {
        Layout::RowMajor
    } else {
        Layout::ColumnMajor
    };
    if d.layout.tag() == to || d.shape.len() <= 1 {
        return (out, None);
    }
    let storage = d.storage().expect("checked by can_transcode");
    let count = hurray_core::element_count(&d.shape).expect("validated shape");
    let n = transcoded_size(d).expect("validated size") as usize;
    let src = &data[d.byte_offset as usize..][..n];
    let mut out_buf = hurray_io::AlignedBuf::zeroed(n).expect("allocation within the cap");
    match storage {
        Storage::Bytes(w) => permute(&d.shape, src, out_buf.as_mut_slice(), w as usize, to),
        _ => {
            let unpacked =
                packing::unpack(d.element_type, src, count).expect("a sub-byte built-in type");
            let mut moved = vec![0u8; unpacked.len()];
            permute(&d.shape, &unpacked, &mut moved, 1, to);
            let packed = packing::pack(d.element_type, &moved).expect("codes from unpack");
            out_buf.as_mut_slice().copy_from_slice(&packed);
        }
    }
    out.byte_offset = 0;
    out.buffers[0].byte_size = n as u64;
    (out, Some(out_buf))
}

/// Moves `w`-byte elements of `shape` from the other order into order `to`.
fn permute(shape: &[u64], src: &[u8], dst: &mut [u8], w: usize, to: u8) {
    let shape: Vec<usize> = shape.iter().map(|&s| s as usize).collect();
    let r = shape.len();
    let elements = src.len() / w;
    if elements == 0 {
        return;
    }
    // Destination strides (in elements) and the order in which the source is walked
    // (fastest dimension first): the source is in the other order.
    let mut strides = vec![0usize; r];
    let mut acc = 1usize;
    let walk: Vec<usize> = if to == 0x02 {
        for (k, s) in strides.iter_mut().enumerate() {
            *s = acc;
            acc *= shape[k];
        }
        (0..r).rev().collect()
    } else {
        for k in (0..r).rev() {
            strides[k] = acc;
            acc *= shape[k];
        }
        (0..r).collect()
    };
    let mut idx = vec![0usize; r];
    let mut at = 0usize;
    for el in 0..elements {
        dst[at * w..at * w + w].copy_from_slice(&src[el * w..el * w + w]);
        for &k in &walk {
            idx[k] += 1;
            at += strides[k];
            if idx[k] < shape[k] {
                break;
            }
            at -= strides[k] * shape[k];
            idx[k] = 0;
        }
    }
}
