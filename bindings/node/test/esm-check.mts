// Compiled (not run) by the `node:` type-check stage with module nodenext: an ES
// module imports the package by name, named and namespace imports both type-check,
// and tsc --strict code sums a Float32Array from array() without casts.
import { FileReader, FileWriter, HurrayError, Tensor, alloc, float16ToFloat32 } from 'hurray';
import * as hurray from 'hurray';
import type { TypedArrayOf } from 'hurray';

export function sum(path: string): number {
  using r = FileReader.open(path);
  const values: Float32Array = r.tensor('x').array('float32');
  let total = 0;
  for (const v of values) total += v;
  return total;
}

export async function write(path: string): Promise<void> {
  const data = new Float32Array(alloc(16));
  using t = Tensor.fromBuffer(data, 'float32', [4], { strict: true });
  const w: FileWriter = await hurray.FileWriter.createAsync(path, { durable: false });
  await w.writeTensorAsync('x', t);
  await w.finishAsync();
  const r: FileReader = await FileReader.openAsync(path);
  r.close();
}

export function codeOf(e: unknown): string | undefined {
  return e instanceof HurrayError ? e.code : undefined;
}

const h: TypedArrayOf['float16'] = new Uint16Array(2);
const f: Float32Array = float16ToFloat32(h);
const i64: BigInt64Array = Tensor.fromBuffer(new BigInt64Array(alloc(8)), 'int64', [1]).array('int64');
// @ts-expect-error: a float32 view is not an Int32Array.
const wrong: Int32Array = Tensor.fromBuffer(new Float32Array(4), 'float32', [4]).array('float32');
void [f, i64, wrong, hurray.decodeStream];

export async function netGet(addr: string): Promise<void> {
  const c: hurray.Client = await hurray.connect(addr);
  const t = await hurray.Client.prototype.get.call(c, 'k');
  void t;
  c.close();
}
