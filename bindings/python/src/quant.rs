//! The five quantization scheme classes and the `Statistics` / `Shard` sections.
//! Scheme objects compare by identity; their fields are checked again, against
//! the whole descriptor, when a tensor is built.

use crate::dtype::Dtype;
use crate::errors::InvalidDescriptorError;
use hurray_core::{
    stat_mask, ElementType, ScaleType, Scheme, Shard as CoreShard, Statistics as CoreStats,
};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;

use crate::args::Seq;

fn check_block(block_size: u32, min: u32, max: u32, what: &str) -> PyResult<()> {
    if !block_size.is_power_of_two() || block_size < min || block_size > max {
        let range = if max == u32::MAX {
            format!("a power of two >= {min}")
        } else {
            format!("a power of two in [{min}, {max}]")
        };
        return Err(InvalidDescriptorError::new_err(format!(
            "{what} block_size {block_size} must be {range} (quantization.md §8)"
        )));
    }
    Ok(())
}

fn zp_repr(z: Option<u32>) -> String {
    z.map_or_else(|| "None".into(), |v| v.to_string())
}

/// Per-tensor affine quantization: ``x = (q - zero_point) * scale`` with one
/// float32 ``scale`` (finite, non-zero) and int32 ``zero_point``, stored inline.
///
/// Raises:
///     hurray.InvalidDescriptorError: scale is zero, NaN or infinite.
#[pyclass(module = "hurray", frozen)]
pub struct PerTensorAffine {
    pub scale: f32,
    pub zero_point: i32,
}

#[pymethods]
impl PerTensorAffine {
    #[new]
    fn new(scale: f32, zero_point: i32) -> PyResult<Self> {
        if !scale.is_finite() || scale == 0.0 {
            return Err(InvalidDescriptorError::new_err(format!(
                "per-tensor scale {scale} must be finite and non-zero (quantization.md §8.1)"
            )));
        }
        Ok(PerTensorAffine { scale, zero_point })
    }
    /// The scale (float32 value).
    #[getter]
    fn scale(&self) -> f32 {
        self.scale
    }
    /// The zero point.
    #[getter]
    fn zero_point(&self) -> i32 {
        self.zero_point
    }
    fn __repr__(&self) -> String {
        format!(
            "PerTensorAffine(scale={}, zero_point={})",
            self.scale, self.zero_point
        )
    }
}

/// Per-channel affine quantization along ``axis``: one float32 scale (and, when
/// asymmetric, one int32 zero point) per channel, in auxiliary buffers.
/// Build with :meth:`symmetric` or :meth:`asymmetric`.
#[pyclass(module = "hurray", frozen)]
pub struct PerChannelAffine {
    pub axis: u32,
    pub scale_buffer_index: u32,
    pub zero_point_buffer_index: Option<u32>,
}

#[pymethods]
impl PerChannelAffine {
    /// Symmetric scheme: scales in buffer ``scale_buffer_index``.
    #[staticmethod]
    fn symmetric(axis: u32, scale_buffer_index: u32) -> Self {
        PerChannelAffine {
            axis,
            scale_buffer_index,
            zero_point_buffer_index: None,
        }
    }
    /// Asymmetric scheme: scales and int32 zero points in two buffers.
    #[staticmethod]
    fn asymmetric(axis: u32, scale_buffer_index: u32, zero_point_buffer_index: u32) -> Self {
        PerChannelAffine {
            axis,
            scale_buffer_index,
            zero_point_buffer_index: Some(zero_point_buffer_index),
        }
    }
    /// The channel axis.
    #[getter]
    fn axis(&self) -> u32 {
        self.axis
    }
    /// Buffer index of the scales.
    #[getter]
    fn scale_buffer_index(&self) -> u32 {
        self.scale_buffer_index
    }
    /// Buffer index of the zero points, ``None`` when symmetric.
    #[getter]
    fn zero_point_buffer_index(&self) -> Option<u32> {
        self.zero_point_buffer_index
    }
    fn __repr__(&self) -> String {
        match self.zero_point_buffer_index {
            None => format!(
                "PerChannelAffine.symmetric(axis={}, scale_buffer_index={})",
                self.axis, self.scale_buffer_index
            ),
            Some(z) => format!(
                "PerChannelAffine.asymmetric(axis={}, scale_buffer_index={}, zero_point_buffer_index={z})",
                self.axis, self.scale_buffer_index
            ),
        }
    }
}

