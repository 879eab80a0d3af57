//! The bounded in-memory store behind `TENSOR_PUT` (B.15).
//!
//! Policy: **refusal, never eviction.** Every PUT reserves its bytes (descriptor
//! bytes plus `total_data_bytes`, for each tensor of a composite as it arrives)
//! before anything is allocated; a reservation that would take stored plus
//! reserved bytes above the cap is refused (the server answers `ERROR`
//! [`STORE_FULL`](crate::wire::code::STORE_FULL) and closes the stream). A PUT
//! under a key that is already stored replaces it once the new tensor is complete;
//! until then both count. So the store's bytes never exceed the cap.
//!
//! Keys are the names the items get when the store is persisted to a `.hrry`
//! (`--persist`): a composite under key `k` names its tensors `k`, `k/0`, `k/1`,
//! ... (hurray-io's `member_names`). A PUT whose names would collide with another
//! key's is refused when it completes, so persisting never meets a duplicate name.

use hurray_io::file::encoder::member_names;
use hurray_io::Item;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

/// Bytes an item occupies in the store: every tensor's data plus its encoded
/// descriptor.
pub fn item_cost(item: &Item) -> u64 {
    let mut n = 0u64;
    item.for_each_tensor(&mut |t| {
        n = n
            .saturating_add(t.data_len())
            .saturating_add(t.descriptor().encoded_len() as u64);
    });
    n
}

#[derive(Debug, Default)]
struct Inner {
    items: BTreeMap<String, (Item, u64)>,
    /// Every file name the stored items occupy, to the key that occupies it.
    names: BTreeMap<String, String>,
    stored: u64,
    reserved: u64,
}

/// The store: keys to items, with a byte cap. Shared by every connection.
#[derive(Debug)]
pub struct Store {
    cap: u64,
    inner: Mutex<Inner>,
}

/// Bytes held for a PUT in progress; released on drop unless committed.
#[derive(Debug)]
pub struct Reservation {
    store: Arc<Store>,
    bytes: u64,
}

