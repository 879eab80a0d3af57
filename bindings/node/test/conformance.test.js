'use strict';
// The golden vectors of ../shared/conformance: every descriptor decodes to what the
// manifest says, and basic.hrry opens with the manifest's tensors and KV.

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');

const hurray = require('..');
const { debugLiveObjects } = require('../lib/testing');
const { conformance, skipConformance, collect } = require('./helpers');

const manifest = skipConformance
  ? { descriptors: [], files: [] }
  : JSON.parse(fs.readFileSync(path.join(conformance, 'manifest.json'), 'utf8'));

test('conformance descriptors decode as the manifest says', { skip: skipConformance }, async () => {
  assert.ok(manifest.descriptors.length >= 10);
  await collect();
  const before = debugLiveObjects();
  for (const entry of manifest.descriptors) {
    const bytes = fs.readFileSync(path.join(conformance, entry.file));
    const d = hurray.Descriptor.decode(bytes);
    const e = entry.expect;
    assert.deepEqual(d.shape, e.shape, entry.file);
    assert.equal(d.dtype, e.element_type, entry.file);
    assert.equal(d.dtypeTag, e.element_type_tag, entry.file);
    assert.equal(d.layoutTag, e.layout_tag, entry.file);
    assert.equal(d.byteOffset, e.byte_offset, entry.file);
    assert.deepEqual(d.buffers().map((b) => b.byteSize), e.buffer_byte_sizes, entry.file);
    assert.equal(d.hasQuantization, e.has_quantization, entry.file);
    assert.equal(d.hasShard, e.has_shard, entry.file);
    assert.deepEqual(d.encode(), bytes, `${entry.file}: re-encoding gives the same bytes`);
    d.close();
  }
  assert.equal(debugLiveObjects(), before);
});

test('basic.hrry opens and matches the manifest', { skip: skipConformance }, async () => {
  await collect();
  const before = debugLiveObjects();
  const spec = manifest.files.find((f) => f.file === 'files/basic.hrry');
  assert.ok(spec, 'the manifest lists files/basic.hrry');
  const reader = hurray.FileReader.open(path.join(conformance, spec.file));
  assert.deepEqual(reader.names, spec.tensors.map((t) => t.name));
  assert.equal(reader.info.tensorCount, spec.tensors.length);
  assert.equal(reader.info.crcVerified, true);
  for (const want of spec.tensors) {
    const t = reader.tensor(want.name);
    assert.equal(t.dtype, want.element_type);
    assert.deepEqual(t.shape, want.shape);
    assert.equal(t.layout, 'row_major');
    assert.equal(t.bufferCount, 1);
    assert.equal(t.buffer(0).byteLength, want.data_bytes);
    const a = t.array();
    assert.equal(a.byteLength, want.data_bytes);
    assert.equal(a.constructor, want.element_type === 'float32' ? Float32Array : Int8Array);
    const d = reader.descriptor(want.name);
    assert.deepEqual(d.shape, want.shape);
    d.close();
    t.close();
  }
  const kv = reader.metadata();
  assert.equal(Object.keys(kv).length, spec.kv.length);
  for (const want of spec.kv) {
    if (want.kind === 'string') assert.equal(kv[want.key], want.value_string);
    else if (want.kind === 'int64') assert.equal(kv[want.key], BigInt(want.value_int));
    else assert.fail(`unexpected KV kind ${want.kind}`);
    assert.deepEqual(reader.value(want.key), kv[want.key]);
  }
  reader.close();
  return require('./helpers')
    .until(() => debugLiveObjects() === before, 'the views to be collected');
});