fn scale_type_of(d: &Bound<'_, PyAny>) -> PyResult<ScaleType> {
    let d = d
        .cast::<Dtype>()
        .map_err(|_| PyTypeError::new_err("scale_type must be a hurray.Dtype"))?;
    match d.get().t {
        ElementType::Float16 => Ok(ScaleType::F16),
        ElementType::Bfloat16 => Ok(ScaleType::Bf16),
        ElementType::Float32 => Ok(ScaleType::F32),
        t => Err(InvalidDescriptorError::new_err(format!(
            "scale_type must be float16, bfloat16 or float32, not {t}"
        ))),
    }
}

/// Per-block affine quantization: blocks of ``block_size`` elements (a power of
/// two >= 2) along ``axis``, one scale of ``scale_type`` (float16, bfloat16 or
/// float32) per block, and int32 zero points when asymmetric.
/// Build with :meth:`symmetric` or :meth:`asymmetric`.
#[pyclass(module = "hurray", frozen)]
pub struct PerBlockAffine {
    pub axis: u32,
    pub block_size: u32,
    pub scale_buffer_index: u32,
    pub zero_point_buffer_index: Option<u32>,
    pub scale_type: ScaleType,
}

#[pymethods]
impl PerBlockAffine {
    /// Symmetric scheme.
    ///
    /// Raises:
    ///     TypeError: ``scale_type`` is not a :class:`Dtype`.
    ///     hurray.InvalidDescriptorError: bad block size or scale type.
    #[staticmethod]
    fn symmetric(
        axis: u32,
        block_size: u32,
        scale_buffer_index: u32,
        scale_type: &Bound<'_, PyAny>,
    ) -> PyResult<Self> {
        let scale_type = scale_type_of(scale_type)?;
        check_block(block_size, 2, u32::MAX, "per-block")?;
        Ok(PerBlockAffine {
            axis,
            block_size,
            scale_buffer_index,
            zero_point_buffer_index: None,
            scale_type,
        })
    }
    /// Asymmetric scheme (int32 zero points in ``zero_point_buffer_index``).
    #[staticmethod]
    fn asymmetric(
        axis: u32,
        block_size: u32,
        scale_buffer_index: u32,
        zero_point_buffer_index: u32,
        scale_type: &Bound<'_, PyAny>,
    ) -> PyResult<Self> {
        let scale_type = scale_type_of(scale_type)?;
        check_block(block_size, 2, u32::MAX, "per-block")?;
        Ok(PerBlockAffine {
            axis,
            block_size,
            scale_buffer_index,
            zero_point_buffer_index: Some(zero_point_buffer_index),
            scale_type,
        })
    }
    /// The blocked axis.
    #[getter]
    fn axis(&self) -> u32 {
        self.axis
    }
    /// Elements per block.
    #[getter]
    fn block_size(&self) -> u32 {
        self.block_size
    }
    /// Buffer index of the scales.
    #[getter]
    fn scale_buffer_index(&self) -> u32 {
        self.scale_buffer_index
    }
    /// Buffer index of the zero points, ``None`` when symmetric.
    #[getter]
    fn zero_point_buffer_index(&self) -> Option<u32> {
        self.zero_point_buffer_index
    }
    /// Element type of the scales (a fresh :class:`Dtype`).
    #[getter]
    fn scale_type(&self) -> Dtype {
        Dtype {
            t: match self.scale_type {
                ScaleType::F16 => ElementType::Float16,
                ScaleType::Bf16 => ElementType::Bfloat16,
                ScaleType::F32 => ElementType::Float32,
            },
        }
    }
    fn __repr__(&self) -> String {
        format!(
            "PerBlockAffine(axis={}, block_size={}, scale_buffer_index={}, zero_point_buffer_index={})",
            self.axis,
            self.block_size,
            self.scale_buffer_index,
            zp_repr(self.zero_point_buffer_index)
        )
    }
}

/// NF4 quantization: uint4 codes into the NormalFloat4 codebook, one float32
/// absmax per block of ``block_size`` (a power of two >= 8) along ``axis``.
#[pyclass(module = "hurray", frozen)]
#[allow(clippy::upper_case_acronyms)]
pub struct NF4 {
    pub axis: u32,
    pub block_size: u32,
    pub scale_buffer_index: u32,
}

