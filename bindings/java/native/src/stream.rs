//! The stream decoder and encoder.

use std::ptr;

use hurray_ffi::stream::{
    hurray_stream_decoder_advance, hurray_stream_decoder_demand, hurray_stream_decoder_destroy,
    hurray_stream_decoder_finish, hurray_stream_decoder_new, hurray_stream_decoder_next,
    hurray_stream_decoder_next_tensor, hurray_stream_decoder_position,
    hurray_stream_encoder_begin_item, hurray_stream_encoder_begin_tensor,
    hurray_stream_encoder_chunk, hurray_stream_encoder_destroy, hurray_stream_encoder_end,
    hurray_stream_encoder_new, hurray_stream_limits_default,
};
use hurray_ffi::{
    HurrayItem, HurrayStreamDecoder, HurrayStreamEncoder, HurrayStreamLimits, HurrayTensor,
};
use jni::objects::JClass;
use jni::sys::{jlong, jobject};
use jni::JNIEnv;

use crate::buffers::direct;
use crate::errors::{ck, run, R};
use crate::handle::destroy;
use crate::item::item;

fn limits(max_descriptor: jlong, max_buffer: jlong) -> R<HurrayStreamLimits> {
    let mut l = std::mem::MaybeUninit::<HurrayStreamLimits>::uninit();
    // SAFETY: l is writable.
    ck(unsafe { hurray_stream_limits_default(l.as_mut_ptr()) })?;
    // SAFETY: written on success.
    let mut l = unsafe { l.assume_init() };
    if max_descriptor > 0 {
        l.max_descriptor_bytes = u32::try_from(max_descriptor).unwrap_or(u32::MAX);
    }
    if max_buffer > 0 {
        l.max_buffer_bytes = max_buffer as u64;
    }
    Ok(l)
}

/// `Native.decoderNew(long maxDescriptorBytes, long maxBufferBytes)`: a decoder with
/// the default limits, except those given (> 0).
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_decoderNew(
    mut env: JNIEnv,
    _c: JClass,
    max_descriptor: jlong,
    max_buffer: jlong,
) -> jlong {
    run(&mut env, 0, |_| {
        let l = limits(max_descriptor, max_buffer)?;
        let mut d: *mut HurrayStreamDecoder = ptr::null_mut();
        // SAFETY: l readable; d writable.
        ck(unsafe { hurray_stream_decoder_new(&l, &mut d) })?;
        Ok(d as jlong)
    })
}

/// `Native.decoderDemand(long)`: a direct `ByteBuffer` over the slice the next bytes
/// must be read into (valid until the next call on the decoder), or null when the
/// decoder wants nothing.
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_decoderDemand<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass,
    dec: jlong,
) -> jobject {
    run(&mut env, ptr::null_mut(), |env| {
        let mut p: *mut u8 = ptr::null_mut();
        let mut n = 0u64;
        // SAFETY: dec is a live decoder; p, n writable.
        ck(unsafe {
            hurray_stream_decoder_demand(dec as *mut HurrayStreamDecoder, &mut p, &mut n)
        })?;
        // SAFETY: the demanded slice is writable and valid until the next call on
        // the decoder; StreamReader.java drops the ByteBuffer before that call, and
        // defers a close() made during the read (from the user's InputStream, on
        // this thread) until the read returns, so the decoder outlives the slice.
        unsafe { direct(env, p, n) }
    })
}

/// `Native.decoderAdvance(long, long)`: `hurray_stream_decoder_advance`.
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_decoderAdvance(
    mut env: JNIEnv,
    _c: JClass,
    dec: jlong,
    n: jlong,
) {
    run(&mut env, (), |_| {
        // SAFETY: dec is a live decoder.
        ck(unsafe { hurray_stream_decoder_advance(dec as *mut HurrayStreamDecoder, n as u64) })
    })
}

/// `Native.decoderNextTensor(long)`: the next complete tensor (owned), or 0.
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_decoderNextTensor(
    mut env: JNIEnv,
    _c: JClass,
    dec: jlong,
) -> jlong {
    run(&mut env, 0, |_| {
        let mut t: *mut HurrayTensor = ptr::null_mut();
        // SAFETY: dec is a live decoder; t writable.
        ck(unsafe { hurray_stream_decoder_next_tensor(dec as *mut HurrayStreamDecoder, &mut t) })?;
        Ok(t as jlong)
    })
}

/// `Native.decoderFinish(long)`: end of input; throws on a truncated stream.
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_decoderFinish(
    mut env: JNIEnv,
    _c: JClass,
    dec: jlong,
) {
    run(&mut env, (), |_| {
        // SAFETY: dec is a live decoder.
        ck(unsafe { hurray_stream_decoder_finish(dec as *mut HurrayStreamDecoder) })
    })
}

/// `Native.decoderPosition(long)`: bytes consumed so far.
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_decoderPosition(
    mut env: JNIEnv,
    _c: JClass,
    dec: jlong,
) -> jlong {
    run(&mut env, 0, |_| {
        let mut n = 0u64;
        // SAFETY: dec is a live decoder; n writable.
        ck(unsafe { hurray_stream_decoder_position(dec as *const HurrayStreamDecoder, &mut n) })?;
        Ok(n as jlong)
    })
}

