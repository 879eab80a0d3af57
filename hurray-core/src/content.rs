//! Buffer-content rules: the invariants that live in a tensor's buffer bytes rather
//! than in its descriptor (`layouts.md` §2.6–§2.10, `quantization.md` §9 items 14–15,
//! `element-types.md` §4 on `float8_e8m0`).
//!
//! The descriptor codec checks everything the descriptor alone can decide (sizes,
//! counts, fields). What it cannot see is whether a CSR `row_ptr` really rises from 0
//! to `nnz`, whether every column index is below `shape[1]`, whether a block table
//! names only pages of the pool, or whether every scale is finite. A consumer that
//! trusts those values indexes other buffers with them, so a violation is a memory
//! safety problem for every library a tensor is handed to (SciPy's CSR kernels write
//! out of bounds on a bad `row_ptr`). The spec's pattern for these rules: a writer
//! MUST satisfy them, a reader SHOULD validate, and a violation that is detected MUST
//! be rejected unless the reader is permissive.
//!
//! [`check_content`] runs every rule for one tensor over its buffers in one pass per
//! buffer, reading each index once; it allocates only for the duplicate check of an
//! unsorted COO tensor (one sort key per stored element). Every error names the rule,
//! the buffer and the byte offset inside that buffer of the first offending entry.
//!
//! ```
//! use hurray_core::content::{check_content, ContentRule};
//! use hurray_core::{BufferHandle, ElementType, Layout, TensorDescriptor};
//!
//! // A 3x3 CSR matrix with two stored values; row_ptr = [0, 1, 5, 2] rises past nnz.
//! let mut d = TensorDescriptor::dense(ElementType::Float32, &[3, 3])?;
//! d.layout = Layout::Csr { nnz: 2 };
//! d.buffers = vec![BufferHandle::cpu(8), BufferHandle::cpu(16), BufferHandle::cpu(32)];
//! d.validate()?;
//! let values = [0u8; 8];
//! let cols: Vec<u8> = [0u64, 1].iter().flat_map(|v| v.to_le_bytes()).collect();
//! let row_ptr: Vec<u8> = [0u64, 1, 5, 2].iter().flat_map(|v| v.to_le_bytes()).collect();
//! let err = check_content(&d, &[&values, &cols, &row_ptr]).unwrap_err();
//! assert_eq!((err.rule, err.buffer, err.offset), (ContentRule::PointerOrder, 2, 24));
//! # Ok::<(), hurray_core::DecodeError>(())
//! ```

use crate::descriptor::TensorDescriptor;
use crate::element_type::ElementType;
use crate::layout::{BlockPaged, IndexType, Layout};
use crate::quantization::{zero_point_range, ScaleType, Scheme};
use std::borrow::Cow;
use std::fmt;

/// A buffer-content rule. Each variant is a writer MUST of the spec that a strict
/// reader checks before it hands out a view; [`ContentRule::spec`] names the section.
///
/// Variants are stable: programs may match on them. New rules may be added.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ContentRule {
    /// A pointer array (CSR `row_ptr`, CSC `col_ptr`, CSF `pos_L`, block-paged
    /// `seq_ptr`) does not start at 0.
    PointerStart,
    /// A pointer array does not end at the count it covers (`nnz`, the next CSF
    /// level's node count, or the block table's length).
    PointerEnd,
    /// A pointer array decreases.
    PointerOrder,
    /// A coordinate (COO `indices`, CSR column, CSC row, CSF `crd_L`) is not below
    /// the extent of its dimension.
    IndexRange,
    /// Indices inside one CSR row, CSC column or CSF sibling slice do not strictly
    /// increase (a repeat is a duplicate element).
    IndexOrder,
    /// A COO coordinate tuple occurs twice.
    DuplicateCoordinate,
    /// A COO tensor that declares `is_sorted` holds tuples that do not strictly
    /// increase lexicographically (a binary-search lookup would return wrong values).
    SortOrder,
    /// A buffer's size disagrees with the size its content implies (CSF `pos_L` and
    /// `crd_L` sizes follow from the level above; the block table holds
    /// `seq_ptr[num_seqs]` entries).
    ContentSize,
    /// A block-paged `block_table` entry is not below `num_pages`.
    PageIndex,
    /// A scale is zero, negative or not finite where the scheme forbids it, or an
    /// MXFP e8m0 scale byte is `0x00` or `0xFF`.
    ScaleValue,
    /// A zero point lies outside the storage type's range.
    ZeroPointRange,
    /// A `float8_e8m0` data element is `0x00` or `0xFF`, which the type reserves.
    E8m0Reserved,
}

