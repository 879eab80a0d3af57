//! Shared helpers of the hurray-ffi integration tests: a per-binary lock plus a
//! live-handle check, status assertions, and thin wrappers over the exports.
#![allow(dead_code)] // each test binary uses a different subset

use hurray_ffi::abi::*;
use hurray_ffi::descriptor::*;
use hurray_ffi::*;
use std::ffi::CStr;
use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard};

static LOCK: Mutex<()> = Mutex::new(());

/// Tests in one binary run on parallel threads but share the live-handle counter:
/// each test holds this guard, which serialises them and, when the test ends without
/// panicking, asserts that every handle it made was freed.
pub struct Live {
    start: i64,
    _guard: MutexGuard<'static, ()>,
}

/// Takes the lock and records the live-handle count.
pub fn live() -> Live {
    let guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    Live {
        start: hurray_debug_live_objects(),
        _guard: guard,
    }
}

impl Drop for Live {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            assert_eq!(
                hurray_debug_live_objects(),
                self.start,
                "handles leaked (or were freed twice) by this test"
            );
        }
    }
}

/// The calling thread's last error message.
pub fn last_error() -> String {
    let p = hurray_last_error_message();
    if p.is_null() {
        return String::new();
    }
    // SAFETY: the library returns a NUL-terminated string valid until the next failure.
    unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
}

/// Asserts success, showing the last error otherwise.
#[track_caller]
pub fn ok(s: HurrayStatus) {
    assert_eq!(s, HURRAY_OK, "{}: {}", status_name(s), last_error());
}

/// Asserts a failure with `code` whose message contains `needle`.
#[track_caller]
pub fn err(s: HurrayStatus, code: HurrayStatus, needle: &str) {
    assert_eq!(
        s,
        code,
        "expected {}, got {} ({})",
        status_name(code),
        status_name(s),
        last_error()
    );
    let m = last_error();
    assert!(m.starts_with(status_name(code)), "{m}");
    assert!(m.contains(needle), "message {m:?} lacks {needle:?}");
}

/// `../shared/conformance/descriptors/<name>`, or None (with a note) when absent.
pub fn golden(name: &str) -> Option<Vec<u8>> {
    let p: PathBuf = [
        env!("CARGO_MANIFEST_DIR"),
        "../../shared/conformance/descriptors",
        name,
    ]
    .iter()
    .collect();
    match std::fs::read(&p) {
        Ok(b) => Some(b),
        Err(_) => {
            eprintln!(
                "note: {} not found; skipping this golden vector",
                p.display()
            );
            None
        }
    }
}

/// Names of every golden descriptor file, or empty (with a note) when absent.
pub fn golden_names() -> Vec<String> {
    let dir: PathBuf = [
        env!("CARGO_MANIFEST_DIR"),
        "../../shared/conformance/descriptors",
    ]
    .iter()
    .collect();
    let Ok(rd) = std::fs::read_dir(&dir) else {
        eprintln!("note: {} not found; skipping golden vectors", dir.display());
        return Vec::new();
    };
    let mut v: Vec<String> = rd
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".bin"))
        .collect();
    v.sort();
    v
}

/// Decodes bytes into an owned descriptor (asserting success).
#[track_caller]
pub fn decode(bytes: &[u8]) -> *mut HurrayDescriptor {
    let mut d = std::ptr::null_mut();
    // SAFETY: valid slice and out-pointer.
    ok(unsafe { hurray_descriptor_decode(bytes.as_ptr(), bytes.len() as u64, &mut d) });
    d
}

/// A descriptor of a valid model (through its encoding).
#[track_caller]
pub fn from_model(m: &hurray_core::TensorDescriptor) -> *mut HurrayDescriptor {
    decode(&m.encode().expect("a valid model"))
}

/// The encoding of a descriptor, through the size query then the copy.
#[track_caller]
pub fn encode(d: *const HurrayDescriptor) -> Vec<u8> {
    let mut n = 0u64;
    // SAFETY: live descriptor, size query.
    ok(unsafe { hurray_descriptor_encode(d, std::ptr::null_mut(), 0, &mut n) });
    let mut v = vec![0u8; n as usize];
    let mut m = 0u64;
    // SAFETY: v holds n bytes.
    ok(unsafe { hurray_descriptor_encode(d, v.as_mut_ptr(), n, &mut m) });
    assert_eq!(m, n);
    v
}

/// Destroys an owned descriptor.
#[track_caller]
pub fn destroy(mut d: *mut HurrayDescriptor) {
    // SAFETY: an owned descriptor pointer.
    ok(unsafe { hurray_descriptor_destroy(&mut d) });
    assert!(d.is_null());
}

/// A CPU buffer-table entry of `n` bytes, 64-byte aligned.
pub fn cpu(n: u64) -> HurrayBufferEntry {
    HurrayBufferEntry {
        byte_size: n,
        alignment: 64,
        ..HurrayBufferEntry::default()
    }
}
