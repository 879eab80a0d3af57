//! `hurray convert` end to end on generated files: safetensors round trips for every
//! dtype with a Hurray equivalent, refusals, NumPy inputs, streams, and a check that
//! conversion streams instead of holding the model in memory.

mod common;

use common::*;
use safetensors::tensor::Dtype;
use safetensors::SafeTensors;
use std::collections::HashMap;

/// A test tensor: name, safetensors dtype, shape, data, and the Hurray type name it
/// must get.
type Case = (&'static str, Dtype, Vec<usize>, Vec<u8>, &'static str);

/// Every safetensors dtype that has a Hurray element type, with valid data for it.
fn every_dtype() -> Vec<Case> {
    let n = 8usize;
    let raw = |w: usize, seed| bytes(n * w, seed);
    vec![
        (
            "bool",
            Dtype::BOOL,
            vec![n],
            vec![1, 0, 1, 1, 0, 0, 1, 0],
            "bool",
        ),
        (
            "bool_odd",
            Dtype::BOOL,
            vec![3, 3],
            vec![1, 1, 0, 0, 0, 0, 0, 0, 1],
            "bool",
        ),
        ("f4", Dtype::F4, vec![n], bytes(n / 2, 1), "float4_e2m1"),
        (
            "f6_e2m3",
            Dtype::F6_E2M3,
            vec![n],
            bytes(n * 6 / 8, 2),
            "float6_e2m3",
        ),
        (
            "f6_e3m2",
            Dtype::F6_E3M2,
            vec![2, 4],
            bytes(n * 6 / 8, 3),
            "float6_e3m2",
        ),
        ("u8", Dtype::U8, vec![n], raw(1, 4), "uint8"),
        ("i8", Dtype::I8, vec![n], raw(1, 5), "int8"),
        ("f8_e5m2", Dtype::F8_E5M2, vec![n], raw(1, 6), "float8_e5m2"),
        ("f8_e4m3", Dtype::F8_E4M3, vec![n], raw(1, 7), "float8_e4m3"),
        (
            "f8_e8m0",
            Dtype::F8_E8M0,
            vec![n],
            (1..=8).collect(),
            "float8_e8m0",
        ),
        ("i16", Dtype::I16, vec![n], raw(2, 8), "int16"),
        ("u16", Dtype::U16, vec![n], raw(2, 9), "uint16"),
        ("f16", Dtype::F16, vec![2, 4], raw(2, 10), "float16"),
        ("bf16", Dtype::BF16, vec![n], raw(2, 11), "bfloat16"),
        ("i32", Dtype::I32, vec![n], raw(4, 12), "int32"),
        ("u32", Dtype::U32, vec![n], raw(4, 13), "uint32"),
        ("f32", Dtype::F32, vec![n], raw(4, 14), "float32"),
        ("c64", Dtype::C64, vec![n], raw(8, 15), "complex64"),
        ("f64", Dtype::F64, vec![n], raw(8, 16), "float64"),
        ("i64", Dtype::I64, vec![n], raw(8, 17), "int64"),
        ("u64", Dtype::U64, vec![n], raw(8, 18), "uint64"),
        (
            "scalar",
            Dtype::F32,
            vec![],
            raw(4, 19)[..4].to_vec(),
            "float32",
        ),
        ("empty", Dtype::F32, vec![0, 4], vec![], "float32"),
    ]
}

