//! `Tensor` (one `HurrayTensor` handle), `Descriptor`, zero-copy views, and tensors
//! over the caller's own memory.
//!
//! Everything here goes through hurray-ffi's safe Rust face: descriptors are read
//! off the `hurray_core::TensorDescriptor` model and built as models
//! (`HurrayDescriptor::new`), tensors are `HurrayTensor` values, buffers are read
//! through `HurrayBufferList`. No `hurray_*` C function is called.

use std::ffi::c_void;
use std::ptr;
use std::sync::Arc;

use hurray_core::{DeviceTag, ElementType, Layout, TensorDescriptor};
use hurray_ffi::{
    AlignmentPolicy, FfiError, HurrayBuffer, HurrayDescriptor, HurrayQuantization,
    HurrayStatistics, HurrayTensor, Placement, ReleaseGuard, Wrapped,
};
use napi::bindgen_prelude::*;
use napi::sys;
use napi_derive::napi;

use crate::budget::{Token, Tokens, LIVE_DECODED_BYTES};
use crate::error::{closed, err, ffi, napi_check, napi_err, JsErr, Result};
use crate::item::ItemHandle;
use crate::release::{release, Hold};

/// Alignment every non-empty buffer handed to the library must have, in bytes.
const MIN_ALIGN: usize = 64;

/// Where the `HurrayTensor` of a [`Handle`] lives.
enum Held {
    /// Owned by the handle, dropped (destroyed, its releases run) with it.
    Owned(Box<HurrayTensor>),
    /// The tensor of the item node at this member path below the root item, kept
    /// valid by holding the root.
    Member(Arc<ItemHandle>, Vec<u32>),
}

/// One tensor, shared by a Tensor and its views through an `Arc`: an owned
/// `HurrayTensor` (dropped with the last `Arc`), or one inside an item (kept valid
/// by holding the item).
pub(crate) struct Handle {
    held: Held,
    /// Counted resources this handle keeps alive (its file mapping, its decoded
    /// bytes); dropped after the tensor (field order), and moved with the handle.
    tokens: Tokens,
}

// SAFETY: a `HurrayTensor` may move between threads and be dropped on any thread
// (its releases are thread-safe by the ABI's contract); this binding reads it on the
// JS thread (views and Tensor methods) and, during `writeTensorAsync`, on one libuv
// pool thread (file_async.rs), and the final drop, which nothing can race, may
// happen anywhere.
unsafe impl Send for Handle {}
// SAFETY: shared access is read-only: the accessors of an immutable tensor, which
// holds no interior mutability (no Cell, no lazily filled cache), so reads from the
// JS thread and a pool thread at once do not race; see `Send`.
unsafe impl Sync for Handle {}

impl Handle {
    /// The tensor.
    ///
    /// Errors: `ERR_HURRAY_INTERNAL` if a member path no longer leads to an
    /// item node (it cannot: an item's tree is fixed once made).
    pub(crate) fn tensor(&self) -> Result<&HurrayTensor> {
        match &self.held {
            Held::Owned(t) => Ok(t),
            Held::Member(root, path) => Ok(root.node(path)?.tensor_handle()),
        }
    }
}

impl Handle {
    /// A handle owning `t`, with the counted resources it keeps alive, to share
    /// between the views of its buffers (`FileReader.views`).
    pub(crate) fn shared(t: HurrayTensor, tokens: Tokens) -> Arc<Handle> {
        Arc::new(Handle {
            held: Held::Owned(Box::new(t)),
            tokens,
        })
    }
}

/// Buffer `index` of `handle`'s tensor as a zero-copy `ArrayBuffer` that holds the
/// handle until it is collected (an empty one, not holding it, for an empty buffer).
///
/// Errors: `ERR_HURRAY_INVALID_ARGUMENT` (`HURRAY_ERR_OUT_OF_RANGE`: no such
/// buffer), `ERR_HURRAY_LIMIT` (larger than the address space), the napi failure.
pub(crate) fn view_of<'env>(
    env: &'env Env,
    handle: Arc<Handle>,
    index: u32,
) -> Result<ArrayBuffer<'env>> {
    // Borrowed while the handle lives; the ArrayBuffer below holds the handle.
    let list = handle.tensor()?.buffer_list();
    let b = list.buffers().nth(index as usize).ok_or_else(|| {
        err(
            "HURRAY_ERR_OUT_OF_RANGE",
            format!(
                "buffer index {index} is out of range: the tensor has {} buffer(s)",
                list.len
            ),
        )
    })?;
    if b.host_bytes().is_none() {
        return Err(device_view_refused(index, b.placement().device));
    }
    let (data, size) = b.raw_parts();
    if size == 0 || data.is_null() {
        return ArrayBuffer::from_data(env, Vec::<u8>::new()).map_err(napi_err);
    }
    let len = usize::try_from(size)
        .map_err(|_| err("HURRAY_ERR_LIMIT", "buffer larger than the address space"))?;
    // SAFETY: `data` points at `len` bytes that stay valid while `handle` lives; the
    // finalizer drops `handle` only when the ArrayBuffer is collected. The memory
    // is accounted by its owner (view.rs).
    unsafe { crate::view::uncounted(env, data as *mut u8, len, handle) }
}

/// The error of a CPU view (`buffer()`, `array()`, `views()`) of buffer `index`
/// on `device`: its memory is not host memory (or is declared not to be), so
/// JavaScript must not read it. The rule Python and Go follow too.
fn device_view_refused(index: u32, device: DeviceTag) -> JsErr {
    err(
        "HURRAY_ERR_NOT_APPLICABLE",
        format!(
            "buffer {index} is tagged device {}: a CPU view of device memory is refused; \
             copy it to the host with the device's own API first",
            device.name()
        ),
    )
}

/// Shape in elements per dimension, as JS numbers (exact below 2^53).
fn shape_js(m: &TensorDescriptor) -> Vec<i64> {
    m.shape.iter().map(|&n| n as i64).collect()
}

/// The buffer table of a descriptor model.
fn entries_js(m: &TensorDescriptor) -> Vec<BufferEntry> {
    m.buffers
        .iter()
        .map(|e| BufferEntry {
            byte_size: e.byte_size as i64,
            alignment: e.alignment,
            device_tag: e.device.tag() as u32,
            sync_mode: e.sync_mode.tag() as u32,
            memory_class: e.memory_class.tag() as u32,
        })
        .collect()
}

/// The element type name of a `type_tag` (`"float32"`, `"private(0xf3)"`,
/// `"unknown(0x2a)"`), as every language renders it (`hurray_core::tables`).
pub(crate) fn dtype_name(tag: u8) -> String {
    hurray_core::tables::type_name(tag).to_string()
}

/// The element type of a name (`"float32"`, ...).
pub(crate) fn element_type_of(name: &str) -> Result<ElementType> {
    ElementType::from_name(name).ok_or_else(|| {
        err(
            "HURRAY_ERR_INVALID_ARGUMENT",
            format!("unknown element type {name:?} (expected e.g. \"float32\", \"int8\")"),
        )
    })
}

/// The name of a `layout_tag` (`"row_major"`, `"csr"`, `"private(0xf3)"`,
/// `"unknown(0x2a)"`), as every language renders it (`hurray_core::tables`).
pub(crate) fn layout_name(tag: u8) -> String {
    hurray_core::tables::layout_name(tag).to_string()
}

/// Shape numbers from JS as u64, refusing negatives and non-integers.
pub(crate) fn shape_in(shape: &[f64]) -> Result<Vec<u64>> {
    shape
        .iter()
        .map(|&n| {
            if n >= 0.0 && n.fract() == 0.0 && n <= 9_007_199_254_740_991.0 {
                Ok(n as u64)
            } else {
                Err(err(
                    "HURRAY_ERR_INVALID_ARGUMENT",
                    format!("shape entries are non-negative integers, got {n}"),
                ))
            }
        })
        .collect()
}

/// Address and byte length of a JS `ArrayBuffer`, TypedArray, `Buffer` or
/// `DataView`.
///
/// # Safety
/// `env` and `v` belong to the current call.
pub(crate) unsafe fn bytes_of(
    env: sys::napi_env,
    v: sys::napi_value,
) -> Result<(*mut u8, usize, sys::napi_value)> {
    // SAFETY: per this function's contract.
    let (data, len, ab) = unsafe { bytes_and_buffer_of(env, v)? };
    // SAFETY: `ab` is a value of the current call.
    unsafe { refuse_resizable(env, ab)? };
    if let Some(e) = detached_error(env, ab) {
        return Err(e);
    }
    Ok((data, len, ab))
}

