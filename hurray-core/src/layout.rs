//! Memory layouts (`layouts.md`): the `layout_tag` and each layout's fields, as typed
//! values, with their wire encoding (`descriptor.md` §5) and field-level rules.
//! Rules that tie a layout to the rest of the descriptor (rank, buffer count,
//! buffer sizes) are checked with the whole descriptor, by
//! [`TensorDescriptor::validate`](crate::TensorDescriptor::validate) and the decoder.

use crate::error::{bail, ensure, Result};
use crate::wire::{Put, Reader};

/// The tiled-nesting limit recommended by `layouts.md` §2.4, counting the outermost
/// block (A-T4): a 9th level is rejected.
pub const DEFAULT_MAX_TILING_DEPTH: u8 = 8;

/// Order of the tile grid, or of elements inside a tile (`layouts.md` §2.4).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum TileOrder {
    /// `0x01`: row-major.
    RowMajor,
    /// `0x02`: column-major.
    ColumnMajor,
    /// `0x03`: explicit strides, one per dimension (tiles for the grid, elements inside a tile).
    Strided(Vec<i64>),
    /// `0x04` (inner order only): the tile is itself tiled.
    Tiled(Box<Tiling>),
}

impl TileOrder {
    fn tag(&self) -> u8 {
        match self {
            TileOrder::RowMajor => 1,
            TileOrder::ColumnMajor => 2,
            TileOrder::Strided(_) => 3,
            TileOrder::Tiled(_) => 4,
        }
    }
}

/// One level of a tiled layout (`layouts.md` §2.4): `tile_shape[k]` elements per
/// tile along dimension k, the order of the tile grid and the order inside a tile.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Tiling {
    /// Tile extent per dimension, in elements; every value > 0. Length = rank.
    pub tile_shape: Vec<u64>,
    /// Order of tiles in the grid: row-major, column-major or strided (in tiles).
    /// Never `Tiled`.
    pub outer: TileOrder,
    /// Order inside a tile: row-major, column-major, strided (in elements) or nested tiling.
    pub inner: TileOrder,
}

impl Tiling {
    /// Nesting depth, counting this level (1 for a tiling with no nested block).
    pub fn depth(&self) -> usize {
        match &self.inner {
            TileOrder::Tiled(t) => 1 + t.depth(),
            _ => 1,
        }
    }

    fn read(r: &mut Reader<'_>, rank: usize, depth: u8, max_depth: u8) -> Result<Tiling> {
        let at = r.pos();
        ensure!(
            depth <= max_depth,
            TilingDepth,
            at,
            "tiled nesting deeper than {max_depth} levels"
        );
        let tile_shape = r.u64s(rank, "tile_shape")?;
        let o_at = r.pos();
        let outer = r.u8("outer_layout")?;
        let inner = r.u8("inner_layout")?;
        r.reserved(2, "tiled _reserved")?;
        let outer = match outer {
            1 => TileOrder::RowMajor,
            2 => TileOrder::ColumnMajor,
            3 => TileOrder::Strided(r.i64s(rank, "outer_strides")?),
            v => bail!(LayoutField, o_at, "outer_layout {v:#04x} is not 1, 2 or 3"),
        };
        let inner = match inner {
            1 => TileOrder::RowMajor,
            2 => TileOrder::ColumnMajor,
            3 => TileOrder::Strided(r.i64s(rank, "inner_strides")?),
            4 => TileOrder::Tiled(Box::new(Tiling::read(r, rank, depth + 1, max_depth)?)),
            v => bail!(
                LayoutField,
                o_at + 1,
                "inner_layout {v:#04x} is not 1, 2, 3 or 4"
            ),
        };
        Ok(Tiling {
            tile_shape,
            outer,
            inner,
        })
    }

    fn write(&self, out: &mut Vec<u8>) {
        self.tile_shape.iter().for_each(|&t| out.put_u64(t));
        out.put_u8(self.outer.tag());
        out.put_u8(self.inner.tag());
        out.put_u16(0);
        if let TileOrder::Strided(s) = &self.outer {
            s.iter().for_each(|&v| out.put_i64(v));
        }
        match &self.inner {
            TileOrder::Strided(s) => s.iter().for_each(|&v| out.put_i64(v)),
            TileOrder::Tiled(t) => t.write(out),
            _ => {}
        }
    }

