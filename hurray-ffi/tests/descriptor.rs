//! Descriptor life cycle through the C exports: decode, dense, encode (size query,
//! short buffer), destroy (NULL, borrowed, wrong kind), and descriptors made by
//! another copy of the library (read through the frozen prefix).

mod common;

use common::*;
use hurray_ffi::buffer::{hurray_buffer_list_destroy, hurray_buffer_list_new};
use hurray_ffi::descriptor::*;
use hurray_ffi::descriptor_access::*;
use hurray_ffi::descriptor_view::hurray_descriptor_view;
use hurray_ffi::handle::{kind, Header};
use hurray_ffi::tags::*;
use hurray_ffi::tensor::*;
use hurray_ffi::*;
use std::ffi::c_void;
use std::mem::ManuallyDrop;
use std::ptr::{null, null_mut};

#[test]
fn goldens_decode_and_encode_to_the_same_bytes() {
    let _l = live();
    for name in golden_names() {
        let bytes = golden(&name).unwrap();
        let d = decode(&bytes);
        assert_eq!(encode(d), bytes, "{name}");
        let mut n = 0u64;
        // SAFETY: live descriptor; size query.
        ok(unsafe { hurray_descriptor_encode(d, null_mut(), 0, &mut n) });
        assert_eq!(n, bytes.len() as u64);
        // A short buffer: BUFFER_TOO_SMALL, the needed length reported, nothing copied.
        let mut short = vec![0xAAu8; bytes.len() - 1];
        let mut m = 0u64;
        // SAFETY: short holds capacity bytes.
        let s =
            unsafe { hurray_descriptor_encode(d, short.as_mut_ptr(), short.len() as u64, &mut m) };
        err(s, HURRAY_ERR_BUFFER_TOO_SMALL, "the output holds");
        assert_eq!(m, bytes.len() as u64);
        assert!(short.iter().all(|&b| b == 0xAA));
        // A larger buffer is fine.
        let mut big = vec![0u8; bytes.len() + 10];
        // SAFETY: big holds capacity bytes.
        ok(unsafe { hurray_descriptor_encode(d, big.as_mut_ptr(), big.len() as u64, &mut m) });
        assert_eq!(&big[..m as usize], &bytes[..]);
        let mut h = HurrayDescriptorHeader::default();
        // SAFETY: live descriptor; out writable.
        ok(unsafe { hurray_descriptor_header(d, &mut h) });
        assert_eq!(h.descriptor_length as usize, bytes.len());
        destroy(d);
    }
}

#[test]
fn decode_errors() {
    let _l = live();
    let mut d = null_mut();
    // SAFETY: the library checks every pointer.
    unsafe {
        err(
            hurray_descriptor_decode(null(), 10, &mut d),
            HURRAY_ERR_NULL_POINTER,
            "NULL",
        );
        err(
            hurray_descriptor_decode(b"HRRY".as_ptr(), 0, &mut d),
            HURRAY_ERR_NULL_POINTER,
            "zero-length",
        );
        let good = f32_3x4();
        err(
            hurray_descriptor_decode(good.as_ptr(), good.len() as u64, null_mut()),
            HURRAY_ERR_NULL_POINTER,
            "`out`",
        );
        let mut bad = good.clone();
        bad[0] = b'X';
        err(
            hurray_descriptor_decode(bad.as_ptr(), bad.len() as u64, &mut d),
            HURRAY_ERR_DESCRIPTOR,
            "Magic at byte 0",
        );
        let mut trailing = good.clone();
        trailing.push(0);
        err(
            hurray_descriptor_decode(trailing.as_ptr(), trailing.len() as u64, &mut d),
            HURRAY_ERR_DESCRIPTOR,
            "follow",
        );
        // Truncated: the length field claims more than there is.
        err(
            hurray_descriptor_decode(good.as_ptr(), 30, &mut d),
            HURRAY_ERR_DESCRIPTOR,
            "exceeds",
        );
    }
    assert!(d.is_null(), "no output on error");
}

/// Bytes of a dense float32 [3, 4] descriptor.
fn f32_3x4() -> Vec<u8> {
    hurray_core::TensorDescriptor::dense(hurray_core::ElementType::Float32, &[3, 4])
        .unwrap()
        .encode()
        .unwrap()
}

#[test]
fn encode_errors() {
    let _l = live();
    let d = decode(&f32_3x4());
    let mut n = 0u64;
    // SAFETY: the library checks every pointer; the buffer-list cast is a wrong-kind handle.
    unsafe {
        err(
            hurray_descriptor_encode(null(), null_mut(), 0, &mut n),
            HURRAY_ERR_NULL_POINTER,
            "descriptor",
        );
        err(
            hurray_descriptor_encode(d, null_mut(), 0, null_mut()),
            HURRAY_ERR_NULL_POINTER,
            "out_len",
        );
        let mut b = null_mut();
        ok(hurray_buffer_list_new(&mut b));
        err(
            hurray_descriptor_encode(b.cast(), null_mut(), 0, &mut n),
            HURRAY_ERR_INVALID_ARGUMENT,
            "not a HurrayDescriptor",
        );
        ok(hurray_buffer_list_destroy(&mut b));
    }
    destroy(d);
}