impl ContentRule {
    /// The spec section (in `shared/spec/`) the rule comes from.
    pub fn spec(self) -> &'static str {
        use ContentRule::*;
        match self {
            PointerStart | PointerEnd | PointerOrder | IndexRange | IndexOrder => {
                "layouts.md §2.7–§2.10"
            }
            DuplicateCoordinate | SortOrder => "layouts.md §2.6",
            ContentSize => "layouts.md §2.9, §2.10",
            PageIndex => "layouts.md §2.10",
            ScaleValue => "quantization.md §8, §9 item 14",
            ZeroPointRange => "quantization.md §8.1, §9 item 15",
            E8m0Reserved => "element-types.md §4 (A4)",
        }
    }
}

/// A buffer-content rule broken by one tensor: which rule, in which buffer (its
/// position in the buffer table) and at which byte offset from the start of that
/// buffer. A container adds the buffer's own position to report an absolute offset.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ContentError {
    /// The rule that was broken.
    pub rule: ContentRule,
    /// Index of the buffer in the descriptor's buffer table.
    pub buffer: usize,
    /// Byte offset of the offending entry inside that buffer.
    pub offset: u64,
    /// What was found, in words (names the buffer's role: `row_ptr`, `scales`, ...).
    pub detail: Cow<'static, str>,
}

impl fmt::Display for ContentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:?} ({}) in buffer {} at byte {}: {}",
            self.rule,
            self.rule.spec(),
            self.buffer,
            self.offset,
            self.detail
        )
    }
}

impl std::error::Error for ContentError {}

type Result<T> = std::result::Result<T, ContentError>;

#[cold]
#[inline(never)]
fn fail(rule: ContentRule, buffer: usize, offset: u64, detail: fmt::Arguments<'_>) -> ContentError {
    ContentError {
        rule,
        buffer,
        offset,
        detail: Cow::Owned(fmt::format(detail)),
    }
}

macro_rules! bail {
    ($rule:ident, $buf:expr, $off:expr, $($fmt:tt)+) => {
        return Err(fail(ContentRule::$rule, $buf, $off, format_args!($($fmt)+)))
    };
}

/// True when `d` has buffer-content rules to check, so a caller can skip the call
/// (and any page it would touch) for plain dense tensors.
pub fn has_content_rules(d: &TensorDescriptor) -> bool {
    let scheme_has_buffers = matches!(
        d.quantization.as_ref().map(|q| &q.scheme),
        Some(
            Scheme::PerChannel { .. }
                | Scheme::PerBlock { .. }
                | Scheme::Nf4 { .. }
                | Scheme::Mxfp { .. }
        )
    );
    scheme_has_buffers
        || matches!(
            d.layout,
            Layout::Coo { .. }
                | Layout::Csr { .. }
                | Layout::Csc { .. }
                | Layout::Csf { .. }
                | Layout::BlockPaged(_)
        )
        || (d.element_type == ElementType::Float8E8m0 && e8m0_elements(d).is_some())
}

