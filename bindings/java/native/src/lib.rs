//! # hurray-java
//!
//! The JNI glue of the Java binding (`dev.hurray:hurray`): the `native` methods of
//! `dev.hurray.Native`, each a thin layer over hurray-ffi's safe Rust face (the
//! handle types `HurrayTensor`, `HurrayItem`, `HurrayDescriptor`, `HurrayFileReader`,
//! `HurrayFileWriter`, `HurrayStreamDecoder`, `FfiError`) and the hurray-core model.
//! No `hurray_*` C function is called. Format logic stays in the Rust crates; this
//! crate only moves values between Java and that face.
//!
//! Conventions of every entry point:
//!
//! - handles cross as `long`, converted in one module (`handle`, over
//!   `hurray_ffi::raw`), whose safety rests on the Java contract documented there;
//!   `unsafe` is left only there and where a direct `ByteBuffer` is made over
//!   library memory or Java memory is wrapped as a buffer;
//! - the body runs inside `run`, which catches panics and turns every error into a
//!   pending Java exception: an `FfiError` becomes the Java type its category maps
//!   to, in one place (`errors`): checked `IOException`s (`MissingFileException`,
//!   `IsDirectoryException`, `HurrayIOException`, `TruncatedException`) where the
//!   `Native` method declares them, else `FormatException`, `NotFoundException` or
//!   `HurrayException`, each carrying the status, the OS error number and the message
//!   `"<STATUS_NAME>: <detail>"` (which names the rule, byte offset or path);
//! - memory a Java producer hands in (`Producer`) is held by JNI global references
//!   and released exactly once, from any thread, when the last handle that needs it
//!   lets go (the release attaches the thread and deletes the references).

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
mod net;
mod stream;
mod tensor;
mod values;
