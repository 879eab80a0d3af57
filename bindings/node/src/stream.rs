//! Stream decoder and encoder: the sans-io cores that the JS `StreamReader` and
//! `StreamWriter` (lib/stream.js) drive over Node streams.

use hurray_ffi::{
    HurrayItem, HurrayStreamDecoder, HurrayStreamEncoder, HurrayStreamLimits, HurrayTensor,
};
use napi::bindgen_prelude::*;
use napi_derive::napi;

use crate::error::{closed, err, ffi, napi_err, Result};
use crate::item::Item;
use crate::tensor::Tensor;

/// Limits on untrusted input (decoder) and on what an encoder writes (so it never
/// writes a stream a decoder with the same limits refuses). Absent fields keep the
/// defaults.
#[napi(object)]
pub struct StreamLimits {
    /// Largest descriptor accepted, in bytes (default 16 MiB).
    /// An integer in 0..2^32.
    pub max_descriptor_bytes: Option<f64>,
    /// Most composite nesting levels, counting the outermost head (default 8); an
    /// integer in 0..2^32.
    pub max_composite_depth: Option<f64>,
    /// Largest single buffer accepted, in bytes (default 64 GiB).
    pub max_buffer_bytes: Option<f64>,
    /// Decoder: buffers up to this many bytes are allocated at their final size at
    /// once; larger ones grow by doubling (default 1 GiB).
    pub eager_alloc_bytes: Option<f64>,
    /// The bytes cross machines: every buffer must be producer-synced (default false).
    pub cross_machine: Option<bool>,
}

/// A byte count from JS: a non-negative integer.
fn bytes_limit(name: &str, v: f64) -> Result<u64> {
    if v >= 0.0 && v.fract() == 0.0 && v <= 18_446_744_073_709_551_615.0 {
        Ok(v as u64)
    } else {
        Err(err(
            "HURRAY_ERR_INVALID_ARGUMENT",
            format!("{name} must be a non-negative integer, got {v}"),
        ))
    }
}

/// The default composite nesting limit (what `hurray_item_composite_push` enforces).
pub(crate) fn default_composite_depth() -> Result<u32> {
    Ok(limits_in(None)?.max_composite_depth)
}

/// `v` as a u32 when it is an integer in 0..2^32; otherwise
/// `ERR_HURRAY_INVALID_ARGUMENT` naming the option `name` (never wrapped or
/// truncated).
pub(crate) fn u32_option(name: &str, v: f64) -> Result<u32> {
    if v.fract() == 0.0 && (0.0..=f64::from(u32::MAX)).contains(&v) {
        Ok(v as u32)
    } else {
        Err(err(
            "HURRAY_ERR_INVALID_ARGUMENT",
            format!("{name} must be an integer in 0..=4294967295, got {v}"),
        ))
    }
}

/// The library's limits for `limits` (defaults where absent).
fn limits_in(limits: Option<StreamLimits>) -> Result<HurrayStreamLimits> {
    let mut l = HurrayStreamLimits::default();
    if let Some(o) = limits {
        if let Some(v) = o.max_descriptor_bytes {
            l.max_descriptor_bytes = u32_option("maxDescriptorBytes", v)?;
        }
        if let Some(v) = o.max_composite_depth {
            l.max_composite_depth = u32_option("maxCompositeDepth", v)?;
        }
        if let Some(v) = o.max_buffer_bytes {
            l.max_buffer_bytes = bytes_limit("maxBufferBytes", v)?;
        }
        if let Some(v) = o.eager_alloc_bytes {
            l.eager_alloc_bytes = bytes_limit("eagerAllocBytes", v)?;
        }
        if let Some(v) = o.cross_machine {
            l.cross_machine = v as u8;
        }
    }
    Ok(l)
}

/// What keeps the memory of payload chunks alive: the tensor or the item encoded.
enum Keep {
    Tensor(std::sync::Arc<crate::tensor::Handle>),
    Item(std::sync::Arc<crate::item::ItemHandle>),
}

/// Address ranges of a tensor's buffers.
fn regions_of(t: &HurrayTensor, out: &mut Vec<(usize, usize)>) {
    out.extend(t.buffer_list().buffers().map(|b| {
        let (p, n) = b.raw_parts();
        (p as usize, n as usize)
    }));
}

/// Address ranges of every tensor's buffers in an item tree.
fn item_regions(it: &HurrayItem, out: &mut Vec<(usize, usize)>) {
    regions_of(it.tensor_handle(), out);
    for m in it.members_iter() {
        item_regions(m, out);
    }
}

