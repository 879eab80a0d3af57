//! Handles a tensor owns stay owned by it: its buffer list cannot be destroyed,
//! pushed to or moved into another tensor through the borrowed pointer, and sizes
//! beyond the address space are refused instead of reaching `slice::from_raw_parts`.

mod common;

use common::{err, live, ok};
use hurray_ffi::buffer::*;
use hurray_ffi::descriptor::*;
use hurray_ffi::tags::HURRAY_TYPE_UINT8;
use hurray_ffi::tensor::*;
use hurray_ffi::*;
use std::ffi::c_void;
use std::ptr::{null, null_mut};
use std::sync::atomic::{AtomicUsize, Ordering};

unsafe extern "C" fn count_release(ctx: *mut c_void) {
    // SAFETY: the tests pass a pointer to a live AtomicUsize.
    unsafe { &*ctx.cast::<AtomicUsize>() }.fetch_add(1, Ordering::SeqCst);
}

#[repr(C, align(64))]
struct Aligned([u8; 64]);

/// Descriptor bytes of a uint8 [n] row-major tensor.
fn dense_u8(n: u64) -> Vec<u8> {
    let mut d = null_mut();
    // SAFETY: valid out-pointers; the descriptor is destroyed before returning.
    unsafe {
        ok(hurray_descriptor_dense(HURRAY_TYPE_UINT8, 1, &n, &mut d));
        let mut len = 0;
        ok(hurray_descriptor_encode(d, null_mut(), 0, &mut len));
        let mut bytes = vec![0u8; len as usize];
        ok(hurray_descriptor_encode(
            d,
            bytes.as_mut_ptr(),
            len,
            &mut len,
        ));
        ok(hurray_descriptor_destroy(&mut d));
        bytes
    }
}

/// A uint8 [64] tensor over `mem` whose release counts in `count`.
fn tensor_over(mem: &Aligned, count: &AtomicUsize) -> *mut HurrayTensor {
    let bytes = dense_u8(64);
    // SAFETY: mem outlives the tensor; count outlives it too.
    unsafe {
        let mut b = null_mut();
        ok(hurray_buffer_new(
            mem.0.as_ptr().cast(),
            64,
            64,
            0,
            0,
            0,
            null(),
            Some(count_release),
            (count as *const AtomicUsize).cast_mut().cast(),
            &mut b,
        ));
        let mut l = null_mut();
        ok(hurray_buffer_list_new(&mut l));
        ok(hurray_buffer_list_push(l, &mut b));
        let mut t = null_mut();
        ok(hurray_tensor_new(
            HURRAY_C_ABI_VERSION,
            bytes.as_ptr(),
            bytes.len() as u64,
            l,
            null_mut(),
            None,
            &mut t,
        ));
        t
    }
}

#[test]
fn a_tensors_buffer_list_cannot_be_destroyed_pushed_to_or_moved() {
    let _live = live();
    let mem = Aligned([7; 64]);
    let count = AtomicUsize::new(0);
    let mut t = tensor_over(&mem, &count);
    // SAFETY: t is live; the borrowed list is only passed back to the library.
    unsafe {
        let mut list: *const HurrayBufferList = null();
        ok(hurray_tensor_buffers(t, &mut list));
        let mut as_owned = list.cast_mut();
        err(
            hurray_buffer_list_destroy(&mut as_owned),
            HURRAY_ERR_INVALID_ARGUMENT,
            "borrowed",
        );
        assert_eq!(
            as_owned,
            list.cast_mut(),
            "a refused destroy leaves the pointer alone"
        );

        let mut extra = null_mut();
        ok(hurray_buffer_new(
            null(),
            0,
            64,
            0,
            0,
            0,
            null(),
            None,
            null_mut(),
            &mut extra,
        ));
        err(
            hurray_buffer_list_push(list.cast_mut(), &mut extra),
            HURRAY_ERR_INVALID_ARGUMENT,
            "borrowed",
        );
        assert!(
            !extra.is_null(),
            "a refused push leaves the buffer with the caller"
        );
        ok(hurray_buffer_destroy(&mut extra));

        let bytes = dense_u8(64);
        let mut t2 = null_mut();
        err(
            hurray_tensor_new(
                HURRAY_C_ABI_VERSION,
                bytes.as_ptr(),
                bytes.len() as u64,
                list.cast_mut(),
                null_mut(),
                None,
                &mut t2,
            ),
            HURRAY_ERR_INVALID_ARGUMENT,
            "borrowed",
        );
        assert!(t2.is_null());

        // The tensor is untouched: its buffer still reads, and it releases once.
        let (mut p, mut n) = (null(), 0u64);
        ok(hurray_tensor_buffer_data(t, 0, &mut p, &mut n));
        assert_eq!(
            std::slice::from_raw_parts(p.cast::<u8>(), n as usize),
            &[7u8; 64]
        );
        assert_eq!(count.load(Ordering::SeqCst), 0);
        ok(hurray_tensor_destroy(&mut t));
    }
    assert_eq!(count.load(Ordering::SeqCst), 1);
}