#[test]
fn every_dtype_round_trips_with_names_shapes_bytes_and_metadata() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("all.safetensors");
    let cases = every_dtype();
    let tensors: Vec<_> = cases
        .iter()
        .map(|(n, d, s, b, _)| (*n, *d, s.clone(), b.clone()))
        .collect();
    write_safetensors(&src, &tensors, &[("format", "pt"), ("producer", "test")]);
    let hrry = dir.path().join("all.hrry");
    let back = dir.path().join("back.safetensors");
    ok(hurray([
        "convert".as_ref(),
        src.as_os_str(),
        hrry.as_os_str(),
    ]));
    ok(hurray(["validate".as_ref(), hrry.as_os_str()]));

    let json: serde_json::Value = serde_json::from_str(&ok(hurray([
        "inspect".as_ref(),
        "--json".as_ref(),
        hrry.as_os_str(),
    ])))
    .unwrap();
    let listed = json["tensors"].as_array().unwrap();
    assert_eq!(listed.len(), cases.len());
    for (name, _, shape, _, hurray_type) in &cases {
        let t = listed.iter().find(|t| t["name"] == *name).unwrap();
        assert_eq!(t["dtype"], *hurray_type, "{name}");
        let got: Vec<u64> = t["shape"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d.as_u64().unwrap())
            .collect();
        assert_eq!(
            got,
            shape.iter().map(|&d| d as u64).collect::<Vec<_>>(),
            "{name}"
        );
    }
    assert_eq!(json["kv"].as_array().unwrap().len(), 2);

    ok(hurray([
        "convert".as_ref(),
        hrry.as_os_str(),
        back.as_os_str(),
    ]));
    let a = std::fs::read(&src).unwrap();
    let b = std::fs::read(&back).unwrap();
    let (a, b) = (
        SafeTensors::deserialize(&a).unwrap(),
        SafeTensors::deserialize(&b).unwrap(),
    );
    let mut names_a = a.names();
    let mut names_b = b.names();
    names_a.sort();
    names_b.sort();
    assert_eq!(names_a, names_b);
    for name in names_a {
        let (x, y) = (a.tensor(name).unwrap(), b.tensor(name).unwrap());
        assert_eq!(
            (x.dtype(), x.shape(), x.data()),
            (y.dtype(), y.shape(), y.data()),
            "{name}"
        );
    }
    let meta = |f: &[u8]| SafeTensors::read_metadata(f).unwrap().1.metadata().clone();
    let expected: HashMap<String, String> = [
        ("format".into(), "pt".into()),
        ("producer".into(), "test".into()),
    ]
    .into();
    assert_eq!(meta(&std::fs::read(&back).unwrap()), Some(expected));

    let compared = ok(hurray([
        "compare".as_ref(),
        src.as_os_str(),
        hrry.as_os_str(),
        back.as_os_str(),
    ]));
    assert!(compared.contains("PASS: all 23 tensors"), "{compared}");
}

#[test]
fn a_file_from_the_safetensors_crate_comes_back_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    let src = small_model(dir.path());
    let hrry = dir.path().join("m.hrry");
    let back = dir.path().join("back.safetensors");
    ok(hurray([
        "convert".as_ref(),
        src.as_os_str(),
        hrry.as_os_str(),
    ]));
    ok(hurray([
        "convert".as_ref(),
        hrry.as_os_str(),
        back.as_os_str(),
    ]));
    assert_eq!(std::fs::read(&src).unwrap(), std::fs::read(&back).unwrap());
}

#[test]
fn dtypes_without_a_hurray_type_are_refused_and_nothing_is_written() {
    for (dtype, why) in [
        (Dtype::F8_E4M3FNUZ, "F8_E4M3FNUZ has no Hurray element type"),
        (Dtype::F8_E5M2FNUZ, "F8_E5M2FNUZ has no Hurray element type"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join("x.safetensors");
        write_safetensors(
            &src,
            &[
                ("ok", Dtype::F32, vec![1], vec![0; 4]),
                ("odd", dtype, vec![2], vec![1, 2]),
            ],
            &[],
        );
        let out = dir.path().join("x.hrry");
        let line = fails(hurray([
            "convert".as_ref(),
            src.as_os_str(),
            out.as_os_str(),
        ]));
        assert!(
            line.contains("tensor \"odd\"") && line.contains(why),
            "{line}"
        );
        assert_eq!(files_in(dir.path()), ["x.safetensors"]);
    }
}

#[test]
fn data_hurray_cannot_hold_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x.hrry");
    let cases = [
        (
            Dtype::BOOL,
            vec![1, 2, 0],
            "Bool at byte",
            "neither 0 nor 1",
        ),
        (
            Dtype::F8_E8M0,
            vec![1, 0xFF, 3],
            "ReservedValue at byte",
            "reserved in Hurray",
        ),
    ];
    for (dtype, data, rule, why) in cases {
        let src = dir.path().join("x.safetensors");
        write_safetensors(&src, &[("t", dtype, vec![3], data)], &[]);
        let line = fails(hurray([
            "convert".as_ref(),
            src.as_os_str(),
            out.as_os_str(),
        ]));
        assert!(line.contains(rule) && line.contains(why), "{line}");
        assert!(!out.exists());
    }
}

