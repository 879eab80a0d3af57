// Types of the `hurray` package. The native classes and functions are declared in
// native.d.ts, generated from the Rust sources by `cargo xtask node build` (and
// checked for drift by `cargo xtask test`); this file adds the stream helpers of
// lib/stream.js, which are plain JavaScript.

import type { Readable, Writable } from 'node:stream';
import type { Tensor } from './native';

export { Tensor, Descriptor, FileReader, FileWriter, StreamDecoder, StreamEncoder, alloc } from './native';
export type { BufferEntry, FileInfo, FromBufferOptions, WriteOptions } from './native';

/** Bytes a stream chunk may be. */
export type Bytes = Uint8Array | ArrayBuffer | ArrayBufferView;

/**
 * Reads tensors from a `Readable`, any (async) iterable of byte chunks, or one
 * buffer holding the whole stream: `for await (const t of new StreamReader(src))`.
 * A clean end of input ends the loop; input ending inside a tensor throws an Error
 * with `code` `HURRAY_ERR_TRUNCATED`; malformed input throws the decoder's error
 * (code and a message naming rule and byte offset). Iterable once.
 */
export declare class StreamReader implements AsyncIterable<Tensor> {
  constructor(source: Readable | AsyncIterable<Bytes> | Iterable<Bytes> | Bytes);
  [Symbol.asyncIterator](): AsyncIterator<Tensor>;
}

/**
 * Writes tensors to a `Writable`; payload chunks are zero-copy views of each
 * tensor's memory. `write` awaits backpressure and rejects on stream errors.
 */
export declare class StreamWriter {
  constructor(writable: Writable);
  /** Writes one tensor. Rejects with `HURRAY_ERR_STATE` after `end()`. */
  write(tensor: Tensor): Promise<void>;
  /** Ends the Writable; resolves once it has flushed. */
  end(): Promise<void>;
}

/** Decodes a whole stream held in memory; errors as `StreamReader`. */
export declare function decodeStream(bytes: Bytes): Tensor[];

/** Encodes tensors into one Buffer holding the whole stream (a copy). */
export declare function encodeStream(tensors: Iterable<Tensor>): Buffer;
