//! `Item`: a plain tensor or a composite (a head tensor plus ordered members, nested),
//! as files and streams carry them. Built and read through hurray-ffi's safe Rust
//! face (`HurrayItem`); no `hurray_*` C function is called.

use std::sync::Arc;

use hurray_ffi::HurrayItem;
use napi::bindgen_prelude::*;
use napi_derive::napi;

use crate::budget::{Token, Tokens, LIVE_DECODED_BYTES};
use crate::error::{closed, err, ffi, Result};
use crate::tensor::{
    adjust_external, check_lent_refs, copy_lent_refs, delete_refs, tensor_bytes, Tensor,
};

/// Nesting depth of an item: 0 for a plain tensor, 1 + the deepest member for a
/// composite (as the library counts it).
fn depth_of(it: &HurrayItem) -> u32 {
    if !it.is_composite() {
        return 0;
    }
    1 + it.members_iter().map(depth_of).max().unwrap_or(0)
}

/// Bytes of every tensor of an item (head and members, nested).
pub(crate) fn item_bytes(it: &HurrayItem) -> i64 {
    it.members_iter()
        .fold(tensor_bytes(it.tensor_handle()), |a, m| {
            a.saturating_add(item_bytes(m))
        })
}

/// One owned root item, dropped (with its tensors, whose releases run) with the last
/// `Arc`: the `Item` objects of its nodes and the Tensors taken from them hold it.
pub struct ItemHandle {
    root: Box<HurrayItem>,
    /// Counted resources the item keeps alive; dropped after it (field order).
    tokens: Tokens,
}

// SAFETY: a `HurrayItem` may move between threads and be dropped on any thread (its
// tensors' releases are thread-safe by the ABI's contract); this binding reads it on
// the JS thread and, during `writeItemAsync`, on one libuv pool thread
// (file_async.rs); the final drop may happen anywhere.
unsafe impl Send for ItemHandle {}
// SAFETY: shared access is read-only (an item's tree never changes once made and
// holds no interior mutability), so concurrent reads do not race.
unsafe impl Sync for ItemHandle {}

impl ItemHandle {
    /// The node at member `path` (indices from the root; empty: the root).
    ///
    /// Errors: `ERR_HURRAY_INTERNAL` for a path that leads nowhere (paths are
    /// made from the item's own members, and an item's tree never changes once
    /// shared, so this does not happen).
    pub(crate) fn node(&self, path: &[u32]) -> Result<&HurrayItem> {
        let mut n: &HurrayItem = &self.root;
        for &i in path {
            n = n.members_iter().nth(i as usize).ok_or_else(|| {
                err(
                    "HURRAY_ERR_INTERNAL_PANIC",
                    format!("item member path {path:?} leads nowhere"),
                )
            })?;
        }
        Ok(n)
    }
}

/// A file or stream item: one tensor, or a composite whose head tensor describes how
/// its members (items themselves) combine. `tensor` is the plain tensor or the head.
/// Every object taken from an item (members, tensors) keeps the whole item alive;
/// `close()` drops this object's reference.
#[napi(custom_finalize)]
pub struct Item {
    /// The root, and this node's member path below it (empty: the root).
    inner: Option<(Arc<ItemHandle>, Vec<u32>)>,
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
    /// A root item, with the counted resources it keeps alive (dropped after it).
    pub(crate) fn holding(root: Box<HurrayItem>, tokens: Tokens) -> Item {
        Item {
            inner: Some((Arc::new(ItemHandle { root, tokens }), Vec::new())),
            lent: Vec::new(),
            charged: 0,
        }
    }

    /// A root item over library memory (a decoder's), its bytes charged to V8 as
    /// external memory.
    pub(crate) fn owned(env: &Env, root: Box<HurrayItem>) -> Item {
        let bytes = item_bytes(&root);
        let token = Token::new(&LIVE_DECODED_BYTES, bytes as u64);
        Item::holding(root, vec![token]).charge(env, bytes)
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
        let (root, path) = self.inner.as_ref().ok_or_else(|| closed("Item"))?;
        if !path.is_empty() {
            return Err(err(
                "HURRAY_ERR_INVALID_ARGUMENT",
                "a member of another item cannot move into a composite",
            ));
        }
        if Arc::strong_count(root) != 1 {
            return Err(err(
                "HURRAY_ERR_STATE",
                "the item has live members or tensors taken from it",
            ));
        }
        Ok(depth_of(&root.root))
    }

    /// `ERR_HURRAY_STATE` when an ArrayBuffer lent to a tensor of this item was
    /// detached: its memory is gone.
    pub(crate) fn check_lent(&self, env: napi::sys::napi_env) -> Result<()> {
        check_lent_refs(env, &self.lent)
    }

    /// The root this node belongs to, and the node.
    /// The root and this node's member path, shared (for an asynchronous write).
    ///
    /// Errors: `ERR_HURRAY_STATE` when closed.
    pub(crate) fn shared(&self) -> Result<(Arc<ItemHandle>, Vec<u32>)> {
        let (root, path) = self.inner.as_ref().ok_or_else(|| closed("Item"))?;
        Ok((root.clone(), path.clone()))
    }

    pub(crate) fn node(&self) -> Result<(&Arc<ItemHandle>, &HurrayItem)> {
        let (root, path) = self.inner.as_ref().ok_or_else(|| closed("Item"))?;
        Ok((root, root.node(path)?))
    }

