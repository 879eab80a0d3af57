//! The layout classes: `hurray.Layout` (base) and its fourteen subclasses, frozen
//! façades over `hurray_core::Layout` (plus an opaque unknown tag this build
//! cannot encode).

use crate::errors::InvalidDescriptorError;
use hurray_core::{
    BlockPaged, BufferHandle, CombineOp, CompositeHead, CompositionRule, ElementType, IndexType,
    KvRole, Layout as L, Rule, TensorDescriptor, TileOrder, Tiling,
};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::args::Seq;
use pyo3::pyclass::CompareOp;
use pyo3::types::{PyBytes, PyTuple};
use pyo3::PyClass;
use std::hash::{Hash, Hasher};

/// What a layout object holds.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Repr {
    /// A layout the format model knows.
    Core(L),
    /// A tag without a class in this build, with its raw field bytes (pass-through).
    Unknown { tag: u8, raw: Vec<u8> },
}

/// Base class of every layout. Not constructible; instances come from the
/// subclasses' constructors or from :attr:`Tensor.layout`.
///
/// Two layouts are equal when they describe the same layout (same tag and
/// fields); a layout never equals a string.
#[pyclass(subclass, frozen, module = "hurray")]
pub struct Layout {
    pub repr: Repr,
}

/// The `Layout.name` string for a tag: the reference API's names (`python-api.md`
/// §7.3: `"col_major"`, `"composite"`, `"extension"` for private and unknown tags);
/// the rendering every language shares is `hurray.layout_name(layout.tag)`.
pub fn name_of(r: &Repr) -> &'static str {
    match r {
        Repr::Unknown { .. } | Repr::Core(L::Extension { .. }) => "extension",
        Repr::Core(l) => match l {
            L::ColumnMajor => "col_major",
            L::CompositeHead(_) => "composite",
            l => l.name(),
        },
    }
}

fn tag_of(r: &Repr) -> u8 {
    match r {
        Repr::Core(l) => l.tag(),
        Repr::Unknown { tag, .. } => *tag,
    }
}

fn tuple_str<T: std::fmt::Display>(v: &[T]) -> String {
    match v.len() {
        1 => format!("({},)", v[0]),
        _ => format!(
            "({})",
            v.iter()
                .map(|x| x.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

fn order_name(o: &TileOrder) -> &'static str {
    match o {
        TileOrder::RowMajor => "row_major",
        TileOrder::ColumnMajor => "col_major",
        TileOrder::Strided(_) => "strided",
        TileOrder::Tiled(_) => "tiled",
    }
}

fn tiled_repr(t: &Tiling, depth: usize) -> String {
    let mut s = format!(
        "TiledLayout(tile_shape={}, outer_layout='{}', inner_layout='{}'",
        tuple_str(&t.tile_shape),
        order_name(&t.outer),
        order_name(&t.inner)
    );
    if let TileOrder::Tiled(n) = &t.inner {
        if depth >= 4 {
            s.push_str(", inner_tiled=...");
        } else {
            s.push_str(", inner_tiled=");
            s.push_str(&tiled_repr(n, depth + 1));
        }
    }
    s.push(')');
    s
}

/// The subclass `repr` of a layout.
pub fn repr_of(r: &Repr) -> String {
    let l = match r {
        Repr::Unknown { tag, raw } => {
            return format!(
                "UnknownLayout(tag=0x{tag:02X}, raw_bytes={} bytes)",
                raw.len()
            )
        }
        Repr::Core(l) => l,
    };
    match l {
        L::RowMajor => "RowMajorLayout()".into(),
        L::ColumnMajor => "ColMajorLayout()".into(),
        L::Strided { strides } => format!("StridedLayout(strides={})", tuple_str(strides)),
        L::Tiled(t) => tiled_repr(t, 1),
        L::Morton { bits } => format!("MortonLayout(morton_bits={})", tuple_str(bits)),
        L::Hilbert { order, rank } => {
            format!("HilbertLayout(hilbert_order={order}, hilbert_rank={rank})")
        }
        L::Coo { nnz, is_sorted } => format!(
            "CooLayout(nnz={nnz}, is_sorted={})",
            if *is_sorted { "True" } else { "False" }
        ),
        L::Csr { nnz } => format!("CsrLayout(nnz={nnz})"),
        L::Csc { nnz } => format!("CscLayout(nnz={nnz})"),
        L::Csf { nnz, mode_order } => {
            format!("CsfLayout(nnz={nnz}, mode_order={})", tuple_str(mode_order))
        }
        L::BlockPaged(p) => format!(
            "BlockPagedLayout(page_size={}, num_pages={}, paged_axis={}, num_seqs={}, kv_role='{}', layer_index={}, block_table_index_type='{}')",
            p.page_size,
            p.num_pages,
            p.paged_axis,
            p.num_seqs,
            kv_role_name(p.kv_role),
            if p.layer_index == u32::MAX { "None".to_string() } else { p.layer_index.to_string() },
            index_type_name(p.block_table_index_type)
        ),
        L::CompositeHead(h) => {
            let mut s = format!(
                "CompositeLayout(composition_rule='{}', member_count={}",
                rule_name(h.rule),
                h.member_count
            );
            if let Some(op) = op_name(h.combine_op) {
                s.push_str(&format!(", combine_op='{op}'"));
            }
            s.push(')');
            s
        }
        L::Extension { tag, id, data } => format!(
            "PrivateExtensionLayout(tag=0x{tag:02X}, extension_layout_id={id}, extension_data={} bytes)",
            data.len()
        ),
    }
}

fn kv_role_name(r: KvRole) -> &'static str {
    match r {
        KvRole::Key => "key",
        KvRole::Value => "value",
        KvRole::Fused => "fused",
    }
}

fn index_type_name(t: IndexType) -> &'static str {
    match t {
        IndexType::U32 => "uint32",
        IndexType::U64 => "uint64",
    }
}

pub fn rule_name(r: CompositionRule) -> &'static str {
    match r {
        CompositionRule::Partition => "partition",
        CompositionRule::Overlay => "overlay",
        CompositionRule::Group => "group",
        CompositionRule::Private(_) => "private",
    }
}

