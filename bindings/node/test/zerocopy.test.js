'use strict';
// Zero copy: views of a mapped tensor alias the mapping; a tensor over a caller's
// buffer shares its memory; stream payload chunks are the tensor's own memory.

const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');

const hurray = require('..');
const { debugBufferAddress } = require('../lib/testing');
const { tmpdir, f32 } = require('./helpers');

const dir = tmpdir();

function writeFile(name, values) {
  const file = path.join(dir, name);
  const w = hurray.FileWriter.create(file, { durable: false });
  const t = hurray.Tensor.fromBuffer(f32(hurray, values), 'float32', [values.length]);
  w.writeTensor('t', t);
  w.finish();
  w.close();
  t.close();
  return file;
}

test('two views of a mapped tensor see each other\'s writes; the file does not change', () => {
  const file = writeFile('alias.hrry', [1, 2, 3, 4]);
  const r = hurray.FileReader.open(file);
  const t = r.tensor('t');
  const a = t.array();
  const b = new Float32Array(t.buffer(0));
  const again = r.tensor('t');
  assert.equal(a[2], 3);
  a[2] = 42;
  assert.equal(b[2], 42, 'the second view aliases the first');
  assert.equal(again.array()[2], 42, 'a second tensor of the same name maps the same pages');
  // The mapping is copy-on-write: a fresh reader sees the file's bytes.
  const fresh = hurray.FileReader.open(file);
  assert.equal(fresh.tensor('t').array()[2], 3);
  // The view's address is the buffer's address inside the mapping, aligned as the
  // file says.
  const addr = debugBufferAddress(t, 0);
  assert.equal(addr % fresh.info.dataBufferAlignment, 0);
});

test('a tensor over a caller Buffer shares its memory both ways', () => {
  const src = f32(hurray, [1, 2, 3, 4, 5, 6]);
  const t = hurray.Tensor.fromBuffer(src, 'float32', [2, 3]);
  const view = t.array();
  src[0] = 10;
  assert.equal(view[0], 10, 'caller writes are visible through the tensor');
  view[5] = 60;
  assert.equal(src[5], 60, 'writes through the tensor reach the caller');
  // Same address: no copy; one ArrayBuffer per buffer while it lives.
  const ab = t.buffer(0);
  assert.equal(t.buffer(0), ab, 'buffer(0) hands out the same ArrayBuffer again');
  assert.equal(t.array().buffer, ab, 'array() views that ArrayBuffer');
  assert.equal(ab.byteLength, 24);
  assert.equal(new Float32Array(ab)[5], 60);
  t.close();
});

test('stream payload chunks are the tensor\'s own memory', () => {
  const src = f32(hurray, [1, 2, 3, 4]);
  const t = hurray.Tensor.fromBuffer(src, 'float32', [4]);
  const chunks = new hurray.StreamEncoder().encode(t);
  const payload = chunks.find((c) => c.byteLength === 16);
  assert.ok(payload, 'one chunk is the 16-byte payload');
  src[1] = 99;
  assert.equal(new Float32Array(payload)[1], 99, 'the chunk aliases the caller memory');
  t.close();
});

/** A COO float32 [4, 4] tensor with 3 stored values: two buffers (values, coordinates). */
function coo() {
  const d = hurray.Descriptor.build({
    dtype: 'float32',
    shape: [4, 4],
    layout: 'coo',
    nnz: 3,
    cooSorted: true,
    buffers: [{ byteSize: 3 * 4 }, { byteSize: 3 * 2 * 8 }],
  });
  const bufs = d.buffers().map((b) => new Uint8Array(hurray.alloc(b.byteSize)));
  new Float32Array(bufs[0].buffer).set([1.5, -2, 7]);
  new BigUint64Array(bufs[1].buffer).set([0n, 1n, 2n, 0n, 3n, 3n]);
  return hurray.Tensor.fromBuffers(d.encode(), bufs);
}

