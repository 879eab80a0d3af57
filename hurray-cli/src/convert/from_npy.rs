//! NumPy `.npy` and `.npz` files as conversion sources. An `.npy` array is named
//! after its file (`weights.npy` → `weights`); each `name.npy` member of an `.npz`
//! archive becomes tensor `name`. Fortran-order arrays keep their byte order and get
//! the column-major layout. Data streams: from the file for `.npy`, through the zip
//! decompressor for `.npz`.

use super::sink::Sink;
use super::Source;
use crate::dtype::{self, Carry};
use crate::error::{Error, Result};
use crate::npy::NpyHeader;
use crate::output::Data;
use hurray_core::{Layout, TensorDescriptor};
use std::fs::File;
use std::io::Read;
use std::path::Path;
use zip::ZipArchive;

/// One array, planned.
struct Planned {
    name: String,
    descriptor: TensorDescriptor,
    carry: Carry,
    /// Offset of the data within the `.npy` bytes.
    data_offset: u64,
    /// Data length in the source.
    len: u64,
}

/// Checks a parsed header against the bytes that exist and maps it to a descriptor.
fn plan(name: String, h: NpyHeader, available: u64, at: u64) -> Result<Planned> {
    let ctx = |e: Error| e.context(format_args!("array {name:?}"));
    let m = dtype::from_numpy(&h.descr).map_err(|m| ctx(Error::unsupported(m)))?;
    let mut descriptor = super::dense(m.element_type, &h.shape).map_err(ctx)?;
    if h.fortran_order && h.shape.len() > 1 {
        descriptor.layout = Layout::ColumnMajor;
    }
    let overflow = || {
        ctx(Error::format(
            "SizeOverflow",
            at,
            format_args!("{} elements of {:?} overflow", h.shape.len(), h.descr),
        ))
    };
    let elements = h.elements().ok_or_else(overflow)?;
    let item = match m.carry {
        Carry::PackBool => 1,
        _ => u64::from(m.element_type.storage().map_or(0, |s| s.bits() / 8)),
    };
    let len = elements.checked_mul(item).ok_or_else(overflow)?;
    let end = h.data_offset.checked_add(len).ok_or_else(overflow)?;
    if end > available {
        return Err(ctx(Error::format(
            "Truncated",
            at + available,
            format_args!(
                "the shape {:?} of {:?} needs {len} data bytes but only {} follow the header",
                h.shape,
                h.descr,
                available - h.data_offset
            ),
        )));
    }
    if end < available {
        return Err(ctx(Error::format(
            "TrailingBytes",
            at + end,
            format_args!("{} bytes follow the array's data", available - end),
        )));
    }
    Ok(Planned {
        name,
        descriptor,
        carry: m.carry,
        data_offset: h.data_offset,
        len,
    })
}

/// A single `.npy` array.
pub struct NpySource {
    file: File,
    array: Planned,
}

impl NpySource {
    /// Opens `path` and plans its array, named after the file stem.
    ///
    /// Errors: the [`NpyHeader::read`] errors; `Unsupported` for a dtype without a
    /// Hurray element type; `Truncated` / `TrailingBytes` when the data is not
    /// exactly what the header declares.
    pub fn open(path: &Path) -> Result<NpySource> {
        let mut file = File::open(path)?;
        let len = file.metadata()?.len();
        let header = NpyHeader::read(&mut file, len, 0)?;
        let name = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| "array".to_owned());
        let array = plan(name, header, len, 0)?;
        Ok(NpySource { file, array })
    }
}

impl Source for NpySource {
    fn data_bytes(&self) -> u64 {
        self.array.len
    }

    fn tensor_count(&self) -> usize {
        1
    }

    fn has_names(&self) -> bool {
        true
    }

    fn feed(&mut self, sink: &mut dyn Sink) -> Result<()> {
        let a = &self.array;
        let data = Data::Range {
            file: &self.file,
            start: a.data_offset,
            len: a.len,
        };
        sink.tensor(&a.name, &a.descriptor, data, a.carry)
    }
}

/// An `.npz` archive of arrays.
pub struct NpzSource {
    archive: ZipArchive<File>,
    arrays: Vec<(usize, Planned)>,
}

fn zip_error(e: zip::result::ZipError) -> Error {
    match e {
        zip::result::ZipError::Io(io) => io.into(),
        other => Error::format_anywhere("Zip", other),
    }
}

impl NpzSource {
    /// Opens the archive at `path` and plans every member (reading only each
    /// member's `.npy` header).
    ///
    /// Errors: `Zip` for a damaged archive; `Member` for a member that is not a
    /// `.npy` array; the [`NpySource::open`] errors per member.
    pub fn open(path: &Path) -> Result<NpzSource> {
        let mut archive = ZipArchive::new(File::open(path)?).map_err(zip_error)?;
        let mut arrays = Vec::with_capacity(archive.len());
        for i in 0..archive.len() {
            let mut member = archive.by_index(i).map_err(zip_error)?;
            let member_name = member.name().to_owned();
            let Some(name) = member_name.strip_suffix(".npy") else {
                return Err(Error::format_anywhere(
                    "Member",
                    format_args!("archive member {member_name:?} is not a .npy array"),
                ));
            };
            if member.is_dir() {
                continue;
            }
            let size = member.size();
            let ctx = |e: Error| e.context(format_args!("member {member_name:?}"));
            let header = NpyHeader::read(&mut member, size, 0).map_err(ctx)?;
            arrays.push((i, plan(name.to_owned(), header, size, 0).map_err(ctx)?));
        }
        Ok(NpzSource { archive, arrays })
    }
}

impl Source for NpzSource {
    fn data_bytes(&self) -> u64 {
        self.arrays.iter().map(|(_, a)| a.len).sum()
    }

    fn tensor_count(&self) -> usize {
        self.arrays.len()
    }

    fn has_names(&self) -> bool {
        true
    }

    fn feed(&mut self, sink: &mut dyn Sink) -> Result<()> {
        for (i, a) in &self.arrays {
            let mut member = self.archive.by_index(*i).map_err(zip_error)?;
            let ctx = |e: Error| e.context(format_args!("member \"{}.npy\"", a.name));
            // Skip the header (already parsed) by reading it again.
            let size = member.size();
            NpyHeader::read(&mut member, size, 0).map_err(ctx)?;
            let data = Data::Reader {
                reader: &mut member,
                len: a.len,
                at: a.data_offset,
            };
            sink.tensor(&a.name, &a.descriptor, data, a.carry)?;
            // Reading to the end lets the zip reader check the member's CRC-32.
            let mut rest = [0u8; 1];
            match member.read(&mut rest) {
                Ok(0) => {}
                Ok(_) => {
                    return Err(ctx(Error::format_anywhere(
                        "TrailingBytes",
                        "bytes follow the array's data",
                    )))
                }
                Err(e) => return Err(ctx(e.into())),
            }
        }
        Ok(())
    }
}
