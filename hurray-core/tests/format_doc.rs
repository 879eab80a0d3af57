//! The annotated hex example in `docs/format.md` is the encoding of the descriptor it
//! describes: offsets, bytes and all.

use hurray_core::{
    BufferHandle, DeviceTag, ElementType, MemoryClass, Scheme, SyncMode, TensorDescriptor,
};
use std::path::Path;

const MARKER: &str = "<!-- checked by hurray-core/tests/format_doc.rs -->";

/// The example's rows as (offset, bytes), from the fenced block after [`MARKER`].
/// Columns are separated by two or more spaces: offset, bytes, field.
fn documented_rows(doc: &str) -> Vec<(usize, Vec<u8>)> {
    let block = doc
        .split_once(MARKER)
        .expect("docs/format.md keeps the marker")
        .1;
    let body = block
        .split("```")
        .nth(1)
        .expect("a fenced block follows the marker");
    body.lines()
        .skip(2) // the language tag line and the column titles
        .filter(|l| !l.trim().is_empty())
        .map(|line| {
            let mut cols = line.split("  ").map(str::trim).filter(|c| !c.is_empty());
            let offset = cols.next().unwrap().parse().unwrap();
            let bytes = cols
                .next()
                .unwrap()
                .split(' ')
                .map(|b| u8::from_str_radix(b, 16).unwrap_or_else(|_| panic!("{line}")))
                .collect();
            (offset, bytes)
        })
        .collect()
}

#[test]
fn format_guide_hex_example_is_the_encoding() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/format.md");
    let doc = std::fs::read_to_string(&path).unwrap();

    let mut d = TensorDescriptor::dense(ElementType::Int8, &[2, 3]).unwrap();
    d.buffers[0] = BufferHandle {
        byte_size: 6,
        alignment: 4096,
        device: DeviceTag::Cuda,
        sync_mode: SyncMode::Event,
        memory_class: MemoryClass::HostPinned,
    };
    d.quantization = Some(
        Scheme::PerTensor {
            scale: 0.5,
            zero_point: -3,
        }
        .into(),
    );
    let bytes = d.encode().unwrap();
    assert_eq!(bytes.len(), 81);
    assert_eq!(TensorDescriptor::decode(&bytes).unwrap(), d);

    let mut documented = Vec::new();
    for (offset, row) in documented_rows(&doc) {
        assert_eq!(offset, documented.len(), "offset column of row {row:02X?}");
        documented.extend(row);
    }
    assert_eq!(documented, bytes);
}
