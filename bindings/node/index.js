'use strict';
// The `hurray` package: the native addon (napi-rs over the Hurray C ABI) plus the
// stream helpers of lib/stream.js. Types: index.d.ts (native.d.ts is generated).

const native = require('./lib/native');
const stream = require('./lib/stream');
const net = require('./lib/net');

/**
 * The same memory as a `Float16Array`, on runtimes that have one (Node 24+, or
 * behind --js-float16array): `array()` of a float16 tensor is a Uint16Array of bit
 * patterns. Throws `ERR_HURRAY_UNSUPPORTED` elsewhere (use `toFloat32()` or
 * `float16ToFloat32`).
 */
function asFloat16Array(bits) {
  const F16 = globalThis.Float16Array;
  if (typeof F16 !== 'function') {
    throw new native.HurrayError(
      'HURRAY_ERR_NOT_APPLICABLE: this runtime has no Float16Array; convert with tensor.toFloat32() or hurray.float16ToFloat32()',
      'ERR_HURRAY_UNSUPPORTED',
    );
  }
  return new F16(bits.buffer, bits.byteOffset, bits.length);
}

module.exports = {
  Tensor: native.Tensor,
  Descriptor: native.Descriptor,
  Item: native.Item,
  FileReader: native.FileReader,
  FileWriter: native.FileWriter,
  StreamDecoder: native.StreamDecoder,
  StreamEncoder: native.StreamEncoder,
  alloc: native.alloc,
  typeName: native.typeName,
  layoutName: native.layoutName,
  float16ToFloat32: native.float16ToFloat32,
  float32ToFloat16: native.float32ToFloat16,
  bfloat16ToFloat32: native.bfloat16ToFloat32,
  float32ToBfloat16: native.float32ToBfloat16,
  asFloat16Array,
  HurrayError: native.HurrayError,
  StreamReader: stream.StreamReader,
  StreamWriter: stream.StreamWriter,
  encodeStream: stream.encodeStream,
  decodeStream: stream.decodeStream,
  connect: net.connect,
  Client: net.Client,
};