#[test]
fn hurray_types_without_a_safetensors_dtype_are_refused() {
    // A Hurray file with an int4 tensor, written with hurray-io.
    let dir = tempfile::tempdir().unwrap();
    let hrry = dir.path().join("q.hrry");
    let t =
        hurray_io::Tensor::from_dense(hurray_core::ElementType::Int4, &[4], &[0x12, 0x34]).unwrap();
    let mut w = hurray_io::file::FileWriter::create(&hrry, Default::default()).unwrap();
    w.write_tensor("codes", &t).unwrap();
    w.add_kv("step", hurray_io::file::KvValue::Int64(3))
        .unwrap();
    w.finish().unwrap();
    let out = dir.path().join("q.safetensors");
    let line = fails(hurray([
        "convert".as_ref(),
        hrry.as_os_str(),
        out.as_os_str(),
    ]));
    assert!(
        line.contains("int64 value; safetensors metadata holds strings only"),
        "{line}"
    );

    let mut w = hurray_io::file::FileWriter::create(&hrry, Default::default()).unwrap();
    w.write_tensor("codes", &t).unwrap();
    w.finish().unwrap();
    let line = fails(hurray([
        "convert".as_ref(),
        hrry.as_os_str(),
        out.as_os_str(),
    ]));
    assert!(
        line.contains("tensor \"codes\"") && line.contains("int4 has no safetensors dtype"),
        "{line}"
    );
    assert!(!out.exists());
    // It dumps, though.
    let dumped = ok(hurray([
        "dump".as_ref(),
        hrry.as_os_str(),
        "codes".as_ref(),
    ]));
    assert!(
        dumped.ends_with("[0]  2\n  [1]  1\n  [2]  4\n  [3]  3\n"),
        "{dumped}"
    );
}

/// A `.npy` file: version 1.0 header padded to 64 bytes, then `data`.
fn npy(descr: &str, fortran: bool, shape: &str, data: &[u8]) -> Vec<u8> {
    let dict = format!(
        "{{'descr': '{descr}', 'fortran_order': {}, 'shape': {shape}, }}",
        if fortran { "True" } else { "False" }
    );
    let mut text = dict.into_bytes();
    while (10 + text.len() + 1) % 64 != 0 {
        text.push(b' ');
    }
    text.push(b'\n');
    let mut v = b"\x93NUMPY\x01\x00".to_vec();
    v.extend((text.len() as u16).to_le_bytes());
    v.extend(text);
    v.extend(data);
    v
}

#[test]
fn npy_arrays_convert_with_their_order_and_byte_order() {
    let dir = tempfile::tempdir().unwrap();
    // A Fortran-order 2x3 uint8 array holding logical [[1,2,3],[4,5,6]].
    let f = dir.path().join("weights.npy");
    std::fs::write(&f, npy("|u1", true, "(2, 3)", &[1, 4, 2, 5, 3, 6])).unwrap();
    let out = dir.path().join("w.hrry");
    ok(hurray(["convert".as_ref(), f.as_os_str(), out.as_os_str()]));
    let dumped = ok(hurray([
        "dump".as_ref(),
        out.as_os_str(),
        "weights".as_ref(),
    ]));
    assert!(
        dumped.starts_with("weights: uint8 [2, 3] column_major, 6 values:"),
        "{dumped}"
    );
    let values: Vec<&str> = dumped
        .lines()
        .skip(1)
        .map(|l| l.rsplit(' ').next().unwrap())
        .collect();
    assert_eq!(values, ["1", "2", "3", "4", "5", "6"]);

    // Big-endian int32 is swapped; bool bytes are packed.
    let be = dir.path().join("be.npy");
    std::fs::write(
        &be,
        npy(">i4", false, "(2,)", &[0, 0, 1, 0, 0xFF, 0xFF, 0xFF, 0xFE]),
    )
    .unwrap();
    ok(hurray([
        "convert".as_ref(),
        be.as_os_str(),
        out.as_os_str(),
    ]));
    let dumped = ok(hurray(["dump".as_ref(), out.as_os_str(), "be".as_ref()]));
    assert!(dumped.ends_with("[0]  256\n  [1]  -2\n"), "{dumped}");

    let b = dir.path().join("mask.npy");
    std::fs::write(&b, npy("|b1", false, "(3,)", &[1, 0, 1])).unwrap();
    ok(hurray(["convert".as_ref(), b.as_os_str(), out.as_os_str()]));
    let dumped = ok(hurray(["dump".as_ref(), out.as_os_str(), "mask".as_ref()]));
    assert!(
        dumped.ends_with("[0]  true\n  [1]  false\n  [2]  true\n"),
        "{dumped}"
    );

    // Too little data after the header.
    std::fs::write(&b, npy("<f4", false, "(3,)", &[0; 8])).unwrap();
    let line = fails(hurray(["convert".as_ref(), b.as_os_str(), out.as_os_str()]));
    assert!(line.contains("Truncated"), "{line}");
    // Object arrays have no Hurray type.
    std::fs::write(&b, npy("|O", false, "(1,)", &[0; 8])).unwrap();
    let line = fails(hurray(["convert".as_ref(), b.as_os_str(), out.as_os_str()]));
    assert!(line.contains("has no Hurray element type"), "{line}");
}

