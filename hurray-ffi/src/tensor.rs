//! `HurrayTensor`: the one handle for a tensor — decoded descriptor, buffers in
//! buffer-table order, and an opaque owner that keeps the producer's memory alive
//! (ARCHITECTURE.md "The one handle").

use crate::buffer::{HurrayBuffer, HurrayBufferList, Placement, ReleaseGuard};
use crate::descriptor::HurrayDescriptor;
use crate::handle::{self, kind, Handle, Header};
use crate::status::*;
use hurray_core::TensorDescriptor;
use std::sync::Arc;

/// A tensor. Frozen public fields (any build reads them): `descriptor` and
/// `buffers`, both borrowed from the tensor and valid until it is destroyed.
#[repr(C)]
pub struct HurrayTensor {
    header: Header,
    /// The decoded descriptor (borrowed).
    pub descriptor: *const HurrayDescriptor,
    /// The buffers (borrowed).
    pub buffers: *const HurrayBufferList,
    // Private; fields drop in order: descriptor, buffers (their releases), then owner.
    descriptor_box: Box<HurrayDescriptor>,
    buffers_box: Box<HurrayBufferList>,
    owner: Option<Arc<ReleaseGuard>>,
    /// The buffer contents passed the content rules (or the descriptor has none).
    content_validated: bool,
    /// The memory must not be written through any view of this tensor (see
    /// [`read_only`](HurrayTensor::read_only)). Rust face only: not in the C layout.
    read_only: bool,
}

// SAFETY: repr(C) with Header first.
unsafe impl Handle for HurrayTensor {
    const KIND: u16 = kind::TENSOR;
    const NAME: &'static str = "HurrayTensor";
    fn header(&self) -> &Header {
        &self.header
    }
}

impl HurrayTensor {
    /// Assembles a tensor from a descriptor and own-build buffers, and checks the
    /// buffer contents against the layout's and scheme's content rules
    /// (`hurray_core::content`: sparse indices, block tables, scales) when the
    /// buffers are host memory; device buffers cannot be read here, so such a tensor
    /// reports [`content_validated`](Self::content_validated) `false`.
    ///
    /// Errors: `HURRAY_ERR_BUFFER_MISMATCH` when the number of buffers differs from
    /// `buffer_count`, or a buffer's size, device, sync mode or memory class differs
    /// from its handle in the descriptor, or its declared alignment is weaker than
    /// the descriptor's; `HURRAY_ERR_FORMAT` when host buffer contents break a
    /// content rule (the message names the rule, buffer and byte offset). On error the
    /// buffers and owner are dropped (their releases run).
    pub fn new(
        descriptor: HurrayDescriptor,
        buffers: Vec<Box<HurrayBuffer>>,
        owner: Option<ReleaseGuard>,
    ) -> FfiResult<HurrayTensor> {
        check_buffers(descriptor.model(), buffers.iter().map(|b| &**b))?;
        let validated = check_host_content(descriptor.model(), buffers.iter().map(|b| &**b))?;
        Self::assemble(descriptor, buffers, owner, validated)
    }

    /// [`new`](Self::new) after the checks: `content_validated` says whether the
    /// contents are known good.
    // The buffers stay boxed: the list keeps each handle at a stable address.
    #[allow(clippy::vec_box)]
    fn assemble(
        descriptor: HurrayDescriptor,
        buffers: Vec<Box<HurrayBuffer>>,
        owner: Option<ReleaseGuard>,
        content_validated: bool,
    ) -> FfiResult<HurrayTensor> {
        let mut descriptor_box = handle::boxed(descriptor);
        descriptor_box.set_borrowed();
        let mut list = HurrayBufferList::default();
        for b in buffers {
            list.push(b);
        }
        let mut buffers_box = handle::boxed(list);
        buffers_box.set_borrowed();
        let mut t = HurrayTensor {
            header: Header::new(kind::TENSOR, handle::destroy_own::<HurrayTensor>),
            descriptor: std::ptr::null(),
            buffers: std::ptr::null(),
            descriptor_box,
            buffers_box,
            owner: owner.map(Arc::new),
            content_validated,
            read_only: false,
        };
        t.descriptor = &*t.descriptor_box;
        t.buffers = &*t.buffers_box;
        Ok(t)
    }

