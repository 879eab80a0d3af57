//! The tensor descriptor (`descriptor.md`): the model of one tensor's metadata and
//! its encoder and strict decoder.

use crate::buffer::BufferHandle;
use crate::element_type::ElementType;
use crate::error::{bail, ensure, DecodeError, Result};
use crate::layout::{Layout, DEFAULT_MAX_TILING_DEPTH};
use crate::quantization::{Quantization, Scheme};
use crate::sections::{ExtensionType, MemberRole, Shard, Statistics};
use crate::wire::{Put, Reader};

/// The magic bytes every descriptor starts with: `HRRY`.
pub const MAGIC: [u8; 4] = *b"HRRY";
/// Size of the fixed header in bytes (`descriptor.md` §2).
pub const HEADER_LEN: usize = 20;
/// Highest rank the format allows.
pub const MAX_RANK: usize = 64;
/// The dynamic-dimension sentinel (`descriptor.md` §4).
pub const DYN: u64 = u64::MAX;
/// The descriptor version this crate reads and writes.
pub const VERSION_MAJOR: u8 = 1;
/// See [`VERSION_MAJOR`].
pub const VERSION_MINOR: u8 = 0;

/// `flags` bits (`descriptor.md` §3).
pub mod flags {
    /// Quantization section present.
    pub const HAS_QUANTIZATION: u32 = 0x01;
    /// Shard section present.
    pub const HAS_SHARD: u32 = 0x02;
    /// Extension-type section present.
    pub const HAS_EXTENSION_TYPE: u32 = 0x04;
    /// Statistics section present.
    pub const HAS_STATISTICS: u32 = 0x08;
    /// Composite-member section present.
    pub const HAS_COMPOSITE_MEMBER: u32 = 0x10;
    /// Bits 5–31, which must be zero.
    pub const RESERVED: u32 = 0xFFFF_FFE0;
}

/// How strictly to decode (`descriptor.md` §15).
///
/// The default is strict: every MUST-reject rule applies, private tags are refused.
/// Peers that agreed on private tags out of band set `accept_private`:
///
/// ```
/// use hurray_core::{DecodeOptions, ElementType, ExtensionType, Rule, TensorDescriptor};
///
/// // A private 16-bit float: the extension-type section says how to size it.
/// let f16ish = ExtensionType {
///     bit_width: 16,
///     packing_factor: 1,
///     is_float: true,
///     sign_bits: 1,
///     exponent_bits: 5,
///     mantissa_bits: 10,
///     exponent_bias: 15,
///     ..ExtensionType::default()
/// };
/// let mut d = TensorDescriptor::dense(ElementType::Float16, &[4])?;
/// d.element_type = ElementType::Private(0xF3);
/// d.extension_type = Some(f16ish);
/// let bytes = d.encode()?;
///
/// let err = TensorDescriptor::decode(&bytes).unwrap_err();
/// assert_eq!((err.rule, err.offset), (Rule::TypeTagUnknown, 14));
/// let agreed = DecodeOptions { accept_private: true, ..DecodeOptions::default() };
/// assert_eq!(TensorDescriptor::decode_with(&bytes, &agreed)?, d);
/// # Ok::<(), hurray_core::DecodeError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DecodeOptions {
    /// Accept unknown element types, unknown quantization schemes and unagreed private
    /// tags, keeping them opaque. Data of such a tensor must never be interpreted.
    pub permissive: bool,
    /// An out-of-band agreement on private tags (element types, layouts, devices,
    /// memory classes, schemes) exists: accept them as opaque values.
    pub accept_private: bool,
    /// Maximum tiled nesting depth, counting the outermost level (default 8).
    pub max_tiling_depth: u8,
}

impl Default for DecodeOptions {
    fn default() -> Self {
        DecodeOptions {
            permissive: false,
            accept_private: false,
            max_tiling_depth: DEFAULT_MAX_TILING_DEPTH,
        }
    }
}

impl DecodeOptions {
    /// Strict decoding (the default).
    pub fn strict() -> Self {
        Self::default()
    }
    /// Permissive decoding: unknown tags are kept opaque (`descriptor.md` §15).
    pub fn permissive() -> Self {
        DecodeOptions {
            permissive: true,
            ..Self::default()
        }
    }
}