/// Whether the ArrayBuffer (or SharedArrayBuffer) `ab` can change length
/// (`resizable` / `growable` read as `true`): such memory can shrink or move under
/// a tensor, so it is refused.
///
/// # Safety
/// `env` and `ab` belong to the current call.
unsafe fn refuse_resizable(env: sys::napi_env, ab: sys::napi_value) -> Result<()> {
    for prop in [c"resizable", c"growable"] {
        let mut v = ptr::null_mut();
        let mut b = false;
        // SAFETY: per this function's contract; out-pointers are locals. A value that
        // is not a boolean (an older Node without the property) reads as false.
        let is_true = unsafe {
            sys::napi_get_named_property(env, ab, prop.as_ptr(), &mut v) == sys::Status::napi_ok
                && sys::napi_get_value_bool(env, v, &mut b) == sys::Status::napi_ok
                && b
        };
        if is_true {
            return Err(err(
                "HURRAY_ERR_INVALID_ARGUMENT",
                "a resizable ArrayBuffer or growable SharedArrayBuffer cannot back a tensor \
                 (its memory may shrink or move); use a fixed-length buffer (hurray.alloc)",
            ));
        }
    }
    Ok(())
}

/// The error for a detached (transferred) ArrayBuffer `ab`, or `None`.
pub(crate) fn detached_error(env: sys::napi_env, ab: sys::napi_value) -> Option<JsErr> {
    let mut detached = false;
    // SAFETY: `ab` is a live value in `env` (a call argument or a reference's value);
    // a value that is not an ArrayBuffer (a SharedArrayBuffer) reads as not detached.
    let s = unsafe { sys::napi_is_detached_arraybuffer(env, ab, &mut detached) };
    (s == sys::Status::napi_ok && detached).then(|| {
        err(
            "HURRAY_ERR_STATE",
            "the ArrayBuffer lent to this tensor was transferred or detached; \
             the tensor's memory is gone",
        )
    })
}

/// Address, byte length and the underlying ArrayBuffer of a JS `ArrayBuffer`,
/// TypedArray, `Buffer` or `DataView`.
///
/// # Safety
/// `env` and `v` belong to the current call.
unsafe fn bytes_and_buffer_of(
    env: sys::napi_env,
    v: sys::napi_value,
) -> Result<(*mut u8, usize, sys::napi_value)> {
    let mut is = false;
    let mut data: *mut c_void = ptr::null_mut();
    // SAFETY (whole block): per this function's contract; out-pointers are locals.
    unsafe {
        napi_check(
            sys::napi_is_typedarray(env, v, &mut is),
            "napi_is_typedarray",
        )?;
        if is {
            let mut ty = 0;
            let mut length = 0usize;
            let mut ab = ptr::null_mut();
            let mut offset = 0usize;
            napi_check(
                sys::napi_get_typedarray_info(
                    env,
                    v,
                    &mut ty,
                    &mut length,
                    &mut data,
                    &mut ab,
                    &mut offset,
                ),
                "napi_get_typedarray_info",
            )?;
            let size = match ty {
                sys::TypedarrayType::int8_array
                | sys::TypedarrayType::uint8_array
                | sys::TypedarrayType::uint8_clamped_array => 1,
                sys::TypedarrayType::int16_array | sys::TypedarrayType::uint16_array => 2,
                sys::TypedarrayType::int32_array
                | sys::TypedarrayType::uint32_array
                | sys::TypedarrayType::float32_array => 4,
                _ => 8,
            };
            return Ok((data.cast(), length * size, ab));
        }
        napi_check(sys::napi_is_dataview(env, v, &mut is), "napi_is_dataview")?;
        if is {
            let mut length = 0usize;
            let mut ab = ptr::null_mut();
            let mut offset = 0usize;
            napi_check(
                sys::napi_get_dataview_info(env, v, &mut length, &mut data, &mut ab, &mut offset),
                "napi_get_dataview_info",
            )?;
            return Ok((data.cast(), length, ab));
        }
        napi_check(
            sys::napi_is_arraybuffer(env, v, &mut is),
            "napi_is_arraybuffer",
        )?;
        if is {
            let mut length = 0usize;
            napi_check(
                sys::napi_get_arraybuffer_info(env, v, &mut data, &mut length),
                "napi_get_arraybuffer_info",
            )?;
            return Ok((data.cast(), length, v));
        }
    }
    Err(err(
        "HURRAY_ERR_INVALID_ARGUMENT",
        "expected an ArrayBuffer, a TypedArray, a Buffer or a DataView",
    ))
}

/// One entry of a descriptor's buffer table: a buffer's size and placement.
#[napi(object)]
pub struct BufferEntry {
    /// Size in bytes (0: an empty buffer). Exact below 2^53.
    pub byte_size: i64,
    /// Guaranteed alignment of the first byte, in bytes.
    pub alignment: u32,
    /// Device tag (0: CPU).
    pub device_tag: u32,
    /// Sync mode (0: producer-synced).
    pub sync_mode: u32,
    /// Memory class (0: standard).
    pub memory_class: u32,
}

/// The quantization section. Fields the scheme does not have are 0; buffer indices
/// it does not have are -1.
#[napi(object)]
pub struct Quantization {
    /// `"per_tensor_affine"`, `"per_channel_affine"`, `"per_block_affine"`, `"nf4"`,
    /// `"mxfp"`, or `"private"` (tags 0xF0..0xFE).
    pub scheme: String,
    /// The `scheme_tag` byte.
    pub scheme_tag: u32,
    /// Per-tensor scale.
    pub scale: f64,
    /// Per-tensor zero point.
    pub zero_point: i32,
    /// Quantized axis.
    pub axis: u32,
    /// Elements per block (per-block, nf4, mxfp).
    pub block_size: u32,
    /// Buffer holding the scales, or -1.
    pub scale_buffer_index: i64,
    /// Buffer holding the zero points, or -1 (symmetric).
    pub zero_point_buffer_index: i64,
    /// Element type name of the scales (`"float32"`, `"float16"`, ...), or `""`.
    pub scale_type: String,
    /// The section's flags.
    pub flags: u32,
}

/// The shard section: where this tensor sits in a larger one.
#[napi(object)]
pub struct Shard {
    /// Shape of the whole (parent) tensor, in elements.
    pub parent_shape: Vec<i64>,
    /// Offset of this shard in the parent, in elements per dimension.
    pub offset: Vec<i64>,
}

/// The statistics section; `computedMask` says which groups are valid
/// (1 nnz, 2 sparsity, 4 min/max/absmax, 8 mean/stddev, 16 N:M, 32 NaN/Inf).
#[napi(object)]
pub struct Statistics {
    /// Which groups below are valid.
    pub computed_mask: u32,
    /// Non-zero elements (exact below 2^53).
    pub nnz: f64,
    /// Fraction of zero elements.
    pub sparsity: f64,
    /// Smallest value.
    pub min: f64,
    /// Largest value.
    pub max: f64,
    /// Largest absolute value.
    pub absmax: f64,
    /// Mean.
    pub mean: f64,
    /// Standard deviation.
    pub stddev: f64,
    /// N of N:M structured sparsity.
    pub nm_n: u32,
    /// M of N:M structured sparsity.
    pub nm_m: u32,
    /// Some value is NaN.
    pub has_nan: bool,
    /// Some value is infinite.
    pub has_inf: bool,
}

/// The quantization section of a model, flattened (absent fields 0, absent buffer
/// indices -1).
fn quantization_js(m: &TensorDescriptor) -> Option<Quantization> {
    let q = HurrayQuantization::from(m.quantization.as_ref()?);
    let index = |i: u32| if i == u32::MAX { -1 } else { i as i64 };
    let scheme = match q.scheme_tag {
        1 => "per_tensor_affine",
        2 => "per_channel_affine",
        3 => "per_block_affine",
        4 => "nf4",
        5 => "mxfp",
        _ => "private",
    };
    Some(Quantization {
        scheme: scheme.to_string(),
        scheme_tag: q.scheme_tag as u32,
        scale: q.scale as f64,
        zero_point: q.zero_point,
        axis: q.axis,
        block_size: q.block_size,
        scale_buffer_index: index(q.scale_buffer_index),
        zero_point_buffer_index: index(q.zero_point_buffer_index),
        scale_type: if q.scale_type_tag == 0 {
            String::new()
        } else {
            dtype_name(q.scale_type_tag)
        },
        flags: q.flags as u32,
    })
}

fn shard_js(m: &TensorDescriptor) -> Option<Shard> {
    let s = m.shard.as_ref()?;
    Some(Shard {
        parent_shape: s.parent_shape.iter().map(|&x| x as i64).collect(),
        offset: s.offset.iter().map(|&x| x as i64).collect(),
    })
}

