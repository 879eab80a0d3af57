'use strict';
// Shared helpers of the tests: paths, garbage collection, waiting for releases.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const repoRoot = process.env.HURRAY_REPO_ROOT || path.resolve(__dirname, '..', '..', '..');
const conformance = path.resolve(repoRoot, '..', 'shared', 'conformance');
const hasConformance = fs.existsSync(path.join(conformance, 'manifest.json'));
const skipConformance = hasConformance
  ? false
  : `../shared/conformance not found beside the repository (${conformance})`;

/** A fresh temporary directory, removed when the process exits. */
function tmpdir() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hurray-node-'));
  process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

/** Runs full collections (and lets finalizers and queued releases run) a few times. */
async function collect() {
  if (typeof global.gc !== 'function') throw new Error('run the tests with node --expose-gc');
  for (let i = 0; i < 6; i++) {
    global.gc();
    await tick();
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** Waits (collecting) until `cond()` holds; fails after ~2 s with `what`. */
async function until(cond, what) {
  for (let i = 0; i < 100; i++) {
    if (cond()) return;
    await collect();
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** A 64-byte aligned Float32Array holding `values`. */
function f32(hurray, values) {
  const a = new Float32Array(hurray.alloc(values.length * 4));
  a.set(values);
  return a;
}

module.exports = { repoRoot, conformance, skipConformance, tmpdir, tick, collect, until, f32 };
