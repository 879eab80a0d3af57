//! The quantization section (`quantization.md`): the length-prefixed payload, its
//! 4-byte common header, the five assigned schemes, and the checks of the payload
//! against the rest of the descriptor (§9 reader checklist, items 1–13).

use crate::descriptor::TensorDescriptor;
use crate::element_type::ElementType;
use crate::error::{bail, ensure, Result};
use crate::wire::{Put, Reader};

/// `zero_point_buffer_index` value meaning "no zero-point buffer".
pub const NO_BUFFER: u32 = 0xFFFF_FFFF;

/// Element type of a per-channel or per-block scale array.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ScaleType {
    /// `0x01` IEEE binary16 (2 bytes).
    F16,
    /// `0x02` bfloat16 (2 bytes).
    Bf16,
    /// `0x03` IEEE binary32 (4 bytes).
    F32,
}

impl ScaleType {
    /// The `scale_type_tag` byte.
    pub fn tag(self) -> u8 {
        match self {
            ScaleType::F16 => 1,
            ScaleType::Bf16 => 2,
            ScaleType::F32 => 3,
        }
    }
    /// Bytes per scale.
    pub fn width(self) -> u64 {
        match self {
            ScaleType::F16 | ScaleType::Bf16 => 2,
            ScaleType::F32 => 4,
        }
    }
    fn from_tag(t: u8) -> Option<ScaleType> {
        match t {
            1 => Some(ScaleType::F16),
            2 => Some(ScaleType::Bf16),
            3 => Some(ScaleType::F32),
            _ => None,
        }
    }
}

/// A quantization scheme with its payload fields (`quantization.md` §8).
///
/// Zero-point indices are `Option`s: `None` is the wire value `NONE` and means the
/// scheme is symmetric (the `SYMMETRIC` flag is derived from it).
#[derive(Clone, Debug, PartialEq)]
pub enum Scheme {
    /// `0x01` per-tensor affine: `x = (q - zero_point) * scale`.
    PerTensor {
        /// Finite, non-zero scale.
        scale: f32,
        /// Zero point within the storage type's range (0 when symmetric).
        zero_point: i32,
    },
    /// `0x02` per-channel affine along `axis`; f32 scales (and i32 zero points) in buffers.
    PerChannel {
        /// Channel axis, `< rank`.
        axis: u32,
        /// Buffer holding `shape[axis]` scales.
        scale_buffer_index: u32,
        /// Buffer holding `shape[axis]` i32 zero points; `None` = symmetric.
        zero_point_buffer_index: Option<u32>,
        /// Scale element type (only f32 in version 1).
        scale_type: ScaleType,
    },
    /// `0x03` per-block affine: blocks of `block_size` along `axis`.
    PerBlock {
        /// Blocked axis, `< rank`.
        axis: u32,
        /// Elements per block: a power of two ≥ 2.
        block_size: u32,
        /// Buffer holding one scale per block.
        scale_buffer_index: u32,
        /// Buffer holding one i32 zero point per block; `None` = symmetric.
        zero_point_buffer_index: Option<u32>,
        /// Scale element type: f16, bf16 or f32.
        scale_type: ScaleType,
    },
    /// `0x04` NF4: uint4 codes into the fixed NormalFloat4 codebook, f32 absmax per block.
    Nf4 {
        /// Blocked axis, `< rank`.
        axis: u32,
        /// Elements per block: a power of two ≥ 8.
        block_size: u32,
        /// Buffer holding one f32 absmax per block.
        scale_buffer_index: u32,
    },
    /// `0x05` OCP Microscaling: an e8m0 scale per block of `block_size` (16..=2048).
    Mxfp {
        /// Blocked axis, `< rank`.
        axis: u32,
        /// Elements per block: a power of two in 16..=2048 dividing `shape[axis]`.
        block_size: u32,
        /// Buffer holding one e8m0 byte per block.
        scale_buffer_index: u32,
    },
    /// A scheme kept as bytes: a private scheme (`0xF0`–`0xFE`) under an agreement, or
    /// an unknown one in permissive mode. Its data must not be dequantized.
    Opaque {
        /// `scheme_tag`.
        scheme_tag: u8,
        /// `scheme_version`.
        scheme_version: u8,
        /// Header `flags`.
        flags: u16,
        /// Payload bytes after the 4-byte header.
        payload: Vec<u8>,
    },
}

