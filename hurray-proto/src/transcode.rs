//! B.9 transcoding: row-major ↔ column-major, element-preserving, under a memory cap.
//!
//! Scope (decided, see `docs/network.md`): dense tensors with one buffer, no
//! quantization section and a whole-byte element type (`Storage::Bytes`, any width:
//! 1–16 bytes and private widths). Sub-byte element types (packed 1/2/4-bit and 6-bit
//! groups) are not transcoded: an element does not own a byte, so a layout change
//! would need an unpack/repack pass per element; the server falls through to the next
//! preference or the native layout as B.9 prescribes. Rank 0 and 1 tensors have the
//! same bytes in both orders: only the tag changes, nothing is copied.

use hurray_core::{Layout, Storage, TensorDescriptor};

/// Whether [`transcode`] can turn `d` into layout tag `to` (1 or 2).
pub fn can_transcode(d: &TensorDescriptor, to: u8) -> bool {
    let from_ok = matches!(d.layout, Layout::RowMajor | Layout::ColumnMajor);
    from_ok
        && (to == 0x01 || to == 0x02)
        && d.buffers.len() == 1
        && d.quantization.is_none()
        && matches!(d.storage(), Some(Storage::Bytes(_)))
}

/// Bytes the transcoded buffer takes (element count × width); `None` when not
/// transcodable or on overflow.
pub fn transcoded_size(d: &TensorDescriptor) -> Option<u64> {
    let Some(Storage::Bytes(w)) = d.storage() else {
        return None;
    };
    hurray_core::element_count(&d.shape)
        .ok()?
        .checked_mul(u64::from(w))
}

/// Converts `data` (buffer 0 of `d`) from `d`'s layout to layout tag `to`.
/// Returns the new descriptor (layout changed, `byte_offset` 0, buffer 0's
/// `byte_size` = the element bytes) and the new bytes (64-byte aligned), or `None`
/// when the rank is ≤ 1 or the layout already is `to` (no copy needed: only the tag
/// changes) — check [`can_transcode`] first.
///
/// # Panics
/// When `data` is shorter than `byte_offset` + the element bytes (the caller passes a
/// buffer that matches its validated descriptor) or the allocation fails.
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
    let Some(Storage::Bytes(w)) = d.storage() else {
        unreachable!("checked by can_transcode")
    };
    let w = w as usize;
    let n = transcoded_size(d).expect("validated size") as usize;
    let src = &data[d.byte_offset as usize..][..n];
    // Walk the source in its own order; the same index's offset in the other order
    // is tracked incrementally. Row-major source: last dimension fastest.
    let shape: Vec<usize> = d.shape.iter().map(|&s| s as usize).collect();
    let r = shape.len();
    let (src_order, dst_strides): (Vec<usize>, Vec<usize>) = {
        let mut dst = vec![0usize; r];
        let mut acc = 1usize;
        if to == 0x02 {
            // destination column-major: dim 0 fastest
            for k in 0..r {
                dst[k] = acc;
                acc *= shape[k];
            }
            ((0..r).rev().collect(), dst)
        } else {
            for k in (0..r).rev() {
                dst[k] = acc;
                acc *= shape[k];
            }
            ((0..r).collect(), dst)
        }
    };
    let mut out_buf =
        hurray_io::AlignedBuf::zeroed(n).expect("allocation within the transcoding cap");
    let buf = out_buf.as_mut_slice();
    if n > 0 {
        let mut idx = vec![0usize; r];
        let mut dst_el = 0usize;
        for el in 0..n / w {
            buf[dst_el * w..dst_el * w + w].copy_from_slice(&src[el * w..el * w + w]);
            // increment idx in source order (src_order[0] is the fastest dim)
            for &k in &src_order {
                idx[k] += 1;
                dst_el += dst_strides[k];
                if idx[k] < shape[k] {
                    break;
                }
                dst_el -= dst_strides[k] * shape[k];
                idx[k] = 0;
            }
        }
    }
    out.byte_offset = 0;
    out.buffers[0].byte_size = n as u64;
    (out, Some(out_buf))
}