fn statistics_js(m: &TensorDescriptor) -> Option<Statistics> {
    let st = HurrayStatistics::from(m.statistics.as_ref()?);
    Some(Statistics {
        computed_mask: st.computed_mask,
        nnz: st.nnz as f64,
        sparsity: st.sparsity_ratio,
        min: st.value_min,
        max: st.value_max,
        absmax: st.value_abs_max,
        mean: st.value_mean,
        stddev: st.value_stddev,
        nm_n: st.nm_n as u32,
        nm_m: st.nm_m as u32,
        has_nan: st.has_nan != 0,
        has_inf: st.has_inf != 0,
    })
}

fn strides_js(m: &TensorDescriptor) -> Option<Vec<i64>> {
    match &m.layout {
        Layout::Strided { strides } => Some(strides.clone()),
        _ => None,
    }
}

fn nnz_js(m: &TensorDescriptor) -> Option<f64> {
    match &m.layout {
        Layout::Coo { nnz, .. }
        | Layout::Csr { nnz }
        | Layout::Csc { nnz }
        | Layout::Csf { nnz, .. } => Some(*nnz as f64),
        _ => None,
    }
}

/// Options of `Tensor.fromBuffer` and `Tensor.fromBuffers`.
#[napi(object)]
pub struct FromBufferOptions {
    /// Called once, on the JS thread, after the library no longer needs the memory
    /// (the tensor, and every encoder or view holding it, are gone). It runs in a
    /// later turn of the event loop than the release itself.
    #[napi(ts_type = "() => void")]
    pub on_release: Option<Unknown<'static>>,
    /// Refuse memory that does not start at the buffer's declared alignment (64
    /// bytes) with `ERR_HURRAY_INVALID_ARGUMENT` instead of copying it (default
    /// false: such memory, e.g. a plain `new Float32Array(n)` or a view at an
    /// offset, is copied once into aligned memory and the tensor no longer uses it;
    /// aligned memory is always used in place). ARCHITECTURE decision 5.
    pub strict: Option<bool>,
}

/// A decoded, validated tensor descriptor (shape, element type, layout, buffer
/// table). Immutable. `close()` frees it now; otherwise the garbage collector does.
#[napi]
pub struct Descriptor {
    inner: Option<HurrayDescriptor>,
}

impl Descriptor {
    /// The descriptor handle; `ERR_HURRAY_STATE` once closed.
    pub(crate) fn handle(&self) -> Result<&HurrayDescriptor> {
        self.inner.as_ref().ok_or_else(|| closed("Descriptor"))
    }

    /// The model (what every field is read from).
    pub(crate) fn model(&self) -> Result<&TensorDescriptor> {
        Ok(self.handle()?.model())
    }

    /// Wraps a descriptor handle.
    pub(crate) fn from_handle(d: HurrayDescriptor) -> Descriptor {
        Descriptor { inner: Some(d) }
    }
}

#[napi]
impl Descriptor {
    /// Decodes and validates descriptor bytes (the wire encoding).
    ///
    /// Throws: `code` `ERR_HURRAY_FORMAT` (or `ERR_HURRAY_INVALID_ARGUMENT` for empty
    /// bytes) with a message naming the rule and byte offset.
    #[napi(factory)]
    pub fn decode(bytes: &[u8]) -> Result<Descriptor> {
        if bytes.is_empty() {
            return Err(ffi(FfiError::null("bytes")));
        }
        Ok(Descriptor::from_handle(
            HurrayDescriptor::decode(bytes).map_err(ffi)?,
        ))
    }

    /// A row-major descriptor of `dtype` (`"float32"`, `"int8"`, ...) and `shape`
    /// (elements per dimension), with one CPU buffer of the exact size.
    ///
    /// Throws: `ERR_HURRAY_INVALID_ARGUMENT` (unknown dtype, bad shape entries),
    /// `ERR_HURRAY_FORMAT` (a rule of the format, e.g. rank over 64).
    #[napi(
        factory,
        ts_args_type = "dtype: import('./tables').ElementTypeName, shape: Array<number>"
    )]
    pub fn dense(dtype: String, shape: Vec<f64>) -> Result<Descriptor> {
        let t = element_type_of(&dtype)?;
        let shape = shape_in(&shape)?;
        let m = TensorDescriptor::dense(t, &shape).map_err(|e| ffi(e.into()))?;
        Ok(Descriptor::from_handle(
            HurrayDescriptor::new(Arc::new(m)).map_err(ffi)?,
        ))
    }

    /// Elements per dimension (exact below 2^53).
    #[napi(getter)]
    pub fn shape(&self) -> Result<Vec<i64>> {
        Ok(shape_js(self.model()?))
    }

    /// Element type name (`"float32"`, `"int8"`, `"float16"`, ...).
    #[napi(
        getter,
        ts_return_type = "import('./tables').ElementTypeName | import('./tables').UnknownTagName"
    )]
    pub fn dtype(&self) -> Result<String> {
        Ok(dtype_name(self.model()?.element_type.tag()))
    }

    /// The `type_tag` byte.
    #[napi(getter)]
    pub fn dtype_tag(&self) -> Result<u32> {
        Ok(self.model()?.element_type.tag() as u32)
    }

    /// Layout name (`"row_major"`, `"csr"`, ...).
    #[napi(getter)]
    pub fn layout(&self) -> Result<String> {
        Ok(layout_name(self.model()?.layout.tag()))
    }

    /// The `layout_tag` byte.
    #[napi(getter)]
    pub fn layout_tag(&self) -> Result<u32> {
        Ok(self.model()?.layout.tag() as u32)
    }

    /// Bytes from the start of buffer 0 to element [0, ..., 0].
    #[napi(getter)]
    pub fn byte_offset(&self) -> Result<i64> {
        Ok(self.model()?.byte_offset as i64)
    }

    /// The descriptor's `flags` (which optional sections are present).
    #[napi(getter)]
    pub fn flags(&self) -> Result<u32> {
        Ok(self.model()?.flags())
    }

    /// Whether a quantization section is present.
    #[napi(getter)]
    pub fn has_quantization(&self) -> Result<bool> {
        Ok(self.model()?.quantization.is_some())
    }

    /// Whether a shard section is present.
    #[napi(getter)]
    pub fn has_shard(&self) -> Result<bool> {
        Ok(self.model()?.shard.is_some())
    }

    /// The buffer table: one entry per buffer, sizes in bytes.
    #[napi]
    pub fn buffers(&self) -> Result<Vec<BufferEntry>> {
        Ok(entries_js(self.model()?))
    }

    /// The quantization section, or `null` when absent.
    #[napi(getter)]
    pub fn quantization(&self) -> Result<Option<Quantization>> {
        Ok(quantization_js(self.model()?))
    }

    /// The shard section, or `null` when absent.
    #[napi(getter)]
    pub fn shard(&self) -> Result<Option<Shard>> {
        Ok(shard_js(self.model()?))
    }

    /// The statistics section, or `null` when absent.
    #[napi(getter)]
    pub fn statistics(&self) -> Result<Option<Statistics>> {
        Ok(statistics_js(self.model()?))
    }

    /// Strides in elements, one per dimension (may be negative), for the strided
    /// layout; `null` for other layouts.
    #[napi(getter)]
    pub fn strides(&self) -> Result<Option<Vec<i64>>> {
        Ok(strides_js(self.model()?))
    }

    /// Stored (non-zero) elements of a sparse layout (COO, CSR, CSC, CSF); `null`
    /// for other layouts.
    #[napi(getter)]
    pub fn nnz(&self) -> Result<Option<f64>> {
        Ok(nnz_js(self.model()?))
    }

    /// The wire encoding (a copy).
    #[napi]
    pub fn encode(&self) -> Result<Buffer> {
        Ok(self.handle()?.bytes().to_vec().into())
    }

    /// Frees the descriptor now. Idempotent; later calls throw `ERR_HURRAY_STATE`.
    #[napi]
    pub fn close(&mut self) {
        self.inner = None;
    }
}

/// A tensor: a descriptor plus its buffers, one `HurrayTensor` handle.
///
/// Lifetime: `close()` releases this object's reference at once (idempotent; every
/// later call throws `ERR_HURRAY_STATE`); the garbage collector does it otherwise.
/// Views from `buffer()` / `array()` hold their own reference, so the memory lives
/// until the tensor is closed *and* every view is collected.
#[napi(custom_finalize)]
pub struct Tensor {
    inner: Option<Arc<Handle>>,
    /// Weak napi references to the ArrayBuffers `buffer()` handed out, by buffer
    /// index: while one is alive it is handed out again, so repeated views of a
    /// buffer share one ArrayBuffer (one backing store, and one report of external
    /// memory to the garbage collector instead of one per call).
    views: std::cell::RefCell<Vec<(u32, sys::napi_ref)>>,
    /// Weak napi references to the ArrayBuffers a caller lent (`fromBuffer`,
    /// `fromBuffers`), checked for detachment before the memory is used.
    lent: Vec<sys::napi_ref>,
    /// Bytes reported to V8 as external memory for this object (library memory it
    /// keeps alive), given back on `close()` or finalization.
    charged: i64,
}

