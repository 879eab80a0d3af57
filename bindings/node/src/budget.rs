//! Native resources the garbage collector cannot see the scarcity of, counted while
//! they actually exist: memory mappings (a file's mapping lives as long as the
//! reader *or any tensor, item or view taken from it*) and the bytes of decoded
//! tensors (freed only when their objects are closed or finalized, and Node runs
//! napi finalizers only when the event loop turns, never inside a synchronous loop).
//!
//! A [`Token`] adds its amount to a counter when made and takes it back when
//! dropped; the handle owning the native resource holds it (in an `Arc` shared by
//! everything that keeps the resource alive), so the count falls exactly when the
//! resource is released. New resources are refused with `HURRAY_ERR_LIMIT` past a
//! budget, before the operating system refuses them (an abort, or the OOM killer).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use crate::error::{err, Result};

/// One resource's share of a counter, given back on drop.
pub(crate) struct Token {
    counter: &'static AtomicU64,
    amount: u64,
}

impl Token {
    /// Adds `amount` to `counter` until the returned token is dropped.
    pub(crate) fn new(counter: &'static AtomicU64, amount: u64) -> Arc<Token> {
        counter.fetch_add(amount, Ordering::Relaxed);
        Arc::new(Token { counter, amount })
    }
}

impl Drop for Token {
    fn drop(&mut self) {
        self.counter.fetch_sub(self.amount, Ordering::Relaxed);
    }
}

/// The tokens a native handle holds (dropped after the handle is destroyed).
pub(crate) type Tokens = Vec<Arc<Token>>;

/// File mappings alive in this process (readers, and tensors/items/views of them).
pub(crate) static LIVE_MAPPINGS: AtomicU64 = AtomicU64::new(0);

/// Bytes of decoded tensors and items alive (not yet closed or finalized).
pub(crate) static LIVE_DECODED_BYTES: AtomicU64 = AtomicU64::new(0);

/// How many mappings may be alive: 7/8 of Linux's `vm.max_map_count` (the rest of
/// the process needs mappings too; when none are left even `malloc` fails and the
/// process aborts). No limit elsewhere.
pub(crate) fn max_mappings() -> u64 {
    static MAX: OnceLock<u64> = OnceLock::new();
    *MAX.get_or_init(|| {
        std::fs::read_to_string("/proc/sys/vm/max_map_count")
            .ok()
            .and_then(|s| s.trim().parse::<u64>().ok())
            .map_or(u64::MAX, |n| n / 8 * 7)
    })
}

/// `ERR_HURRAY_LIMIT` when no further mapping may be made.
pub(crate) fn check_mappings() -> Result<()> {
    let live = LIVE_MAPPINGS.load(Ordering::Relaxed);
    if live >= max_mappings() {
        return Err(err(
            "HURRAY_ERR_LIMIT",
            format!(
                "{live} file mappings are alive (FileReaders, and tensors, items or views \
                 taken from them), near the process's limit (vm.max_map_count); close() \
                 readers and tensors when done, or yield to the event loop so dropped \
                 ones are finalized"
            ),
        ));
    }
    Ok(())
}

/// The budget for bytes of decoded tensors alive: `$HURRAY_NODE_MAX_DECODED_BYTES`
/// when set (0: no limit), else half the physical memory (no limit when unknown).
pub(crate) fn max_decoded_bytes() -> u64 {
    static MAX: OnceLock<u64> = OnceLock::new();
    *MAX.get_or_init(|| {
        if let Some(v) = std::env::var("HURRAY_NODE_MAX_DECODED_BYTES")
            .ok()
            .and_then(|s| s.trim().parse::<u64>().ok())
        {
            return if v == 0 { u64::MAX } else { v };
        }
        std::fs::read_to_string("/proc/meminfo")
            .ok()
            .and_then(|s| {
                let line = s.lines().find(|l| l.starts_with("MemTotal:"))?;
                line.split_whitespace().nth(1)?.parse::<u64>().ok()
            })
            .map_or(u64::MAX, |kib| kib.saturating_mul(1024) / 2)
    })
}

/// `ERR_HURRAY_LIMIT` when the decoded tensors alive already hold the budget.
pub(crate) fn check_decoded() -> Result<()> {
    let live = LIVE_DECODED_BYTES.load(Ordering::Relaxed);
    let max = max_decoded_bytes();
    if live >= max {
        return Err(err(
            "HURRAY_ERR_LIMIT",
            format!(
                "too much native memory held by unreleased tensors ({live} bytes of \
                 decoded tensors alive, budget {max}, $HURRAY_NODE_MAX_DECODED_BYTES); \
                 close() tensors or yield to the event loop so dropped ones are finalized"
            ),
        ));
    }
    Ok(())
}
