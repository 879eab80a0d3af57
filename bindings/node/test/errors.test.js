'use strict';
// Misuse and bad input: thrown Errors with a `code` (errno name or ERR_HURRAY_*) and a
// message naming the rule and offset; never a crash.

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');

const hurray = require('..');
const { tmpdir, f32 } = require('./helpers');

const dir = tmpdir();

function streamBytes() {
  return hurray.encodeStream([hurray.Tensor.fromBuffer(f32(hurray, [1, 2, 3, 4]), 'float32', [4])]);
}

test('use after close throws HURRAY_ERR_STATE on every object', () => {
  const t = hurray.Tensor.fromBuffer(f32(hurray, [1]), 'float32', [1]);
  t.close();
  for (const f of [() => t.shape, () => t.dtype, () => t.buffer(0), () => t.array(), () => t.descriptor()]) {
    assert.throws(f, { code: 'ERR_HURRAY_STATE', message: /Tensor is closed/ });
  }
  const w = hurray.FileWriter.create(path.join(dir, 'closed.hrry'));
  w.close();
  assert.throws(() => w.addString('k', 'v'), { code: 'ERR_HURRAY_STATE' });
  assert.throws(() => w.writeTensor('t', t), { code: 'ERR_HURRAY_STATE' });
  assert.equal(fs.existsSync(path.join(dir, 'closed.hrry')), false, 'an abandoned file leaves nothing');
  const dec = new hurray.StreamDecoder();
  dec.close();
  assert.throws(() => dec.feed(Buffer.alloc(1)), { code: 'ERR_HURRAY_STATE' });
  const enc = new hurray.StreamEncoder();
  assert.throws(() => enc.encode(t), { code: 'ERR_HURRAY_STATE' });
  const d = hurray.Descriptor.dense('int8', [2]);
  d.close();
  assert.throws(() => d.shape, { code: 'ERR_HURRAY_STATE' });
});

test('a truncated stream throws HURRAY_ERR_TRUNCATED; a clean one does not', async () => {
  const bytes = streamBytes();
  for (const cut of [1, 10, bytes.length - 1]) {
    const got = [];
    await assert.rejects(
      (async () => {
        for await (const t of new hurray.StreamReader([bytes.subarray(0, cut)])) got.push(t);
      })(),
      (e) => {
        assert.equal(e.code, 'ERR_HURRAY_TRUNCATED', e.message);
        assert.match(e.message, /HURRAY_ERR_TRUNCATED: .*\d/);
        return true;
      },
      `cut at ${cut}`,
    );
    assert.equal(got.length, 0);
  }
  // A tensor then a truncated one: the first is yielded, then the error.
  const two = Buffer.concat([bytes, bytes.subarray(0, 20)]);
  const got = [];
  await assert.rejects(async () => {
    for await (const t of new hurray.StreamReader(two)) got.push(t);
  }, { code: 'ERR_HURRAY_TRUNCATED' });
  assert.equal(got.length, 1);
  assert.throws(() => hurray.decodeStream(bytes.subarray(0, 5)), { code: 'ERR_HURRAY_TRUNCATED' });
});

test('a corrupted stream names the rule and offset', async () => {
  const bad = Buffer.from(streamBytes());
  bad.fill(0xff, 0, 8);
  await assert.rejects(
    async () => {
      for await (const t of new hurray.StreamReader(bad)) t.close();
    },
    (e) => {
      assert.match(e.code, /^ERR_HURRAY_/);
      assert.notEqual(e.code, 'ERR_HURRAY_TRUNCATED');
      assert.match(e.message, /byte|offset/i, e.message);
      return true;
    },
  );
});

