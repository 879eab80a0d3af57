//! Putting a finished file at its destination path: the one commit routine every
//! path writer ends with ([`FileWriter`](super::FileWriter),
//! [`AsyncFileWriter`](super) under feature `tokio`, the `hurray` command's
//! outputs, and through `FileWriter` the C ABI and every binding).
//!
//! # Protocol
//!
//! 1. [`PendingFile::create`] creates `.NAME.PID-N-A.hrry-tmp` in the destination's
//!    directory, exclusively (`O_EXCL`; `NAME` is the destination's file name, `PID`
//!    the writing process, `N` a per-process counter, `A` the attempt after a name
//!    clash). The caller writes the whole file into it.
//! 2. [`PendingFile::commit`], when `durable`: `fsync` the temporary file
//!    (`File::sync_all`: its data and its metadata, the size included).
//! 3. `rename` it over the destination. On POSIX the rename is atomic: every
//!    observer sees either the old destination (or none) or the complete new file.
//! 4. When `durable`, on Unix: open the destination's directory and `fsync` it, so
//!    the new directory entry is on disk too.
//!
//! A failure in steps 1–3 removes the temporary file and leaves the destination as
//! it was. A failure in step 4 comes after the rename: the new file is in place, and
//! the error says that only its durability is in doubt. Dropping a
//! [`PendingFile`] without committing removes the temporary file.
//!
//! # What `durable` buys, and the opt-out
//!
//! Without `durable` (scratch files, tests, benchmarks) steps 2 and 4 are skipped.
//! Both modes are atomic against a crashing *process* (a panic, `SIGKILL`, an
//! abort): the kernel still holds every written byte, and the rename is all or
//! nothing. Only `durable` is meant to survive an operating-system crash or a power
//! loss: without the `fsync` before the rename, a file system may persist the
//! rename before the data, and after a reboot the destination can be empty or
//! partial; without the directory `fsync`, the rename itself may be lost.
//!
//! # Leftovers
//!
//! A process killed between steps 1 and 3 leaves its temporary file behind (nothing
//! runs to remove it). The name says what it is: it starts with `.`, ends in
//! `.hrry-tmp`, and carries the PID of the writer, so a cleaner can remove the ones
//! whose process no longer exists. Hurray never removes a temporary file it did not
//! create in the same process.

