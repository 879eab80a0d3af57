//! The main job of `cargo xtask demo`, on a small safetensors file generated here so
//! that it runs without the network: convert to `.hrry`, inspect, convert back, and
//! verify that every tensor's bytes are identical to the source.

mod common;

use common::*;

#[test]
fn convert_inspect_convert_back_and_verify() {
    let dir = tempfile::tempdir().unwrap();
    small_model(dir.path());
    let step = |args: &[&str]| ok(hurray_in(dir.path(), args));

    let converted = step(&["convert", "model.safetensors", "model.hrry"]);
    assert!(
        converted.contains("safetensors -> HRRYFILE, 6 tensors"),
        "{converted}"
    );
    let shown = step(&["inspect", "model.hrry"]);
    assert!(
        shown.contains("index CRC-32C verified") && shown.contains("Tensors: 6"),
        "{shown}"
    );
    step(&["validate", "model.hrry"]);
    let back = step(&["convert", "model.hrry", "roundtrip.safetensors"]);
    assert!(
        back.contains("HRRYFILE -> safetensors, 6 tensors"),
        "{back}"
    );

    let verdict = step(&[
        "compare",
        "model.safetensors",
        "model.hrry",
        "roundtrip.safetensors",
    ]);
    assert!(
        verdict.contains(
            "PASS: all 6 tensors have the same name, dtype, shape and bytes in all 3 files"
        ),
        "{verdict}"
    );
    // One row per tensor, with its checksum and a verdict per file.
    let rows = verdict
        .lines()
        .filter(|l| l.ends_with("same  same"))
        .count();
    assert_eq!(rows, 6, "{verdict}");
    assert_eq!(
        std::fs::read(dir.path().join("model.safetensors")).unwrap(),
        std::fs::read(dir.path().join("roundtrip.safetensors")).unwrap()
    );
}

#[test]
fn compare_says_fail_when_a_tensor_changes() {
    let dir = tempfile::tempdir().unwrap();
    let src = small_model(dir.path());
    let hrry = dir.path().join("model.hrry");
    ok(hurray([
        "convert".as_ref(),
        src.as_os_str(),
        hrry.as_os_str(),
    ]));
    // Flip one data byte of the first tensor (its data starts at 4096).
    let mut bytes = std::fs::read(&hrry).unwrap();
    bytes[4096] ^= 0x40;
    std::fs::write(&hrry, bytes).unwrap();
    let o = hurray(["compare".as_ref(), src.as_os_str(), hrry.as_os_str()]);
    assert_eq!(o.status.code(), Some(1));
    let out = stdout(&o);
    assert!(out.contains("FAIL: 1 of 6 tensors differ"), "{out}");
    assert!(
        out.lines()
            .any(|l| l.contains("embeddings.position_ids") && l.contains("DIFFERS")),
        "{out}"
    );
}
