//! HurrayItem: plain and composite items from C (moving tensors and members in),
//! borrowed accessors, every error path, the nesting limit, and the Rust side
//! (`from_io` / `to_io`). Releases run exactly once, when the item goes.

mod common;

use common::*;
use hurray_core::{ElementType, Layout, TensorDescriptor};
use hurray_ffi::buffer::*;
use hurray_ffi::item::*;
use hurray_ffi::tensor::*;
use hurray_ffi::*;
use std::ffi::c_void;
use std::ptr::{null, null_mut};
use std::sync::atomic::{AtomicUsize, Ordering};

static RELEASED: AtomicUsize = AtomicUsize::new(0);

#[repr(C, align(64))]
#[derive(Clone, Copy)]
struct Block([u8; 64]);

unsafe extern "C" fn release(ctx: *mut c_void) {
    // SAFETY: ctx is the Box<Vec<Block>> leaked in `tensor`.
    drop(unsafe { Box::from_raw(ctx.cast::<Vec<Block>>()) });
    RELEASED.fetch_add(1, Ordering::SeqCst);
}

/// A tensor made through the C exports, each buffer caller memory with a release.
fn tensor(m: &TensorDescriptor) -> *mut HurrayTensor {
    let bytes = m.encode().unwrap();
    let mut list = null_mut();
    // SAFETY: valid arguments throughout: each buffer is 64-byte aligned memory of
    // at least byte_size bytes that lives until its release runs.
    unsafe {
        ok(hurray_buffer_list_new(&mut list));
        for h in &m.buffers {
            let blocks = Box::new(vec![
                Block([7; 64]);
                (h.byte_size as usize).div_ceil(64).max(1)
            ]);
            let data = blocks.as_ptr().cast::<c_void>();
            let mut b = null_mut();
            ok(hurray_buffer_new(
                data,
                h.byte_size,
                64,
                0,
                0,
                0,
                null(),
                Some(release),
                Box::into_raw(blocks).cast(),
                &mut b,
            ));
            ok(hurray_buffer_list_push(list, &mut b));
        }
        let mut t = null_mut();
        ok(hurray_tensor_new(
            HURRAY_C_ABI_VERSION,
            bytes.as_ptr(),
            bytes.len() as u64,
            list,
            null_mut(),
            None,
            &mut t,
        ));
        t
    }
}

fn dense(shape: &[u64]) -> TensorDescriptor {
    TensorDescriptor::dense(ElementType::Float32, shape).unwrap()
}

fn head(rule: hurray_core::CompositionRule, shape: &[u64], members: u32) -> TensorDescriptor {
    let mut d = dense(shape);
    d.layout = Layout::CompositeHead(hurray_core::CompositeHead {
        rule,
        combine_op: hurray_core::CombineOp::None,
        member_count: members,
    });
    d.buffers.clear();
    d
}

fn shard(shape: &[u64], parent: &[u64], offset: &[u64]) -> TensorDescriptor {
    let mut d = dense(shape);
    d.shard = Some(hurray_core::Shard {
        parent_shape: parent.to_vec(),
        offset: offset.to_vec(),
    });
    d
}

fn item_of(m: &TensorDescriptor) -> *mut HurrayItem {
    let mut t = tensor(m);
    let mut i = null_mut();
    // SAFETY: t is an owned tensor.
    ok(unsafe { hurray_item_from_tensor(&mut t, &mut i) });
    assert!(t.is_null(), "the tensor moved in");
    i
}