/// The quantization section: a scheme plus any bytes the writer put after the
/// scheme's fixed fields (kept so a descriptor re-encodes to identical bytes).
///
/// The element type of a quantized descriptor is the storage type of the codes;
/// the scheme's parameter buffers follow the layout's own buffers in the table,
/// with exactly the size the scheme needs. This builds the golden vector
/// `quant_per_block_int4_128x128`: int4 codes in blocks of 128 along axis 1, one
/// f16 scale per block, no zero points.
///
/// ```
/// use hurray_core::{BufferHandle, ElementType, Quantization, ScaleType, Scheme, TensorDescriptor};
///
/// let mut d = TensorDescriptor::dense(ElementType::Int4, &[128, 128])?;
/// assert_eq!(d.buffers[0].byte_size, 8192); // 16384 codes, two per byte
/// d.buffers.push(BufferHandle::cpu(128 * 2)); // 128 blocks × one f16 scale
/// d.quantization = Some(Quantization::from(Scheme::PerBlock {
///     axis: 1,
///     block_size: 128,
///     scale_buffer_index: 1,
///     zero_point_buffer_index: None, // symmetric
///     scale_type: ScaleType::F16,
/// }));
/// let bytes = d.encode()?;
/// assert_eq!(bytes.len(), 105);
/// assert_eq!(&bytes[77..81], &[24, 0, 0, 0]); // quantization_length
/// assert_eq!(TensorDescriptor::decode(&bytes)?, d);
///
/// // A scale buffer of the wrong size is refused, naming its handle.
/// d.buffers[1].byte_size = 128;
/// let err = d.encode().unwrap_err();
/// assert_eq!((err.rule, err.offset), (hurray_core::Rule::QuantizationBufferSize, 61));
/// # Ok::<(), hurray_core::DecodeError>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Quantization {
    /// The scheme and its fields.
    pub scheme: Scheme,
    /// Bytes after the fixed payload (writer padding or later-minor fields), usually empty.
    pub trailing: Vec<u8>,
}

impl From<Scheme> for Quantization {
    fn from(scheme: Scheme) -> Self {
        Quantization {
            scheme,
            trailing: Vec::new(),
        }
    }
}

impl Scheme {
    /// The `scheme_tag` byte.
    pub fn tag(&self) -> u8 {
        match self {
            Scheme::PerTensor { .. } => 1,
            Scheme::PerChannel { .. } => 2,
            Scheme::PerBlock { .. } => 3,
            Scheme::Nf4 { .. } => 4,
            Scheme::Mxfp { .. } => 5,
            Scheme::Opaque { scheme_tag, .. } => *scheme_tag,
        }
    }

