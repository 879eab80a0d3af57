//! The file reader: open, facts, names, tensors and items, KV keys, destruction.
//! Java holds a `HurrayFileReader` (the library's handle over a mapped
//! `hurray_io::FileReader`); everything here reads through its Rust face.

use std::ptr;

use hurray_ffi::file::{HURRAY_COUNT_UNKNOWN, HURRAY_CRC_ABSENT, HURRAY_CRC_VERIFIED};
use hurray_ffi::{
    FfiError, HurrayFileReader, HurrayItem, HurrayTensor, HURRAY_ERR_INVALID_ARGUMENT,
    HURRAY_ERR_NOT_FOUND,
};
use hurray_io::file::CrcStatus;
use hurray_io::FileReader;
use jni::objects::{JClass, JObject, JString};
use jni::sys::{jlong, jlongArray, jobject};
use jni::JNIEnv;

use crate::convert::{new_longs, string};
use crate::errors::{run, Fail, R};
use crate::handle::{borrow, into_long, take};

/// Borrows the reader behind a Java handle.
///
/// # Safety
/// `r` must be a live reader handle Java holds, alive for `'a`.
pub(crate) unsafe fn reader<'a>(r: jlong) -> R<&'a FileReader> {
    // SAFETY: the caller's contract.
    Ok(unsafe { borrow::<HurrayFileReader>(r)? }.reader())
}

/// `HURRAY_ERR_NOT_FOUND` for a name the file lacks.
pub(crate) fn not_found(what: &str, name: &str) -> Fail {
    FfiError::new(
        HURRAY_ERR_NOT_FOUND,
        format!("the file has no {what} named {name:?}"),
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
        if path.is_empty() {
            return Err(FfiError::new(HURRAY_ERR_INVALID_ARGUMENT, "`path` is empty").into());
        }
        let r = FileReader::open(&path).map_err(|e| {
            let e = FfiError::from(e);
            FfiError::new(e.status, format!("{path}: {}", e.message))
        })?;
        Ok(into_long(HurrayFileReader::new(r)))
    })
}

/// `Native.fileInfo(long)`: the file facts, packed for `TensorFile.Info` (Java):
/// version major, minor, CRC status, flags, data alignment, index CRC-32C, count
/// hint (-1 unknown), file length, tensor count, KV count.
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_fileInfo<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass,
    r: jlong,
) -> jlongArray {
    run(&mut env, ptr::null_mut(), |env| {
        // SAFETY: Java passes a live reader.
        let r = unsafe { reader(r)? };
        let i = r.info();
        let (crc_status, index_crc32c) = match i.crc {
            CrcStatus::Verified(v) => (HURRAY_CRC_VERIFIED, v),
            CrcStatus::Absent => (HURRAY_CRC_ABSENT, i.trailer.index_crc32c),
        };
        let v = [
            i64::from(i.header.version_major),
            i64::from(i.header.version_minor),
            i64::from(crc_status),
            i64::from(i.flags()),
            i64::from(i.data_buffer_alignment()),
            i64::from(index_crc32c),
            i.tensor_count_hint().unwrap_or(HURRAY_COUNT_UNKNOWN) as i64,
            i.file_len as i64,
            r.len() as i64,
            r.kv().len() as i64,
        ];
        Ok(new_longs(env, &v)?.into_raw())
    })
}

/// A Java `String[]` of `n` names, in order.
fn names<'a>(env: &mut JNIEnv, n: usize, it: impl Iterator<Item = &'a str>) -> R<jobject> {
    let len = i32::try_from(n).map_err(|_| Fail::Arg("too many names for Java".into()))?;
    // Straight into the Java array, one local reference at a time.
    let a = env.new_object_array(len, "java/lang/String", JObject::null())?;
    for (i, name) in it.enumerate() {
        let s = env.new_string(name)?;
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
        // SAFETY: Java passes a live reader.
        let r = unsafe { reader(r)? };
        names(env, r.len(), r.names())
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
        // SAFETY: Java passes a live reader.
        let r = unsafe { reader(r)? };
        let t = r.tensor(&name).map_err(FfiError::from)?;
        let t = t.ok_or_else(|| not_found("tensor", &name))?;
        Ok(into_long(HurrayTensor::from_io(t)?))
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
        // SAFETY: Java passes a live reader.
        let kv = unsafe { reader(r)? }.kv();
        names(env, kv.len(), kv.iter().map(|e| e.key))
    })
}

/// `Native.fileDestroy(long)`: tensors it returned stay valid (they hold the mapping).
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_fileDestroy(mut env: JNIEnv, _c: JClass, r: jlong) {
    run(&mut env, (), |_| {
        // SAFETY: the Java side destroys each reader exactly once.
        drop(unsafe { take::<HurrayFileReader>(r)? });
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
        // SAFETY: Java passes a live reader.
        let r = unsafe { reader(r)? };
        let i = r.item(&name).map_err(FfiError::from)?;
        let i = i.ok_or_else(|| not_found("tensor", &name))?;
        Ok(into_long(HurrayItem::from_io(i)?))
    })
}
