//! # hurray-ffi
//!
//! The one C ABI of Hurray (`HURRAY_C_ABI_VERSION` = 10, header `include/hurray.h`)
//! and the safe Rust-side API the Python, Java and Node binding crates share, so
//! every language holds the same [`HurrayTensor`] handle and the same release
//! machinery.
//!
//! Two faces of the same handles (decision record 0006): Rust methods on the handle
//! types, with errors as [`FfiResult`] carrying the stable status, for the Python,
//! Java and Node crates (which reach raw pointers only through [`raw`]); and the C
//! exports, each a thin checked shell over a method.
//!
//! Conventions of the C face (see `docs/c-abi.md`): every export returns a [`HurrayStatus`]
//! (`HURRAY_OK` = 0, errors negative and stable), writes results through
//! out-pointers only on success, checks required pointers
//! (`HURRAY_ERR_NULL_POINTER`), runs inside `catch_unwind`
//! (`HURRAY_ERR_INTERNAL_PANIC`), and leaves a human message in a thread-local
//! (`hurray_last_error_message`). `*_destroy(T **)` nulls the caller's pointer;
//! destroying NULL is a no-op. Release callbacks run exactly once, from any thread.

// C signatures carry one argument per field; grouping them would only add structs.
#![allow(clippy::too_many_arguments)]

pub mod abi;
pub mod allocator;
pub mod api;
pub mod buffer;
pub mod descriptor;
pub mod descriptor_access;
pub mod descriptor_view;
pub mod handle;
pub mod item;
pub mod kv_value;
/// The network client (feature `net`, on by default; decision record 0008).
#[cfg(feature = "net")]
pub mod net;
/// The sans-io network client connection (feature `net`; decision record 0008).
#[cfg(feature = "net")]
pub mod net_conn;
pub mod pool;
pub mod raw;
pub mod status;
pub mod tags;
pub mod tensor;

pub use buffer::{
    address_alignment, align_host, meets_alignment, strict_refusal, AlignmentPolicy, HurrayBuffer,
    HurrayBufferList, HurrayBufferSync, HurrayReleaseFn, Memory, Placement, ReleaseGuard, Wrapped,
};
pub use descriptor::HurrayDescriptor;
pub use descriptor_access::{
    HurrayBlockPaged, HurrayBufferEntry, HurrayCompositeHead, HurrayDescriptorHeader,
    HurrayExtensionType, HurrayQuantization, HurrayStatistics,
};
pub use handle::{live_objects, Handle, Header, HURRAY_C_ABI_VERSION};
pub use item::HurrayItem;
pub use kv_value::HurrayKvValue;
#[cfg(feature = "net")]
pub use net::{
    HurrayNetClient, HurrayNetClientOptions, HurrayNetGetOptions, HurrayNetServerInfo,
    NetGetOptions,
};
#[cfg(feature = "net")]
pub use net_conn::{HurrayNetConn, HurrayNetEvent, HurrayNetTransmit, NetEvent, NetTransmit};
pub use pool::{HurrayBufferPool, HurrayBufferPoolStats};
pub use status::*;
pub use tensor::HurrayTensor;

// I/O across the ABI: stream decoder/encoder and file reader/writer.
pub mod file;
mod file_text;
mod foreign;
pub mod read_options;
pub mod stream;
pub use file::{HurrayFileInfo, HurrayFileReader, HurrayFileWriter, HurrayWriteOptions};
/// What [`HurrayFileReader::verify_data_crc32c`] found: every tensor's data matched
/// (with the count), or the file records no data CRC.
pub use hurray_io::file::data_crc::DataCrc;
/// hurray-io's file read options (limits, permissive decoding), taken by
/// [`HurrayFileReader::open`].
pub use hurray_io::file::ReadOptions;
/// hurray-io's KV values: owned ([`KvValue`], [`KvArray`]) for writers, borrowed from
/// the mapping ([`KvValueRef`], [`KvArrayRef`]) for readers (`file-format.md` §7.3).
pub use hurray_io::file::{KvArray, KvArrayRef, KvValue, KvValueRef};
pub use read_options::HurrayFileReadOptions;
pub use stream::{HurrayStreamDecoder, HurrayStreamEncoder, HurrayStreamLimits};
