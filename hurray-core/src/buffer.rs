//! The buffer table (`descriptor.md` §6): `buffer_count` and 16-byte buffer handles
//! with their device, sync-mode and memory-class tags, the (device, memory class)
//! validity table (§6.4) and the colocation rule (§6.5).

use crate::error::{bail, ensure, DecodeError, Result};
use crate::wire::Reader;

/// Size of one encoded buffer handle in bytes.
pub const BUFFER_HANDLE_LEN: usize = 16;

/// Where a buffer lives (`descriptor.md` §6.2). Not a DLPack device type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DeviceTag {
    /// `0x00` host memory.
    Cpu,
    /// `0x01` CUDA device memory.
    Cuda,
    /// `0x02` ROCm device memory.
    Rocm,
    /// `0x03` Metal.
    Metal,
    /// `0x04` Vulkan.
    Vulkan,
    /// `0x05` WebGPU.
    WebGpu,
    /// `0x06` Qualcomm Hexagon.
    Hexagon,
    /// `0x07` Intel Level Zero / oneAPI.
    LevelZero,
    /// `0x08` OpenCL.
    OpenCl,
    /// `0xF0`–`0xFE` implementation-private device.
    Private(u8),
}

impl DeviceTag {
    /// The wire byte.
    pub fn tag(self) -> u8 {
        match self {
            DeviceTag::Cpu => 0,
            DeviceTag::Cuda => 1,
            DeviceTag::Rocm => 2,
            DeviceTag::Metal => 3,
            DeviceTag::Vulkan => 4,
            DeviceTag::WebGpu => 5,
            DeviceTag::Hexagon => 6,
            DeviceTag::LevelZero => 7,
            DeviceTag::OpenCl => 8,
            DeviceTag::Private(t) => t,
        }
    }

    /// The device for a wire byte; `None` for reserved `0x09`–`0xEF` and invalid `0xFF`.
    pub fn from_tag(t: u8) -> Option<DeviceTag> {
        Some(match t {
            0 => DeviceTag::Cpu,
            1 => DeviceTag::Cuda,
            2 => DeviceTag::Rocm,
            3 => DeviceTag::Metal,
            4 => DeviceTag::Vulkan,
            5 => DeviceTag::WebGpu,
            6 => DeviceTag::Hexagon,
            7 => DeviceTag::LevelZero,
            8 => DeviceTag::OpenCl,
            0xF0..=0xFE => DeviceTag::Private(t),
            _ => return None,
        })
    }

    /// Lower-case name (`"cpu"`, `"cuda"`, ...).
    pub fn name(self) -> &'static str {
        match self {
            DeviceTag::Cpu => "cpu",
            DeviceTag::Cuda => "cuda",
            DeviceTag::Rocm => "rocm",
            DeviceTag::Metal => "metal",
            DeviceTag::Vulkan => "vulkan",
            DeviceTag::WebGpu => "webgpu",
            DeviceTag::Hexagon => "hexagon",
            DeviceTag::LevelZero => "level_zero",
            DeviceTag::OpenCl => "opencl",
            DeviceTag::Private(_) => "private",
        }
    }
}

/// What a consumer must do before touching a buffer's bytes (`descriptor.md` §6.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum SyncMode {
    /// `0x00`: the producer already waited; nothing to do.
    #[default]
    ProducerSynced,
    /// `0x01`: wait on the producer's event (exchanged through the C ABI).
    Event,
    /// `0x02`: use only the stream declared at handoff.
    ConsumerStream,
}

impl SyncMode {
    /// The wire byte.
    pub fn tag(self) -> u8 {
        self as u8
    }
    /// The mode for a wire byte; `None` for reserved and invalid values.
    pub fn from_tag(t: u8) -> Option<SyncMode> {
        match t {
            0 => Some(SyncMode::ProducerSynced),
            1 => Some(SyncMode::Event),
            2 => Some(SyncMode::ConsumerStream),
            _ => None,
        }
    }
}

/// The kind of memory behind a buffer (`descriptor.md` §6.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum MemoryClass {
    /// `0x00` device-exclusive memory (the default).
    #[default]
    Standard,
    /// `0x01` CPU-resident, device-mapped.
    HostPinned,
    /// `0x02` coherent, driver-managed.
    Unified,
    /// `0x03` reachable by peer accelerators.
    Peer,
    /// `0xF0`–`0xFE` private class (only with a private device).
    Private(u8),
}

impl MemoryClass {
    /// The wire byte.
    pub fn tag(self) -> u8 {
        match self {
            MemoryClass::Standard => 0,
            MemoryClass::HostPinned => 1,
            MemoryClass::Unified => 2,
            MemoryClass::Peer => 3,
            MemoryClass::Private(t) => t,
        }
    }
    /// The class for a wire byte; `None` for reserved and invalid values.
    pub fn from_tag(t: u8) -> Option<MemoryClass> {
        Some(match t {
            0 => MemoryClass::Standard,
            1 => MemoryClass::HostPinned,
            2 => MemoryClass::Unified,
            3 => MemoryClass::Peer,
            0xF0..=0xFE => MemoryClass::Private(t),
            _ => return None,
        })
    }
}

