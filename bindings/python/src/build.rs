//! The construction functions (`zeros`, `ones`, `full`, `empty`, their `*_like`
//! forms, `arange`, `linspace`, `eye`): new owned, row-major, 64-byte-aligned
//! buffers, little-endian, bool bit-packed LSB-first with zero padding.

use crate::device::{self, Device};
use crate::dtype::{self, Dtype};
use crate::errors::{InvalidDescriptorError, UnsupportedError};
use crate::tensor::{assemble, handle_for, parse_shape, Tensor};
use half::{bf16, f16};
use hurray_core::{ElementType, MemoryClass, TensorDescriptor, DYN};
use hurray_io::{AlignedBuf, Buffer};
use pyo3::exceptions::{PyOverflowError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyComplex, PyFloat, PyInt};

/// A value to store, before conversion to an element type.
#[derive(Clone, Copy)]
enum Value {
    Bool(bool),
    Int(i128),
    Float(f64),
    Complex(f64, f64),
}

fn dtype_arg(dtype: Option<&Bound<'_, PyAny>>) -> PyResult<Option<ElementType>> {
    let Some(d) = dtype.filter(|d| !d.is_none()) else {
        return Ok(None);
    };
    let t = d
        .cast::<Dtype>()
        .map_err(|_| {
            InvalidDescriptorError::new_err("dtype must be a hurray.Dtype (e.g. hurray.float32)")
        })?
        .get()
        .t;
    if !dtype::in_interop_set(t) {
        return Err(UnsupportedError::new_err(format!(
            "construction functions support NumPy-representable dtypes only, not {}",
            t.name()
        )));
    }
    Ok(Some(t))
}

fn device_arg(device: Option<&Bound<'_, PyAny>>) -> PyResult<Option<Device>> {
    let Some(d) = device.filter(|d| !d.is_none()) else {
        return Ok(None);
    };
    let d = *d
        .cast::<Device>()
        .map_err(|_| {
            InvalidDescriptorError::new_err(
                "device must be a hurray.Device (e.g. hurray.device.cpu)",
            )
        })?
        .get();
    Ok(Some(Device { id: 0, ..d }))
}

fn cpu() -> Device {
    Device {
        tag: hurray_core::DeviceTag::Cpu,
        id: 0,
        class: MemoryClass::Standard,
    }
}

/// Little-endian bytes of one element (whole-byte types only).
fn encode(t: ElementType, v: Value) -> PyResult<Vec<u8>> {
    use ElementType::*;
    let f = |v: Value| -> f64 {
        match v {
            Value::Bool(b) => f64::from(u8::from(b)),
            Value::Int(i) => i as f64,
            Value::Float(x) => x,
            Value::Complex(r, _) => r,
        }
    };
    let int = |v: Value, lo: i128, hi: i128| -> PyResult<i128> {
        let i = match v {
            Value::Int(i) => i,
            Value::Bool(b) => i128::from(b),
            // arange/linspace cast floats toward zero (saturating).
            Value::Float(x) => x.trunc().clamp(lo as f64, hi as f64) as i128,
            Value::Complex(r, _) => r.trunc().clamp(lo as f64, hi as f64) as i128,
        };
        if i < lo || i > hi {
            return Err(PyOverflowError::new_err(format!(
                "{i} is out of range for {}",
                t.name()
            )));
        }
        Ok(i)
    };
    Ok(match t {
        Int8 => (int(v, i8::MIN.into(), i8::MAX.into())? as i8)
            .to_le_bytes()
            .to_vec(),
        Uint8 => (int(v, 0, u8::MAX.into())? as u8).to_le_bytes().to_vec(),
        Int16 => (int(v, i16::MIN.into(), i16::MAX.into())? as i16)
            .to_le_bytes()
            .to_vec(),
        Uint16 => (int(v, 0, u16::MAX.into())? as u16).to_le_bytes().to_vec(),
        Int32 => (int(v, i32::MIN.into(), i32::MAX.into())? as i32)
            .to_le_bytes()
            .to_vec(),
        Uint32 => (int(v, 0, u32::MAX.into())? as u32).to_le_bytes().to_vec(),
        Int64 => (int(v, i64::MIN.into(), i64::MAX.into())? as i64)
            .to_le_bytes()
            .to_vec(),
        Uint64 => (int(v, 0, u64::MAX.into())? as u64).to_le_bytes().to_vec(),
        Float16 => f16::from_f64(f(v)).to_le_bytes().to_vec(),
        Bfloat16 => bf16::from_f64(f(v)).to_le_bytes().to_vec(),
        Float32 => (f(v) as f32).to_le_bytes().to_vec(),
        Float64 => f(v).to_le_bytes().to_vec(),
        Complex64 | Complex128 => {
            let (r, i) = match v {
                Value::Complex(r, i) => (r, i),
                other => (f(other), 0.0),
            };
            if t == Complex64 {
                [(r as f32).to_le_bytes(), (i as f32).to_le_bytes()].concat()
            } else {
                [r.to_le_bytes(), i.to_le_bytes()].concat()
            }
        }
        other => {
            return Err(UnsupportedError::new_err(format!(
                "cannot encode {} values",
                other.name()
            )))
        }
    })
}

