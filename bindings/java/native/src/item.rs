//! Items: plain tensors and composites.
//!
//! The entry points that move a handle in (`itemFromTensor`, `itemCompositeNew`,
//! `itemCompositePush`) always consume it, on error too: the Java side gives up its
//! `long` before the call and never destroys it afterwards.

use hurray_ffi::{HurrayItem, HurrayTensor};
use jni::objects::JClass;
use jni::sys::{jboolean, jlong};
use jni::JNIEnv;

use crate::errors::{run, Fail, R};
use crate::handle::{borrow, borrow_mut, borrowed_long, into_long, take};

/// Borrows the item behind a Java handle (see the Java contract in `handle`).
pub(crate) fn item_ref<'a>(it: jlong) -> R<&'a HurrayItem> {
    borrow::<HurrayItem>(it)
}

/// `Native.itemFromTensor(long tensor)`: moves an owned tensor into a new plain item.
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_itemFromTensor(
    mut env: JNIEnv,
    _c: JClass,
    t: jlong,
) -> jlong {
    run(&mut env, 0, |_| {
        let t = take::<HurrayTensor>(t)?;
        Ok(into_long(HurrayItem::from_tensor(*t)?))
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
        let h = take::<HurrayTensor>(head)?;
        Ok(into_long(HurrayItem::composite(*h)?))
    })
}

/// `Native.itemCompositePush(long item, long member)`: moves an owned item in (a
/// refused member is destroyed).
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_itemCompositePush(
    mut env: JNIEnv,
    _c: JClass,
    it: jlong,
    member: jlong,
) {
    run(&mut env, (), |_| {
        let m = take::<HurrayItem>(member)?;
        let it = borrow_mut::<HurrayItem>(it)?;
        it.push(m).map_err(|(e, _refused)| Fail::from(e))
    })
}

/// `Native.itemIsComposite(long)`.
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_itemIsComposite(
    mut env: JNIEnv,
    _c: JClass,
    it: jlong,
) -> jboolean {
    run(&mut env, 0, |_| Ok(u8::from(item_ref(it)?.is_composite())))
}

/// `Native.itemTensor(long)`: the item's tensor (a composite's head), borrowed.
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_itemTensor(
    mut env: JNIEnv,
    _c: JClass,
    it: jlong,
) -> jlong {
    run(&mut env, 0, |_| {
        Ok(borrowed_long(item_ref(it)?.tensor_handle()))
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
        Ok(item_ref(it)?.members_iter().len() as jlong)
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
        let item = item_ref(it)?;
        let n = item.members_iter().len();
        let m = usize::try_from(i)
            .ok()
            .and_then(|i| item.members_iter().nth(i))
            .ok_or_else(|| {
                hurray_ffi::FfiError::new(
                    hurray_ffi::HURRAY_ERR_OUT_OF_RANGE,
                    format!("member {i} is past the item's {n} members"),
                )
            })?;
        Ok(borrowed_long(m))
    })
}

/// `Native.itemDestroy(long)`: frees an owned item with its tensor and members.
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_itemDestroy(mut env: JNIEnv, _c: JClass, it: jlong) {
    run(&mut env, (), |_| {
        drop(take::<HurrayItem>(it)?);
        Ok(())
    })
}
