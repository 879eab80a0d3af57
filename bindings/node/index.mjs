// The ES module entry of the `hurray` package: the CommonJS package (index.js)
// with every export named, so `import { FileReader } from 'hurray'` and
// `import * as hurray from 'hurray'` see all of them. One copy of the addon: this
// file imports index.js, it does not load the addon again.
import hurray from './index.js';

export const {
  Tensor,
  Descriptor,
  Item,
  FileReader,
  FileWriter,
  StreamDecoder,
  StreamEncoder,
  alloc,
  typeName,
  layoutName,
  float16ToFloat32,
  float32ToFloat16,
  bfloat16ToFloat32,
  float32ToBfloat16,
  asFloat16Array,
  HurrayError,
  StreamReader,
  StreamWriter,
  encodeStream,
  decodeStream,
  connect,
  Client,
} = hurray;
export default hurray;
