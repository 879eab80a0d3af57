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
 * tensor's memory. `write` awaits backpressure and rejects on stream errors.
 */
export declare class StreamWriter {
  constructor(writable: Writable, limits?: StreamLimits);
  /** Writes one tensor or item. Rejects with `HURRAY_ERR_STATE` after `end()`. */
  write(tensor: Tensor | Item): Promise<void>;
  /** Ends the Writable; resolves once it has flushed. */
  end(): Promise<void>;
}

/** Decodes a whole stream held in memory; errors as `StreamReader`. */
export declare function decodeStream(bytes: Bytes): Tensor[];

/** Encodes tensors and items into one Buffer holding the whole stream (a copy). */
export declare function encodeStream(tensors: Iterable<Tensor | Item>): Buffer;
