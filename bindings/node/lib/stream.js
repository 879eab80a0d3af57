'use strict';
// Streams of tensors over Node streams: StreamReader (an async iterable of Tensors
// over a Readable, an async iterable of chunks, or bytes) and StreamWriter (over a
// Writable). The decoding and encoding happen in the native StreamDecoder and
// StreamEncoder; this file only moves bytes.

const { once } = require('node:events');
const native = require('./native');

function asChunk(c) {
  if (c instanceof Uint8Array) return c;
  if (ArrayBuffer.isView(c)) return new Uint8Array(c.buffer, c.byteOffset, c.byteLength);
  if (c instanceof ArrayBuffer) return new Uint8Array(c);
  const err = new TypeError(`hurray: a stream chunk must be bytes (Buffer, TypedArray, ArrayBuffer), got ${typeof c}`);
  err.code = 'HURRAY_ERR_INVALID_ARGUMENT';
  throw err;
}

/**
 * Reads tensors from `source`: a `Readable` (in binary mode), any (async) iterable
 * of byte chunks, or one `Uint8Array`/`ArrayBuffer` holding the whole stream.
 * Iterate it with `for await (const t of reader)` (plain tensors; a composite throws
 * `HURRAY_ERR_NOT_APPLICABLE`), or `for await (const it of reader.items())` (Items:
 * tensors and composites). A clean end of input ends the loop; input that ends
 * inside a tensor throws an Error with code `HURRAY_ERR_TRUNCATED`; malformed input
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
      err.code = 'HURRAY_ERR_STATE';
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
 * Decodes a whole stream held in memory; returns its tensors. Errors as
 * `StreamReader`.
 */
function decodeStream(bytes) {
  const dec = new native.StreamDecoder();
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
 * own memory (kept alive until the stream lets go of them); `write` awaits
 * backpressure (`drain`) and rejects on a stream error.
 */
class StreamWriter {
  constructor(writable, limits) {
    if (!writable || typeof writable.write !== 'function') {
      throw new TypeError('hurray: StreamWriter needs a Writable');
    }
    this._w = writable;
    this._enc = new native.StreamEncoder(limits);
  }

  /** Writes one tensor or item (descriptors and buffers, in stream order). */
  async write(tensor) {
    if (this._enc === null) {
      const err = new Error('HURRAY_ERR_STATE: the StreamWriter is ended');
      err.code = 'HURRAY_ERR_STATE';
      throw err;
    }
    for (const ab of encodeOne(this._enc, tensor)) {
      if (ab.byteLength === 0) continue;
      if (!this._w.write(new Uint8Array(ab))) await once(this._w, 'drain');
    }
  }

  /** Ends the Writable and resolves once it has flushed. */
  async end() {
    if (this._enc !== null) {
      this._enc.close();
      this._enc = null;
    }
    await new Promise((resolve, reject) => {
      this._w.once('error', reject);
      this._w.end(() => resolve());
    });
  }
}

function encodeOne(enc, x) {
  return x instanceof native.Item ? enc.encodeItem(x) : enc.encode(x);
}

/** Encodes tensors and items into one Buffer holding the whole stream (a copy). */
function encodeStream(tensors) {
  const enc = new native.StreamEncoder();
  try {
    const parts = [];
    for (const t of tensors) for (const ab of encodeOne(enc, t)) parts.push(new Uint8Array(ab));
    return Buffer.concat(parts);
  } finally {
    enc.close();
  }
}

module.exports = { StreamReader, StreamWriter, decodeStream, encodeStream };