    /// Wraps a tensor the containers produced: its buffers stay views into the
    /// container's memory (no copy).
    ///
    /// A tensor a strict reader produced was checked there and is not checked again;
    /// one from a permissive reader keeps `content_validated() == false`.
    pub fn from_io(t: hurray_io::Tensor) -> FfiResult<HurrayTensor> {
        let validated = t.content_validated();
        let (d, bufs) = t.into_parts();
        let buffers = bufs
            .into_iter()
            .zip(&d.buffers)
            .map(|(b, h)| {
                let p = Placement {
                    alignment: h.alignment,
                    device: h.device,
                    sync_mode: h.sync_mode,
                    memory_class: h.memory_class,
                };
                handle::boxed(HurrayBuffer::host(b, p))
            })
            .collect::<Vec<_>>();
        let descriptor = HurrayDescriptor::new(d)?;
        check_buffers(descriptor.model(), buffers.iter().map(|b| &**b))?;
        Self::assemble(descriptor, buffers, None, validated)
    }

    /// True when the tensor's memory is read-only: no view of it may be handed out
    /// writable, and nothing may write into its buffers (the memory belongs to
    /// someone who shares it immutably: a read-only NumPy array, an object-store
    /// buffer, a mapping opened read-only). The library itself never writes into a
    /// tensor's buffers; this flag is the promise that bindings keep for their
    /// writable views (NumPy, DLPack's `DLPACK_FLAG_BITMASK_READ_ONLY`, buffer
    /// protocol). Every constructor makes a writable tensor (`false`); the C face's
    /// `const void *data` carries no writability, so C consumers must treat every
    /// buffer as read-only anyway. Rust face only (no C export, no header change).
    pub fn read_only(&self) -> bool {
        self.read_only
    }

    /// Marks the tensor read-only (`true`) or writable (`false`); see
    /// [`read_only`](Self::read_only). Ownership and buffers are unchanged.
    pub fn set_read_only(&mut self, read_only: bool) {
        self.read_only = read_only;
    }

    /// True when the buffer contents are known to satisfy the content rules.
    pub fn content_validated(&self) -> bool {
        self.content_validated
    }

    /// Checks the buffer contents unless that was done (then it is free). Call it
    /// before interpreting the index buffers of a tensor from a permissive reader,
    /// or before handing them to another library.
    ///
    /// Errors: `HURRAY_ERR_FORMAT` naming the rule, buffer and byte offset;
    /// `HURRAY_ERR_INVALID_ARGUMENT` when the tensor has content rules but device
    /// buffers, which cannot be read on the host.
    pub fn validate_content(&self) -> FfiResult<()> {
        if self.content_validated {
            return Ok(());
        }
        self.check_content()
    }

    /// [`validate_content`](Self::validate_content) that always reads the buffers,
    /// for memory a caller may have written since the tensor was made (a binding's
    /// writable views).
    ///
    /// Errors: as [`validate_content`](Self::validate_content).
    pub fn check_content(&self) -> FfiResult<()> {
        if !hurray_core::content::has_content_rules(self.model()) {
            return Ok(());
        }
        let bufs: Vec<&HurrayBuffer> = self.buffers_box.buffers().collect();
        match host_slices(&bufs) {
            Some(slices) => content_result(self.model(), &slices),
            None => Err(FfiError::new(
                HURRAY_ERR_INVALID_ARGUMENT,
                "the tensor's buffers are device memory: their contents cannot be checked on the host",
            )),
        }
    }

    /// Marks the tensor as owned by a parent (an item), so it is never destroyed on its own.
    pub(crate) fn set_borrowed(&mut self) {
        self.header.flags |= handle::FLAG_BORROWED;
    }

    /// The descriptor model.
    pub fn model(&self) -> &Arc<TensorDescriptor> {
        self.descriptor_box.model()
    }

    /// The descriptor handle.
    pub fn descriptor_handle(&self) -> &HurrayDescriptor {
        &self.descriptor_box
    }

    /// The buffers, in buffer-table order.
    pub fn buffer_list(&self) -> &HurrayBufferList {
        &self.buffers_box
    }

    /// An `hurray_io::Tensor` sharing this tensor's host buffers (no copy); used to
    /// write it to a stream or file.
    ///
    /// Errors: `HURRAY_ERR_INVALID_ARGUMENT` when a buffer is device memory.
    pub fn to_io(&self) -> FfiResult<hurray_io::Tensor> {
        let mut bufs = Vec::with_capacity(self.buffers_box.len as usize);
        for (i, b) in self.buffers_box.buffers().enumerate() {
            let host = b.host_bytes().ok_or_else(|| {
                FfiError::new(
                    HURRAY_ERR_INVALID_ARGUMENT,
                    format!("buffer {i} is device memory; only host buffers can be written"),
                )
            })?;
            bufs.push(match &self.owner {
                None => host.clone(),
                Some(owner) => keep_owner(host.clone(), owner.clone()),
            });
        }
        hurray_io::Tensor::new(self.model().clone(), bufs).map_err(FfiError::from)
    }
}