/// Checks every buffer-content rule of `d` over `buffers` (in buffer-table order,
/// each exactly its handle's `byte_size`, as a container hands them over).
///
/// `d` must be a validated descriptor (decoded, or [`TensorDescriptor::validate`]d):
/// the sizes it fixes are relied on, and re-checked where a wrong size could make the
/// check read past a buffer. Descriptors with an unknown or opaque layout, element
/// type or scheme have no checkable content and pass.
///
/// Rules, by layout and scheme (`layouts.md` §2.6–§2.10, `quantization.md` §9):
/// - COO: every coordinate below its extent, no duplicate tuple, strictly increasing
///   tuples when `is_sorted`;
/// - CSR / CSC: the pointer array starts at 0, never decreases and ends at `nnz`;
///   indices inside each row (column) strictly increase and stay below the extent;
/// - CSF: for every level, `pos_L` starts at 0, never decreases and its last entry is
///   the level's node count, which fixes the sizes of `pos_L` and `crd_L`; sibling
///   slices of `crd_L` strictly increase and stay below `shape[mode_order[L]]`;
/// - block-paged: `seq_ptr` starts at 0, never decreases and ends at the block
///   table's length; every block-table entry is below `num_pages`;
/// - per-channel / per-block scales finite and non-zero, NF4 absmax finite and ≥ 0,
///   MXFP e8m0 scales neither `0x00` nor `0xFF`; zero points inside the storage range;
/// - `float8_e8m0` data (row-major, column-major and sparse values) never `0x00` or
///   `0xFF`. Elements of strided, tiled, curve and paged layouts sit among padding
///   whose values are undefined, so their bytes cannot be told apart and are not checked.
///
/// Errors: the first broken rule, as a [`ContentError`] naming the buffer and the byte
/// offset inside it. Cost: linear in the index and parameter bytes (values are read
/// only for `float8_e8m0`); an unsorted COO tensor also sorts one key per element.
pub fn check_content(d: &TensorDescriptor, buffers: &[&[u8]]) -> Result<()> {
    if buffers.len() != d.buffers.len() {
        bail!(
            ContentSize,
            buffers.len(),
            0,
            "{} buffers supplied, the descriptor declares {}",
            buffers.len(),
            d.buffers.len()
        );
    }
    for (i, (b, h)) in buffers.iter().zip(&d.buffers).enumerate() {
        if b.len() as u64 != h.byte_size {
            bail!(
                ContentSize,
                i,
                0,
                "buffer holds {} bytes, its handle declares {}",
                b.len(),
                h.byte_size
            );
        }
    }
    match &d.layout {
        Layout::Coo { nnz, is_sorted } => check_coo(&d.shape, *nnz, *is_sorted, buffers[1])?,
        Layout::Csr { nnz } => check_compressed(&d.shape, *nnz, 0, buffers)?,
        Layout::Csc { nnz } => check_compressed(&d.shape, *nnz, 1, buffers)?,
        Layout::Csf { nnz, mode_order } => check_csf(&d.shape, *nnz, mode_order, buffers)?,
        Layout::BlockPaged(p) => check_paged(p, buffers)?,
        _ => {}
    }
    if let Some(q) = &d.quantization {
        check_parameters(d, &q.scheme, buffers)?;
    }
    if d.element_type == ElementType::Float8E8m0 {
        if let Some(range) = e8m0_elements(d) {
            check_e8m0(
                buffers[0],
                range,
                0,
                "float8_e8m0 data",
                ContentRule::E8m0Reserved,
            )?;
        }
    }
    Ok(())
}

/// The byte range of buffer 0 holding `float8_e8m0` elements, for the layouts whose
/// elements are exactly a contiguous run (no undefined padding among them).
fn e8m0_elements(d: &TensorDescriptor) -> Option<std::ops::Range<u64>> {
    let start = d.byte_offset;
    let n = match &d.layout {
        Layout::RowMajor | Layout::ColumnMajor => crate::shape::element_count(&d.shape).ok()?,
        Layout::Coo { nnz, .. }
        | Layout::Csr { nnz }
        | Layout::Csc { nnz }
        | Layout::Csf { nnz, .. } => *nnz,
        _ => return None,
    };
    Some(start..start.checked_add(n)?)
}

/// Little-endian u64 entries of a buffer whose size is a multiple of 8 (callers
/// check the size first).
#[inline]
fn u64s(b: &[u8]) -> impl ExactSizeIterator<Item = u64> + '_ {
    b.chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().expect("8-byte chunk")))
}

/// Entry `i` of a little-endian u64 (or u32) array; the caller checked `i` is in range.
#[inline]
fn entry(b: &[u8], i: u64, width: u64) -> u64 {
    let at = (i * width) as usize;
    match width {
        4 => u64::from(u32::from_le_bytes(
            b[at..at + 4].try_into().expect("4-byte entry"),
        )),
        _ => u64::from_le_bytes(b[at..at + 8].try_into().expect("8-byte entry")),
    }
}

