//! The file writer: create, write tensors and items, add KV entries, finish. Java
//! holds a `HurrayFileWriter`; everything here goes through its Rust face.

use std::path::Path;

use hurray_ffi::{HurrayFileWriter, HurrayWriteOptions};
use hurray_ffi::{KvArray, KvValue};
use jni::objects::{
    JBooleanArray, JByteArray, JClass, JDoubleArray, JLongArray, JObject, JObjectArray, JString,
};
use jni::sys::{jboolean, jint, jlong};
use jni::JNIEnv;

use crate::convert::{bytes, longs, string};
use crate::errors::{checked, run, Fail, R};
use crate::handle::{borrow_mut, into_long, take};
use crate::item::item_ref;
use crate::tensor::tensor_ref;

/// The writer behind a Java handle (see the Java contract in `handle`).
fn writer<'a>(w: jlong) -> R<&'a mut HurrayFileWriter> {
    borrow_mut::<HurrayFileWriter>(w)
}

/// `Native.writerCreate(String path, int alignment, boolean durable, boolean sorted,
/// boolean dataCrc32c)`: a writer over a temporary file beside `path` (`alignment` 0:
/// the default; `dataCrc32c`: record each tensor's data CRC-32C in the reserved KV
/// entry `hurray.data_crc32c` when finishing). Every error's message starts with the
/// path.
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_writerCreate<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass,
    path: JString<'l>,
    alignment: jint,
    durable: jboolean,
    sorted: jboolean,
    data_crc32c: jboolean,
) -> jlong {
    run(&mut env, 0, |env| {
        let path = string(env, &path)?;
        let mut o = HurrayWriteOptions::default();
        if alignment > 0 {
            o.data_buffer_alignment = alignment as u32;
        }
        o.durable = u8::from(durable != 0);
        o.sorted_index = u8::from(sorted != 0);
        o.data_crc32c = u8::from(data_crc32c != 0);
        let w = HurrayFileWriter::create(Path::new(&path), &o).map_err(checked(Some(&path)))?;
        Ok(into_long(w))
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
        let name = string(env, &name)?;
        let (w, t) = (writer(w)?, tensor_ref(t)?);
        w.write_tensor(&name, t).map_err(checked(None))
    })
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
        let name = string(env, &name)?;
        let (w, it) = (writer(w)?, item_ref(it)?);
        w.write_item(&name, it).map_err(checked(None))
    })
}

/// The elements of a Java object array, each converted by `f`.
fn objects<'l, T>(
    env: &mut JNIEnv<'l>,
    value: JObject<'l>,
    mut f: impl FnMut(&mut JNIEnv<'l>, JObject<'l>, i32) -> R<T>,
) -> R<Vec<T>> {
    let a = JObjectArray::from(value);
    let n = env.get_array_length(&a)?;
    let mut v = Vec::with_capacity(n as usize);
    for i in 0..n {
        let o = env.get_object_array_element(&a, i)?;
        if o.is_null() {
            return Err(Fail::Arg(format!("element {i} is null")));
        }
        v.push(f(env, o, i)?);
    }
    Ok(v)
}

/// A `java.math.BigInteger` as a u64.
fn uint64(env: &mut JNIEnv, b: &JObject) -> R<u64> {
    let s = env
        .call_method(b, "toString", "()Ljava/lang/String;", &[])?
        .l()?;
    let s = JString::from(s);
    let text = string(env, &s)?;
    env.delete_local_ref(s)?;
    text.parse::<u64>()
        .map_err(|_| Fail::Arg(format!("{text} is not a uint64")))
}