/// What to put in a new tensor.
enum Fill<'a> {
    /// All zero bytes.
    Zero,
    /// The same value everywhere (encoded once, then tiled).
    Const(Value),
    /// A value (or zero) per flat row-major index.
    Each(&'a dyn Fn(u64) -> Option<Value>),
}

/// A new row-major tensor of `shape` filled as `fill` says.
fn make(
    py: Python<'_>,
    shape: Vec<u64>,
    t: ElementType,
    dev: Device,
    fill: Fill<'_>,
) -> PyResult<Tensor> {
    let mut d = TensorDescriptor::dense(t, &shape).map_err(|e| crate::errors::descriptor(&e))?;
    let n = hurray_core::element_count(&shape).map_err(|e| crate::errors::descriptor(&e))?;
    let size = usize::try_from(d.buffers[0].byte_size)
        .map_err(|_| PyOverflowError::new_err("tensor size exceeds the address space"))?;
    let mut buf = AlignedBuf::zeroed(size).ok_or_else(|| {
        pyo3::exceptions::PyMemoryError::new_err(format!("cannot allocate {size} bytes"))
    })?;
    let out = buf.as_mut_slice();
    match fill {
        Fill::Zero => {}
        Fill::Const(Value::Bool(b)) if t == ElementType::Bool => {
            if b {
                out.fill(0xFF);
                if n % 8 != 0 {
                    out[size - 1] = (1u8 << (n % 8)) - 1;
                }
            }
        }
        Fill::Const(v) => {
            let e = encode(t, v)?;
            if n > 0 && e.iter().any(|&b| b != 0) {
                for chunk in out.chunks_exact_mut(e.len()) {
                    chunk.copy_from_slice(&e);
                }
            }
        }
        Fill::Each(f) => {
            let w = if n == 0 { 0 } else { size / n as usize };
            for i in 0..n {
                match f(i) {
                    None => {}
                    Some(Value::Bool(true)) if t == ElementType::Bool => {
                        out[(i / 8) as usize] |= 1 << (i % 8);
                    }
                    Some(Value::Bool(false)) if t == ElementType::Bool => {}
                    Some(v) => {
                        let at = i as usize * w;
                        out[at..at + w].copy_from_slice(&encode(t, v)?);
                    }
                }
            }
        }
    }
    d.buffers[0] = handle_for(size, &dev);
    let dev_obj = if dev.tag == hurray_core::DeviceTag::Cpu && dev.class == MemoryClass::Standard {
        device::cpu(py)?
    } else {
        Py::new(py, dev)?
    };
    assemble(py, d, vec![Buffer::from_aligned(buf)], None, Some(dev_obj))
}

