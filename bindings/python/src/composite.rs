//! `hurray.Composite` (`layouts.md` §2.11 composite heads; the Python API inventory's
//! §10 sketch of ADR-036): a head (rule, shape, element type) and its ordered
//! members, each a :class:`Tensor` or a nested :class:`Composite`. It carries what
//! the containers and the network client carry: `save`, `FileReader.item`,
//! `StreamWriter.write`, `Client.get` and `Client.put` take or give it.
//!
//! A composite owns no buffers: its members share the buffers of the tensors it was
//! made from (no copy). It is checked whole (partition coverage and overlap, overlay
//! base and roles, element types, nesting depth) when it is made, with the rules the
//! writers and readers apply (`HurrayItem::check_rules`).

use crate::dtype::{self, Dtype};
use crate::errors::{self, InvalidDescriptorError};
use crate::layout::{self, Repr};
use crate::quant::Shard;
use crate::tensor::{from_handle, parse_shape, Tensor};
use hurray_core::{Layout as L, MemberRole, Shard as CoreShard, TensorDescriptor};
use hurray_ffi::{FfiError, HurrayItem, HurrayTensor};
use hurray_io::Item;
use pyo3::exceptions::{PyIndexError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyString, PyTuple};
use std::sync::Arc;

/// A composite item: a head (``composition_rule``, ``shape``, ``dtype``) binding
/// ``len(members)`` members, each a :class:`Tensor` or a nested :class:`Composite`,
/// in order (``layouts.md`` §2.11).
///
/// ``Composite(composition_rule, *, shape, dtype, members, combine_op=None,
/// offsets=None, roles=None)``:
///
/// - ``composition_rule``: ``"partition"`` (members tile the head's index space
///   exactly), ``"overlay"`` (a base plus corrections, combined by ``combine_op``
///   ``"replace"`` or ``"add"``) or ``"group"`` (independent members);
/// - ``shape`` (elements per dimension) and ``dtype``: the whole's;
/// - ``members``: a sequence of :class:`Tensor` / :class:`Composite`; their buffers
///   are shared, not copied;
/// - ``offsets``: for partition and overlay members, where each lies in the whole:
///   one sequence of ints (elements, one per dimension) per member, or ``None`` for
///   a member that already carries its :attr:`Tensor.shard`; sets the member's
///   shard section (``parent_shape`` = ``shape``);
/// - ``roles``: for overlay members, ``"base"`` or ``"correction"`` per member
///   (``None`` keeps the member's own).
///
/// The members handed back by :attr:`members` are new objects over the same
/// buffers, carrying the shard and role given here.
///
/// Raises:
///     ValueError: an unknown rule, op or role; ``combine_op`` given or missing
///         against the rule; ``offsets``/``roles`` of the wrong length.
///     TypeError: a member that is neither a Tensor nor a Composite.
///     hurray.InvalidDescriptorError: the members break a composite rule (a
///         partition with a gap or an overlap, an overlay without one base, a
///         member of another element type, nesting deeper than 8 levels, more than
///         65,536 members); the message names the rule.
#[pyclass(module = "hurray", frozen, sequence)]
pub struct Composite {
    /// The head's descriptor (layout `CompositeHead`, no buffers).
    head: Arc<TensorDescriptor>,
    /// The members, each a `Tensor` or a `Composite`.
    members: Py<PyTuple>,
    dtype: Py<Dtype>,
    shape: Py<PyTuple>,
}

/// A member of a composite as the containers take it, sharing its buffers.
///
/// Errors: `TypeError` for anything but a Tensor or a Composite; a device tensor.
pub fn item_from_py(obj: &Bound<'_, PyAny>) -> PyResult<Item> {
    if let Ok(t) = obj.cast::<Tensor>() {
        return t
            .get()
            .h
            .get()
            .to_io()
            .map(Item::Tensor)
            .map_err(errors::ffi);
    }
    if let Ok(c) = obj.cast::<Composite>() {
        return c.get().to_io(obj.py());
    }
    Err(PyTypeError::new_err(format!(
        "a composite member or network item must be a hurray.Tensor or hurray.Composite, not {}",
        obj.get_type()
            .name()
            .map(|n| n.to_string())
            .unwrap_or_default()
    )))
}