#[pymethods]
impl NF4 {
    #[new]
    fn new(axis: u32, block_size: u32, scale_buffer_index: u32) -> PyResult<Self> {
        check_block(block_size, 8, u32::MAX, "NF4")?;
        Ok(NF4 {
            axis,
            block_size,
            scale_buffer_index,
        })
    }
    /// The blocked axis.
    #[getter]
    fn axis(&self) -> u32 {
        self.axis
    }
    /// Elements per block.
    #[getter]
    fn block_size(&self) -> u32 {
        self.block_size
    }
    /// Buffer index of the absmax scales.
    #[getter]
    fn scale_buffer_index(&self) -> u32 {
        self.scale_buffer_index
    }
    fn __repr__(&self) -> String {
        format!(
            "NF4(axis={}, block_size={}, scale_buffer_index={})",
            self.axis, self.block_size, self.scale_buffer_index
        )
    }
}

/// OCP Microscaling (MX) quantization: one e8m0 scale byte per block of
/// ``block_size`` (a power of two in [16, 2048]) along ``axis``.
#[pyclass(module = "hurray", frozen)]
#[allow(clippy::upper_case_acronyms)]
pub struct MXFP {
    pub axis: u32,
    pub block_size: u32,
    pub scale_buffer_index: u32,
}

#[pymethods]
impl MXFP {
    #[new]
    fn new(axis: u32, block_size: u32, scale_buffer_index: u32) -> PyResult<Self> {
        check_block(block_size, 16, 2048, "MXFP")?;
        Ok(MXFP {
            axis,
            block_size,
            scale_buffer_index,
        })
    }
    /// The blocked axis.
    #[getter]
    fn axis(&self) -> u32 {
        self.axis
    }
    /// Elements per block.
    #[getter]
    fn block_size(&self) -> u32 {
        self.block_size
    }
    /// Buffer index of the e8m0 scales.
    #[getter]
    fn scale_buffer_index(&self) -> u32 {
        self.scale_buffer_index
    }
    fn __repr__(&self) -> String {
        format!(
            "MXFP(axis={}, block_size={}, scale_buffer_index={})",
            self.axis, self.block_size, self.scale_buffer_index
        )
    }
}

/// The core scheme for a scheme object, or an `InvalidDescriptorError`.
pub fn scheme_of(obj: &Bound<'_, PyAny>) -> PyResult<Scheme> {
    if let Ok(q) = obj.cast::<PerTensorAffine>() {
        let q = q.get();
        return Ok(Scheme::PerTensor {
            scale: q.scale,
            zero_point: q.zero_point,
        });
    }
    if let Ok(q) = obj.cast::<PerChannelAffine>() {
        let q = q.get();
        return Ok(Scheme::PerChannel {
            axis: q.axis,
            scale_buffer_index: q.scale_buffer_index,
            zero_point_buffer_index: q.zero_point_buffer_index,
            scale_type: ScaleType::F32,
        });
    }
    if let Ok(q) = obj.cast::<PerBlockAffine>() {
        let q = q.get();
        return Ok(Scheme::PerBlock {
            axis: q.axis,
            block_size: q.block_size,
            scale_buffer_index: q.scale_buffer_index,
            zero_point_buffer_index: q.zero_point_buffer_index,
            scale_type: q.scale_type,
        });
    }
    if let Ok(q) = obj.cast::<NF4>() {
        let q = q.get();
        return Ok(Scheme::Nf4 {
            axis: q.axis,
            block_size: q.block_size,
            scale_buffer_index: q.scale_buffer_index,
        });
    }
    if let Ok(q) = obj.cast::<MXFP>() {
        let q = q.get();
        return Ok(Scheme::Mxfp {
            axis: q.axis,
            block_size: q.block_size,
            scale_buffer_index: q.scale_buffer_index,
        });
    }
    Err(InvalidDescriptorError::new_err(format!(
        "quantization must be PerTensorAffine, PerChannelAffine, PerBlockAffine, NF4 or MXFP, not {}",
        obj.get_type().name()?
    )))
}

/// A scheme object for a decoded scheme (`None` for opaque schemes).
pub fn scheme_object(py: Python<'_>, s: &Scheme) -> PyResult<Option<Py<PyAny>>> {
    Ok(Some(match *s {
        Scheme::PerTensor { scale, zero_point } => {
            Py::new(py, PerTensorAffine { scale, zero_point })?.into_any()
        }
        Scheme::PerChannel {
            axis,
            scale_buffer_index,
            zero_point_buffer_index,
            ..
        } => Py::new(
            py,
            PerChannelAffine {
                axis,
                scale_buffer_index,
                zero_point_buffer_index,
            },
        )?
        .into_any(),
        Scheme::PerBlock {
            axis,
            block_size,
            scale_buffer_index,
            zero_point_buffer_index,
            scale_type,
        } => Py::new(
            py,
            PerBlockAffine {
                axis,
                block_size,
                scale_buffer_index,
                zero_point_buffer_index,
                scale_type,
            },
        )?
        .into_any(),
        Scheme::Nf4 {
            axis,
            block_size,
            scale_buffer_index,
        } => Py::new(
            py,
            NF4 {
                axis,
                block_size,
                scale_buffer_index,
            },
        )?
        .into_any(),
        Scheme::Mxfp {
            axis,
            block_size,
            scale_buffer_index,
        } => Py::new(
            py,
            MXFP {
                axis,
                block_size,
                scale_buffer_index,
            },
        )?
        .into_any(),
        Scheme::Opaque { .. } => return Ok(None),
    }))
}