/// One tensor's descriptor: element type, shape, layout, buffer table and optional
/// sections, as typed values (`descriptor.md` §1).
///
/// Build one with [`TensorDescriptor::dense`] or a struct literal, turn it into bytes
/// with [`encode`](Self::encode) (which validates first) and back with
/// [`decode`](Self::decode).
///
/// ```
/// use hurray_core::{ElementType, TensorDescriptor};
/// let d = TensorDescriptor::dense(ElementType::Float32, &[3, 4]).unwrap();
/// let bytes = d.encode().unwrap();
/// assert_eq!(bytes.len(), 61);
/// assert_eq!(d.buffers[0].byte_size, 48);
/// assert_eq!(TensorDescriptor::decode(&bytes).unwrap(), d);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct TensorDescriptor {
    /// `version_minor` of the encoding (0 for everything this crate writes).
    pub version_minor: u8,
    /// The element (storage) type.
    pub element_type: ElementType,
    /// Dimensions, slowest-varying first; [`DYN`] marks a dynamic dimension. Length = rank (0..=64).
    pub shape: Vec<u64>,
    /// Bytes from the start of buffer 0 to element [0, …, 0].
    pub byte_offset: u64,
    /// Layout and its fields.
    pub layout: Layout,
    /// The buffer table, in wire order (layout buffers, then quantization parameters).
    pub buffers: Vec<BufferHandle>,
    /// Quantization section (flags bit 0).
    pub quantization: Option<Quantization>,
    /// Shard section (flags bit 1).
    pub shard: Option<Shard>,
    /// Statistics section (flags bit 3).
    pub statistics: Option<Statistics>,
    /// Extension-type section (flags bit 2): present exactly for private element types.
    pub extension_type: Option<ExtensionType>,
    /// Composite-member section (flags bit 4): the role of an overlay member.
    pub composite_member: Option<MemberRole>,
}

/// Reads `descriptor_length` from the first 10 bytes after checking the magic and major
/// version; enough to skip or frame a descriptor without decoding it.
///
/// Errors: [`Rule::Truncated`](crate::Rule::Truncated) with fewer than 10 bytes,
/// `Magic`, `VersionMajor`, `DescriptorLengthTooSmall`.
pub fn peek_descriptor_length(bytes: &[u8]) -> Result<u32> {
    ensure!(
        bytes.len() >= 10,
        Truncated,
        bytes.len(),
        "{} bytes cannot hold the first 10 bytes of a descriptor header",
        bytes.len()
    );
    ensure!(
        bytes[..4] == MAGIC,
        Magic,
        0,
        "magic is {:02x?}, not \"HRRY\"",
        &bytes[..4]
    );
    ensure!(
        bytes[4] == VERSION_MAJOR,
        VersionMajor,
        4,
        "version_major {} is not {VERSION_MAJOR}",
        bytes[4]
    );
    let len = u32::from_le_bytes(bytes[6..10].try_into().unwrap());
    ensure!(
        len as usize >= HEADER_LEN,
        DescriptorLengthTooSmall,
        6,
        "descriptor_length {len} < {HEADER_LEN}"
    );
    Ok(len)
}

impl TensorDescriptor {
    /// A row-major CPU tensor with one buffer of exactly the contiguous size.
    ///
    /// Errors: `SizeOverflow` when the size overflows `u64`, `DynamicDimension` when
    /// the shape holds [`DYN`], `TypeTagUnknown` for private or unknown types.
    pub fn dense(element_type: ElementType, shape: &[u64]) -> Result<TensorDescriptor> {
        let Some(storage) = element_type.storage() else {
            bail!(TypeTagUnknown, 14, "{element_type} has no built-in size");
        };
        let n = crate::shape::element_count(shape).map_err(|e| DecodeError { offset: 20, ..e })?;
        let Some(bytes) = storage.bytes_for(n) else {
            bail!(
                SizeOverflow,
                20,
                "buffer size of {n} {element_type} elements overflows u64"
            );
        };
        Ok(TensorDescriptor {
            version_minor: 0,
            element_type,
            shape: shape.to_vec(),
            byte_offset: 0,
            layout: Layout::RowMajor,
            buffers: vec![BufferHandle::cpu(bytes)],
            quantization: None,
            shard: None,
            statistics: None,
            extension_type: None,
            composite_member: None,
        })
    }

    /// The tensor's rank.
    pub fn rank(&self) -> usize {
        self.shape.len()
    }

