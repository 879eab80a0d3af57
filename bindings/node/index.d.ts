// Types of the `hurray` package. The native classes and functions are declared in
// native.d.ts, generated from the Rust sources by `cargo xtask node build` (and
// checked for drift by `cargo xtask test`); this file adds the stream helpers of
// lib/stream.js, which are plain JavaScript.

import type { Readable, Writable } from 'node:stream';
import type { Item, StreamLimits, Tensor } from './native';

export { Tensor, Descriptor, Item, FileReader, FileWriter, StreamDecoder, StreamEncoder, alloc } from './native';
export type {
  BufferEntry,
  BufferSpec,
  CompositeHead,
  DescriptorSpec,
  FileInfo,
  FromBufferOptions,
  Quantization,
  QuantizationSpec,
  Shard,
  Statistics,
  StreamLimits,
  WriteOptions,
} from './native';

/** An element type name, as `Tensor.dtype` and `Descriptor.dtype` return it. */
export type DType = Tensor['dtype'];

/**
 * An element type name the package accepts (`Tensor.fromBuffer`, `Descriptor.dense`,
 * `DescriptorSpec.dtype`): the known names of `DType`.
 */
export type DTypeName = Parameters<typeof Tensor.fromBuffer>[1];

/** The C ABI status names an Error's `code` holds (`HURRAY_ERR_ADDON`: the addon failed to load). */
export type HurrayErrorCode =
  | 'ENOENT'
  | 'EISDIR'
  | 'ENOTDIR'
  | 'EACCES'
  | 'EPERM'
  | 'EIO'
  | 'EMFILE'
  | 'ENFILE'
  | 'ENAMETOOLONG'
  | 'ELOOP'
  | 'ERR_HURRAY_NOT_FOUND'
  | 'ERR_HURRAY_IO'
  | 'ERR_HURRAY_TRUNCATED'
  | 'ERR_HURRAY_FORMAT'
  | 'ERR_HURRAY_INVALID_ARGUMENT'
  | 'ERR_HURRAY_STATE'
  | 'ERR_HURRAY_LIMIT'
  | 'ERR_HURRAY_UNSUPPORTED'
  | 'ERR_HURRAY_INTERNAL'
  | 'ERR_HURRAY_ADDON';

/**
 * What the package throws: an `Error` whose `code` is an errno name (`ENOENT`,
 * `EISDIR`, ...) when the operating system reported the failure, else
 * `ERR_HURRAY_<CATEGORY>` (the status's category); the message starts with the
 * exact C ABI status name (`HURRAY_ERR_OUT_OF_RANGE: ...`). An
 * argument of the wrong JavaScript type (a number where a string is expected, a
 * non-Tensor where a Tensor is) is refused by the napi-rs layer before it reaches
 * the library, with napi-rs's own `code` (`StringExpected`, `NumberExpected`,
 * `ArrayExpected`, `ObjectExpected`, `InvalidArg`, ...). `StreamWriter` promises
 * reject with the Writable's own error when the stream fails, so its `code` is then
 * Node's (`ERR_STREAM_DESTROYED`, `ERR_STREAM_PREMATURE_CLOSE`, an errno name such
 * as `EPIPE`, or none).
 */
export interface HurrayError extends Error {
  code: HurrayErrorCode | (string & {});
}

/** Options of `StreamWriter`. */
export interface StreamWriterOptions {
  /**
   * Copy each payload chunk before handing it to the Writable, so the tensor's
   * memory may be refilled as soon as `write` resolves whatever the Writable does
   * with chunks (default false: zero-copy views).
   */
  copy?: boolean;
}

/** Bytes a stream chunk may be. */
export type Bytes = Uint8Array | ArrayBuffer | ArrayBufferView;

/**
 * Reads tensors from a `Readable`, any (async) iterable of byte chunks, or one
 * buffer holding the whole stream: `for await (const t of new StreamReader(src))`
 * yields plain tensors (a composite throws `HURRAY_ERR_NOT_APPLICABLE`);
 * `reader.items()` yields Items (tensors and composites). A clean end of input ends
 * the loop; input ending inside a tensor throws an Error with `code`
 * `HURRAY_ERR_TRUNCATED`; malformed input throws the decoder's error (code and a
 * message naming rule and byte offset). Iterable once.
 */
export declare class StreamReader implements AsyncIterable<Tensor> {
  constructor(source: Readable | AsyncIterable<Bytes> | Iterable<Bytes> | Bytes, limits?: StreamLimits);
  [Symbol.asyncIterator](): AsyncIterator<Tensor>;
  /** The stream's items (tensors and composites). */
  items(): AsyncIterable<Item>;
}

/**
 * Writes tensors to a `Writable`; payload chunks are zero-copy views of each
 * tensor's memory unless `options.copy`. Overlapping `write` calls are queued and
 * go out whole, in call order. `write` resolves once the Writable has called back
 * for every chunk of the tensor (and honours backpressure); it rejects when the
 * stream errors, is destroyed or closes. Refill the tensor's memory after `write`
 * resolves only if the Writable is done with chunks when it calls back (files,
 * sockets), not a PassThrough/Transform that passes them on: use `{ copy: true }`.
 */
export declare class StreamWriter {
  constructor(writable: Writable, limits?: StreamLimits, options?: StreamWriterOptions);
  /** Writes one tensor or item. Rejects with `HURRAY_ERR_STATE` after `end()`. */
  write(tensor: Tensor | Item): Promise<void>;
  /**
   * Waits for queued writes, ends the Writable; resolves once it has flushed,
   * rejects when the stream errored or closed early.
   */
  end(): Promise<void>;
}

/** Decodes a whole stream held in memory; errors as `StreamReader`. */
export declare function decodeStream(bytes: Bytes, limits?: StreamLimits): Tensor[];

/**
 * Encodes tensors and items into one Buffer holding the whole stream (a copy).
 * `limits`: those of the decoder meant to read it.
 */
export declare function encodeStream(tensors: Iterable<Tensor | Item>, limits?: StreamLimits): Buffer;