    /// Lower-case scheme name.
    pub fn name(&self) -> &'static str {
        match self {
            Scheme::PerTensor { .. } => "per_tensor_affine",
            Scheme::PerChannel { .. } => "per_channel_affine",
            Scheme::PerBlock { .. } => "per_block_affine",
            Scheme::Nf4 { .. } => "nf4",
            Scheme::Mxfp { .. } => "mxfp",
            Scheme::Opaque { .. } => "opaque",
        }
    }

    /// Size of the fixed payload (header included) in bytes (§4).
    fn fixed_len(&self) -> usize {
        match self {
            Scheme::PerTensor { .. } | Scheme::Nf4 { .. } | Scheme::Mxfp { .. } => 16,
            Scheme::PerChannel { .. } => 20,
            Scheme::PerBlock { .. } => 24,
            Scheme::Opaque { payload, .. } => 4 + payload.len(),
        }
    }

    fn flags(&self) -> u16 {
        match self {
            Scheme::PerChannel {
                zero_point_buffer_index,
                ..
            }
            | Scheme::PerBlock {
                zero_point_buffer_index,
                ..
            } => u16::from(zero_point_buffer_index.is_none()),
            Scheme::Opaque { flags, .. } => *flags,
            _ => 0,
        }
    }

    /// Indices of the parameter buffers the scheme names, scale first.
    pub fn parameter_buffers(&self) -> Vec<u32> {
        let (indices, n) = self.parameter_indices();
        indices[..n].to_vec()
    }

    /// [`parameter_buffers`](Self::parameter_buffers) without allocating: the
    /// indices, scale first, and how many of them are used (0, 1 or 2). A
    /// zero-point array sharing the scale buffer counts once.
    fn parameter_indices(&self) -> ([u32; 2], usize) {
        match self {
            Scheme::PerChannel {
                scale_buffer_index: s,
                zero_point_buffer_index: z,
                ..
            }
            | Scheme::PerBlock {
                scale_buffer_index: s,
                zero_point_buffer_index: z,
                ..
            } => match z {
                Some(z) if z != s => ([*s, *z], 2),
                _ => ([*s, 0], 1),
            },
            Scheme::Nf4 {
                scale_buffer_index: s,
                ..
            }
            | Scheme::Mxfp {
                scale_buffer_index: s,
                ..
            } => ([*s, 0], 1),
            _ => ([0, 0], 0),
        }
    }

    /// Whether the scheme accepts storage type `t`: `storage_types().contains(&t)`
    /// as one test.
    #[inline]
    fn allows_storage(&self, t: ElementType) -> bool {
        use ElementType::*;
        match self {
            Scheme::PerTensor { .. } | Scheme::PerChannel { .. } => matches!(
                t,
                Int8 | Int16 | Int32 | Uint8 | Uint16 | Uint32 | Int4 | Uint4 | Int2 | Uint2
            ),
            Scheme::PerBlock { .. } => matches!(t, Int8 | Uint8 | Int4 | Uint4 | Int2 | Uint2),
            Scheme::Nf4 { .. } => t == Uint4,
            Scheme::Mxfp { .. } => matches!(
                t,
                Float8E4m3 | Float8E5m2 | Float4E2m1 | Float6E2m3 | Float6E3m2 | Int8 | Int4
            ),
            Scheme::Opaque { .. } => false,
        }
    }

    /// Storage types the scheme accepts (§4).
    pub fn storage_types(&self) -> &'static [ElementType] {
        use ElementType::*;
        match self {
            Scheme::PerTensor { .. } | Scheme::PerChannel { .. } => &[
                Int8, Int16, Int32, Uint8, Uint16, Uint32, Int4, Uint4, Int2, Uint2,
            ],
            Scheme::PerBlock { .. } => &[Int8, Uint8, Int4, Uint4, Int2, Uint2],
            Scheme::Nf4 { .. } => &[Uint4],
            Scheme::Mxfp { .. } => &[
                Float8E4m3, Float8E5m2, Float4E2m1, Float6E2m3, Float6E3m2, Int8, Int4,
            ],
            Scheme::Opaque { .. } => &[],
        }
    }
}

/// The `zero_point` range of a storage type (§8.1 table).
pub fn zero_point_range(t: ElementType) -> Option<(i64, i64)> {
    use ElementType::*;
    Some(match t {
        Int8 => (-128, 127),
        Uint8 => (0, 255),
        Int16 => (-32768, 32767),
        Uint16 => (0, 65535),
        Int32 => (i64::from(i32::MIN), i64::from(i32::MAX)),
        Uint32 => (0, i64::from(i32::MAX)),
        Int4 => (-8, 7),
        Uint4 => (0, 15),
        Int2 => (-2, 1),
        Uint2 => (0, 3),
        _ => return None,
    })
}

impl Quantization {
    /// Encoded size of the section: the u32 length plus the payload.
    pub fn encoded_len(&self) -> usize {
        4 + self.scheme.fixed_len() + self.trailing.len()
    }

