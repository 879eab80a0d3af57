//! HRRYFILE → safetensors. Every tensor must be something safetensors can hold (a
//! plain, row-major, unquantized host tensor of a dtype safetensors has) and every
//! KV entry a string; anything else is refused before a byte is written, naming the
//! tensor or key. Data is copied from the HRRYFILE's byte ranges in the order the
//! `safetensors` crate itself would write, so a file that came from safetensors goes
//! back to the same bytes.

use super::from_hurray::HrryFileSource;
use crate::dtype::{self, Carry};
use crate::error::{Error, Result};
use crate::inspect::value::type_name;
use crate::output::{Data, Output};
use crate::progress::Progress;
use crate::st::write::{plan, StOut};
use hurray_core::{DeviceTag, Layout, TensorDescriptor};
use hurray_io::file::data_crc::DATA_CRC32C_KEY;
use hurray_io::file::KvValueRef;
use std::collections::BTreeMap;
use std::ops::Range;
use std::path::Path;

/// One tensor to copy: where its bytes are, how they travel, how many come out.
struct Copy {
    range: Range<u64>,
    carry: Carry,
    elements: u64,
}

/// Why `d` cannot be written to safetensors, if it cannot.
fn refusal(d: &TensorDescriptor) -> Option<String> {
    if matches!(d.layout, Layout::CompositeHead(_)) {
        return Some("it is a composite head; safetensors has no composites".into());
    }
    if d.layout != Layout::RowMajor {
        return Some(format!(
            "its layout is {}; safetensors holds row-major tensors only",
            d.layout.name()
        ));
    }
    if d.byte_offset != 0 || d.buffers.len() != 1 {
        return Some("its data does not start at byte 0 of a single buffer".into());
    }
    let sections = [
        (d.quantization.is_some(), "quantization"),
        (d.shard.is_some(), "shard"),
        (d.statistics.is_some(), "statistics"),
        (d.extension_type.is_some(), "extension-type"),
        (d.composite_member.is_some(), "composite-member"),
    ];
    if let Some((_, what)) = sections.iter().find(|(present, _)| *present) {
        return Some(format!(
            "it has a {what} section, which safetensors cannot hold"
        ));
    }
    let h = &d.buffers[0];
    if h.device != DeviceTag::Cpu {
        return Some(format!(
            "its buffer is tagged for device {}; safetensors holds host tensors only",
            h.device.name()
        ));
    }
    None
}

/// Converts the HRRYFILE `src` into a safetensors file at `dest`, synced when
/// `durable` (see [`Output::create`]). Returns the tensor count, the bytes written
/// and notes on what was not carried (the data CRC-32C entry: safetensors has no
/// data integrity).
///
/// Errors: `Unsupported` naming the first tensor or KV entry safetensors cannot hold;
/// `Safetensors` when the crate's validation refuses the header; I/O errors.
pub fn convert(
    src: &HrryFileSource,
    dest: &Path,
    durable: bool,
    label: &str,
) -> Result<(usize, u64, Vec<String>)> {
    let reader = src.reader();
    let catalog = reader.catalog();
    let mut metadata = BTreeMap::new();
    let mut notes = Vec::new();
    for e in reader.kv() {
        if e.key == DATA_CRC32C_KEY {
            notes.push(format!(
                "safetensors has no data integrity: the data CRC-32C entry \
                 ({DATA_CRC32C_KEY:?}) was not carried"
            ));
            continue;
        }
        match e.value {
            KvValueRef::String(s) => {
                metadata.insert(e.key.to_owned(), s.to_owned());
            }
            other => {
                return Err(Error::unsupported(format_args!(
                    "KV entry {:?} holds a {} value; safetensors metadata holds strings only",
                    e.key,
                    type_name(other.tag())
                )))
            }
        }
    }
    let mut outs = Vec::with_capacity(reader.len());
    let mut copies = Vec::with_capacity(reader.len());
    for (i, e) in reader.entries().enumerate() {
        let ctx = |m: String| Error::unsupported(m).context(format_args!("tensor {:?}", e.name));
        let d = catalog
            .descriptor_at(i)
            .ok_or_else(|| ctx("it has no descriptor".into()))?;
        if let Some(why) = refusal(&d) {
            return Err(ctx(why));
        }
        let st = dtype::to_safetensors(d.element_type).map_err(ctx)?;
        let elements = hurray_core::element_count(&d.shape)
            .map_err(|e| ctx(format!("its shape cannot be counted: {e}")))?;
        let bits = elements.checked_mul(st.bitsize() as u64);
        if bits.is_none_or(|b| b % 8 != 0) {
            return Err(ctx(format!(
                "{elements} elements of {} do not fill whole bytes, which safetensors requires",
                d.element_type
            )));
        }
        let (carry, out_len) = if st == safetensors::Dtype::BOOL {
            (Carry::UnpackBool, elements)
        } else {
            (Carry::Verbatim, d.buffers[0].byte_size)
        };
        let range = catalog
            .buffer_ranges(i)
            .and_then(|r| r.into_iter().next())
            .ok_or_else(|| ctx("its buffer cannot be located".into()))?;
        let shape = d
            .shape
            .iter()
            .map(|&n| usize::try_from(n))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|_| ctx("its shape does not fit this platform's usize".into()))?;
        outs.push(StOut {
            name: e.name.to_owned(),
            dtype: st,
            shape,
            len: out_len,
        });
        copies.push(Copy {
            range,
            carry,
            elements,
        });
    }
    let p = plan(&outs, &metadata)?;
    let mut out = Output::create(dest, durable, Progress::for_bytes(p.data_len, label))?;
    out.write_bytes(&p.prefix)?;
    for &i in &p.order {
        let c = &copies[i];
        let data = Data::Range {
            file: src.file(),
            start: c.range.start,
            len: c.range.end - c.range.start,
        };
        out.write_data(
            data,
            c.carry,
            outs[i].len,
            c.elements,
            &format!("tensor {:?}", outs[i].name),
        )?;
    }
    let bytes = out.finish()?;
    Ok((outs.len(), bytes, notes))
}
