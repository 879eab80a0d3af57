//! The hostile corpus: one file and one stream per buffer-content rule
//! (`hurray_core::content`), each holding a single tensor named `t` whose descriptor
//! is valid and whose buffer bytes break exactly that rule.
//!
//! ```text
//! hurray-matrix hostile-corpus OUT_DIR   write OUT_DIR/CASE.hrry, CASE.hrrys, manifest.tsv
//! PROGRAM hostile DIR                    every language: each file and stream must be refused
//! ```
//!
//! `manifest.tsv` has one line per case:
//! `CASE<TAB>RULE<TAB>LAYOUT<TAB>DTYPE<TAB>SHAPE<TAB>BUFFER_BYTES`, where `RULE` is
//! the [`ContentRule`] name that every reader's error message must contain,
//! `LAYOUT` and `DTYPE` the layout and element type names (`csr`, `float32`),
//! `SHAPE` the comma-separated dimensions and `BUFFER_BYTES` the comma-separated
//! byte sizes of the buffers in buffer-table order. A stream ends with exactly those
//! buffers back to back, so a consumer can take the hostile bytes from its last
//! `sum(BUFFER_BYTES)` bytes without decoding it (the Python program feeds them to
//! its SciPy path). A
//! consumer opens each `CASE.hrry`, reads every tensor and views every buffer, and
//! reads `CASE.hrrys` to its end; it prints
//! `result<TAB>hostile<TAB>file|stream<TAB>CASE<TAB>pass|fail<TAB>DETAIL`, `pass`
//! when the read failed with an error naming `RULE`.
//!
//! The bad files are made the way an attacker would: a valid tensor is written by
//! the library's own writers (which refuse bad contents), then its buffer bytes are
//! overwritten in place. The data region carries no checksum, so the file still
//! opens; only the content check can notice.

use hurray_core::content::ContentRule;
use hurray_core::{
    BlockPaged, BufferHandle, ElementType, IndexType, KvRole, Layout, Quantization, ScaleType,
    Scheme, TensorDescriptor,
};
use hurray_io::file::{FileReader, FileWriterTo, WriteOptions};
use hurray_io::{Buffer, StreamWriter, Tensor};
use std::path::Path;

/// One hostile case: a descriptor, valid buffers for it, and the hostile buffers
/// (same sizes) that break `rule`.
pub struct HostileCase {
    /// File stem and manifest key.
    pub name: &'static str,
    /// The rule the bad bytes break.
    pub rule: ContentRule,
    /// The descriptor (valid).
    pub descriptor: TensorDescriptor,
    /// Buffers that pass every content rule.
    pub good: Vec<Vec<u8>>,
    /// The same buffers with the violation.
    pub bad: Vec<Vec<u8>>,
}

