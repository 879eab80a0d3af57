//! The safe Rust face (`hurray_ffi::raw` and the handle methods): what binding
//! crates use instead of the `hurray_*` exports.

mod common;

use common::*;
use hurray_core::{DeviceTag, ElementType, MemoryClass, SyncMode, TensorDescriptor};
use hurray_ffi::*;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// A dense float32 tensor of `[4]` over 64-byte-aligned library memory.
fn f32_tensor(values: [f32; 4]) -> HurrayTensor {
    let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    let d = TensorDescriptor::dense(ElementType::Float32, &[4]).unwrap();
    let d = HurrayDescriptor::new(Arc::new(d)).unwrap();
    let b = HurrayBuffer::host(hurray_io::Buffer::copy_from(&bytes), Placement::cpu(64));
    HurrayTensor::new(d, vec![Box::new(b)], None).unwrap()
}

#[test]
fn into_raw_borrow_take_round_trip() {
    let _l = live();
    let p = raw::into_raw(f32_tensor([1.0, 2.0, 3.0, 4.5]));
    // SAFETY: p is live until the take below.
    let t = unsafe { raw::borrow(p) }.unwrap();
    assert_eq!(t.model().shape, vec![4]);
    let b = t.buffer_list().buffers().next().unwrap();
    assert_eq!(&b.bytes().unwrap()[12..16], &4.5f32.to_le_bytes());
    // The C face sees the same buffer through the same pointer.
    let mut data = std::ptr::null();
    let mut size = 0u64;
    // SAFETY: live tensor, writable outs.
    ok(unsafe { hurray_ffi::tensor::hurray_tensor_buffer_data(p, 0, &mut data, &mut size) });
    assert_eq!((data, size), (b.data, 16));
    // SAFETY: p is live and given up here.
    let owned = unsafe { raw::take(p) }.unwrap().unwrap();
    assert_eq!(owned.model().shape, vec![4]);
    drop(owned);
    // SAFETY: NULL is accepted.
    assert!(unsafe { raw::take::<HurrayTensor>(std::ptr::null_mut()) }
        .unwrap()
        .is_none());
}

#[test]
fn raw_checks_null_kind_parent_and_stale() {
    let _l = live();
    // SAFETY: NULL is checked.
    let e = err(unsafe { raw::borrow::<HurrayTensor>(std::ptr::null()) });
    assert_eq!(e.status, HURRAY_ERR_NULL_POINTER);
    let p = raw::into_raw(f32_tensor([0.0; 4]));
    // Another kind behind the pointer.
    // SAFETY: p is a live handle of this build; the kind check reads only the header.
    let e = err(unsafe { raw::borrow::<HurrayItem>(p.cast()) });
    assert_eq!(e.status, HURRAY_ERR_INVALID_ARGUMENT);
    assert!(e.message.contains("HurrayItem"), "{}", e.message);
    // A part of a parent cannot be taken on its own.
    // SAFETY: p is live; its descriptor lives as long as it.
    let d = unsafe { (*p).descriptor } as *mut HurrayDescriptor;
    // SAFETY: d is live (owned by the tensor).
    let e = err(unsafe { raw::take(d) });
    assert_eq!(e.status, HURRAY_ERR_INVALID_ARGUMENT);
    // SAFETY: p is live and given up.
    drop(unsafe { raw::take(p) }.unwrap());
    #[cfg(debug_assertions)]
    {
        // A stale pointer is caught in debug builds, not freed twice.
        // SAFETY: debug builds recognise destroyed handles by address alone.
        let e = err(unsafe { raw::take(p) });
        assert_eq!(e.status, HURRAY_ERR_DOUBLE_DESTROY);
    }
}

/// The error of a call that must fail.
fn err<T>(r: FfiResult<T>) -> FfiError {
    match r {
        Ok(_) => panic!("expected an error"),
        Err(e) => e,
    }
}

static RELEASED: AtomicUsize = AtomicUsize::new(0);

#[repr(C, align(64))]
struct Aligned([u8; 128]);

#[test]
fn foreign_buffer_releases_once_and_refuses_bad_placement() {
    let _l = live();
    let mem: &'static mut Aligned = Box::leak(Box::new(Aligned([7; 128])));
    mem.0[5] = 42;
    let ptr = mem.0.as_ptr();
    RELEASED.store(0, Ordering::SeqCst);
    let guard = || {
        ReleaseGuard::from_fn(|| {
            RELEASED.fetch_add(1, Ordering::SeqCst);
        })
    };
    // SAFETY: `mem` is leaked: valid for the whole test.
    let b = unsafe { HurrayBuffer::foreign(ptr.cast(), 128, Placement::cpu(64), guard()) }.unwrap();
    assert_eq!(b.bytes().unwrap().len(), 128);
    assert_eq!(b.bytes().unwrap()[5], 42);
    assert_eq!(b.bytes().unwrap().as_ptr(), ptr);
    assert_eq!(RELEASED.load(Ordering::SeqCst), 0);
    let p = raw::into_raw(b);
    // SAFETY: p is live and given up.
    drop(unsafe { raw::take(p) }.unwrap());
    assert_eq!(RELEASED.load(Ordering::SeqCst), 1);

    // Misaligned: refused, and the memory is handed straight back.
    // SAFETY: as above.
    let e =
        err(unsafe { HurrayBuffer::foreign(ptr.add(1).cast(), 64, Placement::cpu(64), guard()) });
    assert_eq!(e.status, HURRAY_ERR_INVALID_ARGUMENT);
    assert_eq!(RELEASED.load(Ordering::SeqCst), 2);
    // A sync mode that needs an event payload is refused.
    let mut pl = Placement::cpu(64);
    pl.device = DeviceTag::Cuda;
    pl.memory_class = MemoryClass::Standard;
    pl.sync_mode = SyncMode::Event;
    // SAFETY: as above.
    let e = err(unsafe { HurrayBuffer::foreign(ptr.cast(), 64, pl, guard()) });
    assert_eq!(e.status, HURRAY_ERR_SYNC_MODE_MISMATCH);
    assert_eq!(RELEASED.load(Ordering::SeqCst), 3);
    // Device memory is carried, never readable as host bytes.
    pl.sync_mode = SyncMode::ProducerSynced;
    // SAFETY: as above (never dereferenced for a device buffer).
    let b = unsafe { HurrayBuffer::foreign(ptr.cast(), 64, pl, guard()) }.unwrap();
    assert!(b.bytes().is_none());
    drop(b);
    assert_eq!(RELEASED.load(Ordering::SeqCst), 4);
}
