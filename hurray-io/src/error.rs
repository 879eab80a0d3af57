//! Errors of the containers. Every error about the input names the rule and the
//! absolute byte offset (in the stream or file) where it was found.

use hurray_core::DecodeError;
use std::fmt;

/// A container rule that input broke (`file-format.md` §14, `streams-and-transport.md`
/// Part A, composite rules of `layouts.md` §2.11).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FormatRule {
    /// Input ended inside a descriptor, a buffer, or a section.
    Truncated,
    /// File magic is not `HRRYFILE`, or trailer magic not `HRRY`.
    Magic,
    /// Unsupported container major version.
    ContainerVersion,
    /// A reserved byte or field is not zero.
    ReservedNonZero,
    /// A reserved `file_flags` bit is set.
    ReservedFlags,
    /// `data_buffer_alignment` is not a power of two in 4096..=2 MiB.
    DataAlignment,
    /// A section or tensor offset breaks its placement rule (alignment, padding, order).
    Placement,
    /// An offset or length points outside the file, into the trailer, or overflows.
    OutOfBounds,
    /// Two tensors' bytes, or sections, overlap.
    Overlap,
    /// The index CRC-32C does not match.
    CrcMismatch,
    /// `index_crc32c` is non-zero while `HAS_INDEX_CRC32C` is clear.
    CrcWithoutFlag,
    /// An index entry disagrees with the descriptor it points at.
    IndexEntry,
    /// Two tensors share a name.
    DuplicateName,
    /// Two KV entries share a key.
    DuplicateKey,
    /// A name or key is empty or not UTF-8, or a string value is not UTF-8.
    Utf8,
    /// A KV value tag is reserved or unknown.
    KvValueTag,
    /// A KV bool value is not 0 or 1.
    KvBool,
    /// `SORTED_INDEX` is set but the index is not sorted.
    SortedIndex,
    /// A configured limit was exceeded.
    Limit,
    /// A composite ended before all its members arrived.
    TornComposite,
    /// Composites nested deeper than the limit.
    CompositeDepth,
    /// A composite member breaks a per-member or close-time rule.
    CompositeMember,
    /// A buffer's sync mode is not allowed on this transport (cross-machine needs 0).
    SyncMode,
    /// Supplied buffers do not match the descriptor's buffer table.
    BufferMismatch,
    /// A file section's entries do not fill its declared length exactly: a field runs
    /// past the end of the section, or bytes follow its last entry
    /// (`file-format.md` §14 item 20).
    SectionLength,
    /// `HAS_KV_METADATA` and the trailer's KV fields disagree, or exactly one of
    /// `kv_offset` / `kv_length` is zero (`file-format.md` §14 item 29, A2).
    KvPresence,
    /// A tensor's data does not match the CRC-32C recorded for it in the
    /// `hurray.data_crc32c` KV entry ([`file::data_crc`](crate::file::data_crc)).
    DataCrcMismatch,
    /// The `hurray.data_crc32c` KV entry is not an array of uint64 with one value per
    /// tensor, so the data cannot be checked against it
    /// ([`file::data_crc`](crate::file::data_crc)).
    DataCrcEntry,
    /// A KV key reserved by this library (`hurray.data_crc32c`) was given as user
    /// metadata; the writer records it itself when asked to
    /// ([`file::data_crc`](crate::file::data_crc)).
    ReservedKey,
    /// A file's `tensor_count_hint` disagrees with the tensors actually present
    /// (sequential reading, `file-format.md` §14 item 30; or a writer told a count).
    TensorCountHint,
}

/// Errors of this crate.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The underlying reader or writer failed.
    #[error("I/O error: {0}")]
    Io(#[from] std::io::Error),
    /// A descriptor did not decode; `at` is the descriptor's first byte in the input.
    #[error("descriptor at byte {at}: {source}")]
    Descriptor {
        /// Absolute offset of the descriptor.
        at: u64,
        /// The descriptor error (its `offset` is relative to the descriptor).
        #[source]
        source: DecodeError,
    },
    /// A tensor's buffer bytes broke a content rule (`layouts.md` §2.6–§2.10,
    /// `quantization.md` §9 items 14–15): sparse indices, pointer arrays, block
    /// tables, scales, zero points. `at` is the absolute byte offset of the offending
    /// entry in the stream or file when the tensor was read from one; for a tensor
    /// built from memory it is the offset inside the buffer (`source.offset`).
    #[error("buffer content at byte {at}: {source}")]
    Content {
        /// Absolute offset of the offending entry (see above).
        at: u64,
        /// The rule, the buffer and the offset inside it.
        #[source]
        source: hurray_core::content::ContentError,
    },
    /// The container broke a rule.
    #[error("{rule:?} at byte {offset}: {detail}")]
    Format {
        /// The rule.
        rule: FormatRule,
        /// Absolute byte offset in the stream or file.
        offset: u64,
        /// What was found.
        detail: String,
    },
}

impl Error {
    /// A [`Error::Format`].
    pub fn format(rule: FormatRule, offset: u64, detail: impl fmt::Display) -> Error {
        Error::Format {
            rule,
            offset,
            detail: detail.to_string(),
        }
    }

    /// The container rule, if this is a format error.
    pub fn rule(&self) -> Option<FormatRule> {
        match self {
            Error::Format { rule, .. } => Some(*rule),
            _ => None,
        }
    }

    /// True for a truncation (input ended early), in any form.
    pub fn is_truncation(&self) -> bool {
        match self {
            Error::Format {
                rule: FormatRule::Truncated | FormatRule::TornComposite,
                ..
            } => true,
            Error::Io(e) => e.kind() == std::io::ErrorKind::UnexpectedEof,
            _ => false,
        }
    }
}

/// Shorthand for results of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;