/// A Python object over `item` (no copy) that keeps what the Python object `like`
/// it was made from carries beyond the descriptor: a tensor's read-only flag and
/// device object (its id), member by member for a composite.
fn rebuilt(py: Python<'_>, item: Item, like: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
    match item {
        Item::Tensor(t) => {
            let h = HurrayTensor::from_io(t).map_err(errors::ffi)?;
            let mut out = from_handle(py, h)?;
            if let Ok(src) = like.cast::<Tensor>() {
                let src = src.get();
                out = out
                    .with_read_only(src.is_read_only())
                    .with_device(src.device_object(py));
            }
            Ok(Py::new(py, out)?.into_any())
        }
        Item::Composite(c) => {
            let Ok(src) = like.cast::<Composite>() else {
                return item_to_py(py, Item::Composite(c), false);
            };
            let from = src.get().members.bind(py);
            let (head, _) = c.head.into_parts();
            let members = c
                .members
                .into_iter()
                .enumerate()
                .map(|(i, m)| rebuilt(py, m, &from.get_item(i)?))
                .collect::<PyResult<Vec<_>>>()?;
            Ok(Py::new(py, Composite::assemble(py, head, members)?)?.into_any())
        }
    }
}

/// A Python object (Tensor or Composite) over a container item (no copy);
/// `read_only` marks every tensor in it read-only.
pub fn item_to_py(py: Python<'_>, item: Item, read_only: bool) -> PyResult<Py<PyAny>> {
    match item {
        Item::Tensor(t) => {
            let h = HurrayTensor::from_io(t).map_err(errors::ffi)?;
            Ok(Py::new(py, from_handle(py, h)?.with_read_only(read_only))?.into_any())
        }
        Item::Composite(c) => {
            let (head, _) = c.head.into_parts();
            let members = c
                .members
                .into_iter()
                .map(|m| item_to_py(py, m, read_only))
                .collect::<PyResult<Vec<_>>>()?;
            Ok(Py::new(py, Composite::assemble(py, head, members)?)?.into_any())
        }
    }
}

/// An item of hurray-ffi's face (a client's GET, a file reader's item) as a Python
/// object, sharing its buffers.
pub fn handle_to_py(py: Python<'_>, item: &HurrayItem, read_only: bool) -> PyResult<Py<PyAny>> {
    item_to_py(py, item.to_io().map_err(errors::ffi)?, read_only)
}

/// `obj` (a Tensor or Composite) as an item of hurray-ffi's face, sharing buffers.
pub fn py_to_handle(obj: &Bound<'_, PyAny>) -> PyResult<HurrayItem> {
    HurrayItem::from_io(item_from_py(obj)?).map_err(errors::ffi)
}

/// `item` with its top descriptor (a tensor's, a composite's head) changed by `f`
/// and checked again; the buffers are shared.
///
/// Errors: the changed descriptor breaks a rule (`InvalidDescriptorError`).
fn with_descriptor(item: Item, f: &dyn Fn(&mut TensorDescriptor)) -> PyResult<Item> {
    let rebuild = |t: hurray_io::Tensor| -> PyResult<hurray_io::Tensor> {
        let (d, bufs) = t.into_parts();
        let mut d = Arc::unwrap_or_clone(d);
        f(&mut d);
        d.validate().map_err(|e| errors::descriptor(&e))?;
        hurray_io::Tensor::new(d, bufs).map_err(|e| errors::ffi(FfiError::from(e)))
    };
    Ok(match item {
        Item::Tensor(t) => Item::Tensor(rebuild(t)?),
        Item::Composite(mut c) => {
            c.head = rebuild(c.head)?;
            Item::Composite(c)
        }
    })
}

/// Per-member values of `arg` (`offsets` or `roles`): `None`, or a sequence with
/// one entry per member.
///
/// Errors: `TypeError` (not a sequence, a str), `ValueError` (wrong length).
fn per_member<'py>(
    arg: Option<&Bound<'py, PyAny>>,
    name: &str,
    n: usize,
) -> PyResult<Option<Vec<Bound<'py, PyAny>>>> {
    let Some(arg) = arg.filter(|a| !a.is_none()) else {
        return Ok(None);
    };
    if arg.is_instance_of::<PyString>() {
        return Err(PyTypeError::new_err(format!(
            "{name} must be a sequence with one entry per member, not a str"
        )));
    }
    let v = arg.try_iter()?.collect::<PyResult<Vec<_>>>()?;
    if v.len() != n {
        return Err(PyValueError::new_err(format!(
            "{name} has {} entries; the composite has {n} members",
            v.len()
        )));
    }
    Ok(Some(v))
}