#[test]
fn dense_matches_the_golden_and_checks_its_arguments() {
    let _l = live();
    let mut d = null_mut();
    let shape = [3u64, 4];
    // SAFETY: shape valid for rank 2; out writable.
    ok(unsafe { hurray_descriptor_dense(HURRAY_TYPE_FLOAT32, 2, shape.as_ptr(), &mut d) });
    if let Some(g) = golden("row_major_f32_3x4.bin") {
        assert_eq!(encode(d), g);
    }
    destroy(d);
    // Rank 0 with a NULL shape: a scalar.
    // SAFETY: rank 0 reads nothing.
    ok(unsafe { hurray_descriptor_dense(HURRAY_TYPE_INT8, 0, null(), &mut d) });
    let mut h = HurrayDescriptorHeader::default();
    // SAFETY: live descriptor.
    ok(unsafe { hurray_descriptor_header(d, &mut h) });
    assert_eq!(
        (h.rank, h.buffer_count, h.type_tag),
        (0, 1, HURRAY_TYPE_INT8)
    );
    destroy(d);
    let mut d = null_mut();
    let dynamic = [HURRAY_DIM_DYNAMIC, 2];
    let big = [1u64; 65];
    // SAFETY: arrays valid for their ranks; the library checks the rest.
    unsafe {
        err(
            hurray_descriptor_dense(HURRAY_TYPE_FLOAT32, 2, null(), &mut d),
            HURRAY_ERR_NULL_POINTER,
            "shape",
        );
        err(
            hurray_descriptor_dense(HURRAY_TYPE_FLOAT32, 2, shape.as_ptr(), null_mut()),
            HURRAY_ERR_NULL_POINTER,
            "out",
        );
        err(
            hurray_descriptor_dense(HURRAY_TYPE_FLOAT32, 65, big.as_ptr(), &mut d),
            HURRAY_ERR_INVALID_ARGUMENT,
            "rank 65",
        );
        err(
            hurray_descriptor_dense(0x30, 2, shape.as_ptr(), &mut d),
            HURRAY_ERR_INVALID_ARGUMENT,
            "type_tag 0x30",
        );
        err(
            hurray_descriptor_dense(0xF0, 2, shape.as_ptr(), &mut d),
            HURRAY_ERR_DESCRIPTOR,
            "built-in size",
        );
        err(
            hurray_descriptor_dense(HURRAY_TYPE_FLOAT32, 2, dynamic.as_ptr(), &mut d),
            HURRAY_ERR_DESCRIPTOR,
            "",
        );
        let huge = [u64::MAX / 2, 4];
        err(
            hurray_descriptor_dense(HURRAY_TYPE_FLOAT32, 2, huge.as_ptr(), &mut d),
            HURRAY_ERR_DESCRIPTOR,
            "",
        );
    }
    assert!(d.is_null());
}

#[test]
fn destroy_nulls_refuses_borrowed_and_wrong_kinds() {
    let _l = live();
    // SAFETY: NULL and pointer-to-NULL are documented no-ops.
    unsafe {
        ok(hurray_descriptor_destroy(null_mut()));
        let mut p: *mut HurrayDescriptor = null_mut();
        ok(hurray_descriptor_destroy(&mut p));
    }
    // A tensor's descriptor is borrowed.
    let bytes = hurray_core::TensorDescriptor::dense(hurray_core::ElementType::Float32, &[0])
        .unwrap()
        .encode()
        .unwrap();
    let mut list = null_mut();
    let mut t = null_mut();
    let mut buf = null_mut();
    // SAFETY: valid arguments throughout; an empty buffer needs no data.
    unsafe {
        ok(hurray_ffi::buffer::hurray_buffer_list_new(&mut list));
        ok(hurray_ffi::buffer::hurray_buffer_new(
            null(),
            0,
            64,
            0,
            0,
            0,
            null(),
            None,
            null_mut(),
            &mut buf,
        ));
        ok(hurray_ffi::buffer::hurray_buffer_list_push(list, &mut buf));
        ok(hurray_tensor_new(
            HURRAY_C_ABI_VERSION,
            bytes.as_ptr(),
            bytes.len() as u64,
            list,
            null_mut(),
            None,
            &mut t,
        ));
        let mut d: *const HurrayDescriptor = null();
        ok(hurray_tensor_descriptor(t, &mut d));
        let mut dm = d.cast_mut();
        err(
            hurray_descriptor_destroy(&mut dm),
            HURRAY_ERR_INVALID_ARGUMENT,
            "borrowed",
        );
        assert!(!dm.is_null(), "a refused destroy leaves the pointer");
        // Accessors work on borrowed descriptors.
        let mut h = HurrayDescriptorHeader::default();
        ok(hurray_descriptor_header(d, &mut h));
        assert_eq!(h.rank, 1);
        // A tensor is not a descriptor.
        let mut tm = t.cast::<HurrayDescriptor>();
        err(
            hurray_descriptor_destroy(&mut tm),
            HURRAY_ERR_INVALID_ARGUMENT,
            "not a HurrayDescriptor",
        );
        ok(hurray_tensor_destroy(&mut t));
    }
}

