//! The network client (`dev.hurray.NetClient`, docs/java.md "Network") over
//! hurray-ffi's `HurrayNetClient`: one blocking client per Java object.
//!
//! `HurrayNetClient` is `Sync` (its calls are serialised inside, and `cancel` may
//! run on any thread while another thread is inside a call), so these entry points
//! take only shared borrows, and `NetClient` lets several threads use one handle at
//! once: it holds a count on the handle for every call (its `NativeRef`), so
//! `close()` cancels a call in flight and the handle is destroyed only after the
//! last call returned (point 2 of the Java contract in `handle`, as for the file
//! reader).
//!
//! Errors: connect, get and put throw checked exceptions (`IOException`s for I/O
//! and timeouts, `NotFoundException` for an unknown key, ...) through the one
//! mapping in `errors`, which also sets `netCode` (the B.16 code).

use hurray_ffi::{
    HurrayItem, HurrayNetClient, HurrayNetClientOptions, HurrayTensor, NetGetOptions,
};
use jni::objects::{JByteArray, JClass, JString};
use jni::sys::{jboolean, jint, jlong, jlongArray};
use jni::JNIEnv;

use crate::convert::string;
use crate::errors::{checked, run, Fail, R};
use crate::handle::{borrow, into_long, take};

const _: () = {
    const fn sync<T: Sync>() {}
    sync::<HurrayNetClient>();
};

fn client<'a>(c: jlong) -> R<&'a HurrayNetClient> {
    borrow::<HurrayNetClient>(c)
}

/// A non-negative Java `int` or `long` as an unsigned option.
fn unsigned<T: TryFrom<i64>>(v: i64, what: &str) -> R<T> {
    T::try_from(v).map_err(|_| Fail::Arg(format!("{what} {v} is negative or too large")))
}

/// `Native.netClientNew(int connectMs, int ioMs, int callMs, int maxMessageSize,
/// long maxItemBytes)`: a client, not connected (times in ms, 0: no limit).
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_netClientNew(
    mut env: JNIEnv,
    _c: JClass,
    connect_ms: jint,
    io_ms: jint,
    call_ms: jint,
    max_message_size: jint,
    max_item_bytes: jlong,
) -> jlong {
    run(&mut env, 0, |_| {
        let opts = HurrayNetClientOptions {
            connect_timeout_ms: unsigned(i64::from(connect_ms), "connectTimeoutMillis")?,
            io_timeout_ms: unsigned(i64::from(io_ms), "ioTimeoutMillis")?,
            call_timeout_ms: unsigned(i64::from(call_ms), "callTimeoutMillis")?,
            max_message_size: unsigned(i64::from(max_message_size), "maxMessageSize")?,
            max_item_bytes: unsigned(max_item_bytes, "maxItemBytes")?,
        };
        Ok(into_long(HurrayNetClient::new(opts)?))
    })
}

/// `Native.netConnect(long client, String host, int port)`: connects and does the
/// handshake (B.7).
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_netConnect<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass,
    c: jlong,
    host: JString<'l>,
    port: jint,
) {
    run(&mut env, (), |env| {
        let host = string(env, &host)?;
        let port: u16 = unsigned(i64::from(port), "port")?;
        client(c)?.connect(&host, port).map_err(checked(None))
    })
}

/// `Native.netGet(long client, String key, byte[] layouts, int alignment, boolean
/// transcode, boolean parallel)`: the item under `key` (owned); `layouts` may be
/// null, `alignment` 0 means the default.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub extern "system" fn Java_dev_hurray_Native_netGet<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass,
    c: jlong,
    key: JString<'l>,
    layouts: JByteArray<'l>,
    alignment: jint,
    transcode: jboolean,
    parallel: jboolean,
) -> jlong {
    run(&mut env, 0, |env| {
        let key = string(env, &key)?;
        let mut opts = NetGetOptions::default();
        if !layouts.is_null() {
            opts.preferred_layouts = env.convert_byte_array(&layouts)?;
        }
        if alignment != 0 {
            opts.min_alignment = unsigned(i64::from(alignment), "alignment")?;
        }
        opts.allow_transcode = transcode != 0;
        opts.parallel = parallel != 0;
        let item = client(c)?.get(&key, &opts).map_err(checked(None))?;
        Ok(into_long(item))
    })
}

/// `Native.netPutTensor(long client, String key, long tensor)`: puts a tensor
/// (borrowed) and waits for the acknowledgement.
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_netPutTensor<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass,
    c: jlong,
    key: JString<'l>,
    tensor: jlong,
) {
    run(&mut env, (), |env| {
        let key = string(env, &key)?;
        let t = borrow::<HurrayTensor>(tensor)?;
        client(c)?.put_tensor(&key, t).map_err(checked(None))
    })
}

/// `Native.netPutItem(long client, String key, long item)`: puts an item (a tensor
/// or a whole composite, borrowed).
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_netPutItem<'l>(
    mut env: JNIEnv<'l>,
    _c: JClass,
    c: jlong,
    key: JString<'l>,
    item: jlong,
) {
    run(&mut env, (), |env| {
        let key = string(env, &key)?;
        let it = borrow::<HurrayItem>(item)?;
        client(c)?.put(&key, it).map_err(checked(None))
    })
}

/// `Native.netCancel(long client)`: cancels the call in flight (any thread) and
/// every later call.
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_netCancel(mut env: JNIEnv, _c: JClass, c: jlong) {
    run(&mut env, (), |_| {
        client(c)?.cancel();
        Ok(())
    })
}

/// `Native.netServerInfo(long client)`: `{protocol_version, max_message_size,
/// capability_flags}`.
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_netServerInfo(
    mut env: JNIEnv,
    _c: JClass,
    c: jlong,
) -> jlongArray {
    run(&mut env, std::ptr::null_mut(), |env| {
        let i = client(c)?.server_info()?;
        let v = [
            jlong::from(i.protocol_version),
            jlong::from(i.max_message_size),
            i.capability_flags as jlong,
        ];
        let a = env.new_long_array(3)?;
        env.set_long_array_region(&a, 0, &v)?;
        Ok(a.into_raw())
    })
}

/// `Native.netClientDestroy(long client)`: closes the connection and frees the
/// client (no call may be in flight: `NetClient` waits for them).
#[no_mangle]
pub extern "system" fn Java_dev_hurray_Native_netClientDestroy(
    mut env: JNIEnv,
    _c: JClass,
    c: jlong,
) {
    run(&mut env, (), |_| {
        drop(take::<HurrayNetClient>(c)?);
        Ok(())
    })
}
