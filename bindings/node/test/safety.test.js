'use strict';
// Memory safety and stream integrity: buffers that can shrink or vanish under a
// tensor are refused, native memory is reported to the garbage collector, stream
// writes never interleave or reuse memory early, refused moves leave inputs usable.

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { PassThrough, Writable } = require('node:stream');
const { spawnSync } = require('node:child_process');

const hurray = require('..');
const { tmpdir, collect, tick, f32 } = require('./helpers');
const { debugExternalMemory, debugLiveObjects, uncheckedFromBuffer } = require('../lib/testing');

const dir = tmpdir();

/** A Float32Array of `n` elements over `ab`, at the first 64-byte aligned offset. */
function alignedOver(ab, n, fromBuffer = hurray.Tensor.fromBuffer) {
  for (let off = 0; off + n * 4 <= ab.byteLength; off += 4) {
    const a = new Float32Array(ab, off, n);
    try {
      fromBuffer(a, 'float32', [n], { strict: true }).close();
      return a;
    } catch (e) {
      if (e.code !== 'ERR_HURRAY_INVALID_ARGUMENT') throw e;
    }
  }
  throw new Error('no 64-byte aligned offset');
}

test('resizable ArrayBuffers and growable SharedArrayBuffers are refused', (t) => {
  let ab;
  try {
    ab = new ArrayBuffer(256, { maxByteLength: 4096 });
  } catch {
    ab = null;
  }
  if (!ab || ab.resizable !== true) {
    t.skip('this Node has no resizable ArrayBuffers');
    return;
  }
  const refused = { code: 'ERR_HURRAY_INVALID_ARGUMENT', message: /resizable|growable/ };
  assert.throws(() => hurray.Tensor.fromBuffer(ab, 'uint8', [64]), refused);
  assert.throws(() => hurray.Tensor.fromBuffer(new Uint8Array(ab), 'uint8', [64]), refused);
  assert.throws(() => hurray.Tensor.fromBuffer(new DataView(ab), 'uint8', [64]), refused);
  assert.throws(() => hurray.Tensor.fromBuffer(Buffer.from(ab), 'uint8', [64]), refused);
  const desc = hurray.Descriptor.dense('uint8', [64]).encode();
  assert.throws(() => hurray.Tensor.fromBuffers(desc, [new Uint8Array(ab)]), refused);
  const sab = new SharedArrayBuffer(256, { maxByteLength: 4096 });
  if (sab.growable === true) {
    assert.throws(() => hurray.Tensor.fromBuffer(new Uint8Array(sab), 'uint8', [64]), refused);
  }
  // A fixed-length SharedArrayBuffer is still fine (when aligned).
  const fixed = new SharedArrayBuffer(4096);
  const view = alignedOver(fixed, 16);
  hurray.Tensor.fromBuffer(view, 'float32', [16]).close();
});

test('a transferred (detached) lent ArrayBuffer is refused before its memory is used', () => {
  const ab = new ArrayBuffer(4096);
  const a = alignedOver(ab, 16, uncheckedFromBuffer);
  a.fill(7);
  // The public fromBuffer marks `ab` untransferable (tested in hardening.test.js);
  // the native checks behind it are tested without the mark.
  const t = uncheckedFromBuffer(a, 'float32', [16], { strict: true });
  structuredClone(ab, { transfer: [ab] });
  assert.equal(ab.detached ?? ab.byteLength === 0, true);
  const gone = { code: 'ERR_HURRAY_STATE', message: /transferred or detached/ };
  assert.throws(() => t.array(), gone);
  assert.throws(() => t.buffer(0), gone);
  assert.throws(() => hurray.encodeStream([t]), gone);
  assert.throws(() => new hurray.StreamEncoder().encode(t), gone);
  const w = hurray.FileWriter.create(path.join(dir, 'detached.hrry'));
  assert.throws(() => w.writeTensor('t', t), gone);
  w.close();
  t.close();
});

// Without an explicit gc(): the charge alone must make V8 collect (and so unmap or
// free) tensors and readers the program dropped without closing.
async function dropUntilCollected(make, rounds) {
  const base = debugLiveObjects();
  for (let i = 0; i < rounds; i++) {
    make();
    await tick();
  }
  for (let i = 0; i < 20; i++) await new Promise((resolve) => setTimeout(resolve, 5));
  return debugLiveObjects() - base;
}

