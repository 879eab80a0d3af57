'use strict';
// Per-tensor data CRC-32C: recorded with `dataCrc32c: true`, checked by
// FileReader.verifyDataCrc32c(), a flipped data byte named; no CRCs gives false.

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');

const hurray = require('..');
const { tmpdir, f32 } = require('./helpers');

const dir = tmpdir();

/** The bytes of tensor "second": a run no header, index or KV byte contains. */
const SECOND = [0xc3, 0x5a, 0xa5, 0x3c, 0x69, 0x96, 0x0f, 0xf0];

function write(name, options) {
  const file = path.join(dir, name);
  const w = hurray.FileWriter.create(file, { durable: false, ...options });
  const first = hurray.Tensor.fromBuffer(f32(hurray, [1, 2, 3, 4]), 'float32', [4]);
  const bytes = new Uint8Array(hurray.alloc(SECOND.length));
  bytes.set(SECOND);
  const second = hurray.Tensor.fromBuffer(bytes, 'uint8', [SECOND.length]);
  w.writeTensor('first', first);
  w.writeTensor('second', second);
  w.finish();
  w.close();
  first.close();
  second.close();
  return file;
}

/** The one offset where SECOND starts in `bytes`. */
function offsetOfSecond(bytes) {
  const pattern = Buffer.from(SECOND);
  const at = bytes.indexOf(pattern);
  assert.ok(at >= 0, 'the pattern is in the file');
  assert.equal(bytes.indexOf(pattern, at + 1), -1, 'the pattern occurs once');
  return at;
}

test('an intact file with data CRCs verifies; the entry is one uint64 per tensor', () => {
  const r = hurray.FileReader.open(write('intact.hrry', { dataCrc32c: true }));
  assert.equal(r.verifyDataCrc32c(), true);
  const crcs = r.value('hurray.data_crc32c');
  assert.equal(crcs.length, 2);
  for (const c of crcs) assert.ok(typeof c === 'bigint' && c > 0n && c < 2n ** 32n, String(c));
  r.close();
});

test('a flipped data byte is noticed and the tensor named', () => {
  const file = write('flipped.hrry', { dataCrc32c: true });
  const bytes = fs.readFileSync(file);
  const at = offsetOfSecond(bytes);
  assert.equal(at % 4096, 0, 'tensor data starts on the 4096-byte alignment');
  bytes[at + 5] ^= 0x01;
  fs.writeFileSync(file, bytes);

  // The index CRC does not cover data: the file opens and reads the flipped value.
  const r = hurray.FileReader.open(file);
  const t = r.tensor('second');
  assert.equal(t.array()[5], 0x97);
  t.close();
  assert.throws(() => r.verifyDataCrc32c(), (e) => {
    assert.equal(e.code, 'ERR_HURRAY_FORMAT');
    assert.match(e.message, /DataCrcMismatch/);
    assert.match(e.message, /"second"/);
    assert.doesNotMatch(e.message, /"first"/);
    assert.match(e.message, new RegExp(`at byte ${at}\\b`));
    return true;
  });
  r.close();
});

test('a file without data CRCs cannot be checked: false; off by default', () => {
  const plain = write('plain.hrry', { dataCrc32c: false });
  const r = hurray.FileReader.open(plain);
  assert.equal(r.verifyDataCrc32c(), false);
  assert.equal(r.keys.includes('hurray.data_crc32c'), false);
  r.close();
  // Off by default: no option writes the same bytes; the switch adds the entry.
  const byDefault = write('default.hrry', {});
  assert.ok(fs.readFileSync(plain).equals(fs.readFileSync(byDefault)));
  const withCrc = write('with.hrry', { dataCrc32c: true });
  assert.ok(!fs.readFileSync(plain).equals(fs.readFileSync(withCrc)));
  assert.throws(() => {
    const closed = hurray.FileReader.open(plain);
    closed.close();
    closed.verifyDataCrc32c();
  }, { code: 'ERR_HURRAY_STATE' });
});
