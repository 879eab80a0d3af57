//! Rules that tie the parts of a descriptor together (`descriptor.md` §14, the
//! layout rules of `layouts.md` §1–§2 that need only the descriptor, and the
//! quantization checks of `quantization.md` §9). Shared by decode and encode.

use crate::descriptor::{DecodeOptions, TensorDescriptor, DYN, HEADER_LEN};
use crate::element_type::Storage;
use crate::error::{bail, ensure, DecodeError, Result, Rule};
use crate::layout::{Layout, TileOrder, Tiling};
use crate::quantization::Scheme;
use crate::sections::Shard;

/// Runs every cross-field rule on a parsed (or hand-built) descriptor.
///
/// The rules run in a fixed order (the first broken one is reported); the common
/// case of each is decided inline, and everything that only builds an error, or
/// handles a rare layout or section, is out of line.
#[inline]
pub(crate) fn check(d: &TensorDescriptor, opts: &DecodeOptions) -> Result<()> {
    let rank = d.shape.len();
    // Where the sections start: only an error message needs it.
    let off = || d.section_offsets();
    let layout_at = HEADER_LEN + 8 * rank + 8;
    let byte_offset_at = HEADER_LEN + 8 * rank;

    // #10: extension-type section iff private type.
    if d.extension_type.is_some() != d.element_type.is_private() {
        return Err(extension_flag_error(d));
    }

    // #14, #15: rank per layout, then the layout's own field rules.
    check_rank(&d.layout, rank)?;
    if d.layout.has_field_rules() {
        d.layout
            .check_fields(layout_at, rank, opts.max_tiling_depth)?;
    }

    // #35: colocation (device and memory class agree across the table).
    if let [first, rest @ ..] = d.buffers.as_slice() {
        for (i, b) in rest.iter().enumerate() {
            if b.device != first.device || b.memory_class != first.memory_class {
                return Err(colocation_error(d, i + 1));
            }
        }
    }

    // Composite head (#17–#19).
    if let Layout::CompositeHead(_) = d.layout {
        check_head(d)?;
    }

    // Buffer count (#20, #21), then quantization against the descriptor (#37).
    let layout_bufs = d.layout.layout_buffer_count(rank);
    match (&d.quantization, layout_bufs) {
        (Some(q), _) if !matches!(q.scheme, Scheme::Opaque { .. }) => q.check(d)?,
        (Some(_), Some(n)) => {
            // Opaque scheme: at least the layout's buffers, parameters unknown.
            ensure!(
                d.buffers.len() >= n.max(1),
                BufferCount,
                off().handles - 1,
                "buffer_count {} is below the layout's {n}",
                d.buffers.len()
            );
        }
        (None, Some(n)) => ensure!(
            d.buffers.len() == n,
            BufferCount,
            off().handles - 1,
            "layout {} needs buffer_count {n}, found {}",
            d.layout.name(),
            d.buffers.len()
        ),
        (_, None) => ensure!(
            !d.buffers.is_empty(),
            BufferCount,
            off().handles - 1,
            "an extension layout needs at least one buffer"
        ),
    }

    // byte_offset (#22, #23).
    if d.layout.is_dense() {
        let size0 = d.buffers[0].byte_size;
        ensure!(
            d.byte_offset <= size0,
            ByteOffset,
            byte_offset_at,
            "byte_offset {} exceeds buffer 0's {size0} bytes",
            d.byte_offset
        );
    } else if !matches!(d.layout, Layout::Extension { .. }) {
        ensure!(
            d.byte_offset == 0,
            ByteOffset,
            byte_offset_at,
            "layout {} requires byte_offset 0, found {}",
            d.layout.name(),
            d.byte_offset
        );
    }

    // Shard (#38–#40).
    if let Some(s) = &d.shard {
        check_shard(d, s)?;
    }

    // Buffer sizes the layout needs (layouts.md §5), when sizes are defined.
    check_sizes(d, layout_at)
}

#[cold]
#[inline(never)]
fn extension_flag_error(d: &TensorDescriptor) -> DecodeError {
    DecodeError::fail(
        Rule::ExtensionTypeFlag,
        10,
        format_args!(
            "HAS_EXTENSION_TYPE is {} but type_tag {:#04x} is {}private",
            d.extension_type.is_some(),
            d.element_type.tag(),
            if d.element_type.is_private() {
                ""
            } else {
                "not "
            }
        ),
    )
}