use std::fs::{self, File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// The suffix of every temporary file a path writer creates.
pub const TEMP_SUFFIX: &str = ".hrry-tmp";

/// How many names [`PendingFile::create`] tries when another file already has one.
const ATTEMPTS: u64 = 16;

/// A temporary file beside its destination, created by [`PendingFile::create`] and
/// put in place by [`PendingFile::commit`]; dropping it uncommitted removes it.
///
/// It holds the paths only: the [`File`] handle is the caller's (wrap it in a
/// `BufWriter`, hand it to tokio, copy into it), and comes back to [`commit`].
///
/// [`commit`]: PendingFile::commit
#[derive(Debug)]
pub struct PendingFile {
    temp: PathBuf,
    dest: PathBuf,
    armed: bool,
}

impl PendingFile {
    /// Creates the temporary file for `dest` (see the [module docs](self) for its
    /// name) and returns it with the open, empty, write-only file.
    ///
    /// Errors: `InvalidInput` when `dest` has no file name (`/`, `..`); the errors of
    /// creating a file in `dest`'s directory (it is missing, not writable, ...);
    /// `AlreadyExists` only if 16 names in a row are taken.
    pub fn create(dest: impl AsRef<Path>) -> io::Result<(PendingFile, File)> {
        let dest = dest.as_ref();
        let mut attempt = 0;
        loop {
            let temp = temp_path_for(dest, attempt)?;
            match OpenOptions::new().write(true).create_new(true).open(&temp) {
                Ok(file) => {
                    let pending = PendingFile {
                        temp,
                        dest: dest.to_path_buf(),
                        armed: true,
                    };
                    return Ok((pending, file));
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists && attempt + 1 < ATTEMPTS => {
                    attempt += 1
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// The temporary file's path.
    pub fn temp_path(&self) -> &Path {
        &self.temp
    }

    /// The destination's path.
    pub fn dest(&self) -> &Path {
        &self.dest
    }

    /// Commits `file`, the handle [`create`](Self::create) returned, holding the
    /// complete contents (flush any buffer around it first): when `durable`, syncs it;
    /// renames it over the destination, replacing any file there (a symbolic link at
    /// the destination is replaced, not followed); when `durable`, syncs the
    /// destination's directory (Unix). The file is closed before the rename.
    ///
    /// Errors: the I/O error of the failing step. Before the rename, the temporary
    /// file is removed and the destination is as it was; a failed directory sync
    /// happens after it, and its message says that the new file is in place.
    pub fn commit(mut self, file: File, durable: bool) -> io::Result<()> {
        if durable {
            file.sync_all()?;
            trace::note(trace::Step::SyncFile);
        }
        drop(file);
        fs::rename(&self.temp, &self.dest)?;
        self.armed = false;
        trace::note(trace::Step::Rename);
        if durable {
            sync_parent(&self.dest).map_err(|e| {
                io::Error::new(
                    e.kind(),
                    format!(
                        "{} was renamed into place, but syncing its directory failed, so \
                         the rename may not survive a crash: {e}",
                        self.dest.display()
                    ),
                )
            })?;
        }
        Ok(())
    }
}

impl Drop for PendingFile {
    fn drop(&mut self) {
        if self.armed {
            let _ = fs::remove_file(&self.temp);
            trace::note(trace::Step::Remove);
        }
    }
}

/// `.NAME.PID-N-A.hrry-tmp` beside `dest`.
fn temp_path_for(dest: &Path, attempt: u64) -> io::Result<PathBuf> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let name = dest.file_name().ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} does not name a file", dest.display()),
        )
    })?;
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let mut tmp = std::ffi::OsString::from(".");
    tmp.push(name);
    tmp.push(format!(
        ".{}-{n}-{attempt}{TEMP_SUFFIX}",
        std::process::id()
    ));
    Ok(dest.with_file_name(tmp))
}

/// Syncs the directory holding `path`, so a rename in it is durable (Unix only;
/// elsewhere a no-op).
fn sync_parent(path: &Path) -> io::Result<()> {
    #[cfg(unix)]
    {
        let dir = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        File::open(dir)?.sync_all()?;
        trace::note(trace::Step::SyncDir);
    }
    #[cfg(not(unix))]
    let _ = path;
    Ok(())
}

/// Under `cfg(test)`, a per-thread record of the commit's steps, so a unit test can
/// check their order; otherwise nothing.
mod trace {
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub(super) enum Step {
        SyncFile,
        Rename,
        SyncDir,
        Remove,
    }

    #[cfg(test)]
    thread_local! {
        static STEPS: std::cell::RefCell<Vec<Step>> = const { std::cell::RefCell::new(Vec::new()) };
    }

    #[cfg(test)]
    pub(super) fn note(step: Step) {
        STEPS.with(|s| s.borrow_mut().push(step));
    }

    #[cfg(not(test))]
    pub(super) fn note(_: Step) {}

    /// Returns and clears this thread's steps.
    #[cfg(test)]
    pub(super) fn take() -> Vec<Step> {
        STEPS.with(|s| std::mem::take(&mut *s.borrow_mut()))
    }
}

#[cfg(test)]
mod tests {
    use super::trace::{take, Step};
    use super::*;
    use std::io::Write;

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn durable_commit_syncs_the_file_renames_then_syncs_the_directory() {
        let dir = tempfile::tempdir().unwrap();
        let dest = dir.path().join("out.hrry");
        fs::write(&dest, b"old").unwrap();
        take();
        let (p, mut f) = PendingFile::create(&dest).unwrap();
        let temp = p.temp_path().to_path_buf();
        let temp_name = temp.file_name().unwrap().to_string_lossy().into_owned();
        assert!(
            temp_name.starts_with(&format!(".out.hrry.{}-", std::process::id()))
                && temp_name.ends_with(TEMP_SUFFIX),
            "{temp_name}"
        );
        f.write_all(b"new contents").unwrap();
        assert_eq!(fs::read(&dest).unwrap(), b"old");
        p.commit(f, true).unwrap();
        #[cfg(unix)]
        assert_eq!(take(), [Step::SyncFile, Step::Rename, Step::SyncDir]);
        #[cfg(not(unix))]
        assert_eq!(take(), [Step::SyncFile, Step::Rename]);
        assert_eq!(fs::read(&dest).unwrap(), b"new contents");
        assert_eq!(names(dir.path()), ["out.hrry"]);
    }

    #[test]
    fn scratch_commit_only_renames() {
        let dir = tempfile::tempdir().unwrap();
        let dest = dir.path().join("scratch.hrry");
        take();
        let (p, mut f) = PendingFile::create(&dest).unwrap();
        f.write_all(b"x").unwrap();
        p.commit(f, false).unwrap();
        assert_eq!(take(), [Step::Rename]);
        assert_eq!(fs::read(&dest).unwrap(), b"x");
    }

    #[test]
    fn a_failed_rename_removes_the_temporary_file_and_keeps_the_destination() {
        // Renaming a file over a non-empty directory fails on every platform.
        let dir = tempfile::tempdir().unwrap();
        let dest = dir.path().join("taken");
        fs::create_dir(&dest).unwrap();
        fs::write(dest.join("inside"), b"keep").unwrap();
        take();
        let (p, mut f) = PendingFile::create(&dest).unwrap();
        f.write_all(b"never seen").unwrap();
        p.commit(f, true).unwrap_err();
        assert_eq!(take(), [Step::SyncFile, Step::Remove]);
        assert_eq!(names(dir.path()), ["taken"]);
        assert_eq!(fs::read(dest.join("inside")).unwrap(), b"keep");
    }

    #[test]
    fn dropping_uncommitted_removes_the_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let dest = dir.path().join("d");
        let (p, mut f) = PendingFile::create(&dest).unwrap();
        f.write_all(b"abc").unwrap();
        assert_eq!(names(dir.path()).len(), 1);
        drop(p);
        drop(f);
        assert!(names(dir.path()).is_empty());
    }

    #[test]
    fn a_destination_without_a_file_name_is_refused() {
        let e = PendingFile::create("/").unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
        let dir = tempfile::tempdir().unwrap();
        let e = PendingFile::create(dir.path().join("missing/x")).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::NotFound);
    }
}
