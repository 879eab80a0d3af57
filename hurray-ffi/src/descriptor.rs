//! `HurrayDescriptor`: a decoded, validated descriptor. Its frozen public fields
//! carry the encoded bytes, so a descriptor made by another copy of the library is
//! read by decoding those bytes (the wire format is the stable contract).
//!
//! This module holds the handle and its life cycle (decode, dense, encode, destroy);
//! the one-call view and `hurray_descriptor_from_view` are in
//! [`crate::descriptor_view`], the field structs in [`crate::descriptor_access`].

use crate::descriptor_view::{HurrayDescriptorView, ViewStore};
use crate::handle::{self, kind, Handle, Header};
use crate::status::*;
use hurray_core::TensorDescriptor;
use std::borrow::Cow;
use std::sync::{Arc, OnceLock};

/// A decoded descriptor. Frozen public fields: `encoded`/`encoded_len`.
#[repr(C)]
pub struct HurrayDescriptor {
    header: Header,
    /// The canonical encoding (`descriptor_length` bytes).
    pub encoded: *const u8,
    /// Its length in bytes.
    pub encoded_len: u64,
    model: Arc<TensorDescriptor>,
    bytes: Vec<u8>,
    /// The data-shaped view (`hurray_descriptor_view`), built on first request.
    view: OnceLock<Box<ViewStore>>,
}

// SAFETY: repr(C) with Header first.
unsafe impl Handle for HurrayDescriptor {
    const KIND: u16 = kind::DESCRIPTOR;
    const NAME: &'static str = "HurrayDescriptor";
    fn header(&self) -> &Header {
        &self.header
    }
}

impl HurrayDescriptor {
    /// Wraps a valid descriptor model (encodes it once for the public fields).
    ///
    /// Errors: `HURRAY_ERR_DESCRIPTOR` when the model does not validate.
    pub fn new(model: Arc<TensorDescriptor>) -> FfiResult<HurrayDescriptor> {
        let bytes = model.encode()?;
        Ok(HurrayDescriptor::from_parts(model, bytes))
    }

    /// Decodes and validates `bytes` (strict mode).
    pub fn decode(bytes: &[u8]) -> FfiResult<HurrayDescriptor> {
        let model = TensorDescriptor::decode(bytes)?;
        Ok(HurrayDescriptor::from_parts(
            Arc::new(model),
            bytes.to_vec(),
        ))
    }

    fn from_parts(model: Arc<TensorDescriptor>, bytes: Vec<u8>) -> HurrayDescriptor {
        HurrayDescriptor {
            header: Header::new(kind::DESCRIPTOR, handle::destroy_own::<HurrayDescriptor>),
            encoded: bytes.as_ptr(),
            encoded_len: bytes.len() as u64,
            model,
            bytes,
            view: OnceLock::new(),
        }
    }

    /// The whole descriptor as one borrowed [`HurrayDescriptorView`] (built once,
    /// valid while this descriptor lives).
    pub fn view(&self) -> &HurrayDescriptorView {
        self.view
            .get_or_init(|| {
                let header = crate::descriptor_access::header_of(&self.model, self.bytes.len());
                Box::new(ViewStore::new(&self.model, header))
            })
            .view()
    }

    /// The model (own-build descriptors).
    pub fn model(&self) -> &Arc<TensorDescriptor> {
        &self.model
    }

    /// The encoded bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    pub(crate) fn set_borrowed(&mut self) {
        self.header.flags |= handle::FLAG_BORROWED;
    }
}