pub fn op_name(o: CombineOp) -> Option<&'static str> {
    match o {
        CombineOp::None => None,
        CombineOp::Replace => Some("replace"),
        CombineOp::Add => Some("add"),
    }
}

/// Buffers a layout needs (`None` for private and unknown layouts).
pub fn buffer_count(r: &Repr) -> Option<usize> {
    match r {
        Repr::Unknown { .. } => None,
        Repr::Core(L::Csf { mode_order, .. }) => Some(2 * mode_order.len() + 1),
        Repr::Core(l) => l.layout_buffer_count(1),
    }
}

/// Runs the format's field rules on a layout alone (through a stand-in descriptor
/// of the layout's rank), raising `InvalidDescriptorError` for a rule it breaks.
fn check_fields(l: &L, rank: usize) -> PyResult<()> {
    if rank > hurray_core::MAX_RANK {
        return Err(InvalidDescriptorError::new_err(format!(
            "rank {rank} exceeds {}",
            hurray_core::MAX_RANK
        )));
    }
    let dim = match l {
        L::Hilbert { order, .. } if *order < 16 => 1u64 << order,
        _ => 1,
    };
    let buffers = match l.layout_buffer_count(rank) {
        Some(n) => vec![BufferHandle::cpu(1 << 20); n],
        None => vec![BufferHandle::cpu(1 << 20)],
    };
    let d = TensorDescriptor {
        shape: vec![dim; rank],
        layout: l.clone(),
        buffers,
        ..TensorDescriptor::dense(ElementType::Uint8, &[]).expect("scalar descriptor")
    };
    match d.validate() {
        Err(e)
            if matches!(
                e.rule,
                Rule::LayoutField
                    | Rule::TilingDepth
                    | Rule::CompositeHead
                    | Rule::RankForLayout
                    | Rule::RankTooLarge
            ) =>
        {
            Err(InvalidDescriptorError::new_err(e.to_string()))
        }
        _ => Ok(()),
    }
}

/// A Python object of the right subclass for a layout.
pub fn to_object(py: Python<'_>, r: &Repr) -> PyResult<Py<PyAny>> {
    let base = PyClassInitializer::from(Layout { repr: r.clone() });
    macro_rules! sub {
        ($t:ident) => {
            Ok(Bound::new(py, base.add_subclass($t))?.into_any().unbind())
        };
    }
    match r {
        Repr::Unknown { .. } => sub!(UnknownLayout),
        Repr::Core(l) => match l {
            L::RowMajor => sub!(RowMajorLayout),
            L::ColumnMajor => sub!(ColMajorLayout),
            L::Strided { .. } => sub!(StridedLayout),
            L::Tiled(_) => sub!(TiledLayout),
            L::Morton { .. } => sub!(MortonLayout),
            L::Hilbert { .. } => sub!(HilbertLayout),
            L::Coo { .. } => sub!(CooLayout),
            L::Csr { .. } => sub!(CsrLayout),
            L::Csc { .. } => sub!(CscLayout),
            L::Csf { .. } => sub!(CsfLayout),
            L::BlockPaged(_) => sub!(BlockPagedLayout),
            L::CompositeHead(_) => sub!(CompositeLayout),
            L::Extension { .. } => sub!(PrivateExtensionLayout),
        },
    }
}

