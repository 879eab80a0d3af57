//! The 64-byte file header (`file-format.md` §3–§5).

use super::{
    flags, valid_data_alignment, COUNT_UNKNOWN, FILE_MAGIC, HEADER_LEN, VERSION_MAJOR,
    VERSION_MINOR,
};
use crate::error::{Error, FormatRule, Result};

/// The decoded file header. Build one for writing with [`FileHeader::new`]; every
/// field is public so tests can forge odd headers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileHeader {
    /// `container_version_major` (byte 8); 1 for every file this crate reads.
    pub version_major: u8,
    /// `container_version_minor` (byte 9).
    pub version_minor: u8,
    /// `file_flags` (bytes 12–15), see [`flags`].
    pub flags: u32,
    /// `data_buffer_alignment` in bytes (bytes 16–19): a power of two in 4096..=2 MiB.
    pub data_buffer_alignment: u32,
    /// Absolute offset of the first descriptor in bytes (bytes 20–27): ≥ 64, a
    /// multiple of 8.
    pub first_descriptor_offset: u64,
    /// `tensor_count_hint` (bytes 28–35): the tensor count when the writer knew it,
    /// else [`COUNT_UNKNOWN`]. Advisory only.
    pub tensor_count_hint: u64,
}

impl FileHeader {
    /// A version-1.0 header with the given flags and alignment, the first descriptor
    /// at byte 64 and the count unknown.
    pub fn new(flags: u32, data_buffer_alignment: u32) -> FileHeader {
        FileHeader {
            version_major: VERSION_MAJOR,
            version_minor: VERSION_MINOR,
            flags,
            data_buffer_alignment,
            first_descriptor_offset: HEADER_LEN as u64,
            tensor_count_hint: COUNT_UNKNOWN,
        }
    }

    /// The 64 header bytes (reserved bytes zero). Encodes the fields as they are,
    /// without validating them.
    pub fn encode(&self) -> [u8; HEADER_LEN] {
        let mut b = [0u8; HEADER_LEN];
        b[0..8].copy_from_slice(&FILE_MAGIC);
        b[8] = self.version_major;
        b[9] = self.version_minor;
        b[12..16].copy_from_slice(&self.flags.to_le_bytes());
        b[16..20].copy_from_slice(&self.data_buffer_alignment.to_le_bytes());
        b[20..28].copy_from_slice(&self.first_descriptor_offset.to_le_bytes());
        b[28..36].copy_from_slice(&self.tensor_count_hint.to_le_bytes());
        b
    }

    /// Parses and validates the header at the start of `bytes` (§11 step 1), in this
    /// order: magic, major version, reserved bytes 10–11, reserved flag bits,
    /// `data_buffer_alignment`, `first_descriptor_offset`, reserved bytes 36–63.
    ///
    /// Errors (offsets are absolute): `Truncated` (fewer than 64 bytes), `Magic` at 0,
    /// `ContainerVersion` at 8, `ReservedNonZero` at the first non-zero reserved byte,
    /// `ReservedFlags` at 12, `DataAlignment` at 16, `Placement` at 20.
    pub fn parse(bytes: &[u8]) -> Result<FileHeader> {
        if bytes.len() < HEADER_LEN {
            return Err(Error::format(
                FormatRule::Truncated,
                bytes.len() as u64,
                format_args!("{} bytes cannot hold the 64-byte file header", bytes.len()),
            ));
        }
        let b = &bytes[..HEADER_LEN];
        if b[0..8] != FILE_MAGIC {
            return Err(Error::format(
                FormatRule::Magic,
                0,
                format_args!("file magic is {:02x?}, not \"HRRYFILE\"", &b[0..8]),
            ));
        }
        if b[8] != VERSION_MAJOR {
            return Err(Error::format(
                FormatRule::ContainerVersion,
                8,
                format_args!(
                    "container major version {} is not supported (only {VERSION_MAJOR})",
                    b[8]
                ),
            ));
        }
        reserved_zero(&b[10..12], 10, "header _reserved")?;
        let u32_at = |i: usize| u32::from_le_bytes(b[i..i + 4].try_into().expect("4 bytes"));
        let u64_at = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().expect("8 bytes"));
        let file_flags = u32_at(12);
        if file_flags & flags::RESERVED != 0 {
            return Err(Error::format(
                FormatRule::ReservedFlags,
                12,
                format_args!(
                    "reserved file_flags bits set: {:#010x}",
                    file_flags & flags::RESERVED
                ),
            ));
        }
        let data_buffer_alignment = u32_at(16);
        if !valid_data_alignment(data_buffer_alignment) {
            return Err(Error::format(
                FormatRule::DataAlignment,
                16,
                format_args!(
                    "data_buffer_alignment {data_buffer_alignment} is not a power of two in 4096..=2097152"
                ),
            ));
        }
        let first_descriptor_offset = u64_at(20);
        if first_descriptor_offset < HEADER_LEN as u64 || first_descriptor_offset % 8 != 0 {
            return Err(Error::format(
                FormatRule::Placement,
                20,
                format_args!(
                    "first_descriptor_offset {first_descriptor_offset} is below 64 or not a multiple of 8"
                ),
            ));
        }
        reserved_zero(&b[36..64], 36, "header _reserved_header")?;
        Ok(FileHeader {
            version_major: b[8],
            version_minor: b[9],
            flags: file_flags,
            data_buffer_alignment,
            first_descriptor_offset,
            tensor_count_hint: u64_at(28),
        })
    }

    /// The count hint, or `None` for the "unknown" sentinel.
    pub fn count_hint(&self) -> Option<u64> {
        (self.tensor_count_hint != COUNT_UNKNOWN).then_some(self.tensor_count_hint)
    }

    /// True when `flag` (one of [`flags`]) is set.
    pub fn has(&self, flag: u32) -> bool {
        self.flags & flag != 0
    }
}

/// Fails with `ReservedNonZero` at the first non-zero byte of `bytes` (which start at
/// absolute offset `at`).
pub(crate) fn reserved_zero(bytes: &[u8], at: u64, what: &str) -> Result<()> {
    match bytes.iter().position(|&b| b != 0) {
        None => Ok(()),
        Some(i) => Err(Error::format(
            FormatRule::ReservedNonZero,
            at + i as u64,
            format_args!("{what} byte {i} is {:#04x}, not 0", bytes[i]),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_round_trips_and_rejects_in_order() {
        let h = FileHeader::new(flags::HAS_INDEX_CRC32C, 4096);
        let b = h.encode();
        assert_eq!(FileHeader::parse(&b).unwrap(), h);
        let rule_at = |b: &[u8]| {
            let e = FileHeader::parse(b).unwrap_err();
            match e {
                Error::Format { rule, offset, .. } => (rule, offset),
                _ => unreachable!(),
            }
        };
        let mut x = b;
        x[9] = 7; // a newer minor is fine
        assert!(FileHeader::parse(&x).is_ok());
        x[8] = 0;
        assert_eq!(rule_at(&x), (FormatRule::ContainerVersion, 8));
        let mut x = b;
        x[63] = 1;
        assert_eq!(rule_at(&x), (FormatRule::ReservedNonZero, 63));
        let mut x = b;
        x[16..20].copy_from_slice(&8192u32.to_le_bytes());
        assert!(FileHeader::parse(&x).is_ok());
        x[16..20].copy_from_slice(&(4u32 << 20).to_le_bytes());
        assert_eq!(rule_at(&x), (FormatRule::DataAlignment, 16));
        assert_eq!(rule_at(&b[..63]), (FormatRule::Truncated, 63));
    }
}