fn to_value(t: ElementType, v: &Bound<'_, PyAny>) -> PyResult<Value> {
    use ElementType::*;
    match t {
        Bool => {
            if let Ok(b) = v.cast::<PyBool>() {
                Ok(Value::Bool(b.is_true()))
            } else {
                Err(PyTypeError::new_err(
                    "a bool tensor needs a bool fill_value",
                ))
            }
        }
        Int8 | Uint8 | Int16 | Uint16 | Int32 | Uint32 | Int64 | Uint64 => {
            if v.is_instance_of::<PyFloat>() || v.is_instance_of::<PyComplex>() {
                return Err(PyTypeError::new_err(format!(
                    "an integer tensor ({}) needs an int fill_value, not {}",
                    t.name(),
                    v.get_type().name()?
                )));
            }
            Ok(Value::Int(v.extract::<i128>()?))
        }
        Complex64 | Complex128 => {
            if let Ok(c) = v.cast::<PyComplex>() {
                Ok(Value::Complex(c.real(), c.imag()))
            } else {
                Ok(Value::Float(v.extract::<f64>()?))
            }
        }
        _ => Ok(Value::Float(v.extract::<f64>()?)),
    }
}

fn infer(v: &Bound<'_, PyAny>) -> PyResult<ElementType> {
    if v.is_instance_of::<PyBool>() {
        Ok(ElementType::Bool)
    } else if v.is_instance_of::<PyComplex>() {
        Ok(ElementType::Complex128)
    } else if v.is_instance_of::<PyFloat>() {
        Ok(ElementType::Float64)
    } else if v.is_instance_of::<PyInt>() {
        Ok(ElementType::Int64)
    } else {
        Err(InvalidDescriptorError::new_err(format!(
            "cannot infer a dtype from a fill_value of type {}; pass dtype=",
            v.get_type().name()?
        )))
    }
}

fn one(t: ElementType) -> Value {
    match t {
        ElementType::Bool => Value::Bool(true),
        ElementType::Complex64 | ElementType::Complex128 => Value::Complex(1.0, 0.0),
        ElementType::Float16
        | ElementType::Bfloat16
        | ElementType::Float32
        | ElementType::Float64 => Value::Float(1.0),
        _ => Value::Int(1),
    }
}

/// A tensor of zeros. ``shape``: sequence of ints; ``dtype`` defaults to float64.
///
/// Raises:
///     hurray.InvalidDescriptorError: negative dimension, rank > 64, ``dtype``/``device``
///         of the wrong type.
///     hurray.UnsupportedError: a dtype without a NumPy equivalent (e.g. int4).
#[pyfunction]
#[pyo3(signature = (shape, *, dtype=None, device=None))]
pub fn zeros(
    py: Python<'_>,
    shape: &Bound<'_, PyAny>,
    dtype: Option<&Bound<'_, PyAny>>,
    device: Option<&Bound<'_, PyAny>>,
) -> PyResult<Tensor> {
    let shape = parse_shape(shape)?;
    let t = dtype_arg(dtype)?.unwrap_or(ElementType::Float64);
    make(
        py,
        shape,
        t,
        device_arg(device)?.unwrap_or_else(cpu),
        Fill::Zero,
    )
}

/// A tensor of ones (complex: 1+0j; bool: every bit set). Arguments as :func:`zeros`.
#[pyfunction]
#[pyo3(signature = (shape, *, dtype=None, device=None))]
pub fn ones(
    py: Python<'_>,
    shape: &Bound<'_, PyAny>,
    dtype: Option<&Bound<'_, PyAny>>,
    device: Option<&Bound<'_, PyAny>>,
) -> PyResult<Tensor> {
    let shape = parse_shape(shape)?;
    let t = dtype_arg(dtype)?.unwrap_or(ElementType::Float64);
    let v = one(t);
    make(
        py,
        shape,
        t,
        device_arg(device)?.unwrap_or_else(cpu),
        Fill::Const(v),
    )
}