    /// Reads the section at the reader's position (§2–§5, header checks of §9 1–5)
    /// into `out`.
    #[inline]
    pub(crate) fn read(
        r: &mut Reader<'_>,
        opts: &crate::DecodeOptions,
        out: &mut Option<Quantization>,
    ) -> Result<()> {
        let at = r.pos();
        let len = r.u32("quantization_length")? as usize;
        let p0 = r.pos();
        let payload = r.take(len, "quantization payload")?;
        let Some(&[tag, version, f0, f1]) = payload.first_chunk::<4>() else {
            bail!(
                QuantizationHeader,
                at,
                "quantization_length {len} < 4: the common header does not fit"
            );
        };
        let flags = u16::from_le_bytes([f0, f1]);
        ensure!(
            tag != 0x00 && tag != 0xFF,
            QuantizationHeader,
            p0,
            "scheme_tag {tag:#04x} is invalid"
        );
        if !(1..=5).contains(&tag) {
            // Written in place, like the schemes below: a value returned from out of
            // line would be moved through memory.
            return Self::read_opaque(payload, p0, opts, out);
        }
        ensure!(
            version == 1,
            QuantizationHeader,
            p0 + 1,
            "scheme_version {version:#04x} is not 1"
        );
        let allowed_flags: u16 = if matches!(tag, 2 | 3) { 1 } else { 0 };
        ensure!(
            flags & !allowed_flags == 0,
            QuantizationHeader,
            p0 + 2,
            "reserved quantization flag bits set: {flags:#06x}"
        );
        let symmetric = flags & 1 == 1;
        // The fixed payload of each scheme (§4), header included, read at fixed
        // positions once its length is known to fit.
        let (scheme, fixed) = match tag {
            1 => {
                let f = fixed_part::<16>(payload, at, tag)?;
                zero(&f[12..16], p0 + 12, "per-tensor _reserved")?;
                let scheme = Scheme::PerTensor {
                    scale: f32::from_bits(u32_at(f, 4)),
                    zero_point: u32_at(f, 8) as i32,
                };
                (scheme, 16)
            }
            2 => {
                let f = fixed_part::<20>(payload, at, tag)?;
                let zero_point_buffer_index = zp_index(symmetric, u32_at(f, 12), p0 + 12)?;
                let scale_type = scale_type(f[16], p0 + 16, true)?;
                zero(&f[17..20], p0 + 17, "per-channel _reserved")?;
                let scheme = Scheme::PerChannel {
                    axis: u32_at(f, 4),
                    scale_buffer_index: u32_at(f, 8),
                    zero_point_buffer_index,
                    scale_type,
                };
                (scheme, 20)
            }
            3 => {
                let f = fixed_part::<24>(payload, at, tag)?;
                let zero_point_buffer_index = zp_index(symmetric, u32_at(f, 16), p0 + 16)?;
                let scale_type = scale_type(f[20], p0 + 20, false)?;
                zero(&f[21..24], p0 + 21, "per-block _reserved")?;
                let scheme = Scheme::PerBlock {
                    axis: u32_at(f, 4),
                    block_size: u32_at(f, 8),
                    scale_buffer_index: u32_at(f, 12),
                    zero_point_buffer_index,
                    scale_type,
                };
                (scheme, 24)
            }
            _ => {
                let f = fixed_part::<16>(payload, at, tag)?;
                let (axis, block_size, scale_buffer_index) =
                    (u32_at(f, 4), u32_at(f, 8), u32_at(f, 12));
                let scheme = if tag == 4 {
                    Scheme::Nf4 {
                        axis,
                        block_size,
                        scale_buffer_index,
                    }
                } else {
                    Scheme::Mxfp {
                        axis,
                        block_size,
                        scale_buffer_index,
                    }
                };
                (scheme, 16)
            }
        };
        let trailing = match &payload[fixed..] {
            [] => Vec::new(),
            rest => rest.to_vec(),
        };
        *out = Some(Quantization { scheme, trailing });
        Ok(())
    }

