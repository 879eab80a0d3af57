//! Items: plain tensors and composites.

use std::ptr;

use hurray_ffi::item::{
    hurray_item_composite_new, hurray_item_composite_push, hurray_item_destroy,
    hurray_item_from_tensor, hurray_item_is_composite, hurray_item_member,
    hurray_item_member_count, hurray_item_tensor,
};
use hurray_ffi::{HurrayItem, HurrayTensor};
use jni::objects::JClass;
use jni::sys::{jboolean, jlong};
use jni::JNIEnv;

use crate::errors::{ck, run};
use crate::handle::destroy;

pub(crate) fn item(i: jlong) -> *mut HurrayItem {
    i as *mut HurrayItem
}

/// `Native.itemFromTensor(long tensor)`: moves an owned tensor into a new plain item.
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_itemFromTensor(
    mut env: JNIEnv,
    _c: JClass,
    t: jlong,
) -> jlong {
    run(&mut env, 0, |_| {
        let mut t = t as *mut HurrayTensor;
        let mut out: *mut HurrayItem = ptr::null_mut();
        // SAFETY: t is an owned tensor the Java side hands over (moved on success
        // only); out writable.
        ck(unsafe { hurray_item_from_tensor(&mut t, &mut out) })?;
        Ok(out as jlong)
    })
}

/// `Native.itemCompositeNew(long head)`: moves an owned head tensor into a new
/// composite item with no members yet.
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_itemCompositeNew(
    mut env: JNIEnv,
    _c: JClass,
    head: jlong,
) -> jlong {
    run(&mut env, 0, |_| {
        let mut h = head as *mut HurrayTensor;
        let mut out: *mut HurrayItem = ptr::null_mut();
        // SAFETY: h is an owned tensor (moved on success only); out writable.
        ck(unsafe { hurray_item_composite_new(&mut h, &mut out) })?;
        Ok(out as jlong)
    })
}

/// `Native.itemCompositePush(long item, long member)`: moves an owned item in.
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_itemCompositePush(
    mut env: JNIEnv,
    _c: JClass,
    it: jlong,
    member: jlong,
) {
    run(&mut env, (), |_| {
        let mut m = item(member);
        // SAFETY: it a live composite; m an owned item (moved on success only).
        ck(unsafe { hurray_item_composite_push(item(it), &mut m) })
    })
}

/// `Native.itemIsComposite(long)`.
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_itemIsComposite(
    mut env: JNIEnv,
    _c: JClass,
    it: jlong,
) -> jboolean {
    run(&mut env, 0, |_| {
        let mut v = 0u8;
        // SAFETY: it a live item; v writable.
        ck(unsafe { hurray_item_is_composite(item(it), &mut v) })?;
        Ok(v)
    })
}

/// `Native.itemTensor(long)`: the item's tensor (a composite's head), borrowed.
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_itemTensor(
    mut env: JNIEnv,
    _c: JClass,
    it: jlong,
) -> jlong {
    run(&mut env, 0, |_| {
        let mut t: *const HurrayTensor = ptr::null();
        // SAFETY: it a live item; t writable (borrowed result).
        ck(unsafe { hurray_item_tensor(item(it), &mut t) })?;
        Ok(t as jlong)
    })
}

/// `Native.itemMemberCount(long)`.
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_itemMemberCount(
    mut env: JNIEnv,
    _c: JClass,
    it: jlong,
) -> jlong {
    run(&mut env, 0, |_| {
        let mut n = 0u64;
        // SAFETY: it a live item; n writable.
        ck(unsafe { hurray_item_member_count(item(it), &mut n) })?;
        Ok(n as jlong)
    })
}

/// `Native.itemMember(long, long)`: member `i`, borrowed.
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_itemMember(
    mut env: JNIEnv,
    _c: JClass,
    it: jlong,
    i: jlong,
) -> jlong {
    run(&mut env, 0, |_| {
        let mut m: *const HurrayItem = ptr::null();
        // SAFETY: it a live item; m writable (borrowed result).
        ck(unsafe { hurray_item_member(item(it), i as u64, &mut m) })?;
        Ok(m as jlong)
    })
}

/// `Native.itemDestroy(long)`.
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_itemDestroy(mut env: JNIEnv, _c: JClass, it: jlong) {
    // SAFETY: the Java side destroys each owned item exactly once.
    unsafe { destroy(&mut env, it, hurray_item_destroy) }
}