/// `Native.decoderDestroy(long)`.
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_decoderDestroy(
    mut env: JNIEnv,
    _c: JClass,
    dec: jlong,
) {
    // SAFETY: the Java side destroys each decoder exactly once.
    unsafe { destroy(&mut env, dec, hurray_stream_decoder_destroy) }
}

/// `Native.encoderNew()`: an encoder with the default limits.
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_encoderNew(mut env: JNIEnv, _c: JClass) -> jlong {
    run(&mut env, 0, |_| {
        let l = limits(0, 0)?;
        let mut e: *mut HurrayStreamEncoder = ptr::null_mut();
        // SAFETY: l readable; e writable.
        ck(unsafe { hurray_stream_encoder_new(&l, &mut e) })?;
        Ok(e as jlong)
    })
}

/// `Native.encoderBegin(long enc, long tensor)`: the chunk count of the tensor's
/// encoding (descriptor bytes, then the tensor's own buffers, never copied).
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_encoderBegin(
    mut env: JNIEnv,
    _c: JClass,
    enc: jlong,
    t: jlong,
) -> jlong {
    run(&mut env, 0, |_| {
        let (mut count, mut len) = (0u64, 0u64);
        // SAFETY: enc a live encoder, t a live tensor; outs writable.
        ck(unsafe {
            hurray_stream_encoder_begin_tensor(
                enc as *mut HurrayStreamEncoder,
                t as *const HurrayTensor,
                &mut count,
                &mut len,
            )
        })?;
        Ok(count as jlong)
    })
}

fn chunk(enc: jlong, i: jlong) -> R<(*const u8, u64)> {
    let mut p: *const u8 = ptr::null();
    let mut n = 0u64;
    // SAFETY: enc a live encoder; outs writable.
    ck(unsafe {
        hurray_stream_encoder_chunk(enc as *const HurrayStreamEncoder, i as u64, &mut p, &mut n)
    })?;
    Ok((p, n))
}

/// `Native.encoderChunk(long, long)`: a direct `ByteBuffer` over chunk `i` (valid
/// until the next begin, end or destroy), or null when it is empty.
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_encoderChunk<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass,
    enc: jlong,
    i: jlong,
) -> jobject {
    run(&mut env, ptr::null_mut(), |env| {
        let (p, n) = chunk(enc, i)?;
        // SAFETY: valid until the next begin/end/destroy; StreamWriter.java writes it
        // out and drops it before then (a close() or nested write from the user's
        // OutputStream during the write is deferred or refused), and hands it out
        // read-only.
        unsafe { direct(env, p, n) }
    })
}

/// `Native.encoderChunkAddress(long, long)`: the pointer of chunk `i` (zero-copy tests).
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_encoderChunkAddress(
    mut env: JNIEnv,
    _c: JClass,
    enc: jlong,
    i: jlong,
) -> jlong {
    run(&mut env, 0, |_| Ok(chunk(enc, i)?.0 as jlong))
}

/// `Native.encoderEnd(long)`: lets go of the current item's buffers.
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_encoderEnd(mut env: JNIEnv, _c: JClass, enc: jlong) {
    run(&mut env, (), |_| {
        // SAFETY: enc is a live encoder.
        ck(unsafe { hurray_stream_encoder_end(enc as *mut HurrayStreamEncoder) })
    })
}

/// `Native.encoderDestroy(long)`.
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_encoderDestroy(
    mut env: JNIEnv,
    _c: JClass,
    enc: jlong,
) {
    // SAFETY: the Java side destroys each encoder exactly once.
    unsafe { destroy(&mut env, enc, hurray_stream_encoder_destroy) }
}

/// `Native.decoderNext(long)`: the next complete item (owned), or 0.
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_decoderNext(
    mut env: JNIEnv,
    _c: JClass,
    dec: jlong,
) -> jlong {
    run(&mut env, 0, |_| {
        let mut it: *mut HurrayItem = ptr::null_mut();
        // SAFETY: dec is a live decoder; it writable.
        ck(unsafe { hurray_stream_decoder_next(dec as *mut HurrayStreamDecoder, &mut it) })?;
        Ok(it as jlong)
    })
}

/// `Native.encoderBeginItem(long enc, long item)`: the chunk count of the item.
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_encoderBeginItem(
    mut env: JNIEnv,
    _c: JClass,
    enc: jlong,
    it: jlong,
) -> jlong {
    run(&mut env, 0, |_| {
        let (mut count, mut len) = (0u64, 0u64);
        // SAFETY: enc a live encoder, it a live item; outs writable.
        ck(unsafe {
            hurray_stream_encoder_begin_item(
                enc as *mut HurrayStreamEncoder,
                item(it),
                &mut count,
                &mut len,
            )
        })?;
        Ok(count as jlong)
    })
}