    /// [`read`](Self::read) for a scheme this reader does not implement: kept as
    /// bytes under an agreement (private tags) or in permissive mode.
    #[inline(never)]
    fn read_opaque(
        payload: &[u8],
        p0: usize,
        opts: &crate::DecodeOptions,
        out: &mut Option<Quantization>,
    ) -> Result<()> {
        let tag = payload[0];
        let agreed = (0xF0..=0xFE).contains(&tag) && opts.accept_private;
        ensure!(
            agreed || opts.permissive,
            QuantizationSchemeUnknown,
            p0,
            "scheme_tag {tag:#04x} is not a scheme this reader implements"
        );
        *out = Some(
            Scheme::Opaque {
                scheme_tag: tag,
                scheme_version: payload[1],
                flags: u16::from_le_bytes([payload[2], payload[3]]),
                payload: payload[4..].to_vec(),
            }
            .into(),
        );
        Ok(())
    }

    pub(crate) fn write(&self, out: &mut Vec<u8>) {
        out.put_u32((self.scheme.fixed_len() + self.trailing.len()) as u32);
        out.put_u8(self.scheme.tag());
        out.put_u8(match &self.scheme {
            Scheme::Opaque { scheme_version, .. } => *scheme_version,
            _ => 1,
        });
        out.put_u16(self.scheme.flags());
        match &self.scheme {
            Scheme::PerTensor { scale, zero_point } => {
                out.put_u32(scale.to_bits());
                out.put_u32(*zero_point as u32);
                out.put_zeros(4);
            }
            Scheme::PerChannel {
                axis,
                scale_buffer_index,
                zero_point_buffer_index,
                scale_type,
            } => {
                out.put_u32(*axis);
                out.put_u32(*scale_buffer_index);
                out.put_u32(zero_point_buffer_index.unwrap_or(NO_BUFFER));
                out.put_u8(scale_type.tag());
                out.put_zeros(3);
            }
            Scheme::PerBlock {
                axis,
                block_size,
                scale_buffer_index,
                zero_point_buffer_index,
                scale_type,
            } => {
                out.put_u32(*axis);
                out.put_u32(*block_size);
                out.put_u32(*scale_buffer_index);
                out.put_u32(zero_point_buffer_index.unwrap_or(NO_BUFFER));
                out.put_u8(scale_type.tag());
                out.put_zeros(3);
            }
            Scheme::Nf4 {
                axis,
                block_size,
                scale_buffer_index,
            }
            | Scheme::Mxfp {
                axis,
                block_size,
                scale_buffer_index,
            } => {
                out.put_u32(*axis);
                out.put_u32(*block_size);
                out.put_u32(*scale_buffer_index);
            }
            Scheme::Opaque { payload, .. } => out.extend_from_slice(payload),
        }
        out.extend_from_slice(&self.trailing);
    }
}

/// The first `N` bytes of a scheme's payload: its fixed fields (`N` is the scheme's
/// fixed length), or `QuantizationHeader` at `at` (the length field) when the
/// payload is shorter.
#[inline]
fn fixed_part<const N: usize>(payload: &[u8], at: usize, tag: u8) -> Result<&[u8; N]> {
    match payload.first_chunk::<N>() {
        Some(f) => Ok(f),
        None => bail!(
            QuantizationHeader,
            at,
            "quantization_length {} is shorter than scheme {tag:#04x}'s {N} bytes",
            payload.len()
        ),
    }
}

/// The little-endian u32 at byte `i` of a fixed payload.
#[inline]
fn u32_at<const N: usize>(f: &[u8; N], i: usize) -> u32 {
    u32::from_le_bytes([f[i], f[i + 1], f[i + 2], f[i + 3]])
}

/// Reserved payload bytes `s`, starting at descriptor offset `at`, must be zero.
#[inline]
fn zero(s: &[u8], at: usize, what: &str) -> Result<()> {
    if s.iter().any(|&b| b != 0) {
        return Err(crate::wire::non_zero(s, at, what));
    }
    Ok(())
}

