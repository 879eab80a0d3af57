//! Limits for untrusted input (`streams-and-transport.md` A.6): every length, count
//! and offset read from input is checked against these before it is used to
//! allocate, index or slice.

/// Ceilings a reader enforces. Defaults are generous for real models and small
/// enough that hostile input cannot make a reader allocate unbounded memory up front.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Largest descriptor accepted, in bytes (default 16 MiB).
    pub max_descriptor_bytes: u32,
    /// Largest single buffer accepted, in bytes (default 64 GiB).
    pub max_buffer_bytes: u64,
    /// Largest KV metadata section, in bytes (default 64 MiB).
    pub max_kv_bytes: u64,
    /// Largest index section, in bytes (default 256 MiB).
    pub max_index_bytes: u64,
    /// Most KV entries (default 1 << 20).
    pub max_kv_entries: u64,
    /// Most tensors in one file index (default 1 << 24).
    pub max_tensors: u64,
    /// Most composite nesting levels, counting the outermost head (default 8,
    /// `layouts.md` §2.11).
    pub max_composite_depth: u32,
    /// Reading a byte stream from another machine: every buffer must be
    /// producer-synced (`streams-and-transport.md` A.5).
    pub cross_machine: bool,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_descriptor_bytes: 16 << 20,
            max_buffer_bytes: 64 << 30,
            max_kv_bytes: 64 << 20,
            max_index_bytes: 256 << 20,
            max_kv_entries: 1 << 20,
            max_tensors: 1 << 24,
            max_composite_depth: 8,
            cross_machine: false,
        }
    }
}