#[pymethods]
impl Layout {
    /// The layout tag byte.
    #[getter]
    fn tag(&self) -> u8 {
        tag_of(&self.repr)
    }

    /// The layout name (``"row_major"``, ``"csr"``, ...; ``"extension"`` for private and unknown).
    #[getter]
    fn name(&self) -> &'static str {
        name_of(&self.repr)
    }

    /// Number of buffers the layout needs: 0 for composite, ``None`` for private/unknown.
    #[getter]
    fn buffer_count(&self) -> Option<usize> {
        buffer_count(&self.repr)
    }

    /// True for the dense layouts (row_major, col_major, strided, tiled, morton, hilbert).
    #[getter]
    fn is_dense(&self) -> bool {
        matches!(&self.repr, Repr::Core(l) if l.is_dense())
    }

    /// True only for the composite layout (it owns no data).
    #[getter]
    fn is_virtual(&self) -> bool {
        matches!(&self.repr, Repr::Core(L::CompositeHead(_)))
    }

    fn __repr__(slf: &Bound<'_, Self>) -> String {
        let me = slf.get();
        if slf.get_type().is(slf.py().get_type::<Layout>()) {
            format!(
                "Layout(tag=0x{:02X}, name='{}')",
                tag_of(&me.repr),
                name_of(&me.repr)
            )
        } else {
            repr_of(&me.repr)
        }
    }

    fn __hash__(&self) -> u64 {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        self.repr.hash(&mut h);
        h.finish()
    }

    fn __richcmp__(&self, other: &Bound<'_, PyAny>, op: CompareOp) -> PyResult<Py<PyAny>> {
        let py = other.py();
        let same = other
            .cast::<Layout>()
            .is_ok_and(|o| o.get().repr == self.repr);
        let b = |v: bool| -> PyResult<Py<PyAny>> {
            Ok(v.into_pyobject(py)?.to_owned().into_any().unbind())
        };
        match op {
            CompareOp::Eq => b(same),
            CompareOp::Ne => b(!same),
            _ => Ok(py.NotImplemented()),
        }
    }
}

fn core<'a>(slf: &'a Bound<'_, impl PyClass<BaseType = Layout>>) -> &'a L {
    match &slf.as_super().get().repr {
        Repr::Core(l) => l,
        Repr::Unknown { .. } => unreachable!("only UnknownLayout holds an unknown tag"),
    }
}

fn init<T: PyClass<BaseType = Layout>>(l: L, sub: T) -> PyClassInitializer<T> {
    PyClassInitializer::from(Layout {
        repr: Repr::Core(l),
    })
    .add_subclass(sub)
}

/// C-order dense layout: the last dimension varies fastest (the default).
#[pyclass(extends = Layout, frozen, module = "hurray")]
pub struct RowMajorLayout;

#[pymethods]
impl RowMajorLayout {
    #[new]
    fn new() -> PyClassInitializer<Self> {
        init(L::RowMajor, RowMajorLayout)
    }
}

/// Fortran-order dense layout: the first dimension varies fastest.
#[pyclass(extends = Layout, frozen, module = "hurray")]
pub struct ColMajorLayout;

#[pymethods]
impl ColMajorLayout {
    #[new]
    fn new() -> PyClassInitializer<Self> {
        init(L::ColumnMajor, ColMajorLayout)
    }
}

/// Dense layout with explicit strides, one per dimension, in **elements** (not
/// bytes); strides may be zero or negative. The rank is checked when a tensor is built.
#[pyclass(extends = Layout, frozen, module = "hurray")]
pub struct StridedLayout;

#[pymethods]
impl StridedLayout {
    #[new]
    fn new(strides: Seq<i64>) -> PyClassInitializer<Self> {
        init(L::Strided { strides: strides.0 }, StridedLayout)
    }

    /// Element strides, one per dimension.
    #[getter]
    fn strides<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTuple>> {
        let L::Strided { strides } = core(slf) else {
            unreachable!()
        };
        PyTuple::new(slf.py(), strides)
    }
}