fn le64(v: &[u64]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}
fn le32(v: &[u32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}
fn f32s(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn described(et: ElementType, shape: &[u64], layout: Layout, sizes: &[usize]) -> TensorDescriptor {
    let mut d = TensorDescriptor::dense(et, shape).expect("shape");
    d.layout = layout;
    d.buffers = sizes.iter().map(|&n| BufferHandle::cpu(n as u64)).collect();
    d.validate().expect("hostile cases have valid descriptors");
    d
}

fn case(
    name: &'static str,
    rule: ContentRule,
    et: ElementType,
    shape: &[u64],
    layout: Layout,
    good: Vec<Vec<u8>>,
    bad: Vec<Vec<u8>>,
) -> HostileCase {
    let sizes: Vec<usize> = good.iter().map(Vec::len).collect();
    assert_eq!(
        sizes,
        bad.iter().map(Vec::len).collect::<Vec<_>>(),
        "{name}: bad buffers keep the sizes"
    );
    HostileCase {
        name,
        rule,
        descriptor: described(et, shape, layout, &sizes),
        good,
        bad,
    }
}

/// A quantized dense case: data buffer of zeros, then parameter buffers.
fn quantized(
    name: &'static str,
    rule: ContentRule,
    et: ElementType,
    shape: &[u64],
    scheme: Scheme,
    good: Vec<Vec<u8>>,
    bad: Vec<Vec<u8>>,
) -> HostileCase {
    let mut d = TensorDescriptor::dense(et, shape).expect("shape");
    let data = vec![0u8; d.buffers[0].byte_size as usize];
    for p in &good {
        d.buffers.push(BufferHandle::cpu(p.len() as u64));
    }
    d.quantization = Some(Quantization::from(scheme));
    d.validate().expect("hostile cases have valid descriptors");
    let with_data = |params: Vec<Vec<u8>>| {
        let mut v = vec![data.clone()];
        v.extend(params);
        v
    };
    HostileCase {
        name,
        rule,
        descriptor: d,
        good: with_data(good),
        bad: with_data(bad),
    }
}

/// Every hostile case: at least one per content rule, each sparse and paged rule in
/// the layouts where it applies.
pub fn cases() -> Vec<HostileCase> {
    use ContentRule::*;
    use ElementType::*;
    let mut v = Vec::new();

    // CSR [4, 5] (layouts.md §2.7 example): col [0,3,2,1,4], row_ptr [0,2,3,5,5].
    let csr = |name, rule, col: &[u64], ptr: &[u64]| {
        let values = f32s(&[1.0, 2.0, 3.0, 4.0, 5.0]);
        case(
            name,
            rule,
            Float32,
            &[4, 5],
            Layout::Csr { nnz: 5 },
            vec![
                values.clone(),
                le64(&[0, 3, 2, 1, 4]),
                le64(&[0, 2, 3, 5, 5]),
            ],
            vec![values, le64(col), le64(ptr)],
        )
    };
    let good_col: &[u64] = &[0, 3, 2, 1, 4];
    v.push(csr(
        "csr_row_ptr_start",
        PointerStart,
        good_col,
        &[1, 2, 3, 5, 5],
    ));
    v.push(csr(
        "csr_row_ptr_decreasing",
        PointerOrder,
        good_col,
        &[0, 3, 2, 5, 5],
    ));
    v.push(csr(
        "csr_row_ptr_past_nnz",
        PointerOrder,
        good_col,
        &[0, 2, 1 << 40, 5, 5],
    ));
    v.push(csr(
        "csr_row_ptr_end",
        PointerEnd,
        good_col,
        &[0, 2, 3, 4, 4],
    ));
    v.push(csr(
        "csr_col_out_of_range",
        IndexRange,
        &[0, 3, 2, 1, 1 << 33],
        &[0, 2, 3, 5, 5],
    ));
    v.push(csr(
        "csr_col_unsorted",
        IndexOrder,
        &[3, 0, 2, 1, 4],
        &[0, 2, 3, 5, 5],
    ));
    v.push(csr(
        "csr_col_duplicate",
        IndexOrder,
        &[3, 3, 2, 1, 4],
        &[0, 2, 3, 5, 5],
    ));

    // CSC of the same matrix: row_indices [0,2,1,0,2], col_ptr [0,1,2,3,4,5].
    let csc = |name, rule, rows: &[u64], ptr: &[u64]| {
        let values = f32s(&[1.0, 4.0, 3.0, 2.0, 5.0]);
        case(
            name,
            rule,
            Float32,
            &[4, 5],
            Layout::Csc { nnz: 5 },
            vec![
                values.clone(),
                le64(&[0, 2, 1, 0, 2]),
                le64(&[0, 1, 2, 3, 4, 5]),
            ],
            vec![values, le64(rows), le64(ptr)],
        )
    };
    v.push(csc(
        "csc_row_out_of_range",
        IndexRange,
        &[0, 2, 4, 0, 2],
        &[0, 1, 2, 3, 4, 5],
    ));
    v.push(csc(
        "csc_col_ptr_decreasing",
        PointerOrder,
        &[0, 2, 1, 0, 2],
        &[0, 1, 3, 2, 4, 5],
    ));

    // COO [4, 4] (§2.6 example): [0,1], [2,0], [3,3].
    let coo = |name, rule, sorted, idx: &[u64]| {
        let values = f32s(&[1.5, -0.5, 2.0]);
        case(
            name,
            rule,
            Float32,
            &[4, 4],
            Layout::Coo {
                nnz: 3,
                is_sorted: sorted,
            },
            vec![values.clone(), le64(&[0, 1, 2, 0, 3, 3])],
            vec![values, le64(idx)],
        )
    };
    v.push(coo(
        "coo_index_out_of_range",
        IndexRange,
        false,
        &[0, 1, 2, 7, 3, 3],
    ));
    v.push(coo(
        "coo_duplicate",
        DuplicateCoordinate,
        false,
        &[2, 0, 0, 1, 2, 0],
    ));
    v.push(coo(
        "coo_sorted_flag_false",
        SortOrder,
        true,
        &[2, 0, 0, 1, 3, 3],
    ));

    // CSF [2, 3, 4] (§2.9 example).
    let csf = |name, rule, levels: [(&[u64], &[u64]); 3]| {
        let good: [(&[u64], &[u64]); 3] = [
            (&[0, 2], &[0, 1]),
            (&[0, 2, 3], &[0, 2, 1]),
            (&[0, 1, 2, 4], &[1, 3, 0, 2]),
        ];
        let bufs = |ls: [(&[u64], &[u64]); 3]| {
            let mut b = vec![f32s(&[1.0, 2.0, 3.0, 4.0])];
            for (p, c) in ls {
                b.push(le64(p));
                b.push(le64(c));
            }
            b
        };
        let layout = Layout::Csf {
            nnz: 4,
            mode_order: vec![0, 1, 2],
        };
        case(
            name,
            rule,
            Float32,
            &[2, 3, 4],
            layout,
            bufs(good),
            bufs(levels),
        )
    };
    v.push(csf(
        "csf_pos_start",
        PointerStart,
        [
            (&[1, 2], &[0, 1]),
            (&[0, 2, 3], &[0, 2, 1]),
            (&[0, 1, 2, 4], &[1, 3, 0, 2]),
        ],
    ));
    v.push(csf(
        "csf_pos_decreasing",
        PointerOrder,
        [
            (&[0, 2], &[0, 1]),
            (&[0, 3, 2], &[0, 2, 1]),
            (&[0, 1, 2, 4], &[1, 3, 0, 2]),
        ],
    ));
    v.push(csf(
        "csf_crd_out_of_range",
        IndexRange,
        [
            (&[0, 2], &[0, 1]),
            (&[0, 2, 3], &[0, 2, 1]),
            (&[0, 1, 2, 4], &[1, 3, 0, 9]),
        ],
    ));
    v.push(csf(
        "csf_crd_repeat",
        IndexOrder,
        [
            (&[0, 2], &[0, 1]),
            (&[0, 2, 3], &[0, 0, 1]),
            (&[0, 1, 2, 4], &[1, 3, 0, 2]),
        ],
    ));
    v.push(csf(
        "csf_level_size",
        ContentSize,
        [
            (&[0, 2], &[0, 1]),
            (&[0, 2, 3], &[0, 2, 1]),
            (&[0, 1, 2, 7], &[1, 3, 0, 2]),
        ],
    ));

    // Block-paged (§2.10 example): 2 sequences of 6 and 3 tokens, page size 4, 5 pages.
    let paged = |name, rule, table: &[u32], seq_ptr: &[u32]| {
        let p = BlockPaged {
            page_size: 4,
            num_pages: 5,
            paged_axis: 0,
            num_seqs: 2,
            kv_role: KvRole::Key,
            layer_index: 3,
            block_table_index_type: IndexType::U32,
        };
        let pool = vec![0u8; 5 * 4 * 2 * 8 * 2];
        case(
            name,
            rule,
            Float16,
            &[9, 2, 8],
            Layout::BlockPaged(p),
            vec![pool.clone(), le32(&[4, 1, 2]), le32(&[0, 2, 3])],
            vec![pool, le32(table), le32(seq_ptr)],
        )
    };
    v.push(paged(
        "paged_block_table_out_of_range",
        PageIndex,
        &[4, 5, 2],
        &[0, 2, 3],
    ));
    v.push(paged(
        "paged_block_table_huge",
        PageIndex,
        &[4, 1, u32::MAX],
        &[0, 2, 3],
    ));
    v.push(paged(
        "paged_seq_ptr_decreasing",
        PointerOrder,
        &[4, 1, 2],
        &[0, 3, 2],
    ));
    v.push(paged(
        "paged_seq_ptr_start",
        PointerStart,
        &[4, 1, 2],
        &[1, 2, 3],
    ));
    v.push(paged(
        "paged_seq_ptr_past_table",
        ContentSize,
        &[4, 1, 2],
        &[0, 2, 9],
    ));

    // Per-channel int8 [2, 4] (quantization.md §8.2): scales [0.5, 0.25], zp [-1, 3].
    let per_channel = |name, rule, scales: &[f32], zps: &[i32]| {
        let scheme = Scheme::PerChannel {
            axis: 0,
            scale_buffer_index: 1,
            zero_point_buffer_index: Some(2),
            scale_type: ScaleType::F32,
        };
        let zp = |z: &[i32]| z.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
        quantized(
            name,
            rule,
            Int8,
            &[2, 4],
            scheme,
            vec![f32s(&[0.5, 0.25]), zp(&[-1, 3])],
            vec![f32s(scales), zp(zps)],
        )
    };
    v.push(per_channel(
        "per_channel_scale_zero",
        ScaleValue,
        &[0.5, 0.0],
        &[-1, 3],
    ));
    v.push(per_channel(
        "per_channel_scale_inf",
        ScaleValue,
        &[f32::INFINITY, 0.25],
        &[-1, 3],
    ));
    v.push(per_channel(
        "per_channel_zero_point_range",
        ZeroPointRange,
        &[0.5, 0.25],
        &[-1, 300],
    ));

    // Per-block uint4 [6] (§8.3 example B), f16 scales [0.5, 2.0].
    let f16 = |b: &[u16]| b.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    let scheme = Scheme::PerBlock {
        axis: 0,
        block_size: 4,
        scale_buffer_index: 1,
        zero_point_buffer_index: None,
        scale_type: ScaleType::F16,
    };
    v.push(quantized(
        "per_block_scale_nan",
        ScaleValue,
        Uint4,
        &[6],
        scheme,
        vec![f16(&[0x3800, 0x4000])],
        vec![f16(&[0x3800, 0x7E00])],
    ));

    // NF4 uint4 [2, 16], block 8 (§8.4 example): absmax [0.5, 1, 2, 0.25].
    let scheme = Scheme::Nf4 {
        axis: 1,
        block_size: 8,
        scale_buffer_index: 1,
    };
    v.push(quantized(
        "nf4_absmax_negative",
        ScaleValue,
        Uint4,
        &[2, 16],
        scheme,
        vec![f32s(&[0.5, 1.0, 2.0, 0.25])],
        vec![f32s(&[0.5, 1.0, -2.0, 0.25])],
    ));

    // MXFP4 [64], block 32 (§8.5 example): e8m0 scales [0x7F, 0x82].
    for (name, bad) in [
        ("mxfp_scale_00", [0x7F, 0x00]),
        ("mxfp_scale_ff", [0xFF, 0x82]),
    ] {
        let scheme = Scheme::Mxfp {
            axis: 0,
            block_size: 32,
            scale_buffer_index: 1,
        };
        v.push(quantized(
            name,
            ScaleValue,
            Float4E2m1,
            &[64],
            scheme,
            vec![vec![0x7F, 0x82]],
            vec![bad.to_vec()],
        ));
    }

    // float8_e8m0 data.
    v.push(case(
        "e8m0_data_ff",
        E8m0Reserved,
        Float8E8m0,
        &[8],
        Layout::RowMajor,
        vec![vec![0x7F; 8]],
        vec![vec![0x7F, 0x7F, 0x7F, 0xFF, 0x7F, 0x7F, 0x7F, 0x7F]],
    ));
    v
}

fn tensor(d: &TensorDescriptor, bufs: &[Vec<u8>]) -> Result<Tensor, String> {
    Tensor::new(
        d.clone(),
        bufs.iter().map(|b| Buffer::copy_from(b)).collect(),
    )
    .map_err(|e| e.to_string())
}

/// The case as an HRRYFILE: written valid, then its buffers overwritten in place.
pub fn hostile_file(c: &HostileCase) -> Result<Vec<u8>, String> {
    let t = tensor(&c.descriptor, &c.good)?;
    let mut w =
        FileWriterTo::new(Vec::new(), WriteOptions::default()).map_err(|e| e.to_string())?;
    w.write_tensor("t", &t).map_err(|e| e.to_string())?;
    let mut bytes = w.finish().map_err(|e| e.to_string())?;
    let ranges = FileReader::from_bytes(&bytes)
        .map_err(|e| e.to_string())?
        .catalog()
        .buffer_ranges(0)
        .ok_or("the written file has no tensor 0")?;
    for (r, bad) in ranges.iter().zip(&c.bad) {
        bytes[r.start as usize..r.end as usize].copy_from_slice(bad);
    }
    Ok(bytes)
}

/// The case as a stream: the descriptor, then the hostile buffers back to back.
pub fn hostile_stream(c: &HostileCase) -> Result<Vec<u8>, String> {
    let t = tensor(&c.descriptor, &c.good)?;
    let mut out = Vec::new();
    StreamWriter::new(&mut out)
        .write_tensor(&t)
        .map_err(|e| e.to_string())?;
    let mut at = out.len() - c.good.iter().map(Vec::len).sum::<usize>();
    for bad in &c.bad {
        out[at..at + bad.len()].copy_from_slice(bad);
        at += bad.len();
    }
    Ok(out)
}

/// Writes every case's file and stream and `manifest.tsv` into `dir`.
pub fn write_corpus(dir: &Path) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut manifest = String::new();
    for c in cases() {
        let write = |ext: &str, bytes: Vec<u8>| {
            let p = dir.join(format!("{}.{ext}", c.name));
            std::fs::write(&p, bytes).map_err(|e| format!("{}: {e}", p.display()))
        };
        write(
            "hrry",
            hostile_file(&c).map_err(|e| format!("{}: {e}", c.name))?,
        )?;
        write(
            "hrrys",
            hostile_stream(&c).map_err(|e| format!("{}: {e}", c.name))?,
        )?;
        let list = |v: Vec<String>| v.join(",");
        manifest.push_str(&format!(
            "{}\t{:?}\t{}\t{}\t{}\t{}\n",
            c.name,
            c.rule,
            c.descriptor.layout.name(),
            c.descriptor.element_type.name(),
            list(c.descriptor.shape.iter().map(u64::to_string).collect()),
            list(c.bad.iter().map(|b| b.len().to_string()).collect()),
        ));
    }
    let p = dir.join("manifest.tsv");
    std::fs::write(&p, manifest).map_err(|e| format!("{}: {e}", p.display()))
}

/// One manifest line: case name and the rule its reader error must name.
pub struct Expectation {
    /// Case (file stem).
    pub case: String,
    /// `ContentRule` name.
    pub rule: String,
}

/// Parses `DIR/manifest.tsv`.
pub fn read_manifest(dir: &Path) -> Result<Vec<Expectation>, String> {
    let p = dir.join("manifest.tsv");
    let text = std::fs::read_to_string(&p).map_err(|e| format!("{}: {e}", p.display()))?;
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let mut f = l.split('\t');
            match (f.next(), f.next()) {
                (Some(case), Some(rule)) => Ok(Expectation {
                    case: case.into(),
                    rule: rule.into(),
                }),
                _ => Err(format!("{}: bad line {l:?}", p.display())),
            }
        })
        .collect()
}

