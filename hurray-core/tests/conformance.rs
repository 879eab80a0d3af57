//! Golden vectors of the public reference (`../shared/conformance`): every descriptor
//! decodes to what `manifest.json` says and re-encodes to identical bytes.

use hurray_core::{ElementType, TensorDescriptor};
use serde_json::Value;
use std::path::PathBuf;

fn conformance_dir() -> Option<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/conformance");
    if dir.join("manifest.json").is_file() {
        Some(dir)
    } else {
        eprintln!(
            "SKIPPED: {} not found (golden vectors live in ../shared beside the repository)",
            dir.display()
        );
        None
    }
}

#[test]
fn golden_descriptors_decode_to_manifest_and_reencode_identically() {
    let Some(dir) = conformance_dir() else { return };
    let manifest: Value =
        serde_json::from_slice(&std::fs::read(dir.join("manifest.json")).unwrap()).unwrap();
    let entries = manifest["descriptors"].as_array().unwrap();
    assert_eq!(
        entries.len(),
        11,
        "the manifest lists 11 descriptor vectors"
    );
    for entry in entries {
        let file = entry["file"].as_str().unwrap();
        let bytes = std::fs::read(dir.join(file)).unwrap();
        let d = TensorDescriptor::decode(&bytes).unwrap_or_else(|e| panic!("{file}: {e}"));
        let x = &entry["expect"];
        assert_eq!(x["version_major"], 1, "{file}");
        assert_eq!(
            u64::from(d.version_minor),
            x["version_minor"].as_u64().unwrap(),
            "{file}"
        );
        assert_eq!(
            u64::from(d.element_type.tag()),
            x["element_type_tag"].as_u64().unwrap(),
            "{file}"
        );
        assert_eq!(
            d.element_type.name(),
            x["element_type"].as_str().unwrap(),
            "{file}"
        );
        assert_eq!(
            ElementType::from_name(x["element_type"].as_str().unwrap()),
            Some(d.element_type)
        );
        let shape: Vec<u64> = x["shape"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap())
            .collect();
        assert_eq!(d.shape, shape, "{file}");
        assert_eq!(d.byte_offset, x["byte_offset"].as_u64().unwrap(), "{file}");
        assert_eq!(
            u64::from(d.layout.tag()),
            x["layout_tag"].as_u64().unwrap(),
            "{file}"
        );
        let sizes: Vec<u64> = x["buffer_byte_sizes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap())
            .collect();
        assert_eq!(
            d.buffers.iter().map(|b| b.byte_size).collect::<Vec<_>>(),
            sizes,
            "{file}"
        );
        assert_eq!(
            d.quantization.is_some(),
            x["has_quantization"].as_bool().unwrap(),
            "{file}"
        );
        assert_eq!(
            d.shard.is_some(),
            x["has_shard"].as_bool().unwrap(),
            "{file}"
        );
        assert_eq!(d.encode().unwrap(), bytes, "{file}: re-encoding differs");
        assert_eq!(d.encoded_len(), bytes.len(), "{file}");
    }
}
