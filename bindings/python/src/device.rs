//! `hurray.Device`: a frozen `(kind, device_id, memory_class)` triple.

use crate::errors::InvalidDescriptorError;
use hurray_core::{DeviceTag, MemoryClass};
use pyo3::exceptions::PyNotImplementedError;
use pyo3::prelude::*;
use pyo3::pyclass::CompareOp;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyDict;

/// Where a tensor's buffers live: device kind, ordinal and memory class.
///
/// ``Device(kind, device_id=None, memory_class=None)``: ``kind`` is one of
/// ``"cpu", "cuda", "rocm", "metal", "vulkan", "webgpu", "hexagon", "level_zero",
/// "opencl"``; ``device_id`` an ordinal >= 0 (default 0); ``memory_class`` one of
/// ``"standard", "host_pinned", "unified", "peer"`` (default ``"standard"``).
/// Constructing a device moves no data.
///
/// Raises:
///     hurray.InvalidDescriptorError: unknown kind or memory class, negative id.
#[pyclass(module = "hurray", frozen)]
#[derive(Clone, Copy)]
pub struct Device {
    pub tag: DeviceTag,
    pub id: u32,
    pub class: MemoryClass,
}

pub const KINDS: [DeviceTag; 9] = [
    DeviceTag::Cpu,
    DeviceTag::Cuda,
    DeviceTag::Rocm,
    DeviceTag::Metal,
    DeviceTag::Vulkan,
    DeviceTag::WebGpu,
    DeviceTag::Hexagon,
    DeviceTag::LevelZero,
    DeviceTag::OpenCl,
];

pub fn class_name(c: MemoryClass) -> &'static str {
    match c {
        MemoryClass::Standard => "standard",
        MemoryClass::HostPinned => "host_pinned",
        MemoryClass::Unified => "unified",
        MemoryClass::Peer => "peer",
        MemoryClass::Private(_) => "private",
    }
}

fn parse_class(s: &str) -> Option<MemoryClass> {
    Some(match s {
        "standard" => MemoryClass::Standard,
        "host_pinned" => MemoryClass::HostPinned,
        "unified" => MemoryClass::Unified,
        "peer" => MemoryClass::Peer,
        _ => return None,
    })
}

static CONSTANTS: PyOnceLock<Py<PyDict>> = PyOnceLock::new();

/// The nine `hurray.device` constants (`Device(kind, 0, "standard")`).
pub fn constants(py: Python<'_>) -> PyResult<&Bound<'_, PyDict>> {
    let d = CONSTANTS.get_or_try_init(py, || -> PyResult<Py<PyDict>> {
        let d = PyDict::new(py);
        for tag in KINDS {
            let dev = Device {
                tag,
                id: 0,
                class: MemoryClass::Standard,
            };
            d.set_item(tag.name(), Py::new(py, dev)?)?;
        }
        Ok(d.unbind())
    })?;
    Ok(d.bind(py))
}

/// `hurray.device.cpu` (the object itself).
pub fn cpu(py: Python<'_>) -> PyResult<Py<Device>> {
    Ok(constants(py)?
        .get_item("cpu")?
        .expect("cpu constant")
        .cast_into::<Device>()?
        .unbind())
}

#[pymethods]
impl Device {
    #[new]
    #[pyo3(signature = (kind, device_id=None, memory_class=None))]
    fn new(kind: &str, device_id: Option<i64>, memory_class: Option<&str>) -> PyResult<Self> {
        let tag = KINDS
            .into_iter()
            .find(|t| t.name() == kind)
            .ok_or_else(|| {
                InvalidDescriptorError::new_err(format!("unknown device kind {kind:?}"))
            })?;
        let id = match device_id {
            None => 0,
            Some(v) => u32::try_from(v).map_err(|_| {
                InvalidDescriptorError::new_err(format!("device_id {v} is outside 0..=4294967295"))
            })?,
        };
        let class = match memory_class {
            None => MemoryClass::Standard,
            Some(s) => parse_class(s).ok_or_else(|| {
                InvalidDescriptorError::new_err(format!("unknown memory class {s:?}"))
            })?,
        };
        Ok(Device { tag, id, class })
    }

    /// Device kind (``"cpu"``, ``"cuda"``, ...; ``"private"`` for a private tag read from data).
    #[getter]
    fn kind(&self) -> &'static str {
        self.tag.name()
    }

    /// Device ordinal.
    #[getter]
    fn device_id(&self) -> u32 {
        self.id
    }

    /// Memory class (``"standard"``, ``"host_pinned"``, ``"unified"``, ``"peer"``, ``"private"``).
    #[getter]
    fn memory_class(&self) -> &'static str {
        class_name(self.class)
    }

    fn __repr__(&self) -> String {
        format!(
            "hurray.Device(kind='{}', device_id={}, memory_class='{}')",
            self.kind(),
            self.id,
            self.memory_class()
        )
    }

    fn __hash__(&self) -> u64 {
        (u64::from(self.tag.tag()) << 40) | (u64::from(self.class.tag()) << 32) | u64::from(self.id)
    }

    fn __richcmp__(&self, other: &Bound<'_, PyAny>, op: CompareOp) -> PyResult<Py<PyAny>> {
        let py = other.py();
        let same = match other.cast::<Device>() {
            Ok(o) => {
                let o = o.get();
                o.tag == self.tag && o.id == self.id && o.class == self.class
            }
            Err(_) => false,
        };
        let b = |v: bool| -> PyResult<Py<PyAny>> {
            Ok(v.into_pyobject(py)?.to_owned().into_any().unbind())
        };
        match op {
            CompareOp::Eq => b(same),
            CompareOp::Ne => b(!same),
            _ if other.cast::<Device>().is_ok() => {
                Err(PyNotImplementedError::new_err("devices are not ordered"))
            }
            _ => Ok(py.NotImplemented()),
        }
    }
}