#[test]
fn plain_item() {
    let _l = live();
    let released = RELEASED.load(Ordering::SeqCst);
    let mut t = tensor(&dense(&[2, 2]));
    let t0 = t;
    let mut i = null_mut();
    // SAFETY: owned handles; outs writable.
    unsafe {
        ok(hurray_item_from_tensor(&mut t, &mut i));
        assert!(t.is_null());
        let mut c = 9u8;
        ok(hurray_item_is_composite(i, &mut c));
        assert_eq!(c, 0);
        let mut bt: *const HurrayTensor = null();
        ok(hurray_item_tensor(i, &mut bt));
        assert_eq!(bt, t0.cast_const());
        let mut n = 0u64;
        err(
            hurray_item_member_count(i, &mut n),
            HURRAY_ERR_NOT_APPLICABLE,
            "no members",
        );
        let mut m: *const HurrayItem = null();
        err(
            hurray_item_member(i, 0, &mut m),
            HURRAY_ERR_NOT_APPLICABLE,
            "no members",
        );
        // The tensor is borrowed: it cannot be destroyed or moved on its own.
        let mut btm = bt.cast_mut();
        err(
            hurray_tensor_destroy(&mut btm),
            HURRAY_ERR_INVALID_ARGUMENT,
            "borrowed",
        );
        let mut i2 = null_mut();
        err(
            hurray_item_from_tensor(&mut btm, &mut i2),
            HURRAY_ERR_INVALID_ARGUMENT,
            "belongs to an item",
        );
        // Pushing into a plain item does not apply; the member stays the caller's.
        let mut other = item_of(&dense(&[1]));
        err(
            hurray_item_composite_push(i, &mut other),
            HURRAY_ERR_NOT_APPLICABLE,
            "no members",
        );
        assert!(!other.is_null());
        ok(hurray_item_destroy(&mut other));
        assert_eq!(RELEASED.load(Ordering::SeqCst), released + 1);
        ok(hurray_item_destroy(&mut i));
        assert!(i.is_null());
    }
    assert_eq!(
        RELEASED.load(Ordering::SeqCst),
        released + 2,
        "each release ran exactly once"
    );
}

#[test]
fn item_constructor_errors() {
    let _l = live();
    let mut i = null_mut();
    let mut h = tensor(&head(hurray_core::CompositionRule::Group, &[1], 1));
    let mut t = tensor(&dense(&[1]));
    // SAFETY: owned handles; the library checks the rest.
    unsafe {
        err(
            hurray_item_from_tensor(null_mut(), &mut i),
            HURRAY_ERR_NULL_POINTER,
            "tensor",
        );
        let mut nothing: *mut HurrayTensor = null_mut();
        err(
            hurray_item_from_tensor(&mut nothing, &mut i),
            HURRAY_ERR_NULL_POINTER,
            "tensor",
        );
        err(
            hurray_item_from_tensor(&mut t, null_mut()),
            HURRAY_ERR_NULL_POINTER,
            "out",
        );
        err(
            hurray_item_from_tensor(&mut h, &mut i),
            HURRAY_ERR_INVALID_ARGUMENT,
            "composite head",
        );
        assert!(!h.is_null(), "nothing moved");
        err(
            hurray_item_composite_new(&mut t, &mut i),
            HURRAY_ERR_INVALID_ARGUMENT,
            "not a composite head",
        );
        assert!(!t.is_null(), "nothing moved");
        err(
            hurray_item_composite_new(null_mut(), &mut i),
            HURRAY_ERR_NULL_POINTER,
            "head",
        );
        err(
            hurray_item_composite_new(&mut h, null_mut()),
            HURRAY_ERR_NULL_POINTER,
            "out",
        );
        // A descriptor is not a tensor.
        let d = decode(&dense(&[1]).encode().unwrap());
        let mut dt = d.cast::<HurrayTensor>();
        err(
            hurray_item_from_tensor(&mut dt, &mut i),
            HURRAY_ERR_INVALID_ARGUMENT,
            "not a HurrayTensor",
        );
        destroy(d);
        assert!(i.is_null());
        // Accessors check their handle.
        let mut c = 0u8;
        err(
            hurray_item_is_composite(null(), &mut c),
            HURRAY_ERR_NULL_POINTER,
            "item",
        );
        err(
            hurray_item_is_composite(t.cast(), &mut c),
            HURRAY_ERR_INVALID_ARGUMENT,
            "not a HurrayItem",
        );
        let mut bt: *const HurrayTensor = null();
        err(
            hurray_item_tensor(null(), &mut bt),
            HURRAY_ERR_NULL_POINTER,
            "item",
        );
        ok(hurray_item_destroy(null_mut()));
        ok(hurray_tensor_destroy(&mut t));
        ok(hurray_tensor_destroy(&mut h));
    }
}