/// A `zero_point_buffer_index` (at offset `at`) against the `SYMMETRIC` flag.
#[inline]
fn zp_index(symmetric: bool, raw: u32, at: usize) -> Result<Option<u32>> {
    match (symmetric, raw) {
        (true, NO_BUFFER) => Ok(None),
        (true, v) => bail!(
            QuantizationField,
            at,
            "SYMMETRIC is set but zero_point_buffer_index is {v}, not NONE"
        ),
        (false, NO_BUFFER) => bail!(
            QuantizationBufferIndex,
            at,
            "asymmetric scheme with zero_point_buffer_index NONE"
        ),
        (false, v) => Ok(Some(v)),
    }
}

/// A `scale_type_tag` (at offset `at`); `only_f32` for per-channel.
#[inline]
fn scale_type(v: u8, at: usize, only_f32: bool) -> Result<ScaleType> {
    match ScaleType::from_tag(v) {
        Some(ScaleType::F32) => Ok(ScaleType::F32),
        Some(s) if !only_f32 => Ok(s),
        _ => bail!(
            QuantizationField,
            at,
            "scale_type_tag {v:#04x} is not allowed"
        ),
    }
}

const DYN: u64 = crate::DYN;

impl Quantization {
    /// The payload checks against the descriptor `d` that holds this section
    /// (§9 items 6–13 and §10).
    pub(crate) fn check(&self, d: &TensorDescriptor) -> Result<()> {
        let s = &self.scheme;
        if let Scheme::Opaque { .. } = s {
            return Ok(());
        }
        // Offsets of the payload and the buffer table, needed only for an error.
        let p = || d.section_offsets().quantization + 4;
        let handles_at = || d.section_offsets().handles;
        if let Scheme::PerChannel { scale_type, .. } = s {
            ensure!(
                *scale_type == ScaleType::F32,
                QuantizationField,
                p() + 16,
                "per-channel scale_type_tag {:#04x} is not 0x03 (f32)",
                scale_type.tag()
            );
        }
        ensure!(
            s.allows_storage(d.element_type),
            QuantizationStorageType,
            14,
            "storage type {} is not allowed by scheme {}",
            d.element_type,
            s.name()
        );
        let rank = d.rank();
        let is_paged = matches!(d.layout, crate::Layout::BlockPaged(_));
        // Axis (items 7, 8).
        let axis_info = match s {
            Scheme::PerChannel { axis, .. } => Some((*axis, None)),
            Scheme::PerBlock {
                axis, block_size, ..
            } => Some((*axis, Some((*block_size, 2u32)))),
            Scheme::Nf4 {
                axis, block_size, ..
            } => Some((*axis, Some((*block_size, 8)))),
            Scheme::Mxfp {
                axis, block_size, ..
            } => Some((*axis, Some((*block_size, 16)))),
            _ => None,
        };
        if let Scheme::PerTensor { scale, zero_point } = s {
            ensure!(
                scale.is_finite() && *scale != 0.0,
                QuantizationField,
                p() + 4,
                "per-tensor scale {scale} must be finite and non-zero"
            );
            let (lo, hi) = zero_point_range(d.element_type).unwrap_or((0, 0));
            let z = i64::from(*zero_point);
            ensure!(
                z >= lo && z <= hi,
                QuantizationField,
                p() + 8,
                "zero_point {z} is outside {lo}..={hi} for {}",
                d.element_type
            );
        }
        if let Some((axis, block)) = axis_info {
            ensure!(
                (axis as usize) < rank,
                QuantizationField,
                p() + 4,
                "axis {axis} is not below rank {rank}"
            );
            let extent = d.shape[axis as usize];
            ensure!(
                extent != DYN,
                DynamicDimension,
                20 + 8 * axis as usize,
                "quantized axis {axis} is dynamic"
            );
            if let Some((k, min)) = block {
                ensure!(
                    k.is_power_of_two() && k >= min,
                    QuantizationField,
                    p() + 8,
                    "block_size {k} must be a power of two ≥ {min}"
                );
                if let Scheme::Mxfp { .. } = s {
                    ensure!(
                        k <= 2048,
                        QuantizationField,
                        p() + 8,
                        "MXFP block_size {k} exceeds 2048"
                    );
                    // k is a power of two (checked above): a mask, not a division.
                    ensure!(extent > 0 && extent & (u64::from(k) - 1) == 0, QuantizationField, p() + 8, "MXFP needs shape[axis] = {extent} to be a positive multiple of block_size {k}");
                } else if !is_paged {
                    ensure!(
                        extent == 0 || u64::from(k) <= extent,
                        QuantizationField,
                        p() + 8,
                        "block_size {k} exceeds shape[axis] = {extent}"
                    );
                }
            }
            if is_paged {
                let crate::Layout::BlockPaged(bp) = &d.layout else {
                    unreachable!()
                };
                match s {
                    Scheme::PerChannel { .. } => ensure!(
                        axis == 1 || axis == 2,
                        QuantizationField,
                        p() + 4,
                        "per-channel on a block-paged tensor must use axis 1 or 2"
                    ),
                    Scheme::PerBlock { block_size, .. } => {
                        ensure!(
                            axis == 0,
                            QuantizationField,
                            p() + 4,
                            "per-block on a block-paged tensor needs axis 0, found {axis}"
                        );
                        ensure!(
                            *block_size == bp.page_size,
                            QuantizationField,
                            p() + 8,
                            "per-block on a block-paged tensor needs block_size = page_size {}",
                            bp.page_size
                        );
                    }
                    _ => {}
                }
            }
        }
        // Buffer indices (items 11, 12).
        let layout_bufs = d.layout.layout_buffer_count(rank).unwrap_or(1);
        let (indices, n) = s.parameter_indices();
        let params = &indices[..n];
        let want = layout_bufs + params.len();
        ensure!(
            d.buffers.len() == want,
            BufferCount,
            handles_at() - 1,
            "buffer_count is {} but layout {} with scheme {} needs {want}",
            d.buffers.len(),
            d.layout.name(),
            s.name()
        );
        let index_at = |i: usize| {
            p() + 8
                + 4 * i
                + if matches!(
                    s,
                    Scheme::PerBlock { .. } | Scheme::Nf4 { .. } | Scheme::Mxfp { .. }
                ) {
                    4
                } else {
                    0
                }
        };
        for (i, &ix) in params.iter().enumerate() {
            ensure!(
                (ix as usize) < d.buffers.len() && ix as usize >= layout_bufs,
                QuantizationBufferIndex,
                index_at(i),
                "parameter buffer index {ix} must name a buffer after the layout's {layout_bufs} and below {}",
                d.buffers.len()
            );
        }
        // Exact parameter sizes (item 13).
        let count = match s {
            Scheme::PerChannel { axis, .. } => Some(d.shape[*axis as usize]),
            _ if is_paged => {
                let crate::Layout::BlockPaged(bp) = &d.layout else {
                    unreachable!()
                };
                bp.num_pages.checked_mul(u64::from(bp.page_size))
            }
            Scheme::PerBlock {
                axis, block_size, ..
            }
            | Scheme::Nf4 {
                axis, block_size, ..
            }
            | Scheme::Mxfp {
                axis, block_size, ..
            } => num_blocks(&d.shape, *axis as usize, u64::from(*block_size)),
            _ => Some(0),
        };
        let Some(count) = count else {
            bail!(
                SizeOverflow,
                p() + 4,
                "number of quantization parameters overflows or depends on a dynamic dimension"
            );
        };
        let (scale_w, zp) = match s {
            Scheme::PerChannel {
                scale_type,
                zero_point_buffer_index,
                ..
            }
            | Scheme::PerBlock {
                scale_type,
                zero_point_buffer_index,
                ..
            } => (scale_type.width(), *zero_point_buffer_index),
            Scheme::Nf4 { .. } => (4, None),
            Scheme::Mxfp { .. } => (1, None),
            _ => return Ok(()),
        };
        let scale_ix = params[0];
        let scale_bytes = count.checked_mul(scale_w);
        let zp_bytes = count.checked_mul(4);
        let (Some(scale_bytes), Some(zp_bytes)) = (scale_bytes, zp_bytes) else {
            bail!(SizeOverflow, p() + 4, "parameter buffer size overflows");
        };
        let size_of = |ix: u32| d.buffers[ix as usize].byte_size;
        let at = |ix: u32| handles_at() + 16 * ix as usize;
        match zp {
            Some(z) if z == scale_ix => {
                let Some(want) = scale_bytes.checked_add(zp_bytes) else {
                    bail!(SizeOverflow, p() + 4, "parameter buffer size overflows");
                };
                ensure!(
                    size_of(z) == want,
                    QuantizationBufferSize,
                    at(z),
                    "shared scale/zero-point buffer {z} holds {} bytes, needs {want}",
                    size_of(z)
                );
            }
            other => {
                ensure!(
                    size_of(scale_ix) == scale_bytes,
                    QuantizationBufferSize,
                    at(scale_ix),
                    "scale buffer {scale_ix} holds {} bytes, needs exactly {scale_bytes}",
                    size_of(scale_ix)
                );
                if let Some(z) = other {
                    ensure!(
                        size_of(z) == zp_bytes,
                        QuantizationBufferSize,
                        at(z),
                        "zero-point buffer {z} holds {} bytes, needs exactly {zp_bytes}",
                        size_of(z)
                    );
                }
            }
        }
        Ok(())
    }
}

