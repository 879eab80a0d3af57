'use strict';
// Round trips through streams (Node streams and in-memory bytes) and files: dense,
// sparse (CSR, over a conformance descriptor), empty tensors; KV metadata.

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { PassThrough, Readable } = require('node:stream');

const hurray = require('..');
const { debugLiveObjects } = require('../lib/testing');
const { conformance, skipConformance, tmpdir, until, collect, f32 } = require('./helpers');

const dir = tmpdir();

function dense() {
  return hurray.Tensor.fromBuffer(f32(hurray, [1, 2, 3, 4, 5, 6]), 'float32', [2, 3]);
}

function int64s() {
  const a = new BigInt64Array(hurray.alloc(3 * 8));
  a.set([-1n, 2n ** 62n, 7n]);
  return hurray.Tensor.fromBuffer(a, 'int64', [3]);
}

function empty() {
  return hurray.Tensor.fromBuffer(new Float32Array(0), 'float32', [0, 4]);
}

test('stream round trip over a PassThrough: dense, int64, empty', async () => {
  await collect();
  const before = debugLiveObjects();
  const pipe = new PassThrough();
  const writer = new hurray.StreamWriter(pipe);
  const sources = [dense(), int64s(), empty()];
  const reading = (async () => {
    const got = [];
    for await (const t of new hurray.StreamReader(pipe)) got.push(t);
    return got;
  })();
  for (const t of sources) await writer.write(t);
  await writer.end();
  const got = await reading;
  assert.equal(got.length, 3);
  assert.deepEqual(got[0].shape, [2, 3]);
  assert.equal(got[0].dtype, 'float32');
  assert.deepEqual(Array.from(got[0].array()), [1, 2, 3, 4, 5, 6]);
  assert.deepEqual(Array.from(got[1].array()), [-1n, 2n ** 62n, 7n]);
  assert.deepEqual(got[2].shape, [0, 4]);
  assert.equal(got[2].array().length, 0);
  assert.equal(got[2].buffer(0).byteLength, 0);
  for (const t of [...sources, ...got]) t.close();
  await until(() => debugLiveObjects() === before, 'every handle to be released');
});

test('stream bytes arrive one byte at a time', async () => {
  const bytes = hurray.encodeStream([dense(), dense()]);
  const chunks = Array.from(bytes, (b) => Buffer.from([b]));
  const got = [];
  for await (const t of new hurray.StreamReader(Readable.from(chunks))) got.push(t);
  assert.equal(got.length, 2);
  for (const t of got) assert.deepEqual(Array.from(t.array()), [1, 2, 3, 4, 5, 6]);
  assert.deepEqual(
    hurray.decodeStream(bytes).map((t) => t.shape),
    [
      [2, 3],
      [2, 3],
    ],
  );
});

test('a clean empty stream yields nothing', async () => {
  const got = [];
  for await (const t of new hurray.StreamReader(Buffer.alloc(0))) got.push(t);
  assert.equal(got.length, 0);
});

test('file round trip with KV of every common type; tensors outlive the reader', () => {
  const file = path.join(dir, 'roundtrip.hrry');
  const w = hurray.FileWriter.create(file, { durable: false });
  const t = dense();
  w.writeTensor('x', t);
  w.writeTensor('ids', int64s());
  w.writeTensor('empty', empty());
  w.addString('producer', 'node héllo');
  w.addInt64('neg', -5n);
  w.addInt64('small', 42);
  w.addUint64('big', 2n ** 63n + 1n);
  w.addFloat64('lr', 0.125);
  w.addBool('ok', true);
  w.addBytes('raw', Buffer.from([0, 1, 255]));
  w.addInt64Array('dims', [1n, -2, 3]);
  w.addFloat64Array('scales', [0.5, 1.5]);
  w.addStringArray('tags', ['a', 'b c']);
  w.finish();
  w.close();
  const r = hurray.FileReader.open(file);
  assert.deepEqual(r.names, ['x', 'ids', 'empty']);
  assert.deepEqual(r.metadata(), {
    producer: 'node héllo',
    neg: -5n,
    small: 42n,
    big: 2n ** 63n + 1n,
    lr: 0.125,
    ok: true,
    raw: Buffer.from([0, 1, 255]),
    dims: [1n, -2n, 3n],
    scales: [0.5, 1.5],
    tags: ['a', 'b c'],
  });
  // Lengths and windows of arrays.
  assert.equal(r.metadataLength('dims'), 3);
  assert.equal(r.metadataLength('producer'), Buffer.byteLength('node héllo'));
  assert.equal(r.metadataLength('ok'), 1);
  assert.deepEqual(r.metadataRange('dims', 1, 2), [-2n, 3n]);
  assert.deepEqual(r.metadataRange('dims', 0, 3), [1n, -2n, 3n]);
  assert.deepEqual(r.metadataRange('scales', 1, 1), [1.5]);
  assert.deepEqual(r.metadataRange('tags', 1, 1), ['b c']);
  assert.deepEqual(r.metadataRange('tags', 2, 0), []);
  assert.throws(() => r.metadataRange('dims', 2, 2), { code: 'ERR_HURRAY_INVALID_ARGUMENT' });
  assert.throws(() => r.metadataRange('dims', -1, 1), { code: 'ERR_HURRAY_INVALID_ARGUMENT' });
  assert.throws(() => r.metadataRange('ok', 0, 1), { code: 'ERR_HURRAY_UNSUPPORTED' });
  assert.throws(() => r.metadataLength('missing'), { code: 'ERR_HURRAY_NOT_FOUND' });
  const x = r.tensor('x');
  const ids = r.tensor('ids');
  const e = r.tensor('empty');
  r.close();
  assert.deepEqual(Array.from(x.array()), [1, 2, 3, 4, 5, 6]);
  assert.deepEqual(Array.from(ids.array()), [-1n, 2n ** 62n, 7n]);
  assert.deepEqual(e.shape, [0, 4]);
  assert.throws(() => r.names, { code: 'ERR_HURRAY_STATE' });
});