    /// The `flags` word this descriptor encodes with (mirrors the sections present).
    pub fn flags(&self) -> u32 {
        let mut f = 0;
        if self.quantization.is_some() {
            f |= flags::HAS_QUANTIZATION;
        }
        if self.shard.is_some() {
            f |= flags::HAS_SHARD;
        }
        if self.extension_type.is_some() {
            f |= flags::HAS_EXTENSION_TYPE;
        }
        if self.statistics.is_some() {
            f |= flags::HAS_STATISTICS;
        }
        if self.composite_member.is_some() {
            f |= flags::HAS_COMPOSITE_MEMBER;
        }
        f
    }

    /// Storage of the element type (from the extension section for private types).
    pub fn storage(&self) -> Option<crate::Storage> {
        match self.element_type {
            ElementType::Private(_) => self
                .extension_type
                .as_ref()
                .and_then(ExtensionType::storage),
            t => t.storage(),
        }
    }

    /// Encoded length in bytes (`descriptor.md` §1 length identity).
    pub fn encoded_len(&self) -> usize {
        let r = self.rank();
        let mut n =
            HEADER_LEN + 8 * r + 8 + self.layout.encoded_len() + 1 + 16 * self.buffers.len();
        if let Some(q) = &self.quantization {
            n += q.encoded_len();
        }
        if self.shard.is_some() {
            n += 16 * r;
        }
        if self.statistics.is_some() {
            n += Statistics::LEN;
        }
        if self.extension_type.is_some() {
            n += ExtensionType::LEN;
        }
        if self.composite_member.is_some() {
            n += MemberRole::SECTION_LEN;
        }
        n
    }

    /// Validates the descriptor and appends its encoding to `out`.
    ///
    /// Errors: the same [`DecodeError`]s strict decoding would report for these bytes,
    /// with offsets into the encoding; nothing is appended on error.
    pub fn encode_into(&self, out: &mut Vec<u8>) -> Result<()> {
        self.validate()?;
        self.write_unchecked(out);
        Ok(())
    }

    /// Validates the descriptor and returns its encoding (owned bytes).
    ///
    /// Errors: see [`encode_into`](Self::encode_into).
    pub fn encode(&self) -> Result<Vec<u8>> {
        let mut out = Vec::with_capacity(self.encoded_len());
        self.encode_into(&mut out)?;
        Ok(out)
    }

    /// Checks every rule of the spec that this model can break (strict mode, private
    /// tags allowed since a writer holding them has its own agreement).
    pub fn validate(&self) -> Result<()> {
        ensure!(
            self.rank() <= MAX_RANK,
            RankTooLarge,
            16,
            "rank {} > {MAX_RANK}",
            self.rank()
        );
        ensure!(
            self.buffers.len() <= 255,
            BufferCount,
            28 + 8 * self.rank() + self.layout.encoded_len(),
            "{} buffers exceed the 255 a descriptor can hold",
            self.buffers.len()
        );
        let opts = DecodeOptions {
            accept_private: true,
            ..DecodeOptions::default()
        };
        let handles_at = HEADER_LEN + 8 * self.rank() + 8 + self.layout.encoded_len() + 1;
        for (i, b) in self.buffers.iter().enumerate() {
            b.check(handles_at + 16 * i, true)?;
        }
        if let Some(s) = &self.statistics {
            s.check(self.section_offsets().statistics)?;
        }
        if let Some(e) = &self.extension_type {
            e.check(self.section_offsets().extension_type)?;
        }
        match self.element_type {
            ElementType::Unknown(t) => bail!(
                TypeTagUnknown,
                14,
                "unknown type_tag {t:#04x} cannot be written"
            ),
            ElementType::Private(t @ (0x00 | 0xFF)) => {
                bail!(TypeTagInvalid, 14, "type_tag {t:#04x} is invalid")
            }
            ElementType::Private(t) if !(0xF0..=0xFE).contains(&t) => bail!(
                TypeTagUnknown,
                14,
                "private type_tag {t:#04x} is outside 0xF0..=0xFE"
            ),
            _ => {}
        }
        if let Some(Quantization {
            scheme: Scheme::Opaque { scheme_tag: t, .. },
            ..
        }) = &self.quantization
        {
            let at = self.section_offsets().quantization + 4;
            match t {
                0xF0..=0xFE => {}
                0x00 | 0xFF | 0x01..=0x05 => bail!(
                    QuantizationHeader,
                    at,
                    "scheme_tag {t:#04x} is invalid or has its own Scheme variant"
                ),
                _ => bail!(
                    QuantizationSchemeUnknown,
                    at,
                    "unknown scheme_tag {t:#04x} cannot be written"
                ),
            }
        }
        crate::validate::check(self, &opts)
    }