/// A view that also holds the tensor's owner, so the producer's memory outlives
/// every view handed to the containers.
fn keep_owner(b: hurray_io::Buffer, owner: Arc<ReleaseGuard>) -> hurray_io::Buffer {
    struct WithOwner(hurray_io::Buffer, #[allow(dead_code)] Arc<ReleaseGuard>);
    impl hurray_io::BufferOwner for WithOwner {
        fn bytes(&self) -> &[u8] {
            self.0.as_slice()
        }
    }
    hurray_io::Buffer::new(Arc::new(WithOwner(b, owner)))
}

/// Host slices of every buffer, or `None` when one is device memory.
fn host_slices<'a>(bufs: &[&'a HurrayBuffer]) -> Option<Vec<&'a [u8]>> {
    bufs.iter()
        .map(|b| b.host_bytes().map(|h| h.as_slice()))
        .collect()
}

/// The content check as an FFI result (`HURRAY_ERR_FORMAT` naming the rule).
fn content_result(d: &TensorDescriptor, slices: &[&[u8]]) -> FfiResult<()> {
    hurray_core::content::check_content(d, slices)
        .map_err(|e| FfiError::new(HURRAY_ERR_FORMAT, format!("{CONTENT_ERROR_PREFIX}: {e}")))
}

/// Checks host buffers' contents; `Ok(false)` when some buffer is device memory.
fn check_host_content<'a>(
    d: &TensorDescriptor,
    buffers: impl Iterator<Item = &'a HurrayBuffer>,
) -> FfiResult<bool> {
    if !hurray_core::content::has_content_rules(d) {
        return Ok(true);
    }
    let bufs: Vec<&HurrayBuffer> = buffers.collect();
    let Some(slices) = host_slices(&bufs) else {
        return Ok(false);
    };
    content_result(d, &slices)?;
    Ok(true)
}

fn check_buffers<'a>(
    d: &TensorDescriptor,
    bufs: impl ExactSizeIterator<Item = &'a HurrayBuffer>,
) -> FfiResult<()> {
    let mismatch = |m: String| FfiError::new(HURRAY_ERR_BUFFER_MISMATCH, m);
    if bufs.len() != d.buffers.len() {
        return Err(mismatch(format!(
            "{} buffers supplied, the descriptor's buffer table has {}",
            bufs.len(),
            d.buffers.len()
        )));
    }
    for (i, (b, h)) in bufs.zip(&d.buffers).enumerate() {
        if b.byte_size != h.byte_size {
            return Err(mismatch(format!(
                "buffer {i} holds {} bytes, the descriptor declares {}",
                b.byte_size, h.byte_size
            )));
        }
        if b.alignment < h.alignment {
            return Err(mismatch(format!(
                "buffer {i} is aligned to {} bytes, the descriptor promises {}",
                b.alignment, h.alignment
            )));
        }
        if b.device_tag != h.device.tag()
            || b.sync_mode != h.sync_mode.tag()
            || b.memory_class != h.memory_class.tag()
        {
            return Err(mismatch(format!("buffer {i}'s device, sync mode or memory class differs from the descriptor's handle")));
        }
    }
    Ok(())
}

// ---------------------------------------------------------------- C exports

use crate::buffer::HurrayReleaseFn;
use std::ffi::c_void;

