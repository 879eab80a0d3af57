//! # hurray-java
//!
//! The JNI glue of the Java binding (`dev.hurray:hurray`): the `native` methods of
//! `dev.hurray.Native`, each a thin layer over one or a few functions of the C ABI
//! (`hurray-ffi`, `include/hurray.h`). Format logic stays in the Rust crates; this
//! crate only moves values between Java and the C surface.
//!
//! Conventions of every entry point:
//!
//! - handles cross as `long` (the C pointer); the Java side guarantees a live,
//!   non-zero handle and serialises use (a closed object throws
//!   `IllegalStateException` before reaching here);
//! - the body runs inside `run`, which catches panics and turns every error into a
//!   pending Java exception: a C status becomes a `dev.hurray.HurrayException` (built
//!   by `HurrayException.fromNative(status, message)`) carrying the status and the C
//!   ABI's last-error message (which names the rule and byte offset);
//! - memory a Java producer hands in (`Producer`) is held by JNI global references
//!   and released exactly once, from any thread, when the last C handle that needs it
//!   lets go (the release callback attaches the thread and deletes the references).

mod abi;
mod buffers;
mod builder;
mod convert;
mod descriptor;
mod descriptor_access;
mod errors;
mod file;
mod file_kv;
mod file_writer;
mod handle;
mod item;
mod stream;
mod tensor;
