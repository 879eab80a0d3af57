//! Where a tensor's bytes go (`file-format.md` §6.1): the descriptor at an 8-aligned
//! offset, each buffer at a multiple of `data_buffer_alignment`, zero padding
//! between, and the next descriptor at the next multiple of 8 after the last buffer.
//! Shared by the writer (to place bytes) and the readers (to find them again).

use super::align_up;

/// Offsets of a tensor's buffers relative to buffer 0, and the data length (§6.1:
/// `B(i) = align(B(i-1) + s(i-1), A)`, `data_length = Z - B0`), for buffer sizes
/// `sizes` in bytes and alignment `a`. Because `B0` is itself a multiple of `a`, the
/// relative offsets are the same wherever the data starts.
///
/// Returns `None` when the arithmetic overflows a `u64`. With no buffers the data
/// length is 0.
pub fn relative_buffer_offsets(
    sizes: impl IntoIterator<Item = u64>,
    a: u64,
) -> Option<(Vec<u64>, u64)> {
    let mut starts = Vec::new();
    let mut end = 0u64;
    for (i, s) in sizes.into_iter().enumerate() {
        let start = if i == 0 { 0 } else { align_up(end, a)? };
        starts.push(start);
        end = start.checked_add(s)?;
    }
    Some((starts, end))
}

/// The placement of one tensor written at `descriptor_offset`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorPlacement {
    /// Offset of the descriptor (a multiple of 8).
    pub descriptor_offset: u64,
    /// End of the descriptor (`E`).
    pub descriptor_end: u64,
    /// Offset of buffer 0 (`B0`) — for a head, see [`place`].
    pub data_offset: u64,
    /// Absolute offsets of the buffers, in buffer-table order.
    pub buffer_offsets: Vec<u64>,
    /// `Z - B0` in bytes (0 for heads and empty tensors).
    pub data_length: u64,
    /// Where the next descriptor or section starts: `align(Z, 8)`.
    pub next: u64,
}

/// Places a tensor whose descriptor is `descriptor_length` bytes at
/// `descriptor_offset`, with buffers of `sizes` bytes under alignment `a`.
///
/// With no buffers (a composite head) nothing is padded to `a` unless `pad_head` is
/// set (the reference writer's habit, A5): the data offset is then `align(E, a)`,
/// otherwise `E`, and the next descriptor follows at `align(E, 8)` or `align(E, a)`.
/// Returns `None` on overflow.
pub fn place(
    descriptor_offset: u64,
    descriptor_length: u64,
    sizes: impl IntoIterator<Item = u64>,
    a: u64,
    pad_head: bool,
) -> Option<TensorPlacement> {
    let e = descriptor_offset.checked_add(descriptor_length)?;
    let (rel, data_length) = relative_buffer_offsets(sizes, a)?;
    let data_offset = if rel.is_empty() && !pad_head {
        e
    } else {
        align_up(e, a)?
    };
    let buffer_offsets = rel
        .iter()
        .map(|r| data_offset.checked_add(*r))
        .collect::<Option<Vec<u64>>>()?;
    let z = data_offset.checked_add(data_length)?;
    Some(TensorPlacement {
        descriptor_offset,
        descriptor_end: e,
        data_offset,
        buffer_offsets,
        data_length,
        next: align_up(z, 8)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn basic_hrry_placement() {
        let w = place(64, 61, [16], 4096, false).unwrap();
        assert_eq!((w.data_offset, w.data_length, w.next), (4096, 16, 0x1010));
        let b = place(0x1010, 53, [3], 4096, false).unwrap();
        assert_eq!((b.data_offset, b.data_length, b.next), (0x2000, 3, 0x2008));
    }

    #[test]
    fn multi_buffer_and_empty_and_head() {
        let p = place(64, 100, [10, 0, 5], 4096, false).unwrap();
        assert_eq!(p.buffer_offsets, vec![4096, 8192, 8192]);
        assert_eq!(p.data_length, 4096 + 5);
        let e = place(64, 61, [0], 4096, false).unwrap();
        assert_eq!((e.data_offset, e.data_length, e.next), (4096, 0, 4096));
        let h = place(64, 36, [], 4096, false).unwrap();
        assert_eq!((h.data_offset, h.data_length, h.next), (100, 0, 104));
        let h = place(64, 36, [], 4096, true).unwrap();
        assert_eq!((h.data_offset, h.next), (4096, 4096));
        assert!(place(u64::MAX - 8, 20, [1], 4096, false).is_none());
    }
}
