//! `HurrayItem`: what a container yields or takes, a tensor or a composite (head
//! tensor plus ordered members, each an item, nested). The item owns its tensor and
//! members; pointers handed out are borrowed. Frozen public fields let any copy of
//! the library read an item.

use crate::handle::{self, kind, Handle, Header, FLAG_BORROWED};
use crate::status::*;
use crate::tensor::HurrayTensor;
use hurray_core::Layout;

/// A tensor or a composite. Frozen public fields (any build reads them).
#[repr(C)]
pub struct HurrayItem {
    header: Header,
    /// The tensor, or the composite's head (borrowed from the item).
    pub tensor: *const HurrayTensor,
    /// `member_count` member pointers (borrowed from the item); NULL when there are none.
    pub members: *const *mut HurrayItem,
    /// Members held so far (0 for a plain tensor).
    pub member_count: u64,
    /// 1 for a composite, 0 for a plain tensor.
    pub is_composite: u8,
    _reserved: [u8; 7],
    tensor_box: Box<HurrayTensor>,
    owned: Vec<*mut HurrayItem>,
    /// Composite nesting levels, counting this one (0 for a plain tensor).
    depth: u32,
}

// SAFETY: repr(C) with Header first.
unsafe impl Handle for HurrayItem {
    const KIND: u16 = kind::ITEM;
    const NAME: &'static str = "HurrayItem";
    fn header(&self) -> &Header {
        &self.header
    }
}

fn is_head(t: &HurrayTensor) -> bool {
    matches!(t.model().layout, Layout::CompositeHead(_))
}

fn expected_members(t: &HurrayTensor) -> u64 {
    match &t.model().layout {
        Layout::CompositeHead(h) => u64::from(h.member_count),
        _ => 0,
    }
}

impl HurrayItem {
    fn build(tensor: HurrayTensor, composite: bool) -> HurrayItem {
        let mut tensor_box = handle::boxed(tensor);
        tensor_box.set_borrowed();
        HurrayItem {
            header: Header::new(kind::ITEM, handle::destroy_own::<HurrayItem>),
            tensor: &*tensor_box,
            members: std::ptr::null(),
            member_count: 0,
            is_composite: u8::from(composite),
            _reserved: [0; 7],
            tensor_box,
            owned: Vec::new(),
            depth: u32::from(composite),
        }
    }

    /// An item holding one tensor that is not a composite head.
    ///
    /// Errors: `HURRAY_ERR_INVALID_ARGUMENT` when the tensor is a composite head.
    pub fn from_tensor(tensor: HurrayTensor) -> FfiResult<HurrayItem> {
        if is_head(&tensor) {
            return Err(FfiError::new(
                HURRAY_ERR_INVALID_ARGUMENT,
                "the tensor is a composite head; make a composite item from it",
            ));
        }
        Ok(HurrayItem::build(tensor, false))
    }

    /// An empty composite whose head is `head`; members are added with [`push`](Self::push).
    ///
    /// Errors: `HURRAY_ERR_INVALID_ARGUMENT` when `head`'s layout is not a composite head.
    pub fn composite(head: HurrayTensor) -> FfiResult<HurrayItem> {
        if !is_head(&head) {
            return Err(FfiError::new(
                HURRAY_ERR_INVALID_ARGUMENT,
                format!(
                    "the head's layout is {}, not a composite head (0x0b)",
                    head.model().layout.name()
                ),
            ));
        }
        Ok(HurrayItem::build(head, true))
    }