fn parse_order(name: &str, strides: Option<Vec<i64>>, what: &str) -> PyResult<TileOrder> {
    let o = match name {
        "row_major" => TileOrder::RowMajor,
        "col_major" => TileOrder::ColumnMajor,
        "strided" => TileOrder::Strided(Vec::new()),
        "tiled" => TileOrder::Tiled(Box::new(Tiling {
            tile_shape: Vec::new(),
            outer: TileOrder::RowMajor,
            inner: TileOrder::RowMajor,
        })),
        _ => {
            return Err(PyValueError::new_err(format!(
                "{what} must be 'row_major', 'col_major', 'strided' or 'tiled', not {name:?}"
            )))
        }
    };
    match (o, strides) {
        (TileOrder::Strided(_), Some(s)) => Ok(TileOrder::Strided(s)),
        (TileOrder::Strided(_), None) => Err(InvalidDescriptorError::new_err(format!(
            "{what} 'strided' needs {what}_strides"
        ))),
        (_, Some(_)) => Err(InvalidDescriptorError::new_err(format!(
            "{what}_strides given but {what} is {name:?}, not 'strided'"
        ))),
        (o, None) => Ok(o),
    }
}

/// Tiled (blocked) dense layout, possibly nested.
///
/// ``tile_shape`` gives the tile extent per dimension (elements, all > 0);
/// ``outer_layout`` orders the tile grid (``row_major``, ``col_major``, ``strided``
/// with ``outer_strides`` in tiles), ``inner_layout`` orders elements in a tile
/// (also ``tiled`` with ``inner_tiled``, another :class:`TiledLayout`).
///
/// Raises:
///     ValueError: an ordering name is not one of the four.
///     hurray.InvalidDescriptorError: empty or zero tile shape, strides given iff
///         the ordering is not ``strided``, ``inner_tiled`` given iff the inner
///         ordering is not ``tiled``, ``outer_layout='tiled'``, nesting too deep.
#[pyclass(extends = Layout, frozen, module = "hurray")]
pub struct TiledLayout;

#[pymethods]
impl TiledLayout {
    #[new]
    #[pyo3(signature = (tile_shape, outer_layout="row_major", inner_layout="row_major", outer_strides=None, inner_strides=None, inner_tiled=None))]
    fn new(
        tile_shape: Seq<u64>,
        outer_layout: &str,
        inner_layout: &str,
        outer_strides: Option<Seq<i64>>,
        inner_strides: Option<Seq<i64>>,
        inner_tiled: Option<&Bound<'_, TiledLayout>>,
    ) -> PyResult<PyClassInitializer<Self>> {
        let tile_shape = tile_shape.0;
        let (outer_strides, inner_strides) =
            (outer_strides.map(|s| s.0), inner_strides.map(|s| s.0));
        let outer = parse_order(outer_layout, outer_strides, "outer_layout")?;
        let mut inner = parse_order(inner_layout, inner_strides, "inner_layout")?;
        match (&mut inner, inner_tiled) {
            (TileOrder::Tiled(slot), Some(n)) => {
                let L::Tiled(t) = core(n) else { unreachable!() };
                **slot = t.clone();
            }
            (TileOrder::Tiled(_), None) => {
                return Err(InvalidDescriptorError::new_err(
                    "inner_layout 'tiled' needs inner_tiled",
                ))
            }
            (_, Some(_)) => {
                return Err(InvalidDescriptorError::new_err(
                    "inner_tiled given but inner_layout is not 'tiled'",
                ))
            }
            _ => {}
        }
        let rank = tile_shape.len();
        let l = L::Tiled(Tiling {
            tile_shape,
            outer,
            inner,
        });
        check_fields(&l, rank)?;
        Ok(init(l, TiledLayout))
    }

    /// Tile extent per dimension, in elements.
    #[getter]
    fn tile_shape<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTuple>> {
        let L::Tiled(t) = core(slf) else {
            unreachable!()
        };
        PyTuple::new(slf.py(), &t.tile_shape)
    }

    /// Order of the tile grid: ``row_major``, ``col_major`` or ``strided``.
    #[getter]
    fn outer_layout(slf: &Bound<'_, Self>) -> &'static str {
        let L::Tiled(t) = core(slf) else {
            unreachable!()
        };
        order_name(&t.outer)
    }

    /// Order inside a tile: ``row_major``, ``col_major``, ``strided`` or ``tiled``.
    #[getter]
    fn inner_layout(slf: &Bound<'_, Self>) -> &'static str {
        let L::Tiled(t) = core(slf) else {
            unreachable!()
        };
        order_name(&t.inner)
    }

    /// Grid strides in tiles when ``outer_layout == 'strided'``, else ``None``.
    #[getter]
    fn outer_strides<'py>(slf: &Bound<'py, Self>) -> PyResult<Option<Bound<'py, PyTuple>>> {
        let L::Tiled(t) = core(slf) else {
            unreachable!()
        };
        match &t.outer {
            TileOrder::Strided(s) => Ok(Some(PyTuple::new(slf.py(), s)?)),
            _ => Ok(None),
        }
    }