/// The first `count` entries of `width` bytes of `b`, which must hold at least that
/// many. A buffer may be larger than its layout needs (`layouts.md` §5, as the
/// descriptor codec reads it); bytes past the entries are not part of the tensor.
fn need_entries<'a>(
    b: &'a [u8],
    buffer: usize,
    count: u64,
    width: u64,
    what: &str,
) -> Result<&'a [u8]> {
    match count.checked_mul(width) {
        Some(n) if n <= b.len() as u64 => Ok(&b[..n as usize]),
        _ => Err(fail(
            ContentRule::ContentSize,
            buffer,
            0,
            format_args!(
                "{what} holds {} bytes, its content needs {count} entries of {width} bytes",
                b.len()
            ),
        )),
    }
}

/// A pointer array of `width`-byte entries (`count + 1` of them, size checked by the
/// caller): starts at 0, never decreases, ends at `end`.
fn check_pointers(ptr: &[u8], buffer: usize, width: u64, end: u64, what: &str) -> Result<()> {
    let n = ptr.len() as u64 / width;
    let first = entry(ptr, 0, width);
    if first != 0 {
        bail!(PointerStart, buffer, 0, "{what}[0] is {first}, must be 0");
    }
    let mut prev = 0u64;
    match width {
        4 => {
            for (i, c) in ptr.chunks_exact(4).enumerate() {
                let v = u64::from(u32::from_le_bytes(c.try_into().expect("4-byte chunk")));
                if v < prev {
                    return Err(decreasing(buffer, i as u64, 4, what, prev, v));
                }
                prev = v;
            }
        }
        _ => {
            for (i, v) in u64s(ptr).enumerate() {
                if v < prev {
                    return Err(decreasing(buffer, i as u64, 8, what, prev, v));
                }
                prev = v;
            }
        }
    }
    if prev != end {
        bail!(
            PointerEnd,
            buffer,
            (n - 1) * width,
            "{what}[{}] is {prev}, must be {end}",
            n - 1
        );
    }
    Ok(())
}

#[cold]
#[inline(never)]
fn decreasing(buffer: usize, i: u64, width: u64, what: &str, prev: u64, v: u64) -> ContentError {
    fail(
        ContentRule::PointerOrder,
        buffer,
        i * width,
        format_args!("{what}[{i}] is {v}, below {what}[{}] = {prev}", i - 1),
    )
}

/// Indices of one slice (entries `lo..hi` of `idx`): each below `extent`, strictly
/// increasing.
#[inline]
fn check_slice(idx: &[u8], buffer: usize, lo: u64, hi: u64, extent: u64, what: &str) -> Result<()> {
    let bytes = &idx[(lo * 8) as usize..(hi * 8) as usize];
    let mut prev: Option<u64> = None;
    for (k, v) in u64s(bytes).enumerate() {
        if v >= extent || prev.is_some_and(|p| v <= p) {
            let j = lo + k as u64;
            return Err(slice_error(buffer, j, v, prev, extent, what));
        }
        prev = Some(v);
    }
    Ok(())
}

#[cold]
#[inline(never)]
fn slice_error(
    buffer: usize,
    j: u64,
    v: u64,
    prev: Option<u64>,
    extent: u64,
    what: &str,
) -> ContentError {
    if v >= extent {
        fail(
            ContentRule::IndexRange,
            buffer,
            j * 8,
            format_args!("{what}[{j}] is {v}, not below the extent {extent}"),
        )
    } else {
        fail(
            ContentRule::IndexOrder,
            buffer,
            j * 8,
            format_args!(
                "{what}[{j}] is {v}, not above the previous index {} of its slice",
                prev.unwrap_or(0)
            ),
        )
    }
}