/// Makes a tensor from descriptor bytes, a buffer list and an owner.
///
/// `abi_version` is the caller's `HURRAY_C_ABI_VERSION`. The descriptor is decoded
/// and validated (strict); `buffers` must hold exactly `buffer_count` buffers whose
/// sizes and placement match the buffer table (NULL is allowed when `buffer_count`
/// is 0). `owner_release(owner)` runs exactly once, from any thread, after the last
/// buffer view is gone (NULL: no owner).
///
/// Errors: `HURRAY_ERR_ABI_VERSION` (`abi_version` differs); `HURRAY_ERR_NULL_POINTER`
/// (NULL or zero-length descriptor bytes, NULL `out`, NULL `buffers` with buffers
/// declared); `HURRAY_ERR_DESCRIPTOR` (the bytes do not decode; the message names the
/// rule and byte offset); `HURRAY_ERR_BUFFER_MISMATCH` (count, size or placement);
/// `HURRAY_ERR_INVALID_ARGUMENT` (a list from another copy of the library).
/// On error nothing is taken: the list still belongs to the caller, and
/// `owner_release` is not called.
///
/// Ownership: on success `buffers` moves in (do not use or destroy it again) and
/// `*out_tensor` is owned; destroy with `hurray_tensor_destroy`.
///
/// # Safety
/// `descriptor_bytes` valid for `descriptor_len` bytes; `buffers` NULL or a live
/// list; `out_tensor` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn hurray_tensor_new(
    abi_version: u32,
    descriptor_bytes: *const u8,
    descriptor_len: u64,
    buffers: *mut HurrayBufferList,
    owner: *mut c_void,
    owner_release: HurrayReleaseFn,
    out_tensor: *mut *mut HurrayTensor,
) -> HurrayStatus {
    boundary(|| {
        if abi_version != handle::HURRAY_C_ABI_VERSION {
            return Err(FfiError::new(
                HURRAY_ERR_ABI_VERSION,
                format!(
                    "caller speaks ABI {abi_version}, this library {}",
                    handle::HURRAY_C_ABI_VERSION
                ),
            ));
        }
        if descriptor_bytes.is_null() || descriptor_len == 0 {
            return Err(FfiError::new(
                HURRAY_ERR_NULL_POINTER,
                "descriptor bytes are NULL or zero-length",
            ));
        }
        need(out_tensor, "out_tensor")?;
        // SAFETY: the caller guarantees descriptor_len readable bytes; slice_in
        // checks the length against the address space.
        let bytes = unsafe { slice_in(descriptor_bytes, descriptor_len, "descriptor_bytes")? };
        let descriptor = HurrayDescriptor::decode(bytes)?;
        let declared = descriptor.model().buffers.len();
        let list = if buffers.is_null() {
            if declared != 0 {
                return Err(FfiError::new(
                    HURRAY_ERR_NULL_POINTER,
                    format!("`buffers` is NULL but the descriptor declares {declared} buffers"),
                ));
            }
            None
        } else {
            // SAFETY: forwarded.
            Some(unsafe { handle::owned_mut(buffers, "buffers")? })
        };
        // Every check runs before anything is taken, so that on error the list
        // still holds its buffers and the owner is not released (the contract above).
        let validated = match &list {
            Some(l) => {
                check_buffers(descriptor.model(), l.buffers())?;
                check_host_content(descriptor.model(), l.buffers())?
            }
            None => {
                check_buffers(descriptor.model(), std::iter::empty())?;
                true
            }
        };
        let owned = match list {
            Some(l) => l.take_all(),
            None => Vec::new(),
        };
        let guard = ReleaseGuard::new(owner_release, owner);
        let t = HurrayTensor::assemble(descriptor, owned, guard, validated)?;
        if !buffers.is_null() {
            // SAFETY: own-build list (checked above), now empty; the caller gave it to us.
            drop(unsafe { handle::from_raw(buffers) });
        }
        // SAFETY: checked non-null.
        unsafe { put(out_tensor, "out_tensor", handle::into_raw(t)) }
    })
}

/// The ABI version stored in a tensor's first field, whatever build made it. Call
/// it first on a tensor received from elsewhere; this signature never changes.
///
/// Errors: `HURRAY_ERR_NULL_POINTER`.
///
/// Ownership: `*out` written by value; nothing to free.
///
/// # Safety
/// `tensor` NULL or a live tensor of some build; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn hurray_tensor_abi_version(
    tensor: *const HurrayTensor,
    out: *mut u32,
) -> HurrayStatus {
    // SAFETY: forwarded.
    unsafe { crate::abi::hurray_handle_abi_version(tensor.cast(), out) }
}

/// Borrows the tensor's decoded descriptor (works across copies of the library).
///
/// Errors: `HURRAY_ERR_NULL_POINTER`, `HURRAY_ERR_ABI_VERSION`, `HURRAY_ERR_INVALID_ARGUMENT` (not a tensor).
/// Ownership: `*out` borrowed, valid until the tensor is destroyed.
///
/// # Safety
/// `tensor` NULL or a live tensor of some build; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn hurray_tensor_descriptor(
    tensor: *const HurrayTensor,
    out: *mut *const HurrayDescriptor,
) -> HurrayStatus {
    boundary(|| {
        // SAFETY: forwarded.
        let t = unsafe { tensor_ref(tensor)? };
        // SAFETY: NULL reported, else writable.
        unsafe { put(out, "out", t.descriptor) }
    })
}

