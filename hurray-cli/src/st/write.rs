//! The safetensors header for a set of tensors, laid out exactly as the `safetensors`
//! crate's own serializer lays it out (tensors by descending dtype alignment, then
//! by name; JSON padded with spaces to a multiple of 8), validated by the crate's
//! `Metadata`. The caller then streams each tensor's data in the returned order.

use super::read::METADATA_KEY;
use crate::error::{Error, Result};
use safetensors::tensor::{Dtype, Metadata, TensorInfo};
use serde::ser::{Serialize, SerializeMap, Serializer};
use std::collections::BTreeMap;

/// A tensor to write: name, dtype, shape and data length in bytes.
#[derive(Clone, Debug)]
pub struct StOut {
    /// The name.
    pub name: String,
    /// The dtype.
    pub dtype: Dtype,
    /// The shape.
    pub shape: Vec<usize>,
    /// Data length in bytes.
    pub len: u64,
}

/// The planned file start: the order to write tensor data in (indices into the
/// caller's slice) and the bytes that precede the data (8-byte length + header).
#[derive(Debug)]
pub struct StPlan {
    /// Tensor indices in data order.
    pub order: Vec<usize>,
    /// The 8-byte header length followed by the padded JSON header.
    pub prefix: Vec<u8>,
    /// Total data bytes after the prefix.
    pub data_len: u64,
}

/// Plans a safetensors file holding `tensors` and `metadata`.
///
/// Errors: `Safetensors` when the crate's validation refuses the set (a length that
/// disagrees with dtype × shape, for example).
pub fn plan(tensors: &[StOut], metadata: &BTreeMap<String, String>) -> Result<StPlan> {
    let mut order: Vec<usize> = (0..tensors.len()).collect();
    order.sort_by(|&a, &b| {
        let (a, b) = (&tensors[a], &tensors[b]);
        b.dtype.cmp(&a.dtype).then_with(|| a.name.cmp(&b.name))
    });
    let mut infos = Vec::with_capacity(tensors.len());
    let mut offset = 0usize;
    for &i in &order {
        let t = &tensors[i];
        let len = usize::try_from(t.len)
            .map_err(|_| Error::unsupported(format_args!("tensor {:?} is too large", t.name)))?;
        let end = offset.checked_add(len).ok_or_else(|| {
            Error::unsupported("the tensors' total size overflows this platform's usize")
        })?;
        infos.push((
            t.name.clone(),
            TensorInfo {
                dtype: t.dtype,
                shape: t.shape.clone(),
                data_offsets: (offset, end),
            },
        ));
        offset = end;
    }
    let crate_meta = (!metadata.is_empty()).then(|| {
        metadata
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    });
    Metadata::new(crate_meta, infos.clone()).map_err(|e| {
        Error::format_anywhere("Safetensors", format_args!("cannot write the header: {e}"))
    })?;
    let mut json = serde_json::to_vec(&Header {
        metadata,
        tensors: &infos,
    })
    .map_err(|e| Error::format_anywhere("Safetensors", e))?;
    json.resize(json.len().next_multiple_of(8), b' ');
    let mut prefix = Vec::with_capacity(8 + json.len());
    prefix.extend_from_slice(&(json.len() as u64).to_le_bytes());
    prefix.extend_from_slice(&json);
    Ok(StPlan {
        order,
        prefix,
        data_len: offset as u64,
    })
}

/// The JSON header: `__metadata__` first (when not empty), then the tensors in data
/// order, as the crate writes it.
struct Header<'a> {
    metadata: &'a BTreeMap<String, String>,
    tensors: &'a [(String, TensorInfo)],
}

impl Serialize for Header<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        let extra = usize::from(!self.metadata.is_empty());
        let mut map = s.serialize_map(Some(self.tensors.len() + extra))?;
        if !self.metadata.is_empty() {
            map.serialize_entry(METADATA_KEY, self.metadata)?;
        }
        for (name, info) in self.tensors {
            map.serialize_entry(name, info)?;
        }
        map.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use safetensors::tensor::TensorView;

    #[test]
    fn the_layout_is_the_crates_own_byte_for_byte() {
        let a = [1u8, 2, 3, 4, 5, 6, 7, 8];
        let b = [9u8, 10];
        let c = [0u8; 16];
        let views = vec![
            ("zeta", TensorView::new(Dtype::U8, vec![2], &b).unwrap()),
            ("alpha", TensorView::new(Dtype::F32, vec![2], &a).unwrap()),
            ("mid", TensorView::new(Dtype::I64, vec![2], &c).unwrap()),
        ];
        let meta: BTreeMap<String, String> = [("format".to_string(), "pt".to_string())].into();
        let expected =
            safetensors::serialize(views.clone(), Some(meta.clone().into_iter().collect()))
                .unwrap();

        let outs: Vec<StOut> = views
            .iter()
            .map(|(n, v)| StOut {
                name: n.to_string(),
                dtype: v.dtype(),
                shape: v.shape().to_vec(),
                len: v.data().len() as u64,
            })
            .collect();
        let p = plan(&outs, &meta).unwrap();
        let mut got = p.prefix.clone();
        for &i in &p.order {
            got.extend_from_slice(views[i].1.data());
        }
        assert_eq!(got, expected);
        assert_eq!(p.data_len, 26);
    }

    #[test]
    fn inconsistent_sizes_are_refused() {
        let bad = StOut {
            name: "x".into(),
            dtype: Dtype::F32,
            shape: vec![3],
            len: 8,
        };
        assert!(plan(&[bad], &BTreeMap::new()).is_err());
    }
}