    fn write_unchecked(&self, out: &mut Vec<u8>) {
        let len = self.encoded_len();
        out.reserve(len);
        let start = out.len();
        out.extend_from_slice(&MAGIC);
        out.put_u8(VERSION_MAJOR);
        out.put_u8(self.version_minor);
        out.put_u32(len as u32);
        out.put_u32(self.flags());
        out.put_u8(self.element_type.tag());
        out.put_u8(self.layout.tag());
        out.put_u32(self.rank() as u32);
        self.shape.iter().for_each(|&d| out.put_u64(d));
        out.put_u64(self.byte_offset);
        self.layout.write(out);
        out.put_u8(self.buffers.len() as u8);
        self.buffers.iter().for_each(|b| b.write(out));
        if let Some(q) = &self.quantization {
            q.write(out);
        }
        if let Some(s) = &self.shard {
            s.write(out);
        }
        if let Some(s) = &self.statistics {
            s.write(out);
        }
        if let Some(e) = &self.extension_type {
            e.write(out);
        }
        if let Some(m) = self.composite_member {
            m.write(out);
        }
        debug_assert_eq!(out.len() - start, len);
    }

    /// Decodes a descriptor that fills `bytes` exactly, in strict mode.
    ///
    /// Errors: a [`DecodeError`] naming the broken rule and the byte offset; input
    /// after `descriptor_length` is `TrailingInput`.
    #[inline]
    pub fn decode(bytes: &[u8]) -> Result<TensorDescriptor> {
        Self::decode_with(bytes, &DecodeOptions::default())
    }

    /// Like [`decode`](Self::decode) with explicit options.
    pub fn decode_with(bytes: &[u8], opts: &DecodeOptions) -> Result<TensorDescriptor> {
        Self::parse(bytes, opts, true)
    }

    /// Decodes the descriptor at the start of `bytes` (which may continue with other
    /// data) and returns it with its length in bytes.
    ///
    /// Errors: see [`decode`](Self::decode); `DescriptorLengthBeyondInput` when
    /// `bytes` is shorter than `descriptor_length`.
    ///
    /// ```
    /// use hurray_core::{DecodeOptions, ElementType, TensorDescriptor};
    ///
    /// let a = TensorDescriptor::dense(ElementType::Int8, &[5])?;
    /// let b = TensorDescriptor::dense(ElementType::Float64, &[2, 2])?;
    /// let mut stream = a.encode()?;
    /// b.encode_into(&mut stream)?;
    ///
    /// let opts = DecodeOptions::default();
    /// let (first, used) = TensorDescriptor::decode_prefix(&stream, &opts)?;
    /// let (second, _) = TensorDescriptor::decode_prefix(&stream[used..], &opts)?;
    /// assert_eq!((first, second), (a, b));
    /// # Ok::<(), hurray_core::DecodeError>(())
    /// ```
    pub fn decode_prefix(bytes: &[u8], opts: &DecodeOptions) -> Result<(TensorDescriptor, usize)> {
        let d = Self::parse(bytes, opts, false)?;
        // Cannot fail: parse has read the same header.
        let len = peek_descriptor_length(bytes)? as usize;
        Ok((d, len))
    }

