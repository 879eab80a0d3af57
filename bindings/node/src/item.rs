//! `Item`: a plain tensor or a composite (a head tensor plus ordered members, nested),
//! as files and streams carry them.

use std::ptr;
use std::sync::Arc;

use hurray_ffi::item::{
    hurray_item_composite_new, hurray_item_composite_push, hurray_item_destroy,
    hurray_item_from_tensor, hurray_item_is_composite, hurray_item_member,
    hurray_item_member_count, hurray_item_tensor,
};
use hurray_ffi::HurrayItem;
use napi::bindgen_prelude::*;
use napi_derive::napi;

use crate::budget::{Token, Tokens, LIVE_DECODED_BYTES};
use crate::error::{check, closed, Result};
use crate::tensor::{adjust_external, check_lent_refs, copy_lent_refs, delete_refs, Tensor};

/// Nesting depth of an item: 0 for a plain tensor, 1 + the deepest member for a
/// composite (as the library counts it).
fn depth_of(it: *const HurrayItem) -> Result<u32> {
    let mut composite = 0u8;
    // SAFETY: `it` is a live item node.
    check(unsafe { hurray_item_is_composite(it, &mut composite) })?;
    if composite == 0 {
        return Ok(0);
    }
    let mut n = 0u64;
    // SAFETY: `it` live.
    check(unsafe { hurray_item_member_count(it, &mut n) })?;
    let mut deepest = 0;
    for i in 0..n {
        let mut m = ptr::null();
        // SAFETY: `it` live, `i` < count.
        check(unsafe { hurray_item_member(it, i, &mut m) })?;
        deepest = deepest.max(depth_of(m)?);
    }
    Ok(deepest + 1)
}

/// One owned `HurrayItem *` (the root of an item tree), destroyed with the last
/// `Arc`: the `Item` objects of its nodes and the Tensors borrowed from them.
pub struct ItemHandle(*mut HurrayItem, Tokens);

// SAFETY: as `tensor::Handle`: the C ABI lets a handle move between threads and be
// destroyed on any; this binding reads it on the JS thread only.
unsafe impl Send for ItemHandle {}
// SAFETY: shared access is read-only, on the JS thread.
unsafe impl Sync for ItemHandle {}

impl Drop for ItemHandle {
    fn drop(&mut self) {
        // SAFETY: owned root item or NULL; destroy nulls it (destroying its tensors,
        // whose releases run).
        unsafe { hurray_item_destroy(&mut self.0) };
    }
}

/// A file or stream item: one tensor, or a composite whose head tensor describes how
/// its members (items themselves) combine. `tensor` is the plain tensor or the head.
/// Every object taken from an item (members, tensors) keeps the whole item alive;
/// `close()` drops this object's reference.
#[napi(custom_finalize)]
pub struct Item {
    inner: Option<(Arc<ItemHandle>, *const HurrayItem)>,
    /// Weak napi references to the ArrayBuffers lent to the tensors that moved into
    /// this item (`Tensor.fromBuffer`), checked for detachment before the memory is
    /// used; copied into the members and tensors taken from it.
    lent: Vec<napi::sys::napi_ref>,
    /// Bytes reported to V8 as external memory for this object (library memory of
    /// a decoded or mapped item), given back on `close()` or finalization.
    charged: i64,
}

impl ObjectFinalize for Item {
    fn finalize(mut self, env: Env) -> napi::Result<()> {
        delete_refs(env.raw(), &mut self.lent);
        adjust_external(env.raw(), -std::mem::take(&mut self.charged));
        Ok(())
    }
}

impl Item {
    /// Takes ownership of a root item the library returned, with the counted
    /// resources it keeps alive (dropped after it is destroyed).
    pub(crate) fn from_raw_holding(p: *mut HurrayItem, tokens: Tokens) -> Item {
        Item {
            inner: Some((Arc::new(ItemHandle(p, tokens)), p)),
            lent: Vec::new(),
            charged: 0,
        }
    }

    /// A root item over library memory (a decoder's), its bytes charged to V8 as
    /// external memory.
    pub(crate) fn owned(env: &Env, p: *mut HurrayItem) -> Result<Item> {
        let mut regions = Vec::new();
        crate::stream::item_regions(p, &mut regions)?;
        let bytes = regions
            .iter()
            .fold(0i64, |a, &(_, n)| a.saturating_add(n as i64));
        let token = Token::new(&LIVE_DECODED_BYTES, bytes as u64);
        Ok(Item::from_raw_holding(p, vec![token]).charge(env, bytes))
    }