test('a corrupted or truncated file throws with the rule and offset', () => {
  const file = path.join(dir, 'good.hrry');
  const w = hurray.FileWriter.create(file, { durable: false });
  w.writeTensor('t', hurray.Tensor.fromBuffer(f32(hurray, [1, 2]), 'float32', [2]));
  w.finish();
  w.close();
  const good = fs.readFileSync(file);
  const truncated = path.join(dir, 'truncated.hrry');
  fs.writeFileSync(truncated, good.subarray(0, good.length - 10));
  assert.throws(() => hurray.FileReader.open(truncated), (e) => {
    assert.match(e.code, /^ERR_HURRAY_(TRUNCATED|FORMAT)$/);
    assert.match(e.message, /offset|byte/i);
    return true;
  });
  const corrupt = path.join(dir, 'corrupt.hrry');
  const bytes = Buffer.from(good);
  bytes[0] ^= 0xff; // the magic
  fs.writeFileSync(corrupt, bytes);
  assert.throws(() => hurray.FileReader.open(corrupt), (e) => {
    assert.equal(e.code, 'ERR_HURRAY_FORMAT', e.message);
    assert.match(e.message, /offset|byte/i);
    return true;
  });
  assert.throws(() => hurray.FileReader.open(path.join(dir, 'missing.hrry')), {
    code: 'ENOENT',
  });
});

test('bad arguments throw, never crash', () => {
  assert.throws(() => hurray.Descriptor.decode(Buffer.from([1, 2, 3])), {
    code: 'ERR_HURRAY_FORMAT',
    message: /byte 3/,
  });
  assert.throws(() => hurray.Tensor.fromBuffer(f32(hurray, [1]), 'float33', [1]), {
    code: 'ERR_HURRAY_INVALID_ARGUMENT',
  });
  assert.throws(() => hurray.Tensor.fromBuffer(f32(hurray, [1]), 'float32', [2]), {
    code: 'ERR_HURRAY_INVALID_ARGUMENT',
  });
  assert.throws(() => hurray.Tensor.fromBuffer(f32(hurray, [1]), 'float32', [-1]), {
    code: 'ERR_HURRAY_INVALID_ARGUMENT',
  });
  // Misaligned memory under the strict option: 4 bytes into an aligned allocation.
  const ab = hurray.alloc(64);
  assert.throws(() => hurray.Tensor.fromBuffer(new Float32Array(ab, 4, 2), 'float32', [2], { strict: true }), {
    code: 'ERR_HURRAY_INVALID_ARGUMENT',
    message: /aligned/,
  });
  assert.throws(() => hurray.Tensor.fromBuffer('nope', 'float32', [1]), {
    code: 'ERR_HURRAY_INVALID_ARGUMENT',
  });
  const t = hurray.Tensor.fromBuffer(f32(hurray, [1]), 'float32', [1]);
  assert.throws(() => t.buffer(5), { code: 'ERR_HURRAY_INVALID_ARGUMENT' });
  const w = hurray.FileWriter.create(path.join(dir, 'dupe.hrry'), { durable: false });
  w.writeTensor('a', t);
  assert.throws(() => w.writeTensor('a', t), (e) => e.code.startsWith('ERR_HURRAY_'));
  assert.throws(() => w.addUint64('u', -1n), { code: 'ERR_HURRAY_INVALID_ARGUMENT' });
  w.close();
  assert.throws(() => new hurray.StreamReader(null), TypeError);
  assert.throws(() => hurray.Descriptor.build({ dtype: 'float32', shape: [3, 4], buffers: [{ byteSize: 47 }] }), {
    code: 'ERR_HURRAY_FORMAT',
    message: /BufferTooSmall at byte \d+: .*47 bytes but needs 48/,
  });
  assert.throws(() => hurray.Descriptor.build({ dtype: 'float32', shape: [2], layout: 'my_extension', buffers: [] }), {
    code: 'ERR_HURRAY_UNSUPPORTED',
  });
  assert.throws(() => hurray.Descriptor.build({ dtype: 'float32', shape: [2], layout: 'csr', nnz: 1, buffers: [] }), (e) =>
    e.code.startsWith('ERR_HURRAY_'),
  );
});