    fn encoded_len(&self) -> usize {
        let r = self.tile_shape.len();
        let mut n = 8 * r + 4;
        if matches!(self.outer, TileOrder::Strided(_)) {
            n += 8 * r;
        }
        n + match &self.inner {
            TileOrder::Strided(_) => 8 * r,
            TileOrder::Tiled(t) => t.encoded_len(),
            _ => 0,
        }
    }
}

/// Which cache a block-paged tensor holds (`layouts.md` §2.10).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum KvRole {
    /// `0x00` keys.
    Key,
    /// `0x01` values.
    Value,
    /// `0x02` fused, or not a KV cache.
    Fused,
}

/// Element type of the block-paged `block_table` and `seq_ptr` buffers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IndexType {
    /// `0x00`: u32 entries (4 bytes).
    U32,
    /// `0x01`: u64 entries (8 bytes).
    U64,
}

impl IndexType {
    /// Bytes per entry.
    pub fn width(self) -> u64 {
        match self {
            IndexType::U32 => 4,
            IndexType::U64 => 8,
        }
    }
}

/// Fields of the block-paged (paged KV cache) layout `0x0A` (`layouts.md` §2.10).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BlockPaged {
    /// Tokens per page, ≥ 1.
    pub page_size: u32,
    /// Physical pages in the pool.
    pub num_pages: u64,
    /// Paged axis; 0 in this version.
    pub paged_axis: u32,
    /// Sequences in the batch.
    pub num_seqs: u32,
    /// Key, value or fused.
    pub kv_role: KvRole,
    /// Layer the cache belongs to; `0xFFFF_FFFF` = not tied to a layer.
    pub layer_index: u32,
    /// Element type of `block_table` and `seq_ptr`.
    pub block_table_index_type: IndexType,
}

/// How a composite head binds its members (`layouts.md` §2.11).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CompositionRule {
    /// `0x01`: members tile the head's index space exactly.
    Partition,
    /// `0x02`: a base plus corrections, combined by `combine_op`.
    Overlay,
    /// `0x03`: independent tensors under one head.
    Group,
    /// `0xF0`–`0xFE`: private rule (permissive decode with an agreement only).
    Private(u8),
}

impl CompositionRule {
    /// The wire byte.
    pub fn tag(self) -> u8 {
        match self {
            CompositionRule::Partition => 1,
            CompositionRule::Overlay => 2,
            CompositionRule::Group => 3,
            CompositionRule::Private(t) => t,
        }
    }
}

/// How overlay members combine (`layouts.md` §2.11). Partition and group use `None`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CombineOp {
    /// `0x00`: no combination (partition, group).
    None,
    /// `0x01`: the latest covering member wins.
    Replace,
    /// `0x02`: base plus the sum of covering corrections.
    Add,
}

/// Fields of a composite (virtual) head `0x0B` (`layouts.md` §2.11).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CompositeHead {
    /// Partition, overlay, group (or private).
    pub rule: CompositionRule,
    /// Overlay combination; `None` for partition and group.
    pub combine_op: CombineOp,
    /// Number of member tensors that follow the head (never `0xFFFF_FFFF` in v1.0).
    pub member_count: u32,
}