/// A tensor of uninitialised values (this implementation zero-fills). Arguments as :func:`zeros`.
#[pyfunction]
#[pyo3(signature = (shape, *, dtype=None, device=None))]
pub fn empty(
    py: Python<'_>,
    shape: &Bound<'_, PyAny>,
    dtype: Option<&Bound<'_, PyAny>>,
    device: Option<&Bound<'_, PyAny>>,
) -> PyResult<Tensor> {
    zeros(py, shape, dtype, device)
}

/// A tensor whose every element is ``fill_value``. Without ``dtype``: bool -> bool,
/// complex -> complex128, float -> float64, int -> int64.
///
/// Raises:
///     hurray.InvalidDescriptorError: no dtype can be inferred from ``fill_value``.
///     OverflowError: an int out of the dtype's range.
///     TypeError: a float for an integer dtype, a non-bool for bool.
#[pyfunction]
#[pyo3(signature = (shape, fill_value, *, dtype=None, device=None))]
pub fn full(
    py: Python<'_>,
    shape: &Bound<'_, PyAny>,
    fill_value: &Bound<'_, PyAny>,
    dtype: Option<&Bound<'_, PyAny>>,
    device: Option<&Bound<'_, PyAny>>,
) -> PyResult<Tensor> {
    let shape = parse_shape(shape)?;
    let t = match dtype_arg(dtype)? {
        Some(t) => t,
        None => infer(fill_value)?,
    };
    let v = to_value(t, fill_value)?;
    make(
        py,
        shape,
        t,
        device_arg(device)?.unwrap_or_else(cpu),
        Fill::Const(v),
    )
}

fn like(
    x: &Tensor,
    dtype: Option<&Bound<'_, PyAny>>,
    device: Option<&Bound<'_, PyAny>>,
) -> PyResult<(Vec<u64>, ElementType, Device)> {
    let d = x.model();
    if d.shape.contains(&DYN) {
        return Err(InvalidDescriptorError::new_err(
            "the tensor has a dynamic dimension",
        ));
    }
    let t = match dtype_arg(dtype)? {
        Some(t) => t,
        None if dtype::in_interop_set(d.element_type) => d.element_type,
        None => {
            return Err(UnsupportedError::new_err(format!(
                "{} has no NumPy equivalent; pass dtype=",
                d.element_type.name()
            )))
        }
    };
    let dev = device_arg(device)?.unwrap_or(Device {
        id: 0,
        ..x.device_value()
    });
    Ok((d.shape.clone(), t, dev))
}

/// Zeros with ``x``'s shape, dtype and device (dense row-major even if ``x`` is sparse).
#[pyfunction]
#[pyo3(signature = (x, *, dtype=None, device=None))]
pub fn zeros_like(
    py: Python<'_>,
    x: PyRef<'_, Tensor>,
    dtype: Option<&Bound<'_, PyAny>>,
    device: Option<&Bound<'_, PyAny>>,
) -> PyResult<Tensor> {
    let (s, t, dev) = like(&x, dtype, device)?;
    make(py, s, t, dev, Fill::Zero)
}

/// Ones with ``x``'s shape, dtype and device.
#[pyfunction]
#[pyo3(signature = (x, *, dtype=None, device=None))]
pub fn ones_like(
    py: Python<'_>,
    x: PyRef<'_, Tensor>,
    dtype: Option<&Bound<'_, PyAny>>,
    device: Option<&Bound<'_, PyAny>>,
) -> PyResult<Tensor> {
    let (s, t, dev) = like(&x, dtype, device)?;
    let v = one(t);
    make(py, s, t, dev, Fill::Const(v))
}

/// Uninitialised (zero-filled) with ``x``'s shape, dtype and device.
#[pyfunction]
#[pyo3(signature = (x, *, dtype=None, device=None))]
pub fn empty_like(
    py: Python<'_>,
    x: PyRef<'_, Tensor>,
    dtype: Option<&Bound<'_, PyAny>>,
    device: Option<&Bound<'_, PyAny>>,
) -> PyResult<Tensor> {
    zeros_like(py, x, dtype, device)
}

