'use strict';
// Issue 15, Node: what a new user hit, fixed. One test (or more) per item:
// 1 foreign memory, 2 float16/bfloat16/bool, 3 device-tagged buffers, 4 NUL bytes in
// names and keys, 10 non-blocking files, 11 workers, 12 idioms. Item 9 (ESM) is
// esm.test.mjs and test/esm-check.mts.

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const util = require('node:util');
const { MessageChannel } = require('node:worker_threads');

const hurray = require('..');
const { debugBufferAddress } = require('../lib/testing');
const { tmpdir, f32 } = require('./helpers');

const dir = tmpdir();
const { Tensor, FileReader, FileWriter, HurrayError } = hurray;

/** Writes `tensors` ({name: tensor}) to a fresh file and returns its path. */
function writeFile(name, tensors, kv = {}) {
  const p = path.join(dir, name);
  const w = FileWriter.create(p, { durable: false });
  for (const [n, t] of Object.entries(tensors)) w.writeTensor(n, t);
  for (const [k, v] of Object.entries(kv)) w.addString(k, v);
  w.finish();
  return p;
}

const values = (n, seed) => Float32Array.from({ length: n }, (_, i) => (i * 7 + seed) % 101 / 4 - 3);

// ---- 1. Foreign memory --------------------------------------------------------

test('1: a Float32Array at an offset, a plain Float32Array and a SharedArrayBuffer become tensors, written and read back equal', () => {
  const n = 1024;
  // At byte offset 4 of an ArrayBuffer: V8 allocates backing stores at most
  // 16-byte aligned, so this view is never 64-byte aligned.
  const atOffset = new Float32Array(new ArrayBuffer(4 * n + 4), 4, n);
  atOffset.set(values(n, 1));
  const plain = values(n, 2); // a plain `new Float32Array(n)`
  const sab = new SharedArrayBuffer(4 * n);
  new Float32Array(sab).set(values(n, 3));
  const sabAtOffset = new Float32Array(new SharedArrayBuffer(4 * n + 8), 8, n);
  sabAtOffset.set(values(n, 4));

  const tensors = {
    atOffset: Tensor.fromBuffer(atOffset, 'float32', [n]),
    plain: Tensor.fromBuffer(plain, 'float32', [32, 32]),
    sab: Tensor.fromBuffer(sab, 'float32', [n]), // the bare SharedArrayBuffer
    sabAtOffset: Tensor.fromBuffer(sabAtOffset, 'float32', [n]),
  };
  // The misaligned memory was copied: the tensor's buffer is 64-byte aligned and
  // changing the source afterwards does not change the tensor.
  assert.equal(debugBufferAddress(tensors.atOffset, 0) % 64, 0);
  assert.equal(debugBufferAddress(tensors.sabAtOffset, 0) % 64, 0);
  const before = atOffset[5];
  atOffset[5] = 1234.5;
  assert.equal(tensors.atOffset.array('float32')[5], before);
  atOffset[5] = before;

  const p = writeFile('foreign.hrry', tensors);
  const r = FileReader.open(p);
  const expect = { atOffset, plain, sab: new Float32Array(sab), sabAtOffset };
  for (const [name, src] of Object.entries(expect)) {
    const got = r.tensor(name).array('float32');
    assert.equal(got.length, n, name);
    assert.deepEqual(Array.from(got), Array.from(src), name);
  }
  assert.deepEqual(r.tensor('plain').shape, [32, 32]);
  r.close();
  for (const t of Object.values(tensors)) t.close();
});

