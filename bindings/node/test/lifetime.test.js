'use strict';
// Lifetime: after close and after GC, hurray_debug_live_objects returns to where it
// started, and each release callback runs exactly once, including releases triggered
// off the JS thread.

const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');

const hurray = require('..');
const testing = require('../lib/testing');
const { tmpdir, until, collect, f32 } = require('./helpers');

const dir = tmpdir();

test('close() releases the handles; releases run once, after close', async () => {
  await collect();
  const live = testing.debugLiveObjects();
  const called = testing.debugReleasesCalled();
  let released = 0;
  const t = hurray.Tensor.fromBuffer(f32(hurray, [1, 2]), 'float32', [2], {
    onRelease: () => released++,
  });
  assert.ok(testing.debugLiveObjects() > live);
  t.close();
  t.close(); // idempotent
  assert.equal(testing.debugLiveObjects(), live, 'nothing leaked after close');
  // One release for the buffer, one for the owner (onRelease).
  assert.equal(testing.debugReleasesCalled() - called, 2);
  await until(() => released === 1, 'onRelease');
  await collect();
  assert.equal(released, 1, 'onRelease ran exactly once');
});

test('a view keeps the tensor alive after close until it is collected', async () => {
  await collect();
  const live = testing.debugLiveObjects();
  let released = 0;
  const src = f32(hurray, [7, 8, 9]);
  const t = hurray.Tensor.fromBuffer(src, 'float32', [3], { onRelease: () => released++ });
  let view = t.array();
  t.close();
  assert.ok(testing.debugLiveObjects() > live, 'the view holds the tensor');
  assert.equal(view[2], 9);
  await collect();
  assert.equal(released, 0, 'not released while the view lives');
  view = null;
  await until(() => testing.debugLiveObjects() === live && released === 1, 'the view to be collected');
});

test('tensors left to the garbage collector are released exactly once', async () => {
  await collect();
  const live = testing.debugLiveObjects();
  const done = testing.debugReleasesDone();
  let released = 0;
  (() => {
    for (let i = 0; i < 50; i++) {
      const t = hurray.Tensor.fromBuffer(f32(hurray, [i]), 'float32', [1], {
        onRelease: () => released++,
      });
      t.array();
    }
    const r = hurray.FileReader.open(writeOne());
    r.tensor('t').buffer(0);
  })();
  await until(() => testing.debugLiveObjects() === live && released === 50, 'collection');
  await collect();
  assert.equal(released, 50);
  // One buffer and one owner release for each of the 50, and the buffer release of
  // the tensor writeOne() wrote to the file.
  assert.equal(testing.debugReleasesDone() - done, 101);
});

function writeOne() {
  const file = path.join(dir, `one-${process.hrtime.bigint()}.hrry`);
  const w = hurray.FileWriter.create(file, { durable: false });
  const t = hurray.Tensor.fromBuffer(f32(hurray, [1]), 'float32', [1]);
  w.writeTensor('t', t);
  w.finish();
  w.close();
  t.close();
  return file;
}

test('a release triggered off the JS thread reaches the JS thread, once', async () => {
  await collect();
  const live = testing.debugLiveObjects();
  const called = testing.debugReleasesCalled();
  const done = testing.debugReleasesDone();
  const mainThread = true;
  let ranOn = null;
  const t = hurray.Tensor.fromBuffer(f32(hurray, [1, 2, 3]), 'float32', [3], {
    onRelease: () => {
      ranOn = mainThread && require('node:worker_threads').isMainThread;
    },
  });
  testing.debugDestroyOnOtherThread(t);
  assert.equal(t.closed, true);
  assert.throws(() => t.shape, { code: 'ERR_HURRAY_STATE' });
  assert.equal(testing.debugLiveObjects(), live, 'destroyed on the other thread');
  assert.equal(testing.debugReleasesCalled() - called, 2, 'both releases ran (off the JS thread)');
  await until(() => testing.debugReleasesDone() - done === 2, 'the releases to reach the JS thread');
  assert.equal(ranOn, true, 'onRelease ran on the JS thread');
});

test('a tensor in an encoder outlives close() until the encoder lets go', async () => {
  await collect();
  const live = testing.debugLiveObjects();
  let released = 0;
  const t = hurray.Tensor.fromBuffer(f32(hurray, [1, 2]), 'float32', [2], { onRelease: () => released++ });
  const enc = new hurray.StreamEncoder();
  let chunks = enc.encode(t);
  t.close();
  await collect();
  assert.equal(released, 0, 'the payload chunk still holds the memory');
  assert.equal(new Float32Array(chunks.find((c) => c.byteLength === 8))[1], 2);
  chunks = null;
  enc.close();
  await until(() => released === 1 && testing.debugLiveObjects() === live, 'the chunks to be collected');
});

test('the addon works in a worker thread, with its own release queue', async () => {
  const { Worker } = require('node:worker_threads');
  const src = `
    const { parentPort } = require('node:worker_threads');
    const hurray = require(${JSON.stringify(path.resolve(__dirname, '..'))});
    const a = new Float32Array(hurray.alloc(8));
    a.set([3, 4]);
    // The release comes once nothing holds the memory (chunk views of the encoder
    // included, which only a collection frees): collect until it does, so the
    // worker does not exit first.
    const keep = setInterval(() => globalThis.gc && globalThis.gc(), 5);
    setTimeout(() => clearInterval(keep), 10000).unref(); // give up: the test fails
    const t = hurray.Tensor.fromBuffer(a, 'float32', [2], {
      onRelease: () => {
        parentPort.postMessage({ released: true });
        clearInterval(keep);
      },
    });
    const [back] = hurray.decodeStream(hurray.encodeStream([t]));
    parentPort.postMessage({ values: Array.from(back.array()) });
    back.close();
    t.close();
  `;
  const w = new Worker(src, { eval: true });
  const messages = [];
  await new Promise((resolve, reject) => {
    w.on('message', (m) => {
      messages.push(m);
      if (m.released) resolve();
    });
    w.on('error', reject);
    w.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`worker exit ${code}`))));
  });
  await w.terminate();
  assert.deepEqual(messages[0], { values: [3, 4] });
  assert.ok(messages.some((m) => m.released), 'onRelease ran in the worker');
});