test('descriptor sections read as the manifest descriptions state them', { skip: skipConformance }, () => {
  const open = (name) =>
    hurray.Descriptor.decode(fs.readFileSync(path.join(conformance, 'descriptors', `${name}.bin`)));
  // "Strided float32 [3, 4] with row-major strides [4, 1]"
  assert.deepEqual(open('strided_f32_3x4').strides, [4, 1]);
  // "Row-major float32 [8, 4] shard at column offset 4 of an [8, 8] parent"
  assert.deepEqual(open('sharded_f32_8x4').shard, { parentShape: [8, 8], offset: [0, 4] });
  // "CSR float32 [3, 3], nnz = 2"
  assert.equal(open('csr_f32_3x3').nnz, 2);
  // "int4 [128, 128] per-block-affine (float16 scales)", buffers [8192, 256]: one
  // float16 scale per block of 128 along axis 1, in buffer 1, no zero points.
  const q = open('quant_per_block_int4_128x128').quantization;
  assert.equal(q.scheme, 'per_block_affine');
  assert.equal(q.scaleType, 'float16');
  assert.equal(q.scaleBufferIndex, 1);
  assert.equal(q.zeroPointBufferIndex, -1);
  assert.equal((128 * 128) / q.blockSize * 2, 256, 'scale bytes match the scale buffer');
  // Absent sections read as null.
  const plain = open('row_major_f32_3x4');
  for (const k of ['quantization', 'shard', 'statistics', 'strides', 'nnz']) assert.equal(plain[k], null, k);
});

test('Descriptor.build reproduces the conformance descriptors byte for byte', { skip: skipConformance }, () => {
  const specs = {
    row_major_f32_3x4: { dtype: 'float32', shape: [3, 4], buffers: [{ byteSize: 48 }] },
    row_major_int8_5: { dtype: 'int8', shape: [5], buffers: [{ byteSize: 5 }] },
    row_major_f16_2x2: { dtype: 'float16', shape: [2, 2], buffers: [{ byteSize: 8 }] },
    bool_packed_10: { dtype: 'bool', shape: [10], buffers: [{ byteSize: 2 }] },
    strided_f32_3x4: { dtype: 'float32', shape: [3, 4], layout: 'strided', strides: [4, 1], buffers: [{ byteSize: 48 }] },
    morton_f32_4x4: { dtype: 'float32', shape: [4, 4], layout: 'morton', mortonBits: [2, 2], buffers: [{ byteSize: 64 }] },
    empty_f32_0x4: { dtype: 'float32', shape: [0, 4], buffers: [{ byteSize: 0, alignment: 64 }] },
    sharded_f32_8x4: {
      dtype: 'float32',
      shape: [8, 4],
      shard: { parentShape: [8, 8], offset: [0, 4] },
      buffers: [{ byteSize: 128 }],
    },
    csr_f32_3x3: {
      dtype: 'float32',
      shape: [3, 3],
      layout: 'csr',
      nnz: 2,
      buffers: [{ byteSize: 8 }, { byteSize: 16 }, { byteSize: 32 }],
    },
    composite_head_partition: {
      dtype: 'float32',
      shape: [8, 8],
      layout: 'composite_head',
      composite: { memberCount: 2, rule: 'partition' },
      buffers: [],
    },
    quant_per_block_int4_128x128: {
      dtype: 'int4',
      shape: [128, 128],
      quantization: { scheme: 'per_block_affine', axis: 1, blockSize: 128, scaleBufferIndex: 1, scaleType: 'float16' },
      buffers: [{ byteSize: 8192 }, { byteSize: 256 }],
    },
  };
  for (const entry of manifest.descriptors) {
    const name = path.basename(entry.file, '.bin');
    assert.ok(specs[name], `a spec for ${name}`);
    const built = hurray.Descriptor.build(specs[name]).encode();
    assert.deepEqual(built, fs.readFileSync(path.join(conformance, entry.file)), name);
  }
  const head = hurray.Descriptor.decode(fs.readFileSync(path.join(conformance, 'descriptors/composite_head_partition.bin')));
  assert.deepEqual(head.composite, { memberCount: 2, rule: 'partition', combine: 'none' });
  assert.equal(head.memberRole, null);
});