/// `"base"` / `"correction"` as the composite-member section's role.
fn role_arg(r: &Bound<'_, PyAny>) -> PyResult<MemberRole> {
    match r.extract::<String>().as_deref() {
        Ok("base") => Ok(MemberRole::Base),
        Ok("correction") => Ok(MemberRole::Correction),
        _ => Err(PyValueError::new_err(format!(
            "a role must be 'base', 'correction' or None, not {}",
            r.repr()?
        ))),
    }
}

/// The Python name of a member role.
pub fn role_name(r: MemberRole) -> &'static str {
    match r {
        MemberRole::Base => "base",
        MemberRole::Correction => "correction",
    }
}

impl Composite {
    /// A composite from its head descriptor and Python members, as they are.
    fn assemble(
        py: Python<'_>,
        head: Arc<TensorDescriptor>,
        members: Vec<Py<PyAny>>,
    ) -> PyResult<Composite> {
        let dtype = dtype::object(py, head.element_type)?;
        let dims: Vec<Option<u64>> = head
            .shape
            .iter()
            .map(|&v| (v != hurray_core::DYN).then_some(v))
            .collect();
        Ok(Composite {
            shape: PyTuple::new(py, dims)?.unbind(),
            members: PyTuple::new(py, members)?.unbind(),
            dtype,
            head,
        })
    }

    /// The composite as the containers take it, sharing every member's buffers.
    ///
    /// Errors: those of [`item_from_py`] for a member.
    pub fn to_io(&self, py: Python<'_>) -> PyResult<Item> {
        let head = hurray_io::Tensor::new(self.head.clone(), Vec::new())
            .map_err(|e| errors::ffi(FfiError::from(e)))?;
        let members = self
            .members
            .bind(py)
            .iter()
            .map(|m| item_from_py(&m))
            .collect::<PyResult<Vec<_>>>()?;
        Ok(Item::Composite(hurray_io::Composite { head, members }))
    }

    fn head(&self) -> hurray_core::CompositeHead {
        match &self.head.layout {
            L::CompositeHead(h) => *h,
            _ => unreachable!("a Composite's head always has a composite layout"),
        }
    }
}

#[pymethods]
impl Composite {
    #[new]
    #[pyo3(signature = (composition_rule, *, shape, dtype, members, combine_op=None, offsets=None, roles=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        composition_rule: &str,
        shape: &Bound<'_, PyAny>,
        dtype: &Bound<'_, Dtype>,
        members: &Bound<'_, PyAny>,
        combine_op: Option<&str>,
        offsets: Option<&Bound<'_, PyAny>>,
        roles: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Composite> {
        let shape = parse_shape(shape)?;
        if members.is_instance_of::<PyString>() {
            return Err(PyTypeError::new_err(
                "members must be a sequence of Tensor/Composite",
            ));
        }
        let given = members.try_iter()?.collect::<PyResult<Vec<_>>>()?;
        let count = u32::try_from(given.len())
            .map_err(|_| PyValueError::new_err("more than 2^32 - 1 members"))?;
        let h = layout::composite_head(composition_rule, count, combine_op)?;
        let mut head =
            TensorDescriptor::dense(dtype.get().t, &shape).map_err(|e| errors::descriptor(&e))?;
        head.layout = L::CompositeHead(h);
        head.buffers.clear();
        head.validate().map_err(|e| errors::descriptor(&e))?;
        let offsets = per_member(offsets, "offsets", given.len())?;
        let roles = per_member(roles, "roles", given.len())?;
        let mut items = Vec::with_capacity(given.len());
        for (i, m) in given.iter().enumerate() {
            let mut item = item_from_py(m)?;
            let offset = match offsets.as_ref().map(|o| &o[i]).filter(|o| !o.is_none()) {
                Some(o) => Some(parse_shape(o).map_err(|e| {
                    // The shape parser's message, said of the offset.
                    let msg = e
                        .value(py)
                        .to_string()
                        .replace("shape", &format!("offsets[{i}]"));
                    if e.is_instance_of::<PyTypeError>(py) {
                        PyTypeError::new_err(msg)
                    } else if e.is_instance_of::<InvalidDescriptorError>(py) {
                        InvalidDescriptorError::new_err(msg)
                    } else {
                        e
                    }
                })?),
                None => None,
            };
            let role = match roles.as_ref().map(|r| &r[i]).filter(|r| !r.is_none()) {
                Some(r) => Some(role_arg(r)?),
                None => None,
            };
            if offset.is_some() || role.is_some() {
                item = with_descriptor(item, &|d| {
                    if let Some(offset) = &offset {
                        d.shard = Some(CoreShard {
                            parent_shape: shape.clone(),
                            offset: offset.clone(),
                        });
                    }
                    if role.is_some() {
                        d.composite_member = role;
                    }
                })?;
            }
            items.push(item);
        }
        let head = Arc::new(head);
        let whole = hurray_io::Composite {
            head: hurray_io::Tensor::new(head.clone(), Vec::new())
                .map_err(|e| errors::ffi(FfiError::from(e)))?,
            members: items,
        };
        let whole = Item::Composite(whole);
        HurrayItem::check_rules(&whole).map_err(|e| InvalidDescriptorError::new_err(e.message))?;
        let Item::Composite(whole) = whole else {
            unreachable!("made a composite above")
        };
        let members = whole
            .members
            .into_iter()
            .zip(&given)
            .map(|(m, like)| rebuilt(py, m, like))
            .collect::<PyResult<Vec<_>>>()?;
        Composite::assemble(py, head, members)
    }