// ---- a descriptor made by "another copy of the library"

static OTHER_BUILD: u8 = 0;
static FOREIGN_DESTROYED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// The frozen layout of a descriptor handle: Header, then `encoded`, `encoded_len`.
#[repr(C)]
struct ForeignDescriptor {
    header: ManuallyDrop<Header>,
    encoded: *const u8,
    encoded_len: u64,
    bytes: Vec<u8>,
}

unsafe extern "C" fn foreign_destroy(p: *mut c_void) {
    // SAFETY: p is the Box<ForeignDescriptor> leaked by `foreign`.
    drop(unsafe { Box::from_raw(p.cast::<ForeignDescriptor>()) });
    FOREIGN_DESTROYED.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
}

fn foreign(bytes: Vec<u8>) -> *mut HurrayDescriptor {
    let mut f = Box::new(ForeignDescriptor {
        header: ManuallyDrop::new(Header {
            abi_version: HURRAY_C_ABI_VERSION,
            kind: kind::DESCRIPTOR,
            flags: 0,
            impl_id: std::ptr::addr_of!(OTHER_BUILD).cast(),
            destroy: foreign_destroy,
        }),
        encoded: null(),
        encoded_len: bytes.len() as u64,
        bytes,
    });
    f.encoded = f.bytes.as_ptr();
    Box::into_raw(f).cast()
}

#[test]
fn descriptors_of_another_build_are_read_through_their_bytes() {
    let _l = live();
    let mut m =
        hurray_core::TensorDescriptor::dense(hurray_core::ElementType::Float32, &[8, 4]).unwrap();
    m.shard = Some(hurray_core::Shard {
        parent_shape: vec![8, 8],
        offset: vec![0, 4],
    });
    let bytes = m.encode().unwrap();
    let mut d = foreign(bytes.clone());
    assert_eq!(encode(d), bytes);
    let mut h = HurrayDescriptorHeader::default();
    let mut shape = [0u64; 2];
    let mut parent = [0u64; 2];
    let mut off = [0u64; 2];
    let mut n = 0u64;
    // SAFETY: d is a live handle with the frozen prefix; outs are writable.
    unsafe {
        ok(hurray_descriptor_header(d, &mut h));
        assert_eq!(
            (h.rank, h.flags, h.layout_tag),
            (2, HURRAY_FLAG_HAS_SHARD, HURRAY_LAYOUT_ROW_MAJOR)
        );
        ok(hurray_descriptor_shape(d, shape.as_mut_ptr(), 2, &mut n));
        assert_eq!(shape, [8, 4]);
        // The rest of a foreign descriptor: decode its frozen bytes, then one view.
        let own = decode(&encode(d));
        let mut v = null();
        ok(hurray_descriptor_view(own, &mut v));
        let v = *v;
        parent.copy_from_slice(std::slice::from_raw_parts(v.shard_parent_shape, 2));
        off.copy_from_slice(std::slice::from_raw_parts(v.shard_offset, 2));
        assert_eq!((parent, off), ([8, 8], [0, 4]));
        assert!(v.statistics.is_null(), "no statistics section");
        destroy(own);
        // Destroy runs the creator's destructor, not ours.
        let before = FOREIGN_DESTROYED.load(std::sync::atomic::Ordering::SeqCst);
        ok(hurray_descriptor_destroy(&mut d));
        assert!(d.is_null());
        assert_eq!(
            FOREIGN_DESTROYED.load(std::sync::atomic::Ordering::SeqCst),
            before + 1
        );
    }
}

#[test]
fn handles_of_another_abi_version_are_refused() {
    let _l = live();
    let bytes = f32_3x4();
    let d = foreign(bytes);
    // SAFETY: d is our fake handle; we change its version, then restore it to free it.
    unsafe {
        (*d.cast::<Header>()).abi_version = 9;
        let mut h = HurrayDescriptorHeader::default();
        err(
            hurray_descriptor_header(d, &mut h),
            HURRAY_ERR_ABI_VERSION,
            "ABI version 9",
        );
        let mut v = 0u32;
        ok(hurray_ffi::abi::hurray_handle_abi_version(d.cast(), &mut v));
        assert_eq!(v, 9);
        (*d.cast::<Header>()).abi_version = HURRAY_C_ABI_VERSION;
        let mut d = d;
        ok(hurray_descriptor_destroy(&mut d));
    }
}