/// The colocation error of buffer `i` (which differs from buffer 0).
#[cold]
#[inline(never)]
fn colocation_error(d: &TensorDescriptor, i: usize) -> DecodeError {
    let (first, b) = (&d.buffers[0], &d.buffers[i]);
    DecodeError::fail(
        Rule::Colocation,
        d.section_offsets().handles + 16 * i + if b.device != first.device { 12 } else { 14 },
        format_args!(
            "buffer {i} is on {}/{:#04x} but buffer 0 is on {}/{:#04x}",
            b.device.name(),
            b.memory_class.tag(),
            first.device.name(),
            first.memory_class.tag()
        ),
    )
}

/// A composite head owns no data (#17–#19).
#[inline(never)]
fn check_head(d: &TensorDescriptor) -> Result<()> {
    ensure!(
        d.buffers.is_empty(),
        CompositeHeadOwnsData,
        d.section_offsets().handles - 1,
        "composite head has buffer_count {}",
        d.buffers.len()
    );
    ensure!(
        d.byte_offset == 0,
        CompositeHeadOwnsData,
        HEADER_LEN + 8 * d.rank(),
        "composite head has byte_offset {}",
        d.byte_offset
    );
    ensure!(
        d.quantization.is_none(),
        CompositeHeadOwnsData,
        10,
        "composite head sets HAS_QUANTIZATION"
    );
    ensure!(
        d.composite_member.is_none(),
        CompositeMember,
        10,
        "composite head sets HAS_COMPOSITE_MEMBER"
    );
    Ok(())
}

/// The shard rules (#38–#40).
#[inline(never)]
fn check_shard(d: &TensorDescriptor, s: &Shard) -> Result<()> {
    let rank = d.rank();
    let off = || d.section_offsets();
    ensure!(
        !matches!(d.layout, Layout::BlockPaged(_) | Layout::Csf { .. }),
        ShardForbidden,
        10,
        "layout {} must not carry a shard section",
        d.layout.name()
    );
    ensure!(
        s.parent_shape.len() == rank && s.offset.len() == rank,
        ShardBounds,
        off().shard,
        "shard vectors must have rank {rank} entries"
    );
    if let Some(k) = d.shape.iter().position(|&v| v == DYN) {
        bail!(
            ShardForbidden,
            HEADER_LEN + 8 * k,
            "a descriptor with a shard section cannot have dynamic shape[{k}]"
        );
    }
    for k in 0..rank {
        let (p, o) = (s.parent_shape[k], s.offset[k]);
        ensure!(
            p != DYN,
            ShardForbidden,
            off().shard + 8 * k,
            "parent_shape[{k}] is dynamic"
        );
        ensure!(
            o != DYN,
            ShardForbidden,
            off().shard + 8 * (rank + k),
            "shard_offset[{k}] is dynamic"
        );
        let end = o.checked_add(d.shape[k]);
        ensure!(
            end.is_some_and(|e| e <= p),
            ShardBounds,
            off().shard + 8 * (rank + k),
            "shard_offset[{k}] {o} + shape[{k}] {} exceeds parent_shape[{k}] {p}",
            d.shape[k]
        );
    }
    Ok(())
}

#[inline]
fn check_rank(layout: &Layout, rank: usize) -> Result<()> {
    let ok = match layout {
        Layout::RowMajor => true,
        Layout::Csr { .. } | Layout::Csc { .. } => rank == 2,
        Layout::Csf { .. } => rank >= 3,
        Layout::BlockPaged(_) => rank == 3,
        Layout::Hilbert { .. } => rank >= 2,
        _ => rank >= 1,
    };
    ensure!(
        ok,
        RankForLayout,
        16,
        "layout {} does not allow rank {rank}",
        layout.name()
    );
    Ok(())
}

/// Checks that buffer `i` of `d` holds at least `bytes` (`None`: the size overflows).
#[inline]
fn need_bytes(d: &TensorDescriptor, i: usize, bytes: Option<u64>, what: &str) -> Result<()> {
    match bytes {
        Some(bytes) if d.buffers[i].byte_size >= bytes => Ok(()),
        _ => Err(need_error(d, i, bytes, what)),
    }
}

#[cold]
#[inline(never)]
fn need_error(d: &TensorDescriptor, i: usize, bytes: Option<u64>, what: &str) -> DecodeError {
    let at = d.section_offsets().handles + 16 * i;
    match bytes {
        None => DecodeError::fail(
            Rule::SizeOverflow,
            at,
            format_args!("size of {what} overflows u64"),
        ),
        Some(bytes) => {
            let have = d.buffers[i].byte_size;
            DecodeError::fail(
                Rule::BufferTooSmall,
                at,
                format_args!("{what} (buffer {i}) holds {have} bytes but needs {bytes}"),
            )
        }
    }
}

