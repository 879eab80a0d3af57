'use strict';
// The `hurray` package: the native addon (napi-rs over the Hurray C ABI) plus the
// stream helpers of lib/stream.js. Types: index.d.ts (native.d.ts is generated).

const native = require('./lib/native');
const stream = require('./lib/stream');

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
  StreamReader: stream.StreamReader,
  StreamWriter: stream.StreamWriter,
  encodeStream: stream.encodeStream,
  decodeStream: stream.decodeStream,
};
