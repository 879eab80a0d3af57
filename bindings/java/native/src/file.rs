//! The file reader: open, facts, names, tensors and items, KV keys, destruction.
//! Java holds a `HurrayFileReader`; everything here goes through its Rust face.

use std::path::Path;
use std::ptr;

use hurray_ffi::ReadOptions;
use hurray_ffi::{DataCrc, FfiError, HurrayFileReader, HURRAY_ERR_NOT_FOUND};
use jni::objects::{JClass, JObject, JString, JValue};
use jni::sys::{jboolean, jlong, jobject};
use jni::JNIEnv;

use crate::convert::string;
use crate::errors::{checked, run, Fail, R};
use crate::handle::{borrow, into_long, take};

/// `TensorFile` calls the reader from many threads at once through shared borrows
/// (the Java contract in `handle`): it must be `Sync`.
const _: fn() = || {
    fn shared_between_threads<T: Sync>() {}
    shared_between_threads::<HurrayFileReader>();
};

/// The reader behind a Java handle (a shared borrow: see `handle`, point 2).
pub(crate) fn reader<'a>(r: jlong) -> R<&'a HurrayFileReader> {
    borrow::<HurrayFileReader>(r)
}

/// `HURRAY_ERR_NOT_FOUND` for a KV key the file lacks.
pub(crate) fn no_key(key: &str) -> Fail {
    FfiError::new(
        HURRAY_ERR_NOT_FOUND,
        format!("the file has no KV entry named {key:?}"),
    )
    .into()
}

/// `Native.fileOpen(String path)`: maps and validates the file. Every error's message
/// starts with the path.
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_fileOpen<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass,
    path: JString<'l>,
) -> jlong {
    run(&mut env, 0, |env| {
        let path = string(env, &path)?;
        let r = HurrayFileReader::open(Path::new(&path), &ReadOptions::default())
            .map_err(checked(Some(&path)))?;
        Ok(into_long(r))
    })
}

/// `Native.fileInfo(long)`: the file facts as a `TensorFile.Info` record (its
/// canonical constructor; the index CRC-32C's bits as an `int`, a count hint of
/// `u64::MAX` (unknown) as -1).
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_fileInfo<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass,
    r: jlong,
) -> jobject {
    run(&mut env, ptr::null_mut(), |env| {
        let i = reader(r)?.info();
        let info = env.new_object(
            "dev/hurray/TensorFile$Info",
            "(IIZIIIJJJJ)V",
            &[
                JValue::Int(i32::from(i.version_major)),
                JValue::Int(i32::from(i.version_minor)),
                JValue::Bool(u8::from(i.crc_status == 1)),
                JValue::Int(i.flags as i32),
                JValue::Int(i.data_buffer_alignment as i32),
                JValue::Int(i.index_crc32c as i32),
                JValue::Long(i.tensor_count_hint as i64),
                JValue::Long(i.file_len as i64),
                JValue::Long(i.tensor_count as i64),
                JValue::Long(i.kv_count as i64),
            ],
        )?;
        Ok(info.into_raw())
    })
}

/// `Native.fileVerifyDataCrc32c(long)`: recomputes every tensor's data CRC-32C and
/// compares it with the file's `hurray.data_crc32c` entry (one pass over all data).
/// `true`: every tensor matched; `false`: the file records no data CRC. A mismatch
/// or a malformed entry is a `FormatException` (rule `DataCrcMismatch`, naming the
/// tensor and the byte offset of its data).
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_fileVerifyDataCrc32c(
    mut env: JNIEnv,
    _c: JClass,
    r: jlong,
) -> jboolean {
    run(&mut env, 0, |_| {
        Ok(match reader(r)?.verify_data_crc32c()? {
            DataCrc::Verified(_) => 1,
            DataCrc::Absent => 0,
        })
    })
}

/// A Java `String[]` of `n` names, `name(i)` for each `i`, in order.
fn names<'a>(env: &mut JNIEnv, n: u64, name: impl Fn(u64) -> R<&'a str>) -> R<jobject> {
    let len = i32::try_from(n).map_err(|_| Fail::Arg("too many names for Java".into()))?;
    // Straight into the Java array, one local reference at a time.
    let a = env.new_object_array(len, "java/lang/String", JObject::null())?;
    for i in 0..n {
        let s = env.new_string(name(i)?)?;
        env.set_object_array_element(&a, i as i32, &s)?;
        env.delete_local_ref(s)?;
    }
    Ok(a.into_raw())
}

/// `Native.fileNames(long)`: the tensor names, in index order.
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_fileNames<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass,
    r: jlong,
) -> jobject {
    run(&mut env, ptr::null_mut(), |env| {
        let r = reader(r)?;
        names(env, r.tensor_count(), |i| Ok(r.tensor_name(i)?))
    })
}

/// `Native.fileTensor(long, String)`: the named tensor (owned), a zero-copy view of
/// the private mapping that keeps the mapping alive after the reader is destroyed.
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_fileTensor<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass,
    r: jlong,
    name: JString<'l>,
) -> jlong {
    run(&mut env, 0, |env| {
        let name = string(env, &name)?;
        Ok(into_long(reader(r)?.tensor(&name)?))
    })
}

/// `Native.fileKvKeys(long)`: the KV keys, in file order.
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_fileKvKeys<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass,
    r: jlong,
) -> jobject {
    run(&mut env, ptr::null_mut(), |env| {
        let r = reader(r)?;
        names(env, r.kv_count(), |i| Ok(r.kv_key(i)?))
    })
}

/// `Native.fileDestroy(long)`: tensors it returned stay valid (they hold the mapping).
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_fileDestroy(mut env: JNIEnv, _c: JClass, r: jlong) {
    run(&mut env, (), |_| {
        drop(take::<HurrayFileReader>(r)?);
        Ok(())
    })
}

/// `Native.fileItem(long, String)`: the named item (owned); composites assembled.
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_fileItem<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass,
    r: jlong,
    name: JString<'l>,
) -> jlong {
    run(&mut env, 0, |env| {
        let name = string(env, &name)?;
        Ok(into_long(reader(r)?.item(&name)?))
    })
}