/// External memory charged for each object holding a mapping (a `FileReader`, a
/// tensor or item taken from one), whatever the file's size: mapped pages are
/// file-backed and reclaimable, the scarce resource is the mappings themselves
/// (`vm.max_map_count`), and this charge makes the garbage collector run long
/// before unclosed readers exhaust them.
pub(crate) const MAPPING_CHARGE: i64 = 1 << 20;

/// External memory charged for each tensor or item taken from a `FileReader` (it
/// holds the reader's mapping too, and may outlive the reader). Smaller than the
/// reader's [`MAPPING_CHARGE`], so that taking every tensor of a file with hundreds
/// of them does not report hundreds of MiB (and make V8 collect) per file opened;
/// large enough that dropped tensors alone, with their readers closed, make V8
/// collect at least every 4096 of them (it collects when external memory grows by
/// about 64 MiB), far fewer than the mappings a process may hold
/// (`budget::max_mappings`, 7/8 of `vm.max_map_count`, about 57 000).
pub(crate) const HOLDER_CHARGE: i64 = 16 << 10;

/// Reports `bytes` (positive or negative) of native memory to V8. Best effort: a
/// failure only affects garbage-collection scheduling.
pub(crate) fn adjust_external(env: sys::napi_env, bytes: i64) {
    if bytes != 0 {
        // `env` is the environment of the current call or finalizer, on its JS
        // thread. The result (the new total) is not needed.
        let _ = Env::from_raw(env).adjust_external_memory(bytes);
    }
}

/// Total bytes of a tensor's buffers.
pub(crate) fn tensor_bytes(t: &HurrayTensor) -> i64 {
    t.buffer_list().buffers().fold(0i64, |a, b| {
        a.saturating_add(b.raw_parts().1.min(i64::MAX as u64) as i64)
    })
}

impl Tensor {
    fn new(handle: Handle) -> Tensor {
        Tensor {
            inner: Some(Arc::new(handle)),
            views: Default::default(),
            lent: Vec::new(),
            charged: 0,
        }
    }

    /// Deletes the weak references and gives back the external-memory charge (JS
    /// thread of `env`, which made them).
    fn forget_views(&mut self, env: sys::napi_env) {
        for (_, r) in self.views.borrow_mut().drain(..) {
            // SAFETY: each reference was made in `env` by `buffer` and is deleted
            // exactly once, here (the list is drained).
            unsafe { sys::napi_delete_reference(env, r) };
        }
        for r in self.lent.drain(..) {
            // SAFETY: made in `env` by `build`, deleted once (the list is drained).
            unsafe { sys::napi_delete_reference(env, r) };
        }
        adjust_external(env, -std::mem::take(&mut self.charged));
    }

    /// Reports `bytes` of library memory this object keeps alive to V8 (undone on
    /// `close()` or finalization).
    pub(crate) fn charge(self, env: &Env, bytes: i64) -> Tensor {
        adjust_external(env.raw(), bytes);
        self.charged_already(bytes)
    }

    /// Records `bytes` as reported to V8 for this object by the caller (one report
    /// for a batch of objects), to be given back on `close()` or finalization.
    pub(crate) fn charged_already(mut self, bytes: i64) -> Tensor {
        self.charged += bytes;
        self
    }

    /// Hands this object's external-memory charge on (to the item its handle moved
    /// into), leaving it none to give back.
    pub(crate) fn take_charge(&mut self) -> i64 {
        std::mem::take(&mut self.charged)
    }

    /// A tensor over library memory (a decoder's), its bytes charged as external
    /// memory.
    pub(crate) fn owned(env: &Env, t: Box<HurrayTensor>) -> Tensor {
        let bytes = tensor_bytes(&t);
        let token = Token::new(&LIVE_DECODED_BYTES, bytes as u64);
        Tensor::holding(t, vec![token]).charge(env, bytes)
    }

    /// `ERR_HURRAY_STATE` when an ArrayBuffer lent to this tensor was detached
    /// (transferred): its memory is gone.
    pub(crate) fn check_lent(&self, env: sys::napi_env) -> Result<()> {
        check_lent_refs(env, &self.lent)
    }

    /// Takes the lent-buffer references out (to the item this tensor moves into).
    pub(crate) fn take_lent(&mut self) -> Vec<sys::napi_ref> {
        std::mem::take(&mut self.lent)
    }

    /// Gives this tensor (borrowed from an item) its own references to the item's
    /// lent buffers, so its uses are checked too.
    pub(crate) fn with_lent(mut self, env: sys::napi_env, lent: &[sys::napi_ref]) -> Tensor {
        self.lent = copy_lent_refs(env, lent);
        self
    }
}

/// `ERR_HURRAY_STATE` when an ArrayBuffer behind one of the weak references `refs`
/// (made in `env`) was detached.
pub(crate) fn check_lent_refs(env: sys::napi_env, refs: &[sys::napi_ref]) -> Result<()> {
    for &r in refs {
        let mut v = ptr::null_mut();
        // SAFETY: `r` is a live reference made in `env`; a collected value reads as
        // NULL (a lent buffer is pinned by its release hold while the library uses
        // it, so one collected is no longer used).
        let s = unsafe { sys::napi_get_reference_value(env, r, &mut v) };
        if s == sys::Status::napi_ok && !v.is_null() {
            if let Some(e) = detached_error(env, v) {
                return Err(e);
            }
        }
    }
    Ok(())
}

/// New weak references (in `env`) to the values of `refs` still alive.
pub(crate) fn copy_lent_refs(env: sys::napi_env, refs: &[sys::napi_ref]) -> Vec<sys::napi_ref> {
    let mut out = Vec::with_capacity(refs.len());
    for &r in refs {
        let mut v = ptr::null_mut();
        // SAFETY: `r` is a live reference made in `env`; `v` a local.
        let s = unsafe { sys::napi_get_reference_value(env, r, &mut v) };
        if s == sys::Status::napi_ok && !v.is_null() {
            let mut n = ptr::null_mut();
            // SAFETY: `v` is a live value of this call; count 0: a weak reference,
            // deleted by its new owner.
            if unsafe { sys::napi_create_reference(env, v, 0, &mut n) } == sys::Status::napi_ok {
                out.push(n);
            }
        }
    }
    out
}

/// Deletes the references `refs` (made in `env`, on its JS thread), emptying it.
pub(crate) fn delete_refs(env: sys::napi_env, refs: &mut Vec<sys::napi_ref>) {
    for r in refs.drain(..) {
        // SAFETY: each reference was made in `env` and is deleted exactly once, here
        // (the list is drained).
        unsafe { sys::napi_delete_reference(env, r) };
    }
}

impl Tensor {}

impl ObjectFinalize for Tensor {
    fn finalize(mut self, env: Env) -> napi::Result<()> {
        self.forget_views(env.raw());
        Ok(())
    }
}

impl Tensor {
    /// A Tensor owning `t`, with the counted resources it keeps alive.
    pub(crate) fn holding(t: Box<HurrayTensor>, tokens: Tokens) -> Tensor {
        Tensor::new(Handle {
            held: Held::Owned(t),
            tokens,
        })
    }

    /// A Tensor over the tensor of the item node at `path` below `root`; it keeps
    /// the item alive.
    pub(crate) fn member(root: Arc<ItemHandle>, path: Vec<u32>) -> Tensor {
        Tensor::new(Handle {
            held: Held::Member(root, path),
            tokens: Vec::new(),
        })
    }

    /// Takes the owned tensor out to move it into an item; the Tensor is closed
    /// afterwards. Refused (nothing changes) while views or encoders hold it, or
    /// when it is itself part of an item. The counted resources move with it.
    pub(crate) fn take_owned(&mut self) -> Result<(Box<HurrayTensor>, Tokens)> {
        self.check_owned()?;
        let arc = self.inner.take().ok_or_else(|| closed("Tensor"))?;
        match Arc::try_unwrap(arc) {
            Ok(Handle {
                held: Held::Owned(t),
                tokens,
            }) => Ok((t, tokens)),
            Ok(h) => {
                self.inner = Some(Arc::new(h));
                Err(err(
                    "HURRAY_ERR_INVALID_ARGUMENT",
                    "the tensor already belongs to an item",
                ))
            }
            Err(arc) => {
                self.inner = Some(arc);
                Err(views_alive())
            }
        }
    }