/// ``fill_value`` everywhere, with ``x``'s shape, dtype (never inferred) and device.
#[pyfunction]
#[pyo3(signature = (x, fill_value, *, dtype=None, device=None))]
pub fn full_like(
    py: Python<'_>,
    x: PyRef<'_, Tensor>,
    fill_value: &Bound<'_, PyAny>,
    dtype: Option<&Bound<'_, PyAny>>,
    device: Option<&Bound<'_, PyAny>>,
) -> PyResult<Tensor> {
    let (s, t, dev) = like(&x, dtype, device)?;
    let v = to_value(t, fill_value)?;
    make(py, s, t, dev, Fill::Const(v))
}

fn number(v: &Bound<'_, PyAny>, what: &str) -> PyResult<f64> {
    if v.is_instance_of::<PyComplex>() || v.is_instance_of::<pyo3::types::PyString>() {
        return Err(PyTypeError::new_err(format!(
            "{what} must be a real number"
        )));
    }
    v.extract::<f64>().map_err(|_| {
        PyTypeError::new_err(format!(
            "{what} must be a real number, not {}",
            v.get_type()
                .name()
                .map(|n| n.to_string())
                .unwrap_or_default()
        ))
    })
}

fn cast_value(t: ElementType, x: f64) -> Value {
    match t {
        ElementType::Float16
        | ElementType::Bfloat16
        | ElementType::Float32
        | ElementType::Float64
        | ElementType::Complex64
        | ElementType::Complex128 => Value::Float(x),
        _ => Value::Float(x.trunc()),
    }
}

/// Evenly spaced values in ``[start, stop)``: ``start + i * step``, computed in
/// float64 and cast (floats truncate toward zero for integer dtypes). One argument
/// means ``[0, start)``. Dtype defaults to float64 when any argument is a float,
/// else int64.
///
/// Raises:
///     hurray.InvalidDescriptorError: ``step == 0``.
///     hurray.UnsupportedError: ``dtype=bool``.
///     TypeError: non-numeric arguments.
#[pyfunction]
#[pyo3(signature = (start, stop=None, step=None, *, dtype=None, device=None))]
pub fn arange(
    py: Python<'_>,
    start: &Bound<'_, PyAny>,
    stop: Option<&Bound<'_, PyAny>>,
    step: Option<&Bound<'_, PyAny>>,
    dtype: Option<&Bound<'_, PyAny>>,
    device: Option<&Bound<'_, PyAny>>,
) -> PyResult<Tensor> {
    let given: Vec<&Bound<'_, PyAny>> = [Some(start), stop, step]
        .into_iter()
        .flatten()
        .filter(|v| !v.is_none())
        .collect();
    let any_float = given.iter().any(|v| v.is_instance_of::<PyFloat>());
    let (a, b) = match stop.filter(|s| !s.is_none()) {
        Some(s) => (number(start, "start")?, number(s, "stop")?),
        None => (0.0, number(start, "stop")?),
    };
    let st = match step.filter(|s| !s.is_none()) {
        Some(s) => number(s, "step")?,
        None => 1.0,
    };
    if st == 0.0 {
        return Err(InvalidDescriptorError::new_err("arange step must not be 0"));
    }
    let t = match dtype_arg(dtype)? {
        Some(ElementType::Bool) => {
            return Err(UnsupportedError::new_err(
                "arange does not support dtype=bool",
            ))
        }
        Some(t) => t,
        None if any_float => ElementType::Float64,
        None => ElementType::Int64,
    };
    let len = ((b - a) / st).ceil();
    let n = if len.is_finite() && len > 0.0 {
        len as u64
    } else {
        0
    };
    let f = move |i: u64| Some(cast_value(t, a + i as f64 * st));
    make(
        py,
        vec![n],
        t,
        device_arg(device)?.unwrap_or_else(cpu),
        Fill::Each(&f),
    )
}