    /// Appends a member (a tensor or a nested composite); the item owns it from now on.
    ///
    /// Errors: `HURRAY_ERR_NOT_APPLICABLE` (a plain tensor item);
    /// `HURRAY_ERR_OUT_OF_RANGE` (the head's `member_count` members are already there);
    /// `HURRAY_ERR_LIMIT` (composites nested deeper than 8 levels). On error the
    /// member is handed back.
    pub fn push(&mut self, member: Box<HurrayItem>) -> Result<(), (FfiError, Box<HurrayItem>)> {
        if self.is_composite == 0 {
            let e = not_applicable("a plain tensor item has no members");
            return Err((e, member));
        }
        let expected = expected_members(&self.tensor_box);
        if self.member_count >= expected {
            let e = FfiError::new(
                HURRAY_ERR_OUT_OF_RANGE,
                format!("the composite head declares {expected} members, all present"),
            );
            return Err((e, member));
        }
        let limit = hurray_io::Limits::default().max_composite_depth;
        let depth = self.depth.max(member.depth + 1);
        if depth > limit {
            let e = FfiError::new(
                HURRAY_ERR_LIMIT,
                format!("composites would nest {depth} levels; the limit is {limit}"),
            );
            return Err((e, member));
        }
        let mut member = member;
        handle::register(&*member);
        member.header.flags |= FLAG_BORROWED;
        self.depth = depth;
        self.owned.push(Box::into_raw(member));
        self.members = self.owned.as_ptr();
        self.member_count = self.owned.len() as u64;
        Ok(())
    }

    /// Wraps what a container yielded (no payload copy).
    ///
    /// Errors: those of [`HurrayTensor::from_io`], or of [`push`](Self::push) for a
    /// composite that breaks its head's count or the nesting limit.
    pub fn from_io(item: hurray_io::Item) -> FfiResult<HurrayItem> {
        match item {
            hurray_io::Item::Tensor(t) => HurrayItem::from_tensor(HurrayTensor::from_io(t)?),
            hurray_io::Item::Composite(c) => {
                let mut out = HurrayItem::composite(HurrayTensor::from_io(c.head)?)?;
                for m in c.members {
                    let m = handle::boxed(HurrayItem::from_io(m)?);
                    out.push(m).map_err(|(e, _)| e)?;
                }
                Ok(out)
            }
        }
    }

    /// The item as the containers take it, sharing the host buffers (no copy); used
    /// to write it to a stream or file. Composite rules (shards, roles, coverage) are
    /// checked by the writers.
    ///
    /// Errors: `HURRAY_ERR_STATE` (a composite with fewer members than its head
    /// declares); `HURRAY_ERR_INVALID_ARGUMENT` (a device buffer).
    pub fn to_io(&self) -> FfiResult<hurray_io::Item> {
        let tensor = self.tensor_box.to_io()?;
        if self.is_composite == 0 {
            return Ok(hurray_io::Item::Tensor(tensor));
        }
        let expected = expected_members(&self.tensor_box);
        if self.member_count != expected {
            return Err(FfiError::new(
                HURRAY_ERR_STATE,
                format!(
                    "the composite holds {} of the {expected} members its head declares",
                    self.member_count
                ),
            ));
        }
        let members = self
            .members_iter()
            .map(HurrayItem::to_io)
            .collect::<FfiResult<Vec<_>>>()?;
        Ok(hurray_io::Item::Composite(hurray_io::Composite {
            head: tensor,
            members,
        }))
    }

    /// Moves the item to the heap and returns the pointer a C caller will own
    /// (destroy it with `hurray_item_destroy`).
    pub fn into_raw(self) -> *mut HurrayItem {
        handle::into_raw(self)
    }

    /// The tensor, or the composite's head.
    pub fn tensor_handle(&self) -> &HurrayTensor {
        &self.tensor_box
    }

    /// Whether this is a composite.
    pub fn is_composite(&self) -> bool {
        self.is_composite != 0
    }

    /// Checks this item against the composite rules (`layouts.md` §2.11), as the
    /// writers do before emitting a byte of it: see [`check_rules`](Self::check_rules).
    ///
    /// Errors: `HURRAY_ERR_STATE` (a composite missing members), those of
    /// `check_rules`.
    pub fn validate(&self) -> FfiResult<()> {
        HurrayItem::check_rules(&self.to_io()?)
    }

    /// Checks `item` (as the containers take it) against the composite rules
    /// (`layouts.md` §2.11) with the default limits, as the writers and readers do:
    /// partition members cover the head exactly without overlap, an overlay has one
    /// base, partition/overlay members (nested partition/overlay heads included)
    /// have the head's element type unless quantized, at most 8 levels of nesting
    /// and 65,536 members per head. A plain tensor passes. Used by bindings whose
    /// own composite type is checked when it is made.
    ///
    /// Errors: `HURRAY_ERR_FORMAT` (a rule; the message names it),
    /// `HURRAY_ERR_LIMIT` (too many members).
    pub fn check_rules(item: &hurray_io::Item) -> FfiResult<()> {
        match item {
            hurray_io::Item::Tensor(_) => Ok(()),
            hurray_io::Item::Composite(c) => {
                let l = hurray_io::Limits::default();
                hurray_io::composite::validate(c, l.max_composite_depth, l.max_composite_members)
                    .map_err(FfiError::from)
            }
        }
    }

