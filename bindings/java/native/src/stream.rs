//! The stream decoder (the library's `HurrayStreamDecoder`) and encoder (this
//! crate's state over `hurray_io`'s sans-io `StreamEncoder`).

use std::ops::Range;
use std::ptr;

use hurray_ffi::{
    FfiError, HurrayItem, HurrayStreamDecoder, HurrayStreamLimits, HurrayTensor, HURRAY_ERR_FORMAT,
    HURRAY_ERR_NOT_APPLICABLE, HURRAY_ERR_OUT_OF_RANGE,
};
use hurray_io::stream::StreamEncoder;
use jni::objects::JClass;
use jni::sys::{jlong, jobject};
use jni::JNIEnv;

use crate::buffers::direct;
use crate::errors::{run, R};
use crate::handle::{borrow_box, into_long, into_long_box, take_box};
use crate::item::item_ref;
use crate::tensor::tensor_ref;

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

/// A decoder and the composite `decoderNextTensor` found and left for `decoderNext`.
pub(crate) struct Decoder {
    dec: HurrayStreamDecoder,
    pending: Option<hurray_io::Item>,
}

impl Decoder {
    fn next(&mut self) -> R<Option<hurray_io::Item>> {
        match self.pending.take() {
            Some(i) => Ok(Some(i)),
            None => Ok(self.dec.next_item()?),
        }
    }
}

/// Borrows the decoder behind a Java handle (see the Java contract in `handle`).
fn decoder<'a>(d: jlong) -> R<&'a mut Decoder> {
    borrow_box::<Decoder>(d)
}

/// One chunk of the current item: a range of its descriptor bytes, or a whole
/// buffer of the item (kept alive by `Current::_item`).
enum Chunk {
    Descriptor(Range<usize>),
    Buffer(*const u8, usize),
}

/// The item being written: its encoding, split into chunks.
struct Current {
    /// Holds references to every buffer a `Chunk::Buffer` points into.
    _item: hurray_io::Item,
    descriptors: Vec<u8>,
    chunks: Vec<Chunk>,
}

/// An encoder and its current item.
pub(crate) struct Encoder {
    enc: StreamEncoder,
    current: Option<Current>,
}

impl Encoder {
    /// Encodes `item` as the current item; returns its chunk count.
    fn begin(&mut self, item: hurray_io::Item) -> R<u64> {
        self.current = None;
        let encoded = self.enc.encode_item(&item).map_err(FfiError::from)?;
        let descriptors = encoded.descriptor_bytes().to_vec();
        let d = encoded.descriptor_bytes().as_ptr_range();
        let chunks: Vec<Chunk> = encoded
            .chunks()
            .map(|c| {
                let p = c.as_ptr();
                if d.contains(&p) {
                    let start = p as usize - d.start as usize;
                    Chunk::Descriptor(start..start + c.len())
                } else {
                    Chunk::Buffer(p, c.len())
                }
            })
            .collect();
        drop(encoded);
        let n = chunks.len() as u64;
        self.current = Some(Current {
            _item: item,
            descriptors,
            chunks,
        });
        Ok(n)
    }

    /// Address and length of chunk `i` of the current item.
    fn chunk(&self, i: jlong) -> R<(*const u8, u64)> {
        let c = self.current.as_ref().ok_or_else(|| {
            FfiError::new(
                hurray_ffi::HURRAY_ERR_STATE,
                "the encoder has no current item",
            )
        })?;
        let n = c.chunks.len();
        let chunk = usize::try_from(i)
            .ok()
            .and_then(|i| c.chunks.get(i))
            .ok_or_else(|| {
                FfiError::new(
                    HURRAY_ERR_OUT_OF_RANGE,
                    format!("chunk {i} is past the item's {n} chunks"),
                )
            })?;
        Ok(match chunk {
            Chunk::Descriptor(r) => (c.descriptors[r.clone()].as_ptr(), r.len() as u64),
            Chunk::Buffer(p, n) => (*p, *n as u64),
        })
    }
}

/// Borrows the encoder behind a Java handle (see the Java contract in `handle`).
fn encoder<'a>(e: jlong) -> R<&'a mut Encoder> {
    borrow_box::<Encoder>(e)
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
        let dec = HurrayStreamDecoder::new(&limits(max_descriptor, max_buffer))?;
        Ok(into_long_box(Box::new(Decoder { dec, pending: None })))
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
        let slice = decoder(dec)?.dec.decoder().demand();
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
    run(&mut env, (), |_| Ok(decoder(dec)?.dec.advance(n as u64)?))
}

/// `Native.decoderNextTensor(long)`: the next complete tensor (owned), or 0. A
/// composite is left for `decoderNext` (`HURRAY_ERR_NOT_APPLICABLE`).
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_decoderNextTensor(
    mut env: JNIEnv,
    _c: JClass,
    dec: jlong,
) -> jlong {
    run(&mut env, 0, |_| {
        let d = decoder(dec)?;
        match d.next()? {
            None => Ok(0),
            Some(hurray_io::Item::Tensor(t)) => Ok(into_long(HurrayTensor::from_io(t)?)),
            Some(c) => {
                d.pending = Some(c);
                Err(FfiError::new(
                    HURRAY_ERR_NOT_APPLICABLE,
                    "the next item is a composite; take it with hurray_stream_decoder_next",
                )
                .into())
            }
        }
    })
}

/// `Native.decoderNext(long)`: the next complete item (owned), or 0.
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_decoderNext(
    mut env: JNIEnv,
    _c: JClass,
    dec: jlong,
) -> jlong {
    run(&mut env, 0, |_| match decoder(dec)?.next()? {
        None => Ok(0),
        Some(i) => Ok(into_long(HurrayItem::from_io(i)?)),
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
        let d = decoder(dec)?;
        Ok(d.dec.decoder().finish().map_err(FfiError::from)?)
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
        Ok(decoder(dec)?.dec.decoder().position() as jlong)
    })
}

/// `Native.decoderDestroy(long)`: items it handed out live on.
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_decoderDestroy(
    mut env: JNIEnv,
    _c: JClass,
    dec: jlong,
) {
    run(&mut env, (), |_| {
        drop(take_box::<Decoder>(dec)?);
        Ok(())
    })
}

/// `Native.encoderNew()`: an encoder with the default limits.
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_encoderNew(mut env: JNIEnv, _c: JClass) -> jlong {
    run(&mut env, 0, |_| {
        let enc = StreamEncoder::new(limits(0, 0).to_limits()?);
        Ok(into_long_box(Box::new(Encoder { enc, current: None })))
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
        e.current = None;
        if matches!(t.model().layout, hurray_core::Layout::CompositeHead(_)) {
            // A writer's mistake, not a cut input: never report it as truncation.
            return Err(FfiError::new(
                HURRAY_ERR_FORMAT,
                "a composite head is written with its members: use hurray_stream_encoder_begin_item",
            )
            .into());
        }
        Ok(e.begin(hurray_io::Item::Tensor(t.to_io()?))? as jlong)
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
        e.current = None;
        Ok(e.begin(it.to_io()?)? as jlong)
    })
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
        let (p, n) = encoder(enc)?.chunk(i)?;
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
    run(&mut env, 0, |_| Ok(encoder(enc)?.chunk(i)?.0 as jlong))
}

/// `Native.encoderEnd(long)`: lets go of the current item's buffers.
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_encoderEnd(mut env: JNIEnv, _c: JClass, enc: jlong) {
    run(&mut env, (), |_| {
        encoder(enc)?.current = None;
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
        drop(take_box::<Encoder>(enc)?);
        Ok(())
    })
}