#[test]
fn composite_from_c() {
    let _l = live();
    let released = RELEASED.load(Ordering::SeqCst);
    use hurray_core::CompositionRule::Partition;
    let mut h = tensor(&head(Partition, &[2, 4], 2));
    let mut c = null_mut();
    // SAFETY: owned handles; outs writable.
    unsafe {
        ok(hurray_item_composite_new(&mut h, &mut c));
        assert!(h.is_null());
        let mut flag = 0u8;
        ok(hurray_item_is_composite(c, &mut flag));
        assert_eq!(flag, 1);
        let mut n = 9u64;
        ok(hurray_item_member_count(c, &mut n));
        assert_eq!(n, 0);
        let mut a = item_of(&shard(&[2, 2], &[2, 4], &[0, 0]));
        let a0 = a;
        ok(hurray_item_composite_push(c, &mut a));
        assert!(a.is_null());
        // Self and already-owned members are refused.
        let mut me = c;
        err(
            hurray_item_composite_push(c, &mut me),
            HURRAY_ERR_INVALID_ARGUMENT,
            "its own member",
        );
        let mut again = a0;
        err(
            hurray_item_composite_push(c, &mut again),
            HURRAY_ERR_INVALID_ARGUMENT,
            "already belongs",
        );
        err(
            hurray_item_composite_push(c, null_mut()),
            HURRAY_ERR_NULL_POINTER,
            "member",
        );
        err(
            hurray_item_composite_push(null_mut(), &mut again),
            HURRAY_ERR_NULL_POINTER,
            "item",
        );
        // A member cannot be changed or destroyed on its own.
        let mut other = item_of(&dense(&[1]));
        err(
            hurray_item_composite_push(a0, &mut other),
            HURRAY_ERR_INVALID_ARGUMENT,
            "member of another item",
        );
        let mut a0m = a0;
        err(
            hurray_item_destroy(&mut a0m),
            HURRAY_ERR_INVALID_ARGUMENT,
            "borrowed",
        );
        let mut b = item_of(&shard(&[2, 2], &[2, 4], &[0, 2]));
        ok(hurray_item_composite_push(c, &mut b));
        // Full: the head declares 2.
        err(
            hurray_item_composite_push(c, &mut other),
            HURRAY_ERR_OUT_OF_RANGE,
            "declares 2 members",
        );
        assert!(!other.is_null(), "a refused member stays the caller's");
        ok(hurray_item_destroy(&mut other));
        ok(hurray_item_member_count(c, &mut n));
        assert_eq!(n, 2);
        let mut m: *const HurrayItem = null();
        ok(hurray_item_member(c, 0, &mut m));
        assert_eq!(m, a0.cast_const());
        ok(hurray_item_member(c, 1, &mut m));
        let mut mt: *const HurrayTensor = null();
        ok(hurray_item_tensor(m, &mut mt));
        let mut d = null();
        ok(hurray_tensor_descriptor(mt, &mut d));
        let mut v = null();
        ok(hurray_ffi::descriptor_view::hurray_descriptor_view(
            d, &mut v,
        ));
        assert_eq!(std::slice::from_raw_parts((*v).shard_offset, 2), [0, 2]);
        err(
            hurray_item_member(c, 2, &mut m),
            HURRAY_ERR_OUT_OF_RANGE,
            "past the composite's 2",
        );
        err(
            hurray_item_member(c, 0, null_mut()),
            HURRAY_ERR_NULL_POINTER,
            "out",
        );
        // The Rust view of what C built.
        let item = &*c;
        let io = item.to_io().unwrap();
        let hurray_io::Item::Composite(comp) = &io else {
            panic!("a composite")
        };
        assert_eq!(comp.members.len(), 2);
        assert_eq!(
            comp.members[1].descriptor().shard.as_ref().unwrap().offset,
            [0, 2]
        );
        drop(io);
        assert_eq!(
            RELEASED.load(Ordering::SeqCst),
            released + 1,
            "only `other` released so far"
        );
        ok(hurray_item_destroy(&mut c));
    }
    assert_eq!(RELEASED.load(Ordering::SeqCst), released + 3);
}

