//! The file reader: open, facts, names, tensors and items, KV keys, destruction.

use std::ffi::c_char;
use std::ptr;

use hurray_ffi::file::{
    hurray_file_reader_destroy, hurray_file_reader_info, hurray_file_reader_item,
    hurray_file_reader_kv_count, hurray_file_reader_kv_key, hurray_file_reader_open,
    hurray_file_reader_tensor, hurray_file_reader_tensor_count, hurray_file_reader_tensor_name,
};
use hurray_ffi::{HurrayFileInfo, HurrayFileReader, HurrayItem, HurrayStatus, HurrayTensor};
use jni::objects::{JClass, JObject, JString};
use jni::sys::{jlong, jlongArray, jobject};
use jni::JNIEnv;

use crate::convert::{borrowed_str, cstring, new_longs};
use crate::errors::{ck, run, Fail, R};
use crate::handle::destroy;

pub(crate) fn reader(r: jlong) -> *const HurrayFileReader {
    r as *const HurrayFileReader
}

/// `Native.fileOpen(String path)`: maps and validates the file.
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_fileOpen<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass,
    path: JString<'l>,
) -> jlong {
    run(&mut env, 0, |env| {
        let path = cstring(env, &path)?;
        let mut r: *mut HurrayFileReader = ptr::null_mut();
        // SAFETY: path is NUL-terminated; r writable.
        ck(unsafe { hurray_file_reader_open(path.as_ptr(), &mut r) })?;
        Ok(r as jlong)
    })
}

/// `Native.fileInfo(long)`: the file facts, packed for `FileReader.Info` (Java).
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_fileInfo<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass,
    r: jlong,
) -> jlongArray {
    run(&mut env, ptr::null_mut(), |env| {
        // SAFETY: HurrayFileInfo is plain integers: all-zero is a valid value.
        let mut i: HurrayFileInfo = unsafe { std::mem::zeroed() };
        // SAFETY: r is a live reader; i writable.
        ck(unsafe { hurray_file_reader_info(reader(r), &mut i) })?;
        let v = [
            i64::from(i.version_major),
            i64::from(i.version_minor),
            i64::from(i.crc_status),
            i64::from(i.flags),
            i64::from(i.data_buffer_alignment),
            i64::from(i.index_crc32c),
            i.tensor_count_hint as i64,
            i.file_len as i64,
            i.tensor_count as i64,
            i.kv_count as i64,
        ];
        Ok(new_longs(env, &v)?.into_raw())
    })
}

/// A reader's list of borrowed names (tensor names or KV keys), in order, as a Java
/// `String[]`: `count` gives the length, `name` entry `i`.
///
/// # Safety
/// `r` must be a live reader, and `count`/`name` a matching pair of the C ABI's
/// reader getters.
unsafe fn names(
    env: &mut JNIEnv,
    r: *const HurrayFileReader,
    count: unsafe extern "C" fn(*const HurrayFileReader, *mut u64) -> HurrayStatus,
    name: unsafe extern "C" fn(
        *const HurrayFileReader,
        u64,
        *mut *const c_char,
        *mut u64,
    ) -> HurrayStatus,
) -> R<jobject> {
    let mut n = 0u64;
    // SAFETY: r is a live reader; n writable.
    ck(unsafe { count(r, &mut n) })?;
    let len = i32::try_from(n).map_err(|_| Fail::Arg("too many names for Java".into()))?;
    // Straight into the Java array, one local reference at a time.
    let a = env.new_object_array(len, "java/lang/String", JObject::null())?;
    for i in 0..n {
        let (mut p, mut l) = (ptr::null::<c_char>(), 0u64);
        // SAFETY: r live; outs writable.
        ck(unsafe { name(r, i, &mut p, &mut l) })?;
        // SAFETY: a borrowed name of l bytes, valid while the reader lives.
        let s = unsafe { borrowed_str(env, p, l)? };
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
        // SAFETY: r is a live reader; the getters are the tensor-name pair.
        unsafe {
            names(
                env,
                reader(r),
                hurray_file_reader_tensor_count,
                hurray_file_reader_tensor_name,
            )
        }
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
        let name = cstring(env, &name)?;
        let mut t: *mut HurrayTensor = ptr::null_mut();
        // SAFETY: r live; name NUL-terminated; t writable.
        ck(unsafe { hurray_file_reader_tensor(reader(r), name.as_ptr(), &mut t) })?;
        Ok(t as jlong)
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
        // SAFETY: r is a live reader; the getters are the KV-key pair.
        unsafe {
            names(
                env,
                reader(r),
                hurray_file_reader_kv_count,
                hurray_file_reader_kv_key,
            )
        }
    })
}

/// `Native.fileDestroy(long)`: tensors it returned stay valid (they hold the mapping).
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_fileDestroy(mut env: JNIEnv, _c: JClass, r: jlong) {
    // SAFETY: the Java side destroys each reader exactly once.
    unsafe { destroy(&mut env, r, hurray_file_reader_destroy) }
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
        let name = cstring(env, &name)?;
        let mut it: *mut HurrayItem = ptr::null_mut();
        // SAFETY: r live; name NUL-terminated; it writable.
        ck(unsafe { hurray_file_reader_item(reader(r), name.as_ptr(), &mut it) })?;
        Ok(it as jlong)
    })
}