test('dropped decoded tensors are collected: their bytes are external memory', async () => {
  const n = 4 << 20; // 16 MiB of float32
  const src = hurray.Tensor.fromBuffer(new Float32Array(hurray.alloc(n * 4)), 'float32', [n]);
  const bytes = hurray.encodeStream([src]);
  src.close();
  await collect();
  const rounds = 40; // 640 MiB if nothing were collected
  const live = await dropUntilCollected(() => hurray.decodeStream(bytes), rounds);
  // Without the charge V8 would collect none of them (the JS heap barely grows);
  // how many survive depends on when its heuristics fire, so the bound is loose.
  assert.ok(live < (rounds * 3) / 4, `${live} of ${rounds} dropped 16 MiB tensors still alive`);
});

test('dropped FileReaders are collected: each mapping is charged', async () => {
  const file = path.join(dir, 'external.hrry');
  const w = hurray.FileWriter.create(file);
  w.writeTensor('t', hurray.Tensor.fromBuffer(f32(hurray, [1, 2, 3, 4]), 'float32', [4]));
  w.finish();
  w.close();
  await collect();
  const rounds = 400;
  const live = await dropUntilCollected(() => hurray.FileReader.open(file).tensor('t'), rounds);
  assert.ok(live < rounds, `${live} objects of ${rounds} dropped readers and tensors still alive`);
});

test('views of a mapped tensor add nothing to the external memory V8 counts', async () => {
  const n = 8 << 20; // 32 MiB of float32
  const file = path.join(dir, 'uncounted.hrry');
  const src = hurray.Tensor.fromBuffer(new Float32Array(hurray.alloc(n * 4)), 'float32', [n]);
  const w = hurray.FileWriter.create(file, { durable: false });
  w.writeTensor('t', src);
  w.finish();
  w.close();
  src.close();
  await collect();
  const external = debugExternalMemory;
  const base = external();
  const r = hurray.FileReader.open(file);
  const t = r.tensor('t');
  const opened = external() - base;
  const views = [t.buffer(0), t.array(), ...t.buffers()];
  assert.equal(views[0].byteLength, n * 4);
  // The mapping is charged to the reader and the tensor (1 MiB + 16 KiB), once; V8
  // would add the view's 32 MiB.
  assert.ok(opened >= 1 << 20 && opened < 2 << 20, `reader + tensor report ${opened} bytes`);
  const viewed = external() - base - opened;
  assert.ok(Math.abs(viewed) < 1 << 20, `the views changed external memory by ${viewed} bytes`);
  t.close();
  r.close();
  views.length = 0;
  await collect();
  const left = external() - base;
  assert.ok(Math.abs(left) < 1 << 20, `${left} bytes still reported after everything was collected`);
});

test('taking every tensor of a many-tensor file reports a small charge per tensor', () => {
  const file = path.join(dir, 'many-tensors.hrry');
  const w = hurray.FileWriter.create(file, { durable: false });
  const t = hurray.Tensor.fromBuffer(f32(hurray, [1, 2, 3, 4]), 'float32', [4]);
  for (let i = 0; i < 256; i++) w.writeTensor(`t${i}`, t);
  w.finish();
  w.close();
  t.close();
  const external = debugExternalMemory;
  const r = hurray.FileReader.open(file);
  const before = external();
  const all = r.tensors();
  const charged = external() - before;
  // 16 KiB each (4 MiB in all), not the reader's 1 MiB each (256 MiB).
  assert.ok(charged >= 256 * (16 << 10) && charged < 8 << 20, `256 tensors report ${charged} bytes`);
  for (const x of all) x.close();
  assert.ok(external() - before < 1 << 20, 'close() gives the charges back');
  r.close();
});

test('readers opened in one synchronous loop stop with HURRAY_ERR_LIMIT, not an abort', (t) => {
  let max = Infinity;
  try {
    max = Number(fs.readFileSync('/proc/sys/vm/max_map_count', 'utf8'));
  } catch {
    // not Linux: no mapping limit to guard
  }
  if (!(max <= 300000)) {
    t.skip(`vm.max_map_count is ${max}: no guard here, or too many readers to open in a test`);
    return;
  }
  const file = path.join(dir, 'many.hrry');
  const w = hurray.FileWriter.create(file);
  w.writeTensor('t', hurray.Tensor.fromBuffer(f32(hurray, [1]), 'float32', [1]));
  w.finish();
  w.close();
  // In a child: the loop never yields, so no finalizer can unmap anything.
  const code = `
    const h = require(${JSON.stringify(path.resolve(__dirname, '..'))});
    try {
      for (let i = 0; i < ${max + 1000}; i++) h.FileReader.open(${JSON.stringify(file)});
      console.log('no limit');
    } catch (e) {
      console.log(e.code);
    }`;
  const r = spawnSync(process.execPath, ['-e', code], { encoding: 'utf8', timeout: 120000 });
  assert.equal(r.status, 0, r.stderr.slice(-2000));
  assert.equal(r.stdout.trim(), 'ERR_HURRAY_LIMIT');
});

