//! The file writer: create, write tensors and items, add KV entries, finish.

use std::ffi::c_char;
use std::ptr;

use hurray_ffi::file::{
    hurray_file_writer_add_kv_array_bool, hurray_file_writer_add_kv_array_bytes,
    hurray_file_writer_add_kv_array_float64, hurray_file_writer_add_kv_array_int64,
    hurray_file_writer_add_kv_array_string, hurray_file_writer_add_kv_array_uint64,
    hurray_file_writer_add_kv_bool, hurray_file_writer_add_kv_bytes,
    hurray_file_writer_add_kv_float64, hurray_file_writer_add_kv_int64,
    hurray_file_writer_add_kv_string, hurray_file_writer_add_kv_uint64, hurray_file_writer_create,
    hurray_file_writer_destroy, hurray_file_writer_finish, hurray_file_writer_write_item,
    hurray_file_writer_write_tensor, hurray_write_options_default,
};
use hurray_ffi::{HurrayFileWriter, HurrayTensor, HurrayWriteOptions};
use jni::objects::{JByteArray, JClass, JDoubleArray, JLongArray, JObject, JObjectArray, JString};
use jni::sys::{jboolean, jdouble, jint, jlong};
use jni::JNIEnv;

use crate::convert::{bytes, cstring, longs, string};
use crate::errors::{ck, run, Fail};
use crate::handle::destroy;
use crate::item::item;

fn writer(w: jlong) -> *mut HurrayFileWriter {
    w as *mut HurrayFileWriter
}

/// `Native.writerCreate(String path, int alignment, boolean durable, boolean sorted)`:
/// a writer over a temporary file beside `path` (`alignment` 0: the default).
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_writerCreate<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass,
    path: JString<'l>,
    alignment: jint,
    durable: jboolean,
    sorted: jboolean,
) -> jlong {
    run(&mut env, 0, |env| {
        let path = cstring(env, &path)?;
        let mut o = std::mem::MaybeUninit::<HurrayWriteOptions>::uninit();
        // SAFETY: o writable.
        ck(unsafe { hurray_write_options_default(o.as_mut_ptr()) })?;
        // SAFETY: written on success.
        let mut o = unsafe { o.assume_init() };
        if alignment > 0 {
            o.data_buffer_alignment = alignment as u32;
        }
        o.durable = u8::from(durable != 0);
        o.sorted_index = u8::from(sorted != 0);
        let mut w: *mut HurrayFileWriter = ptr::null_mut();
        // SAFETY: path NUL-terminated; o readable; w writable.
        ck(unsafe { hurray_file_writer_create(path.as_ptr(), &o, &mut w) })?;
        Ok(w as jlong)
    })
}

/// `Native.writerWriteTensor(long, String, long tensor)`: the buffers are read during
/// the call; the tensor stays the caller's.
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_writerWriteTensor<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass,
    w: jlong,
    name: JString<'l>,
    t: jlong,
) {
    run(&mut env, (), |env| {
        let name = cstring(env, &name)?;
        // SAFETY: w a live writer; name NUL-terminated; t a live tensor.
        ck(unsafe {
            hurray_file_writer_write_tensor(writer(w), name.as_ptr(), t as *const HurrayTensor)
        })
    })
}