    /// Reports `bytes` of native memory this object keeps alive to V8 (undone on
    /// `close()` or finalization).
    pub(crate) fn charge(mut self, env: &Env, bytes: i64) -> Item {
        adjust_external(env.raw(), bytes);
        self.charged += bytes;
        self
    }

    /// Checks, without changing anything, that this is a root item held only
    /// here (so `take_root` would succeed); returns its nesting depth.
    fn check_root(&self) -> Result<u32> {
        let (root, node) = self.inner.as_ref().ok_or_else(|| closed("Item"))?;
        if !std::ptr::eq(root.0, *node) {
            return Err(crate::error::err(
                "HURRAY_ERR_INVALID_ARGUMENT",
                "a member of another item cannot move into a composite",
            ));
        }
        if Arc::strong_count(root) != 1 {
            return Err(crate::error::err(
                "HURRAY_ERR_STATE",
                "the item has live members or tensors taken from it",
            ));
        }
        depth_of(*node)
    }

    /// `HURRAY_ERR_STATE` when an ArrayBuffer lent to a tensor of this item was
    /// detached: its memory is gone.
    pub(crate) fn check_lent(&self, env: napi::sys::napi_env) -> Result<()> {
        check_lent_refs(env, &self.lent)
    }

    pub(crate) fn node(&self) -> Result<(&Arc<ItemHandle>, *const HurrayItem)> {
        self.inner
            .as_ref()
            .map(|(r, p)| (r, *p))
            .ok_or_else(|| closed("Item"))
    }

    /// Takes the root out to move it into a composite (only a root, held only here).
    fn take_root(&mut self) -> Result<(*mut HurrayItem, Tokens)> {
        let (root, node) = self.inner.take().ok_or_else(|| closed("Item"))?;
        if !std::ptr::eq(root.0, node) {
            self.inner = Some((root, node));
            return Err(crate::error::err(
                "HURRAY_ERR_INVALID_ARGUMENT",
                "a member of another item cannot move into a composite",
            ));
        }
        match Arc::try_unwrap(root) {
            Ok(mut h) => Ok((
                std::mem::replace(&mut h.0, ptr::null_mut()),
                std::mem::take(&mut h.1),
            )),
            Err(root) => {
                self.inner = Some((root, node));
                Err(crate::error::err(
                    "HURRAY_ERR_STATE",
                    "the item has live members or tensors taken from it",
                ))
            }
        }
    }
}

#[napi]
impl Item {
    /// An item of one tensor, which moves in: `tensor` is closed afterwards (read it
    /// back with `item.tensor`).
    ///
    /// Throws: `HURRAY_ERR_STATE` (closed, views of it are alive, or the
    /// ArrayBuffer lent to it was detached), `HURRAY_ERR_INVALID_ARGUMENT` (a
    /// composite head, or already in an item).
    #[napi(factory)]
    pub fn of(env: Env, tensor: &mut Tensor) -> Result<Item> {
        tensor.check_lent(env.raw())?;
        let (mut t, tokens) = tensor.take_owned()?;
        let mut out = ptr::null_mut();
        // SAFETY: `t` is an owned live tensor; on success it moves in (nulled); on
        // error nothing moves and it is destroyed here, once.
        let s = unsafe { hurray_item_from_tensor(&mut t, &mut out) };
        if s != hurray_ffi::HURRAY_OK {
            // SAFETY: still ours after a failed move.
            unsafe { hurray_ffi::tensor::hurray_tensor_destroy(&mut t) };
            return Err(check(s).unwrap_err());
        }
        let mut item = Item::from_raw_holding(out, tokens);
        item.charged = tensor.take_charge(); // the memory moved in with the handle
        item.lent = tensor.take_lent(); // and the lent buffers' checks
        Ok(item)
    }