/// The model of a descriptor of any build: borrowed for own-build handles, decoded
/// from the frozen encoded bytes for foreign ones.
///
/// # Safety
/// `p` must be NULL or a live `HurrayDescriptor` of some build.
pub(crate) unsafe fn model_of<'a>(
    p: *const HurrayDescriptor,
    arg: &str,
) -> FfiResult<Cow<'a, TensorDescriptor>> {
    // SAFETY: forwarded.
    let h = unsafe { handle::header(p.cast(), arg)? };
    handle::check_kind::<HurrayDescriptor>(h, arg)?;
    if h.is_own() {
        // SAFETY: own-build handle of kind DESCRIPTOR.
        return Ok(Cow::Borrowed(unsafe { &(*p).model }));
    }
    // SAFETY: frozen public fields of a foreign descriptor: encoded_len bytes at encoded.
    let bytes = unsafe { std::slice::from_raw_parts((*p).encoded, (*p).encoded_len as usize) };
    Ok(Cow::Owned(TensorDescriptor::decode_with(
        bytes,
        &hurray_core::DecodeOptions {
            accept_private: true,
            ..Default::default()
        },
    )?))
}

/// The encoded bytes of a descriptor of any build, from its frozen public fields.
///
/// # Safety
/// `p` must be NULL or a live `HurrayDescriptor` of some build.
pub(crate) unsafe fn encoded_of<'a>(p: *const HurrayDescriptor, arg: &str) -> FfiResult<&'a [u8]> {
    // SAFETY: forwarded.
    let h = unsafe { handle::header(p.cast(), arg)? };
    handle::check_kind::<HurrayDescriptor>(h, arg)?;
    // SAFETY: kind checked; every build keeps encoded_len bytes at encoded while the
    // descriptor lives (frozen public fields).
    let (ptr, len) = unsafe { ((*p).encoded, (*p).encoded_len) };
    if len == 0 {
        return Ok(&[]);
    }
    // SAFETY: as above.
    Ok(unsafe { std::slice::from_raw_parts(ptr, len as usize) })
}

/// A rank-length shape from a caller array (NULL allowed for rank 0).
///
/// # Safety
/// `shape` NULL or valid for `rank` reads.
pub(crate) unsafe fn shape_in(shape: *const u64, rank: u32) -> FfiResult<Vec<u64>> {
    if rank as usize > hurray_core::MAX_RANK {
        return Err(FfiError::new(
            HURRAY_ERR_INVALID_ARGUMENT,
            format!(
                "rank {rank} exceeds the maximum of {}",
                hurray_core::MAX_RANK
            ),
        ));
    }
    // SAFETY: forwarded.
    Ok(unsafe { slice_in(shape, u64::from(rank), "shape")? }.to_vec())
}

/// An element type from its tag; unassigned tags are refused.
pub(crate) fn element_type_in(type_tag: u8) -> FfiResult<hurray_core::ElementType> {
    hurray_core::ElementType::from_tag(type_tag).ok_or_else(|| {
        FfiError::new(
            HURRAY_ERR_INVALID_ARGUMENT,
            format!("type_tag {type_tag:#04x} is not an assigned or private element type"),
        )
    })
}

// ---------------------------------------------------------------- C exports

/// Decodes and validates `len` bytes holding exactly one descriptor (strict mode:
/// private tags are refused).
///
/// Errors: `HURRAY_ERR_NULL_POINTER` (`bytes` NULL or `len` 0, `out` NULL);
/// `HURRAY_ERR_DESCRIPTOR` (the bytes do not decode or validate, or bytes follow the
/// descriptor; the message names the rule and byte offset).
///
/// Ownership: `*out` owned; destroy with `hurray_descriptor_destroy`.
///
/// # Safety
/// `bytes` valid for `len` reads; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn hurray_descriptor_decode(
    bytes: *const u8,
    len: u64,
    out: *mut *mut HurrayDescriptor,
) -> HurrayStatus {
    boundary(|| {
        if bytes.is_null() || len == 0 {
            return Err(FfiError::new(
                HURRAY_ERR_NULL_POINTER,
                "descriptor bytes are NULL or zero-length",
            ));
        }
        need(out, "out")?;
        // SAFETY: the caller guarantees len readable bytes.
        let input = unsafe { slice_in(bytes, len, "bytes")? };
        let d = HurrayDescriptor::decode(input)?;
        // SAFETY: out checked non-null.
        unsafe { put(out, "out", handle::into_raw(d)) }
    })
}

