//! `hurray.Dtype`: a frozen value naming one element type (`hurray_core::ElementType`).

use crate::errors::InvalidDescriptorError;
use hurray_core::{ElementType, Storage};
use pyo3::exceptions::PyNotImplementedError;
use pyo3::prelude::*;
use pyo3::pyclass::CompareOp;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyDict;

/// An element type of the Hurray format (``float32``, ``int4``, ``bfloat16``, ...).
///
/// Not constructible: use the constants (``hurray.float32``,
/// ``hurray.dtype.int4``) or :meth:`Dtype.from_name`. Compare with ``==``; the hash
/// is the wire tag.
#[pyclass(module = "hurray", frozen)]
#[derive(Clone, Copy)]
pub struct Dtype {
    pub t: ElementType,
}

/// The NumPy-representable set ("I-set"): tier 1 plus complex64/complex128.
pub fn in_interop_set(t: ElementType) -> bool {
    use ElementType::*;
    matches!(
        t,
        Bool | Int8
            | Uint8
            | Int16
            | Uint16
            | Int32
            | Uint32
            | Int64
            | Uint64
            | Float16
            | Bfloat16
            | Float32
            | Float64
            | Complex64
            | Complex128
    )
}

/// The reference API's name of `t` (`Dtype.name`, `python-api.md` §3.1): the spec's
/// name, `"extension"` for every private and unknown type. Messages use
/// `ElementType::name` (`"private(0xf3)"`), the rendering every language shares.
fn reference_name(t: ElementType) -> &'static str {
    match t {
        ElementType::Private(_) | ElementType::Unknown(_) => "extension",
        t => t.name(),
    }
}

/// Bits per element (0 for private and unknown types).
pub fn bit_width(t: ElementType) -> u32 {
    t.storage().map_or(0, Storage::bits)
}

static CONSTANTS: PyOnceLock<Py<PyDict>> = PyOnceLock::new();

/// The 26 dtype constants, one object per element type, shared by `hurray` and
/// `hurray.dtype` (so `hurray.float32 is hurray.dtype.float32`).
pub fn constants(py: Python<'_>) -> PyResult<&Bound<'_, PyDict>> {
    let d = CONSTANTS.get_or_try_init(py, || -> PyResult<Py<PyDict>> {
        let d = PyDict::new(py);
        for &t in ElementType::ALL {
            d.set_item(t.name(), Py::new(py, Dtype { t })?)?;
        }
        Ok(d.unbind())
    })?;
    Ok(d.bind(py))
}

/// The shared constant object for `t` (a fresh object for private/unknown types).
pub fn object(py: Python<'_>, t: ElementType) -> PyResult<Py<Dtype>> {
    if let Some(o) = constants(py)?.get_item(t.name())? {
        return Ok(o.cast_into::<Dtype>()?.unbind());
    }
    Py::new(py, Dtype { t })
}

#[pymethods]
impl Dtype {
    /// Looks a dtype up by its canonical lowercase name (``"float32"``, ``"int4"``).
    ///
    /// Raises:
    ///     hurray.InvalidDescriptorError: the name is not an element type of the format.
    #[classmethod]
    fn from_name(cls: &Bound<'_, pyo3::types::PyType>, name: &str) -> PyResult<Py<Dtype>> {
        let t = ElementType::from_name(name).ok_or_else(|| {
            InvalidDescriptorError::new_err(format!("unknown dtype name {name:?}"))
        })?;
        object(cls.py(), t)
    }

    /// Canonical lowercase name; ``"extension"`` for a private or unknown type decoded
    /// from data (the reference API's value, ``python-api.md`` §3.1). The rendering
    /// every language shares (``"private(0xf3)"``) is ``hurray.type_name(d.tag)``.
    #[getter]
    fn name(&self) -> &'static str {
        reference_name(self.t)
    }

    /// The wire tag (``0x03`` for float32; the tag itself for a private or unknown
    /// type decoded from data).
    #[getter]
    fn tag(&self) -> u8 {
        self.t.tag()
    }

    /// Bits per element (1 for bool, 4 for int4, 0 for extension types).
    #[getter]
    fn bit_width(&self) -> u32 {
        bit_width(self.t)
    }

    /// True for signed and unsigned integers, including sub-byte ones (not bool).
    #[getter]
    fn is_integer(&self) -> bool {
        use ElementType::*;
        matches!(
            self.t,
            Int8 | Uint8
                | Int16
                | Uint16
                | Int32
                | Uint32
                | Int64
                | Uint64
                | Int4
                | Uint4
                | Int2
                | Uint2
        )
    }

    /// True for every floating type, including float8/6/4, float128 and complex.
    #[getter]
    fn is_float(&self) -> bool {
        use ElementType::*;
        matches!(
            self.t,
            Float16
                | Bfloat16
                | Float32
                | Float64
                | Float8E4m3
                | Float8E5m2
                | Float8E8m0
                | Float4E2m1
                | Float6E2m3
                | Float6E3m2
                | Float128
                | Complex64
                | Complex128
        )
    }

    /// False only for unsigned integers, bool, float8_e8m0 and extension types.
    #[getter]
    fn is_signed(&self) -> bool {
        use ElementType::*;
        !matches!(
            self.t,
            Uint8
                | Uint16
                | Uint32
                | Uint64
                | Uint4
                | Uint2
                | Bool
                | Float8E8m0
                | Private(_)
                | Unknown(_)
        )
    }

    /// True when an element takes fewer than 8 bits (bool, int4, float6, ...).
    #[getter]
    fn is_sub_byte(&self) -> bool {
        let w = bit_width(self.t);
        w > 0 && w < 8
    }

    /// 1 when the wire tag is below 0x40 (every implementation supports it), else 2.
    #[getter]
    fn tier(&self) -> u8 {
        if self.t.tag() < 0x40 {
            1
        } else {
            2
        }
    }

    /// True for tier-1 types (the Array API set).
    #[getter]
    fn is_array_api(&self) -> bool {
        self.tier() == 1
    }

    fn __repr__(&self) -> String {
        format!("hurray.Dtype('{}')", self.name())
    }

    fn __str__(&self) -> &'static str {
        self.name()
    }

    fn __hash__(&self) -> u64 {
        u64::from(self.t.tag())
    }

    fn __richcmp__(&self, other: &Bound<'_, PyAny>, op: CompareOp) -> PyResult<Py<PyAny>> {
        let py = other.py();
        let Ok(o) = other.cast::<Dtype>() else {
            return Ok(match op {
                CompareOp::Eq => false.into_pyobject(py)?.to_owned().into_any().unbind(),
                CompareOp::Ne => true.into_pyobject(py)?.to_owned().into_any().unbind(),
                _ => py.NotImplemented(),
            });
        };
        let same = o.get().t == self.t;
        match op {
            CompareOp::Eq => Ok(same.into_pyobject(py)?.to_owned().into_any().unbind()),
            CompareOp::Ne => Ok((!same).into_pyobject(py)?.to_owned().into_any().unbind()),
            _ => Err(PyNotImplementedError::new_err("dtypes are not ordered")),
        }
    }
}