/// ``num`` evenly spaced values from ``start`` to ``stop`` (inclusive when
/// ``endpoint``, and then the last value is exactly ``stop``); float64 by default.
///
/// Raises:
///     hurray.InvalidDescriptorError: ``num < 0``.
///     hurray.UnsupportedError: ``dtype=bool``.
#[pyfunction]
#[pyo3(signature = (start, stop, num, *, dtype=None, device=None, endpoint=true))]
pub fn linspace(
    py: Python<'_>,
    start: f64,
    stop: f64,
    num: i64,
    dtype: Option<&Bound<'_, PyAny>>,
    device: Option<&Bound<'_, PyAny>>,
    endpoint: bool,
) -> PyResult<Tensor> {
    if num < 0 {
        return Err(InvalidDescriptorError::new_err(format!(
            "linspace num {num} is negative"
        )));
    }
    let t = match dtype_arg(dtype)? {
        Some(ElementType::Bool) => {
            return Err(UnsupportedError::new_err(
                "linspace does not support dtype=bool",
            ))
        }
        Some(t) => t,
        None => ElementType::Float64,
    };
    let n = num as u64;
    let div = if endpoint { n.saturating_sub(1) } else { n };
    let step = if div == 0 {
        0.0
    } else {
        (stop - start) / div as f64
    };
    let f = move |i: u64| {
        let x = if endpoint && n > 1 && i == n - 1 {
            stop
        } else {
            start + i as f64 * step
        };
        Some(cast_value(t, x))
    };
    make(
        py,
        vec![n],
        t,
        device_arg(device)?.unwrap_or_else(cpu),
        Fill::Each(&f),
    )
}

/// A 2-D tensor with ones where ``col == row + k`` and zeros elsewhere;
/// ``n_cols`` defaults to ``n_rows``; bool is supported (bit-packed).
///
/// Raises:
///     hurray.InvalidDescriptorError: negative ``n_rows`` or ``n_cols``.
#[pyfunction]
#[pyo3(signature = (n_rows, n_cols=None, *, k=0, dtype=None, device=None))]
pub fn eye(
    py: Python<'_>,
    n_rows: i64,
    n_cols: Option<i64>,
    k: i64,
    dtype: Option<&Bound<'_, PyAny>>,
    device: Option<&Bound<'_, PyAny>>,
) -> PyResult<Tensor> {
    let cols = n_cols.unwrap_or(n_rows);
    if n_rows < 0 || cols < 0 {
        return Err(InvalidDescriptorError::new_err(format!(
            "eye dimensions ({n_rows}, {cols}) must be non-negative"
        )));
    }
    let t = dtype_arg(dtype)?.unwrap_or(ElementType::Float64);
    let v = one(t);
    let c = cols as u64;
    let f = move |i: u64| {
        let (r, col) = (i / c.max(1), i % c.max(1));
        (col as i64 == r as i64 + k).then_some(v)
    };
    make(
        py,
        vec![n_rows as u64, c],
        t,
        device_arg(device)?.unwrap_or_else(cpu),
        Fill::Each(&f),
    )
}

/// Registers the functions.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(zeros, m)?)?;
    m.add_function(wrap_pyfunction!(ones, m)?)?;
    m.add_function(wrap_pyfunction!(full, m)?)?;
    m.add_function(wrap_pyfunction!(empty, m)?)?;
    m.add_function(wrap_pyfunction!(zeros_like, m)?)?;
    m.add_function(wrap_pyfunction!(ones_like, m)?)?;
    m.add_function(wrap_pyfunction!(full_like, m)?)?;
    m.add_function(wrap_pyfunction!(empty_like, m)?)?;
    m.add_function(wrap_pyfunction!(arange, m)?)?;
    m.add_function(wrap_pyfunction!(linspace, m)?)?;
    m.add_function(wrap_pyfunction!(eye, m)?)?;
    Ok(())
}