/** A 64-byte aligned float32 tensor of `n` elements, all `v`. */
function filled(n, v) {
  const a = new Float32Array(hurray.alloc(n * 4));
  a.fill(v);
  return { a, t: hurray.Tensor.fromBuffer(a, 'float32', [n]) };
}

/** A Writable that takes chunks slowly (each callback after a timer), keeping copies. */
function slowSink(delay = 2, highWaterMark = 16) {
  const got = [];
  const sink = new Writable({
    highWaterMark,
    write(chunk, _enc, cb) {
      setTimeout(() => {
        got.push(Buffer.from(chunk)); // copied only now, as a socket would send it
        cb();
      }, delay);
    },
  });
  return { sink, got };
}

test('overlapping StreamWriter.write calls are serialised, whole tensors in order', async () => {
  const { sink, got } = slowSink(1);
  const w = new hurray.StreamWriter(sink);
  const ts = [1, 2, 3, 4].map((v) => filled(1024, v).t);
  await Promise.all(ts.map((t) => w.write(t)));
  await w.end();
  const out = hurray.decodeStream(Buffer.concat(got));
  assert.equal(out.length, 4);
  out.forEach((t, i) => {
    const a = t.array();
    assert.equal(a.length, 1024);
    assert.ok(a.every((x) => x === i + 1), `tensor ${i} intact`);
  });
});

test('memory may be refilled once write() resolved (callback-consuming Writable)', async () => {
  const { sink, got } = slowSink(5, 1 << 20); // write() never asks to wait for drain
  const w = new hurray.StreamWriter(sink);
  const { a, t } = filled(256, 1);
  await w.write(t);
  a.fill(2); // refill after the await
  await w.write(t);
  await w.end();
  const [x, y] = hurray.decodeStream(Buffer.concat(got));
  assert.ok(x.array().every((v) => v === 1), 'the first write kept its bytes');
  assert.ok(y.array().every((v) => v === 2));
});

test('StreamWriter {copy: true} decouples the wire from the tensor memory', async () => {
  const pipe = new PassThrough();
  const chunks = [];
  const w = new hurray.StreamWriter(pipe, undefined, { copy: true });
  const { a, t } = filled(64, 1);
  await w.write(t);
  a.fill(9); // nobody has read the PassThrough yet
  const ended = w.end();
  for await (const c of pipe) chunks.push(c);
  await ended;
  const [x] = hurray.decodeStream(Buffer.concat(chunks));
  assert.ok(x.array().every((v) => v === 1));
});

test('write() rejects when the Writable is destroyed while waiting for drain', async () => {
  const sink = new Writable({ highWaterMark: 1, write() {} }); // never calls back
  const w = new hurray.StreamWriter(sink);
  const p = w.write(filled(1024, 1).t);
  setTimeout(() => sink.destroy(), 10);
  await assert.rejects(p);
});

test('end() rejects when the stream errored', async () => {
  const sink = new Writable({
    write(_c, _e, cb) {
      cb();
    },
    final(cb) {
      cb(new Error('disk full'));
    },
  });
  sink.on('error', () => {});
  const w = new hurray.StreamWriter(sink);
  await w.write(filled(16, 1).t);
  await assert.rejects(w.end(), /disk full/);
  const sink2 = new Writable({ write(_c, _e, cb) { cb(); } });
  const w2 = new hurray.StreamWriter(sink2);
  sink2.destroy();
  await assert.rejects(w2.end());
  await assert.rejects(w2.write(filled(16, 1).t), { code: 'ERR_HURRAY_STATE' });
});

function head(memberCount) {
  const d = hurray.Descriptor.build({
    dtype: 'float32',
    shape: [8, 8],
    layout: 'composite_head',
    composite: { memberCount, rule: 'partition' },
    buffers: [],
  });
  return hurray.Tensor.fromBuffers(d.encode(), []);
}