test('an exception thrown by onRelease is an uncaught exception, not a crash', () => {
  const { spawnSync } = require('node:child_process');
  const script = `
    const hurray = require(${JSON.stringify(path.resolve(__dirname, '..'))});
    const a = new Float32Array(hurray.alloc(4));
    const t = hurray.Tensor.fromBuffer(a, 'float32', [1], { onRelease: () => { throw new Error('boom from onRelease'); } });
    t.close();
    setTimeout(() => {}, 200);
  `;
  const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' });
  assert.equal(r.signal, null, r.stderr);
  assert.equal(r.status, 1, r.stderr);
  assert.match(r.stderr, /boom from onRelease/);
});

test('moving tensors into items: views, borrowed tensors and closed items are refused', () => {
  const t = hurray.Tensor.fromBuffer(f32(hurray, [1, 2]), 'float32', [2]);
  let view = t.array();
  assert.throws(() => hurray.Item.of(t), { code: 'ERR_HURRAY_STATE', message: /live views/ });
  assert.equal(t.closed, false, 'a refused move leaves the tensor usable');
  assert.equal(t.array()[1], 2);
  view = null;
  const t2 = hurray.Tensor.fromBuffer(f32(hurray, [3]), 'float32', [1]);
  const item = hurray.Item.of(t2);
  assert.equal(t2.closed, true);
  assert.throws(() => t2.shape, { code: 'ERR_HURRAY_STATE' });
  const borrowed = item.tensor;
  assert.equal(borrowed.array()[0], 3);
  assert.throws(() => hurray.Item.of(item.tensor), { code: 'ERR_HURRAY_INVALID_ARGUMENT' });
  assert.throws(() => hurray.Item.composite(hurray.Tensor.fromBuffer(f32(hurray, [1]), 'float32', [1]), []), {
    code: 'ERR_HURRAY_INVALID_ARGUMENT',
  });
  item.close();
  assert.throws(() => item.tensor, { code: 'ERR_HURRAY_STATE' });
  assert.equal(borrowed.array()[0], 3, 'a tensor taken from an item keeps it alive');
  assert.equal(view, null);
});

// The five bad inputs every binding reports in its language's convention (issue 12
// item 5): Node's `error.code`, and a message naming the path.
test('bad paths and bad files: ENOENT, EISDIR, ERR_HURRAY_TRUNCATED, ERR_HURRAY_FORMAT, naming the path', () => {
  const good = path.join(dir, 'five-good.hrry');
  const w = hurray.FileWriter.create(good, { durable: false });
  w.writeTensor('t', hurray.Tensor.fromBuffer(f32(hurray, [1, 2, 3, 4]), 'float32', [4]));
  w.finish();
  w.close();
  const bytes = fs.readFileSync(good);
  const missing = path.join(dir, 'five-missing.hrry');
  const directory = fs.mkdtempSync(path.join(dir, 'five-dir-'));
  const empty = path.join(dir, 'five-empty.hrry');
  fs.writeFileSync(empty, Buffer.alloc(0));
  const cut = path.join(dir, 'five-cut.hrry');
  fs.writeFileSync(cut, bytes.subarray(0, bytes.length - 20));
  const random = path.join(dir, 'five-random.hrry');
  // Fixed bytes (a xorshift sequence), so the case is the same on every run.
  let x = 0x9e3779b9;
  fs.writeFileSync(random, Buffer.from(Array.from({ length: 4096 }, () => {
    x ^= x << 13; x ^= x >>> 17; x ^= x << 5;
    return x & 0xff;
  })));
  const expect = (file, code, message) => assert.throws(() => hurray.FileReader.open(file), (e) => {
    assert.equal(e.code, code, e.message);
    assert.ok(e.message.includes(file), `the message names the path: ${e.message}`);
    assert.match(e.message, message);
    return true;
  });
  expect(missing, 'ENOENT', /No such file/);
  expect(empty, 'ERR_HURRAY_TRUNCATED', /Truncated at byte 0/);
  expect(random, 'ERR_HURRAY_FORMAT', /Magic at byte 0/);
  expect(directory, 'EISDIR', /directory/i);
  expect(cut, 'ERR_HURRAY_TRUNCATED', /Truncated at byte \d+/);
});
