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
    #[inline]
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
        self.check_all()?;
        self.write_unchecked(out, self.encoded_len());
        Ok(())
    }

    /// Validates the descriptor and returns its encoding (owned bytes).
    ///
    /// Errors: see [`encode_into`](Self::encode_into).
    pub fn encode(&self) -> Result<Vec<u8>> {
        self.check_all()?;
        let len = self.encoded_len();
        let mut out = Vec::with_capacity(len);
        self.write_unchecked(&mut out, len);
        Ok(out)
    }

    /// Checks every rule of the spec that this model can break (strict mode, private
    /// tags allowed since a writer holding them has its own agreement).
    pub fn validate(&self) -> Result<()> {
        self.check_all()
    }

    /// [`validate`](Self::validate), inlined into the encoders.
    #[inline(always)]
    fn check_all(&self) -> Result<()> {
        let rank = self.rank();
        ensure!(
            rank <= MAX_RANK,
            RankTooLarge,
            16,
            "rank {rank} > {MAX_RANK}"
        );
        // Where the buffer table starts: only an error message needs it.
        let handles_at = || HEADER_LEN + 8 * rank + 8 + self.layout.encoded_len() + 1;
        ensure!(
            self.buffers.len() <= 255,
            BufferCount,
            handles_at() - 1,
            "{} buffers exceed the 255 a descriptor can hold",
            self.buffers.len()
        );
        for (i, b) in self.buffers.iter().enumerate() {
            if !b.is_plain_cpu() {
                b.check(handles_at() + 16 * i, true)?;
            }
        }
        if let Some(s) = &self.statistics {
            s.check(self.section_offsets().statistics)?;
        }
        if let Some(e) = &self.extension_type {
            e.check(self.section_offsets().extension_type)?;
        }
        match self.element_type {
            ElementType::Unknown(_) | ElementType::Private(_) => self.check_type_tag()?,
            _ => {}
        }
        if let Some(Quantization {
            scheme: Scheme::Opaque { scheme_tag, .. },
            ..
        }) = &self.quantization
        {
            self.check_scheme_tag(*scheme_tag)?;
        }
        let opts = DecodeOptions {
            accept_private: true,
            ..DecodeOptions::default()
        };
        crate::validate::check(self, &opts)
    }

    /// The `type_tag` rules for unknown and private element types (writing).
    #[inline(never)]
    fn check_type_tag(&self) -> Result<()> {
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
            _ => Ok(()),
        }
    }

    /// The `scheme_tag` rules for an opaque quantization scheme (writing).
    #[inline(never)]
    fn check_scheme_tag(&self, t: u8) -> Result<()> {
        let at = self.section_offsets().quantization + 4;
        match t {
            0xF0..=0xFE => Ok(()),
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

    /// Appends the encoding (`len` bytes, the [`encoded_len`](Self::encoded_len)) of
    /// a valid descriptor.
    #[inline(always)]
    fn write_unchecked(&self, out: &mut Vec<u8>, len: usize) {
        out.reserve(len);
        let start = out.len();
        let mut head = [0; HEADER_LEN];
        head[..4].copy_from_slice(&MAGIC);
        head[4] = VERSION_MAJOR;
        head[5] = self.version_minor;
        head[6..10].copy_from_slice(&(len as u32).to_le_bytes());
        head[10..14].copy_from_slice(&self.flags().to_le_bytes());
        head[14] = self.element_type.tag();
        head[15] = self.layout.tag();
        head[16..20].copy_from_slice(&(self.rank() as u32).to_le_bytes());
        out.extend_from_slice(&head);
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
        // Built in place, like `parse` does.
        let mut out = Ok((Self::blank(), 0));
        if let Ok((d, used)) = &mut out {
            match Self::parse_into(d, bytes, opts, false) {
                Ok(len) => *used = len,
                Err(e) => out = Err(e),
            }
        }
        out
    }

    /// The decoder. With `whole`, input after `descriptor_length` is an error,
    /// reported after the descriptor itself was found valid. Returning the
    /// descriptor alone (not with its length) saves moving it between callers.
    fn parse(bytes: &[u8], opts: &DecodeOptions, whole: bool) -> Result<TensorDescriptor> {
        // `out` is the value returned on every path, so the descriptor is filled in
        // where the caller wants it, never moved (it is over 300 bytes).
        let mut out = Ok(Self::blank());
        if let Ok(d) = &mut out {
            if let Err(e) = Self::parse_into(d, bytes, opts, whole) {
                out = Err(e);
            }
        }
        out
    }

    /// The descriptor [`parse_into`](Self::parse_into) starts from: no parts, nothing
    /// allocated.
    #[inline]
    fn blank() -> TensorDescriptor {
        TensorDescriptor {
            version_minor: 0,
            element_type: ElementType::Float32,
            shape: Vec::new(),
            byte_offset: 0,
            layout: Layout::RowMajor,
            buffers: Vec::new(),
            quantization: None,
            shard: None,
            statistics: None,
            extension_type: None,
            composite_member: None,
        }
    }

    /// [`parse`](Self::parse) into a blank descriptor, field by field. Returns the
    /// descriptor's length in bytes.
    fn parse_into(
        d: &mut TensorDescriptor,
        bytes: &[u8],
        opts: &DecodeOptions,
        whole: bool,
    ) -> Result<usize> {
        let len = peek_descriptor_length(bytes)? as usize;
        ensure!(
            len <= bytes.len(),
            DescriptorLengthBeyondInput,
            6,
            "descriptor_length {len} exceeds the {} bytes available",
            bytes.len()
        );
        let buf = &bytes[..len];
        // The peek checked descriptor_length >= 20: the fixed header is all there.
        let Some(h) = buf.first_chunk::<HEADER_LEN>() else {
            bail!(
                DescriptorLengthTooSmall,
                6,
                "descriptor_length {len} < {HEADER_LEN}"
            );
        };
        let version_minor = h[5];
        let fl = u32::from_le_bytes([h[10], h[11], h[12], h[13]]);
        ensure!(
            fl & flags::RESERVED == 0,
            ReservedFlags,
            10,
            "reserved flag bits set: {:#010x}",
            fl & flags::RESERVED
        );
        let type_tag = h[14];
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
        let layout_tag = h[15];
        let rank = u32::from_le_bytes([h[16], h[17], h[18], h[19]]);
        ensure!(
            rank as usize <= MAX_RANK,
            RankTooLarge,
            16,
            "rank {rank} > {MAX_RANK}"
        );
        let rank = rank as usize;
        d.version_minor = version_minor;
        d.element_type = element_type;
        let mut r = Reader::new(buf, HEADER_LEN);
        // The larger parts are read straight into their fields.
        r.u64s_into(rank, "shape", &mut d.shape)?;
        d.byte_offset = r.u64("byte_offset")?;
        Layout::read(&mut r, layout_tag, rank, opts, &mut d.layout)?;
        let count = r.u8("buffer_count")? as usize;
        let agreed = opts.accept_private || opts.permissive;
        BufferHandle::read_table(&mut r, count, agreed, &mut d.buffers)?;
        if fl & flags::HAS_QUANTIZATION != 0 {
            Quantization::read(&mut r, opts, &mut d.quantization)?;
        }
        if fl & flags::HAS_SHARD != 0 {
            d.shard = Some(Shard::read(&mut r, rank)?);
        }
        if fl & flags::HAS_STATISTICS != 0 {
            d.statistics = Some(Statistics::read(&mut r)?);
        }
        if fl & flags::HAS_EXTENSION_TYPE != 0 {
            d.extension_type = Some(ExtensionType::read(&mut r)?);
        }
        if fl & flags::HAS_COMPOSITE_MEMBER != 0 {
            d.composite_member = Some(MemberRole::read(&mut r)?);
        }
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
        crate::validate::check(d, opts)?;
        ensure!(
            !whole || len == bytes.len(),
            TrailingInput,
            len,
            "{} bytes follow the {len}-byte descriptor",
            bytes.len() - len
        );
        Ok(len)
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