/// Decodes a byte stream of tensors (the streaming container). Feed it bytes in any
/// pieces, take completed tensors with `next()`, and call `finish()` at end of input.
/// Bad input fails the decoder: `next()` throws the error once (after the tensors
/// completed before it), with `code` `ERR_HURRAY_FORMAT`, `ERR_HURRAY_FORMAT`,
/// `ERR_HURRAY_LIMIT`, ... and a message naming the rule and byte offset.
#[napi]
pub struct StreamDecoder {
    /// The decoder; `None` once closed.
    inner: Option<HurrayStreamDecoder>,
    /// `finish()` succeeded: the input is over, `feed` is refused.
    finished: bool,
}

impl StreamDecoder {
    fn live(&mut self) -> Result<&mut HurrayStreamDecoder> {
        self.inner.as_mut().ok_or_else(|| closed("StreamDecoder"))
    }
}

#[napi]
impl StreamDecoder {
    /// A decoder with `limits` (defaults: 16 MiB descriptors, 64 GiB buffers,
    /// composite depth 8).
    ///
    /// Throws: `ERR_HURRAY_INVALID_ARGUMENT` (a limit out of range).
    #[napi(constructor)]
    pub fn new(limits: Option<StreamLimits>) -> Result<StreamDecoder> {
        let d = HurrayStreamDecoder::new(&limits_in(limits)?).map_err(ffi)?;
        Ok(StreamDecoder {
            inner: Some(d),
            finished: false,
        })
    }

    /// Copies `bytes` into the decoder (into the tensors' final buffers). Returns the
    /// number of bytes taken: all of them unless the decoder failed (then `next()`
    /// throws the reason).
    ///
    /// Throws: `ERR_HURRAY_STATE` (closed, or after `finish()`).
    #[napi]
    pub fn feed(&mut self, bytes: &[u8]) -> Result<f64> {
        let finished = self.finished;
        let d = self.live()?;
        if finished {
            return Err(err(
                "HURRAY_ERR_STATE",
                "the StreamDecoder is finished; it takes no more input",
            ));
        }
        Ok(d.feed(bytes) as f64)
    }

    /// The next completed tensor, or `null` when none is complete yet. The tensor's
    /// buffers are library memory and outlive the decoder.
    ///
    /// Throws: the decode error (once), `ERR_HURRAY_UNSUPPORTED` for a
    /// composite item, or `ERR_HURRAY_LIMIT` while the decoded tensors alive (not
    /// closed or finalized) hold the budget (`$HURRAY_NODE_MAX_DECODED_BYTES`,
    /// default half the physical memory); the tensor stays in the decoder.
    #[napi(js_name = "next")]
    pub fn next_tensor(&mut self, env: Env) -> Result<Option<Tensor>> {
        let d = self.live()?;
        crate::budget::check_decoded()?;
        let t = d.next_tensor().map_err(ffi)?;
        Ok(t.map(|t| Tensor::owned(&env, Box::new(t))))
    }

    /// The next completed item (a tensor or a composite), or `null` when none is
    /// complete yet. Its memory outlives the decoder.
    ///
    /// Throws: the decode error (once), or `ERR_HURRAY_LIMIT` as `next`.
    #[napi]
    pub fn next_item(&mut self, env: Env) -> Result<Option<Item>> {
        let d = self.live()?;
        crate::budget::check_decoded()?;
        let it = d.next().map_err(ffi)?;
        Ok(it.map(|it| Item::owned(&env, Box::new(it))))
    }

    /// Declares end of input. Throws `ERR_HURRAY_TRUNCATED` when the input ended
    /// inside a tensor (the message gives the offset), or the pending decode error.
    #[napi]
    pub fn finish(&mut self) -> Result<()> {
        self.live()?.finish().map_err(ffi)?;
        self.finished = true;
        Ok(())
    }

    /// Bytes consumed so far (the stream offset).
    #[napi(getter)]
    pub fn position(&mut self) -> Result<f64> {
        Ok(self.live()?.position() as f64)
    }

    /// Frees the decoder now (idempotent). Tensors already taken stay valid.
    #[napi]
    pub fn close(&mut self) {
        self.inner = None;
    }
}

