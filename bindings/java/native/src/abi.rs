//! Library-level entry points: ABI versions, status names, debug counters and the
//! panic test hook.

use std::ptr;

use hurray_ffi::{live_objects, status_name, HURRAY_C_ABI_VERSION};
use jni::objects::JClass;
use jni::sys::{jint, jlong, jstring};
use jni::JNIEnv;

use crate::errors::{run, R};

/// `Native.abiVersion()`: the ABI version of the library linked in (the glue links
/// hurray-ffi statically, so it is the one it was built against).
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_abiVersion(_env: JNIEnv, _c: JClass) -> jint {
    HURRAY_C_ABI_VERSION as jint
}

/// `Native.headerAbiVersion()`: the `HURRAY_C_ABI_VERSION` this glue was built against.
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_headerAbiVersion(_env: JNIEnv, _c: JClass) -> jint {
    HURRAY_C_ABI_VERSION as jint
}

/// `Native.liveObjects()`: live handles of the library (`hurray_ffi::live_objects`).
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_liveObjects(_env: JNIEnv, _c: JClass) -> jlong {
    live_objects()
}

/// `Native.statusName(int)`: the status constant's C name.
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_statusName<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass,
    status: jint,
) -> jstring {
    run(&mut env, ptr::null_mut(), |env| {
        Ok(env.new_string(status_name(status))?.into_raw())
    })
}

/// `Native.deviceName(int)`: the lower-case name of a device tag (`"cuda"`,
/// `"rocm"`, ...; a private tag `"private"`), from the one table in hurray-core, or
/// `"unknown device <tag>"` for a reserved or invalid tag.
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_deviceName<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass,
    tag: jint,
) -> jstring {
    run(&mut env, ptr::null_mut(), |env| {
        let name = u8::try_from(tag)
            .ok()
            .and_then(hurray_core::DeviceTag::from_tag)
            .map_or_else(|| format!("unknown device {tag}"), |d| d.name().to_string());
        Ok(env.new_string(name)?.into_raw())
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