/// Minimum buffer sizes. Skipped while any dimension is dynamic (sizes are
/// undefined, `descriptor.md` §4) and for types or layouts whose size is opaque.
#[inline]
fn check_sizes(d: &TensorDescriptor, layout_at: usize) -> Result<()> {
    let Some(storage) = d.storage() else {
        return Ok(());
    };
    if d.shape.contains(&DYN) {
        return Ok(());
    }
    let shape = &d.shape;
    let elems = |n: Option<u64>| n.and_then(|n| storage.bytes_for(n));
    match &d.layout {
        Layout::RowMajor | Layout::ColumnMajor => {
            let n = static_count(shape)?;
            need_bytes(
                d,
                0,
                elems(Some(n)).and_then(|b| b.checked_add(d.byte_offset)),
                "data",
            )
        }
        Layout::Csr { nnz } | Layout::Csc { nnz } => {
            let (axis, name) = if let Layout::Csr { .. } = d.layout {
                (0, "row_ptr")
            } else {
                (1, "col_ptr")
            };
            need_bytes(d, 0, elems(Some(*nnz)), "values")?;
            need_bytes(d, 1, nnz.checked_mul(8), "indices")?;
            need_bytes(
                d,
                2,
                shape[axis].checked_add(1).and_then(|n| n.checked_mul(8)),
                name,
            )
        }
        _ => check_other_sizes(d, storage, layout_at),
    }
}

/// [`crate::shape::element_count`] of a shape known to hold no dynamic dimension.
#[inline]
fn static_count(shape: &[u64]) -> Result<u64> {
    let mut n: u64 = 1;
    for &v in shape {
        match n.checked_mul(v) {
            Some(p) => n = p,
            None => return crate::shape::element_count(shape),
        }
    }
    Ok(n)
}

/// [`check_sizes`] for the layouts off the common path.
#[inline(never)]
fn check_other_sizes(d: &TensorDescriptor, storage: Storage, layout_at: usize) -> Result<()> {
    let shape = &d.shape;
    let need = |i: usize, bytes: Option<u64>, what: &str| need_bytes(d, i, bytes, what);
    let elems = |n: Option<u64>| n.and_then(|n| storage.bytes_for(n));
    let u64s = |n: Option<u64>| n.and_then(|n| n.checked_mul(8));
    match &d.layout {
        Layout::Strided { strides } => {
            if !shape.contains(&0) {
                let Some((lo, hi)) = strided_range(strides, shape) else {
                    bail!(SizeOverflow, layout_at, "strided address range overflows");
                };
                check_span(d, storage, lo, hi, layout_at)?;
            }
        }
        Layout::Tiled(t) => {
            if !shape.contains(&0) {
                let Some((lo, hi)) = tiled_range(t, shape) else {
                    bail!(SizeOverflow, layout_at, "tiled address range overflows");
                };
                check_span(d, storage, lo, hi, layout_at)?;
            }
        }
        Layout::Morton { bits } => {
            for (k, &b) in bits.iter().enumerate() {
                let cap = if b >= 64 { u64::MAX } else { 1u64 << b };
                ensure!(
                    b >= 64 || shape[k] <= cap,
                    LayoutField,
                    layout_at + 4 * k,
                    "shape[{k}] = {} exceeds 2^morton_bits[{k}] = {cap}",
                    shape[k]
                );
            }
            let total: u64 = bits.iter().map(|&b| u64::from(b)).sum();
            let n = if total < 64 {
                Some(1u64 << total)
            } else {
                None
            };
            need(
                0,
                elems(n).and_then(|b| b.checked_add(d.byte_offset)),
                "Morton data",
            )?;
        }
        Layout::Hilbert { order, .. } => {
            for (k, &s) in shape.iter().enumerate() {
                let ok = *order < 64 && s == 1u64 << order;
                ensure!(
                    ok,
                    LayoutField,
                    HEADER_LEN + 8 * k,
                    "Hilbert needs shape[{k}] = 2^{order}, found {s}"
                );
            }
            let bits = u64::from(*order) * shape.len() as u64;
            let n = if bits < 64 { Some(1u64 << bits) } else { None };
            need(
                0,
                elems(n).and_then(|b| b.checked_add(d.byte_offset)),
                "Hilbert data",
            )?;
        }
        Layout::Coo { nnz, .. } => {
            need(0, elems(Some(*nnz)), "COO values")?;
            need(1, u64s(nnz.checked_mul(shape.len() as u64)), "COO indices")?;
        }
        Layout::Csf { nnz, .. } => {
            need(0, elems(Some(*nnz)), "CSF values")?;
            need(1, Some(16), "CSF pos_0")?;
            need(
                2 * shape.len(),
                u64s(Some(*nnz)),
                "CSF crd of the last level",
            )?;
        }
        Layout::BlockPaged(p) => {
            let n = p
                .num_pages
                .checked_mul(u64::from(p.page_size))
                .and_then(|n| n.checked_mul(shape[1]))
                .and_then(|n| n.checked_mul(shape[2]));
            need(0, elems(n), "page_pool")?;
            let w = p.block_table_index_type.width();
            need(2, (u64::from(p.num_seqs) + 1).checked_mul(w), "seq_ptr")?;
        }
        Layout::RowMajor
        | Layout::ColumnMajor
        | Layout::Csr { .. }
        | Layout::Csc { .. }
        | Layout::CompositeHead(_)
        | Layout::Extension { .. } => {}
    }
    Ok(())
}