    /// In-tile strides in elements when ``inner_layout == 'strided'``, else ``None``.
    #[getter]
    fn inner_strides<'py>(slf: &Bound<'py, Self>) -> PyResult<Option<Bound<'py, PyTuple>>> {
        let L::Tiled(t) = core(slf) else {
            unreachable!()
        };
        match &t.inner {
            TileOrder::Strided(s) => Ok(Some(PyTuple::new(slf.py(), s)?)),
            _ => Ok(None),
        }
    }

    /// The nested tiling (a fresh :class:`TiledLayout`) when ``inner_layout == 'tiled'``.
    #[getter]
    fn inner_tiled(slf: &Bound<'_, Self>) -> PyResult<Option<Py<PyAny>>> {
        let L::Tiled(t) = core(slf) else {
            unreachable!()
        };
        match &t.inner {
            TileOrder::Tiled(n) => Ok(Some(to_object(
                slf.py(),
                &Repr::Core(L::Tiled((**n).clone())),
            )?)),
            _ => Ok(None),
        }
    }
}

/// Morton (Z-order) dense layout: ``morton_bits[k]`` bits per coordinate (each > 0).
///
/// Raises:
///     hurray.InvalidDescriptorError: empty list or a zero entry.
#[pyclass(extends = Layout, frozen, module = "hurray")]
pub struct MortonLayout;

#[pymethods]
impl MortonLayout {
    #[new]
    fn new(morton_bits: Seq<u32>) -> PyResult<PyClassInitializer<Self>> {
        let morton_bits = morton_bits.0;
        let rank = morton_bits.len();
        let l = L::Morton { bits: morton_bits };
        check_fields(&l, rank)?;
        Ok(init(l, MortonLayout))
    }

    /// Bits per coordinate.
    #[getter]
    fn morton_bits<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTuple>> {
        let L::Morton { bits } = core(slf) else {
            unreachable!()
        };
        PyTuple::new(slf.py(), bits)
    }
}

/// Hilbert-curve dense layout: every dimension is ``2**hilbert_order`` and the
/// tensor rank equals ``hilbert_rank`` (>= 2).
///
/// Raises:
///     hurray.InvalidDescriptorError: order 0 or rank below 2.
#[pyclass(extends = Layout, frozen, module = "hurray")]
pub struct HilbertLayout;

#[pymethods]
impl HilbertLayout {
    #[new]
    fn new(hilbert_order: u32, hilbert_rank: u32) -> PyResult<PyClassInitializer<Self>> {
        let l = L::Hilbert {
            order: hilbert_order,
            rank: hilbert_rank,
        };
        check_fields(&l, hilbert_rank as usize)?;
        Ok(init(l, HilbertLayout))
    }

    /// Curve order p: each dimension is ``2**p``.
    #[getter]
    fn hilbert_order(slf: &Bound<'_, Self>) -> u32 {
        let L::Hilbert { order, .. } = core(slf) else {
            unreachable!()
        };
        *order
    }

    /// Curve rank (the tensor rank).
    #[getter]
    fn hilbert_rank(slf: &Bound<'_, Self>) -> u32 {
        let L::Hilbert { rank, .. } = core(slf) else {
            unreachable!()
        };
        *rank
    }
}

/// Coordinate-list sparse layout: buffer 0 holds ``nnz`` values, buffer 1 the
/// ``nnz x rank`` uint64 coordinates (row-major).
#[pyclass(extends = Layout, frozen, module = "hurray")]
pub struct CooLayout;

#[pymethods]
impl CooLayout {
    #[new]
    #[pyo3(signature = (nnz, is_sorted=false))]
    fn new(nnz: u64, is_sorted: bool) -> PyClassInitializer<Self> {
        init(L::Coo { nnz, is_sorted }, CooLayout)
    }

    /// Number of stored elements.
    #[getter]
    fn nnz(slf: &Bound<'_, Self>) -> u64 {
        let L::Coo { nnz, .. } = core(slf) else {
            unreachable!()
        };
        *nnz
    }

    /// True when the coordinates are lexicographically sorted.
    #[getter]
    fn is_sorted(slf: &Bound<'_, Self>) -> bool {
        let L::Coo { is_sorted, .. } = core(slf) else {
            unreachable!()
        };
        *is_sorted
    }
}

/// Compressed sparse row layout (rank 2): values, uint64 col_indices, uint64 row_ptr.
#[pyclass(extends = Layout, frozen, module = "hurray")]
pub struct CsrLayout;

