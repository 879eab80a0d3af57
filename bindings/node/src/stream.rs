//! Stream decoder and encoder: the sans-io cores that the JS `StreamReader` and
//! `StreamWriter` (lib/stream.js) drive over Node streams.

use std::ffi::c_void;
use std::ptr;

use hurray_ffi::stream::{
    hurray_stream_decoder_destroy, hurray_stream_decoder_feed, hurray_stream_decoder_finish,
    hurray_stream_decoder_new, hurray_stream_decoder_next_tensor, hurray_stream_decoder_position,
    hurray_stream_encoder_begin_tensor, hurray_stream_encoder_chunk, hurray_stream_encoder_destroy,
    hurray_stream_encoder_end, hurray_stream_encoder_new,
};
use hurray_ffi::tensor::hurray_tensor_buffer_data;
use hurray_ffi::{HurrayStreamDecoder, HurrayStreamEncoder};
use napi::bindgen_prelude::*;
use napi_derive::napi;

use crate::error::{check, closed, napi_err, Result};
use crate::tensor::Tensor;

/// Decodes a byte stream of tensors (the streaming container). Feed it bytes in any
/// pieces, take completed tensors with `next()`, and call `finish()` at end of input.
/// Bad input fails the decoder: `next()` throws the error once (after the tensors
/// completed before it), with `code` `HURRAY_ERR_DESCRIPTOR`, `HURRAY_ERR_FORMAT`,
/// `HURRAY_ERR_LIMIT`, ... and a message naming the rule and byte offset.
#[napi]
pub struct StreamDecoder {
    ptr: *mut HurrayStreamDecoder,
}

impl Drop for StreamDecoder {
    fn drop(&mut self) {
        // SAFETY: owned handle or NULL; destroy nulls it.
        unsafe { hurray_stream_decoder_destroy(&mut self.ptr) };
    }
}

impl StreamDecoder {
    fn live(&self) -> Result<*mut HurrayStreamDecoder> {
        if self.ptr.is_null() {
            Err(closed("StreamDecoder"))
        } else {
            Ok(self.ptr)
        }
    }
}

#[napi]
impl StreamDecoder {
    /// A decoder with the default limits (16 MiB descriptors, 64 GiB buffers).
    #[napi(constructor)]
    pub fn new() -> Result<StreamDecoder> {
        let mut ptr = ptr::null_mut();
        // SAFETY: NULL limits select the defaults; `ptr` is a local out-pointer.
        check(unsafe { hurray_stream_decoder_new(ptr::null(), &mut ptr) })?;
        Ok(StreamDecoder { ptr })
    }

    /// Copies `bytes` into the decoder (into the tensors' final buffers). Returns the
    /// number of bytes taken: all of them unless the decoder failed (then `next()`
    /// throws the reason).
    #[napi]
    pub fn feed(&mut self, bytes: &[u8]) -> Result<f64> {
        let d = self.live()?;
        let mut taken = 0u64;
        // SAFETY: `d` live, `bytes` readable for its length during the call.
        check(unsafe {
            hurray_stream_decoder_feed(d, bytes.as_ptr(), bytes.len() as u64, &mut taken)
        })?;
        Ok(taken as f64)
    }

    /// The next completed tensor, or `null` when none is complete yet. The tensor's
    /// buffers are library memory and outlive the decoder.
    ///
    /// Throws: the decode error (once), or `HURRAY_ERR_NOT_APPLICABLE` for a
    /// composite item.
    #[napi(js_name = "next")]
    pub fn next_tensor(&mut self) -> Result<Option<Tensor>> {
        let d = self.live()?;
        let mut t = ptr::null_mut();
        // SAFETY: `d` live; `t` a local out-pointer, owned on success.
        check(unsafe { hurray_stream_decoder_next_tensor(d, &mut t) })?;
        Ok(if t.is_null() {
            None
        } else {
            Some(Tensor::from_raw(t))
        })
    }

    /// Declares end of input. Throws `HURRAY_ERR_TRUNCATED` when the input ended
    /// inside a tensor (the message gives the offset), or the pending decode error.
    #[napi]
    pub fn finish(&mut self) -> Result<()> {
        let d = self.live()?;
        // SAFETY: `d` live.
        check(unsafe { hurray_stream_decoder_finish(d) })
    }

    /// Bytes consumed so far (the stream offset).
    #[napi(getter)]
    pub fn position(&self) -> Result<f64> {
        let d = self.live()?;
        let mut p = 0u64;
        // SAFETY: `d` live, `p` a local.
        check(unsafe { hurray_stream_decoder_position(d, &mut p) })?;
        Ok(p as f64)
    }