/// A row-major CPU descriptor with one buffer of exactly the contiguous size (64-byte
/// alignment, producer-synced, standard memory): the common case.
///
/// `shape` holds `rank` dimensions (NULL allowed when `rank` is 0).
///
/// Errors: `HURRAY_ERR_NULL_POINTER` (`out`, or `shape` with `rank` > 0);
/// `HURRAY_ERR_INVALID_ARGUMENT` (`rank` > 64, unassigned `type_tag`);
/// `HURRAY_ERR_DESCRIPTOR` (a private type, which needs `hurray_descriptor_from_view` and an
/// extension-type section; a dynamic dimension; a size that overflows).
///
/// Ownership: `*out` owned; destroy with `hurray_descriptor_destroy`.
///
/// # Safety
/// `shape` NULL or valid for `rank` reads; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn hurray_descriptor_dense(
    type_tag: u8,
    rank: u32,
    shape: *const u64,
    out: *mut *mut HurrayDescriptor,
) -> HurrayStatus {
    boundary(|| {
        need(out, "out")?;
        let t = element_type_in(type_tag)?;
        // SAFETY: forwarded.
        let shape = unsafe { shape_in(shape, rank)? };
        let model = TensorDescriptor::dense(t, &shape)?;
        let d = HurrayDescriptor::new(Arc::new(model))?;
        // SAFETY: out checked non-null.
        unsafe { put(out, "out", handle::into_raw(d)) }
    })
}

/// Copies the descriptor's canonical encoding into `out_buf` (`capacity` bytes) and
/// writes its length in bytes to `*out_len`. With `out_buf` NULL only the length is
/// written (a size query). Works on descriptors of any copy of the library.
///
/// Errors: `HURRAY_ERR_NULL_POINTER` (`descriptor`, `out_len`);
/// `HURRAY_ERR_ABI_VERSION`; `HURRAY_ERR_INVALID_ARGUMENT` (not a descriptor);
/// `HURRAY_ERR_BUFFER_TOO_SMALL` (`capacity` is short: `*out_len` holds the needed
/// length, nothing is copied).
///
/// Ownership: nothing is retained; `out_buf` stays the caller's.
///
/// # Safety
/// `descriptor` NULL or live; `out_buf` NULL or valid for `capacity` writes;
/// `out_len` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn hurray_descriptor_encode(
    descriptor: *const HurrayDescriptor,
    out_buf: *mut u8,
    capacity: u64,
    out_len: *mut u64,
) -> HurrayStatus {
    boundary(|| {
        // SAFETY: forwarded.
        let bytes = unsafe { encoded_of(descriptor, "descriptor")? };
        // SAFETY: forwarded.
        unsafe { copy_out(bytes, out_buf, capacity, out_len, "the encoding") }
    })
}

/// Destroys a descriptor made by `hurray_descriptor_decode`, `hurray_descriptor_dense`
/// or `hurray_descriptor_from_view` (any copy of the library) and nulls
/// `*descriptor`. NULL and `*descriptor == NULL` are no-ops.
///
/// Errors: `HURRAY_ERR_INVALID_ARGUMENT` (a descriptor borrowed from a tensor, or not
/// a descriptor); `HURRAY_ERR_ABI_VERSION`; `HURRAY_ERR_DOUBLE_DESTROY` (debug builds,
/// stale pointer).
///
/// Ownership: the handle is freed; borrowed views of it become invalid.
///
/// # Safety
/// `descriptor` NULL, or pointing at NULL or a live descriptor handle.
#[no_mangle]
pub unsafe extern "C" fn hurray_descriptor_destroy(
    descriptor: *mut *mut HurrayDescriptor,
) -> HurrayStatus {
    // SAFETY: forwarded.
    boundary(|| unsafe { handle::destroy(descriptor, "descriptor") })
}
