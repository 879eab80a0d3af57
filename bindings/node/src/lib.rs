//! `hurray-node`: the Node.js addon of Hurray, a napi-rs layer over hurray-ffi's
//! safe Rust face.
//!
//! Every format rule lives in the Rust crates below; this crate only maps the face
//! (`HurrayFileReader`, `HurrayFileWriter`, `HurrayStreamDecoder`,
//! `HurrayStreamEncoder`, `HurrayTensor`, `HurrayItem`, ... held as Rust values in
//! the napi classes; no `hurray_*` C function is called) onto JavaScript idioms:
//!
//! - [`tensor::Tensor`] owns one `HurrayTensor` through an `Arc`; `close()`
//!   drops the Tensor's reference, the napi finalizer drops it when the object is
//!   collected, and every zero-copy view (an external `ArrayBuffer`) holds another
//!   reference that its own finalizer drops. The handle is destroyed with the last.
//! - Memory a caller lends (`Tensor.fromBuffer`) is pinned by a napi reference to the
//!   caller's view; the C release callback, which may run on any thread, hands that
//!   reference to a threadsafe function that deletes it on the JS thread.
//! - Every failure becomes a JS `Error` whose `code` follows Node's conventions
//!   (`ENOENT`, `EISDIR`, `ERR_HURRAY_TRUNCATED`, ...: `error.rs`) and whose message
//!   is the library's error text (status name, rule and byte offset, path).
//!
//! Unsafe code appears only at the napi boundary (raw napi calls, external
//! ArrayBuffers, the release callback the library calls), each block with a
//! `SAFETY:` note.

#![deny(missing_docs)]

mod budget;
mod error;
pub mod file;
mod file_async;
mod file_kv;
pub mod item;
pub mod net;
pub mod release;
pub mod stream;
pub mod tags;
pub mod tensor;
mod view;
// After `tensor`: napi-derive needs `Descriptor` parsed before this second impl.
mod build;
#[cfg(feature = "test-support")]
pub mod testing;