impl Store {
    /// An empty store holding at most `cap` bytes.
    pub fn new(cap: u64) -> Store {
        Store {
            cap,
            inner: Mutex::new(Inner::default()),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        // A panic while holding the lock cannot leave the counters half-updated
        // (each update is one statement), so a poisoned lock is still consistent.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The cap in bytes.
    pub fn cap(&self) -> u64 {
        self.cap
    }

    /// Bytes held by stored items plus PUTs in progress (always ≤ [`cap`](Self::cap)).
    pub fn used(&self) -> u64 {
        let g = self.lock();
        g.stored + g.reserved
    }

    /// Number of stored keys.
    pub fn len(&self) -> usize {
        self.lock().items.len()
    }

    /// True when nothing is stored.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The item under `key` (a clone sharing its buffers).
    pub fn get(&self, key: &str) -> Option<Item> {
        self.lock().items.get(key).map(|(i, _)| i.clone())
    }

    /// Every stored item, by key order.
    pub fn snapshot(&self) -> Vec<(String, Item)> {
        self.lock()
            .items
            .iter()
            .map(|(k, (i, _))| (k.clone(), i.clone()))
            .collect()
    }

    /// Reserves `bytes` for a PUT; `None` when the cap would be exceeded.
    pub fn reserve(self: &Arc<Self>, bytes: u64) -> Option<Reservation> {
        let mut r = Reservation {
            store: self.clone(),
            bytes: 0,
        };
        r.grow(bytes).then_some(r)
    }

    /// Stores `item` under `key`, replacing (and releasing) any previous item; the
    /// reservation grows to the item's real cost ([`item_cost`]) first and its bytes
    /// become the stored item's.
    ///
    /// Errors: [`CommitError::Full`] when growing the reservation would pass the
    /// cap; [`CommitError::NameClash`] when one of the names the item would have in
    /// a persisted file is another key's (a plain key `a/0` and the first member of
    /// a composite under `a`). Nothing is stored then and the reservation is
    /// released.
    pub fn commit(&self, mut r: Reservation, key: String, item: Item) -> Result<(), CommitError> {
        let names = match &item {
            Item::Tensor(_) => vec![key.clone()],
            Item::Composite(c) => member_names(&key, c),
        };
        {
            let g = self.lock();
            if let Some((name, owner)) = names
                .iter()
                .find_map(|n| g.names.get(n).filter(|o| **o != key).map(|o| (n, o)))
            {
                return Err(CommitError::NameClash(format!(
                    "PUT {key:?} would name a tensor {name:?}, which the item under key \
                     {owner:?} already names (composite members are named KEY/0, KEY/1, ...)"
                )));
            }
        }
        let cost = item_cost(&item);
        if cost > r.bytes && !r.grow(cost - r.bytes) {
            return Err(CommitError::Full);
        }
        let mut g = self.lock();
        // Checked again under this lock: another PUT may have completed meanwhile.
        if let Some(name) = names
            .iter()
            .find(|n| g.names.get(*n).is_some_and(|o| *o != key))
        {
            return Err(CommitError::NameClash(format!(
                "PUT {key:?} would name a tensor {name:?}, which another key already names"
            )));
        }
        // The whole reservation is released (a larger one gives the rest back).
        g.reserved -= r.bytes;
        r.bytes = 0;
        g.stored += cost;
        if let Some((old_item, old)) = g.items.insert(key.clone(), (item, cost)) {
            g.stored -= old;
            let old_names = match &old_item {
                Item::Tensor(_) => vec![key.clone()],
                Item::Composite(c) => member_names(&key, c),
            };
            for n in old_names {
                g.names.remove(&n);
            }
        }
        for n in names {
            g.names.insert(n, key.clone());
        }
        Ok(())
    }
}

/// Why [`Store::commit`] refused an item.
#[derive(Debug)]
pub enum CommitError {
    /// The item does not fit under the cap.
    Full,
    /// One of the item's file names is another key's (the message says which).
    NameClash(String),
}

impl Reservation {
    /// Adds `bytes` to the reservation; false (and nothing added) when the cap
    /// would be exceeded.
    pub fn grow(&mut self, bytes: u64) -> bool {
        let mut g = self.store.lock();
        let total = g
            .stored
            .checked_add(g.reserved)
            .and_then(|u| u.checked_add(bytes));
        match total {
            Some(t) if t <= self.store.cap => {
                g.reserved += bytes;
                self.bytes += bytes;
                true
            }
            _ => false,
        }
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        if self.bytes > 0 {
            self.store.lock().reserved -= self.bytes;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hurray_core::ElementType;
    use hurray_io::Tensor;

    fn item(n: usize) -> Item {
        Item::Tensor(Tensor::from_dense(ElementType::Uint8, &[n as u64], &vec![7; n]).unwrap())
    }

    #[test]
    fn reservations_and_commits_never_pass_the_cap() {
        let s = Arc::new(Store::new(1000));
        let cost = item_cost(&item(400));
        assert!(cost > 400 && cost < 500, "{cost}");
        let r1 = s.reserve(400).unwrap();
        let r2 = s.reserve(400).unwrap();
        assert!(s.reserve(400).is_none(), "a third 400 would pass 1000");
        assert_eq!(s.used(), 800);
        s.commit(r1, "a".into(), item(400)).unwrap();
        assert_eq!(s.used(), 400 + cost);
        // Growing r2 to the real cost would pass the cap: refused, r2 released.
        let big = item(560);
        assert!(s.commit(r2, "b".into(), big).is_err());
        assert_eq!(s.used(), cost);
        assert_eq!(s.len(), 1);
        // A dropped reservation gives its bytes back.
        drop(s.reserve(500).unwrap());
        assert_eq!(s.used(), cost);
    }

    #[test]
    fn replacing_a_key_releases_the_old_item() {
        let s = Arc::new(Store::new(10_000));
        s.commit(s.reserve(0).unwrap(), "k".into(), item(1000))
            .unwrap();
        let first = s.used();
        s.commit(s.reserve(0).unwrap(), "k".into(), item(10))
            .unwrap();
        assert_eq!(s.len(), 1);
        assert_eq!(s.used(), item_cost(&item(10)));
        assert!(s.used() < first);
        assert_eq!(s.get("k"), Some(item(10)));
        assert_eq!(s.snapshot().len(), 1);
    }
}
