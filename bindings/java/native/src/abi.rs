//! Library-level entry points: ABI versions, status names, debug counters and the
//! panic test hook.

use std::ffi::CStr;
use std::ptr;

use hurray_ffi::abi::{hurray_c_abi_version, hurray_debug_live_objects};
use hurray_ffi::HURRAY_C_ABI_VERSION;
use jni::objects::JClass;
use jni::sys::{jint, jlong, jstring};
use jni::JNIEnv;

use crate::errors::{run, R};

/// `Native.abiVersion()`: `hurray_c_abi_version()`.
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_abiVersion(_env: JNIEnv, _c: JClass) -> jint {
    hurray_c_abi_version() as jint
}

/// `Native.headerAbiVersion()`: the `HURRAY_C_ABI_VERSION` this glue was built against.
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_headerAbiVersion(_env: JNIEnv, _c: JClass) -> jint {
    HURRAY_C_ABI_VERSION as jint
}

/// `Native.liveObjects()`: `hurray_debug_live_objects()`.
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_liveObjects(_env: JNIEnv, _c: JClass) -> jlong {
    hurray_debug_live_objects()
}

/// `Native.statusName(int)`: `hurray_status_name`.
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_statusName<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass,
    status: jint,
) -> jstring {
    run(&mut env, ptr::null_mut(), |env| {
        let p = hurray_ffi::abi::hurray_status_name(status);
        // SAFETY: hurray_status_name returns a static NUL-terminated string.
        let s = unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned();
        Ok(env.new_string(s)?.into_raw())
    })
}

/// `Native.debugPanic()`: panics inside this crate's boundary (test hook: proves a
/// panic becomes a `HurrayException` with `HURRAY_ERR_INTERNAL_PANIC`).
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_debugPanic(mut env: JNIEnv, _c: JClass) {
    run(&mut env, (), |_| -> R<()> {
        panic!("Native.debugPanic was called")
    })
}