/// CSR (`axis` 0: rows compressed, buffers values / col_indices / row_ptr) or CSC
/// (`axis` 1: columns compressed, values / row_indices / col_ptr), `layouts.md`
/// §2.7–§2.8.
fn check_compressed(shape: &[u64], nnz: u64, axis: usize, buffers: &[&[u8]]) -> Result<()> {
    let (ptr_name, idx_name) = if axis == 0 {
        ("row_ptr", "col_indices")
    } else {
        ("col_ptr", "row_indices")
    };
    let (major, minor) = (shape[axis], shape[1 - axis]);
    let idx = need_entries(buffers[1], 1, nnz, 8, idx_name)?;
    let ptr = need_entries(buffers[2], 2, major.saturating_add(1), 8, ptr_name)?;
    check_pointers(ptr, 2, 8, nnz, ptr_name)?;
    // Every pointer is now within 0..=nnz and non-decreasing: the slices are in bounds.
    let mut lo = 0u64;
    for hi in u64s(ptr).skip(1) {
        check_slice(idx, 1, lo, hi, minor, idx_name)?;
        lo = hi;
    }
    Ok(())
}

/// COO (`layouts.md` §2.6): coordinates in range, no duplicate tuple, sorted when
/// declared sorted.
fn check_coo(shape: &[u64], nnz: u64, is_sorted: bool, indices: &[u8]) -> Result<()> {
    let r = shape.len() as u64;
    let indices = need_entries(indices, 1, nnz.saturating_mul(r), 8, "indices")?;
    if r == 0 || nnz == 0 {
        return Ok(());
    }
    let tuple = |i: u64| &indices[(i * r * 8) as usize..((i + 1) * r * 8) as usize];
    for (k, v) in u64s(indices).enumerate() {
        let dim = k % r as usize;
        if v >= shape[dim] {
            bail!(
                IndexRange,
                1,
                k as u64 * 8,
                "indices[{k}] (coordinate {dim} of element {}) is {v}, not below shape[{dim}] = {}",
                k / r as usize,
                shape[dim]
            );
        }
    }
    if is_sorted {
        for i in 1..nnz {
            if cmp_tuples(tuple(i - 1), tuple(i)) != std::cmp::Ordering::Less {
                bail!(
                    SortOrder,
                    1,
                    i * r * 8,
                    "element {i}'s coordinates do not follow element {}'s though is_sorted is set",
                    i - 1
                );
            }
        }
        return Ok(());
    }
    // Unsorted: sort one key per element and look for equal neighbours. The row-major
    // linear index is the key when the shape's element count fits in u128 (always, in
    // practice); otherwise element positions are sorted by tuple.
    let linear = shape
        .iter()
        .try_fold(1u128, |n, &e| n.checked_mul(u128::from(e)));
    let dup = if linear.is_some() {
        let key = |i: u64| {
            u64s(tuple(i))
                .zip(shape)
                .fold(0u128, |k, (c, &e)| k * u128::from(e) + u128::from(c))
        };
        let mut keys: Vec<u128> = (0..nnz).map(key).collect();
        keys.sort_unstable();
        // Report the second element (in buffer order) holding the repeated key.
        keys.windows(2).find(|w| w[0] == w[1]).map(|w| {
            let k = w[0];
            (0..nnz).filter(|&i| key(i) == k).nth(1).unwrap_or(0)
        })
    } else {
        let mut order: Vec<u64> = (0..nnz).collect();
        order.sort_unstable_by(|&a, &b| cmp_tuples(tuple(a), tuple(b)).then(a.cmp(&b)));
        order
            .windows(2)
            .find(|w| tuple(w[0]) == tuple(w[1]))
            .map(|w| w[0].max(w[1]))
    };
    if let Some(i) = dup {
        bail!(
            DuplicateCoordinate,
            1,
            i * r * 8,
            "element {i} repeats the coordinates of an earlier element"
        );
    }
    Ok(())
}

/// Lexicographic order of two coordinate tuples (dimension 0 most significant).
fn cmp_tuples(a: &[u8], b: &[u8]) -> std::cmp::Ordering {
    u64s(a).cmp(u64s(b))
}