test('sparse CSR tensor over the conformance descriptor, through a file and a stream', { skip: skipConformance }, async () => {
  const desc = fs.readFileSync(path.join(conformance, 'descriptors/csr_f32_3x3.bin'));
  const d = hurray.Descriptor.decode(desc);
  assert.equal(d.layout, 'csr');
  const sizes = d.buffers().map((b) => b.byteSize);
  // Values: a recognisable byte pattern. Index buffers must be valid CSR contents
  // (readers and writers check them): nnz 2 over 3 rows, col_indices [0, 2],
  // row_ptr [0, 1, 1, 2], as little-endian u64.
  const u64s = (vals) => {
    const b = new Uint8Array(hurray.alloc(vals.length * 8));
    const v = new DataView(b.buffer, b.byteOffset, b.byteLength);
    vals.forEach((x, k) => v.setBigUint64(8 * k, BigInt(x), true));
    return b;
  };
  const values = new Uint8Array(hurray.alloc(sizes[0]));
  for (let k = 0; k < sizes[0]; k++) values[k] = (50 + k) & 0xff;
  const buffers = [values, u64s([0, 2]), u64s([0, 1, 1, 2])];
  assert.deepEqual(buffers.map((b) => b.byteLength), sizes);
  let released = 0;
  const t = hurray.Tensor.fromBuffers(desc, buffers, { onRelease: () => released++ });
  assert.equal(t.layout, 'csr');
  assert.throws(() => t.array(), { code: 'ERR_HURRAY_UNSUPPORTED' });
  const file = path.join(dir, 'csr.hrry');
  const w = hurray.FileWriter.create(file, { durable: false });
  w.writeTensor('m', t);
  w.finish();
  w.close();
  const r = hurray.FileReader.open(file);
  const fromFile = r.tensor('m');
  const [fromStream] = hurray.decodeStream(hurray.encodeStream([t]));
  for (const got of [fromFile, fromStream]) {
    assert.equal(got.layout, 'csr');
    assert.deepEqual(got.shape, [3, 3]);
    assert.deepEqual(got.descriptorBytes(), desc);
    for (let i = 0; i < sizes.length; i++) {
      assert.deepEqual(new Uint8Array(got.buffer(i)), buffers[i], `buffer ${i}`);
    }
  }
  t.close();
  await until(() => released === 1, 'onRelease');
});

// A partition composite: the conformance head ([8, 8], 2 members) over two [8, 4]
// halves: the conformance shard descriptor (column offset 4) and its left twin,
// built with Descriptor.build.
function partition(released) {
  const head = hurray.Tensor.fromBuffers(
    fs.readFileSync(path.join(conformance, 'descriptors/composite_head_partition.bin')),
    [],
  );
  const right = fs.readFileSync(path.join(conformance, 'descriptors/sharded_f32_8x4.bin'));
  const left = hurray.Descriptor.build({
    dtype: 'float32',
    shape: [8, 4],
    shard: { parentShape: [8, 8], offset: [0, 0] },
    buffers: [{ byteSize: 128 }],
  }).encode();
  const members = [left, right].map((desc, i) => {
    const a = new Float32Array(hurray.alloc(128));
    a.forEach((_, k) => (a[k] = i * 100 + k));
    const t = hurray.Tensor.fromBuffers(desc, [a], { onRelease: () => released.count++ });
    const item = hurray.Item.of(t);
    assert.equal(t.closed, true, 'the tensor moved into the item');
    return item;
  });
  return hurray.Item.composite(head, members);
}

