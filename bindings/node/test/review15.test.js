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
