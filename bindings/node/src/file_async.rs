//! The promise-returning file operations (`FileReader.openAsync`,
//! `FileWriter.createAsync`, `writeTensorAsync`, `writeItemAsync`, `finishAsync`): each runs its
//! blocking library call on the libuv thread pool (a napi `AsyncTask`), so the
//! event loop keeps running during a large write. A failure rejects the promise
//! with the same `Error` (its `code` and message) the synchronous call throws.

use std::path::Path;
use std::sync::{Arc, Mutex};

use hurray_ffi::{HurrayFileReader, HurrayFileWriter, HurrayWriteOptions, ReadOptions};
use napi::bindgen_prelude::*;

use crate::error::{ffi, JsErr};
use crate::file::{put_back, FileReader, FileWriter, WriterSlot};
use crate::item::ItemHandle;
use crate::tensor::Handle;

/// A library error carried back from the pool thread: its `code` and message.
pub struct Failure(String, String);

impl From<JsErr> for Failure {
    fn from(e: JsErr) -> Failure {
        Failure(e.status.clone(), e.reason.clone())
    }
}

/// The rejection of a failed operation: a JS `Error` with the failure's `code`
/// and message (napi-rs rejects the promise with this very object).
fn rejection(env: &Env, f: Failure) -> napi::Error {
    let js = napi::JsError::from(napi::Error::new(f.0, f.1)).into_unknown(*env);
    napi::Error::from(js)
}

/// Opens a file on the pool (`FileReader.openAsync`).
pub struct OpenTask {
    path: String,
}

impl OpenTask {
    /// A task opening `path` (checked for NUL bytes by the caller).
    pub fn new(path: String) -> OpenTask {
        OpenTask { path }
    }
}

impl Task for OpenTask {
    type Output = std::result::Result<HurrayFileReader, Failure>;
    type JsValue = FileReader;

    fn compute(&mut self) -> napi::Result<Self::Output> {
        Ok(
            HurrayFileReader::open(Path::new(&self.path), &ReadOptions::default())
                .map_err(|e| ffi(e).into()),
        )
    }

    fn resolve(&mut self, env: Env, out: Self::Output) -> napi::Result<FileReader> {
        match out {
            Ok(r) => Ok(FileReader::over(&env, r)),
            Err(f) => Err(rejection(&env, f)),
        }
    }
}

/// Creates a writer on the pool (`FileWriter.createAsync`).
pub struct CreateTask {
    path: String,
    options: HurrayWriteOptions,
}

impl CreateTask {
    /// A task creating a writer for `path` with `options` (both checked).
    pub fn new(path: String, options: HurrayWriteOptions) -> CreateTask {
        CreateTask { path, options }
    }
}

impl Task for CreateTask {
    type Output = std::result::Result<HurrayFileWriter, Failure>;
    type JsValue = FileWriter;

    fn compute(&mut self) -> napi::Result<Self::Output> {
        Ok(
            HurrayFileWriter::create(Path::new(&self.path), &self.options)
                .map_err(|e| ffi(e).into()),
        )
    }

    fn resolve(&mut self, env: Env, out: Self::Output) -> napi::Result<FileWriter> {
        match out {
            Ok(w) => Ok(FileWriter::over(w)),
            Err(f) => Err(rejection(&env, f)),
        }
    }
}

/// What a [`WriteTask`] does with the writer.
enum WriteOp {
    /// Writes the tensor of the handle under the name.
    Tensor(String, Arc<Handle>),
    /// Writes the item node at the member path below the root under the name.
    Item(String, Arc<ItemHandle>, Vec<u32>),
    /// Finishes the file.
    Finish,
}

/// One operation on a writer taken out of its `FileWriter` (whose slot is `Busy`
/// meanwhile); the writer goes back when the promise settles.
pub struct WriteTask {
    /// The writer; `None` only after `finally` put it back.
    writer: Option<Box<HurrayFileWriter>>,
    slot: Arc<Mutex<WriterSlot>>,
    op: WriteOp,
}

impl WriteTask {
    /// Writes `handle`'s tensor under `name`.
    pub(crate) fn tensor(
        writer: Box<HurrayFileWriter>,
        slot: Arc<Mutex<WriterSlot>>,
        name: String,
        handle: Arc<Handle>,
    ) -> WriteTask {
        WriteTask {
            writer: Some(writer),
            slot,
            op: WriteOp::Tensor(name, handle),
        }
    }

    /// Writes the node at `path` below `root` under `name`.
    pub(crate) fn item(
        writer: Box<HurrayFileWriter>,
        slot: Arc<Mutex<WriterSlot>>,
        name: String,
        root: Arc<ItemHandle>,
        path: Vec<u32>,
    ) -> WriteTask {
        WriteTask {
            writer: Some(writer),
            slot,
            op: WriteOp::Item(name, root, path),
        }
    }

    /// Finishes the file.
    pub(crate) fn finish(writer: Box<HurrayFileWriter>, slot: Arc<Mutex<WriterSlot>>) -> WriteTask {
        WriteTask {
            writer: Some(writer),
            slot,
            op: WriteOp::Finish,
        }
    }
}

impl Task for WriteTask {
    type Output = std::result::Result<(), Failure>;
    type JsValue = ();

    fn compute(&mut self) -> napi::Result<Self::Output> {
        let Some(w) = self.writer.as_mut() else {
            return Ok(Err(Failure(
                "ERR_HURRAY_INTERNAL".into(),
                "HURRAY_ERR_INTERNAL_PANIC: the writer is gone".into(),
            )));
        };
        let done = match &self.op {
            WriteOp::Tensor(name, handle) => handle
                .tensor()
                .and_then(|t| w.write_tensor(name, t).map_err(ffi)),
            WriteOp::Item(name, root, path) => root
                .node(path)
                .and_then(|n| w.write_item(name, n).map_err(ffi)),
            WriteOp::Finish => w.finish().map_err(ffi),
        };
        Ok(done.map_err(Failure::from))
    }

    fn resolve(&mut self, env: Env, out: Self::Output) -> napi::Result<()> {
        out.map_err(|f| rejection(&env, f))
    }

    fn finally(mut self, _env: Env) -> napi::Result<()> {
        if let Some(w) = self.writer.take() {
            put_back(&self.slot, w);
        }
        Ok(())
    }
}
