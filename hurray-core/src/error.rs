//! Decode and validation errors: every error names the rule it enforces and the
//! byte offset (from the first byte of the descriptor) of the field that broke it.

use std::borrow::Cow;
use std::fmt;

/// The rule a descriptor broke. Each variant maps to a MUST (or strict-mode MUST)
/// of the specification; [`Rule::spec`] gives the section it comes from.
///
/// Variants are stable: programs may match on them. New rules may be added, so the
/// enum is `#[non_exhaustive]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Rule {
    /// Fewer bytes are available than a field or section needs.
    Truncated,
    /// A section would run past `descriptor_length`.
    BeyondDescriptorLength,
    /// `magic` is not `HRRY`.
    Magic,
    /// `version_major` is not 1.
    VersionMajor,
    /// `descriptor_length` < 20.
    DescriptorLengthTooSmall,
    /// `descriptor_length` is larger than the input holds.
    DescriptorLengthBeyondInput,
    /// The parsed sections end before `descriptor_length` at a minor version the
    /// reader knows.
    TrailingBytes,
    /// Input continues after the descriptor where a whole-input decode was asked for.
    TrailingInput,
    /// A reserved `flags` bit (5–31) is set.
    ReservedFlags,
    /// `type_tag` is `0x00` or `0xFF`.
    TypeTagInvalid,
    /// `type_tag` is unassigned, or private without an out-of-band agreement.
    TypeTagUnknown,
    /// `HAS_EXTENSION_TYPE` is set but `type_tag` is not private, or the reverse.
    ExtensionTypeFlag,
    /// `layout_tag` is `0x00` or `0xFF`.
    LayoutTagInvalid,
    /// `layout_tag` is not a layout this reader implements.
    LayoutTagUnknown,
    /// `rank` > 64.
    RankTooLarge,
    /// The rank is outside what the layout allows (scalar only row-major, CSR rank 2, ...).
    RankForLayout,
    /// A `_reserved` byte is not zero.
    ReservedNonZero,
    /// A layout-specific field holds a value the layout forbids.
    LayoutField,
    /// Tiled nesting deeper than the configured limit.
    TilingDepth,
    /// A private layout whose `extension_layout_id` is not agreed.
    ExtensionLayoutUnknown,
    /// Composite head: bad `composition_rule`, `combine_op` or `member_count`.
    CompositeHead,
    /// Composite head with buffers, a non-zero `byte_offset`, quantization or a member section.
    CompositeHeadOwnsData,
    /// `buffer_count` is not what the layout and quantization scheme require.
    BufferCount,
    /// `byte_offset` breaks the layout's rule.
    ByteOffset,
    /// A buffer is smaller than the layout needs.
    BufferTooSmall,
    /// `alignment` is not a power of two, or < 64 on a non-empty buffer.
    Alignment,
    /// `device_tag` is `0xFF`, reserved, or private without an agreement.
    DeviceTag,
    /// `sync_mode` is not 0, 1 or 2.
    SyncMode,
    /// A CPU buffer with `sync_mode` ≠ 0, or a cross-machine handle with ≠ 0.
    SyncModeForTransport,
    /// `memory_class` is reserved, invalid, or private on a public device.
    MemoryClass,
    /// The (`device_tag`, `memory_class`) pair is not in the validity table.
    DeviceMemoryClass,
    /// Buffers of one descriptor differ in `device_tag` or `memory_class`.
    Colocation,
    /// A shape dimension or size product overflows 64 bits, or a size cannot be computed.
    SizeOverflow,
    /// A dynamic dimension where a static size is required.
    DynamicDimension,
    /// Quantization section framing or header invalid (length, scheme tag, version, flags).
    QuantizationHeader,
    /// Quantization `scheme_tag` unknown (strict mode).
    QuantizationSchemeUnknown,
    /// The storage `type_tag` is not allowed by the quantization scheme.
    QuantizationStorageType,
    /// A quantization payload field is invalid (axis, block size, scale, zero point, scale type).
    QuantizationField,
    /// A parameter buffer index is out of range or names a layout buffer.
    QuantizationBufferIndex,
    /// A parameter buffer's `byte_size` is not exactly what the scheme needs.
    QuantizationBufferSize,
    /// Shard: `shard_offset[k] + shape[k] > parent_shape[k]`.
    ShardBounds,
    /// Shard section on a layout that forbids it (block-paged, CSF), or containing a dynamic dimension.
    ShardForbidden,
    /// Statistics `computed_mask` sets bits 6–31.
    StatisticsMask,
    /// Extension-type section invalid (bit width, packing, float/integer fields).
    ExtensionType,
    /// Composite-member section invalid (`member_role` or reserved bytes), or on a head.
    CompositeMember,
}