    /// Checks, without changing anything, that `take_owned` would succeed.
    pub(crate) fn check_owned(&self) -> Result<()> {
        let arc = self.handle()?;
        if matches!(arc.held, Held::Member(..)) {
            return Err(err(
                "HURRAY_ERR_INVALID_ARGUMENT",
                "the tensor already belongs to an item",
            ));
        }
        if Arc::strong_count(arc) != 1 {
            return Err(views_alive());
        }
        Ok(())
    }

    /// The member count a composite head declares; `ERR_HURRAY_INVALID_ARGUMENT`
    /// when this is not a composite head.
    pub(crate) fn composite_member_count(&self) -> Result<u64> {
        let m = self.model()?;
        match &m.layout {
            Layout::CompositeHead(h) => Ok(u64::from(h.member_count)),
            other => Err(err(
                "HURRAY_ERR_INVALID_ARGUMENT",
                format!(
                    "the head's layout is {}, not a composite head",
                    layout_name(other.tag())
                ),
            )),
        }
    }

    pub(crate) fn handle(&self) -> Result<&Arc<Handle>> {
        self.inner.as_ref().ok_or_else(|| closed("Tensor"))
    }

    /// Takes the handle out (the Tensor is closed afterwards).
    #[cfg_attr(not(feature = "test-support"), allow(dead_code))]
    pub(crate) fn take(&mut self) -> Result<Arc<Handle>> {
        self.inner.take().ok_or_else(|| closed("Tensor"))
    }

    /// The host bytes of a dense tensor's buffer 0 from `byteOffset` on, and its
    /// element count, for the copying accessors (`what` names the call in errors).
    fn dense_host_bytes(&self, what: &str) -> Result<(&[u8], u64)> {
        let t = self.handle()?.tensor()?;
        let m = t.model();
        if !matches!(m.layout, Layout::RowMajor | Layout::ColumnMajor) {
            return Err(err(
                "HURRAY_ERR_NOT_APPLICABLE",
                format!(
                    "{what} needs a dense tensor; this one is {}",
                    layout_name(m.layout.tag())
                ),
            ));
        }
        let count = m
            .shape
            .iter()
            .try_fold(1u64, |a, &n| a.checked_mul(n))
            .ok_or_else(|| err("HURRAY_ERR_LIMIT", "element count overflows"))?;
        let list = t.buffer_list();
        let Some(b) = list.buffers().next() else {
            return Ok((&[], count));
        };
        let device = m.buffers.first().map_or(DeviceTag::Cpu, |e| e.device);
        let bytes = match b.bytes() {
            Some(bytes) if device == DeviceTag::Cpu => bytes,
            _ => return Err(device_view_refused(0, device)),
        };
        let from = usize::try_from(m.byte_offset)
            .ok()
            .filter(|&o| o <= bytes.len())
            .ok_or_else(|| {
                err(
                    "HURRAY_ERR_BUFFER_MISMATCH",
                    format!(
                        "byteOffset {} is past buffer 0's {} bytes",
                        m.byte_offset,
                        bytes.len()
                    ),
                )
            })?;
        Ok((&bytes[from..], count))
    }

    /// The tensor's descriptor model (every read-only field comes from it).
    fn model(&self) -> Result<&TensorDescriptor> {
        Ok(self.handle()?.tensor()?.model())
    }