/// Whether `(device, class)` is in the validity table of `descriptor.md` §6.4.
pub fn device_memory_class_valid(device: DeviceTag, class: MemoryClass) -> bool {
    use DeviceTag::*;
    use MemoryClass::*;
    match (device, class) {
        (DeviceTag::Private(_), Standard | MemoryClass::Private(_)) => true,
        (DeviceTag::Private(_), _) | (_, MemoryClass::Private(_)) => false,
        (_, Standard) => true,
        (WebGpu, _) => false,
        (_, HostPinned | Unified) => true,
        (Cuda | Rocm | Vulkan | LevelZero, Peer) => true,
        (_, Peer) => false,
    }
}

/// One entry of the buffer table: a buffer's size and placement, never its address
/// (`descriptor.md` §6.1, §7).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BufferHandle {
    /// Size in bytes; 0 is an empty buffer.
    pub byte_size: u64,
    /// Guaranteed alignment of the buffer's first byte, in bytes: a power of two,
    /// ≥ 64 when `byte_size > 0`.
    pub alignment: u32,
    /// Device the bytes live on.
    pub device: DeviceTag,
    /// Synchronisation obligation of the consumer.
    pub sync_mode: SyncMode,
    /// Memory class.
    pub memory_class: MemoryClass,
}

impl BufferHandle {
    /// A CPU, producer-synced, standard-memory buffer of `byte_size` bytes aligned to 64.
    ///
    /// ```
    /// let b = hurray_core::BufferHandle::cpu(48);
    /// assert_eq!((b.byte_size, b.alignment), (48, 64));
    /// ```
    pub fn cpu(byte_size: u64) -> Self {
        BufferHandle {
            byte_size,
            alignment: 64,
            device: DeviceTag::Cpu,
            sync_mode: SyncMode::ProducerSynced,
            memory_class: MemoryClass::Standard,
        }
    }

    /// Reads a table of `count` handles into `out`, enforcing the per-handle rules
    /// (§6.1–§6.4). `accept_private` stands for an out-of-band agreement on private
    /// device tags and memory classes.
    #[inline]
    pub(crate) fn read_table(
        r: &mut Reader<'_>,
        count: usize,
        accept_private: bool,
        out: &mut Vec<BufferHandle>,
    ) -> Result<()> {
        *out = Vec::with_capacity(count);
        for _ in 0..count {
            let at = r.pos();
            // One bounds check for the whole handle, then fields at fixed positions.
            let Some(h) = r.try_array::<BUFFER_HANDLE_LEN>() else {
                return Err(truncated(r));
            };
            let byte_size = u64::from_le_bytes([h[0], h[1], h[2], h[3], h[4], h[5], h[6], h[7]]);
            let alignment = u32::from_le_bytes([h[8], h[9], h[10], h[11]]);
            let tags = [h[12], h[13], h[14], h[15]];
            // The common handle: host memory, producer-synced, standard class, a
            // valid alignment. Every rule of `check` holds for it.
            if tags == [0; 4] && alignment.is_power_of_two() && (alignment >= 64 || byte_size == 0)
            {
                out.push(BufferHandle::cpu_aligned(byte_size, alignment));
            } else {
                // Pushes itself: merging its result with the one above would route
                // the common handle through memory.
                Self::push_tagged(out, byte_size, alignment, tags, at, accept_private)?;
            }
        }
        Ok(())
    }

    /// One handle of [`read_table`](Self::read_table) off the common path: other
    /// devices, sync modes or classes, and every invalid handle.
    #[inline(never)]
    fn push_tagged(
        out: &mut Vec<BufferHandle>,
        byte_size: u64,
        alignment: u32,
        [dev, sync, class, reserved]: [u8; 4],
        at: usize,
        accept_private: bool,
    ) -> Result<()> {
        ensure!(
            reserved == 0,
            ReservedNonZero,
            at + 15,
            "buffer handle byte 15 must be zero, found {reserved:#04x}"
        );
        let Some(device) = DeviceTag::from_tag(dev) else {
            bail!(
                DeviceTag,
                at + 12,
                "device_tag {dev:#04x} is reserved or invalid"
            );
        };
        let Some(sync_mode) = SyncMode::from_tag(sync) else {
            bail!(
                SyncMode,
                at + 13,
                "sync_mode {sync:#04x} is reserved or invalid"
            );
        };
        let Some(memory_class) = MemoryClass::from_tag(class) else {
            bail!(
                MemoryClass,
                at + 14,
                "memory_class {class:#04x} is reserved or invalid"
            );
        };
        let h = BufferHandle {
            byte_size,
            alignment,
            device,
            sync_mode,
            memory_class,
        };
        h.check(at, accept_private)?;
        out.push(h);
        Ok(())
    }