/// CSF (`layouts.md` §2.9): per level, `pos_L` and `crd_L` consistent top-down.
fn check_csf(shape: &[u64], nnz: u64, mode_order: &[u32], buffers: &[&[u8]]) -> Result<()> {
    let mut parents = 1u64; // n_{-1}: the virtual root
    for (level, &dim) in mode_order.iter().enumerate() {
        let (pb, cb) = (2 * level + 1, 2 * level + 2);
        let pos_name = format!("pos_{level}");
        let pos = need_entries(buffers[pb], pb, parents.saturating_add(1), 8, &pos_name)?;
        // n_L is pos_L's last entry; crd_L must hold exactly that many.
        let nodes = entry(pos, parents, 8);
        check_pointers(pos, pb, 8, nodes, &pos_name)?;
        let crd_name = format!("crd_{level}");
        let crd = need_entries(buffers[cb], cb, nodes, 8, &crd_name)?;
        let extent = shape[dim as usize];
        let mut lo = 0u64;
        for hi in u64s(pos).skip(1) {
            check_slice(crd, cb, lo, hi, extent, &crd_name)?;
            lo = hi;
        }
        parents = nodes;
    }
    if parents != nnz {
        let last = 2 * mode_order.len();
        bail!(
            PointerEnd,
            last - 1,
            (buffers[last - 1].len() as u64).saturating_sub(8),
            "the last level holds {parents} nodes, nnz is {nnz}"
        );
    }
    Ok(())
}

/// Block-paged (`layouts.md` §2.10, writer rules 1–3).
fn check_paged(p: &BlockPaged, buffers: &[&[u8]]) -> Result<()> {
    let w = p.block_table_index_type.width();
    let seq_ptr = need_entries(buffers[2], 2, u64::from(p.num_seqs) + 1, w, "seq_ptr")?;
    // The block table holds total_logical_pages = seq_ptr[num_seqs] entries.
    let pages = entry(seq_ptr, u64::from(p.num_seqs), w);
    let table = need_entries(buffers[1], 1, pages, w, "block_table")?;
    check_pointers(seq_ptr, 2, w, pages, "seq_ptr")?;
    let bad = match p.block_table_index_type {
        IndexType::U32 => table
            .chunks_exact(4)
            .position(|c| u64::from(u32::from_le_bytes(c.try_into().expect("4"))) >= p.num_pages),
        IndexType::U64 => u64s(table).position(|v| v >= p.num_pages),
    };
    if let Some(k) = bad {
        let v = entry(table, k as u64, w);
        bail!(
            PageIndex,
            1,
            k as u64 * w,
            "block_table[{k}] is {v}, not below num_pages = {}",
            p.num_pages
        );
    }
    Ok(())
}

/// Scale and zero-point contents (`quantization.md` §9 items 14–15).
fn check_parameters(d: &TensorDescriptor, scheme: &Scheme, buffers: &[&[u8]]) -> Result<()> {
    let (scale_ix, zp_ix, kind) = match scheme {
        Scheme::PerChannel {
            scale_buffer_index,
            zero_point_buffer_index,
            scale_type,
            ..
        }
        | Scheme::PerBlock {
            scale_buffer_index,
            zero_point_buffer_index,
            scale_type,
            ..
        } => (
            *scale_buffer_index,
            *zero_point_buffer_index,
            ScaleKind::NonZero(*scale_type),
        ),
        Scheme::Nf4 {
            scale_buffer_index, ..
        } => (*scale_buffer_index, None, ScaleKind::Absmax),
        Scheme::Mxfp {
            scale_buffer_index, ..
        } => (*scale_buffer_index, None, ScaleKind::E8m0),
        _ => return Ok(()),
    };
    let (si, width) = (scale_ix as usize, kind.width());
    let scales = *buffers.get(si).ok_or_else(|| missing(si))?;
    // A zero-point array sharing the scale buffer follows the scales in it
    // (`quantization.md` §12 item 4): split by the per-entry widths.
    let (scales, shared_zp) = match zp_ix {
        Some(z) if z == scale_ix => {
            let n = scales.len() / (width + 4);
            let (s, z) = scales.split_at(n * width);
            (s, Some((z, (n * width) as u64)))
        }
        _ => (scales, None),
    };
    check_scales(scales, si, kind)?;
    let Some((lo, hi)) = zero_point_range(d.element_type) else {
        return Ok(());
    };
    match (zp_ix, shared_zp) {
        (_, Some((z, base))) => check_zero_points(z, si, base, lo, hi)?,
        (Some(z), None) => {
            let zi = z as usize;
            let zps = *buffers.get(zi).ok_or_else(|| missing(zi))?;
            check_zero_points(zps, zi, 0, lo, hi)?
        }
        (None, None) => {}
    }
    Ok(())
}