#[test]
fn npz_archives_convert_member_by_member() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let z = dir.path().join("arrays.npz");
    let mut w = zip::ZipWriter::new(std::fs::File::create(&z).unwrap());
    let deflated = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    let f32s: Vec<u8> = [1.5f32, -2.0]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    w.start_file("a.npy", deflated).unwrap();
    w.write_all(&npy("<f4", false, "(2,)", &f32s)).unwrap();
    w.start_file("b/c.npy", zip::write::SimpleFileOptions::default())
        .unwrap();
    w.write_all(&npy("<i2", false, "(1, 1)", &[7, 0])).unwrap();
    w.finish().unwrap();
    let out = dir.path().join("arrays.hrry");
    ok(hurray(["convert".as_ref(), z.as_os_str(), out.as_os_str()]));
    let dumped = ok(hurray(["dump".as_ref(), out.as_os_str(), "a".as_ref()]));
    assert!(dumped.ends_with("[0]  1.5\n  [1]  -2.0\n"), "{dumped}");
    let dumped = ok(hurray(["dump".as_ref(), out.as_os_str(), "b/c".as_ref()]));
    assert!(dumped.ends_with("[0, 0]  7\n"), "{dumped}");
    let compared = ok(hurray(["compare".as_ref(), z.as_os_str(), out.as_os_str()]));
    assert!(compared.contains("PASS"), "{compared}");
}

#[test]
fn streams_convert_to_files_and_back() {
    let dir = tempfile::tempdir().unwrap();
    let src = small_model(dir.path());
    let hrry = dir.path().join("m.hrry");
    let stream = dir.path().join("m.hrrys");
    let again = dir.path().join("again.hrry");
    ok(hurray([
        "convert".as_ref(),
        src.as_os_str(),
        hrry.as_os_str(),
    ]));
    let o = hurray(["convert".as_ref(), hrry.as_os_str(), stream.as_os_str()]);
    assert!(
        stderr(&o).contains("a stream has no KV metadata"),
        "{}",
        stderr(&o)
    );
    ok(o);
    let checked = ok(hurray(["validate".as_ref(), stream.as_os_str()]));
    assert!(
        checked.contains("data not checked (a stream records no data CRC-32C)"),
        "{checked}"
    );
    let shown = ok(hurray(["inspect".as_ref(), stream.as_os_str()]));
    assert!(
        shown.contains("Hurray stream") && shown.contains("tensor_5"),
        "{shown}"
    );
    ok(hurray([
        "convert".as_ref(),
        stream.as_os_str(),
        again.as_os_str(),
    ]));
    let dumped = ok(hurray([
        "dump".as_ref(),
        again.as_os_str(),
        "tensor_5".as_ref(),
        "--limit".as_ref(),
        "2".as_ref(),
    ]));
    assert!(
        dumped.contains("float16 [2, 2]") && dumped.ends_with("[0, 0]  1.0\n  [0, 1]  -2.5\n"),
        "{dumped}"
    );
    // Streams have no names, so tensors are matched by position.
    let compared = ok(hurray([
        "compare".as_ref(),
        hrry.as_os_str(),
        stream.as_os_str(),
    ]));
    assert!(compared.contains("PASS"), "{compared}");
}

#[test]
fn conversion_streams_instead_of_holding_the_model() {
    // 48 MiB of tensor data, the largest tensor 32 MiB: peak memory must stay far below.
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("big.safetensors");
    let big = vec![0x3Cu8; 32 << 20];
    let mid = vec![0x11u8; 16 << 20];
    write_safetensors(
        &src,
        &[
            ("big", Dtype::F16, vec![16 << 20], big),
            ("mid", Dtype::U8, vec![16 << 20], mid),
        ],
        &[],
    );
    let out = dir.path().join("big.hrry");
    let line = ok(hurray([
        "convert".as_ref(),
        "--stats".as_ref(),
        src.as_os_str(),
        out.as_os_str(),
    ]));
    if let Some(peak) = line.split("peak memory ").nth(1) {
        let (v, unit) = peak.trim().split_once(' ').unwrap();
        let mib = v.parse::<f64>().unwrap() * if unit == "KiB" { 1.0 / 1024.0 } else { 1.0 };
        assert!(unit == "KiB" || unit == "MiB", "{line}");
        assert!(
            mib < 24.0,
            "peak memory {mib} MiB for 48 MiB of data: {line}"
        );
    }
    let back = dir.path().join("back.safetensors");
    let line = ok(hurray([
        "convert".as_ref(),
        "--stats".as_ref(),
        out.as_os_str(),
        back.as_os_str(),
    ]));
    if let Some(peak) = line.split("peak memory ").nth(1) {
        assert!(
            peak.ends_with("KiB\n")
                || peak.split(' ').next().unwrap().parse::<f64>().unwrap() < 24.0,
            "{line}"
        );
    }
    assert_eq!(std::fs::read(&src).unwrap(), std::fs::read(&back).unwrap());
}