test('1: the strict option refuses the same memory; aligned memory is used in place either way', (ctx) => {
  const n = 1024;
  const atOffset = new Float32Array(new ArrayBuffer(4 * n + 4), 4, n);
  const sabAtOffset = new Float32Array(new SharedArrayBuffer(4 * n + 8), 8, n);
  for (const src of [atOffset, sabAtOffset]) {
    assert.throws(() => Tensor.fromBuffer(src, 'float32', [n], { strict: true }), (e) => {
      assert.ok(e instanceof HurrayError);
      assert.equal(e.code, 'ERR_HURRAY_INVALID_ARGUMENT');
      assert.match(e.message, /not aligned to the declared 64 bytes and the strict option refuses/);
      return true;
    });
  }
  const d = hurray.Descriptor.dense('float32', [n]);
  assert.throws(() => Tensor.fromBuffers(d.encode(), [atOffset], { strict: true }), {
    code: 'ERR_HURRAY_INVALID_ARGUMENT',
  });
  // A plain Float32Array: refused under strict exactly when it is misaligned, and
  // copied otherwise; count how many of 20 (4 MiB each) are misaligned.
  let refused = 0;
  for (let i = 0; i < 20; i++) {
    const plain = new Float32Array(1 << 20);
    plain[7] = i;
    const t = Tensor.fromBuffer(plain, 'float32', [1 << 20]);
    assert.equal(t.array('float32')[7], i);
    try {
      const s = Tensor.fromBuffer(plain, 'float32', [1 << 20], { strict: true });
      // Accepted: zero-copy, so a write to the source shows through.
      plain[7] = -1;
      assert.equal(s.array('float32')[7], -1);
      s.close();
    } catch (e) {
      assert.equal(e.code, 'ERR_HURRAY_INVALID_ARGUMENT');
      refused++;
    }
    t.close();
  }
  ctx.diagnostic(`strict refused ${refused} of 20 plain 4 MiB Float32Arrays`);
  // hurray.alloc memory is aligned: strict accepts it, zero-copy.
  const aligned = f32(hurray, [1, 2, 3, 4]);
  const t = Tensor.fromBuffer(aligned, 'float32', [4], { strict: true });
  aligned[0] = 9;
  assert.equal(t.array('float32')[0], 9);
  t.close();
});

// ---- 2. float16, bfloat16, bool ---------------------------------------------------

test('2: float16 and bfloat16 are Uint16Array views with conversions; bool and int4 unpack', () => {
  const halves = hurray.float32ToFloat16(Float32Array.of(1.5, -2, 65504, 0.1, 1e6));
  assert.deepEqual(Array.from(halves), [0x3e00, 0xc000, 0x7bff, 0x2e66, 0x7c00]);
  const h = Tensor.fromBuffer(halves, 'float16', [5]);
  const view = h.array('float16');
  assert.ok(view instanceof Uint16Array);
  assert.equal(view[0], 0x3e00);
  assert.deepEqual(Array.from(h.toFloat32()), [1.5, -2, 65504, 0.0999755859375, Infinity]);
  assert.deepEqual(Array.from(hurray.float16ToFloat32(Uint16Array.of(0x3c00, 0x8000, 0x0001))), [1, -0, 2 ** -24]);

  const brains = hurray.float32ToBfloat16(Float32Array.of(1, -2.5, 3.140625));
  assert.deepEqual(Array.from(brains), [0x3f80, 0xc020, 0x4049]);
  const b = Tensor.fromBuffer(brains, 'bfloat16', [3]);
  assert.ok(b.array() instanceof Uint16Array);
  assert.deepEqual(Array.from(b.toFloat32()), [1, -2.5, 3.140625]);
  assert.deepEqual(Array.from(hurray.bfloat16ToFloat32(Uint16Array.of(0x3f80, 0x4000))), [1, 2]);

  // Through a file, as another language would have written it.
  const p = writeFile('half.hrry', { h, b });
  const r = FileReader.open(p);
  assert.deepEqual(Array.from(r.tensor('h').toFloat32()), [1.5, -2, 65504, 0.0999755859375, Infinity]);
  assert.deepEqual(Array.from(r.tensor('b').array('bfloat16')), [0x3f80, 0xc020, 0x4049]);
  r.close();

  if (typeof globalThis.Float16Array === 'function') {
    assert.equal(hurray.asFloat16Array(view)[0], 1.5);
  } else {
    assert.throws(() => hurray.asFloat16Array(view), { code: 'ERR_HURRAY_UNSUPPORTED', message: /no Float16Array/ });
  }

  // bool: packed 8 per byte, least significant bit first (element-types.md §5).
  const bits = new Uint8Array(hurray.alloc(2));
  bits[0] = 0b10100101;
  bits[1] = 0b1;
  const flags = Tensor.fromBuffer(bits, 'bool', [9]);
  assert.throws(() => flags.array(), { code: 'ERR_HURRAY_UNSUPPORTED', message: /unpack\(\)/ });
  const unpacked = flags.unpack();
  assert.ok(unpacked instanceof Uint8Array);
  assert.deepEqual(Array.from(unpacked), [1, 0, 1, 0, 0, 1, 0, 1, 1]);
  // int4: two per byte, low nibble first, sign-extended.
  const nibbles = new Uint8Array(hurray.alloc(2));
  nibbles[0] = 0xf7;
  nibbles[1] = 0x08;
  const i4 = Tensor.fromBuffer(nibbles, 'int4', [2, 2]);
  const got = i4.unpack();
  assert.ok(got instanceof Int8Array);
  assert.deepEqual(Array.from(got), [7, -1, -8, 0]);
  assert.throws(() => h.unpack(), { code: 'ERR_HURRAY_UNSUPPORTED' });
  // And back: fromUnpacked packs one value per element.
  const packedFlags = Tensor.fromUnpacked(unpacked, 'bool', [9]);
  assert.deepEqual(Array.from(new Uint8Array(packedFlags.buffer(0))), [0b10100101, 0b1]);
  const packedI4 = Tensor.fromUnpacked(Int8Array.of(7, -1, -8, 0), 'int4', [2, 2]);
  assert.deepEqual(Array.from(new Uint8Array(packedI4.buffer(0))), [0xf7, 0x08]);
  const p2 = writeFile('bool.hrry', { flags: packedFlags, i4: packedI4 });
  const r2 = FileReader.open(p2);
  assert.deepEqual(Array.from(r2.tensor('flags').unpack()), [1, 0, 1, 0, 0, 1, 0, 1, 1]);
  assert.deepEqual(Array.from(r2.tensor('i4').unpack()), [7, -1, -8, 0]);
  r2.close();
  assert.throws(() => Tensor.fromUnpacked(Uint8Array.of(0, 2), 'bool', [2]), {
    code: 'ERR_HURRAY_INVALID_ARGUMENT',
    message: /element 1 = 0x02 does not fit bool/,
  });
  assert.throws(() => Tensor.fromUnpacked(Uint8Array.of(1), 'bool', [2]), { code: 'ERR_HURRAY_INVALID_ARGUMENT' });
  assert.throws(() => Tensor.fromUnpacked(Uint8Array.of(1), 'uint8', [1]), { code: 'ERR_HURRAY_UNSUPPORTED' });
  packedFlags.close();
  packedI4.close();
  assert.throws(() => flags.toFloat32(), { code: 'ERR_HURRAY_UNSUPPORTED' });
  for (const t of [h, b, flags, i4]) t.close();
});