    /// The decoder. With `whole`, input after `descriptor_length` is an error,
    /// reported after the descriptor itself was found valid. Returning the
    /// descriptor alone (not with its length) saves moving it between callers.
    fn parse(bytes: &[u8], opts: &DecodeOptions, whole: bool) -> Result<TensorDescriptor> {
        let len = peek_descriptor_length(bytes)? as usize;
        ensure!(
            len <= bytes.len(),
            DescriptorLengthBeyondInput,
            6,
            "descriptor_length {len} exceeds the {} bytes available",
            bytes.len()
        );
        let mut r = Reader::new(&bytes[..len], 5);
        let version_minor = r.u8("version_minor")?;
        r.take(4, "descriptor_length")?;
        let fl = r.u32("flags")?;
        ensure!(
            fl & flags::RESERVED == 0,
            ReservedFlags,
            10,
            "reserved flag bits set: {:#010x}",
            fl & flags::RESERVED
        );
        let type_tag = r.u8("type_tag")?;
        let element_type = match ElementType::from_tag(type_tag) {
            _ if type_tag == 0 || type_tag == 0xFF => {
                bail!(TypeTagInvalid, 14, "type_tag {type_tag:#04x} is invalid")
            }
            Some(ElementType::Private(t)) if !opts.accept_private && !opts.permissive => {
                bail!(
                    TypeTagUnknown,
                    14,
                    "private type_tag {t:#04x} without an out-of-band agreement"
                )
            }
            Some(t) => t,
            None if opts.permissive => ElementType::Unknown(type_tag),
            None => bail!(
                TypeTagUnknown,
                14,
                "type_tag {type_tag:#04x} is not assigned"
            ),
        };
        let layout_tag = r.u8("layout_tag")?;
        let rank = r.u32("rank")?;
        ensure!(
            rank as usize <= MAX_RANK,
            RankTooLarge,
            16,
            "rank {rank} > {MAX_RANK}"
        );
        let rank = rank as usize;
        let shape = r.u64s(rank, "shape")?;
        let byte_offset = r.u64("byte_offset")?;
        let layout = Layout::read(&mut r, layout_tag, rank, opts)?;
        let count = r.u8("buffer_count")? as usize;
        let mut buffers = Vec::with_capacity(count);
        for _ in 0..count {
            buffers.push(BufferHandle::read(
                &mut r,
                opts.accept_private || opts.permissive,
            )?);
        }
        let quantization = if fl & flags::HAS_QUANTIZATION != 0 {
            Some(Quantization::read(&mut r, opts)?)
        } else {
            None
        };
        let shard = if fl & flags::HAS_SHARD != 0 {
            Some(Shard::read(&mut r, rank)?)
        } else {
            None
        };
        let statistics = if fl & flags::HAS_STATISTICS != 0 {
            Some(Statistics::read(&mut r)?)
        } else {
            None
        };
        let extension_type = if fl & flags::HAS_EXTENSION_TYPE != 0 {
            Some(ExtensionType::read(&mut r)?)
        } else {
            None
        };
        let composite_member = if fl & flags::HAS_COMPOSITE_MEMBER != 0 {
            Some(MemberRole::read(&mut r)?)
        } else {
            None
        };
        if r.remaining() != 0 {
            // A later minor version may append fields; ours may not (§14 #6, A12).
            ensure!(
                version_minor > VERSION_MINOR,
                TrailingBytes,
                r.pos(),
                "{} bytes remain after the last section",
                r.remaining()
            );
        }
        let d = TensorDescriptor {
            version_minor,
            element_type,
            shape,
            byte_offset,
            layout,
            buffers,
            quantization,
            shard,
            statistics,
            extension_type,
            composite_member,
        };
        crate::validate::check(&d, opts)?;
        ensure!(
            !whole || len == bytes.len(),
            TrailingInput,
            len,
            "{} bytes follow the {len}-byte descriptor",
            bytes.len() - len
        );
        Ok(d)
    }

    /// Byte offsets of the optional sections in this descriptor's encoding (those not
    /// present hold the offset they would have).
    pub(crate) fn section_offsets(&self) -> SectionOffsets {
        let r = self.rank();
        let handles = HEADER_LEN + 8 * r + 8 + self.layout.encoded_len() + 1;
        let quantization = handles + 16 * self.buffers.len();
        let shard = quantization
            + self
                .quantization
                .as_ref()
                .map_or(0, Quantization::encoded_len);
        let statistics = shard + if self.shard.is_some() { 16 * r } else { 0 };
        let extension_type = statistics
            + if self.statistics.is_some() {
                Statistics::LEN
            } else {
                0
            };
        SectionOffsets {
            handles,
            quantization,
            shard,
            statistics,
            extension_type,
        }
    }
}

/// Where each section starts in an encoding (see [`TensorDescriptor::section_offsets`]).
pub(crate) struct SectionOffsets {
    pub handles: usize,
    pub quantization: usize,
    pub shard: usize,
    pub statistics: usize,
    pub extension_type: usize,
}