/// A memory layout: the `layout_tag` with its fields (`layouts.md` §1.2).
///
/// The layout decides how many buffers the descriptor lists and how large they
/// must be. A CSR matrix, for instance, has values, column indices and row
/// pointers (u64), and a `byte_offset` of 0:
///
/// ```
/// use hurray_core::{BufferHandle, ElementType, Layout, Rule, TensorDescriptor};
///
/// let nnz = 2;
/// let d = TensorDescriptor {
///     layout: Layout::Csr { nnz },
///     buffers: vec![
///         BufferHandle::cpu(4 * nnz),      // f32 values
///         BufferHandle::cpu(8 * nnz),      // column of each value
///         BufferHandle::cpu(8 * (3 + 1)),  // row_ptr: shape[0] + 1 entries
///     ],
///     ..TensorDescriptor::dense(ElementType::Float32, &[3, 3])?
/// };
/// assert_eq!(d.encode()?.len(), 109); // the golden vector csr_f32_3x3
///
/// // CSR is two-dimensional only.
/// let flat = TensorDescriptor { shape: vec![9], ..d };
/// assert_eq!(flat.encode().unwrap_err().rule, Rule::RankForLayout);
/// # Ok::<(), hurray_core::DecodeError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Layout {
    /// `0x01` C order.
    RowMajor,
    /// `0x02` Fortran order.
    ColumnMajor,
    /// `0x03` explicit strides, in logical elements (may be negative or zero).
    Strided {
        /// One stride per dimension, in elements.
        strides: Vec<i64>,
    },
    /// `0x04` tiled / blocked, possibly nested.
    Tiled(Tiling),
    /// `0x05` Morton (Z-order) curve.
    Morton {
        /// Bits of each coordinate, each > 0, `shape[k] ≤ 2^bits[k]`.
        bits: Vec<u32>,
    },
    /// `0x06` coordinate list: buffers `values`, `indices` (u64, nnz × rank).
    Coo {
        /// Stored elements.
        nnz: u64,
        /// Tuples are lexicographically sorted (dimension 0 most significant).
        is_sorted: bool,
    },
    /// `0x07` compressed sparse row: `values`, `col_indices`, `row_ptr` (u64).
    Csr {
        /// Stored elements.
        nnz: u64,
    },
    /// `0x08` compressed sparse column: `values`, `row_indices`, `col_ptr` (u64).
    Csc {
        /// Stored elements.
        nnz: u64,
    },
    /// `0x09` compressed sparse fiber: `values`, then `pos_L`, `crd_L` per level.
    Csf {
        /// Stored elements.
        nnz: u64,
        /// Storage order of the levels: a permutation of `0..rank`.
        mode_order: Vec<u32>,
    },
    /// `0x0A` paged KV cache.
    BlockPaged(BlockPaged),
    /// `0x0B` composite head: owns no data, binds the next `member_count` tensors.
    CompositeHead(CompositeHead),
    /// `0x40` Hilbert curve (Skilling transpose form).
    Hilbert {
        /// Curve order p > 0: every `shape[k] = 2^p`.
        order: u32,
        /// Curve rank; must equal the tensor rank (≥ 2).
        rank: u32,
    },
    /// `0xF0`–`0xFE` private extension layout: opaque, length-prefixed data.
    Extension {
        /// The layout tag, `0xF0`–`0xFE`.
        tag: u8,
        /// Implementation-defined identifier.
        id: u64,
        /// Opaque metadata.
        data: Vec<u8>,
    },
}

/// Layout tags (`layouts.md` §1.2).
pub mod tag {
    /// Row-major.
    pub const ROW_MAJOR: u8 = 0x01;
    /// Column-major.
    pub const COLUMN_MAJOR: u8 = 0x02;
    /// Strided.
    pub const STRIDED: u8 = 0x03;
    /// Tiled.
    pub const TILED: u8 = 0x04;
    /// Morton.
    pub const MORTON: u8 = 0x05;
    /// COO.
    pub const COO: u8 = 0x06;
    /// CSR.
    pub const CSR: u8 = 0x07;
    /// CSC.
    pub const CSC: u8 = 0x08;
    /// CSF.
    pub const CSF: u8 = 0x09;
    /// Block-paged.
    pub const BLOCK_PAGED: u8 = 0x0A;
    /// Composite head.
    pub const COMPOSITE_HEAD: u8 = 0x0B;
    /// Hilbert.
    pub const HILBERT: u8 = 0x40;
}