    /// The members, in order (empty for a plain tensor).
    pub fn members_iter(&self) -> impl ExactSizeIterator<Item = &HurrayItem> {
        // SAFETY: every pointer in `owned` came from Box::into_raw in push and lives
        // until the item is dropped.
        self.owned.iter().map(|&p| unsafe { &*p })
    }
}

impl Drop for HurrayItem {
    fn drop(&mut self) {
        for p in std::mem::take(&mut self.owned) {
            // SAFETY: p came from Box::into_raw in push and is freed only here.
            drop(unsafe { Box::from_raw(p) });
        }
    }
}

/// An item of any build, read through its frozen prefix.
///
/// # Safety
/// `p` NULL or a live item of some build.
unsafe fn item_ref<'a>(p: *const HurrayItem, arg: &str) -> FfiResult<&'a HurrayItem> {
    // SAFETY: forwarded.
    let h = unsafe { handle::header(p.cast(), arg)? };
    handle::check_kind::<HurrayItem>(h, arg)?;
    // SAFETY: kind checked; foreign items are read through public fields only.
    Ok(unsafe { &*p })
}

/// Takes an own-build, unborrowed tensor out of the caller's slot (not yet nulled).
///
/// # Safety
/// `slot` NULL or a valid pointer to NULL or a live tensor handle.
unsafe fn take_tensor(slot: *mut *mut HurrayTensor, arg: &str) -> FfiResult<HurrayTensor> {
    if slot.is_null() {
        return Err(FfiError::null(arg));
    }
    // SAFETY: non-null; points at the caller's pointer slot.
    let p = unsafe { *slot };
    // SAFETY: forwarded.
    let h = unsafe { handle::header(p.cast(), arg)? };
    handle::check_kind::<HurrayTensor>(h, arg)?;
    if !h.is_own() {
        if h.flags & FLAG_BORROWED != 0 {
            return Err(FfiError::new(
                HURRAY_ERR_INVALID_ARGUMENT,
                format!("`{arg}` is borrowed from its parent and cannot be moved"),
            ));
        }
        // A tensor of another copy: adopt it (its creator destroys it later, once).
        // SAFETY: live, unborrowed, owned by the caller, who gives it up on success.
        return unsafe { crate::foreign::adopt(p) };
    }
    // SAFETY: forwarded.
    let t = unsafe { handle::own(p, arg)? };
    if t.header().flags & FLAG_BORROWED != 0 {
        return Err(FfiError::new(
            HURRAY_ERR_INVALID_ARGUMENT,
            format!("`{arg}` belongs to an item and cannot be moved"),
        ));
    }
    // SAFETY: own-build, unborrowed: it came from into_raw and the caller owns it.
    Ok(*unsafe { handle::from_raw(p) })
}

// ---------------------------------------------------------------- C exports

/// Makes an item of one tensor (not a composite head), moving the tensor in.
///
/// Errors: `HURRAY_ERR_NULL_POINTER` (`tensor`, `*tensor`, `out`);
/// `HURRAY_ERR_ABI_VERSION`; `HURRAY_ERR_INVALID_ARGUMENT` (not a tensor, already owned
/// by an item, or a composite head). On error nothing moves. A tensor made by another
/// copy of the library is adopted: the item views the same memory, and the creator's
/// destructor runs, once, when the item is destroyed.
///
/// Ownership: on success `*tensor` moves in and is nulled (borrow it back with
/// `hurray_item_tensor`); `*out` owned, destroy with `hurray_item_destroy`.
///
/// # Safety
/// `tensor` NULL or a valid pointer to NULL or a live tensor; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn hurray_item_from_tensor(
    tensor: *mut *mut HurrayTensor,
    out: *mut *mut HurrayItem,
) -> HurrayStatus {
    boundary(|| {
        need(out, "out")?;
        if !tensor.is_null() {
            // SAFETY: forwarded (descriptor readers work on tensors of any copy).
            let t = unsafe { crate::tensor::tensor_ref(*tensor)? };
            // SAFETY: a live tensor's descriptor is live.
            let model = unsafe { crate::descriptor::model_of(t.descriptor, "tensor->descriptor")? };
            if matches!(model.layout, Layout::CompositeHead(_)) {
                return Err(FfiError::new(
                    HURRAY_ERR_INVALID_ARGUMENT,
                    "the tensor is a composite head; use hurray_item_composite_new",
                ));
            }
        }
        // SAFETY: forwarded.
        let t = unsafe { take_tensor(tensor, "tensor")? };
        // SAFETY: tensor is non-null (take_tensor checked it); ownership moved out.
        unsafe { *tensor = std::ptr::null_mut() };
        let item = HurrayItem::from_tensor(t).expect("checked above: not a head");
        // SAFETY: out checked non-null.
        unsafe { put(out, "out", handle::into_raw(item)) }
    })
}

