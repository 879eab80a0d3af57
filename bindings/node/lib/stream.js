'use strict';
// Streams of tensors over Node streams: StreamReader (an async iterable of Tensors
// over a Readable, an async iterable of chunks, or bytes) and StreamWriter (over a
// Writable). The decoding and encoding happen in the native StreamDecoder and
// StreamEncoder; this file only moves bytes.

const { finished } = require('node:stream');
const native = require('./native');

function stateError(message) {
  const err = new Error(`HURRAY_ERR_STATE: ${message}`);
  err.code = 'ERR_HURRAY_STATE';
  return err;
}

// Resolves on 'drain'; rejects when the Writable errors or closes first (a stream
// destroyed without an error emits only 'close', and never 'drain').
function drained(w) {
  return new Promise((resolve, reject) => {
    const done = (err) => {
      w.off('drain', onDrain);
      w.off('error', onError);
      w.off('close', onClose);
      if (err) reject(err);
      else resolve();
    };
    const onDrain = () => done();
    const onError = (e) => done(e);
    const onClose = () => done(w.errored || stateError('the Writable closed before it drained'));
    w.on('drain', onDrain);
    w.on('error', onError);
    w.on('close', onClose);
    if (w.destroyed) onClose();
  });
}

function asChunk(c) {
  if (c instanceof Uint8Array) return c;
  if (ArrayBuffer.isView(c)) return new Uint8Array(c.buffer, c.byteOffset, c.byteLength);
  if (c instanceof ArrayBuffer) return new Uint8Array(c);
  const err = new TypeError(`hurray: a stream chunk must be bytes (Buffer, TypedArray, ArrayBuffer), got ${typeof c}`);
  err.code = 'ERR_HURRAY_INVALID_ARGUMENT';
  throw err;
}

/**
 * Reads tensors from `source`: a `Readable` (in binary mode), any (async) iterable
 * of byte chunks, or one `Uint8Array`/`ArrayBuffer` holding the whole stream.
 * Iterate it with `for await (const t of reader)` (plain tensors; a composite throws
 * `HURRAY_ERR_NOT_APPLICABLE`), or `for await (const it of reader.items())` (Items:
 * tensors and composites). A clean end of input ends the loop; input that ends
 * inside a tensor throws an Error with code `ERR_HURRAY_TRUNCATED`; malformed input
 * throws the decoder's error (code and a message naming rule and offset) after
 * yielding what came before it. `limits` bound what the decoder accepts.
 */
class StreamReader {
  constructor(source, limits) {
    if (source == null) throw new TypeError('hurray: StreamReader needs a source');
    if (source instanceof ArrayBuffer || ArrayBuffer.isView(source)) source = [source];
    this._source = source;
    this._limits = limits;
    this._used = false;
  }

  [Symbol.asyncIterator]() {
    return this._read('next');
  }

  /** The stream's items (tensors and composites), as an async iterable. */
  items() {
    return { [Symbol.asyncIterator]: () => this._read('nextItem') };
  }

  async *_read(next) {
    if (this._used) {
      const err = new Error('HURRAY_ERR_STATE: a StreamReader can be iterated once');
      err.code = 'ERR_HURRAY_STATE';
      throw err;
    }
    this._used = true;
    const dec = new native.StreamDecoder(this._limits);
    try {
      for await (const chunk of this._source) {
        dec.feed(asChunk(chunk));
        let t;
        while ((t = dec[next]()) !== null) yield t;
      }
      let t;
      while ((t = dec[next]()) !== null) yield t;
      dec.finish();
    } finally {
      dec.close();
    }
  }
}

/**
 * Decodes a whole stream held in memory; returns its tensors. `limits` bound what
 * the decoder accepts. Errors as `StreamReader`.
 */
function decodeStream(bytes, limits) {
  const dec = new native.StreamDecoder(limits);
  try {
    dec.feed(asChunk(bytes));
    const out = [];
    let t;
    while ((t = dec.next()) !== null) out.push(t);
    dec.finish();
    return out;
  } finally {
    dec.close();
  }
}

