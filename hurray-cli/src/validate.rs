//! `hurray validate FILE...`: strict validation of Hurray files and streams. A file
//! is opened by `hurray-io`, which checks the header, trailer, index (CRC included),
//! KV section, every descriptor, placement and composite rule; a stream is decoded to
//! its end under the same descriptor and composite rules. The buffer-content rules
//! of `hurray_core::content` (sparse indices and pointers, block tables, scales, zero
//! points, e8m0 bytes) are checked on every tensor of either, and the data rules of
//! [`crate::data_rules`] on every dense tensor.

use crate::container::each_stream_item;
use crate::data_rules;
use crate::detect::{self, Format};
use crate::error::{Error, Result};
use hurray_io::file::data_crc::{self, DataCrc};
use hurray_io::file::{CrcStatus, FileReader};
use std::path::Path;

/// `N thing` or `N things`.
pub fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// Validates the file at `path`; returns a one-line summary of what was checked.
///
/// Errors: the first rule the file breaks, with its byte offset.
pub fn validate(path: &Path) -> Result<String> {
    let run = || -> Result<String> {
        match detect::detect(path)? {
            Format::HrryFile => {
                let r = FileReader::open(path)?;
                let c = r.catalog();
                for (i, e) in r.entries().enumerate() {
                    let in_tensor = |err: Error| err.context(format_args!("tensor {:?}", e.name));
                    let t = r.tensor(e.name).map_err(|err| in_tensor(err.into()))?;
                    let (Some(d), Some(t)) = (c.descriptor_at(i), t) else {
                        continue;
                    };
                    if let Some(b) = t.buffers().first() {
                        data_rules::check(&d, b.as_slice(), e.data_offset).map_err(in_tensor)?;
                    }
                }
                let (major, minor) = r.info().version();
                let crc = match r.info().crc {
                    CrcStatus::Verified(v) => format!("index CRC-32C verified ({v:#010x})"),
                    CrcStatus::Absent => "no index CRC".to_owned(),
                };
                let data = match data_crc::verify(&r)? {
                    DataCrc::Verified(n) => format!(
                        "data CRC-32C verified for {}",
                        plural(n, "tensor", "tensors")
                    ),
                    DataCrc::Absent => format!(
                        "data not checked ({:?} KV entry absent)",
                        data_crc::DATA_CRC32C_KEY
                    ),
                };
                Ok(format!(
                    "HRRYFILE {major}.{minor}, {}, {}, {crc}, {data}",
                    plural(r.len(), "tensor", "tensors"),
                    plural(r.kv().len(), "KV entry", "KV entries")
                ))
            }
            Format::Stream => {
                let mut tensors = 0usize;
                let failed = each_stream_item(path, |k, at, item| {
                    let mut result = Ok(());
                    item.for_each_tensor(&mut |t| {
                        tensors += 1;
                        let d = t.descriptor();
                        if let (Ok(()), Some(b)) = (&result, t.buffers().first()) {
                            let data_at = at + d.encoded_len() as u64;
                            result = data_rules::check(d, b.as_slice(), data_at)
                                .map_err(|e| e.context(format_args!("tensor_{k}")));
                        }
                    });
                    result.err()
                })?;
                if let Some(e) = failed {
                    return Err(e);
                }
                // A stream carries no KV section, so no data CRC-32C can be recorded.
                Ok(format!(
                    "Hurray stream, {}, data not checked (a stream records no data CRC-32C)",
                    plural(tensors, "tensor", "tensors")
                ))
            }
            other => Err(Error::usage(format_args!(
                "this is a {other} file, not a Hurray file (validate checks .hrry files and streams)"
            ))),
        }
    };
    run().map_err(|e| e.at_path(path))
}