/// Borrows the tensor's buffer list, in buffer-table order (works across copies).
///
/// Errors: `HURRAY_ERR_NULL_POINTER`, `HURRAY_ERR_ABI_VERSION`, `HURRAY_ERR_INVALID_ARGUMENT`.
/// Ownership: `*out` borrowed, valid until the tensor is destroyed.
///
/// # Safety
/// `tensor` NULL or a live tensor of some build; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn hurray_tensor_buffers(
    tensor: *const HurrayTensor,
    out: *mut *const HurrayBufferList,
) -> HurrayStatus {
    boundary(|| {
        // SAFETY: forwarded.
        let t = unsafe { tensor_ref(tensor)? };
        // SAFETY: NULL reported, else writable.
        unsafe { put(out, "out", t.buffers) }
    })
}

/// Shortcut: the first byte and byte size of buffer `index` of a tensor.
///
/// Errors: `HURRAY_ERR_NULL_POINTER`, `HURRAY_ERR_ABI_VERSION`, `HURRAY_ERR_OUT_OF_RANGE`.
/// Ownership: `*out_data` borrowed, valid until the tensor is destroyed.
///
/// # Safety
/// `tensor` NULL or a live tensor of some build; outs NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn hurray_tensor_buffer_data(
    tensor: *const HurrayTensor,
    index: u64,
    out_data: *mut *const c_void,
    out_byte_size: *mut u64,
) -> HurrayStatus {
    boundary(|| {
        // SAFETY: forwarded.
        let t = unsafe { tensor_ref(tensor)? };
        need(out_data, "out_data")?;
        need(out_byte_size, "out_byte_size")?;
        // SAFETY: a tensor's buffer list pointer is valid while it lives (frozen prefix).
        let l = unsafe { crate::buffer::list_ref(t.buffers, "tensor->buffers")? };
        let b = crate::buffer::list_get(l, index)?;
        // SAFETY: list items are live buffers of the same build as the list.
        let b = unsafe { crate::buffer::buffer_ref(b, "buffer")? };
        // SAFETY: both checked non-null.
        unsafe {
            put(out_data, "out_data", b.data)?;
            put(out_byte_size, "out_byte_size", b.byte_size)
        }
    })
}

/// Checks the tensor's buffer contents against its layout's and quantization
/// scheme's content rules (`layouts.md` §2.6–§2.10, `quantization.md` §9: sparse
/// indices and pointers, block tables, scales, zero points). Tensors from strict
/// readers and from `hurray_tensor_new` were checked already, so this costs nothing
/// for them; call it before interpreting the index buffers of a tensor read
/// permissively.
///
/// Errors: `HURRAY_ERR_NULL_POINTER`; `HURRAY_ERR_ABI_VERSION`;
/// `HURRAY_ERR_INVALID_ARGUMENT` (not a tensor of this build, or device buffers that
/// cannot be read on the host); `HURRAY_ERR_FORMAT` (a rule is broken: the last-error
/// message names it, the buffer and the byte offset).
///
/// Ownership: `tensor` is borrowed; nothing is allocated or freed.
///
/// # Safety
/// `tensor` NULL or a live tensor.
#[no_mangle]
pub unsafe extern "C" fn hurray_tensor_validate_content(
    tensor: *const HurrayTensor,
) -> HurrayStatus {
    boundary(|| {
        // SAFETY: forwarded.
        let t = unsafe { handle::own(tensor, "tensor")? };
        t.validate_content()
    })
}

/// Destroys a tensor (any copy of the library made it) and nulls `*tensor`: its
/// descriptor, buffers and owner go with it, each release running exactly once when
/// nothing else holds that memory. NULL and `*tensor == NULL` are no-ops.
///
/// Errors: `HURRAY_ERR_ABI_VERSION`, `HURRAY_ERR_INVALID_ARGUMENT` (not a tensor),
/// `HURRAY_ERR_DOUBLE_DESTROY` (debug builds, stale pointer).
///
/// Ownership: the tensor, its descriptor, buffers and owner are freed; borrowed views
/// become invalid.
///
/// # Safety
/// `tensor` NULL, or pointing at NULL or a live tensor handle.
#[no_mangle]
pub unsafe extern "C" fn hurray_tensor_destroy(tensor: *mut *mut HurrayTensor) -> HurrayStatus {
    // SAFETY: forwarded.
    boundary(|| unsafe { handle::destroy(tensor, "tensor") })
}

/// A tensor of any build, read through its frozen prefix.
///
/// # Safety
/// `p` NULL or a live tensor of some build.
pub(crate) unsafe fn tensor_ref<'a>(p: *const HurrayTensor) -> FfiResult<&'a HurrayTensor> {
    // SAFETY: forwarded.
    let h = unsafe { handle::header(p.cast(), "tensor")? };
    handle::check_kind::<HurrayTensor>(h, "tensor")?;
    // SAFETY: kind checked; foreign tensors are read through public fields only.
    Ok(unsafe { &*p })
}