    /// Builds a tensor over caller memory: `descriptor` bytes and one view per buffer.
    fn build(
        env: &Env,
        descriptor: HurrayDescriptor,
        buffers: &[Unknown<'_>],
        options: Option<FromBufferOptions>,
    ) -> Result<Tensor> {
        let raw_env = env.raw();
        let (on_release, strict) = match options {
            Some(o) => (o.on_release, o.strict.unwrap_or(false)),
            None => (None, false),
        };
        let policy = if strict {
            AlignmentPolicy::Strict
        } else {
            AlignmentPolicy::CopyWhenUnaligned
        };
        let entries = &descriptor.model().buffers;
        if entries.len() != buffers.len() {
            return Err(err(
                "HURRAY_ERR_BUFFER_MISMATCH",
                format!(
                    "the descriptor has {} buffer(s), {} given",
                    entries.len(),
                    buffers.len()
                ),
            ));
        }
        // Weak references to the lent ArrayBuffers, deleted on any error below.
        struct Lent(sys::napi_env, Vec<sys::napi_ref>);
        impl Drop for Lent {
            fn drop(&mut self) {
                delete_refs(self.0, &mut self.1);
            }
        }
        let mut lent = Lent(raw_env, Vec::new());
        // Dropped on any error below (each runs its release: the pin is queued).
        let mut list: Vec<Box<HurrayBuffer>> = Vec::with_capacity(buffers.len());
        for (i, (view, entry)) in buffers.iter().zip(entries).enumerate() {
            // SAFETY: `view` is an argument of the current call.
            let (data, len, ab) = unsafe { bytes_of(raw_env, view.raw())? };
            let mut r = ptr::null_mut();
            // SAFETY: `ab` is a value of this call; count 0 makes a weak reference.
            unsafe {
                napi_check(
                    sys::napi_create_reference(raw_env, ab, 0, &mut r),
                    "napi_create_reference",
                )?
            };
            lent.1.push(r);
            let size = entry.byte_size;
            if (len as u64) < size {
                return Err(err(
                    "HURRAY_ERR_BUFFER_MISMATCH",
                    format!("buffer {i} holds {len} bytes; the descriptor needs {size}"),
                ));
            }
            // The entry's alignment (at least 64 for a non-empty buffer) is what the
            // memory must have; memory that lacks it is copied once into aligned
            // memory, or refused under `strict` (ARCHITECTURE decision 5).
            let align = if size == 0 {
                entry.alignment.max(1)
            } else {
                entry.alignment.max(MIN_ALIGN as u32)
            };
            let placement = Placement {
                alignment: align,
                device: entry.device,
                sync_mode: entry.sync_mode,
                memory_class: entry.memory_class,
            };
            // SAFETY: the view belongs to this call.
            let hold = unsafe { Hold::new(raw_env, view.raw(), ptr::null_mut())? };
            let guard = ReleaseGuard::new(Some(release), hold.into_context())
                .ok_or_else(|| err("HURRAY_ERR_INTERNAL_PANIC", "no release callback"))?;
            // SAFETY: `data` points at `len` >= `size` bytes kept alive (and, per the
            // documented contract, not transferred) by the pin in `guard` until
            // `release` runs; wrap_or_copy runs the release on every error path and
            // right after a copy (the pin is then deleted on the JS thread).
            let (b, how) = unsafe {
                HurrayBuffer::wrap_or_copy(
                    if size == 0 {
                        ptr::null()
                    } else {
                        data as *const c_void
                    },
                    size,
                    placement,
                    guard,
                    policy,
                )
            }
            .map_err(ffi)?;
            if how == Wrapped::Copied {
                // The tensor no longer uses this memory: a later detach is harmless.
                if let Some(r) = lent.1.pop() {
                    // SAFETY: made above in `raw_env`, deleted once (popped).
                    unsafe { sys::napi_delete_reference(raw_env, r) };
                }
            }
            list.push(Box::new(b));
        }
        let owner = match on_release {
            Some(f) => {
                // SAFETY: `f` is an argument of the current call.
                let hold = unsafe { Hold::new(raw_env, ptr::null_mut(), f.raw())? };
                ReleaseGuard::new(Some(release), hold.into_context())
            }
            None => None,
        };
        // On error the buffers and the owner are dropped: their releases run (queued
        // to the JS thread, which deletes the pins and runs onRelease).
        let t = HurrayTensor::new(descriptor, list, owner).map_err(ffi)?;
        let mut tensor = Tensor::holding(Box::new(t), Vec::new());
        tensor.lent = std::mem::take(&mut lent.1);
        Ok(tensor)
    }
}

/// The error of moving a tensor that something else still holds.
fn views_alive() -> JsErr {
    err(
        "HURRAY_ERR_STATE",
        "the tensor has live views (buffer(), array(), encoder chunks); \
         it can move into an item only while nothing else holds it",
    )
}

#[napi]
impl Tensor {
    /// A dense row-major tensor over `data` (an ArrayBuffer, SharedArrayBuffer,
    /// TypedArray, Buffer or DataView): the tensor's one buffer *is* that memory when
    /// it starts 64-byte aligned (`hurray.alloc` gives such memory); otherwise its
    /// bytes are copied once into aligned memory (`{ strict: true }` refuses
    /// instead), and the tensor no longer uses `data` (ARCHITECTURE decision 5).
    ///
    /// `shape` is in elements; `data` must hold at least the dense size in bytes.
    /// Ownership (zero-copy case): the tensor pins `data`
    /// with a napi reference until the library releases it, exactly once (possibly
    /// from another thread, delivered to the JS thread); then `onRelease` runs. The
    /// package marks the ArrayBuffer untransferable (permanently), so a transfer
    /// copies it instead of moving the memory; do not detach it by other means (the
    /// tensor then throws `ERR_HURRAY_STATE` where it would use the memory, but views
    /// and items made before read freed memory).
    ///
    /// Throws: `ERR_HURRAY_INVALID_ARGUMENT` (unknown dtype, misaligned memory under
    /// `strict`, a resizable ArrayBuffer or growable SharedArrayBuffer),
    /// `ERR_HURRAY_INVALID_ARGUMENT` (too few bytes), `ERR_HURRAY_FORMAT`.
    // Configurable: lib/native.js wraps it with the JS-side checks on the lent memory.
    #[napi(
        factory,
        configurable = true,
        ts_args_type = "data: ArrayBuffer | ArrayBufferView, dtype: import('./tables').ElementTypeName, shape: number[], options?: FromBufferOptions"
    )]
    pub fn from_buffer(
        env: Env,
        data: Unknown<'_>,
        dtype: String,
        shape: Vec<f64>,
        options: Option<FromBufferOptions>,
    ) -> Result<Tensor> {
        let d = Descriptor::dense(dtype, shape)?;
        let d = d.inner.ok_or_else(|| closed("Descriptor"))?;
        Tensor::build(&env, d, &[data], options)
    }

    /// A tensor of any layout over caller memory: `descriptor` is the wire encoding,
    /// `buffers` one view per entry of its buffer table (in order), each at least
    /// the entry's size. Memory at the entry's alignment is used in place; other CPU
    /// memory is copied once (refused under `strict`); ownership as `fromBuffer`.
    ///
    /// Throws: `ERR_HURRAY_FORMAT` (bad descriptor), `ERR_HURRAY_INVALID_ARGUMENT`
    /// (wrong count or sizes; misaligned memory under `strict`, or misaligned
    /// memory of a buffer tagged with a device, which cannot be copied).
    // Configurable: lib/native.js wraps it with the JS-side checks on the lent memory.
    #[napi(
        factory,
        configurable = true,
        ts_args_type = "descriptor: Uint8Array, buffers: Array<ArrayBuffer | ArrayBufferView>, options?: FromBufferOptions"
    )]
    pub fn from_buffers(
        env: Env,
        descriptor: &[u8],
        buffers: Vec<Unknown<'_>>,
        options: Option<FromBufferOptions>,
    ) -> Result<Tensor> {
        if descriptor.is_empty() {
            return Err(ffi(FfiError::null("descriptor")));
        }
        let d = HurrayDescriptor::decode(descriptor).map_err(ffi)?;
        Tensor::build(&env, d, &buffers, options)
    }

    /// A dense row-major `bool` or sub-byte tensor (`int4`, `uint4`, `int2`,
    /// `uint2`, `float4_e2m1`, `float6_*`) from one value per element, packed into
    /// library memory (a copy; element-types.md §5): `bool` takes 0 and 1, `int4`
    /// -8..7 and `int2` -2..1 (an `Int8Array`, or their two's-complement bytes), the
    /// unsigned types their codes. What `unpack()` returns goes back in unchanged.
    ///
    /// Throws: `ERR_HURRAY_INVALID_ARGUMENT` (unknown dtype, bad shape, a value
    /// that does not fit: the message names its index, `values.length` not the
    /// element count), `ERR_HURRAY_UNSUPPORTED` (a dtype that is not packed).
    // Configurable: lib/idioms.js marks the Tensor it returns.
    #[napi(
        factory,
        configurable = true,
        ts_args_type = "values: Uint8Array | Int8Array, dtype: import('./tables').ElementTypeName, shape: number[]"
    )]
    pub fn from_unpacked(
        env: Env,
        values: Either<Uint8Array, Int8Array>,
        dtype: String,
        shape: Vec<f64>,
    ) -> Result<Tensor> {
        let d = Descriptor::dense(dtype, shape)?;
        let d = d.inner.ok_or_else(|| closed("Descriptor"))?;
        let m = d.model();
        let count = m
            .shape
            .iter()
            .try_fold(1u64, |a, &n| a.checked_mul(n))
            .ok_or_else(|| err("HURRAY_ERR_LIMIT", "element count overflows"))?;
        let bytes: &[u8] = match &values {
            Either::A(u) => u,
            // SAFETY: i8 and u8 have the same size and alignment; the slice borrows
            // the argument for this call only.
            Either::B(i) => unsafe { std::slice::from_raw_parts(i.as_ptr().cast::<u8>(), i.len()) },
        };
        if bytes.len() as u64 != count {
            return Err(err(
                "HURRAY_ERR_BUFFER_MISMATCH",
                format!(
                    "{} values given for {count} elements of shape {:?}",
                    bytes.len(),
                    m.shape
                ),
            ));
        }
        let packed = hurray_core::packing::pack(m.element_type, bytes).map_err(|e| {
            let status = match e {
                hurray_core::packing::PackingError::NotSubByte(_) => "HURRAY_ERR_NOT_APPLICABLE",
                _ => "HURRAY_ERR_INVALID_ARGUMENT",
            };
            err(status, format!("fromUnpacked(): {e}"))
        })?;
        let (size, declared) = m
            .buffers
            .first()
            .map_or((0, 1), |e| (e.byte_size, e.alignment));
        let align = if size == 0 {
            declared.max(1)
        } else {
            declared.max(MIN_ALIGN as u32)
        };
        if packed.len() as u64 != size {
            return Err(err(
                "HURRAY_ERR_INTERNAL_PANIC",
                format!("packed {} bytes, the descriptor sizes {size}", packed.len()),
            ));
        }
        let ptr = packed.as_ptr().cast::<c_void>();
        let len = packed.len() as u64;
        // The Vec is the memory when it happens to be aligned; otherwise it is copied
        // once and dropped at once.
        let keep = ReleaseGuard::from_fn(move || drop(packed));
        // SAFETY: `ptr` points at `len` bytes owned by the Vec that `keep` holds and
        // drops only when the buffer releases it; nothing writes to it meanwhile.
        let (b, _) = unsafe {
            HurrayBuffer::wrap_or_copy(
                if len == 0 { ptr::null() } else { ptr },
                len,
                Placement::cpu(align),
                keep,
                AlignmentPolicy::CopyWhenUnaligned,
            )
        }
        .map_err(ffi)?;
        let t = HurrayTensor::new(d, vec![Box::new(b)], None).map_err(ffi)?;
        let bytes = tensor_bytes(&t);
        Ok(Tensor::holding(Box::new(t), Vec::new()).charge(&env, bytes))
    }

    /// Whether `close()` was called (or the handle was handed on).
    #[napi(getter)]
    pub fn closed(&self) -> bool {
        self.inner.is_none()
    }

    /// Elements per dimension (exact below 2^53).
    #[napi(getter)]
    pub fn shape(&self) -> Result<Vec<i64>> {
        Ok(shape_js(self.model()?))
    }

    /// Element type name (`"float32"`, `"int8"`, ...).
    #[napi(
        getter,
        ts_return_type = "import('./tables').ElementTypeName | import('./tables').UnknownTagName"
    )]
    pub fn dtype(&self) -> Result<String> {
        Ok(dtype_name(self.model()?.element_type.tag()))
    }

    /// Layout name (`"row_major"`, `"csr"`, ...).
    #[napi(getter)]
    pub fn layout(&self) -> Result<String> {
        Ok(layout_name(self.model()?.layout.tag()))
    }

    /// Bytes from the start of buffer 0 to element [0, ..., 0].
    #[napi(getter)]
    pub fn byte_offset(&self) -> Result<i64> {
        Ok(self.model()?.byte_offset as i64)
    }

    /// Number of buffers (entries of the buffer table).
    #[napi(getter)]
    pub fn buffer_count(&self) -> Result<u32> {
        Ok(self.model()?.buffers.len() as u32)
    }

    /// A copy of the descriptor, as its own `Descriptor` object.
    #[napi]
    pub fn descriptor(&self) -> Result<Descriptor> {
        Descriptor::decode(self.handle()?.tensor()?.descriptor_handle().bytes())
    }

    /// The descriptor's wire encoding (a copy).
    #[napi]
    pub fn descriptor_bytes(&self) -> Result<Buffer> {
        Ok(self
            .handle()?
            .tensor()?
            .descriptor_handle()
            .bytes()
            .to_vec()
            .into())
    }

    /// Buffer `index` as a zero-copy `ArrayBuffer` over the tensor's memory (a
    /// mapped file, a stream buffer, or the memory a producer lent). Its byte length
    /// is the buffer's size in bytes. While it is alive, later calls return the same
    /// ArrayBuffer. The ArrayBuffer keeps the tensor's memory
    /// alive after `close()` until it is collected. Writes through it are visible to
    /// every other view (for a mapped file they stay in memory: the mapping is
    /// copy-on-write, the file never changes).
    ///
    /// Throws: `ERR_HURRAY_INVALID_ARGUMENT` (no such buffer, or an index that is not
    /// an integer in 0..2^32), `ERR_HURRAY_STATE` (closed, or the lent ArrayBuffer
    /// was transferred).
    #[napi]
    pub fn buffer<'env>(&self, env: &'env Env, index: f64) -> Result<ArrayBuffer<'env>> {
        let handle = self.handle()?.clone();
        let raw_env = env.raw();
        self.check_lent(raw_env)?;
        if !(index >= 0.0 && index.fract() == 0.0 && index <= u32::MAX as f64) {
            return Err(err(
                "HURRAY_ERR_OUT_OF_RANGE",
                format!("buffer index must be a non-negative integer, got {index}"),
            ));
        }
        let index = index as u32;
        if let Some(e) = self.model()?.buffers.get(index as usize) {
            if e.device != DeviceTag::Cpu {
                return Err(device_view_refused(index, e.device));
            }
        }
        let cached = self
            .views
            .borrow()
            .iter()
            .find(|(i, _)| *i == index)
            .map(|&(_, r)| r);
        if let Some(r) = cached {
            let mut v = ptr::null_mut();
            // SAFETY: `r` is a live reference made in this environment; a collected
            // ArrayBuffer reads back as NULL.
            unsafe {
                napi_check(
                    sys::napi_get_reference_value(raw_env, r, &mut v),
                    "napi_get_reference_value",
                )?
            };
            if !v.is_null() {
                // SAFETY: `v` is the ArrayBuffer made below for this buffer.
                return unsafe { ArrayBuffer::from_napi_value(raw_env, v) }.map_err(napi_err);
            }
        }
        let ab = view_of(env, handle, index)?;
        let mut r = ptr::null_mut();
        // SAFETY: `ab` is a live value of this call; count 0 makes a weak reference.
        unsafe {
            napi_check(
                sys::napi_create_reference(raw_env, ab.raw(), 0, &mut r),
                "napi_create_reference",
            )?
        };
        let mut views = self.views.borrow_mut();
        if let Some(slot) = views.iter_mut().find(|(i, _)| *i == index) {
            // SAFETY: the old reference (to a collected ArrayBuffer) is replaced and
            // deleted once.
            unsafe { sys::napi_delete_reference(raw_env, slot.1) };
            slot.1 = r;
        } else {
            views.push((index, r));
        }
        Ok(ab)
    }

    /// Every buffer, in buffer-table order, each the `ArrayBuffer` `buffer(i)` gives:
    /// `bufferCount` and one `buffer(i)` per buffer in one call.
    ///
    /// Throws: as `buffer()`.
    #[napi]
    pub fn buffers<'env>(&self, env: &'env Env) -> Result<Vec<ArrayBuffer<'env>>> {
        (0..self.model()?.buffers.len() as u32)
            .map(|i| self.buffer(env, f64::from(i)))
            .collect()
    }

    /// The elements as a zero-copy TypedArray over buffer 0, for a dense tensor
    /// (row-major or column-major) whose dtype has one (`float32` -> Float32Array,
    /// `int64` -> BigInt64Array, ...; `float16` and `bfloat16` -> Uint16Array of
    /// their bit patterns: convert with `toFloat32()` or `hurray.float16ToFloat32`).
    /// Length: the element count; it starts at `byteOffset`, in memory order (for
    /// column-major, the first dimension varies fastest). Keeps the memory alive like
    /// `buffer()`.
    ///
    /// `dtype`, when given, is the dtype the caller expects: the call throws unless
    /// the tensor has it, and TypeScript then types the result (`array('float32')`
    /// is a `Float32Array`).
    ///
    /// Throws: `ERR_HURRAY_UNSUPPORTED` (other layouts; bool and sub-byte dtypes,
    /// which `unpack()` copies out one byte per element; other dtypes without a
    /// TypedArray; a `byteOffset` that is not a multiple of the element size: use
    /// `buffer()`; a buffer tagged with a device), `ERR_HURRAY_INVALID_ARGUMENT`
    /// (the tensor's dtype is not `dtype`), `ERR_HURRAY_STATE` (closed).
    #[napi(
        ts_generic_types = "K extends import('./index').ArrayDType = import('./index').ArrayDType",
        ts_args_type = "dtype?: K",
        ts_return_type = "import('./index').TypedArrayOf[K]"
    )]
    pub fn array<'env>(&self, env: &'env Env, dtype: Option<String>) -> Result<Unknown<'env>> {
        use sys::TypedarrayType as T;
        let m = self.model()?;
        if let Some(want) = dtype {
            let have = dtype_name(m.element_type.tag());
            if want != have {
                return Err(err(
                    "HURRAY_ERR_INVALID_ARGUMENT",
                    format!("array({want:?}) called on a tensor of dtype {have}"),
                ));
            }
        }
        if !matches!(m.layout, Layout::RowMajor | Layout::ColumnMajor) {
            return Err(err(
                "HURRAY_ERR_NOT_APPLICABLE",
                format!(
                    "array() needs a dense tensor; this one is {}",
                    layout_name(m.layout.tag())
                ),
            ));
        }
        let (type_tag, byte_offset) = (m.element_type.tag(), m.byte_offset);
        let (ty, size) = match ElementType::from_tag(type_tag) {
            Some(ElementType::Int8) => (T::int8_array, 1),
            Some(ElementType::Uint8) => (T::uint8_array, 1),
            Some(ElementType::Int16) => (T::int16_array, 2),
            Some(ElementType::Uint16 | ElementType::Float16 | ElementType::Bfloat16) => {
                (T::uint16_array, 2)
            }
            Some(ElementType::Int32) => (T::int32_array, 4),
            Some(ElementType::Uint32) => (T::uint32_array, 4),
            Some(ElementType::Float32) => (T::float32_array, 4),
            Some(ElementType::Float64) => (T::float64_array, 8),
            Some(ElementType::Int64) => (T::bigint64_array, 8),
            Some(ElementType::Uint64) => (T::biguint64_array, 8),
            Some(t) if hurray_core::packing::unpack(t, &[], 0).is_ok() => {
                return Err(err(
                    "HURRAY_ERR_NOT_APPLICABLE",
                    format!(
                        "{} is packed below one byte per element, so no TypedArray views it; \
                         unpack() copies it out one byte per element",
                        dtype_name(type_tag)
                    ),
                ))
            }
            _ => {
                return Err(err(
                    "HURRAY_ERR_NOT_APPLICABLE",
                    format!(
                        "{} has no TypedArray; use buffer(0) for its bytes",
                        dtype_name(type_tag)
                    ),
                ))
            }
        };
        let count: u64 = m
            .shape
            .iter()
            .try_fold(1u64, |a, &n| a.checked_mul(n))
            .ok_or_else(|| err("HURRAY_ERR_LIMIT", "element count overflows"))?;
        let ab = self.buffer(env, 0.0)?;
        let need = count
            .checked_mul(size)
            .and_then(|b| b.checked_add(byte_offset))
            .ok_or_else(|| err("HURRAY_ERR_LIMIT", "byte size overflows"))?;
        if byte_offset % size != 0 {
            return Err(err(
                "HURRAY_ERR_NOT_APPLICABLE",
                format!(
                    "byteOffset {} is not a multiple of the {size}-byte {} element, so no \
                     TypedArray can start there; read the bytes with buffer(0)",
                    byte_offset,
                    dtype_name(type_tag)
                ),
            ));
        }
        if need > ab.len() as u64 {
            return Err(err(
                "HURRAY_ERR_BUFFER_MISMATCH",
                format!(
                    "buffer 0 holds {} bytes; {count} {} elements at offset {} need {need}",
                    ab.len(),
                    dtype_name(type_tag),
                    byte_offset
                ),
            ));
        }
        let mut out = ptr::null_mut();
        // SAFETY: `ab` is a live ArrayBuffer of this call, and the range
        // [byte_offset, byte_offset + count*size) lies inside it (checked above).
        unsafe {
            napi_check(
                sys::napi_create_typedarray(
                    env.raw(),
                    ty,
                    count as usize,
                    ab.raw(),
                    byte_offset as usize,
                    &mut out,
                ),
                "napi_create_typedarray",
            )?;
            Ok(Unknown::from_raw_unchecked(env.raw(), out))
        }
    }

    /// A copy of a dense bool or sub-byte tensor's elements, one byte each
    /// (element-types.md §5): `bool` as 0/1 and `uint4`, `uint2`, `float4_e2m1`,
    /// `float6_*` codes in a `Uint8Array`; `int4` and `int2` sign-extended in an
    /// `Int8Array`. Length: the element count, in memory order. The tensor's packed
    /// memory is not touched.
    ///
    /// Throws: `ERR_HURRAY_UNSUPPORTED` (not a dense tensor of such a dtype, or a
    /// buffer tagged with a device), `ERR_HURRAY_INVALID_ARGUMENT` (the buffer is
    /// shorter than the elements need), `ERR_HURRAY_STATE` (closed).
    #[napi(ts_return_type = "Uint8Array | Int8Array")]
    pub fn unpack<'env>(&self, env: &'env Env) -> Result<Unknown<'env>> {
        let m = self.model()?;
        let t = m.element_type;
        let (packed, count) = self.dense_host_bytes("unpack()")?;
        let out = hurray_core::packing::unpack(t, packed, count).map_err(|e| {
            let status = match e {
                hurray_core::packing::PackingError::NotSubByte(_) => "HURRAY_ERR_NOT_APPLICABLE",
                _ => "HURRAY_ERR_BUFFER_MISMATCH",
            };
            err(status, format!("unpack(): {e}"))
        })?;
        if matches!(t, ElementType::Int4 | ElementType::Int2) {
            let signed: Vec<i8> = out.into_iter().map(|b| b as i8).collect();
            Int8Array::new(signed).into_unknown(env).map_err(napi_err)
        } else {
            Uint8Array::new(out).into_unknown(env).map_err(napi_err)
        }
    }

    /// A copy of a dense `float16`, `bfloat16` or `float32` tensor's elements as a
    /// `Float32Array` (every float16 and bfloat16 value is exact in float32), in
    /// memory order.
    ///
    /// Throws: `ERR_HURRAY_UNSUPPORTED` (another dtype or layout, a buffer tagged
    /// with a device), `ERR_HURRAY_INVALID_ARGUMENT` (buffer too short),
    /// `ERR_HURRAY_STATE` (closed).
    #[napi]
    pub fn to_float32(&self) -> Result<Float32Array> {
        let t = self.model()?.element_type;
        let (bytes, count) = self.dense_host_bytes("toFloat32()")?;
        let width = match t {
            ElementType::Float32 => 4,
            ElementType::Float16 | ElementType::Bfloat16 => 2,
            _ => {
                return Err(err(
                    "HURRAY_ERR_NOT_APPLICABLE",
                    format!(
                        "toFloat32() converts float16, bfloat16 and float32, not {}",
                        dtype_name(t.tag())
                    ),
                ))
            }
        };
        let need = count
            .checked_mul(width)
            .filter(|&n| n <= bytes.len() as u64);
        let Some(need) = need else {
            return Err(err(
                "HURRAY_ERR_BUFFER_MISMATCH",
                format!(
                    "buffer 0 holds {} bytes after byteOffset; {count} {} elements need {}",
                    bytes.len(),
                    dtype_name(t.tag()),
                    count.saturating_mul(width)
                ),
            ));
        };
        let bytes = &bytes[..need as usize];
        let out: Vec<f32> = match t {
            ElementType::Float32 => bytes
                .chunks_exact(4)
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect(),
            ElementType::Float16 => bytes
                .chunks_exact(2)
                .map(|c| half::f16::from_le_bytes([c[0], c[1]]).to_f32())
                .collect(),
            _ => bytes
                .chunks_exact(2)
                .map(|c| half::bf16::from_le_bytes([c[0], c[1]]).to_f32())
                .collect(),
        };
        Ok(Float32Array::new(out))
    }

    /// Releases this object's reference to the tensor now. Idempotent. Views already
    /// handed out stay valid until collected.
    #[napi]
    pub fn close(&mut self, env: Env) {
        self.inner = None;
        self.forget_views(env.raw());
    }
}

