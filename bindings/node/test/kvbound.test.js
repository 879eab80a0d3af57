'use strict';
// Whole-value KV reads are bounded: an array of more than 1,048,576 elements (the
// library's HURRAY_KV_WHOLE_ARRAY_MAX, the same in every binding) is refused by
// metadata() and value(), and read a window at a time with metadataRange().

const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');

const hurray = require('..');
const { tmpdir } = require('./helpers');

const MAX = 1 << 20;

test('whole KV reads refuse arrays past the bound; windows reach them', () => {
  const file = path.join(tmpdir(), 'kvbound.hrry');
  const big = new Array(MAX + 1).fill(false);
  big[MAX] = true;
  const w = hurray.FileWriter.create(file, { durable: false });
  w.addBoolArray('at_bound', big.slice(0, MAX));
  w.addBoolArray('past_bound', big);
  w.finish();
  w.close();
  const r = hurray.FileReader.open(file);
  try {
    assert.equal(r.value('at_bound').length, MAX);
    for (const read of [() => r.metadata(), () => r.value('past_bound')]) {
      assert.throws(read, (e) => {
        assert.equal(e.code, 'ERR_HURRAY_LIMIT');
        assert.match(e.message, /"past_bound" is an array of 1048577 elements, more than the 1048576/);
        return true;
      });
    }
    assert.equal(r.metadataLength('past_bound'), MAX + 1);
    assert.deepEqual(r.metadataRange('past_bound', MAX - 1, 2), [false, true]);
  } finally {
    r.close();
  }
});