    /// A composite: `head` (a tensor of layout `composite_head`, which names the
    /// rule and member count) and its `members`, in order. Everything moves in: the
    /// head and the members are closed afterwards. Everything is checked before
    /// anything moves: a refused call leaves the head and every member usable.
    ///
    /// Throws: `HURRAY_ERR_INVALID_ARGUMENT` (not a head, `members.length` not the
    /// head's member count, a member of another item or given twice),
    /// `HURRAY_ERR_STATE` (closed or still viewed inputs), `HURRAY_ERR_LIMIT`
    /// (nesting too deep).
    #[napi(factory)]
    pub fn composite(env: Env, head: &mut Tensor, members: Vec<&mut Item>) -> Result<Item> {
        // Everything is checked before anything moves: a refused call leaves the
        // head and every member as they were.
        let expected = head.composite_member_count()?;
        if expected != members.len() as u64 {
            return Err(crate::error::err(
                "HURRAY_ERR_INVALID_ARGUMENT",
                format!(
                    "the composite head declares {expected} member(s), {} given",
                    members.len()
                ),
            ));
        }
        head.check_owned()?;
        head.check_lent(env.raw())?;
        let limit = u64::from(crate::stream::default_composite_depth()?);
        let mut seen = Vec::with_capacity(members.len());
        for (i, m) in members.iter().enumerate() {
            let depth = m.check_root()?;
            if u64::from(depth) + 1 > limit {
                return Err(crate::error::err(
                    "HURRAY_ERR_LIMIT",
                    format!(
                        "member {i} would nest composites {} levels; the limit is {limit}",
                        depth + 1
                    ),
                ));
            }
            let p = m.node()?.1;
            if seen.contains(&p) {
                return Err(crate::error::err(
                    "HURRAY_ERR_INVALID_ARGUMENT",
                    format!("member {i} is given twice"),
                ));
            }
            seen.push(p);
        }
        let (mut t, tokens) = head.take_owned()?;
        let mut out = ptr::null_mut();
        // SAFETY: as in `of`.
        let s = unsafe { hurray_item_composite_new(&mut t, &mut out) };
        if s != hurray_ffi::HURRAY_OK {
            // SAFETY: still ours after a failed move.
            unsafe { hurray_ffi::tensor::hurray_tensor_destroy(&mut t) };
            return Err(check(s).unwrap_err());
        }
        let mut item = Item::from_raw_holding(out, tokens);
        item.charged = head.take_charge(); // charges move in with the handles
        item.lent = head.take_lent();
        for m in members {
            let (mut root, root_tokens) = m.take_root()?;
            // The member's counted resources move in with it (the handle was just
            // made, so it is not shared yet).
            if let Some(h) = item.inner.as_mut().and_then(|(h, _)| Arc::get_mut(h)) {
                h.1.extend(root_tokens);
            }
            item.charged += std::mem::take(&mut m.charged);
            item.lent.append(&mut m.lent);
            // SAFETY: `out` is the live composite; `root` an owned item that moves in
            // on success; on failure it is ours and destroyed here.
            let s = unsafe { hurray_item_composite_push(out, &mut root) };
            if s != hurray_ffi::HURRAY_OK {
                // SAFETY: still ours after a failed move.
                unsafe { hurray_item_destroy(&mut root) };
                // Not expected after the checks above; the item (and what moved in)
                // is dropped here, so its charge is given back.
                adjust_external(env.raw(), -std::mem::take(&mut item.charged));
                return Err(check(s).unwrap_err());
            }
        }
        Ok(item)
    }

    /// Whether this is a composite (a head plus members).
    #[napi(getter)]
    pub fn is_composite(&self) -> Result<bool> {
        let (_, p) = self.node()?;
        let mut b = 0u8;
        // SAFETY: `p` is a live node of the root held in `self`.
        check(unsafe { hurray_item_is_composite(p, &mut b) })?;
        Ok(b != 0)
    }

    /// The plain tensor, or the composite's head. It keeps the item alive.
    #[napi(getter)]
    pub fn tensor(&self, env: Env) -> Result<Tensor> {
        let (root, p) = self.node()?;
        let mut t = ptr::null();
        // SAFETY: `p` live; the tensor is borrowed while the root lives, and the
        // returned Tensor holds the root.
        check(unsafe { hurray_item_tensor(p, &mut t) })?;
        Ok(Tensor::borrowed(t, root.clone()).with_lent(env.raw(), &self.lent))
    }

    /// The members, in order (empty for a plain tensor). Each keeps the item alive.
    #[napi(getter)]
    pub fn members(&self, env: Env) -> Result<Vec<Item>> {
        if !self.is_composite()? {
            return Ok(Vec::new());
        }
        let (root, p) = self.node()?;
        let mut n = 0u64;
        // SAFETY: `p` live.
        check(unsafe { hurray_item_member_count(p, &mut n) })?;
        (0..n)
            .map(|i| {
                let mut m = ptr::null();
                // SAFETY: `p` live, `i` < count; the member is borrowed from the root.
                check(unsafe { hurray_item_member(p, i, &mut m) })?;
                Ok(Item {
                    inner: Some((root.clone(), m)),
                    lent: copy_lent_refs(env.raw(), &self.lent),
                    charged: 0,
                })
            })
            .collect()
    }

    /// Drops this object's reference (idempotent); the item goes with the last one.
    #[napi]
    pub fn close(&mut self, env: Env) {
        self.inner = None;
        delete_refs(env.raw(), &mut self.lent);
        adjust_external(env.raw(), -std::mem::take(&mut self.charged));
    }
}