impl Rule {
    /// The spec section (in `shared/spec/`) the rule comes from.
    pub fn spec(self) -> &'static str {
        use Rule::*;
        match self {
            Truncated | BeyondDescriptorLength | TrailingBytes | TrailingInput => {
                "descriptor.md §1, §14 #1/#6"
            }
            Magic | VersionMajor | DescriptorLengthTooSmall | DescriptorLengthBeyondInput => {
                "descriptor.md §2"
            }
            ReservedFlags => "descriptor.md §3",
            TypeTagInvalid | TypeTagUnknown => "element-types.md §1, descriptor.md §14 #8/#9",
            ExtensionTypeFlag | ExtensionType => "descriptor.md §11",
            LayoutTagInvalid | LayoutTagUnknown | ExtensionLayoutUnknown => "layouts.md §1.1",
            RankTooLarge | DynamicDimension => "descriptor.md §4",
            RankForLayout | LayoutField | TilingDepth | ReservedNonZero => "layouts.md §2",
            CompositeHead | CompositeHeadOwnsData => "layouts.md §2.11",
            BufferCount => "descriptor.md §6, quantization.md §6",
            ByteOffset => "descriptor.md §5",
            BufferTooSmall => "layouts.md §5, descriptor.md §13",
            Alignment => "descriptor.md §6.1",
            DeviceTag => "descriptor.md §6.2",
            SyncMode | SyncModeForTransport => "descriptor.md §6.3",
            MemoryClass | DeviceMemoryClass => "descriptor.md §6.4",
            Colocation => "descriptor.md §6.5",
            SizeOverflow => "descriptor.md §13",
            QuantizationHeader | QuantizationSchemeUnknown => "quantization.md §2–§5",
            QuantizationStorageType | QuantizationField => "quantization.md §8",
            QuantizationBufferIndex | QuantizationBufferSize => "quantization.md §6",
            ShardBounds | ShardForbidden => "descriptor.md §9",
            StatisticsMask => "descriptor.md §10",
            CompositeMember => "descriptor.md §12",
        }
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

/// A descriptor that is not valid: which rule, where, and a human explanation.
///
/// `offset` counts bytes from the first byte of the descriptor (the `H` of the magic)
/// and points at the field that broke the rule. For errors found while encoding a
/// model, it is the offset the field would have in the encoding.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("invalid descriptor: {rule} at byte {offset}: {detail} ({})", rule.spec())]
pub struct DecodeError {
    /// The rule that was broken.
    pub rule: Rule,
    /// Byte offset of the offending field from the start of the descriptor.
    pub offset: usize,
    /// What was found, in words.
    pub detail: Cow<'static, str>,
}

impl DecodeError {
    pub(crate) fn new(rule: Rule, offset: usize, detail: impl Into<Cow<'static, str>>) -> Self {
        DecodeError {
            rule,
            offset,
            detail: detail.into(),
        }
    }

    /// Builds the error of a failed check. Cold and out of line, so the formatting
    /// code stays off the hot path and the checking functions stay small enough to
    /// inline.
    #[cold]
    #[inline(never)]
    pub(crate) fn fail(rule: Rule, offset: usize, detail: fmt::Arguments<'_>) -> Self {
        DecodeError::new(rule, offset, fmt::format(detail))
    }
}

/// Shorthand for results of this crate.
pub type Result<T, E = DecodeError> = std::result::Result<T, E>;

/// Returns `Err(DecodeError)` built from the arguments (the detail is formatted only
/// on failure, in a cold function).
macro_rules! bail {
    ($rule:ident, $off:expr, $($fmt:tt)+) => {
        return Err($crate::error::DecodeError::fail(
            $crate::error::Rule::$rule,
            $off,
            format_args!($($fmt)+),
        ))
    };
}

/// `ensure!(cond, Rule, offset, "fmt", args)`: fails with that rule unless `cond` holds.
macro_rules! ensure {
    ($cond:expr, $rule:ident, $off:expr, $($fmt:tt)+) => {
        if !$cond { bail!($rule, $off, $($fmt)+); }
    };
}

pub(crate) use {bail, ensure};