/// Advisory statistics about a tensor's (dequantized) values. Every argument is
/// keyword-only; the validity mask follows from which are given. Grouped fields
/// (``value_min``/``value_max``/``value_abs_max``, ``value_mean``/``value_stddev``,
/// ``nm_n``/``nm_m``, ``has_nan``/``has_inf``) are given all together or not at all.
///
/// Raises:
///     hurray.InvalidDescriptorError: a group is only partly given.
#[pyclass(module = "hurray", frozen)]
pub struct Statistics {
    pub s: CoreStats,
}

#[pymethods]
impl Statistics {
    #[new]
    #[pyo3(signature = (*, nnz=None, sparsity_ratio=None, value_min=None, value_max=None, value_abs_max=None, value_mean=None, value_stddev=None, nm_n=None, nm_m=None, has_nan=None, has_inf=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        nnz: Option<u64>,
        sparsity_ratio: Option<f64>,
        value_min: Option<f64>,
        value_max: Option<f64>,
        value_abs_max: Option<f64>,
        value_mean: Option<f64>,
        value_stddev: Option<f64>,
        nm_n: Option<u8>,
        nm_m: Option<u8>,
        has_nan: Option<bool>,
        has_inf: Option<bool>,
    ) -> PyResult<Self> {
        let mut s = CoreStats::default();
        let group = |given: &[bool], names: &str| -> PyResult<bool> {
            match (given.iter().all(|&g| g), given.iter().any(|&g| g)) {
                (true, _) => Ok(true),
                (false, false) => Ok(false),
                _ => Err(InvalidDescriptorError::new_err(format!(
                    "statistics fields {names} must be given together or not at all"
                ))),
            }
        };
        if let Some(v) = nnz {
            s.nnz = v;
            s.computed_mask |= stat_mask::NNZ_VALID;
        }
        if let Some(v) = sparsity_ratio {
            s.sparsity_ratio = v;
            s.computed_mask |= stat_mask::SPARSITY_VALID;
        }
        if group(
            &[
                value_min.is_some(),
                value_max.is_some(),
                value_abs_max.is_some(),
            ],
            "value_min, value_max, value_abs_max",
        )? {
            s.value_min = value_min.unwrap_or_default();
            s.value_max = value_max.unwrap_or_default();
            s.value_abs_max = value_abs_max.unwrap_or_default();
            s.computed_mask |= stat_mask::VALUE_RANGE_VALID;
        }
        if group(
            &[value_mean.is_some(), value_stddev.is_some()],
            "value_mean, value_stddev",
        )? {
            s.value_mean = value_mean.unwrap_or_default();
            s.value_stddev = value_stddev.unwrap_or_default();
            s.computed_mask |= stat_mask::VALUE_STATS_VALID;
        }
        if group(&[nm_n.is_some(), nm_m.is_some()], "nm_n, nm_m")? {
            s.nm_n = nm_n.unwrap_or_default();
            s.nm_m = nm_m.unwrap_or_default();
            s.computed_mask |= stat_mask::NM_SPARSITY_VALID;
        }
        if group(&[has_nan.is_some(), has_inf.is_some()], "has_nan, has_inf")? {
            s.has_nan = u8::from(has_nan.unwrap_or_default());
            s.has_inf = u8::from(has_inf.unwrap_or_default());
            s.computed_mask |= stat_mask::NAN_INF_VALID;
        }
        Ok(Statistics { s })
    }

    /// Bit mask of the valid fields (0x01 nnz, 0x02 sparsity, 0x04 range, 0x08
    /// mean/stddev, 0x10 N:M, 0x20 NaN/Inf).
    #[getter]
    fn computed_mask(&self) -> u32 {
        self.s.computed_mask
    }
    /// Number of non-zero elements, or ``None``.
    #[getter]
    fn nnz(&self) -> Option<u64> {
        self.has(stat_mask::NNZ_VALID).then_some(self.s.nnz)
    }
    /// ``(N - nnz) / N`` in [0, 1], or ``None``.
    #[getter]
    fn sparsity_ratio(&self) -> Option<f64> {
        self.has(stat_mask::SPARSITY_VALID)
            .then_some(self.s.sparsity_ratio)
    }
    /// Smallest value, or ``None``.
    #[getter]
    fn value_min(&self) -> Option<f64> {
        self.has(stat_mask::VALUE_RANGE_VALID)
            .then_some(self.s.value_min)
    }
    /// Largest value, or ``None``.
    #[getter]
    fn value_max(&self) -> Option<f64> {
        self.has(stat_mask::VALUE_RANGE_VALID)
            .then_some(self.s.value_max)
    }
    /// Largest absolute value, or ``None``.
    #[getter]
    fn value_abs_max(&self) -> Option<f64> {
        self.has(stat_mask::VALUE_RANGE_VALID)
            .then_some(self.s.value_abs_max)
    }
    /// Arithmetic mean, or ``None``.
    #[getter]
    fn value_mean(&self) -> Option<f64> {
        self.has(stat_mask::VALUE_STATS_VALID)
            .then_some(self.s.value_mean)
    }
    /// Population standard deviation, or ``None``.
    #[getter]
    fn value_stddev(&self) -> Option<f64> {
        self.has(stat_mask::VALUE_STATS_VALID)
            .then_some(self.s.value_stddev)
    }
    /// N of N:M structured sparsity, or ``None``.
    #[getter]
    fn nm_n(&self) -> Option<u8> {
        self.has(stat_mask::NM_SPARSITY_VALID)
            .then_some(self.s.nm_n)
    }
    /// M of N:M structured sparsity, or ``None``.
    #[getter]
    fn nm_m(&self) -> Option<u8> {
        self.has(stat_mask::NM_SPARSITY_VALID)
            .then_some(self.s.nm_m)
    }
    /// Whether a NaN is present, or ``None``.
    #[getter]
    fn has_nan(&self) -> Option<bool> {
        self.has(stat_mask::NAN_INF_VALID)
            .then_some(self.s.has_nan != 0)
    }
    /// Whether an infinity is present, or ``None``.
    #[getter]
    fn has_inf(&self) -> Option<bool> {
        self.has(stat_mask::NAN_INF_VALID)
            .then_some(self.s.has_inf != 0)
    }
    fn __repr__(&self) -> String {
        format!("Statistics(computed_mask=0x{:X})", self.s.computed_mask)
    }
}