/// A zero-filled `ArrayBuffer` of `byteLength` bytes whose memory starts aligned to
/// `alignment` bytes (a power of two, default and minimum 64, as the format requires
/// of every buffer): build TypedArrays over it and pass them to `Tensor.fromBuffer`.
/// Freed when collected.
///
/// Throws: `ERR_HURRAY_INVALID_ARGUMENT` (bad size or alignment), `ERR_HURRAY_LIMIT`
/// when the size cannot be allocated.
#[napi]
pub fn alloc<'env>(
    env: &'env Env,
    byte_length: f64,
    alignment: Option<u32>,
) -> Result<ArrayBuffer<'env>> {
    if !(byte_length >= 0.0 && byte_length.fract() == 0.0 && byte_length <= (isize::MAX as f64)) {
        return Err(err(
            "HURRAY_ERR_INVALID_ARGUMENT",
            format!("byteLength must be a non-negative integer, got {byte_length}"),
        ));
    }
    let align = alignment.unwrap_or(MIN_ALIGN as u32) as usize;
    if !align.is_power_of_two() || align < MIN_ALIGN {
        return Err(err(
            "HURRAY_ERR_INVALID_ARGUMENT",
            format!("alignment must be a power of two of at least {MIN_ALIGN}, got {align}"),
        ));
    }
    let len = byte_length as usize;
    if len == 0 {
        return ArrayBuffer::from_data(env, Vec::<u8>::new()).map_err(napi_err);
    }
    let layout = std::alloc::Layout::from_size_align(len, align)
        .map_err(|e| err("HURRAY_ERR_LIMIT", e.to_string()))?;
    // SAFETY: `layout` has a non-zero size.
    let p = unsafe { std::alloc::alloc_zeroed(layout) };
    if p.is_null() {
        return Err(err(
            "HURRAY_ERR_LIMIT",
            format!("cannot allocate {len} bytes"),
        ));
    }
    struct Aligned(*mut u8, std::alloc::Layout);
    impl Drop for Aligned {
        fn drop(&mut self) {
            // SAFETY: allocated above with this layout, freed once (in the finalizer).
            unsafe { std::alloc::dealloc(self.0, self.1) };
        }
    }
    let owner = Aligned(p, layout);
    // SAFETY: `p` points at `len` bytes owned by `owner`, freed only by the finalizer.
    unsafe { ArrayBuffer::from_external(env, p, len, owner, |_, o| drop(o)) }.map_err(napi_err)
}