/// Checks that element offsets `lo..=hi` (relative to `byte_offset`) lie inside buffer 0.
/// Offsets near the `i128` limits (extreme strides) fail with `SizeOverflow` at `layout_at`.
fn check_span(
    d: &TensorDescriptor,
    storage: Storage,
    lo: i128,
    hi: i128,
    layout_at: usize,
) -> Result<()> {
    let base = i128::from(d.byte_offset);
    let bytes = || {
        let first = base.checked_add(storage.byte_of(lo)?)?;
        let end = base
            .checked_add(storage.byte_of(hi)?)?
            .checked_add(storage.last_len())?;
        Some((first, end))
    };
    let Some((first, end)) = bytes() else {
        bail!(SizeOverflow, layout_at, "element address range overflows");
    };
    let size = i128::from(d.buffers[0].byte_size);
    ensure!(
        first >= 0,
        ByteOffset,
        HEADER_LEN + 8 * d.rank(),
        "the lowest element lies {} bytes before buffer 0",
        -first
    );
    ensure!(
        end <= size,
        BufferTooSmall,
        d.section_offsets().handles,
        "elements reach byte {end} but buffer 0 holds {size} bytes"
    );
    Ok(())
}

/// Range of element offsets `[lo, hi]` a tiled layout addresses over `space`
/// (`layouts.md` §2.4: `offset = tile_no · Π T + intra`), or `None` on overflow.
fn tiled_range(t: &Tiling, space: &[u64]) -> Option<(i128, i128)> {
    let tile: &[u64] = &t.tile_shape;
    let e: i128 = tile
        .iter()
        .try_fold(1i128, |a, &v| a.checked_mul(i128::from(v)))?;
    let grid: Vec<u64> = space
        .iter()
        .zip(tile)
        .map(|(&s, &t)| s.div_ceil(t))
        .collect();
    let (tlo, thi) = order_range(&t.outer, &grid)?;
    // Edge tiles are stored in full, so intra-tile offsets cover the whole tile.
    let (ilo, ihi) = match &t.inner {
        TileOrder::Tiled(n) => tiled_range(n, tile)?,
        other => order_range(other, tile)?,
    };
    let lo = tlo.checked_mul(e)?.checked_add(ilo)?;
    let hi = thi.checked_mul(e)?.checked_add(ihi)?;
    Some((lo, hi))
}

/// Offset range of a row-major, column-major or strided walk over `extent`.
fn order_range(order: &TileOrder, extent: &[u64]) -> Option<(i128, i128)> {
    match order {
        TileOrder::Strided(s) => strided_range(s, extent),
        _ => {
            let n = extent
                .iter()
                .try_fold(1i128, |a, &v| a.checked_mul(i128::from(v)))?;
            Some((0, n - 1))
        }
    }
}

/// Offset range `[lo, hi]` of a strided walk over `extent` (`layouts.md` §2.3:
/// `min_off`/`max_off`), or `None` when it overflows `i128`.
fn strided_range(strides: &[i64], extent: &[u64]) -> Option<(i128, i128)> {
    let (mut lo, mut hi) = (0i128, 0i128);
    for (k, &st) in strides.iter().enumerate() {
        let span = i128::from(st).checked_mul(i128::from(extent[k].saturating_sub(1)))?;
        lo = lo.checked_add(span.min(0))?;
        hi = hi.checked_add(span.max(0))?;
    }
    Some((lo, hi))
}
