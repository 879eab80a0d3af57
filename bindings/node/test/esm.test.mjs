// Issue 15 item 9: the package as an ES module. `import { FileReader } from 'hurray'`
// and `import * as hurray from 'hurray'` see every export, resolved through the
// package's "exports" by name (a package may import itself by name), and they are
// the very objects `require('hurray')` gives (one addon).
import test from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import * as hurray from 'hurray';
import def, { FileReader, FileWriter, Tensor, HurrayError, alloc, decodeStream, encodeStream } from 'hurray';

const require = createRequire(import.meta.url);
const cjs = require('hurray');

test('9: the ES module exports every name the CommonJS package does, the same objects', () => {
  const names = Object.keys(cjs).sort();
  assert.ok(names.length >= 20, names.join(','));
  assert.deepEqual(Object.keys(hurray).filter((k) => k !== 'default').sort(), names);
  for (const n of names) assert.equal(hurray[n], cjs[n], n);
  assert.equal(def, cjs);
  assert.equal(FileReader, cjs.FileReader);
  assert.equal(typeof hurray.StreamReader, 'function');
});

test('9: an ES module writes and reads a file through named imports', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hurray-esm-'));
  try {
    const p = path.join(dir, 'esm.hrry');
    const data = new Float32Array(alloc(16));
    data.set([1, 2, 3, 4]);
    const t = Tensor.fromBuffer(data, 'float32', [2, 2]);
    const w = await FileWriter.createAsync(p, { durable: false });
    await w.writeTensorAsync('x', t);
    await w.finishAsync();
    const r = FileReader.open(p);
    assert.deepEqual(Array.from(r.tensor('x').array('float32')), [1, 2, 3, 4]);
    const [back] = decodeStream(encodeStream([r.tensor('x')]));
    assert.deepEqual(back.shape, [2, 2]);
    r.close();
    assert.throws(() => FileReader.open(path.join(dir, 'none.hrry')), (e) => e instanceof HurrayError && e.code === 'ENOENT');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
