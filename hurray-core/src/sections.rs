//! The optional fixed-size sections after the buffer table: shard (`descriptor.md`
//! §9), statistics (§10), extension type (§11) and composite member (§12).

use crate::error::{bail, ensure, Result};
use crate::wire::{Put, Reader};

/// Shard section (flags bit 1): this tensor is the box
/// `[offset[k], offset[k] + shape[k])` of a parent of shape `parent_shape`.
/// Both vectors have the tensor's rank; no dynamic dimensions.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Shard {
    /// Shape of the whole (parent) tensor.
    pub parent_shape: Vec<u64>,
    /// Position of this shard's element [0, …, 0] in the parent.
    pub offset: Vec<u64>,
}

impl Shard {
    pub(crate) fn read(r: &mut Reader<'_>, rank: usize) -> Result<Shard> {
        Ok(Shard {
            parent_shape: r.u64s(rank, "parent_shape")?,
            offset: r.u64s(rank, "shard_offset")?,
        })
    }
    pub(crate) fn write(&self, out: &mut Vec<u8>) {
        self.parent_shape
            .iter()
            .chain(&self.offset)
            .for_each(|&v| out.put_u64(v));
    }
}

/// `computed_mask` bits of the statistics section.
pub mod stat_mask {
    /// `nnz` is valid.
    pub const NNZ_VALID: u32 = 0x01;
    /// `sparsity_ratio` is valid.
    pub const SPARSITY_VALID: u32 = 0x02;
    /// `value_min`, `value_max`, `value_abs_max` are valid.
    pub const VALUE_RANGE_VALID: u32 = 0x04;
    /// `value_mean`, `value_stddev` are valid.
    pub const VALUE_STATS_VALID: u32 = 0x08;
    /// `nm_n`, `nm_m` are valid.
    pub const NM_SPARSITY_VALID: u32 = 0x10;
    /// `has_nan`, `has_inf` are valid.
    pub const NAN_INF_VALID: u32 = 0x20;
    /// Every defined bit.
    pub const ALL: u32 = 0x3F;
}

/// Statistics section (flags bit 3, 72 bytes). Advisory only: a field counts as
/// unknown unless its `computed_mask` bit is set. Values describe dequantized data.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct Statistics {
    /// Which fields are valid ([`stat_mask`]).
    pub computed_mask: u32,
    /// Number of non-zero elements.
    pub nnz: u64,
    /// `(N − nnz) / N`, in [0, 1].
    pub sparsity_ratio: f64,
    /// Smallest value.
    pub value_min: f64,
    /// Largest value.
    pub value_max: f64,
    /// `max(|min|, |max|)`.
    pub value_abs_max: f64,
    /// Arithmetic mean.
    pub value_mean: f64,
    /// Population standard deviation.
    pub value_stddev: f64,
    /// N of N:M structured sparsity (0 = n/a).
    pub nm_n: u8,
    /// M of N:M structured sparsity (0 = n/a).
    pub nm_m: u8,
    /// 1 when at least one NaN is present.
    pub has_nan: u8,
    /// 1 when at least one ±Inf is present.
    pub has_inf: u8,
}

impl Statistics {
    /// Encoded size in bytes.
    pub const LEN: usize = 72;

    pub(crate) fn read(r: &mut Reader<'_>) -> Result<Statistics> {
        let at = r.pos();
        let computed_mask = r.u32("computed_mask")?;
        ensure!(
            computed_mask & !stat_mask::ALL == 0,
            StatisticsMask,
            at,
            "computed_mask {computed_mask:#x} sets reserved bits 6–31"
        );
        r.reserved(4, "statistics _reserved")?;
        let s = Statistics {
            computed_mask,
            nnz: r.u64("nnz")?,
            sparsity_ratio: r.f64("sparsity_ratio")?,
            value_min: r.f64("value_min")?,
            value_max: r.f64("value_max")?,
            value_abs_max: r.f64("value_abs_max")?,
            value_mean: r.f64("value_mean")?,
            value_stddev: r.f64("value_stddev")?,
            nm_n: r.u8("nm_n")?,
            nm_m: r.u8("nm_m")?,
            has_nan: r.u8("has_nan")?,
            has_inf: r.u8("has_inf")?,
        };
        r.reserved(4, "statistics _reserved2")?;
        Ok(s)
    }

    pub(crate) fn check(&self, at: usize) -> Result<()> {
        let m = self.computed_mask;
        ensure!(
            m & !stat_mask::ALL == 0,
            StatisticsMask,
            at,
            "computed_mask {m:#x} sets reserved bits 6–31"
        );
        Ok(())
    }

    pub(crate) fn write(&self, out: &mut Vec<u8>) {
        out.put_u32(self.computed_mask);
        out.put_u32(0);
        out.put_u64(self.nnz);
        for v in [
            self.sparsity_ratio,
            self.value_min,
            self.value_max,
            self.value_abs_max,
            self.value_mean,
            self.value_stddev,
        ] {
            out.put_f64(v);
        }
        out.extend_from_slice(&[self.nm_n, self.nm_m, self.has_nan, self.has_inf, 0, 0, 0, 0]);
    }
}