impl StreamEncoder {
    /// The chunks of the item begun on `enc`, then `end`: chunks inside `regions`
    /// (the item's own buffers) become external ArrayBuffers holding `keep`; the
    /// rest (descriptor, framing) are copied.
    fn chunks<'env>(
        enc: &mut HurrayStreamEncoder,
        env: &'env Env,
        count: u64,
        regions: &[(usize, usize)],
        keep: Keep,
    ) -> Result<Vec<ArrayBuffer<'env>>> {
        let mut out = Vec::with_capacity(count as usize);
        let result: Result<()> = (|| {
            for i in 0..count {
                let chunk = enc.chunk(i).map_err(ffi)?;
                let (a, len) = (chunk.as_ptr() as usize, chunk.len());
                let inside = len > 0
                    && regions
                        .iter()
                        .any(|&(s, sz)| a >= s && a.checked_add(len).is_some_and(|e| e <= s + sz));
                let ab = if inside {
                    let hold = match &keep {
                        Keep::Tensor(h) => Keep::Tensor(h.clone()),
                        Keep::Item(h) => Keep::Item(h.clone()),
                    };
                    // SAFETY: the chunk lies inside one of the item's buffers, valid
                    // while `hold` lives; the ArrayBuffer's finalizer drops it. The
                    // memory is accounted by its owner (view.rs).
                    unsafe { crate::view::uncounted(env, a as *mut u8, len, hold)? }
                } else {
                    // Valid until `end` below; copied now.
                    ArrayBuffer::from_data(env, chunk.to_vec()).map_err(napi_err)?
                };
                out.push(ab);
            }
            Ok(())
        })();
        // Ends the item (its chunks become invalid; the views above hold the
        // memory, not the chunks).
        enc.end();
        result?;
        Ok(out)
    }
}

/// Encodes tensors into the streaming container, without copying their payload.
#[napi]
pub struct StreamEncoder {
    /// The encoder; `None` once closed.
    inner: Option<HurrayStreamEncoder>,
}

impl StreamEncoder {
    fn live(&mut self) -> Result<&mut HurrayStreamEncoder> {
        self.inner.as_mut().ok_or_else(|| closed("StreamEncoder"))
    }
}

#[napi]
impl StreamEncoder {
    /// An encoder that refuses what a decoder with `limits` would refuse.
    ///
    /// Throws: `ERR_HURRAY_INVALID_ARGUMENT` (a limit out of range).
    #[napi(constructor)]
    pub fn new(limits: Option<StreamLimits>) -> Result<StreamEncoder> {
        let e = HurrayStreamEncoder::new(&limits_in(limits)?).map_err(ffi)?;
        Ok(StreamEncoder { inner: Some(e) })
    }

    /// The bytes of one tensor in the stream, as ArrayBuffers to write in order: the
    /// descriptor and framing are copies; each payload chunk is a zero-copy view of
    /// the tensor's own buffer that keeps the tensor's memory alive until collected.
    ///
    /// Throws: `ERR_HURRAY_STATE` (closed tensor or encoder), or what the encoder
    /// refuses (a limit, a buffer that does not match its descriptor).
    #[napi]
    pub fn encode<'env>(
        &mut self,
        env: &'env Env,
        tensor: &Tensor,
    ) -> Result<Vec<ArrayBuffer<'env>>> {
        let enc = self.live()?;
        let handle = tensor.handle()?.clone();
        tensor.check_lent(env.raw())?;
        // The encoder borrows the tensor's buffers until `end` (in `chunks`);
        // `handle` keeps them alive.
        let (count, _) = enc.begin_tensor(handle.tensor()?).map_err(ffi)?;
        let mut regions = Vec::new();
        regions_of(handle.tensor()?, &mut regions);
        Self::chunks(enc, env, count, &regions, Keep::Tensor(handle))
    }

    /// The bytes of one item (a tensor or a composite with all its members), as
    /// `encode` gives them for a tensor.
    ///
    /// Throws: `ERR_HURRAY_STATE` (closed, or an ArrayBuffer lent to one of its
    /// tensors was detached), or what the encoder refuses.
    #[napi]
    pub fn encode_item<'env>(
        &mut self,
        env: &'env Env,
        item: &Item,
    ) -> Result<Vec<ArrayBuffer<'env>>> {
        let enc = self.live()?;
        let (root, node) = item.node()?;
        item.check_lent(env.raw())?;
        let root = root.clone();
        let mut regions = Vec::new();
        item_regions(node, &mut regions);
        let (count, _) = enc.begin_item(node).map_err(ffi)?;
        Self::chunks(enc, env, count, &regions, Keep::Item(root))
    }

    /// Bytes of every tensor and item encoded so far (the stream offset the next
    /// one starts at).
    #[napi(getter)]
    pub fn position(&mut self) -> Result<f64> {
        Ok(self.live()?.position() as f64)
    }

    /// Frees the encoder now (idempotent).
    #[napi]
    pub fn close(&mut self) {
        self.inner = None;
    }
}