/// Makes an empty composite item whose head is `*head` (a tensor with layout
/// `HURRAY_LAYOUT_COMPOSITE_HEAD`), moving the head in. Add the members, in order,
/// with `hurray_item_composite_push`.
///
/// Errors: `HURRAY_ERR_NULL_POINTER` (`head`, `*head`, `out`); `HURRAY_ERR_ABI_VERSION`;
/// `HURRAY_ERR_INVALID_ARGUMENT` (not a tensor, already owned by an item, or not a
/// composite head). On error nothing moves. A head made by another copy of the
/// library is adopted as by `hurray_item_from_tensor`.
///
/// Ownership: on success `*head` moves in and is nulled; `*out` owned, destroy with
/// `hurray_item_destroy`.
///
/// # Safety
/// `head` NULL or a valid pointer to NULL or a live tensor; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn hurray_item_composite_new(
    head: *mut *mut HurrayTensor,
    out: *mut *mut HurrayItem,
) -> HurrayStatus {
    boundary(|| {
        need(out, "out")?;
        if !head.is_null() {
            // SAFETY: forwarded (descriptor readers work on tensors of any copy).
            let t = unsafe { crate::tensor::tensor_ref(*head)? };
            // SAFETY: a live tensor's descriptor is live.
            let model = unsafe { crate::descriptor::model_of(t.descriptor, "head->descriptor")? };
            if !matches!(model.layout, Layout::CompositeHead(_)) {
                return Err(FfiError::new(
                    HURRAY_ERR_INVALID_ARGUMENT,
                    format!(
                        "the head's layout is {}, not a composite head (0x0b)",
                        model.layout.name()
                    ),
                ));
            }
        }
        // SAFETY: forwarded.
        let t = unsafe { take_tensor(head, "head")? };
        // SAFETY: head is non-null (take_tensor checked it); ownership moved out.
        unsafe { *head = std::ptr::null_mut() };
        let item = HurrayItem::composite(t).expect("checked above: a head");
        // SAFETY: out checked non-null.
        unsafe { put(out, "out", handle::into_raw(item)) }
    })
}

