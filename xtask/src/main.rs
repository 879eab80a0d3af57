//! `cargo xtask`: the maintainer entry point for building and testing Hurray.
//!
//! Invoked through the alias in `.cargo/config.toml`. Every subcommand lives in its
//! own module; this file only parses the command line and dispatches.

mod amplification;
mod bench;
mod bench_net;
mod c_tests;
mod codegen;
mod demo;
mod dist;
mod fuzz;
mod go;
mod header;
mod hostile;
mod java;
mod matrix;
mod matrix_net;
mod names;
mod node;
mod outcome;
mod python;
mod smoke;
mod test;
mod util;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Maintainer tasks for the Hurray workspace.
#[derive(Debug, Parser)]
#[command(name = "xtask", bin_name = "cargo xtask", version)]
struct Cli {
    #[command(subcommand)]
    task: Task,
}

/// The subcommands of `cargo xtask`.
#[derive(Debug, Subcommand)]
enum Task {
    /// Run every check that exists (fmt, clippy, tests, docs, every language), then
    /// count the stages passed, skipped and failed; with `CI` set a skip fails.
    Test(test::TestArgs),
    /// Every language's benchmarks (Rust criterion, C, Python, Go), then one table of
    /// figures and ratios; arguments after `--` go to `cargo bench` verbatim.
    Bench(bench::BenchArgs),
    /// Build and run the C test suite (tests/c, docs/c-abi.md examples, two copies).
    CTests(c_tests::CTestsArgs),
    /// C ABI benchmark: tests/c/bench_abi.c, then `cargo bench -p hurray-ffi --bench abi`.
    BenchC(c_tests::BenchCArgs),
    /// Coverage-guided fuzzing: every target of fuzz/ (or `--target NAME`) for
    /// `--seconds N` (default 60) each, seeded with the conformance vectors; prints the
    /// executions and findings of each (docs/fuzzing.md).
    Fuzz(fuzz::FuzzArgs),
    /// Build every release artifact into target/dist (Python wheel + sdist, Go module
    /// proxy, Maven repository folder, npm tarball); print sizes and glibc floors.
    Dist,
    /// Build the Go binding's native parts: `cargo xtask go build`.
    Go(go::GoArgs),
    /// Build the Java binding's native library: `cargo xtask java build`.
    Java(java::JavaArgs),
    /// Build the Node binding's addon and types: `cargo xtask node build [--check]`.
    Node(node::NodeArgs),
    /// Write every per-language table of the enumerations (Go, Java, TypeScript, Python,
    /// docs) from hurray_core::tables and hurray_ffi::STATUSES; `--check` fails on drift.
    Codegen(codegen::CodegenArgs),
    /// Generate include/hurray.h from hurray-ffi (cbindgen); `--check` fails on drift.
    Header(header::HeaderArgs),
    /// Every language writes every case of tests/cases (file and stream), every
    /// language reads every output; prints the producer x consumer tables, the
    /// byte-identity check and a self-test with flipped bytes.
    Matrix(matrix::MatrixArgs),
    /// Peak memory of every reader (each language, the CLI) opening files whose KV
    /// section or index is huge, against those sections' bytes; prints a table.
    Amplification(amplification::AmplificationArgs),
    /// The main job, end to end: fetch a real model, convert it to .hrry and back,
    /// verify every tensor, benchmark against cp.
    Demo(demo::DemoArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.task {
        Task::Test(args) => test::run(&args),
        Task::Bench(args) => bench::run(&args),
        Task::CTests(args) => c_tests::run(&args),
        Task::BenchC(args) => c_tests::bench(&args),
        Task::Fuzz(args) => fuzz::run(&args),
        Task::Dist => dist::run(),
        Task::Go(args) => go::run(&args),
        Task::Node(args) => node::run(&args),
        Task::Header(args) => header::run(&args),
        Task::Codegen(args) => codegen::run(&args),
        Task::Java(args) => java::run(&args),
        Task::Matrix(args) => matrix::run(&args),
        Task::Demo(args) => demo::run(&args),
        Task::Amplification(args) => amplification::run(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("{err}");
            ExitCode::FAILURE
        }
    }
}