    /// Frees the decoder now (idempotent). Tensors already taken stay valid.
    #[napi]
    pub fn close(&mut self) {
        // SAFETY: owned handle or NULL; destroy nulls it.
        unsafe { hurray_stream_decoder_destroy(&mut self.ptr) };
    }
}

/// Encodes tensors into the streaming container, without copying their payload.
#[napi]
pub struct StreamEncoder {
    ptr: *mut HurrayStreamEncoder,
}

impl Drop for StreamEncoder {
    fn drop(&mut self) {
        // SAFETY: owned handle or NULL; destroy nulls it.
        unsafe { hurray_stream_encoder_destroy(&mut self.ptr) };
    }
}

#[napi]
impl StreamEncoder {
    /// An encoder with the default limits.
    #[napi(constructor)]
    pub fn new() -> Result<StreamEncoder> {
        let mut ptr = ptr::null_mut();
        // SAFETY: NULL limits select the defaults.
        check(unsafe { hurray_stream_encoder_new(ptr::null(), &mut ptr) })?;
        Ok(StreamEncoder { ptr })
    }

    /// The bytes of one tensor in the stream, as ArrayBuffers to write in order: the
    /// descriptor and framing are copies; each payload chunk is a zero-copy view of
    /// the tensor's own buffer that keeps the tensor's memory alive until collected.
    ///
    /// Throws: `HURRAY_ERR_STATE` (closed tensor or encoder), or what the encoder
    /// refuses (a limit, a buffer that does not match its descriptor).
    #[napi]
    pub fn encode<'env>(
        &mut self,
        env: &'env Env,
        tensor: &Tensor,
    ) -> Result<Vec<ArrayBuffer<'env>>> {
        if self.ptr.is_null() {
            return Err(closed("StreamEncoder"));
        }
        let handle = tensor.handle()?.clone();
        let (mut count, mut total) = (0u64, 0u64);
        // SAFETY: encoder and tensor are live; outs are locals. The encoder borrows
        // the tensor's buffers until `end` below.
        check(unsafe {
            hurray_stream_encoder_begin_tensor(self.ptr, handle.ptr(), &mut count, &mut total)
        })?;
        // The tensor's buffers, to recognise chunks that are its own memory.
        let mut regions = Vec::new();
        for i in 0.. {
            let (mut p, mut n): (*const c_void, u64) = (ptr::null(), 0);
            // SAFETY: tensor live; OUT_OF_RANGE ends the loop.
            if unsafe { hurray_tensor_buffer_data(handle.ptr(), i, &mut p, &mut n) } != 0 {
                break;
            }
            regions.push((p as usize, n as usize));
        }
        let mut out = Vec::with_capacity(count as usize);
        let result: Result<()> = (|| {
            for i in 0..count {
                let (mut p, mut n): (*const u8, u64) = (ptr::null(), 0);
                // SAFETY: encoder live with a current item; `i` < count.
                check(unsafe { hurray_stream_encoder_chunk(self.ptr, i, &mut p, &mut n) })?;
                let (a, len) = (p as usize, n as usize);
                let inside = len > 0
                    && regions
                        .iter()
                        .any(|&(s, sz)| a >= s && a.checked_add(len).is_some_and(|e| e <= s + sz));
                let ab = if inside {
                    // SAFETY: the chunk lies inside one of the tensor's buffers, valid
                    // while `handle` lives; the ArrayBuffer's finalizer drops it.
                    unsafe {
                        ArrayBuffer::from_external(
                            env,
                            p as *mut u8,
                            len,
                            handle.clone(),
                            |_, h| drop(h),
                        )
                    }
                } else {
                    let bytes = if len == 0 {
                        Vec::new()
                    } else {
                        // SAFETY: the chunk is valid until `end` below; copied now.
                        unsafe { std::slice::from_raw_parts(p, len) }.to_vec()
                    };
                    ArrayBuffer::from_data(env, bytes)
                }
                .map_err(napi_err)?;
                out.push(ab);
            }
            Ok(())
        })();
        // SAFETY: encoder live; ends the item (its chunk pointers become invalid; the
        // views above hold the tensor, not the chunks).
        let ended = check(unsafe { hurray_stream_encoder_end(self.ptr) });
        result?;
        ended?;
        Ok(out)
    }

    /// Frees the encoder now (idempotent).
    #[napi]
    pub fn close(&mut self) {
        // SAFETY: owned handle or NULL; destroy nulls it.
        unsafe { hurray_stream_encoder_destroy(&mut self.ptr) };
    }
}