    /// A CPU, producer-synced, standard-memory handle with this alignment.
    #[inline]
    fn cpu_aligned(byte_size: u64, alignment: u32) -> Self {
        BufferHandle {
            byte_size,
            alignment,
            device: DeviceTag::Cpu,
            sync_mode: SyncMode::ProducerSynced,
            memory_class: MemoryClass::Standard,
        }
    }

    /// Whether this is the common handle (host memory, producer-synced, standard
    /// class, valid alignment): one that every rule of [`check`](Self::check) allows.
    #[inline]
    pub(crate) fn is_plain_cpu(&self) -> bool {
        self.device == DeviceTag::Cpu
            && self.sync_mode == SyncMode::ProducerSynced
            && self.memory_class == MemoryClass::Standard
            && self.alignment.is_power_of_two()
            && (self.alignment >= 64 || self.byte_size == 0)
    }

    /// The per-handle rules, with `at` the offset of the handle.
    pub(crate) fn check(&self, at: usize, accept_private: bool) -> Result<()> {
        let a = self.alignment;
        ensure!(
            a.is_power_of_two(),
            Alignment,
            at + 8,
            "alignment {a} is not a power of two"
        );
        ensure!(
            self.byte_size == 0 || a >= 64,
            Alignment,
            at + 8,
            "alignment {a} < 64 on a non-empty buffer of {} bytes",
            self.byte_size
        );
        if let DeviceTag::Private(t) = self.device {
            ensure!(
                (0xF0..=0xFE).contains(&t),
                DeviceTag,
                at + 12,
                "device_tag {t:#04x} is reserved or invalid"
            );
            ensure!(
                accept_private,
                DeviceTag,
                at + 12,
                "private device_tag {t:#04x} without an out-of-band agreement"
            );
        }
        if let MemoryClass::Private(t) = self.memory_class {
            ensure!(
                (0xF0..=0xFE).contains(&t),
                MemoryClass,
                at + 14,
                "memory_class {t:#04x} is reserved or invalid"
            );
            ensure!(
                matches!(self.device, DeviceTag::Private(_)),
                MemoryClass,
                at + 14,
                "private memory_class {t:#04x} on public device {}",
                self.device.name()
            );
        }
        ensure!(
            device_memory_class_valid(self.device, self.memory_class),
            DeviceMemoryClass,
            at + 14,
            "memory_class {:#04x} is not valid on device {}",
            self.memory_class.tag(),
            self.device.name()
        );
        ensure!(
            self.device != DeviceTag::Cpu || self.sync_mode == SyncMode::ProducerSynced,
            SyncModeForTransport,
            at + 13,
            "CPU buffers must use sync_mode 0, found {}",
            self.sync_mode.tag()
        );
        Ok(())
    }

    #[inline]
    pub(crate) fn write(&self, out: &mut Vec<u8>) {
        let mut h = [0; BUFFER_HANDLE_LEN];
        h[..8].copy_from_slice(&self.byte_size.to_le_bytes());
        h[8..12].copy_from_slice(&self.alignment.to_le_bytes());
        h[12] = self.device.tag();
        h[13] = self.sync_mode.tag();
        h[14] = self.memory_class.tag();
        out.extend_from_slice(&h);
    }
}

/// The error for a handle that `descriptor_length` cuts short: it names the first
/// field that does not fit, as reading field by field would.
#[cold]
fn truncated(r: &mut Reader<'_>) -> DecodeError {
    let fields = [
        (8, "buffer byte_size"),
        (4, "buffer alignment"),
        (1, "device_tag"),
        (1, "sync_mode"),
        (1, "memory_class"),
        (1, "buffer handle byte 15"),
    ];
    for (n, what) in fields {
        if let Err(e) = r.take(n, what) {
            return e;
        }
    }
    unreachable!("called with fewer than {BUFFER_HANDLE_LEN} bytes left")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validity_table_matches_spec() {
        use DeviceTag::*;
        use MemoryClass::*;
        let devices = [
            Cpu, Cuda, Rocm, Metal, Vulkan, WebGpu, Hexagon, LevelZero, OpenCl,
        ];
        // Rows of descriptor.md §6.4: STANDARD, HOST_PINNED, UNIFIED, PEER.
        let table = [
            [true, true, true, false],
            [true, true, true, true],
            [true, true, true, true],
            [true, true, true, false],
            [true, true, true, true],
            [true, false, false, false],
            [true, true, true, false],
            [true, true, true, true],
            [true, true, true, false],
        ];
        for (d, row) in devices.iter().zip(table) {
            for (c, ok) in [Standard, HostPinned, Unified, Peer].iter().zip(row) {
                assert_eq!(device_memory_class_valid(*d, *c), ok, "{d:?} {c:?}");
            }
        }
        assert!(device_memory_class_valid(
            DeviceTag::Private(0xF1),
            MemoryClass::Private(0xF2)
        ));
        assert!(!device_memory_class_valid(DeviceTag::Private(0xF1), Peer));
        assert!(!device_memory_class_valid(Cuda, MemoryClass::Private(0xF2)));
    }
}
