//! `HurrayDescriptor`: a decoded, validated descriptor. Its frozen public fields
//! carry the encoded bytes, so a descriptor made by another copy of the library is
//! read by decoding those bytes (the wire format is the stable contract).

use crate::handle::{self, kind, Handle, Header};
use crate::status::*;
use hurray_core::TensorDescriptor;
use std::borrow::Cow;
use std::sync::Arc;

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
        }
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
#[allow(dead_code)] // used by the descriptor accessors
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