/// The Rust consumer of the corpus: prints a result line per file and stream.
pub fn consume(dir: &Path) -> Result<(), String> {
    for e in read_manifest(dir)? {
        let file = dir.join(format!("{}.hrry", e.case));
        let outcome = FileReader::open(&file)
            .and_then(|r| r.items().map(|_| ()))
            .map_err(|err| err.to_string());
        print_result("file", &e, outcome);
        let stream = dir.join(format!("{}.hrrys", e.case));
        let outcome = std::fs::File::open(&stream)
            .map_err(hurray_io::Error::from)
            .and_then(|f| {
                hurray_io::StreamReader::new(std::io::BufReader::new(f))
                    .try_for_each(|item| item.map(|_| ()))
            })
            .map_err(|err| err.to_string());
        print_result("stream", &e, outcome);
    }
    Ok(())
}

fn print_result(container: &str, e: &Expectation, outcome: Result<(), String>) {
    let (status, detail) = judge(&e.rule, outcome);
    println!(
        "result\thostile\t{container}\t{}\t{status}\t{detail}",
        e.case
    );
}

/// `pass` when the read failed naming `rule`; the detail is the error (or why it fails).
pub fn judge(rule: &str, outcome: Result<(), String>) -> (&'static str, String) {
    match outcome {
        Ok(()) => ("fail", format!("read without error; expected {rule}")),
        Err(e) if e.contains(rule) => ("pass", e.replace(['\t', '\n'], " ")),
        Err(e) => (
            "fail",
            format!(
                "error does not name {rule}: {}",
                e.replace(['\t', '\n'], " ")
            ),
        ),
    }
}