/// Moves `*member` (a tensor item or a nested composite) to the end of a composite's
/// members and nulls `*member`.
///
/// Errors: `HURRAY_ERR_NULL_POINTER` (`item`, `member`, `*member`);
/// `HURRAY_ERR_ABI_VERSION`; `HURRAY_ERR_INVALID_ARGUMENT` (not items, made by another
/// copy of the library, `item` is itself a member of another item, `*member` already
/// belongs to an item, or is `item`); `HURRAY_ERR_NOT_APPLICABLE` (`item` is a plain
/// tensor); `HURRAY_ERR_OUT_OF_RANGE` (the head's `member_count` members are already
/// there); `HURRAY_ERR_LIMIT` (composites nested deeper than 8 levels). On error
/// nothing moves.
///
/// Ownership: on success `*member` moves into `item` (borrow it with
/// `hurray_item_member`).
///
/// # Safety
/// `item` NULL or a live item; `member` NULL or a valid pointer to NULL or a live item.
#[no_mangle]
pub unsafe extern "C" fn hurray_item_composite_push(
    item: *mut HurrayItem,
    member: *mut *mut HurrayItem,
) -> HurrayStatus {
    boundary(|| {
        // SAFETY: forwarded.
        let parent = unsafe { handle::own_mut(item, "item")? };
        if parent.header.flags & FLAG_BORROWED != 0 {
            return Err(FfiError::new(
                HURRAY_ERR_INVALID_ARGUMENT,
                "`item` is a member of another item and cannot be changed",
            ));
        }
        if member.is_null() {
            return Err(FfiError::null("member"));
        }
        // SAFETY: non-null; points at the caller's pointer slot.
        let m = unsafe { *member };
        if std::ptr::eq(m, item) {
            return Err(FfiError::new(
                HURRAY_ERR_INVALID_ARGUMENT,
                "an item cannot be its own member",
            ));
        }
        // SAFETY: forwarded.
        let mh = unsafe { handle::own(m, "*member")? };
        if mh.header.flags & FLAG_BORROWED != 0 {
            return Err(FfiError::new(
                HURRAY_ERR_INVALID_ARGUMENT,
                "`*member` already belongs to an item",
            ));
        }
        // SAFETY: own-build, unborrowed, distinct from `item`: the caller owns it.
        let boxed = unsafe { handle::from_raw(m) };
        if let Err((e, back)) = parent.push(boxed) {
            // Hand it back unchanged: the caller still owns it.
            let _ = Box::into_raw(back);
            return Err(e);
        }
        // SAFETY: the slot is valid; ownership moved into the item.
        unsafe { *member = std::ptr::null_mut() };
        Ok(())
    })
}

/// Whether the item is a composite: `*out` = 1, or 0 for a plain tensor. Works on
/// items of any copy of the library.
///
/// Errors: `HURRAY_ERR_NULL_POINTER` (`item`, `out`); `HURRAY_ERR_ABI_VERSION`;
/// `HURRAY_ERR_INVALID_ARGUMENT` (not an item).
///
/// Ownership: `*out` written by value; nothing to free.
///
/// # Safety
/// `item` NULL or a live item; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn hurray_item_is_composite(
    item: *const HurrayItem,
    out: *mut u8,
) -> HurrayStatus {
    boundary(|| {
        // SAFETY: forwarded.
        let i = unsafe { item_ref(item, "item")? };
        // SAFETY: NULL reported, else writable.
        unsafe { put(out, "out", i.is_composite) }
    })
}

/// Borrows the item's tensor: the tensor of a plain item, the head of a composite.
/// Works on items of any copy of the library.
///
/// Errors: `HURRAY_ERR_NULL_POINTER` (`item`, `out`); `HURRAY_ERR_ABI_VERSION`;
/// `HURRAY_ERR_INVALID_ARGUMENT` (not an item).
///
/// Ownership: `*out` borrowed, valid until the item is destroyed; do not destroy it.
///
/// # Safety
/// `item` NULL or a live item; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn hurray_item_tensor(
    item: *const HurrayItem,
    out: *mut *const HurrayTensor,
) -> HurrayStatus {
    boundary(|| {
        // SAFETY: forwarded.
        let i = unsafe { item_ref(item, "item")? };
        // SAFETY: NULL reported, else writable.
        unsafe { put(out, "out", i.tensor) }
    })
}

/// Number of members a composite holds (for one read from a container, the head's
/// `member_count`; for one being built, those pushed so far).
///
/// Errors: `HURRAY_ERR_NULL_POINTER` (`item`, `out`); `HURRAY_ERR_ABI_VERSION`;
/// `HURRAY_ERR_INVALID_ARGUMENT` (not an item); `HURRAY_ERR_NOT_APPLICABLE` (a plain
/// tensor item).
///
/// Ownership: `*out` written by value; nothing to free.
///
/// # Safety
/// `item` NULL or a live item; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn hurray_item_member_count(
    item: *const HurrayItem,
    out: *mut u64,
) -> HurrayStatus {
    boundary(|| {
        // SAFETY: forwarded.
        let i = unsafe { item_ref(item, "item")? };
        need(out, "out")?;
        if i.is_composite == 0 {
            return Err(not_applicable("a plain tensor item has no members"));
        }
        // SAFETY: checked non-null.
        unsafe { put(out, "out", i.member_count) }
    })
}

