//! `hurray dump FILE NAME [--limit N]`: the first values of one tensor, in logical
//! (row-major index) order, decoded per element type. Dense tensors are supported:
//! row-major, column-major and strided layouts; other layouts are refused with a
//! message naming the layout.

use crate::container::{each_stream_item, stream_names, Container};
use crate::error::{Error, Result};
use crate::values;
use hurray_core::{element_count, Layout, Storage};
use hurray_io::{Item, Tensor};
use std::fmt::Write;
use std::path::Path;

/// Finds the tensor `name` in the Hurray file or stream at `path`.
///
/// Errors: not a Hurray file; it fails validation; no tensor has that name.
pub fn find(path: &Path, name: &str) -> Result<Tensor> {
    let found = match Container::open(path)? {
        Container::File(r) => r.tensor(name).map_err(|e| Error::from(e).at_path(path))?,
        Container::Stream { .. } => each_stream_item(path, |k, _, item: Item| {
            let names = stream_names(k, &item);
            let mut i = 0;
            let mut hit = None;
            item.for_each_tensor(&mut |t| {
                if hit.is_none() && names.get(i).is_some_and(|n| n == name) {
                    hit = Some(t.clone());
                }
                i += 1;
            });
            hit
        })
        .map_err(|e| e.at_path(path))?,
    };
    found.ok_or_else(|| {
        Error::usage(format_args!(
            "no tensor named {name:?} (`hurray inspect {}` lists them)",
            path.display()
        ))
        .at_path(path)
    })
}

/// Where element `o` (in elements from element [0, ..., 0], which is `byte_offset`
/// bytes into the buffer) lies: the byte to start decoding at and the element's
/// index from there.
fn locate(storage: Storage, byte_offset: u64, o: i128) -> Option<(usize, u64)> {
    let base = i128::from(byte_offset);
    let (start, index) = match storage {
        Storage::Bytes(w) => (base.checked_add(o.checked_mul(i128::from(w))?)?, 0),
        Storage::Packed { bits } => {
            let bit = base
                .checked_mul(8)?
                .checked_add(o.checked_mul(i128::from(bits))?)?;
            (
                bit.div_euclid(8),
                (bit.rem_euclid(8) / i128::from(bits)) as u64,
            )
        }
        Storage::SixBit => (
            base.checked_add(o.div_euclid(4).checked_mul(3)?)?,
            o.rem_euclid(4) as u64,
        ),
    };
    Some((usize::try_from(start).ok()?, index))
}

/// The element offsets (from element [0, ..., 0]) of logical index `idx`, or `None`
/// for a layout dump does not walk.
fn offset(layout: &Layout, shape: &[u64], idx: &[u64]) -> Option<i128> {
    // Horner's rule over (index, extent) pairs, outermost first.
    fn horner<'a>(mut pairs: impl Iterator<Item = (&'a u64, &'a u64)>) -> Option<i128> {
        pairs.try_fold(0i128, |a, (&i, &n)| {
            a.checked_mul(i128::from(n))?.checked_add(i128::from(i))
        })
    }
    match layout {
        Layout::RowMajor => horner(idx.iter().zip(shape)),
        Layout::ColumnMajor => horner(idx.iter().zip(shape).rev()),
        Layout::Strided { strides } => idx.iter().zip(strides).try_fold(0i128, |a, (&i, &s)| {
            a.checked_add(i128::from(i).checked_mul(i128::from(s))?)
        }),
        _ => None,
    }
}

/// The row-major multi-index of flat position `k`.
fn unravel(mut k: u64, shape: &[u64]) -> Vec<u64> {
    let mut idx = vec![0; shape.len()];
    for (i, &n) in shape.iter().enumerate().rev() {
        if n > 0 {
            idx[i] = k % n;
            k /= n;
        }
    }
    idx
}