    /// ``"partition"``, ``"overlay"`` or ``"group"``.
    #[getter]
    fn composition_rule(&self) -> &'static str {
        layout::rule_name(self.head().rule)
    }

    /// ``"replace"`` or ``"add"`` for an overlay, else ``None``.
    #[getter]
    fn combine_op(&self) -> Option<&'static str> {
        layout::op_name(self.head().combine_op)
    }

    /// The head's layout: a fresh :class:`CompositeLayout`.
    #[getter]
    fn layout(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        layout::to_object(py, &Repr::Core(self.head.layout.clone()))
    }

    /// The whole's shape (elements per dimension), a tuple.
    #[getter]
    fn shape(&self, py: Python<'_>) -> Py<PyTuple> {
        self.shape.clone_ref(py)
    }

    /// The whole's element type.
    #[getter]
    fn dtype(&self, py: Python<'_>) -> Py<Dtype> {
        self.dtype.clone_ref(py)
    }

    /// Number of dimensions of the whole.
    #[getter]
    fn ndim(&self) -> usize {
        self.head.shape.len()
    }

    /// The members, in order: a tuple of :class:`Tensor` and :class:`Composite`
    /// (sharing the buffers; each keeps what it needs alive).
    #[getter]
    fn members(&self, py: Python<'_>) -> Py<PyTuple> {
        self.members.clone_ref(py)
    }

    /// The head's shard section (this composite is itself a member placed in a
    /// larger whole), or ``None``.
    #[getter]
    fn shard(&self) -> Option<Shard> {
        self.head.shard.clone().map(|s| Shard { s })
    }

    /// The head's overlay role (``"base"``, ``"correction"``), or ``None``.
    #[getter]
    fn role(&self) -> Option<&'static str> {
        self.head.composite_member.map(role_name)
    }

    fn __len__(&self, py: Python<'_>) -> usize {
        self.members.bind(py).len()
    }

    /// Member ``index`` (negative counts from the end).
    ///
    /// Raises:
    ///     IndexError: outside the members.
    fn __getitem__(&self, py: Python<'_>, index: isize) -> PyResult<Py<PyAny>> {
        let m = self.members.bind(py);
        let n = m.len() as isize;
        let i = if index < 0 { index + n } else { index };
        if !(0..n).contains(&i) {
            return Err(PyIndexError::new_err(format!(
                "member {index} of a composite of {n} members"
            )));
        }
        Ok(m.get_item(i as usize)?.unbind())
    }

    /// Refused: a composite has no array of the whole (placing partition shards
    /// and applying overlay corrections is the consumer's); without this NumPy
    /// would stack the members as a sequence.
    ///
    /// Raises:
    ///     hurray.UnsupportedError: always.
    #[pyo3(signature = (*_args, **_kwargs))]
    fn __array__(
        &self,
        _args: &Bound<'_, PyTuple>,
        _kwargs: Option<&Bound<'_, pyo3::types::PyDict>>,
    ) -> PyResult<()> {
        Err(crate::errors::UnsupportedError::new_err(format!(
            "a {} composite has no array of the whole; convert its members (Composite.members)",
            self.composition_rule()
        )))
    }

    fn __iter__(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        Ok(self
            .members
            .bind(py)
            .as_any()
            .try_iter()?
            .into_any()
            .unbind())
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let op = self
            .combine_op()
            .map(|o| format!(", combine_op='{o}'"))
            .unwrap_or_default();
        Ok(format!(
            "Composite('{}', shape={}, dtype={}{op}, members={})",
            self.composition_rule(),
            self.shape.bind(py).repr()?,
            self.head.element_type.name(),
            self.members.bind(py).len()
        ))
    }
}

/// Adds `Composite` to `m`.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Composite>()
}