/// Borrows member `index` of a composite (a tensor item or a nested composite).
///
/// Errors: `HURRAY_ERR_NULL_POINTER` (`item`, `out`); `HURRAY_ERR_ABI_VERSION`;
/// `HURRAY_ERR_INVALID_ARGUMENT` (not an item); `HURRAY_ERR_NOT_APPLICABLE` (a plain
/// tensor item); `HURRAY_ERR_OUT_OF_RANGE` (`index` >= member count).
///
/// Ownership: `*out` borrowed, valid until the composite is destroyed; do not destroy it.
///
/// # Safety
/// `item` NULL or a live item; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn hurray_item_member(
    item: *const HurrayItem,
    index: u64,
    out: *mut *const HurrayItem,
) -> HurrayStatus {
    boundary(|| {
        // SAFETY: forwarded.
        let i = unsafe { item_ref(item, "item")? };
        need(out, "out")?;
        if i.is_composite == 0 {
            return Err(not_applicable("a plain tensor item has no members"));
        }
        if index >= i.member_count {
            return Err(FfiError::new(
                HURRAY_ERR_OUT_OF_RANGE,
                format!("member {index} is past the composite's {}", i.member_count),
            ));
        }
        // SAFETY: members holds member_count valid pointers (frozen fields of every build).
        let m = unsafe { *i.members.add(index as usize) };
        // SAFETY: checked non-null.
        unsafe { put(out, "out", m.cast_const()) }
    })
}

/// Destroys an item (any copy of the library made it) with its tensor and members,
/// and nulls `*item`; each release runs when nothing else holds that memory. NULL and
/// `*item == NULL` are no-ops.
///
/// Errors: `HURRAY_ERR_ABI_VERSION`; `HURRAY_ERR_INVALID_ARGUMENT` (a member of
/// another item, or not an item); `HURRAY_ERR_DOUBLE_DESTROY` (debug builds, stale
/// pointer).
///
/// Ownership: the handle, its tensor and members are freed; borrowed views become invalid.
///
/// # Safety
/// `item` NULL, or pointing at NULL or a live item handle.
#[no_mangle]
pub unsafe extern "C" fn hurray_item_destroy(item: *mut *mut HurrayItem) -> HurrayStatus {
    // SAFETY: forwarded.
    boundary(|| unsafe { handle::destroy(item, "item") })
}

#[cfg(test)]
mod tests {
    use super::*;
    use hurray_core::{
        CombineOp, CompositeHead, CompositionRule, ElementType, Shard, TensorDescriptor,
    };

    /// A [2] float32 member at `offset` of a [4] whole.
    fn member(offset: u64) -> hurray_io::Item {
        let mut d = TensorDescriptor::dense(ElementType::Float32, &[2]).unwrap();
        d.shard = Some(Shard {
            parent_shape: vec![4],
            offset: vec![offset],
        });
        let t = hurray_io::Tensor::new(d, vec![hurray_io::Buffer::copy_from(&[0; 8])]).unwrap();
        hurray_io::Item::Tensor(t)
    }

    fn partition(offsets: &[u64]) -> hurray_io::Item {
        let mut h = TensorDescriptor::dense(ElementType::Float32, &[4]).unwrap();
        h.layout = Layout::CompositeHead(CompositeHead {
            rule: CompositionRule::Partition,
            combine_op: CombineOp::None,
            member_count: offsets.len() as u32,
        });
        h.buffers.clear();
        hurray_io::Item::Composite(hurray_io::Composite {
            head: hurray_io::Tensor::new(h, Vec::new()).unwrap(),
            members: offsets.iter().map(|&o| member(o)).collect(),
        })
    }

    #[test]
    fn check_rules_accepts_a_tiling_and_names_an_overlap() {
        assert!(HurrayItem::check_rules(&partition(&[0, 2])).is_ok());
        let e = HurrayItem::check_rules(&partition(&[0, 1])).unwrap_err();
        assert_eq!(e.status, HURRAY_ERR_FORMAT);
        assert!(e.message.contains("overlap"), "{}", e.message);
        // The handle's validate runs the same rules.
        let item = HurrayItem::from_io(partition(&[0, 2])).unwrap();
        assert!(item.validate().is_ok());
        assert!(HurrayItem::check_rules(&member(0)).is_ok());
    }
}
