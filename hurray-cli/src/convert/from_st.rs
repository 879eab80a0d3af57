//! safetensors as a conversion source: the header is read and every tensor checked
//! and mapped before anything is written; data then streams from the file.

use super::sink::Sink;
use super::Source;
use crate::dtype::{self, Carry};
use crate::error::{Error, Result};
use crate::output::Data;
use crate::st::read::StHeader;
use hurray_core::TensorDescriptor;
use hurray_io::file::{KvEntry, KvValue};
use std::fs::File;
use std::path::Path;

/// A safetensors file, checked and mapped to Hurray descriptors.
pub struct SafetensorsSource {
    file: File,
    header: StHeader,
    plans: Vec<(TensorDescriptor, Carry)>,
}

impl SafetensorsSource {
    /// Opens `path`, reads its header and maps every tensor.
    ///
    /// Errors: the header errors of [`StHeader::read`]; `Unsupported` for a dtype
    /// without a Hurray element type (naming the tensor); descriptor errors for shapes
    /// Hurray cannot hold (rank above 64).
    pub fn open(path: &Path) -> Result<SafetensorsSource> {
        let mut file = File::open(path)?;
        let len = file.metadata()?.len();
        let header = StHeader::read(&mut file, len)?;
        let plans = header
            .tensors
            .iter()
            .map(|t| {
                let ctx = |e: Error| e.context(format_args!("tensor {:?}", t.name));
                let m = dtype::from_safetensors(t.dtype).map_err(|m| ctx(Error::unsupported(m)))?;
                let d = super::dense(m.element_type, &t.shape).map_err(ctx)?;
                Ok((d, m.carry))
            })
            .collect::<Result<_>>()?;
        Ok(SafetensorsSource {
            file,
            header,
            plans,
        })
    }
}

impl Source for SafetensorsSource {
    fn data_bytes(&self) -> u64 {
        self.header.tensors.iter().map(|t| t.len).sum()
    }

    fn tensor_count(&self) -> usize {
        self.header.tensors.len()
    }

    fn has_names(&self) -> bool {
        true
    }

    fn feed(&mut self, sink: &mut dyn Sink) -> Result<()> {
        for (key, value) in &self.header.metadata {
            sink.add_kv(KvEntry {
                key: key.clone(),
                value: KvValue::String(value.clone()),
            })?;
        }
        for (t, (d, carry)) in self.header.tensors.iter().zip(&self.plans) {
            let data = Data::Range {
                file: &self.file,
                start: t.start,
                len: t.len,
            };
            sink.tensor(&t.name, d, data, *carry)?;
        }
        Ok(())
    }
}
