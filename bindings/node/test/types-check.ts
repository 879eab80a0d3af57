// Compiled (not run) by the `node:` type-check stage: the published types are valid
// TypeScript and describe the API the tests use.
import * as hurray from '../index';
import { PassThrough } from 'node:stream';

const data: Float32Array = new Float32Array(hurray.alloc(16));
const t: hurray.Tensor = hurray.Tensor.fromBuffer(data, 'float32', [2, 2], { onRelease: () => {} });
// Every element type of the generated table is accepted, complex ones included.
const c: hurray.Descriptor = hurray.Descriptor.dense('complex64', [2]);
void c;
const shape: number[] = t.shape;
const view = t.array();
const ab: ArrayBuffer = t.buffer(0);
const d: hurray.Descriptor = t.descriptor();
const sizes: number[] = d.buffers().map((b: hurray.BufferEntry) => b.byteSize);
const item: hurray.Item = hurray.Item.of(t);
const members: hurray.Item[] = item.members;
const w = hurray.FileWriter.create('x.hrry', { durable: false, sortedIndex: true, dataCrc32c: true });
w.writeItem('x', item);
w.addInt64('n', 1n);
w.finish();
const r = hurray.FileReader.open('x.hrry');
const kv: Record<string, unknown> = r.metadata();
const dataChecked: boolean = r.verifyDataCrc32c();
const firstView: ArrayBuffer | undefined = r.views()[0]?.[0];
const limits: hurray.StreamLimits = { maxBufferBytes: 1024 };
async function roundTrip(): Promise<void> {
  const pipe = new PassThrough();
  const writer = new hurray.StreamWriter(pipe, limits);
  await writer.write(r.tensor('x'));
  await writer.end();
  for await (const got of new hurray.StreamReader(pipe)) got.close();
  for await (const it of new hurray.StreamReader(hurray.encodeStream([item])).items()) it.close();
}
void [shape, view, ab, sizes, members, kv, firstView, roundTrip, hurray.decodeStream(new Uint8Array(0))];

const spec: hurray.DescriptorSpec = {
  dtype: 'float32',
  shape: [3, 3],
  layout: 'csr',
  nnz: 2,
  buffers: [{ byteSize: 8 }, { byteSize: 16 }, { byteSize: 32 }],
};
const built: hurray.Descriptor = hurray.Descriptor.build(spec);
const q: hurray.Quantization | null = built.quantization;
const sh: hurray.Shard | null = built.shard;
const head: hurray.CompositeHead | null = built.composite;
void [q, sh, head, built.nnz, built.strides, built.statistics, built.memberRole];

const dt: hurray.DType = t.dtype;
const wc = new hurray.StreamWriter(new PassThrough(), undefined, { copy: true });
// A StreamWriter rejection may carry the stream's own code (ERR_STREAM_DESTROYED, ...).
function codeOf(e: unknown): hurray.HurrayErrorCode | string | undefined {
  return e instanceof Error ? (e as hurray.HurrayError).code : undefined;
}
const isState = (e: hurray.HurrayError): boolean => e.code === 'ERR_HURRAY_STATE';
const dn: hurray.DTypeName = 'int4';
// @ts-expect-error: dtype inputs are the known names, not any string.
hurray.Descriptor.dense('float33', [1]);
void [dt, wc, codeOf, isState, dn, hurray.decodeStream(new Uint8Array(0), limits), hurray.encodeStream([], limits)];

// Issue 15: array() typed by dtype, the strict option, the conversions, HurrayError as
// a class, Symbol.dispose, the promise-returning file calls.
const f32s: Float32Array = t.array('float32');
let total = 0;
for (const v of f32s) total += v;
const bits: Uint16Array = hurray.Tensor.fromBuffer(new Uint16Array(4), 'float16', [4]).array('float16');
const widened: Float32Array = hurray.float16ToFloat32(bits);
const unpacked: Uint8Array | Int8Array = t.unpack();
const strictT = hurray.Tensor.fromBuffer(data, 'float32', [4], { strict: true });
strictT[Symbol.dispose]();
const isHurray = (e: unknown): boolean => e instanceof hurray.HurrayError && e.code === 'ENOENT';
async function asyncFiles(): Promise<void> {
  const aw: hurray.FileWriter = await hurray.FileWriter.createAsync('y.hrry', { durable: false });
  await aw.writeTensorAsync('t', t);
  await aw.finishAsync();
  const ar: hurray.FileReader = await hurray.FileReader.openAsync('y.hrry');
  ar[Symbol.dispose]();
}
const summary: string = String(t) + JSON.stringify(t.toJSON());
void [total, widened, unpacked, isHurray, asyncFiles, summary, hurray.asFloat16Array, hurray.float32ToBfloat16];
const flagsT: hurray.Tensor = hurray.Tensor.fromUnpacked(new Uint8Array([1, 0]), 'bool', [2]);
async function asyncItem(w2: hurray.FileWriter): Promise<void> {
  await w2.writeItemAsync('i', hurray.Item.of(flagsT));
}
void asyncItem;

// The network client (issue 18).
export async function fetchOne(addr: string): Promise<number> {
  const ac = new AbortController();
  const client: hurray.Client = await hurray.connect(addr, { timeoutMs: 1000, signal: ac.signal });
  const info: hurray.NetServerInfo = client.serverInfo;
  const got: hurray.Tensor | hurray.Item = await client.get('k', { layouts: ['row_major', 3], parallel: true, signal: ac.signal });
  try {
    await client.put('copy', got, { signal: ac.signal });
  } catch (e) {
    const code: number | null = (e as hurray.NetError).netCode;
    void code;
  }
  client.close();
  return info.protocolVersion;
}
