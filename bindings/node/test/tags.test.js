'use strict';
// typeName / layoutName: a tag rendered as every language renders it (the one
// declaration in hurray_core::tables), also what Tensor.dtype / Tensor.layout say.

const test = require('node:test');
const assert = require('node:assert/strict');

const hurray = require('..');
const { f32 } = require('./helpers');

test('typeName and layoutName render known, private and unknown tags one way', () => {
  assert.equal(hurray.typeName(0x03), 'float32');
  assert.equal(hurray.typeName(0x51), 'complex128');
  assert.equal(hurray.typeName(0x2a), 'unknown(0x2a)');
  assert.equal(hurray.typeName(0x00), 'unknown(0x00)');
  assert.equal(hurray.typeName(0xf3), 'private(0xf3)');
  assert.equal(hurray.typeName(0xff), 'unknown(0xff)');
  assert.equal(hurray.layoutName(0x02), 'column_major');
  assert.equal(hurray.layoutName(0x0b), 'composite_head');
  assert.equal(hurray.layoutName(0x7f), 'unknown(0x7f)');
  assert.equal(hurray.layoutName(0xf0), 'private(0xf0)');
  assert.throws(() => hurray.typeName(256), (e) => e.code === 'ERR_HURRAY_INVALID_ARGUMENT');
});

test('Tensor.dtype and Tensor.layout are the same rendering', () => {
  const t = hurray.Tensor.fromBuffer(f32(hurray, [1, 2]), 'float32', [2]);
  assert.equal(t.dtype, hurray.typeName(0x03));
  assert.equal(t.layout, hurray.layoutName(0x01));
  t.close();
});