/// The float32 value of each float16 bit pattern in `bits` (IEEE binary16, exact),
/// as a new `Float32Array` of the same length.
#[napi(js_name = "float16ToFloat32")]
pub fn float16_to_float32(bits: Uint16Array) -> Float32Array {
    Float32Array::new(
        bits.iter()
            .map(|&b| half::f16::from_bits(b).to_f32())
            .collect(),
    )
}

/// The float16 bit pattern of each value in `values`, rounded to nearest even
/// (overflow gives infinity, NaN stays NaN), as a new `Uint16Array` of the same
/// length: the memory of a `float16` tensor (`Tensor.fromBuffer(bits, 'float16', shape)`).
#[napi(js_name = "float32ToFloat16")]
pub fn float32_to_float16(values: Float32Array) -> Uint16Array {
    Uint16Array::new(
        values
            .iter()
            .map(|&v| half::f16::from_f32(v).to_bits())
            .collect(),
    )
}

/// The float32 value of each bfloat16 bit pattern in `bits` (the upper half of a
/// binary32, exact), as a new `Float32Array` of the same length.
#[napi(js_name = "bfloat16ToFloat32")]
pub fn bfloat16_to_float32(bits: Uint16Array) -> Float32Array {
    Float32Array::new(
        bits.iter()
            .map(|&b| half::bf16::from_bits(b).to_f32())
            .collect(),
    )
}

/// The bfloat16 bit pattern of each value in `values`, rounded to nearest even
/// (NaN stays NaN), as a new `Uint16Array` of the same length.
#[napi(js_name = "float32ToBfloat16")]
pub fn float32_to_bfloat16(values: Float32Array) -> Uint16Array {
    Uint16Array::new(
        values
            .iter()
            .map(|&v| half::bf16::from_f32(v).to_bits())
            .collect(),
    )
}