function checkPartition(item) {
  assert.equal(item.isComposite, true);
  assert.equal(item.tensor.layout, 'composite_head');
  assert.deepEqual(item.tensor.shape, [8, 8]);
  const members = item.members;
  assert.equal(members.length, 2);
  members.forEach((m, i) => {
    assert.equal(m.isComposite, false);
    assert.deepEqual(m.members, []);
    assert.deepEqual(m.tensor.shape, [8, 4]);
    assert.equal(m.tensor.descriptor().hasShard, true);
    const a = m.tensor.array();
    assert.equal(a[0], i * 100);
    assert.equal(a[31], i * 100 + 31);
  });
}

test('composite items round trip through a file and a stream', { skip: skipConformance }, async () => {
  await collect();
  const before = debugLiveObjects();
  const released = { count: 0 };
  let c = partition(released);
  checkPartition(c);
  const file = path.join(dir, 'composite.hrry');
  const w = hurray.FileWriter.create(file, { durable: false });
  w.writeItem('p', c);
  w.finish();
  w.close();
  const r = hurray.FileReader.open(file);
  assert.deepEqual(r.names, ['p', 'p/0', 'p/1']);
  const fromFile = r.item('p');
  r.close();
  checkPartition(fromFile);
  const pipe = new PassThrough();
  const writer = new hurray.StreamWriter(pipe);
  const reading = (async () => {
    const got = [];
    for await (const it of new hurray.StreamReader(pipe).items()) got.push(it);
    return got;
  })();
  await writer.write(c);
  await writer.write(fromFile.members[0].tensor);
  await writer.end();
  const got = await reading;
  assert.equal(got.length, 2);
  checkPartition(got[0]);
  assert.equal(got[1].isComposite, false);
  assert.equal(got[1].tensor.array()[5], 5);
  // Plain-tensor iteration refuses a composite with a clear error.
  await assert.rejects(async () => {
    for await (const t of new hurray.StreamReader(hurray.encodeStream([c]))) t.close();
  }, { code: 'ERR_HURRAY_UNSUPPORTED' });
  c = null;
  fromFile.close();
  for (const it of got) it.close();
  await until(() => released.count === 2 && debugLiveObjects() === before, 'the items to be released');
});

test('stream limits are enforced by the decoder and the encoder', () => {
  const big = hurray.Tensor.fromBuffer(f32(hurray, new Array(64).fill(1)), 'float32', [64]);
  const bytes = hurray.encodeStream([big]);
  assert.throws(
    () => {
      const dec = new hurray.StreamDecoder({ maxBufferBytes: 128 });
      dec.feed(bytes);
      dec.next();
    },
    { code: 'ERR_HURRAY_LIMIT' },
  );
  assert.throws(() => new hurray.StreamEncoder({ maxBufferBytes: 128 }).encode(big), {
    code: 'ERR_HURRAY_LIMIT',
  });
  assert.throws(() => new hurray.StreamDecoder({ maxBufferBytes: -1 }), {
    code: 'ERR_HURRAY_INVALID_ARGUMENT',
  });
  assert.equal(new hurray.StreamDecoder({ maxBufferBytes: 256 }).feed(bytes), bytes.length);
});

test('a COO tensor built in JavaScript (Descriptor.build) round trips through a file and a stream', async () => {
  // [4, 4] float32 with 3 stored values (layouts.md §2.6): buffer 0 the values,
  // buffer 1 the u64 coordinates, one (row, column) tuple per element.
  const d = hurray.Descriptor.build({
    dtype: 'float32',
    shape: [4, 4],
    layout: 'coo',
    nnz: 3,
    cooSorted: true,
    buffers: [{ byteSize: 3 * 4 }, { byteSize: 3 * 2 * 8 }],
    statistics: { computedMask: 1, nnz: 3, sparsity: 0, min: 0, max: 0, absmax: 0, mean: 0, stddev: 0, nmN: 0, nmM: 0, hasNan: false, hasInf: false },
  });
  assert.equal(d.layout, 'coo');
  assert.equal(d.nnz, 3);
  assert.equal(d.statistics.nnz, 3);
  const sizes = d.buffers().map((b) => b.byteSize);
  const bufs = sizes.map((n) => new Uint8Array(hurray.alloc(n)));
  new Float32Array(bufs[0].buffer).set([1.5, -2, 7]);
  new BigUint64Array(bufs[1].buffer).set([0n, 1n, 2n, 0n, 3n, 3n]);
  const t = hurray.Tensor.fromBuffers(d.encode(), bufs);
  const file = path.join(dir, 'coo.hrry');
  const w = hurray.FileWriter.create(file, { durable: false });
  w.writeTensor('c', t);
  w.finish();
  w.close();
  const fromFile = hurray.FileReader.open(file).tensor('c');
  const [fromStream] = hurray.decodeStream(hurray.encodeStream([t]));
  for (const got of [fromFile, fromStream]) {
    assert.equal(got.layout, 'coo');
    assert.deepEqual(got.descriptorBytes(), d.encode());
    assert.deepEqual(Array.from(new Float32Array(got.buffer(0))), [1.5, -2, 7]);
    assert.deepEqual(Array.from(new BigUint64Array(got.buffer(1))), [0n, 1n, 2n, 0n, 3n, 3n]);
    assert.equal(got.descriptor().statistics.nnz, 3);
  }
});