/// Renders the first `limit` values (all when `limit` is 0) of `t`, named `name`.
///
/// Errors: `Unsupported` for composite heads, non-dense layouts, dynamic shapes and
/// types without a built-in encoding; `OutOfBounds` when an element lies outside the
/// buffer (a validated file never has one).
pub fn render(name: &str, t: &Tensor, limit: u64) -> Result<String> {
    let d = t.descriptor();
    let unsupported =
        |why: String| Error::unsupported(why).context(format_args!("tensor {name:?}"));
    if matches!(d.layout, Layout::CompositeHead(_)) {
        return Err(unsupported(
            "it is a composite head, which holds no data; dump its members".into(),
        ));
    }
    let storage = d.element_type.storage().ok_or_else(|| {
        unsupported(format!(
            "its element type {} has no built-in encoding",
            d.element_type
        ))
    })?;
    let n = element_count(&d.shape)
        .map_err(|e| unsupported(format!("its shape cannot be counted: {e}")))?;
    if !matches!(
        d.layout,
        Layout::RowMajor | Layout::ColumnMajor | Layout::Strided { .. }
    ) {
        return Err(unsupported(format!(
            "dump walks row-major, column-major and strided tensors; this one is {}",
            d.layout.name()
        )));
    }
    let bytes = t.buffers().first().map_or(&[][..], |b| b.as_slice());
    let shown = if limit == 0 { n } else { n.min(limit) };
    let shape: Vec<String> = d.shape.iter().map(u64::to_string).collect();
    let mut out = format!(
        "{}: {} [{}] {}, {n} values",
        crate::inspect::table::printable(name),
        d.element_type,
        shape.join(", "),
        d.layout.name()
    );
    if let Some(q) = &d.quantization {
        let _ = write!(
            out,
            ", stored codes of {} quantization (not dequantized)",
            q.scheme.name()
        );
    }
    let _ = writeln!(
        out,
        "{}",
        if shown < n {
            format!("; first {shown}:")
        } else {
            ":".into()
        }
    );
    let mut rows = Vec::new();
    for k in 0..shown {
        let idx = unravel(k, &d.shape);
        let value = offset(&d.layout, &d.shape, &idx)
            .and_then(|o| locate(storage, d.byte_offset, o))
            .and_then(|(start, i)| values::element(d.element_type, bytes.get(start..)?, i))
            .ok_or_else(|| {
                Error::format_anywhere(
                    "OutOfBounds",
                    format_args!("tensor {name:?}: element {idx:?} lies outside its buffer"),
                )
            })?;
        let idx: Vec<String> = idx.iter().map(u64::to_string).collect();
        rows.push((format!("[{}]", idx.join(", ")), value));
    }
    let w = rows.iter().map(|(i, _)| i.len()).max().unwrap_or(0);
    for (i, v) in rows {
        let _ = writeln!(out, "  {i:<w$}  {v}");
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use hurray_core::{ElementType, TensorDescriptor};

    fn tensor(layout: Layout, et: ElementType, shape: &[u64], bytes: &[u8]) -> Tensor {
        let mut d = TensorDescriptor::dense(et, shape).unwrap();
        d.layout = layout;
        Tensor::new(d, vec![hurray_io::Buffer::copy_from(bytes)]).unwrap()
    }

    #[test]
    fn row_and_column_major_walk_logical_order() {
        let bytes: Vec<u8> = (1..=6).collect();
        let t = tensor(Layout::RowMajor, ElementType::Uint8, &[2, 3], &bytes);
        let out = render("t", &t, 4).unwrap();
        assert_eq!(
            out,
            "t: uint8 [2, 3] row_major, 6 values; first 4:\n  [0, 0]  1\n  [0, 1]  2\n  [0, 2]  3\n  [1, 0]  4\n"
        );
        let t = tensor(Layout::ColumnMajor, ElementType::Uint8, &[2, 3], &bytes);
        let out = render("t", &t, 0).unwrap();
        let vals: Vec<&str> = out
            .lines()
            .skip(1)
            .map(|l| l.rsplit(' ').next().unwrap())
            .collect();
        assert_eq!(vals, ["1", "3", "5", "2", "4", "6"]);
    }

    #[test]
    fn packed_and_scalar_tensors() {
        let t = tensor(Layout::RowMajor, ElementType::Int4, &[3], &[0x3F, 0x08]);
        assert!(render("q", &t, 0)
            .unwrap()
            .ends_with("[0]  -1\n  [1]  3\n  [2]  -8\n"));
        let t = tensor(Layout::RowMajor, ElementType::Float16, &[], &[0x00, 0x3C]);
        assert_eq!(
            render("s", &t, 5).unwrap(),
            "s: float16 [] row_major, 1 values:\n  []  1.0\n"
        );
    }

    #[test]
    fn locate_handles_negative_offsets() {
        assert_eq!(locate(Storage::Bytes(4), 8, -1), Some((4, 0)));
        assert_eq!(locate(Storage::Packed { bits: 4 }, 1, -1), Some((0, 1)));
        assert_eq!(locate(Storage::SixBit, 3, 5), Some((6, 1)));
        assert_eq!(locate(Storage::Bytes(4), 0, -1), None);
    }
}