#[test]
fn sizes_beyond_the_address_space_are_refused() {
    let _live = live();
    let mem = Aligned([0; 64]);
    let count = AtomicUsize::new(0);
    for size in [u64::MAX - 63, u64::MAX, (isize::MAX as u64) + 1] {
        let mut b = null_mut();
        // SAFETY: valid pointers; the call must refuse before touching `mem`.
        let s = unsafe {
            hurray_buffer_new(
                mem.0.as_ptr().cast(),
                size,
                64,
                0,
                0,
                0,
                null(),
                Some(count_release),
                (&count as *const AtomicUsize).cast_mut().cast(),
                &mut b,
            )
        };
        err(s, HURRAY_ERR_INVALID_ARGUMENT, "address space");
        assert!(b.is_null());
    }
    assert_eq!(
        count.load(Ordering::SeqCst),
        0,
        "a refused buffer never releases"
    );

    let bytes = dense_u8(4);
    let mut t = null_mut();
    // SAFETY: the length lies about the bytes; the call must refuse before reading them.
    let s = unsafe {
        hurray_tensor_new(
            HURRAY_C_ABI_VERSION,
            bytes.as_ptr(),
            u64::MAX,
            null_mut(),
            null_mut(),
            None,
            &mut t,
        )
    };
    err(s, HURRAY_ERR_INVALID_ARGUMENT, "address space");
    assert!(t.is_null());
}

#[test]
fn a_tensor_refused_for_its_content_takes_nothing_and_releases_no_owner() {
    let _live = live();
    // float8_e8m0 [64] whose first code is 0xFF (NaN; refused by the content check).
    let mut mem = Aligned([0x7f; 64]);
    mem.0[0] = 0xff;
    let buffer_count = AtomicUsize::new(0);
    let owner_count = AtomicUsize::new(0);
    let n = 64u64;
    // SAFETY: valid pointers; mem, buffer_count and owner_count outlive every handle.
    unsafe {
        let mut d = null_mut();
        ok(hurray_descriptor_dense(
            hurray_ffi::tags::HURRAY_TYPE_FLOAT8_E8M0,
            1,
            &n,
            &mut d,
        ));
        let mut len = 0;
        ok(hurray_descriptor_encode(d, null_mut(), 0, &mut len));
        let mut bytes = vec![0u8; len as usize];
        ok(hurray_descriptor_encode(
            d,
            bytes.as_mut_ptr(),
            len,
            &mut len,
        ));
        ok(hurray_descriptor_destroy(&mut d));

        let mut b = null_mut();
        ok(hurray_buffer_new(
            mem.0.as_mut_ptr().cast(),
            64,
            64,
            0,
            0,
            0,
            null(),
            Some(count_release),
            (&buffer_count as *const AtomicUsize).cast_mut().cast(),
            &mut b,
        ));
        let mut l = null_mut();
        ok(hurray_buffer_list_new(&mut l));
        ok(hurray_buffer_list_push(l, &mut b));
        let mut t = null_mut();
        let s = hurray_tensor_new(
            HURRAY_C_ABI_VERSION,
            bytes.as_ptr(),
            bytes.len() as u64,
            l,
            (&owner_count as *const AtomicUsize).cast_mut().cast(),
            Some(count_release),
            &mut t,
        );
        assert!(s < 0, "0xFF is not a valid e8m0 code, got status {s}");
        assert!(t.is_null());
        assert_eq!(
            owner_count.load(Ordering::SeqCst),
            0,
            "owner released on error"
        );
        assert_eq!(
            buffer_count.load(Ordering::SeqCst),
            0,
            "buffer dropped on error"
        );
        let mut still = 0;
        ok(hurray_buffer_list_len(l, &mut still));
        assert_eq!(still, 1, "the list still holds its buffer");
        ok(hurray_buffer_list_destroy(&mut l));
        assert_eq!(buffer_count.load(Ordering::SeqCst), 1);
        assert_eq!(owner_count.load(Ordering::SeqCst), 0);
    }
}