#[pymethods]
impl CsrLayout {
    #[new]
    fn new(nnz: u64) -> PyClassInitializer<Self> {
        init(L::Csr { nnz }, CsrLayout)
    }

    /// Number of stored elements.
    #[getter]
    fn nnz(slf: &Bound<'_, Self>) -> u64 {
        let L::Csr { nnz } = core(slf) else {
            unreachable!()
        };
        *nnz
    }
}

/// Compressed sparse column layout (rank 2): values, uint64 row_indices, uint64 col_ptr.
#[pyclass(extends = Layout, frozen, module = "hurray")]
pub struct CscLayout;

#[pymethods]
impl CscLayout {
    #[new]
    fn new(nnz: u64) -> PyClassInitializer<Self> {
        init(L::Csc { nnz }, CscLayout)
    }

    /// Number of stored elements.
    #[getter]
    fn nnz(slf: &Bound<'_, Self>) -> u64 {
        let L::Csc { nnz } = core(slf) else {
            unreachable!()
        };
        *nnz
    }
}

/// Compressed sparse fiber layout (rank >= 3): values, then ``pos_L``/``crd_L``
/// per level, levels stored in ``mode_order`` (a permutation checked when a tensor
/// is built).
#[pyclass(extends = Layout, frozen, module = "hurray")]
pub struct CsfLayout;

#[pymethods]
impl CsfLayout {
    #[new]
    fn new(nnz: u64, mode_order: Seq<u32>) -> PyClassInitializer<Self> {
        init(
            L::Csf {
                nnz,
                mode_order: mode_order.0,
            },
            CsfLayout,
        )
    }

    /// Number of stored elements.
    #[getter]
    fn nnz(slf: &Bound<'_, Self>) -> u64 {
        let L::Csf { nnz, .. } = core(slf) else {
            unreachable!()
        };
        *nnz
    }

    /// Storage order of the levels.
    #[getter]
    fn mode_order<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTuple>> {
        let L::Csf { mode_order, .. } = core(slf) else {
            unreachable!()
        };
        PyTuple::new(slf.py(), mode_order)
    }
}

/// Paged KV-cache layout (rank 3): buffers page_pool, block_table, seq_ptr.
///
/// ``kv_role`` is ``"key"``, ``"value"`` or ``"fused"``; ``layer_index`` ``None``
/// means not tied to a layer; ``block_table_index_type`` is ``"uint32"`` or ``"uint64"``.
///
/// Raises:
///     ValueError: unknown ``kv_role`` or index type.
#[pyclass(extends = Layout, frozen, module = "hurray")]
pub struct BlockPagedLayout;

fn paged(slf: &Bound<'_, BlockPagedLayout>) -> BlockPaged {
    let L::BlockPaged(p) = core(slf) else {
        unreachable!()
    };
    *p
}

#[pymethods]
impl BlockPagedLayout {
    #[new]
    #[pyo3(signature = (page_size, num_pages, paged_axis, num_seqs, kv_role="key", layer_index=None, block_table_index_type="uint32"))]
    fn new(
        page_size: u32,
        num_pages: u64,
        paged_axis: u32,
        num_seqs: u32,
        kv_role: &str,
        layer_index: Option<u32>,
        block_table_index_type: &str,
    ) -> PyResult<PyClassInitializer<Self>> {
        let kv_role = match kv_role {
            "key" => KvRole::Key,
            "value" => KvRole::Value,
            "fused" => KvRole::Fused,
            r => {
                return Err(PyValueError::new_err(format!(
                    "kv_role must be 'key', 'value' or 'fused', not {r:?}"
                )))
            }
        };
        let block_table_index_type = match block_table_index_type {
            "uint32" => IndexType::U32,
            "uint64" => IndexType::U64,
            t => {
                return Err(PyValueError::new_err(format!(
                    "block_table_index_type must be 'uint32' or 'uint64', not {t:?}"
                )))
            }
        };
        Ok(init(
            L::BlockPaged(BlockPaged {
                page_size,
                num_pages,
                paged_axis,
                num_seqs,
                kv_role,
                layer_index: layer_index.unwrap_or(u32::MAX),
                block_table_index_type,
            }),
            BlockPagedLayout,
        ))
    }