/// Extension-type section (flags bit 2, 20 bytes): enough about a private element
/// type (`0xF0`–`0xFE`) to size its buffers without understanding its numerics.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct ExtensionType {
    /// Bits per element, > 0: a whole-byte width, or 1, 2 or 4.
    pub bit_width: u32,
    /// Elements per byte: 1 for whole-byte widths, `8 / bit_width` below 8.
    pub packing_factor: u8,
    /// Floating point (true) or integer.
    pub is_float: bool,
    /// Signed integer (always false for floats).
    pub is_signed: bool,
    /// Float sign bits: 0 or 1 (0 for integers).
    pub sign_bits: u8,
    /// Float exponent bits (0 for integers).
    pub exponent_bits: u8,
    /// Float mantissa bits (0 for integers).
    pub mantissa_bits: u8,
    /// Float exponent bias (0 for integers).
    pub exponent_bias: u32,
    /// NaN representable.
    pub has_nan: bool,
    /// Inf representable.
    pub has_inf: bool,
}

impl ExtensionType {
    /// Encoded size in bytes.
    pub const LEN: usize = 20;

    /// Storage of the private type, from its bit width and packing factor.
    pub fn storage(&self) -> Option<crate::Storage> {
        match (self.bit_width, self.packing_factor) {
            (1 | 2 | 4, p) if u32::from(p) * self.bit_width == 8 => Some(crate::Storage::Packed {
                bits: self.bit_width as u8,
            }),
            (w, 1) if w >= 8 && w % 8 == 0 => Some(crate::Storage::Bytes(w / 8)),
            _ => None,
        }
    }

    pub(crate) fn read(r: &mut Reader<'_>) -> Result<ExtensionType> {
        let at = r.pos();
        let bit_width = r.u32("bit_width")?;
        let packing_factor = r.u8("packing_factor")?;
        let flag = |r: &mut Reader<'_>, what: &'static str| -> Result<bool> {
            let p = r.pos();
            match r.u8(what)? {
                0 => Ok(false),
                1 => Ok(true),
                v => bail!(ExtensionType, p, "{what} is {v}, not 0 or 1"),
            }
        };
        let is_float = flag(r, "is_float")?;
        let is_signed = flag(r, "is_signed")?;
        let sign_bits = r.u8("sign_bits")?;
        let exponent_bits = r.u8("exponent_bits")?;
        let mantissa_bits = r.u8("mantissa_bits")?;
        r.reserved(2, "extension type _reserved")?;
        let exponent_bias = r.u32("exponent_bias")?;
        let has_nan = flag(r, "has_nan")?;
        let has_inf = flag(r, "has_inf")?;
        r.reserved(2, "extension type _reserved2")?;
        let e = ExtensionType {
            bit_width,
            packing_factor,
            is_float,
            is_signed,
            sign_bits,
            exponent_bits,
            mantissa_bits,
            exponent_bias,
            has_nan,
            has_inf,
        };
        e.check(at)?;
        Ok(e)
    }

    pub(crate) fn check(&self, at: usize) -> Result<()> {
        ensure!(self.bit_width > 0, ExtensionType, at, "bit_width is 0");
        ensure!(
            self.storage().is_some(),
            ExtensionType,
            at + 4,
            "bit_width {} with packing_factor {} breaks the packing rule (whole bytes with 1, or 1/2/4 bits with 8/4/2)",
            self.bit_width,
            self.packing_factor
        );
        if self.is_float {
            ensure!(
                !self.is_signed,
                ExtensionType,
                at + 6,
                "a float type must have is_signed 0"
            );
            ensure!(
                self.sign_bits <= 1,
                ExtensionType,
                at + 7,
                "sign_bits {} > 1",
                self.sign_bits
            );
        } else {
            let fields = [
                (7, u32::from(self.sign_bits)),
                (8, u32::from(self.exponent_bits)),
                (9, u32::from(self.mantissa_bits)),
                (12, self.exponent_bias),
            ];
            if let Some(&(rel, _)) = fields.iter().find(|&&(_, v)| v != 0) {
                bail!(
                    ExtensionType,
                    at + rel,
                    "an integer type must have zero sign, exponent, mantissa and bias fields"
                );
            }
        }
        Ok(())
    }

    pub(crate) fn write(&self, out: &mut Vec<u8>) {
        out.put_u32(self.bit_width);
        out.extend_from_slice(&[
            self.packing_factor,
            u8::from(self.is_float),
            u8::from(self.is_signed),
            self.sign_bits,
            self.exponent_bits,
            self.mantissa_bits,
            0,
            0,
        ]);
        out.put_u32(self.exponent_bias);
        out.extend_from_slice(&[u8::from(self.has_nan), u8::from(self.has_inf), 0, 0]);
    }
}

/// Role of an overlay member (`descriptor.md` §12).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MemberRole {
    /// `0x00` a correction layered over the base.
    Correction,
    /// `0x01` the base that spans the whole head.
    Base,
}

impl MemberRole {
    /// Encoded size of the composite-member section in bytes.
    pub const SECTION_LEN: usize = 16;

    pub(crate) fn read(r: &mut Reader<'_>) -> Result<MemberRole> {
        let at = r.pos();
        let role = match r.u8("member_role")? {
            0 => MemberRole::Correction,
            1 => MemberRole::Base,
            v => bail!(CompositeMember, at, "member_role {v:#04x} is reserved"),
        };
        r.reserved(15, "composite member _reserved")?;
        Ok(role)
    }

    pub(crate) fn write(self, out: &mut Vec<u8>) {
        out.put_u8(self as u8);
        out.put_zeros(15);
    }
}
