//! # hurray-io
//!
//! The two Hurray containers over the `hurray-core` descriptor codec:
//!
//! - the **streaming format** (`streams-and-transport.md` Part A): tensors back to
//!   back, descriptor then buffers, no framing;
//! - the **HRRYFILE** container (`file-format.md`): header, tensor region, KV
//!   metadata, index and trailer with a CRC-32C.
//!
//! Each has a sans-io core (fed bytes, yields tensors; or yields bytes to write) and
//! thin front ends: blocking `std::io`, async tokio (feature `tokio`) and, for files,
//! a memory-mapped reader whose tensors are views into the mapping.
//!
//! Every reader treats input as untrusted: lengths, counts and offsets are checked
//! against the bytes that exist and against [`Limits`] before they are used.

pub mod alloc;
pub mod buffer;
pub mod composite;
pub mod error;
pub mod file;
pub mod limits;
pub mod mmap;
pub mod pool;
pub mod stream;
pub mod tensor;

pub use alloc::{BufferAllocator, BufferMemory};
pub use buffer::{AlignedBuf, Buffer, BufferOwner, BUFFER_ALIGN};
pub use error::{Error, FormatRule, Result};
pub use file::{FileReader, FileWriter, FileWriterTo, KvValue, SequentialReader, WriteOptions};
pub use limits::Limits;
pub use pool::{BufferPool, PoolStats};
pub use stream::{StreamDecoder, StreamEncoder, StreamReader, StreamWriter};
pub use tensor::{Composite, Item, Tensor};
