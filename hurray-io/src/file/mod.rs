//! The HRRYFILE container (`file-format.md`): a 64-byte header, the tensor region
//! (descriptor, zero padding, buffers per tensor), an optional KV metadata section,
//! the index and a 40-byte trailer whose CRC-32C covers the index.
//!
//! One module per job:
//!
//! - [`header`], [`trailer`], [`kv`], [`index`]: encoders and strict parsers of each
//!   section over byte slices (sans-io);
//! - [`kv_table`], [`index_table`]: the compact form a random-access reader keeps of
//!   a validated KV section and index (a few bytes per entry), with borrowed views
//!   that decode entries and values from the file's bytes when read;
//! - [`placement`]: the §6.1 arithmetic that puts buffers at `data_buffer_alignment`;
//! - [`encoder`]: the single-pass writer core, which yields the [`Piece`]s to write;
//! - [`catalog`]: the random-access reader core, which validates a whole file held as
//!   one byte slice and records where every tensor lies;
//! - [`writer`]: blocking writers ([`FileWriter`] to a path, atomically; [`FileWriterTo`]
//!   over any `std::io::Write`);
//! - [`data_crc`]: the optional per-tensor data CRC-32C (a reserved KV entry);
//! - [`commit`]: [`PendingFile`], how every path writer puts its finished file in
//!   place (temporary file, `fsync`, rename, directory `fsync`);
//! - [`reader`]: [`FileReader`], random access over an in-memory file or a private
//!   memory map, handing out zero-copy [`Tensor`](crate::Tensor) views;
//! - [`sequential`]: [`SequentialReader`], the optional non-seeking mode of §12 over
//!   any `std::io::Read`;
//! - `async_io` (feature `tokio`): [`AsyncFileWriter`], [`AsyncFileWriterTo`] and
//!   [`read_file_async`], thin layers over the same cores.
//!
//! Every reader treats the file as untrusted: each offset and length is checked with
//! checked arithmetic against the file size and [`Limits`](crate::Limits) before it is
//! used to slice or allocate. Errors name the rule ([`FormatRule`](crate::FormatRule))
//! and the absolute byte offset of the field (or byte) that broke it.
//!
//! # Readings adopted where the spec is ambiguous (`file-format.md` §16)
//!
//! - A1: writers pad after a tensor's last buffer only to the next multiple of 8;
//!   the random-access reader relies on index offsets only, so it also reads files
//!   padded to `data_buffer_alignment` there.
//! - A2: KV is present when `HAS_KV_METADATA` is set or both trailer KV fields are
//!   non-zero. The default writer sets the bit only when KV entries were added before
//!   its header was emitted (the header goes out with the first tensor, or at
//!   `finish`); in reference-compatible mode it never sets it, like `basic.hrry`.
//! - A4: the flag governs CRC checking; a stored CRC of 0 is verified like any other.
//! - A5: the default writer puts no `data_buffer_alignment` padding after a composite
//!   head and records its `data_offset` as the end of its descriptor; the
//!   reference-compatible writer pads heads like the reference writer does. Readers
//!   ignore a head's `data_offset`.
//! - A6: an empty tensor's buffers are still placed at `data_buffer_alignment`.
//! - A8: composite nesting is limited by [`Limits::max_composite_depth`](crate::Limits)
//!   (8 by default), and the members of one composite by
//!   [`Limits::max_composite_members`](crate::Limits) (65 536), checked at the head.
//! - Partition members (`layouts.md` A-G6): the overlap predicate is applied
//!   literally, so a zero-volume member strictly inside another is an overlap (see
//!   [`composite`](crate::composite)).
//! - A10: files with zero tensors are accepted and written.
//! - A12, A13: reserved bytes must be zero and index names unique (strict).
//! - A14: empty KV arrays are read and written, with an explicit element tag.
//! - Beyond the checklist, the random-access reader requires the lowest descriptor at
//!   `first_descriptor_offset`, each tensor's data at exactly `align(end of
//!   descriptor, data_buffer_alignment)` (§6.1), and no two descriptors, data ranges
//!   or sections overlapping.