impl Statistics {
    fn has(&self, bit: u32) -> bool {
        self.s.computed_mask & bit != 0
    }
}

/// This tensor is the box ``[shard_offset[k], shard_offset[k] + shape[k])`` of a
/// parent tensor of shape ``parent_shape``. Both lists hold non-negative ints and
/// have the tensor's rank.
///
/// Raises:
///     OverflowError: a negative entry.
///     hurray.InvalidDescriptorError: the lists differ in length.
#[pyclass(module = "hurray", frozen)]
pub struct Shard {
    pub s: CoreShard,
}

#[pymethods]
impl Shard {
    #[new]
    fn new(parent_shape: Seq<u64>, shard_offset: Seq<u64>) -> PyResult<Self> {
        let (parent_shape, shard_offset) = (parent_shape.0, shard_offset.0);
        if parent_shape.len() != shard_offset.len() {
            return Err(InvalidDescriptorError::new_err(format!(
                "parent_shape has {} entries but shard_offset has {}",
                parent_shape.len(),
                shard_offset.len()
            )));
        }
        Ok(Shard {
            s: CoreShard {
                parent_shape,
                offset: shard_offset,
            },
        })
    }
    /// Shape of the whole (parent) tensor.
    #[getter]
    fn parent_shape<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, pyo3::types::PyTuple>> {
        pyo3::types::PyTuple::new(py, &self.s.parent_shape)
    }
    /// Position of this shard's first element in the parent.
    #[getter]
    fn shard_offset<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, pyo3::types::PyTuple>> {
        pyo3::types::PyTuple::new(py, &self.s.offset)
    }
    fn __repr__(&self) -> String {
        format!(
            "Shard(parent_shape={:?}, shard_offset={:?})",
            self.s.parent_shape, self.s.offset
        )
    }
}

/// Registers the classes.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PerTensorAffine>()?;
    m.add_class::<PerChannelAffine>()?;
    m.add_class::<PerBlockAffine>()?;
    m.add_class::<NF4>()?;
    m.add_class::<MXFP>()?;
    m.add_class::<Statistics>()?;
    m.add_class::<Shard>()?;
    Ok(())
}
