'use strict';
// Issue 15, review follow-up: what a fresh reviewer found after the first round.
// 1 teardown abort, 2 `__proto__` KV keys, 3 the clone guard and ordinary object
// operations, 4 close during an async write, 5 error names.

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const hurray = require('..');
const { tmpdir } = require('./helpers');

const dir = tmpdir();
const { Tensor, FileReader, FileWriter, HurrayError } = hurray;
const entry = path.resolve(__dirname, '..', 'index.mjs');

test('a tensor released by a finalizer at environment teardown does not abort the process', () => {
  // The reviewer's repro: a kept 256 MiB mapped view and a kept tensor over caller
  // memory; before the fix the exit aborted (SIGABRT, rc 134) 5 times in 5 in the
  // release's call into the already destroyed threadsafe function.
  const file = path.join(dir, 'big.hrry');
  const script = `
    import * as h from ${JSON.stringify(entry)};
    const N = 64 << 20;
    { const w = h.FileWriter.create(${JSON.stringify(file)}, { durable: false });
      w.writeTensor('x', h.Tensor.fromBuffer(new Float32Array(h.alloc(N * 4)), 'float32', [N]));
      w.finish(); w.close(); }
    const r = h.FileReader.open(${JSON.stringify(file)});
    const view = r.tensor('x').array();
    const kept = h.Tensor.fromBuffer(new Float32Array(h.alloc(16).slice(0)), 'float32', [4]);
    await new Promise((res) => setTimeout(res, 10));
    console.log('end', view.length, kept.shape[0]);
  `;
  for (let i = 0; i < 3; i++) {
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
      encoding: 'utf8',
      timeout: 120000,
    });
    assert.equal(r.signal, null, `run ${i}: signal ${r.signal}; stderr ${r.stderr}`);
    assert.equal(r.status, 0, `run ${i}: stderr ${r.stderr}`);
    assert.equal(r.stdout.trim(), `end ${64 << 20} 4`);
  }
  fs.rmSync(file, { force: true });
});

test('metadata(): keys __proto__, constructor and toString are own data properties', () => {
  const file = path.join(dir, 'proto.hrry');
  const w = FileWriter.create(file);
  w.addString('__proto__', 'polluted?');
  w.addInt64('constructor', 7n);
  w.addString('toString', 'not a function');
  w.addFloat64('plain', 1.5);
  w.finish();
  w.close();
  const r = FileReader.open(file);
  const m = r.metadata();
  assert.equal(Object.getPrototypeOf(m), Object.prototype);
  assert.deepEqual(Object.keys(m), ['__proto__', 'constructor', 'toString', 'plain']);
  for (const k of Object.keys(m)) {
    const d = Object.getOwnPropertyDescriptor(m, k);
    assert.ok(d && 'value' in d && d.enumerable && d.writable, k);
  }
  assert.equal(Object.getOwnPropertyDescriptor(m, '__proto__').value, 'polluted?');
  assert.equal(m.constructor, 7n);
  assert.equal(m.toString, 'not a function');
  assert.equal(m.plain, 1.5);
  assert.equal({}.polluted, undefined);
  assert.equal(r.value('__proto__'), 'polluted?');
  r.close();
});

test('the clone guard: spread, Object.assign, deepStrictEqual work; structuredClone and postMessage throw', async () => {
  const mk = () => Tensor.fromBuffer(new Float32Array(hurray.alloc(16)), 'float32', [4]);
  const r = (() => {
    const file = path.join(dir, 'clone.hrry');
    const w = FileWriter.create(file);
    w.writeTensor('x', mk());
    w.finish();
    w.close();
    return FileReader.open(file);
  })();
  const t1 = r.tensor('x');
  const t2 = r.tensor('x');
  const spread = { ...t1 };
  assert.equal(Object.keys(spread).length, 1);
  const assigned = Object.assign({}, t1);
  assert.deepEqual(Object.keys(assigned), Object.keys(spread));
  assert.deepStrictEqual(t1, t2);
  assert.deepEqual(JSON.parse(JSON.stringify(t1)), { dtype: 'float32', shape: [4], layout: t1.layout });
  for (const v of [t1, [t1], { t: t1 }, r.item('x')]) {
    assert.throws(
      () => structuredClone(v),
      (e) => e instanceof HurrayError && e.name === 'HurrayError' && /cannot be posted to a worker or structuredClone/.test(e.message),
    );
  }
  const { port1, port2 } = new (require('node:worker_threads').MessageChannel)();
  assert.throws(() => port1.postMessage(t1), (e) => e instanceof HurrayError && e.code === 'ERR_HURRAY_UNSUPPORTED');
  port1.close();
  port2.close();
  r.close();
});

test('close() of a tensor during its writeTensorAsync throws ERR_HURRAY_STATE; the write completes', async () => {
  const N = 1 << 20;
  const t = Tensor.fromBuffer(new Float32Array(hurray.alloc(N * 4)).fill(2), 'float32', [N]);
  const file = path.join(dir, 'closeT.hrry');
  const w = FileWriter.create(file);
  const p = w.writeTensorAsync('x', t);
  assert.throws(
    () => t.close(),
    (e) => e instanceof HurrayError && e.code === 'ERR_HURRAY_STATE' && e.name === 'HurrayError' && /writeTensorAsync/.test(e.message),
  );
  await p;
  t.close();
  assert.equal(t.closed, true);
  await w.finishAsync();
  w.close();
  const r = FileReader.open(file);
  const a = r.tensor('x').array('float32');
  assert.equal(a.length, N);
  assert.equal(a[N - 1], 2);
  r.close();
});