/**
 * Writes tensors to a `Writable`. Payload chunks are zero-copy views of the tensors'
 * own memory (kept alive until the stream lets go of them), unless `options.copy`.
 *
 * Calls are queued: overlapping `write()`s (e.g. `Promise.all`) go out one whole
 * tensor after another, in call order. `write` resolves once the Writable has
 * called back for every chunk of that tensor (a file or socket: written; a
 * Transform/PassThrough: handed to its transform, which may still hold the view),
 * honours backpressure (`drain`), and rejects when the stream errors, is destroyed
 * or closes. The tensor's memory may be refilled after `write` resolves only when
 * the Writable consumes chunks in its callback (files, sockets); otherwise pass
 * `{ copy: true }`, which copies each payload chunk before it is written.
 */
class StreamWriter {
  constructor(writable, limits, options) {
    if (!writable || typeof writable.write !== 'function') {
      throw new TypeError('hurray: StreamWriter needs a Writable');
    }
    this._w = writable;
    this._copy = Boolean(options && options.copy);
    this._enc = new native.StreamEncoder(limits);
    this._queue = Promise.resolve();
    this._ending = false;
  }

  /** Writes one tensor or item (descriptors and buffers, in stream order). */
  write(tensor) {
    if (this._enc === null || this._ending) {
      return Promise.reject(stateError('the StreamWriter is ended'));
    }
    let chunks;
    try {
      chunks = encodeOne(this._enc, tensor);
    } catch (e) {
      return Promise.reject(e);
    }
    if (this._copy) chunks = chunks.map((ab) => new Uint8Array(ab).slice().buffer);
    const p = this._queue.then(() => this._send(chunks));
    this._queue = p.catch(() => {});
    return p;
  }

  async _send(chunks) {
    const w = this._w;
    const written = [];
    // Rejects when the Writable errors or closes before every chunk's callback came
    // (a destroyed stream may never call back an in-flight write).
    let onGone;
    const gone = new Promise((_, reject) => {
      onGone = (e) =>
        reject(e instanceof Error ? e : w.errored || stateError('the Writable closed before the write completed'));
    });
    gone.catch(() => {});
    w.on('close', onGone);
    w.on('error', onGone);
    try {
      for (const ab of chunks) {
        if (ab.byteLength === 0) continue;
        if (w.destroyed || w.writableEnded) {
          throw w.errored || stateError('the Writable is destroyed or ended');
        }
        let ok;
        written.push(
          new Promise((resolve, reject) => {
            ok = w.write(new Uint8Array(ab), (err) => (err ? reject(err) : resolve()));
          }),
        );
        if (!ok) await drained(w);
      }
      await Promise.race([Promise.all(written), gone]);
    } finally {
      w.off('close', onGone);
      w.off('error', onGone);
      // Rejections of callbacks not awaited (after a failed drain) are handled here.
      for (const p of written) p.catch(() => {});
    }
  }

  /**
   * Waits for queued writes, ends the Writable, and resolves once it has flushed
   * ('finish'); rejects when the stream errored or closed prematurely.
   */
  async end() {
    this._ending = true;
    try {
      await this._queue;
    } finally {
      if (this._enc !== null) {
        this._enc.close();
        this._enc = null;
      }
    }
    const w = this._w;
    await new Promise((resolve, reject) => {
      finished(w, { readable: false }, (err) => (err ? reject(err) : resolve()));
      if (!w.writableEnded && !w.destroyed) w.end();
    });
  }
}

function encodeOne(enc, x) {
  return x instanceof native.Item ? enc.encodeItem(x) : enc.encode(x);
}

/**
 * Encodes tensors and items into one Buffer holding the whole stream (a copy).
 * `limits`: those of the decoder meant to read it.
 */
function encodeStream(tensors, limits) {
  const enc = new native.StreamEncoder(limits);
  try {
    const parts = [];
    for (const t of tensors) for (const ab of encodeOne(enc, t)) parts.push(new Uint8Array(ab));
    return Buffer.concat(parts);
  } finally {
    enc.close();
  }
}

module.exports = { StreamReader, StreamWriter, decodeStream, encodeStream };