test('FileReader.tensors() gives every tensor in names order, as tensor(name) does', () => {
  const file = path.join(dir, 'all.hrry');
  const w = hurray.FileWriter.create(file, { durable: false });
  const dense = hurray.Tensor.fromBuffer(f32(hurray, [1, 2, 3]), 'float32', [3]);
  const sparse = coo();
  w.writeTensor('b', dense);
  w.writeTensor('a', sparse);
  w.writeTensor('c', dense);
  w.finish();
  w.close();
  const r = hurray.FileReader.open(file);
  const all = r.tensors();
  assert.deepEqual(r.names, ['b', 'a', 'c']);
  assert.equal(all.length, 3);
  all.forEach((t, i) => {
    const one = r.tensor(r.names[i]);
    assert.deepEqual(t.descriptorBytes(), one.descriptorBytes());
    for (let b = 0; b < one.bufferCount; b++) {
      assert.equal(debugBufferAddress(t, b), debugBufferAddress(one, b), 'the same mapped bytes');
    }
    one.close();
  });
  assert.deepEqual(Array.from(new Float32Array(all[1].buffer(0))), [1.5, -2, 7]);
  r.close();
  // Like tensor(), they outlive the reader.
  assert.deepEqual(Array.from(all[0].array()), [1, 2, 3]);
  assert.throws(() => r.tensors(), { code: 'ERR_HURRAY_STATE' });
  for (const t of all) t.close();
  dense.close();
  sparse.close();
});

test('Tensor.buffers() gives the ArrayBuffers buffer(i) gives, in buffer-table order', () => {
  const t = coo();
  const bufs = t.buffers();
  assert.equal(bufs.length, t.bufferCount);
  assert.equal(bufs.length, 2);
  bufs.forEach((ab, i) => assert.equal(ab, t.buffer(i), `buffer ${i} is the cached one`));
  assert.deepEqual(Array.from(new BigUint64Array(bufs[1])), [0n, 1n, 2n, 0n, 3n, 3n]);
  t.close();
  assert.throws(() => t.buffers(), { code: 'ERR_HURRAY_STATE' });
});

test('FileReader.views() gives what tensors().map((t) => t.buffers()) gives, and keeps the mapping', async () => {
  const { debugLiveMappings, debugLiveObjects } = require('../lib/testing');
  const { collect } = require('./helpers');
  const file = path.join(dir, 'views.hrry');
  const w = hurray.FileWriter.create(file, { durable: false });
  const dense = hurray.Tensor.fromBuffer(f32(hurray, [1, 2, 3]), 'float32', [3]);
  const sparse = coo();
  const d = hurray.Descriptor.build({ dtype: 'float32', shape: [2], layout: 'composite_head', composite: { memberCount: 1, rule: 'group' }, buffers: [] });
  const head = hurray.Item.composite(hurray.Tensor.fromBuffers(d.encode(), []), [
    hurray.Item.of(hurray.Tensor.fromBuffer(f32(hurray, [4, 5]), 'float32', [2])),
  ]);
  w.writeTensor('b', dense);
  w.writeTensor('a', sparse);
  w.writeItem('h', head);
  w.finish();
  w.close();
  dense.close();
  sparse.close();
  head.close();
  await collect();
  const objects = debugLiveObjects();
  const mappings = debugLiveMappings();
  const r = hurray.FileReader.open(file);
  let views = r.views();
  const all = r.tensors();
  assert.deepEqual(r.names, ['b', 'a', 'h', 'h/0']);
  assert.deepEqual(views.map((v) => v.length), [1, 2, 0, 1], 'one ArrayBuffer per buffer; none for the head');
  views.forEach((abs, i) => {
    const bufs = all[i].buffers();
    assert.equal(abs.length, bufs.length);
    abs.forEach((ab, b) => {
      assert.notEqual(ab, bufs[b], 'views of their own, not the Tensor\'s cached ones');
      assert.deepEqual(new Uint8Array(ab), new Uint8Array(bufs[b]), `${r.names[i]} buffer ${b}`);
    });
  });
  assert.deepEqual(Array.from(new Float32Array(views[0][0])), [1, 2, 3]);
  assert.deepEqual(Array.from(new BigUint64Array(views[1][1])), [0n, 1n, 2n, 0n, 3n, 3n]);
  assert.deepEqual(Array.from(new Float32Array(views[3][0])), [4, 5]);
  // Zero copy: a write through a view is seen by the tensor over the same bytes.
  new Float32Array(views[0][0])[1] = 9;
  assert.equal(all[0].array()[1], 9);
  for (const t of all) t.close();
  r.close();
  assert.throws(() => r.views(), { code: 'ERR_HURRAY_STATE' });
  // The views outlive the reader and hold its mapping until they are collected.
  await collect();
  assert.equal(debugLiveMappings(), mappings + 1, 'live views keep the mapping');
  assert.deepEqual(Array.from(new Float32Array(views[3][0])), [4, 5]);
  views = null;
  await collect();
  assert.equal(debugLiveMappings(), mappings, 'collected views release the mapping');
  assert.equal(debugLiveObjects(), objects, 'and every tensor handle');
});