impl Layout {
    /// The `layout_tag` byte.
    pub fn tag(&self) -> u8 {
        match self {
            Layout::RowMajor => tag::ROW_MAJOR,
            Layout::ColumnMajor => tag::COLUMN_MAJOR,
            Layout::Strided { .. } => tag::STRIDED,
            Layout::Tiled(_) => tag::TILED,
            Layout::Morton { .. } => tag::MORTON,
            Layout::Coo { .. } => tag::COO,
            Layout::Csr { .. } => tag::CSR,
            Layout::Csc { .. } => tag::CSC,
            Layout::Csf { .. } => tag::CSF,
            Layout::BlockPaged(_) => tag::BLOCK_PAGED,
            Layout::CompositeHead(_) => tag::COMPOSITE_HEAD,
            Layout::Hilbert { .. } => tag::HILBERT,
            Layout::Extension { tag, .. } => *tag,
        }
    }

    /// The spec's lower-case name (`"row_major"`, `"csr"`, ...), from the one
    /// declaration ([`crate::tables::layout_name`]); a private extension layout renders
    /// as `"private(0xf3)"`, as in every language.
    pub fn name(&self) -> &'static str {
        crate::tables::layout_name(self.tag())
    }

    /// Dense layouts (`0x01`–`0x05`, `0x40`): every element exists at a computed offset
    /// in buffer 0.
    pub fn is_dense(&self) -> bool {
        matches!(
            self,
            Layout::RowMajor
                | Layout::ColumnMajor
                | Layout::Strided { .. }
                | Layout::Tiled(_)
                | Layout::Morton { .. }
                | Layout::Hilbert { .. }
        )
    }

    /// Sparse layouts COO, CSR, CSC, CSF.
    pub fn is_sparse(&self) -> bool {
        matches!(
            self,
            Layout::Coo { .. } | Layout::Csr { .. } | Layout::Csc { .. } | Layout::Csf { .. }
        )
    }

    /// The number of buffers the layout itself owns (quantization buffers come after),
    /// for a tensor of rank `rank`; `None` for extension layouts (≥ 1, unspecified).
    pub fn layout_buffer_count(&self, rank: usize) -> Option<usize> {
        Some(match self {
            Layout::CompositeHead(_) => 0,
            Layout::Coo { .. } => 2,
            Layout::Csr { .. } | Layout::Csc { .. } | Layout::BlockPaged(_) => 3,
            Layout::Csf { .. } => 2 * rank + 1,
            Layout::Extension { .. } => return None,
            _ => 1,
        })
    }

    /// Encoded size of the layout fields in bytes.
    pub fn encoded_len(&self) -> usize {
        match self {
            Layout::RowMajor | Layout::ColumnMajor => 0,
            Layout::Strided { strides } => 8 * strides.len(),
            Layout::Tiled(t) => t.encoded_len(),
            Layout::Morton { bits } => 4 * bits.len(),
            Layout::Coo { .. } | Layout::Csr { .. } | Layout::Csc { .. } => 16,
            Layout::Csf { mode_order, .. } => 16 + 4 * mode_order.len(),
            Layout::BlockPaged(_) => 32,
            Layout::CompositeHead(_) => 8,
            Layout::Hilbert { .. } => 8,
            Layout::Extension { data, .. } => 12 + data.len(),
        }
    }

    /// Reads the fields of layout `tag` for a tensor of rank `rank` into `out`.
    #[inline]
    pub(crate) fn read(
        r: &mut Reader<'_>,
        tag: u8,
        rank: usize,
        opts: &crate::DecodeOptions,
        out: &mut Layout,
    ) -> Result<()> {
        *out = match tag {
            tag::ROW_MAJOR => Layout::RowMajor,
            tag::COLUMN_MAJOR => Layout::ColumnMajor,
            tag::CSR | tag::CSC => {
                let nnz = r.u64("nnz")?;
                r.reserved(8, "CSR/CSC _reserved")?;
                if tag == tag::CSR {
                    Layout::Csr { nnz }
                } else {
                    Layout::Csc { nnz }
                }
            }
            // Written in place: a value returned from out of line would be moved
            // through memory.
            _ => return Self::read_other(r, tag, rank, opts, out),
        };
        Ok(())
    }

    /// [`read`](Self::read) off the common path, into `out`.
    #[inline(never)]
    fn read_other(
        r: &mut Reader<'_>,
        tag: u8,
        rank: usize,
        opts: &crate::DecodeOptions,
        out: &mut Layout,
    ) -> Result<()> {
        *out = Self::read_fields(r, tag, rank, opts)?;
        Ok(())
    }

    /// The fields of layout `tag` for a tensor of rank `rank`.
    fn read_fields(
        r: &mut Reader<'_>,
        tag: u8,
        rank: usize,
        opts: &crate::DecodeOptions,
    ) -> Result<Layout> {
        let at = r.pos();
        Ok(match tag {
            tag::ROW_MAJOR => Layout::RowMajor,
            tag::COLUMN_MAJOR => Layout::ColumnMajor,
            tag::STRIDED => Layout::Strided { strides: r.i64s(rank, "strides")? },
            tag::TILED => Layout::Tiled(Tiling::read(r, rank, 1, opts.max_tiling_depth)?),
            tag::MORTON => {
                Layout::Morton { bits: r.u32s(rank, "morton_bits")? }
            }
            tag::COO => {
                let nnz = r.u64("nnz")?;
                let is_sorted = match r.u8("is_sorted")? {
                    0 => false,
                    1 => true,
                    v => bail!(LayoutField, at + 8, "COO is_sorted {v:#04x} is not 0 or 1"),
                };
                r.reserved(7, "COO _reserved")?;
                Layout::Coo { nnz, is_sorted }
            }
            tag::CSR | tag::CSC => {
                let nnz = r.u64("nnz")?;
                r.reserved(8, "CSR/CSC _reserved")?;
                if tag == tag::CSR {
                    Layout::Csr { nnz }
                } else {
                    Layout::Csc { nnz }
                }
            }
            tag::CSF => {
                let nnz = r.u64("nnz")?;
                let mode_order = r.u32s(rank, "mode_order")?;
                r.reserved(8, "CSF _reserved")?;
                Layout::Csf { nnz, mode_order }
            }
            tag::BLOCK_PAGED => {
                let page_size = r.u32("page_size")?;
                let num_pages = r.u64("num_pages")?;
                let paged_axis = r.u32("paged_axis")?;
                let num_seqs = r.u32("num_seqs")?;
                let kv_role = match r.u8("kv_role")? {
                    0 => KvRole::Key,
                    1 => KvRole::Value,
                    2 => KvRole::Fused,
                    v => bail!(LayoutField, at + 20, "kv_role {v:#04x} is not 0, 1 or 2"),
                };
                let layer_index = r.u32("layer_index")?;
                let block_table_index_type = match r.u8("block_table_index_type")? {
                    0 => IndexType::U32,
                    1 => IndexType::U64,
                    v => bail!(LayoutField, at + 25, "block_table_index_type {v:#04x} is not 0 or 1"),
                };
                r.reserved(6, "block-paged _reserved")?;
                Layout::BlockPaged(BlockPaged {
                    page_size,
                    num_pages,
                    paged_axis,
                    num_seqs,
                    kv_role,
                    layer_index,
                    block_table_index_type,
                })
            }
            tag::COMPOSITE_HEAD => {
                let rule = match r.u8("composition_rule")? {
                    1 => CompositionRule::Partition,
                    2 => CompositionRule::Overlay,
                    3 => CompositionRule::Group,
                    v @ 0xF0..=0xFE if opts.permissive && opts.accept_private => CompositionRule::Private(v),
                    v => bail!(CompositeHead, at, "composition_rule {v:#04x} is reserved, private or invalid"),
                };
                let op = r.u8("combine_op")?;
                let combine_op = match (rule, op) {
                    (CompositionRule::Overlay, 1) => CombineOp::Replace,
                    (CompositionRule::Overlay, 2) => CombineOp::Add,
                    (CompositionRule::Overlay, _) => bail!(CompositeHead, at + 1, "overlay combine_op {op:#04x} is not 1 or 2"),
                    (_, 0) => CombineOp::None,
                    (_, _) => bail!(CompositeHead, at + 1, "combine_op {op:#04x} must be 0 for this composition rule"),
                };
                r.reserved(2, "composite head _reserved")?;
                let member_count = r.u32("member_count")?;
                Layout::CompositeHead(CompositeHead { rule, combine_op, member_count })
            }
            tag::HILBERT => {
                let order = r.u32("hilbert_order")?;
                Layout::Hilbert { order, rank: r.u32("hilbert_rank")? }
            }
            0xF0..=0xFE => {
                let id = r.u64("extension_layout_id")?;
                let len = r.u32("extension_data_length")? as usize;
                let data = r.take(len, "extension_data")?.to_vec();
                ensure!(opts.accept_private || opts.permissive, ExtensionLayoutUnknown, at, "private layout {tag:#04x} id {id:#x} is not agreed");
                Layout::Extension { tag, id, data }
            }
            0x00 | 0xFF => bail!(LayoutTagInvalid, 15, "layout_tag {tag:#04x} is invalid"),
            _ => bail!(LayoutTagUnknown, 15, "layout_tag {tag:#04x} is not a layout this reader implements (its fields cannot be located)"),
        })
    }

    /// Whether [`check_fields`](Self::check_fields) has rules for this layout.
    #[inline]
    pub(crate) fn has_field_rules(&self) -> bool {
        !matches!(
            self,
            Layout::RowMajor
                | Layout::ColumnMajor
                | Layout::Coo { .. }
                | Layout::Csr { .. }
                | Layout::Csc { .. }
        )
    }

    /// Value rules of the layout fields that need only the fields and the rank
    /// (`layouts.md` §2): `at` is the offset of the first layout field.
    pub(crate) fn check_fields(&self, at: usize, rank: usize, max_tiling_depth: u8) -> Result<()> {
        let ranked = |what: &'static str, n: usize| -> Result<()> {
            ensure!(
                n == rank,
                LayoutField,
                at,
                "{what} has {n} entries for rank {rank}"
            );
            Ok(())
        };
        match self {
            Layout::Strided { strides } => ranked("strides", strides.len())?,
            Layout::Tiled(t) => {
                // Like the decoder, point at the first level past the limit.
                let (mut level, mut pos, mut depth) = (Some(t), at, 0);
                while let Some(l) = level {
                    depth += 1;
                    ensure!(
                        depth <= usize::from(max_tiling_depth),
                        TilingDepth,
                        pos,
                        "tiled nesting of {} levels exceeds the limit of {max_tiling_depth}",
                        t.depth()
                    );
                    level = match &l.inner {
                        TileOrder::Tiled(n) => Some(n),
                        _ => None,
                    };
                    pos += l.encoded_len() - level.map_or(0, |n| n.encoded_len());
                }
                let mut level = Some(t);
                let mut pos = at;
                while let Some(t) = level {
                    ranked("tile_shape", t.tile_shape.len())?;
                    if let Some(k) = t.tile_shape.iter().position(|&v| v == 0) {
                        bail!(LayoutField, pos + 8 * k, "tile_shape[{k}] is 0");
                    }
                    let mut next = pos + 8 * rank + 4;
                    match &t.outer {
                        TileOrder::Strided(s) => {
                            ranked("outer_strides", s.len())?;
                            next += 8 * rank;
                        }
                        TileOrder::Tiled(_) => bail!(
                            LayoutField,
                            pos + 8 * rank,
                            "outer_layout cannot be tiled (4)"
                        ),
                        _ => {}
                    }
                    level = match &t.inner {
                        TileOrder::Strided(s) => {
                            ranked("inner_strides", s.len())?;
                            None
                        }
                        TileOrder::Tiled(n) => Some(n),
                        _ => None,
                    };
                    pos = next;
                }
            }
            Layout::Morton { bits } => {
                ranked("morton_bits", bits.len())?;
                if let Some(k) = bits.iter().position(|&b| b == 0) {
                    bail!(LayoutField, at + 4 * k, "morton_bits[{k}] is 0");
                }
            }
            Layout::Csf { mode_order, .. } => {
                ranked("mode_order", mode_order.len())?;
                let mut seen = 0u64;
                for (k, &m) in mode_order.iter().enumerate() {
                    let ok = (m as usize) < rank && seen & (1u64 << m) == 0;
                    ensure!(
                        ok,
                        LayoutField,
                        at + 8 + 4 * k,
                        "mode_order is not a permutation of 0..{rank} ({m} at index {k})"
                    );
                    seen |= 1u64 << m;
                }
            }
            Layout::BlockPaged(p) => {
                ensure!(p.page_size >= 1, LayoutField, at, "page_size is 0");
                ensure!(
                    p.paged_axis == 0,
                    LayoutField,
                    at + 12,
                    "paged_axis {} is not 0",
                    p.paged_axis
                );
            }
            Layout::CompositeHead(h) => {
                if let CompositionRule::Private(v) = h.rule {
                    ensure!(
                        (0xF0..=0xFE).contains(&v),
                        CompositeHead,
                        at,
                        "composition_rule {v:#04x} is reserved or invalid"
                    );
                }
                let ok = match h.rule {
                    CompositionRule::Overlay => h.combine_op != CombineOp::None,
                    _ => h.combine_op == CombineOp::None,
                };
                ensure!(
                    ok,
                    CompositeHead,
                    at + 1,
                    "combine_op {:?} does not fit composition rule {:?}",
                    h.combine_op,
                    h.rule
                );
                ensure!(
                    h.member_count != u32::MAX,
                    CompositeHead,
                    at + 4,
                    "member_count 0xFFFFFFFF (open composite) is reserved"
                );
            }
            Layout::Hilbert { order, rank: hrank } => {
                ensure!(*order > 0, LayoutField, at, "hilbert_order is 0");
                ensure!(
                    *hrank as usize == rank && rank >= 2,
                    LayoutField,
                    at + 4,
                    "hilbert_rank {hrank} must equal the tensor rank {rank} and be at least 2"
                );
            }
            Layout::Extension { tag, data, .. } => {
                ensure!(
                    (0xF0..=0xFE).contains(tag),
                    LayoutTagUnknown,
                    15,
                    "extension layout tag {tag:#04x} is outside 0xF0..=0xFE"
                );
                ensure!(
                    u32::try_from(data.len()).is_ok(),
                    LayoutField,
                    at + 8,
                    "extension_data is longer than 4 GiB"
                );
            }
            _ => {}
        }
        Ok(())
    }

    #[inline]
    pub(crate) fn write(&self, out: &mut Vec<u8>) {
        if !matches!(self, Layout::RowMajor | Layout::ColumnMajor) {
            self.write_fields(out);
        }
    }

    /// [`write`](Self::write) for the layouts that have fields.
    fn write_fields(&self, out: &mut Vec<u8>) {
        match self {
            Layout::RowMajor | Layout::ColumnMajor => {}
            Layout::Strided { strides } => strides.iter().for_each(|&s| out.put_i64(s)),
            Layout::Tiled(t) => t.write(out),
            Layout::Morton { bits } => bits.iter().for_each(|&b| out.put_u32(b)),
            Layout::Coo { nnz, is_sorted } => {
                out.put_u64(*nnz);
                out.put_u8(u8::from(*is_sorted));
                out.put_zeros(7);
            }
            Layout::Csr { nnz } | Layout::Csc { nnz } => {
                out.put_u64(*nnz);
                out.put_zeros(8);
            }
            Layout::Csf { nnz, mode_order } => {
                out.put_u64(*nnz);
                mode_order.iter().for_each(|&m| out.put_u32(m));
                out.put_zeros(8);
            }
            Layout::BlockPaged(p) => {
                out.put_u32(p.page_size);
                out.put_u64(p.num_pages);
                out.put_u32(p.paged_axis);
                out.put_u32(p.num_seqs);
                out.put_u8(p.kv_role as u8);
                out.put_u32(p.layer_index);
                out.put_u8(p.block_table_index_type as u8);
                out.put_zeros(6);
            }
            Layout::CompositeHead(h) => {
                out.put_u8(h.rule.tag());
                out.put_u8(h.combine_op as u8);
                out.put_u16(0);
                out.put_u32(h.member_count);
            }
            Layout::Hilbert { order, rank } => {
                out.put_u32(*order);
                out.put_u32(*rank);
            }
            Layout::Extension { id, data, .. } => {
                out.put_u64(*id);
                out.put_u32(data.len() as u32);
                out.extend_from_slice(data);
            }
        }
    }
}
