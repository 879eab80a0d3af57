//! `bindings/go/testdata/opaque_layout.hrry`: a file holding one float32 tensor `x`
//! whose layout is the private extension tag 0xF3 (id 7), for the Go test that typed
//! views of an opaque layout are refused. Go's writers (strict, no agreement) cannot
//! make one, so the Rust writer does; this test keeps the committed bytes equal to
//! what it writes. `HURRAY_BLESS=1 cargo test -p hurray-matrix --test opaque_fixture`
//! rewrites the file.

use hurray_core::{ElementType, Layout, TensorDescriptor};
use hurray_io::file::{FileWriterTo, WriteOptions};
use hurray_io::{Buffer, Tensor};
use std::path::PathBuf;

#[test]
fn opaque_layout_fixture_is_current() {
    let mut d = TensorDescriptor::dense(ElementType::Float32, &[4]).unwrap();
    d.layout = Layout::Extension {
        tag: 0xF3,
        id: 7,
        data: vec![1, 2],
    };
    let values: Vec<u8> = [1.0f32, 2.0, 3.0, 4.0]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    let t = Tensor::new(d, vec![Buffer::copy_from(&values)]).unwrap();
    let mut w = FileWriterTo::new(Vec::new(), WriteOptions::default()).unwrap();
    w.write_tensor("x", &t).unwrap();
    let bytes = w.finish().unwrap();
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../bindings/go/testdata/opaque_layout.hrry");
    if std::env::var_os("HURRAY_BLESS").is_some() {
        std::fs::write(&path, &bytes).unwrap();
    }
    let committed = std::fs::read(&path).expect("run with HURRAY_BLESS=1 to create it");
    assert!(
        committed == bytes,
        "{} is stale: rerun with HURRAY_BLESS=1",
        path.display()
    );
}