/// `num_blocks = ceil(shape[axis] / K) · Π_{j≠axis} shape[j]` (§7), `None` on overflow
/// or a dynamic dimension.
pub fn num_blocks(shape: &[u64], axis: usize, block_size: u64) -> Option<u64> {
    let extent = *shape.get(axis)?;
    // Block sizes are powers of two once validated: a shift, not a division.
    let mut n = if block_size.is_power_of_two() {
        (extent >> block_size.trailing_zeros()) + u64::from(extent & (block_size - 1) != 0)
    } else {
        extent.div_ceil(block_size)
    };
    for (j, &d) in shape.iter().enumerate() {
        if d == DYN {
            return None;
        }
        if j != axis {
            n = n.checked_mul(d)?;
        }
    }
    Some(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allows_storage_matches_storage_types() {
        let schemes = [
            Scheme::PerTensor {
                scale: 1.0,
                zero_point: 0,
            },
            Scheme::PerChannel {
                axis: 0,
                scale_buffer_index: 1,
                zero_point_buffer_index: None,
                scale_type: ScaleType::F32,
            },
            Scheme::PerBlock {
                axis: 0,
                block_size: 2,
                scale_buffer_index: 1,
                zero_point_buffer_index: None,
                scale_type: ScaleType::F16,
            },
            Scheme::Nf4 {
                axis: 0,
                block_size: 8,
                scale_buffer_index: 1,
            },
            Scheme::Mxfp {
                axis: 0,
                block_size: 32,
                scale_buffer_index: 1,
            },
            Scheme::Opaque {
                scheme_tag: 0xF0,
                scheme_version: 1,
                flags: 0,
                payload: Vec::new(),
            },
        ];
        let mut types = ElementType::ALL.to_vec();
        types.extend([0xF0, 0xF7, 0xFE].map(ElementType::Private));
        types.extend([0x05, 0x48, 0x80].map(ElementType::Unknown));
        for s in &schemes {
            for &t in &types {
                assert_eq!(
                    s.allows_storage(t),
                    s.storage_types().contains(&t),
                    "{s:?} {t}"
                );
            }
        }
    }

    #[test]
    fn num_blocks_matches_div_ceil() {
        for extent in [0, 1, 2, 3, 7, 8, 9, 127, 128, 129, u64::MAX - 1, u64::MAX] {
            for k in [1, 2, 3, 4, 8, 12, 16, 2048, 1 << 40, 1 << 63, u64::MAX] {
                let blocks = (extent != DYN).then(|| extent.div_ceil(k));
                assert_eq!(num_blocks(&[extent], 0, k), blocks, "{extent} {k}");
                assert_eq!(
                    num_blocks(&[3, extent], 1, k),
                    blocks.and_then(|b| b.checked_mul(3)),
                    "{extent} {k}"
                );
            }
        }
    }
}