#[test]
fn incomplete_composites_are_not_written() {
    let _l = live();
    let item = HurrayItem::composite(
        HurrayTensor::from_io(
            hurray_io::Tensor::new(head(hurray_core::CompositionRule::Group, &[1], 2), vec![])
                .unwrap(),
        )
        .unwrap(),
    )
    .unwrap();
    let e = item.to_io().err().unwrap();
    assert_eq!(e.status, HURRAY_ERR_STATE);
    assert!(e.message.contains("0 of the 2"), "{}", e.message);
}

#[test]
fn nesting_is_limited_to_eight_levels() {
    let _l = live();
    use hurray_core::CompositionRule::Group;
    // SAFETY: owned handles throughout.
    unsafe {
        let mut inner = item_of(&dense(&[1]));
        for level in 1..=9 {
            let mut h = tensor(&head(Group, &[1], 1));
            let mut c = null_mut();
            ok(hurray_item_composite_new(&mut h, &mut c));
            let s = hurray_item_composite_push(c, &mut inner);
            if level <= 8 {
                ok(s);
                inner = c;
            } else {
                err(s, HURRAY_ERR_LIMIT, "the limit is 8");
                ok(hurray_item_destroy(&mut c));
            }
        }
        ok(hurray_item_destroy(&mut inner));
    }
}

#[test]
fn from_io_and_back() {
    let _l = live();
    use hurray_core::CompositionRule::{Group, Partition};
    let t = |m: TensorDescriptor| {
        let bufs = m
            .buffers
            .iter()
            .map(|b| hurray_io::Buffer::copy_from(&vec![3u8; b.byte_size as usize]))
            .collect();
        hurray_io::Tensor::new(m, bufs).unwrap()
    };
    let nested = hurray_io::Item::Composite(hurray_io::Composite {
        head: t(head(Partition, &[2, 4], 2)),
        members: vec![
            hurray_io::Item::Tensor(t(shard(&[2, 2], &[2, 4], &[0, 0]))),
            hurray_io::Item::Tensor(t(shard(&[2, 2], &[2, 4], &[0, 2]))),
        ],
    });
    let io = hurray_io::Item::Composite(hurray_io::Composite {
        head: t(head(Group, &[1], 2)),
        members: vec![hurray_io::Item::Tensor(t(dense(&[3]))), nested],
    });
    let item = HurrayItem::from_io(io.clone()).unwrap();
    assert_eq!(item.to_io().unwrap(), io);
    let p = item.into_raw();
    // SAFETY: p is an owned item; outs writable.
    unsafe {
        let mut n = 0u64;
        ok(hurray_item_member_count(p, &mut n));
        assert_eq!(n, 2);
        let mut m: *const HurrayItem = null();
        ok(hurray_item_member(p, 1, &mut m));
        let mut c = 0u8;
        ok(hurray_item_is_composite(m, &mut c));
        assert_eq!(c, 1);
        ok(hurray_item_member_count(m, &mut n));
        assert_eq!(n, 2);
        let mut t0: *const HurrayTensor = null();
        ok(hurray_item_member(m, 0, &mut m));
        ok(hurray_item_tensor(m, &mut t0));
        let (mut data, mut size) = (null(), 0u64);
        ok(hurray_tensor_buffer_data(t0, 0, &mut data, &mut size));
        assert_eq!(size, 16);
        assert_eq!(*data.cast::<u8>(), 3);
        let mut p = p;
        ok(hurray_item_destroy(&mut p));
    }
    // A plain tensor item.
    let plain = HurrayItem::from_io(hurray_io::Item::Tensor(t(dense(&[2])))).unwrap();
    assert!(!plain.is_composite());
    assert!(matches!(plain.to_io().unwrap(), hurray_io::Item::Tensor(_)));
    // A composite with too many members is refused.
    let over = hurray_io::Item::Composite(hurray_io::Composite {
        head: t(head(Group, &[1], 1)),
        members: vec![
            hurray_io::Item::Tensor(t(dense(&[1]))),
            hurray_io::Item::Tensor(t(dense(&[1]))),
        ],
    });
    assert_eq!(
        HurrayItem::from_io(over).err().unwrap().status,
        HURRAY_ERR_OUT_OF_RANGE
    );
}