// ---- 3. Device-tagged buffers ----------------------------------------------------

test('3: a CPU view of a buffer tagged cuda is refused', () => {
  const d = hurray.Descriptor.build({ dtype: 'float32', shape: [4], buffers: [{ byteSize: 16, device: 'cuda' }] });
  assert.equal(d.buffers()[0].deviceTag, 1);
  const t = Tensor.fromBuffers(d.encode(), [hurray.alloc(64)]);
  const refused = { code: 'ERR_HURRAY_UNSUPPORTED', message: /tagged device cuda: a CPU view of device memory is refused/ };
  assert.throws(() => t.array(), refused);
  assert.throws(() => t.buffer(0), refused);
  assert.throws(() => t.buffers(), refused);
  assert.throws(() => t.toFloat32(), refused);
  // Its descriptor still answers.
  assert.deepEqual(t.shape, [4]);
  t.close();
  // Misaligned memory of a device buffer cannot be copied here: refused.
  assert.throws(() => Tensor.fromBuffers(d.encode(), [new Uint8Array(new ArrayBuffer(80), 4, 16)]), {
    code: 'ERR_HURRAY_INVALID_ARGUMENT',
    message: /device memory cannot be copied/,
  });
  assert.throws(() => hurray.Descriptor.build({ dtype: 'float32', shape: [1], buffers: [{ byteSize: 4, device: 'gpu' }] }), {
    code: 'ERR_HURRAY_INVALID_ARGUMENT',
  });
});

// ---- 4. NUL bytes in names and keys ------------------------------------------------

