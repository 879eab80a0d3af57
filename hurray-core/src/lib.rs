//! # hurray-core
//!
//! The Hurray tensor descriptor: a typed model of every part of a descriptor and a
//! strict, allocation-bounded codec for it. No I/O, no `unsafe`.
//!
//! - [`TensorDescriptor`] — the model (`descriptor.md`), with [`encode`](TensorDescriptor::encode)
//!   and [`decode`](TensorDescriptor::decode).
//! - [`ElementType`] and [`Storage`] — type tags and buffer sizing (`element-types.md`).
//! - [`Layout`] — every layout and its fields (`layouts.md`).
//! - [`BufferHandle`] — the buffer table (`descriptor.md` §6).
//! - [`Quantization`] / [`Scheme`] — the quantization section (`quantization.md`).
//! - [`Shard`], [`Statistics`], [`ExtensionType`], [`MemberRole`] — optional sections.
//! - [`DecodeError`] / [`Rule`] — every rejection names its rule and byte offset.
//! - [`content`] — the buffer-content rules (sparse indices, block tables, scales).
//! - [`packing`] — sub-byte packing (§5): unpacked one-byte-per-element copies and back.
//! - [`tables`] — one declaration of every enumeration (tags, names), for the generators.
//!
//! ```
//! use hurray_core::{TensorDescriptor, Rule};
//! let err = TensorDescriptor::decode(b"HRRZ\x01\x00\x14\x00\x00\x00").unwrap_err();
//! assert_eq!((err.rule, err.offset), (Rule::Magic, 0));
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod buffer;
pub mod content;
mod descriptor;
mod element_type;
mod error;
pub mod layout;
pub mod packing;
pub mod quantization;
mod sections;
mod shape;
pub mod tables;
mod validate;
mod wire;

pub use buffer::{
    device_memory_class_valid, BufferHandle, DeviceTag, MemoryClass, SyncMode, BUFFER_HANDLE_LEN,
};
pub use descriptor::{
    flags, peek_descriptor_length, DecodeOptions, TensorDescriptor, DYN, HEADER_LEN, MAGIC,
    MAX_RANK, VERSION_MAJOR, VERSION_MINOR,
};
pub use element_type::{ElementType, Storage};
pub use error::{DecodeError, Result, Rule};
pub use layout::{
    BlockPaged, CombineOp, CompositeHead, CompositionRule, IndexType, KvRole, Layout, TileOrder,
    Tiling,
};
pub use quantization::{Quantization, ScaleType, Scheme};
pub use sections::{stat_mask, ExtensionType, MemberRole, Shard, Statistics};
pub use shape::{element_count, has_dynamic};