    /// Takes the root out to move it into a composite (only a root, held only here).
    fn take_root(&mut self) -> Result<(Box<HurrayItem>, Tokens)> {
        self.check_root()?;
        let (root, _) = self.inner.take().ok_or_else(|| closed("Item"))?;
        match Arc::try_unwrap(root) {
            Ok(h) => Ok((h.root, h.tokens)),
            Err(root) => {
                self.inner = Some((root, Vec::new()));
                Err(err(
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
    /// Throws: `ERR_HURRAY_STATE` (closed, views of it are alive, or the
    /// ArrayBuffer lent to it was detached), `ERR_HURRAY_INVALID_ARGUMENT` (a
    /// composite head, or already in an item).
    // Configurable: lib/idioms.js marks the Item it returns (see there).
    #[napi(factory, configurable = true)]
    pub fn of(env: Env, tensor: &mut Tensor) -> Result<Item> {
        tensor.check_lent(env.raw())?;
        if tensor.composite_member_count().is_ok() {
            return Err(err(
                "HURRAY_ERR_INVALID_ARGUMENT",
                "the tensor is a composite head; make a composite item from it",
            ));
        }
        let (t, tokens) = tensor.take_owned()?;
        let it = HurrayItem::from_tensor(*t).map_err(ffi)?;
        let mut item = Item::holding(Box::new(it), tokens);
        item.charged = tensor.take_charge(); // the memory moved in with the handle
        item.lent = tensor.take_lent(); // and the lent buffers' checks
        Ok(item)
    }

    /// A composite: `head` (a tensor of layout `composite_head`, which names the
    /// rule and member count) and its `members`, in order. Everything moves in: the
    /// head and the members are closed afterwards. Everything is checked before
    /// anything moves: a refused call leaves the head and every member usable.
    ///
    /// Throws: `ERR_HURRAY_INVALID_ARGUMENT` (not a head, `members.length` not the
    /// head's member count, a member of another item or given twice),
    /// `ERR_HURRAY_STATE` (closed or still viewed inputs), `ERR_HURRAY_LIMIT`
    /// (nesting too deep).
    // Configurable: lib/idioms.js marks the Item it returns (see there).
    #[napi(factory, configurable = true)]
    pub fn composite(env: Env, head: &mut Tensor, members: Vec<&mut Item>) -> Result<Item> {
        // Everything is checked before anything moves: a refused call leaves the
        // head and every member as they were.
        let expected = head.composite_member_count()?;
        if expected != members.len() as u64 {
            return Err(err(
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
        let mut seen: Vec<*const ItemHandle> = Vec::with_capacity(members.len());
        for (i, m) in members.iter().enumerate() {
            let depth = m.check_root()?;
            if u64::from(depth) + 1 > limit {
                return Err(err(
                    "HURRAY_ERR_LIMIT",
                    format!(
                        "member {i} would nest composites {} levels; the limit is {limit}",
                        depth + 1
                    ),
                ));
            }
            let p = Arc::as_ptr(m.node()?.0);
            if seen.contains(&p) {
                return Err(err(
                    "HURRAY_ERR_INVALID_ARGUMENT",
                    format!("member {i} is given twice"),
                ));
            }
            seen.push(p);
        }
        let (t, mut tokens) = head.take_owned()?;
        let mut composite = HurrayItem::composite(*t).map_err(ffi)?;
        let mut charged = head.take_charge(); // charges move in with the handles
        let mut lent = head.take_lent();
        for m in members {
            let (root, root_tokens) = m.take_root()?;
            // The member's counted resources move in with it.
            tokens.extend(root_tokens);
            charged += std::mem::take(&mut m.charged);
            lent.append(&mut m.lent);
            // Not expected after the checks above; on error everything moved in so
            // far is dropped here, so its charge is given back.
            if let Err((e, _)) = composite.push(root) {
                adjust_external(env.raw(), -charged);
                delete_refs(env.raw(), &mut lent);
                return Err(ffi(e));
            }
        }
        let mut item = Item::holding(Box::new(composite), tokens);
        item.charged = charged;
        item.lent = lent;
        Ok(item)
    }

    /// Whether this is a composite (a head plus members).
    #[napi(getter)]
    pub fn is_composite(&self) -> Result<bool> {
        Ok(self.node()?.1.is_composite())
    }

    /// The plain tensor, or the composite's head. It keeps the item alive.
    #[napi(getter)]
    pub fn tensor(&self, env: Env) -> Result<Tensor> {
        let (root, path) = self.inner.as_ref().ok_or_else(|| closed("Item"))?;
        Ok(Tensor::member(root.clone(), path.clone()).with_lent(env.raw(), &self.lent))
    }

    /// The members, in order (empty for a plain tensor). Each keeps the item alive.
    #[napi(getter)]
    pub fn members(&self, env: Env) -> Result<Vec<Item>> {
        let (root, path) = self.inner.as_ref().ok_or_else(|| closed("Item"))?;
        let n = root.node(path)?.members_iter().len();
        Ok((0..n as u32)
            .map(|i| {
                let mut p = path.clone();
                p.push(i);
                Item {
                    inner: Some((root.clone(), p)),
                    lent: copy_lent_refs(env.raw(), &self.lent),
                    charged: 0,
                }
            })
            .collect())
    }

    /// Drops this object's reference (idempotent); the item goes with the last one.
    #[napi]
    pub fn close(&mut self, env: Env) {
        self.inner = None;
        delete_refs(env.raw(), &mut self.lent);
        adjust_external(env.raw(), -std::mem::take(&mut self.charged));
    }
}