test('Descriptor.build covers tiled, Hilbert, block-paged, Morton, COO and CSF fields and reads them back', () => {
  const tiled = hurray.Descriptor.build({
    dtype: 'float16',
    shape: [8, 8],
    layout: 'tiled',
    tiling: [
      { shape: [4, 4], outer: 'row_major', inner: 'tiled' },
      { shape: [2, 2], outer: 'column_major', inner: 'row_major' },
    ],
    buffers: [{ byteSize: 128 }],
  });
  assert.deepEqual(tiled.tiling, [
    { shape: [4, 4], outer: 'row_major', inner: 'tiled' },
    { shape: [2, 2], outer: 'column_major', inner: 'row_major' },
  ]);
  const strided = hurray.Descriptor.build({
    dtype: 'int16',
    shape: [4, 4],
    layout: 'tiled',
    tiling: [{ shape: [2, 2], outer: 'strided', outerStrides: [1, 2], inner: 'strided', innerStrides: [1, 2] }],
    buffers: [{ byteSize: 32 }],
  });
  assert.deepEqual(strided.tiling[0].outerStrides, [1, 2]);
  assert.deepEqual(strided.tiling[0].innerStrides, [1, 2]);
  const hilbert = hurray.Descriptor.build({ dtype: 'float32', shape: [4, 4], layout: 'hilbert', hilbert: { order: 2, rank: 2 }, buffers: [{ byteSize: 64 }] });
  assert.deepEqual(hilbert.hilbert, { order: 2, rank: 2 });
  // layouts.md block-paged example: layer 3 keys, 2 sequences, 5 pages of 4 tokens.
  const paged = hurray.Descriptor.build({
    dtype: 'float16',
    shape: [9, 2, 8],
    layout: 'block_paged',
    blockPaged: { pageSize: 4, numPages: 5, numSeqs: 2, layerIndex: 3, kvRole: 'key', index64: false },
    buffers: [{ byteSize: 640 }, { byteSize: 12 }, { byteSize: 12 }],
  });
  assert.deepEqual(paged.blockPaged, { pageSize: 4, numPages: 5, numSeqs: 2, pagedAxis: 0, layerIndex: 3, kvRole: 'key', index64: false });
  const morton = hurray.Descriptor.build({ dtype: 'uint8', shape: [3, 5], layout: 'morton', mortonBits: [2, 3], buffers: [{ byteSize: 32 }] });
  assert.deepEqual(morton.mortonBits, [2, 3]);
  const coo = hurray.Descriptor.build({ dtype: 'float32', shape: [4, 4], layout: 'coo', nnz: 1, cooSorted: false, buffers: [{ byteSize: 4 }, { byteSize: 16 }] });
  assert.equal(coo.cooSorted, false);
  for (const d of [tiled, strided, hilbert, paged, morton, coo]) {
    // What the builder wrote decodes back to the same bytes and fields.
    const again = hurray.Descriptor.decode(d.encode());
    assert.deepEqual(again.encode(), d.encode());
    assert.equal(again.layout, d.layout);
  }
  assert.equal(hurray.Descriptor.build({ dtype: 'float32', shape: [2], buffers: [{ byteSize: 8 }] }).tiling, null);
  assert.throws(
    () => hurray.Descriptor.build({ dtype: 'float32', shape: [4, 4], layout: 'tiled', tiling: [{ shape: [2, 2], outer: 'strided', inner: 'row_major' }], buffers: [{ byteSize: 64 }] }),
    { code: 'ERR_HURRAY_INVALID_ARGUMENT', message: /strides/ },
  );
});
