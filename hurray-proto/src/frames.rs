//! B.11: the response sequence's frame rules, for senders (splitting) and receivers
//! (checking).

use crate::error::{ProtoError, Result};

/// Splits `total` data bytes into frames for a peer whose `max_message_size` is
/// `peer_max` (B.17: `8 + len ≤ peer_max`), also capped at `local_cap` bytes per frame
/// (the sender's own choice; pass `u64::MAX` for none). Yields `(offset, len)` pairs,
/// ascending, without gaps; none for `total = 0`.
///
/// Errors: `MESSAGE_TOO_LARGE` when `peer_max ≤ 8` and `total > 0` (no frame can carry a
/// byte), or `local_cap = 0`.
pub fn split_frames(total: u64, peer_max: u32, local_cap: u64) -> Result<FramePlan> {
    let per = u64::from(peer_max).saturating_sub(8).min(local_cap);
    if per == 0 && total > 0 {
        return Err(ProtoError::new(
            crate::ErrorCode::MessageTooLarge,
            format!("B.17: the peer's max_message_size {peer_max} leaves no room for data in a TENSOR_DATA frame"),
        ));
    }
    Ok(FramePlan {
        next: 0,
        total,
        per,
    })
}

/// Iterator of `(offset, len)` frames; see [`split_frames`].
#[derive(Clone, Debug)]
pub struct FramePlan {
    next: u64,
    total: u64,
    per: u64,
}

impl Iterator for FramePlan {
    type Item = (u64, u64);
    fn next(&mut self) -> Option<(u64, u64)> {
        if self.next >= self.total {
            return None;
        }
        let len = self.per.min(self.total - self.next);
        let at = self.next;
        self.next += len;
        Some((at, len))
    }
}

/// Receiving side of the B.11 frame rules for one tensor or shard.
///
/// Reading of "strictly ascending, no gaps, no overlaps": every frame starts exactly
/// where the previous one ended (the first at 0) and carries at least one byte (a
/// zero-length frame would repeat the next frame's offset, so it is not strictly
/// ascending); the lengths never pass `total_data_bytes` and add up to it by
/// `TENSOR_DATA_END`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FrameChecker {
    total: u64,
    next: u64,
}

impl FrameChecker {
    /// Expects `total_data_bytes = total`.
    pub fn new(total: u64) -> FrameChecker {
        FrameChecker { total, next: 0 }
    }

    /// Bytes received so far (= the offset the next frame must have).
    pub fn received(&self) -> u64 {
        self.next
    }

    /// `total_data_bytes`.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// Checks a frame of `len` bytes at `offset`.
    ///
    /// Errors: `INVALID_MESSAGE` for an empty frame, an offset other than the end of
    /// the previous frame (gap, overlap or out of order), or a frame passing
    /// `total_data_bytes`.
    pub fn frame(&mut self, offset: u64, len: u64) -> Result<()> {
        if len == 0 {
            return Err(ProtoError::invalid(format!(
                "B.11: empty TENSOR_DATA frame at offset {offset}"
            )));
        }
        if offset != self.next {
            return Err(ProtoError::invalid(format!(
                "B.11: TENSOR_DATA at byte_offset_in_buffer {offset}, expected {} ({})",
                self.next,
                if offset > self.next {
                    "gap"
                } else {
                    "overlap or out of order"
                }
            )));
        }
        match offset.checked_add(len) {
            Some(end) if end <= self.total => {
                self.next = end;
                Ok(())
            }
            _ => Err(ProtoError::invalid(format!(
                "B.11: TENSOR_DATA [{offset}, +{len}) runs past total_data_bytes {}",
                self.total
            ))),
        }
    }

    /// Checks at `TENSOR_DATA_END` that every byte arrived.
    ///
    /// Errors: `INVALID_MESSAGE` when the frames add up to less than `total_data_bytes`.
    pub fn end(&self) -> Result<()> {
        if self.next != self.total {
            return Err(ProtoError::invalid(format!(
                "B.11: TENSOR_DATA_END after {} of total_data_bytes {}",
                self.next, self.total
            )));
        }
        Ok(())
    }
}