pub mod catalog;
pub mod commit;
mod cursor;
pub mod data_crc;
pub mod encoder;
pub mod header;
pub mod index;
pub mod index_table;
pub mod kv;
pub mod kv_table;
pub mod placement;
pub mod reader;
pub mod sequential;
pub mod trailer;
mod window;
pub mod writer;

#[cfg(feature = "tokio")]
pub mod async_io;

pub use catalog::{Catalog, CrcStatus, FileInfo, ReadOptions};
pub use commit::PendingFile;
pub use encoder::{FileEncoder, Piece, WriteOptions};
pub use header::FileHeader;
pub use index::IndexEntry;
pub use index_table::{Index, IndexEntryRef, IndexIter};
pub use kv::{KvArray, KvEntry, KvValue};
pub use kv_table::{Kv, KvArrayIter, KvArrayRef, KvEntryRef, KvIter, KvValueRef};
pub use reader::FileReader;
pub use sequential::{FileContents, SequentialReader};
pub use trailer::Trailer;
pub use writer::{FileWriter, FileWriterTo};

#[cfg(feature = "tokio")]
pub use async_io::{read_file_async, AsyncFileWriter, AsyncFileWriterTo};

/// The file magic, bytes 0–7: ASCII `HRRYFILE` (§2).
pub const FILE_MAGIC: [u8; 8] = *b"HRRYFILE";
/// The trailer magic, the last 4 bytes of a file: ASCII `HRRY` (§2).
pub const TRAILER_MAGIC: [u8; 4] = *b"HRRY";
/// Size of the file header in bytes (§3).
pub const HEADER_LEN: usize = 64;
/// Size of the trailer in bytes (§9).
pub const TRAILER_LEN: usize = 40;
/// The smallest structurally possible file, header plus trailer, in bytes (§1).
pub const MIN_FILE_LEN: u64 = (HEADER_LEN + TRAILER_LEN) as u64;
/// The container major version this crate reads and writes (§5).
pub const VERSION_MAJOR: u8 = 1;
/// The container minor version this crate writes; files of a higher minor are read
/// as far as this reader knows them (§5).
pub const VERSION_MINOR: u8 = 0;
/// Smallest legal `data_buffer_alignment`, in bytes (§2).
pub const MIN_DATA_ALIGNMENT: u32 = 4096;
/// Largest legal `data_buffer_alignment`, in bytes (2 MiB, §2).
pub const MAX_DATA_ALIGNMENT: u32 = 2 * 1024 * 1024;
/// The `tensor_count_hint` sentinel meaning "count unknown" (§3).
pub const COUNT_UNKNOWN: u64 = u64::MAX;
/// Longest tensor name or KV key, in bytes (u16 length prefix; at least 1, §2).
pub const MAX_NAME_LEN: usize = u16::MAX as usize;

/// `file_flags` bits (§4).
pub mod flags {
    /// Bit 0: a KV metadata section is present.
    pub const HAS_KV_METADATA: u32 = 0x1;
    /// Bit 1: index entries are strictly ascending by name bytes.
    pub const SORTED_INDEX: u32 = 0x2;
    /// Bit 2: the trailer's `index_crc32c` holds the CRC-32C of the index section.
    pub const HAS_INDEX_CRC32C: u32 = 0x4;
    /// Bits 3–31, which must be zero.
    pub const RESERVED: u32 = 0xFFFF_FFF8;
}

/// `align(x, a)`: the smallest multiple of `a` (a power of two) that is `>= x`, or
/// `None` when it does not fit in a `u64`.
pub fn align_up(x: u64, a: u64) -> Option<u64> {
    debug_assert!(a.is_power_of_two());
    Some(x.checked_add(a - 1)? & !(a - 1))
}

/// True when `a` is a legal `data_buffer_alignment`: a power of two in
/// [`MIN_DATA_ALIGNMENT`]`..=`[`MAX_DATA_ALIGNMENT`] (§2).
pub fn valid_data_alignment(a: u32) -> bool {
    a.is_power_of_two() && (MIN_DATA_ALIGNMENT..=MAX_DATA_ALIGNMENT).contains(&a)
}