    /// Tokens per page.
    #[getter]
    fn page_size(slf: &Bound<'_, Self>) -> u32 {
        paged(slf).page_size
    }
    /// Physical pages in the pool.
    #[getter]
    fn num_pages(slf: &Bound<'_, Self>) -> u64 {
        paged(slf).num_pages
    }
    /// The paged axis (0 in this format version).
    #[getter]
    fn paged_axis(slf: &Bound<'_, Self>) -> u32 {
        paged(slf).paged_axis
    }
    /// Sequences in the batch.
    #[getter]
    fn num_seqs(slf: &Bound<'_, Self>) -> u32 {
        paged(slf).num_seqs
    }
    /// ``"key"``, ``"value"`` or ``"fused"``.
    #[getter]
    fn kv_role(slf: &Bound<'_, Self>) -> &'static str {
        kv_role_name(paged(slf).kv_role)
    }
    /// The layer the cache belongs to, or ``None``.
    #[getter]
    fn layer_index(slf: &Bound<'_, Self>) -> Option<u32> {
        let v = paged(slf).layer_index;
        (v != u32::MAX).then_some(v)
    }
    /// ``"uint32"`` or ``"uint64"``.
    #[getter]
    fn block_table_index_type(slf: &Bound<'_, Self>) -> &'static str {
        index_type_name(paged(slf).block_table_index_type)
    }
}

/// A composite head from Python's names: ``composition_rule`` ``"partition"``,
/// ``"overlay"`` or ``"group"``; ``combine_op`` ``"replace"`` or ``"add"``, required
/// for overlay and refused otherwise (`layouts.md` §2.11). Shared by
/// :class:`CompositeLayout` and :class:`hurray.Composite`.
///
/// Errors: `ValueError` for an unknown rule or op, or an op given/missing against
/// the rule.
pub fn composite_head(
    composition_rule: &str,
    member_count: u32,
    combine_op: Option<&str>,
) -> PyResult<CompositeHead> {
    let rule = match composition_rule {
        "partition" => CompositionRule::Partition,
        "overlay" => CompositionRule::Overlay,
        "group" => CompositionRule::Group,
        r => {
            return Err(PyValueError::new_err(format!(
                "composition_rule must be 'partition', 'overlay' or 'group', not {r:?}"
            )))
        }
    };
    let op = match (rule, combine_op) {
        (CompositionRule::Overlay, Some("replace")) => CombineOp::Replace,
        (CompositionRule::Overlay, Some("add")) => CombineOp::Add,
        (CompositionRule::Overlay, Some(o)) => {
            return Err(PyValueError::new_err(format!(
                "combine_op must be 'replace' or 'add', not {o:?}"
            )))
        }
        (CompositionRule::Overlay, None) => {
            return Err(PyValueError::new_err(
                "an overlay composite needs combine_op",
            ))
        }
        (_, Some(_)) => {
            return Err(PyValueError::new_err(format!(
                "combine_op is only allowed for 'overlay', not {composition_rule:?}"
            )))
        }
        (_, None) => CombineOp::None,
    };
    Ok(CompositeHead {
        rule,
        combine_op: op,
        member_count,
    })
}

/// Composite (virtual) head: owns no buffers and binds the next ``member_count``
/// tensors of a stream or file.
///
/// ``composition_rule`` is ``"partition"``, ``"overlay"`` or ``"group"``;
/// ``combine_op`` (``"replace"`` or ``"add"``) is required for overlay and
/// forbidden otherwise.
///
/// Raises:
///     ValueError: unknown rule or op, or op given/missing against the rule.
///     hurray.InvalidDescriptorError: ``member_count`` rejected by the format.
#[pyclass(extends = Layout, frozen, module = "hurray")]
pub struct CompositeLayout;

fn head(slf: &Bound<'_, CompositeLayout>) -> CompositeHead {
    let L::CompositeHead(h) = core(slf) else {
        unreachable!()
    };
    *h
}

#[pymethods]
impl CompositeLayout {
    #[new]
    #[pyo3(signature = (composition_rule, member_count, combine_op=None))]
    fn new(
        composition_rule: &str,
        member_count: u32,
        combine_op: Option<&str>,
    ) -> PyResult<PyClassInitializer<Self>> {
        let l = L::CompositeHead(composite_head(composition_rule, member_count, combine_op)?);
        check_fields(&l, 1)?;
        Ok(init(l, CompositeLayout))
    }

    /// ``"partition"``, ``"overlay"`` or ``"group"``.
    #[getter]
    fn composition_rule(slf: &Bound<'_, Self>) -> &'static str {
        rule_name(head(slf).rule)
    }
    /// ``"replace"`` or ``"add"`` for overlay, else ``None``.
    #[getter]
    fn combine_op(slf: &Bound<'_, Self>) -> Option<&'static str> {
        op_name(head(slf).combine_op)
    }
    /// Number of member tensors.
    #[getter]
    fn member_count(slf: &Bound<'_, Self>) -> u32 {
        head(slf).member_count
    }
}

/// An implementation-private layout (tag 0xF0-0xFE) with opaque metadata bytes.
///
/// Raises:
///     hurray.InvalidDescriptorError: tag outside 0xF0-0xFE.
#[pyclass(extends = Layout, frozen, module = "hurray")]
pub struct PrivateExtensionLayout;

#[pymethods]
impl PrivateExtensionLayout {
    #[new]
    #[pyo3(signature = (tag, extension_layout_id, extension_data=None))]
    fn new(
        tag: u8,
        extension_layout_id: u64,
        extension_data: Option<Vec<u8>>,
    ) -> PyResult<PyClassInitializer<Self>> {
        if !(0xF0..=0xFE).contains(&tag) {
            return Err(InvalidDescriptorError::new_err(format!(
                "private layout tag 0x{tag:02X} is outside 0xF0..=0xFE"
            )));
        }
        Ok(init(
            L::Extension {
                tag,
                id: extension_layout_id,
                data: extension_data.unwrap_or_default(),
            },
            PrivateExtensionLayout,
        ))
    }

    /// The implementation-defined layout identifier.
    #[getter]
    fn extension_layout_id(slf: &Bound<'_, Self>) -> u64 {
        let L::Extension { id, .. } = core(slf) else {
            unreachable!()
        };
        *id
    }

    /// The opaque metadata bytes.
    #[getter]
    fn extension_data<'py>(slf: &Bound<'py, Self>) -> Bound<'py, PyBytes> {
        let L::Extension { data, .. } = core(slf) else {
            unreachable!()
        };
        PyBytes::new(slf.py(), data)
    }
}

/// A layout tag this build has no class for, carried with its raw field bytes.
///
/// Raises:
///     ValueError: the tag has a class (the message names it), including 0xF0-0xFE.
///     hurray.InvalidDescriptorError: tag 0x00 or 0xFF.
#[pyclass(extends = Layout, frozen, module = "hurray")]
pub struct UnknownLayout;

#[pymethods]
impl UnknownLayout {
    #[new]
    #[pyo3(signature = (tag, raw_bytes=None))]
    fn new(tag: u8, raw_bytes: Option<Vec<u8>>) -> PyResult<PyClassInitializer<Self>> {
        let named = match tag {
            0x01 => Some("RowMajorLayout"),
            0x02 => Some("ColMajorLayout"),
            0x03 => Some("StridedLayout"),
            0x04 => Some("TiledLayout"),
            0x05 => Some("MortonLayout"),
            0x06 => Some("CooLayout"),
            0x07 => Some("CsrLayout"),
            0x08 => Some("CscLayout"),
            0x09 => Some("CsfLayout"),
            0x0A => Some("BlockPagedLayout"),
            0x0B => Some("CompositeLayout"),
            0x40 => Some("HilbertLayout"),
            0xF0..=0xFE => Some("PrivateExtensionLayout"),
            _ => None,
        };
        if let Some(c) = named {
            return Err(PyValueError::new_err(format!(
                "layout tag 0x{tag:02X} has a class: use hurray.{c}"
            )));
        }
        if tag == 0 || tag == 0xFF {
            return Err(InvalidDescriptorError::new_err(format!(
                "layout tag 0x{tag:02X} is invalid"
            )));
        }
        Ok(PyClassInitializer::from(Layout {
            repr: Repr::Unknown {
                tag,
                raw: raw_bytes.unwrap_or_default(),
            },
        })
        .add_subclass(UnknownLayout))
    }

    /// The raw layout field bytes.
    #[getter]
    fn raw_bytes<'py>(slf: &Bound<'py, Self>) -> Bound<'py, PyBytes> {
        match &slf.as_super().get().repr {
            Repr::Unknown { raw, .. } => PyBytes::new(slf.py(), raw),
            Repr::Core(_) => PyBytes::new(slf.py(), b""),
        }
    }
}

/// Registers the layout classes.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Layout>()?;
    m.add_class::<RowMajorLayout>()?;
    m.add_class::<ColMajorLayout>()?;
    m.add_class::<StridedLayout>()?;
    m.add_class::<TiledLayout>()?;
    m.add_class::<MortonLayout>()?;
    m.add_class::<HilbertLayout>()?;
    m.add_class::<CooLayout>()?;
    m.add_class::<CsrLayout>()?;
    m.add_class::<CscLayout>()?;
    m.add_class::<CsfLayout>()?;
    m.add_class::<BlockPagedLayout>()?;
    m.add_class::<CompositeLayout>()?;
    m.add_class::<PrivateExtensionLayout>()?;
    m.add_class::<UnknownLayout>()?;
    Ok(())
}
