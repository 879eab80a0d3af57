//! The 40-byte trailer at the end of every file (`file-format.md` §9, §10).

use super::header::reserved_zero;
use super::{flags, TRAILER_LEN, TRAILER_MAGIC};
use crate::error::{Error, FormatRule, Result};

/// The decoded trailer. Offsets and lengths are absolute byte offsets / byte counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Trailer {
    /// Offset of the index section (a multiple of 8).
    pub index_offset: u64,
    /// Length of the index section in bytes.
    pub index_length: u64,
    /// Offset of the KV section, 0 when there is none.
    pub kv_offset: u64,
    /// Length of the KV section in bytes (excluding the padding after it), 0 when none.
    pub kv_length: u32,
    /// CRC-32C (Castagnoli) of the index bytes when `HAS_INDEX_CRC32C` is set, else 0.
    pub index_crc32c: u32,
}

/// True when `last4` (a file's last 4 bytes, not `HRRY`) looks like the end of a
/// file cut short rather than a damaged trailer magic: no byte of the magic is in
/// its place (data, padding or a descriptor end the file), or the file ends with the
/// first 1 to 3 bytes of the magic (cut inside it). A damaged magic keeps most of
/// its bytes in place.
fn looks_cut(last4: &[u8]) -> bool {
    let none_in_place = last4.iter().zip(TRAILER_MAGIC).all(|(a, b)| *a != b);
    let cut_inside = (1..4).any(|k| last4[4 - k..] == TRAILER_MAGIC[..k]);
    none_in_place || cut_inside
}

impl Trailer {
    /// The 40 trailer bytes.
    pub fn encode(&self) -> [u8; TRAILER_LEN] {
        let mut b = [0u8; TRAILER_LEN];
        b[0..8].copy_from_slice(&self.index_offset.to_le_bytes());
        b[8..16].copy_from_slice(&self.index_length.to_le_bytes());
        b[16..24].copy_from_slice(&self.kv_offset.to_le_bytes());
        b[24..28].copy_from_slice(&self.kv_length.to_le_bytes());
        b[28..32].copy_from_slice(&self.index_crc32c.to_le_bytes());
        b[36..40].copy_from_slice(&TRAILER_MAGIC);
        b
    }

    /// Parses the trailer in `bytes` (exactly 40 bytes, found at absolute offset `at`)
    /// against the header's `file_flags`: trailer magic first (§11 step 3), then the
    /// reserved bytes, the CRC field when the flag is clear (§14 item 8), and the
    /// consistency of the KV fields with `HAS_KV_METADATA` (item 29).
    ///
    /// Errors: `Truncated` unless 40 bytes; `Truncated` at `at + 40` (the end of the
    /// file) when the last 4 bytes look like a file cut short (no byte of `HRRY` in
    /// its place, or ending with `H`, `HR` or `HRR`), else `Magic` at `at + 36` (a
    /// damaged magic); `ReservedNonZero` at
    /// `at + 32..36`, `CrcWithoutFlag` at `at + 28`, `KvPresence` at `at + 16`.
    pub fn parse(bytes: &[u8], at: u64, file_flags: u32) -> Result<Trailer> {
        if bytes.len() != TRAILER_LEN {
            return Err(Error::format(
                FormatRule::Truncated,
                at,
                format_args!("the trailer needs 40 bytes, found {}", bytes.len()),
            ));
        }
        if bytes[36..40] != TRAILER_MAGIC {
            let end = at + TRAILER_LEN as u64;
            if looks_cut(&bytes[36..40]) {
                return Err(Error::format(
                    FormatRule::Truncated,
                    end,
                    format_args!(
                        "the file ends at byte {end} without its trailer (last 4 bytes \
                         {:02x?}, not the trailer magic \"HRRY\"): it was cut short",
                        &bytes[36..40]
                    ),
                ));
            }
            return Err(Error::format(
                FormatRule::Magic,
                at + 36,
                format_args!("trailer magic is {:02x?}, not \"HRRY\"", &bytes[36..40]),
            ));
        }
        reserved_zero(&bytes[32..36], at + 32, "trailer _reserved")?;
        let u64_at = |i: usize| u64::from_le_bytes(bytes[i..i + 8].try_into().expect("8 bytes"));
        let u32_at = |i: usize| u32::from_le_bytes(bytes[i..i + 4].try_into().expect("4 bytes"));
        let t = Trailer {
            index_offset: u64_at(0),
            index_length: u64_at(8),
            kv_offset: u64_at(16),
            kv_length: u32_at(24),
            index_crc32c: u32_at(28),
        };
        if file_flags & flags::HAS_INDEX_CRC32C == 0 && t.index_crc32c != 0 {
            return Err(Error::format(
                FormatRule::CrcWithoutFlag,
                at + 28,
                format_args!(
                    "index_crc32c is {:#010x} but HAS_INDEX_CRC32C is clear",
                    t.index_crc32c
                ),
            ));
        }
        let kv_flag = file_flags & flags::HAS_KV_METADATA != 0;
        match (t.kv_offset, t.kv_length) {
            (0, 0) if kv_flag => Err(Error::format(
                FormatRule::KvPresence,
                at + 16,
                "HAS_KV_METADATA is set but kv_offset and kv_length are 0",
            )),
            (0, 0) => Ok(t),
            (0, _) | (_, 0) => Err(Error::format(
                FormatRule::KvPresence,
                at + 16,
                format_args!(
                    "kv_offset {} and kv_length {} must both be 0 or both be non-zero",
                    t.kv_offset, t.kv_length
                ),
            )),
            _ => Ok(t),
        }
    }

    /// The KV section as `(offset, length)` in bytes, when present (A2: the flag or
    /// both trailer fields non-zero; [`parse`](Self::parse) rejects the other cases).
    pub fn kv(&self) -> Option<(u64, u32)> {
        (self.kv_offset != 0 && self.kv_length != 0).then_some((self.kv_offset, self.kv_length))
    }
}

/// CRC-32C (Castagnoli) of `bytes` (§10).
pub fn crc32c(bytes: &[u8]) -> u32 {
    crc32c::crc32c(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc_check_value() {
        assert_eq!(crc32c(b"123456789"), 0xE306_9283);
    }

    #[test]
    fn trailer_round_trips() {
        let t = Trailer {
            index_offset: 8264,
            index_length: 87,
            kv_offset: 8200,
            kv_length: 60,
            index_crc32c: 0x5134_9F72,
        };
        let b = t.encode();
        assert_eq!(Trailer::parse(&b, 0, flags::HAS_INDEX_CRC32C).unwrap(), t);
        assert_eq!(
            Trailer::parse(&b, 100, 0).unwrap_err().rule(),
            Some(FormatRule::CrcWithoutFlag)
        );
    }
}
