//! The stream decoder and encoder: Java holds the library's own
//! `HurrayStreamDecoder` / `HurrayStreamEncoder` handles, and every entry point is one
//! call of their Rust face (demand, advance, next, next_tensor, finish, position;
//! begin_tensor, begin_item, chunk, end). No stream state of this crate's own.

use std::ptr;

use hurray_ffi::{HurrayBufferPool, HurrayStreamDecoder, HurrayStreamEncoder, HurrayStreamLimits};
use jni::objects::JClass;
use jni::sys::{jlong, jobject};
use jni::JNIEnv;

use crate::buffers::direct;
use crate::errors::{checked, run, R};
use crate::handle::{borrow_mut, into_long, take};
use crate::item::item_ref;
use crate::tensor::tensor_ref;

/// The default limits, except the descriptor and buffer maxima given (> 0).
fn limits(max_descriptor: jlong, max_buffer: jlong) -> HurrayStreamLimits {
    let mut l = HurrayStreamLimits::default();
    if max_descriptor > 0 {
        l.max_descriptor_bytes = u32::try_from(max_descriptor).unwrap_or(u32::MAX);
    }
    if max_buffer > 0 {
        l.max_buffer_bytes = max_buffer as u64;
    }
    l
}

/// Borrows the decoder behind a Java handle (see the Java contract in `handle`).
fn decoder<'a>(d: jlong) -> R<&'a mut HurrayStreamDecoder> {
    borrow_mut::<HurrayStreamDecoder>(d)
}

/// Borrows the encoder behind a Java handle (see the Java contract in `handle`).
fn encoder<'a>(e: jlong) -> R<&'a mut HurrayStreamEncoder> {
    borrow_mut::<HurrayStreamEncoder>(e)
}

/// `Native.decoderNew(long maxDescriptorBytes, long maxBufferBytes)`: a decoder with
/// the default limits, except those given (> 0), reading into its own buffer pool
/// (`HurrayBufferPool::default()`): the memory of tensors the caller closed is read
/// into again instead of fresh pages, as Python's `StreamReader` does.
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_decoderNew(
    mut env: JNIEnv,
    _c: JClass,
    max_descriptor: jlong,
    max_buffer: jlong,
) -> jlong {
    run(&mut env, 0, |_| {
        let mut d = HurrayStreamDecoder::new(&limits(max_descriptor, max_buffer))?;
        d.set_pool(Some(&HurrayBufferPool::default()));
        Ok(into_long(d))
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
        let slice = decoder(dec)?.demand();
        // SAFETY: the demanded slice is writable and valid until the next call on
        // the decoder; StreamReader.java drops the ByteBuffer before that call, and
        // defers a close() made during the read (from the user's InputStream, on
        // this thread) until the read returns, so the decoder outlives the slice.
        unsafe { direct(env, slice.as_mut_ptr(), slice.len() as u64) }
    })
}

/// `Native.decoderAdvance(long, long)`: records `n` bytes written into the demanded
/// slice.
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_decoderAdvance(
    mut env: JNIEnv,
    _c: JClass,
    dec: jlong,
    n: jlong,
) {
    run(&mut env, (), |_| {
        let n = u64::try_from(n).map_err(|_| crate::errors::Fail::Arg(format!("advance({n})")))?;
        Ok(decoder(dec)?.advance(n)?)
    })
}

/// `Native.decoderNextTensor(long)` (declares `IOException`): the next complete
/// tensor (owned), or 0. A composite is kept for `decoderNext`
/// (`HURRAY_ERR_NOT_APPLICABLE`).
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_decoderNextTensor(
    mut env: JNIEnv,
    _c: JClass,
    dec: jlong,
) -> jlong {
    run(&mut env, 0, |_| {
        let t = decoder(dec)?.next_tensor().map_err(checked(None))?;
        Ok(t.map_or(0, into_long))
    })
}

/// `Native.decoderNext(long)` (declares `IOException`): the next complete item
/// (owned), or 0.
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_decoderNext(
    mut env: JNIEnv,
    _c: JClass,
    dec: jlong,
) -> jlong {
    run(&mut env, 0, |_| {
        let i = decoder(dec)?.next().map_err(checked(None))?;
        Ok(i.map_or(0, into_long))
    })
}

/// `Native.decoderFinish(long)` (declares `IOException`): end of input; a stream cut
/// inside an item throws `TruncatedException`.
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_decoderFinish(
    mut env: JNIEnv,
    _c: JClass,
    dec: jlong,
) {
    run(&mut env, (), |_| {
        decoder(dec)?.finish().map_err(checked(None))
    })
}

/// `Native.decoderPosition(long)`: bytes consumed so far.
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_decoderPosition(
    mut env: JNIEnv,
    _c: JClass,
    dec: jlong,
) -> jlong {
    run(&mut env, 0, |_| Ok(decoder(dec)?.position() as jlong))
}

/// `Native.decoderDestroy(long)`: items it handed out live on.
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_decoderDestroy(
    mut env: JNIEnv,
    _c: JClass,
    dec: jlong,
) {
    run(&mut env, (), |_| {
        drop(take::<HurrayStreamDecoder>(dec)?);
        Ok(())
    })
}

/// `Native.encoderNew()`: an encoder with the default limits.
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_encoderNew(mut env: JNIEnv, _c: JClass) -> jlong {
    run(&mut env, 0, |_| {
        Ok(into_long(HurrayStreamEncoder::new(&limits(0, 0))?))
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
        let (e, t) = (encoder(enc)?, tensor_ref(t)?);
        Ok(e.begin_tensor(t)?.0 as jlong)
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
        let (e, it) = (encoder(enc)?, item_ref(it)?);
        Ok(e.begin_item(it)?.0 as jlong)
    })
}

/// `Native.encoderChunk(long, long)`: a direct `ByteBuffer` over chunk `i` (valid
/// until the next begin, end or destroy).
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_encoderChunk<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass,
    enc: jlong,
    i: jlong,
) -> jobject {
    run(&mut env, ptr::null_mut(), |env| {
        let c = encoder(enc)?.chunk(i as u64)?;
        // SAFETY: valid until the next begin/end/destroy; StreamWriter.java writes it
        // out and drops it before then (a close() or nested write from the user's
        // OutputStream during the write is deferred or refused), and hands it out
        // read-only.
        unsafe { direct(env, c.as_ptr(), c.len() as u64) }
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
    run(&mut env, 0, |_| {
        Ok(encoder(enc)?.chunk(i as u64)?.as_ptr() as jlong)
    })
}

/// `Native.encoderEnd(long)`: lets go of the current item's buffers.
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_encoderEnd(mut env: JNIEnv, _c: JClass, enc: jlong) {
    run(&mut env, (), |_| {
        encoder(enc)?.end();
        Ok(())
    })
}

/// `Native.encoderDestroy(long)`.
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_encoderDestroy(
    mut env: JNIEnv,
    _c: JClass,
    enc: jlong,
) {
    run(&mut env, (), |_| {
        drop(take::<HurrayStreamEncoder>(enc)?);
        Ok(())
    })
}