/// The KV value of a Java object; its class picks the type.
fn kv_value<'l>(env: &mut JNIEnv<'l>, value: JObject<'l>) -> R<KvValue> {
    if value.is_null() {
        return Err(Fail::Arg("a KV value is null".into()));
    }
    let is = |env: &mut JNIEnv<'l>, class: &str| env.is_instance_of(&value, class);
    if is(env, "java/lang/String")? {
        return Ok(KvValue::String(string(env, &JString::from(value))?));
    }
    if is(env, "java/lang/Long")? || is(env, "java/lang/Integer")? {
        return Ok(KvValue::Int64(
            env.call_method(&value, "longValue", "()J", &[])?.j()?,
        ));
    }
    if is(env, "java/math/BigInteger")? {
        return Ok(KvValue::UInt64(uint64(env, &value)?));
    }
    if is(env, "java/lang/Double")? || is(env, "java/lang/Float")? {
        return Ok(KvValue::Float64(
            env.call_method(&value, "doubleValue", "()D", &[])?.d()?,
        ));
    }
    if is(env, "java/lang/Boolean")? {
        return Ok(KvValue::Bool(
            env.call_method(&value, "booleanValue", "()Z", &[])?.z()?,
        ));
    }
    if is(env, "[B")? {
        return Ok(KvValue::Bytes(bytes(env, &JByteArray::from(value))?));
    }
    let array = if is(env, "[J")? {
        KvArray::Int64(longs(env, &JLongArray::from(value))?)
    } else if is(env, "[D")? {
        let a = JDoubleArray::from(value);
        let mut v = vec![0f64; env.get_array_length(&a)? as usize];
        env.get_double_array_region(&a, 0, &mut v)?;
        KvArray::Float64(v)
    } else if is(env, "[Z")? {
        let a = JBooleanArray::from(value);
        let mut v = vec![0u8; env.get_array_length(&a)? as usize];
        env.get_boolean_array_region(&a, 0, &mut v)?;
        KvArray::Bool(v.into_iter().map(|b| b != 0).collect())
    } else if is(env, "[Ljava/math/BigInteger;")? {
        KvArray::UInt64(objects(env, value, |env, b, _| {
            let v = uint64(env, &b)?;
            env.delete_local_ref(b)?;
            Ok(v)
        })?)
    } else if is(env, "[[B")? {
        KvArray::Bytes(objects(env, value, |env, b, _| {
            let b = JByteArray::from(b);
            let v = bytes(env, &b)?;
            env.delete_local_ref(b)?;
            Ok(v)
        })?)
    } else if is(env, "[Ljava/lang/String;")? {
        KvArray::String(objects(env, value, |env, s, _| {
            let s = JString::from(s);
            let v = string(env, &s)?;
            env.delete_local_ref(s)?;
            Ok(v)
        })?)
    } else {
        return Err(Fail::Arg(
            "unsupported KV value type (String, Long, Integer, BigInteger, Double, Float, \
             Boolean, byte[], long[], BigInteger[], double[], boolean[], String[], byte[][])"
                .into(),
        ));
    };
    Ok(KvValue::Array(array))
}

/// `Native.writerAddKv(long, String key, Object value)`: one KV entry; the value's
/// Java class picks the type: `String`, `Long`/`Integer` (int64), `BigInteger`
/// (uint64), `Double`/`Float` (float64), `Boolean`, `byte[]`, `long[]`, `double[]`,
/// `boolean[]`, `BigInteger[]`, `String[]`, `byte[][]`.
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_writerAddKv<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass,
    w: jlong,
    key: JString<'l>,
    value: JObject<'l>,
) {
    run(&mut env, (), |env| {
        let key = string(env, &key)?;
        let value = kv_value(env, value)?;
        Ok(writer(w)?.add_kv(&key, value)?)
    })
}

/// `Native.writerFinish(long)`: writes index and trailer, renames into place.
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_writerFinish(mut env: JNIEnv, _c: JClass, w: jlong) {
    run(&mut env, (), |_| writer(w)?.finish().map_err(checked(None)))
}

/// `Native.writerDestroy(long)`: an unfinished writer removes its temporary file.
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_writerDestroy(mut env: JNIEnv, _c: JClass, w: jlong) {
    run(&mut env, (), |_| {
        drop(take::<HurrayFileWriter>(w)?);
        Ok(())
    })
}