test('4: names, keys and string values with NUL bytes are written and read back; metadata() works', () => {
  const t = Tensor.fromBuffer(f32(hurray, [1, 2]), 'float32', [2]);
  const p = path.join(dir, 'nul.hrry');
  const w = FileWriter.create(p, { durable: false });
  w.writeTensor('a\0b', t);
  w.writeTensor('plain', t);
  w.addString('k\0ey', 'v\0w');
  w.addInt64('n\0', 5n);
  w.finish();
  const r = FileReader.open(p);
  assert.deepEqual(r.names, ['a\0b', 'plain']);
  assert.deepEqual(Array.from(r.tensor('a\0b').array('float32')), [1, 2]);
  assert.deepEqual(r.descriptor('a\0b').shape, [2]);
  assert.throws(() => r.tensor('a'), { code: 'ERR_HURRAY_NOT_FOUND' });
  assert.deepEqual(r.keys, ['k\0ey', 'n\0']);
  const md = r.metadata();
  assert.deepEqual(Object.keys(md), ['k\0ey', 'n\0']);
  assert.equal(md['k\0ey'], 'v\0w');
  assert.equal(md['n\0'], 5n);
  assert.equal(r.value('k\0ey'), 'v\0w');
  r.close();
  t.close();
  // Paths still refuse NUL (the operating system takes them NUL-terminated).
  assert.throws(() => FileReader.open('x\0y'), { code: 'ERR_HURRAY_INVALID_ARGUMENT' });
});

// ---- 10. Non-blocking files -------------------------------------------------------

test('10: timers keep firing during a 256 MiB asynchronous write', async (ctx) => {
  const bytes = 256 << 20;
  const data = new Float32Array(hurray.alloc(bytes));
  data[0] = 1.25;
  data[data.length - 1] = -7;
  const t = Tensor.fromBuffer(data, 'float32', [bytes / 4], { strict: true });
  const p = path.join(dir, 'big.hrry');
  let ticks = 0;
  const timer = setInterval(() => ticks++, 1);
  const start = process.hrtime.bigint();
  try {
    const w = await FileWriter.createAsync(p, { durable: false });
    const writing = w.writeTensorAsync('big', t);
    // While it runs, the writer refuses synchronous calls.
    assert.throws(() => w.addString('k', 'v'), { code: 'ERR_HURRAY_STATE', message: /asynchronous operation/ });
    await writing;
    await w.finishAsync();
  } finally {
    clearInterval(timer);
  }
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  ctx.diagnostic(`256 MiB asynchronous write: ${ms.toFixed(0)} ms, ${ticks} timer ticks`);
  assert.ok(ticks >= 10, `only ${ticks} timer ticks during a ${ms.toFixed(0)} ms write`);
  const r = await FileReader.openAsync(p);
  const back = r.tensor('big').array('float32');
  assert.equal(back.length, bytes / 4);
  assert.equal(back[0], 1.25);
  assert.equal(back[back.length - 1], -7);
  r.close();
  t.close();
  fs.rmSync(p);
});

test('10: asynchronous calls queue in call order and reject with the library error', async () => {
  const p = path.join(dir, 'queued.hrry');
  const w = await FileWriter.createAsync(p, { durable: false });
  const ts = [1, 2, 3].map((v) => Tensor.fromBuffer(f32(hurray, [v]), 'float32', [1]));
  // Not awaited one by one: the package queues them.
  await Promise.all([w.writeTensorAsync('a', ts[0]), w.writeTensorAsync('b', ts[1]), w.writeTensorAsync('c', ts[2])]);
  await w.writeItemAsync('d', hurray.Item.of(Tensor.fromBuffer(f32(hurray, [4]), 'float32', [1])));
  await assert.rejects(w.writeTensorAsync('a', ts[0]), (e) => e instanceof HurrayError && e.code === 'ERR_HURRAY_FORMAT' && /DuplicateName/.test(e.message));
  await w.finishAsync();
  await assert.rejects(w.finishAsync(), { code: 'ERR_HURRAY_STATE' });
  const r = FileReader.open(p);
  assert.deepEqual(r.names, ['a', 'b', 'c', 'd']);
  assert.equal(r.tensor('d').array('float32')[0], 4);
  assert.deepEqual([...r.tensors()].map((t) => t.array('float32')[0]), [1, 2, 3, 4]);
  r.close();
  await assert.rejects(FileReader.openAsync(path.join(dir, 'missing.hrry')), (e) => {
    assert.ok(e instanceof HurrayError);
    assert.equal(e.code, 'ENOENT');
    assert.match(e.message, /^HURRAY_ERR_/);
    return true;
  });
  await assert.rejects(FileWriter.createAsync(path.join(dir, 'no', 'such', 'dir.hrry')), { code: 'ENOENT' });
  // close() while a write runs abandons the file once it is over.
  const p2 = path.join(dir, 'abandoned.hrry');
  const w2 = await FileWriter.createAsync(p2, { durable: false });
  const pending = w2.writeTensorAsync('a', ts[0]);
  w2.close();
  await pending.catch(() => {});
  await assert.rejects(w2.finishAsync(), { code: 'ERR_HURRAY_STATE' });
  assert.equal(fs.existsSync(p2), false);
  for (const t of ts) t.close();
});

