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
    /// `layouts.md` §2.11). Values above [`COMPOSITE_DEPTH_CEILING`] (64, the
    /// reference implementation's default) act as 64: items are recursive values, and
    /// a deeper nesting would let a few kilobytes of input overflow the stack of code
    /// that walks, compares or drops them.
    pub max_composite_depth: u32,
    /// Most members of one composite (its head's `member_count`; a nested composite
    /// counts as one member of its parent), checked when the head is read, before
    /// any member (default 65 536).
    ///
    /// The default is far above real use: one member per device or shard of a
    /// sharded tensor (a few to a few thousand), or a 256 × 256 grid of tiles. It
    /// bounds what a hostile head can make a reader do: the boxes kept for the
    /// close-time partition check (two `u64` per dimension per member) and the
    /// overlap sweep, which is cheap for splits and grids but quadratic in the member
    /// count for contrived layouts (about a second for 65 536 members; see
    /// [`crate::composite`]). Lower it when reading untrusted input under a tight
    /// CPU budget. Stream writers refuse composites with more members than their
    /// limits allow; file writers, more than this default.
    pub max_composite_members: u32,
    /// Reading a byte stream from another machine: every buffer must be
    /// producer-synced (`streams-and-transport.md` A.5).
    pub cross_machine: bool,
}

/// The deepest composite nesting any reader or writer accepts, whatever
/// [`Limits::max_composite_depth`] says: 64 levels, the reference implementation's
/// default (`streams-and-transport.md` A.6).
pub const COMPOSITE_DEPTH_CEILING: u32 = 64;

impl Limits {
    /// The composite depth enforced: [`max_composite_depth`](Self::max_composite_depth),
    /// at most [`COMPOSITE_DEPTH_CEILING`].
    pub fn composite_depth(&self) -> u32 {
        self.max_composite_depth.min(COMPOSITE_DEPTH_CEILING)
    }
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
            max_composite_members: 1 << 16,
            cross_machine: false,
        }
    }
}
