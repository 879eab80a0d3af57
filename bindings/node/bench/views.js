'use strict';
// View creation cost for a small and a large memory-mapped tensor: opening the file,
// taking the tensor, and making a zero-copy Float32Array of it. None of these touch
// the payload, so the time should not grow with the tensor's size.
//
//   node bench/views.js [SMALL_MIB=1] [LARGE_MIB=1024] [ITERATIONS=2000]
//
// Writes two files to the system temp directory (removed at exit); the large one is
// written sparse-free from a zero-filled buffer, so LARGE_MIB needs that much free
// memory and disk for a moment.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const hurray = require('..');

const [smallMiB = 1, largeMiB = 1024, iterations = 2000] = process.argv.slice(2).map(Number);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hurray-node-bench-'));
process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }));

function write(mib) {
  const file = path.join(dir, `t${mib}.hrry`);
  const n = (mib * 1024 * 1024) / 4;
  const t = hurray.Tensor.fromBuffer(new Float32Array(hurray.alloc(n * 4)), 'float32', [n]);
  const w = hurray.FileWriter.create(file, { durable: false });
  w.writeTensor('t', t);
  w.finish();
  w.close();
  t.close();
  return file;
}

function timeIt(label, f) {
  for (let i = 0; i < 50; i++) f(); // warm up
  const start = process.hrtime.bigint();
  for (let i = 0; i < iterations; i++) f();
  const ns = Number(process.hrtime.bigint() - start) / iterations;
  console.log(`${label.padEnd(44)} ${(ns / 1000).toFixed(2).padStart(10)} us/op`);
  return ns;
}

const results = {};
for (const mib of [smallMiB, largeMiB]) {
  const file = write(mib);
  const reader = hurray.FileReader.open(file);
  const t = reader.tensor('t');
  results[mib] = {
    open: timeIt(`${mib} MiB: open + tensor + array() + close`, () => {
      const r = hurray.FileReader.open(file);
      const x = r.tensor('t');
      x.array();
      x.close();
      r.close();
    }),
    view: timeIt(`${mib} MiB: array() of an open tensor`, () => t.array()),
  };
  t.close();
  reader.close();
  global.gc?.();
}
const ratio = results[largeMiB].view / results[smallMiB].view;
console.log(`array() ${largeMiB} MiB / ${smallMiB} MiB: ${ratio.toFixed(2)}x (1x: independent of size)`);