#[cold]
fn missing(i: usize) -> ContentError {
    fail(
        ContentRule::ContentSize,
        i,
        0,
        format_args!("parameter buffer {i} is not in the buffer table"),
    )
}

/// What a scheme allows of its scales.
#[derive(Clone, Copy)]
enum ScaleKind {
    /// Per-channel / per-block: finite and non-zero (negative allowed).
    NonZero(ScaleType),
    /// NF4 absmax: f32, finite and ≥ 0.
    Absmax,
    /// MXFP shared scale: e8m0, never `0x00` or `0xFF`.
    E8m0,
}

impl ScaleKind {
    fn width(self) -> usize {
        match self {
            ScaleKind::NonZero(t) => t.width() as usize,
            ScaleKind::Absmax => 4,
            ScaleKind::E8m0 => 1,
        }
    }
}

fn check_scales(scales: &[u8], buffer: usize, kind: ScaleKind) -> Result<()> {
    let bad = |k: usize, what: &str| -> ContentError {
        fail(
            ContentRule::ScaleValue,
            buffer,
            (k * kind.width()) as u64,
            format_args!("scale {k} is {what}"),
        )
    };
    match kind {
        ScaleKind::E8m0 => check_e8m0(
            scales,
            0..scales.len() as u64,
            buffer,
            "e8m0 scale",
            ContentRule::ScaleValue,
        ),
        ScaleKind::NonZero(ScaleType::F32) | ScaleKind::Absmax => {
            let absmax = matches!(kind, ScaleKind::Absmax);
            for (k, c) in scales.chunks_exact(4).enumerate() {
                let v = f32::from_le_bytes(c.try_into().expect("4-byte scale"));
                let ok = v.is_finite() && if absmax { v >= 0.0 } else { v != 0.0 };
                if !ok {
                    let rule = if absmax {
                        "finite and ≥ 0"
                    } else {
                        "finite and non-zero"
                    };
                    return Err(bad(k, &format!("{v}, must be {rule}")));
                }
            }
            Ok(())
        }
        ScaleKind::NonZero(t) => {
            // f16: exponent 0x1F (bits 10..15) is inf/NaN; bf16: 0xFF (bits 7..15).
            let exp_mask: u16 = if t == ScaleType::F16 { 0x7C00 } else { 0x7F80 };
            for (k, c) in scales.chunks_exact(2).enumerate() {
                let bits = u16::from_le_bytes([c[0], c[1]]);
                if bits & exp_mask == exp_mask {
                    return Err(bad(k, &format!("{bits:#06x}: not finite")));
                }
                if bits & 0x7FFF == 0 {
                    return Err(bad(k, "zero, must be non-zero"));
                }
            }
            Ok(())
        }
    }
}

fn check_zero_points(zps: &[u8], buffer: usize, base: u64, lo: i64, hi: i64) -> Result<()> {
    for (k, c) in zps.chunks_exact(4).enumerate() {
        let z = i64::from(i32::from_le_bytes(c.try_into().expect("4-byte zero point")));
        if z < lo || z > hi {
            bail!(
                ZeroPointRange,
                buffer,
                base + 4 * k as u64,
                "zero point {k} is {z}, outside {lo}..={hi} for the storage type"
            );
        }
    }
    Ok(())
}

/// `float8_e8m0` bytes in `range` of `b`: never `0x00` or `0xFF`.
fn check_e8m0(
    b: &[u8],
    range: std::ops::Range<u64>,
    buffer: usize,
    what: &str,
    rule: ContentRule,
) -> Result<()> {
    let Some(bytes) = b.get(range.start as usize..range.end as usize) else {
        bail!(
            ContentSize,
            buffer,
            range.start,
            "{what} runs past the buffer"
        );
    };
    if let Some(k) = bytes.iter().position(|&v| v == 0x00 || v == 0xFF) {
        let at = range.start + k as u64;
        return Err(fail(
            rule,
            buffer,
            at,
            format_args!(
                "{what} byte {:#04x} is reserved (only 0x01..=0xFE are values)",
                bytes[k]
            ),
        ));
    }
    Ok(())
}
