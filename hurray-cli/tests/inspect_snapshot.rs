//! Snapshot tests of `hurray inspect`: the JSON form is a stable interface for
//! programs, so any change to it must show up here (and in `docs/cli.md`).
//!
//! To accept a deliberate change, run the tests with `HURRAY_UPDATE_SNAPSHOTS=1`
//! and review the diff of `tests/snapshots/`.

mod common;

use common::*;
use std::path::Path;

/// Compares `actual` with the snapshot `name`, or rewrites it when asked to.
fn snapshot(name: &str, actual: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/snapshots")
        .join(name);
    if std::env::var_os("HURRAY_UPDATE_SNAPSHOTS").is_some() {
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (run with HURRAY_UPDATE_SNAPSHOTS=1)",
            path.display()
        )
    });
    assert_eq!(
        actual, expected,
        "{name} changed; if that is intended, rerun with HURRAY_UPDATE_SNAPSHOTS=1"
    );
}

#[test]
fn inspect_json_and_table_of_a_small_model() {
    let dir = tempfile::tempdir().unwrap();
    small_model(dir.path());
    ok(hurray_in(
        dir.path(),
        ["convert", "model.safetensors", "model.hrry"],
    ));
    let json = ok(hurray_in(dir.path(), ["inspect", "--json", "model.hrry"]));
    snapshot("inspect_small_model.json", &json);
    let table = ok(hurray_in(dir.path(), ["inspect", "model.hrry"]));
    snapshot("inspect_small_model.txt", &table);
}

#[test]
fn inspect_json_of_a_stream() {
    let dir = tempfile::tempdir().unwrap();
    small_model(dir.path());
    ok(hurray_in(
        dir.path(),
        ["convert", "model.safetensors", "model.hrrys"],
    ));
    let json = ok(hurray_in(dir.path(), ["inspect", "--json", "model.hrrys"]));
    snapshot("inspect_small_model_stream.json", &json);
}