test('a refused Item.composite leaves the head and every member usable', async () => {
  let released = 0;
  const plain = hurray.Tensor.fromBuffer(f32(hurray, [1]), 'float32', [1], {
    onRelease: () => released++,
  });
  assert.throws(() => hurray.Item.composite(plain, []), { code: 'ERR_HURRAY_INVALID_ARGUMENT' });
  assert.equal(plain.closed, false, 'a plain tensor refused as head stays open');
  assert.equal(plain.array()[0], 1);

  const h = head(2);
  const one = hurray.Item.of(hurray.Tensor.fromBuffer(f32(hurray, [1]), 'float32', [1]));
  assert.throws(() => hurray.Item.composite(h, [one]), {
    code: 'ERR_HURRAY_INVALID_ARGUMENT',
    message: /declares 2 member\(s\), 1 given/,
  });
  assert.equal(h.closed, false);
  {
    const mt = one.tensor;
    assert.equal(mt.array()[0], 1, 'the member is still usable');
    mt.close();
  }
  await collect(); // the view of its tensor held the item

  // A later member that cannot move: nothing moves.
  const two = hurray.Item.of(hurray.Tensor.fromBuffer(f32(hurray, [2]), 'float32', [1]));
  const held = two.tensor; // a tensor taken from it keeps it from moving
  assert.throws(() => hurray.Item.composite(h, [one, two]), { code: 'ERR_HURRAY_STATE' });
  assert.equal(h.closed, false);
  assert.equal(one.isComposite, false, 'the earlier member was not consumed');
  held.close();
  await collect();
  const c = hurray.Item.composite(h, [one, two]);
  assert.equal(c.members.length, 2);
  assert.equal(h.closed, true);
  c.close();
  plain.close();
});

test('buffer(i) refuses indices that do not fit, instead of wrapping', () => {
  const t = hurray.Tensor.fromBuffer(f32(hurray, [1]), 'float32', [1]);
  for (const i of [2 ** 32, -1, 0.5, 2 ** 32 + 0]) {
    assert.throws(() => t.buffer(i), { code: 'ERR_HURRAY_INVALID_ARGUMENT' }, String(i));
  }
  assert.throws(() => t.buffer(1), { code: 'ERR_HURRAY_INVALID_ARGUMENT' });
  t.close();
});

test('feed after finish() throws HURRAY_ERR_STATE', () => {
  const dec = new hurray.StreamDecoder();
  dec.feed(hurray.encodeStream([hurray.Tensor.fromBuffer(f32(hurray, [1]), 'float32', [1])]));
  dec.next().close();
  dec.finish();
  assert.throws(() => dec.feed(Buffer.alloc(4)), { code: 'ERR_HURRAY_STATE' });
  dec.close();
});

test('decodeStream and encodeStream take limits', () => {
  const t = hurray.Tensor.fromBuffer(f32(hurray, [1, 2, 3, 4]), 'float32', [4]);
  assert.throws(() => hurray.encodeStream([t], { maxBufferBytes: 8 }), { code: 'ERR_HURRAY_LIMIT' });
  const bytes = hurray.encodeStream([t]);
  assert.throws(() => hurray.decodeStream(bytes, { maxBufferBytes: 8 }), { code: 'ERR_HURRAY_LIMIT' });
  t.close();
});

test('FileWriter.create refuses a dataBufferAlignment outside 4096..2 MiB', () => {
  for (const a of [64, 1000, 4 << 20]) {
    assert.throws(() => hurray.FileWriter.create(path.join(dir, 'align.hrry'), { dataBufferAlignment: a }), {
      code: 'ERR_HURRAY_INVALID_ARGUMENT',
      message: /4096\.\.=2097152/,
    });
  }
  hurray.FileWriter.create(path.join(dir, 'align.hrry'), { dataBufferAlignment: 1 << 16 }).close();
});

test('array() of a misaligned byteOffset names the offset, not a size', () => {
  const d = hurray.Descriptor.build({ dtype: 'float32', shape: [2], byteOffset: 2, buffers: [{ byteSize: 64 }] });
  const t = hurray.Tensor.fromBuffers(d.encode(), [new Uint8Array(hurray.alloc(64))]);
  assert.throws(() => t.array(), { code: 'ERR_HURRAY_UNSUPPORTED', message: /byteOffset 2 is not a multiple/ });
  assert.equal(t.buffer(0).byteLength, 64);
  t.close();
});

test('unused file is not left behind', () => {
  assert.equal(fs.existsSync(path.join(dir, 'detached.hrry')), false);
});