/// `Native.writerAddKv(long, String key, Object value)`: one KV entry; the value's
/// Java class picks the type: `String`, `Long`/`Integer` (int64), `BigInteger`
/// (uint64), `Double`/`Float` (float64), `Boolean`, `byte[]`, `long[]`, `double[]`,
/// `boolean[]`, `String[]`.
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_writerAddKv<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass,
    w: jlong,
    key: JString<'l>,
    value: JObject<'l>,
) {
    run(&mut env, (), |env| {
        let k = cstring(env, &key)?;
        let w = writer(w);
        let k = k.as_ptr();
        if value.is_null() {
            return Err(Fail::Arg("a KV value is null".into()));
        }
        let is = |env: &mut JNIEnv<'l>, class: &str| env.is_instance_of(&value, class);
        if is(env, "java/lang/String")? {
            let v = cstring(env, &JString::from(value))?;
            // SAFETY: w live; k and v NUL-terminated.
            return ck(unsafe { hurray_file_writer_add_kv_string(w, k, v.as_ptr()) });
        }
        if is(env, "java/lang/Long")? || is(env, "java/lang/Integer")? {
            let v = env.call_method(&value, "longValue", "()J", &[])?.j()?;
            // SAFETY: w live; k NUL-terminated.
            return ck(unsafe { hurray_file_writer_add_kv_int64(w, k, v) });
        }
        if is(env, "java/math/BigInteger")? {
            let s = env
                .call_method(&value, "toString", "()Ljava/lang/String;", &[])?
                .l()?;
            let s = string(env, &JString::from(s))?;
            let v: u64 = s
                .parse()
                .map_err(|_| Fail::Arg(format!("{s} is not a uint64")))?;
            // SAFETY: w live; k NUL-terminated.
            return ck(unsafe { hurray_file_writer_add_kv_uint64(w, k, v) });
        }
        if is(env, "java/lang/Double")? || is(env, "java/lang/Float")? {
            let v: jdouble = env.call_method(&value, "doubleValue", "()D", &[])?.d()?;
            // SAFETY: w live; k NUL-terminated.
            return ck(unsafe { hurray_file_writer_add_kv_float64(w, k, v) });
        }
        if is(env, "java/lang/Boolean")? {
            let v = env.call_method(&value, "booleanValue", "()Z", &[])?.z()?;
            // SAFETY: w live; k NUL-terminated.
            return ck(unsafe { hurray_file_writer_add_kv_bool(w, k, u8::from(v)) });
        }
        if is(env, "[B")? {
            let v = env.convert_byte_array(JByteArray::from(value))?;
            // SAFETY: w live; k NUL-terminated; v readable.
            return ck(unsafe {
                hurray_file_writer_add_kv_bytes(w, k, v.as_ptr(), v.len() as u64)
            });
        }
        if is(env, "[J")? {
            let v = longs(env, &JLongArray::from(value))?;
            // SAFETY: w live; k NUL-terminated; v readable.
            return ck(unsafe {
                hurray_file_writer_add_kv_array_int64(w, k, v.as_ptr(), v.len() as u64)
            });
        }
        if is(env, "[D")? {
            let a = JDoubleArray::from(value);
            let n = env.get_array_length(&a)? as usize;
            let mut v = vec![0f64; n];
            env.get_double_array_region(&a, 0, &mut v)?;
            // SAFETY: w live; k NUL-terminated; v readable.
            return ck(unsafe {
                hurray_file_writer_add_kv_array_float64(w, k, v.as_ptr(), v.len() as u64)
            });
        }
        if is(env, "[Z")? {
            let a = jni::objects::JBooleanArray::from(value);
            let n = env.get_array_length(&a)? as usize;
            let mut v = vec![0u8; n];
            env.get_boolean_array_region(&a, 0, &mut v)?;
            // SAFETY: w live; k NUL-terminated; v readable.
            return ck(unsafe {
                hurray_file_writer_add_kv_array_bool(w, k, v.as_ptr(), v.len() as u64)
            });
        }
        if is(env, "[Ljava/math/BigInteger;")? {
            let a = JObjectArray::from(value);
            let n = env.get_array_length(&a)?;
            let mut v = Vec::with_capacity(n as usize);
            for i in 0..n {
                let b = env.get_object_array_element(&a, i)?;
                if b.is_null() {
                    return Err(Fail::Arg(format!("element {i} is null")));
                }
                let s = env
                    .call_method(&b, "toString", "()Ljava/lang/String;", &[])?
                    .l()?;
                let s = JString::from(s);
                let text = string(env, &s)?;
                env.delete_local_ref(s)?;
                env.delete_local_ref(b)?;
                v.push(
                    text.parse::<u64>()
                        .map_err(|_| Fail::Arg(format!("{text} is not a uint64")))?,
                );
            }
            // SAFETY: w live; k NUL-terminated; v readable.
            return ck(unsafe {
                hurray_file_writer_add_kv_array_uint64(w, k, v.as_ptr(), v.len() as u64)
            });
        }
        if is(env, "[[B")? {
            let a = JObjectArray::from(value);
            let n = env.get_array_length(&a)?;
            let mut owned = Vec::with_capacity(n as usize);
            for i in 0..n {
                let b = JByteArray::from(env.get_object_array_element(&a, i)?);
                owned.push(bytes(env, &b)?);
                env.delete_local_ref(b)?;
            }
            let ptrs: Vec<*const u8> = owned.iter().map(|b| b.as_ptr()).collect();
            let lens: Vec<u64> = owned.iter().map(|b| b.len() as u64).collect();
            // SAFETY: w live; k NUL-terminated; ptrs/lens describe n readable byte
            // strings that outlive the call.
            return ck(unsafe {
                hurray_file_writer_add_kv_array_bytes(
                    w,
                    k,
                    ptrs.as_ptr(),
                    lens.as_ptr(),
                    ptrs.len() as u64,
                )
            });
        }
        if is(env, "[Ljava/lang/String;")? {
            let a = JObjectArray::from(value);
            let n = env.get_array_length(&a)?;
            let mut owned = Vec::with_capacity(n as usize);
            for i in 0..n {
                let s = JString::from(env.get_object_array_element(&a, i)?);
                owned.push(cstring(env, &s)?);
                env.delete_local_ref(s)?;
            }
            let ptrs: Vec<*const c_char> = owned.iter().map(|s| s.as_ptr()).collect();
            // SAFETY: w live; k NUL-terminated; ptrs holds n NUL-terminated strings
            // that outlive the call.
            return ck(unsafe {
                hurray_file_writer_add_kv_array_string(w, k, ptrs.as_ptr(), ptrs.len() as u64)
            });
        }
        Err(Fail::Arg(
            "unsupported KV value type (String, Long, Integer, BigInteger, Double, Float, \
             Boolean, byte[], long[], BigInteger[], double[], boolean[], String[], byte[][])"
                .into(),
        ))
    })
}

/// `Native.writerFinish(long)`: writes index and trailer, renames into place.
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_writerFinish(mut env: JNIEnv, _c: JClass, w: jlong) {
    run(&mut env, (), |_| {
        // SAFETY: w is a live writer.
        ck(unsafe { hurray_file_writer_finish(writer(w)) })
    })
}

/// `Native.writerDestroy(long)`: an unfinished writer removes its temporary file.
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_writerDestroy(mut env: JNIEnv, _c: JClass, w: jlong) {
    // SAFETY: the Java side destroys each writer exactly once.
    unsafe { destroy(&mut env, w, hurray_file_writer_destroy) }
}

/// `Native.writerWriteItem(long, String, long item)`: the item stays the caller's.
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_writerWriteItem<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass,
    w: jlong,
    name: JString<'l>,
    it: jlong,
) {
    run(&mut env, (), |env| {
        let name = cstring(env, &name)?;
        // SAFETY: w a live writer; name NUL-terminated; it a live item.
        ck(unsafe { hurray_file_writer_write_item(writer(w), name.as_ptr(), item(it)) })
    })
}
