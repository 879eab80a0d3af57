//! Tensors made by another copy of this library (ARCHITECTURE.md: a handle must be
//! fully usable by every copy in the process). Only the frozen prefixes are read:
//! the descriptor's encoded bytes, the buffer list's items and each buffer's public
//! fields. Writing such a tensor borrows its buffers for the duration of the call
//! (or, for the stream encoder, until its chunks are released); moving one into an
//! item adopts it: this copy builds its own tensor over the same memory, and the
//! creator's destructor runs, exactly once, when the last view is gone.

use crate::buffer::{buffer_ref, list_get, list_ref, HurrayBuffer, Placement, ReleaseGuard};
use crate::descriptor::{encoded_of, HurrayDescriptor};
use crate::handle;
use crate::status::*;
use crate::tensor::{tensor_ref, HurrayTensor};
use hurray_core::{DeviceTag, MemoryClass, SyncMode};
use std::sync::Arc;

/// Host bytes of a foreign buffer, read through its public fields.
struct ForeignBytes {
    ptr: *const u8,
    len: usize,
    /// Keeps an adopted foreign tensor alive; `None` when only borrowed.
    _keep: Option<Arc<ForeignTensor>>,
}

// SAFETY: the bytes are immutable while the foreign tensor lives (Part C.5), and the
// creator's destroy is callable from any thread (the release rule).
unsafe impl Send for ForeignBytes {}
// SAFETY: only shared reads.
unsafe impl Sync for ForeignBytes {}

impl hurray_io::BufferOwner for ForeignBytes {
    fn bytes(&self) -> &[u8] {
        if self.len == 0 {
            return &[];
        }
        // SAFETY: ptr/len come from a live foreign buffer's public fields (checked
        // non-null and ≤ isize::MAX); the tensor outlives self (adopted: kept by
        // `_keep`; borrowed: the caller's contract for the call or encoder window).
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

/// A foreign tensor this copy adopted: destroyed through its creator's destructor
/// when dropped.
struct ForeignTensor(*mut HurrayTensor);

// SAFETY: handles may move between threads; destroy is callable from any thread.
unsafe impl Send for ForeignTensor {}
// SAFETY: no access through &self.
unsafe impl Sync for ForeignTensor {}

impl Drop for ForeignTensor {
    fn drop(&mut self) {
        let mut p = self.0;
        // SAFETY: the adopted pointer is a live foreign tensor owned by this guard.
        let _ = unsafe { handle::destroy(&mut p, "adopted tensor") };
    }
}

/// A tensor's encoded descriptor and its buffers (views plus placement), in order.
type Views = (Vec<u8>, Vec<(hurray_io::Buffer, Placement)>);

/// The descriptor bytes and host buffers of a tensor of another copy, as views.
///
/// # Safety
/// `t` must be a live tensor (of any copy) that outlives the returned views unless
/// `keep` holds it.
unsafe fn views(t: *const HurrayTensor, keep: Option<&Arc<ForeignTensor>>) -> FfiResult<Views> {
    // SAFETY: forwarded.
    let tr = unsafe { tensor_ref(t)? };
    // SAFETY: a live tensor's descriptor pointer is live (frozen prefix).
    let bytes = unsafe { encoded_of(tr.descriptor, "tensor->descriptor")? }.to_vec();
    // SAFETY: likewise its buffer list.
    let list = unsafe { list_ref(tr.buffers, "tensor->buffers")? };
    let mut out = Vec::with_capacity(list.len as usize);
    for i in 0..list.len {
        // SAFETY: list items are live buffers of the list's copy.
        let b: &HurrayBuffer = unsafe { buffer_ref(list_get(list, i)?, "buffer")? };
        let p = Placement {
            alignment: b.alignment,
            device: DeviceTag::from_tag(b.device_tag).unwrap_or(DeviceTag::Private(0xFE)),
            sync_mode: SyncMode::from_tag(b.sync_mode).unwrap_or_default(),
            memory_class: MemoryClass::from_tag(b.memory_class).unwrap_or_default(),
        };
        if p.device != DeviceTag::Cpu {
            return Err(FfiError::new(
                HURRAY_ERR_INVALID_ARGUMENT,
                format!("buffer {i} is device memory; only host buffers can be written"),
            ));
        }
        let len = usize::try_from(b.byte_size)
            .ok()
            .filter(|&n| isize::try_from(n).is_ok())
            .ok_or_else(|| {
                FfiError::new(
                    HURRAY_ERR_INVALID_ARGUMENT,
                    format!("buffer {i} is larger than the address space"),
                )
            })?;
        if len > 0 && b.data.is_null() {
            return Err(FfiError::null("buffer data"));
        }
        let owner = ForeignBytes {
            ptr: b.data.cast(),
            len,
            _keep: keep.cloned(),
        };
        out.push((hurray_io::Buffer::new(Arc::new(owner)), p));
    }
    Ok((bytes, out))
}

/// A tensor of any copy as an `hurray_io::Tensor` for writing: shared views for
/// this copy's tensors; borrowed views for another copy's, valid while that tensor
/// lives (the caller keeps it alive for the write, or until the stream encoder's
/// chunks are released).
///
/// # Safety
/// `t` must be NULL or a live tensor of some copy.
pub(crate) unsafe fn io_tensor(t: *const HurrayTensor, arg: &str) -> FfiResult<hurray_io::Tensor> {
    // SAFETY: forwarded.
    let h = unsafe { handle::header(t.cast(), arg)? };
    handle::check_kind::<HurrayTensor>(h, arg)?;
    if h.is_own() {
        // SAFETY: own-build tensor (kind and impl checked).
        return unsafe { &*t }.to_io();
    }
    // SAFETY: forwarded; the views borrow the live foreign tensor.
    let (bytes, bufs) = unsafe { views(t, None)? };
    let d = hurray_core::TensorDescriptor::decode(&bytes)?;
    hurray_io::Tensor::new(d, bufs.into_iter().map(|(b, _)| b).collect()).map_err(FfiError::from)
}

/// Takes ownership of a tensor of another copy: returns this copy's tensor over the
/// same memory; the foreign tensor is destroyed (its releases run, once) when the
/// last view of it is dropped.
///
/// # Safety
/// `t` must be a live, unborrowed tensor of another copy, owned by the caller, who
/// gives it up on success.
pub(crate) unsafe fn adopt(t: *mut HurrayTensor) -> FfiResult<HurrayTensor> {
    // Validate everything on borrowed views first, so an error leaves the tensor
    // with the caller and nothing is destroyed.
    // SAFETY: forwarded; the views borrow t for this block only.
    let bytes = unsafe {
        let (bytes, bufs) = views(t, None)?;
        let boxes = bufs
            .into_iter()
            .map(|(b, p)| handle::boxed(HurrayBuffer::host(b, p)))
            .collect();
        drop(HurrayTensor::new(
            HurrayDescriptor::decode(&bytes)?,
            boxes,
            None,
        )?);
        bytes
    };
    // From here on nothing can fail: the same inputs were just accepted.
    let keep = Arc::new(ForeignTensor(t));
    // SAFETY: t is kept alive by `keep`, which every view and the owner hold.
    let (_, bufs) = unsafe { views(t, Some(&keep)) }.expect("validated above");
    let descriptor = HurrayDescriptor::decode(&bytes).expect("validated above");
    let buffers = bufs
        .into_iter()
        .map(|(b, p)| handle::boxed(HurrayBuffer::host(b, p)))
        .collect();
    let owner = ReleaseGuard::from_fn(move || drop(keep));
    Ok(HurrayTensor::new(descriptor, buffers, Some(owner)).expect("validated above"))
}