// ---- 11. Workers ------------------------------------------------------------------

test('11: postMessage(tensor) throws a clear error instead of sending {}; the stream encoding crosses', async () => {
  const t = Tensor.fromBuffer(f32(hurray, [1, 2, 3]), 'float32', [3]);
  const p = writeFile('post.hrry', { t });
  const r = FileReader.open(p);
  const fromFile = r.tensor('t');
  const item = hurray.Item.of(Tensor.fromBuffer(f32(hurray, [4]), 'float32', [1]));
  const decoded = hurray.decodeStream(hurray.encodeStream([t]))[0];
  const clear = (e) => {
    assert.ok(e instanceof HurrayError);
    assert.equal(e.code, 'ERR_HURRAY_UNSUPPORTED');
    assert.match(e.message, /cannot be posted to a worker.*encodeStream/);
    return true;
  };
  const { port1, port2 } = new MessageChannel();
  for (const x of [t, fromFile, item, decoded, r.tensors()[0], item.tensor]) {
    assert.throws(() => structuredClone(x), clear);
    assert.throws(() => port1.postMessage({ payload: x }), clear);
  }
  // What to send instead: the stream encoding (a plain Buffer).
  const got = new Promise((resolve) => port2.once('message', resolve));
  port1.postMessage(hurray.encodeStream([t]));
  const [back] = hurray.decodeStream(await got);
  assert.deepEqual(Array.from(back.array('float32')), [1, 2, 3]);
  port1.close();
  // JSON gives a summary, not {} or an error.
  assert.equal(JSON.stringify(t), '{"dtype":"float32","shape":[3],"layout":"row_major"}');
  for (const x of [t, fromFile, item, decoded, back]) x.close();
  r.close();
});

// ---- 12. Idioms -------------------------------------------------------------------

test('12: Symbol.dispose, util.inspect and toString, HurrayError, array(dtype)', () => {
  const t = Tensor.fromBuffer(f32(hurray, [1, 2, 3, 4, 5, 6]), 'float32', [2, 3]);
  assert.equal(String(t), 'Tensor float32[2, 3] row_major');
  assert.equal(util.inspect(t), 'Tensor <float32[2, 3] row_major>');
  assert.equal(util.inspect(t.descriptor()), 'Descriptor <float32[2, 3] row_major>');
  assert.throws(() => t.array('int32'), { code: 'ERR_HURRAY_INVALID_ARGUMENT', message: /dtype float32/ });
  assert.equal(t.array('float32').reduce((a, b) => a + b, 0), 21);
  const item = hurray.Item.of(Tensor.fromBuffer(f32(hurray, [1]), 'float32', [1]));
  assert.equal(String(item), 'Item float32[1] row_major');
  item[Symbol.dispose]();
  t[Symbol.dispose]();
  assert.equal(t.closed, true);
  assert.equal(String(t), 'Tensor closed');
  assert.equal(util.inspect(t), 'Tensor <closed>');
  const r = FileReader.open(writeFile('dispose.hrry', {}));
  r[Symbol.dispose]();
  assert.throws(() => r.names, { code: 'ERR_HURRAY_STATE' });

  // HurrayError: a class; every error of the library is one, whichever call threw.
  let caught;
  try {
    FileReader.open(path.join(dir, 'nope.hrry'));
  } catch (e) {
    caught = e;
  }
  assert.ok(caught instanceof HurrayError);
  assert.ok(caught instanceof Error);
  assert.equal(caught.code, 'ENOENT');
  for (const f of [() => t.shape, () => hurray.Descriptor.dense('float33', [1]), () => hurray.decodeStream(Buffer.from('junk'))]) {
    assert.throws(f, (e) => e instanceof HurrayError && e.code.startsWith('ERR_HURRAY_'));
  }
  const own = new HurrayError('HURRAY_ERR_STATE: mine', 'ERR_HURRAY_STATE');
  assert.ok(own instanceof HurrayError);
  assert.equal(own.name, 'HurrayError');
  assert.equal(new TypeError('x') instanceof HurrayError, false);
  assert.equal(Object.assign(new Error('x'), { code: 'ENOENT' }) instanceof HurrayError, false);
  assert.equal(({ code: 'ERR_HURRAY_STATE', message: 'HURRAY_ERR_STATE: x' }) instanceof HurrayError, false);
});
