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
