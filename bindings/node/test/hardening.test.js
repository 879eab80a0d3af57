'use strict';
// Second review round: crash-prone cases run in a child process, so a segfault
// fails the test instead of killing the runner.

const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const { Writable } = require('node:stream');
const { spawnSync } = require('node:child_process');

const hurray = require('..');
const { tmpdir, f32 } = require('./helpers');

const dir = tmpdir();
const pkg = JSON.stringify(path.resolve(__dirname, '..'));

/** Runs `body` in `node --expose-gc` (with `h` the package); returns its stdout. */
function child(body, timeout = 120000) {
  const code = `const h = require(${pkg});\n${body}`;
  const r = spawnSync(process.execPath, ['--expose-gc', '-e', code], { encoding: 'utf8', timeout });
  assert.equal(r.status, 0, `child exited with ${r.status} ${r.signal || ''}: ${r.stderr.slice(-2000)}`);
  return r.stdout.trim();
}

// An aligned Uint8Array of N bytes over a plain ArrayBuffer `ab`, and its tensor
// (strict: zero-copy over `ab`, never a copy).
const MK = `
function mk(N, fromBuffer = h.Tensor.fromBuffer) {
  const ab = new ArrayBuffer(N + 64);
  for (let off = 0; off < 64; off += 8) {
    try { const a = new Uint8Array(ab, off, N); a.fill(5); return [ab, fromBuffer.call(h.Tensor, a, 'uint8', [N], { strict: true })]; } catch (e) {}
  }
  throw new Error('no aligned offset');
}
const transfer = (ab) => { try { structuredClone(ab, { transfer: [ab] }); } catch (e) { return 'threw'; } return 'moved'; };
`;

test('Item.of refuses a tensor whose lent ArrayBuffer was detached', () => {
  // The native check, behind the JS-side untransferable mark (bypassed here).
  const out = child(`${MK}
    const { uncheckedFromBuffer } = require(${pkg} + '/lib/testing');
    const [ab, t] = mk(1 << 20, uncheckedFromBuffer);
    transfer(ab);
    gc();
    try { const it = h.Item.of(t); console.log('accepted'); setTimeout(() => { gc(); console.log(it.tensor.array()[0]); }, 10); }
    catch (e) { console.log(e.code); }`);
  assert.equal(out, 'ERR_HURRAY_STATE');
});

test('items made before a detach check it on every later use', () => {
  const out = child(`${MK}
    const { uncheckedFromBuffer } = require(${pkg} + '/lib/testing');
    const [ab, t] = mk(1 << 20, uncheckedFromBuffer);
    const item = h.Item.of(t);
    const d = h.Descriptor.build({ dtype: 'float32', shape: [1], layout: 'composite_head',
      composite: { memberCount: 1, rule: 'partition' }, buffers: [] });
    const [ab2, t2] = mk(4096, uncheckedFromBuffer);
    const comp = h.Item.composite(h.Tensor.fromBuffers(d.encode(), []), [h.Item.of(t2)]);
    const member = comp.members[0];
    const memberTensor = member.tensor;
    transfer(ab);
    transfer(ab2);
    gc();
    const code = (f) => { try { f(); return 'accepted'; } catch (e) { return e.code; } };
    const w = h.FileWriter.create(${JSON.stringify(path.join(dir, 'detached-item.hrry'))});
    console.log([
      code(() => item.tensor.array()),
      code(() => h.encodeStream([item])),
      code(() => new h.StreamEncoder().encodeItem(item)),
      code(() => w.writeItem('x', item)),
      code(() => h.encodeStream([comp])),
      code(() => member.tensor.buffer(0)),
      code(() => memberTensor.array()),
      code(() => w.writeItem('c', comp)),
    ].join(' '));
    w.close();`);
  assert.equal(out, Array(8).fill('ERR_HURRAY_STATE').join(' '));
});

test('a lent ArrayBuffer cannot be transferred away from tensors, items, views or chunks', () => {
  for (const mode of ['tensor', 'item', 'membertensor', 'view', 'buffer', 'chunks']) {
    const out = child(`${MK}
      const N = 16 << 20;
      let [ab, t] = mk(N);
      let keep;
      const mode = ${JSON.stringify(mode)};
      if (mode === 'tensor') keep = t;
      if (mode === 'item') keep = h.Item.of(t);
      if (mode === 'membertensor') keep = h.Item.of(t).tensor;
      if (mode === 'view') keep = t.array();
      if (mode === 'buffer') keep = new Uint8Array(t.buffer(0));
      if (mode === 'chunks') keep = new h.StreamEncoder().encode(t);
      const how = transfer(ab);
      gc(); gc();
      setTimeout(() => {
        gc();
        let s = 0;
        const sum = (u) => { for (let i = 0; i < u.length; i += 4096) s += u[i]; };
        if (mode === 'tensor') sum(keep.array());
        if (mode === 'item') sum(h.decodeStream(h.encodeStream([keep]))[0].array());
        if (mode === 'membertensor') sum(keep.array());
        if (mode === 'view' || mode === 'buffer') sum(keep);
        if (mode === 'chunks') sum(new Uint8Array(keep[keep.length - 1]));
        console.log(how, s === 5 * Math.ceil(keep.length === undefined || mode === 'chunks' ? N / 4096 : keep.length / 4096));
      }, 10);`);
    assert.match(out, /^(moved|threw) true$/, mode);
  }
});

test('the resizable check cannot be spoofed', (t) => {
  let ab;
  try {
    ab = new ArrayBuffer(8192, { maxByteLength: 16384 });
  } catch {}
  if (!ab || ab.resizable !== true) {
    t.skip('this Node has no resizable ArrayBuffers');
    return;
  }
  const refused = { code: 'ERR_HURRAY_INVALID_ARGUMENT', message: /resizable|growable/ };
  const tryAll = (buf) => {
    for (let off = 0; off < 128; off += 8) {
      hurray.Tensor.fromBuffer(new Uint8Array(buf, off, 1024), 'uint8', [1024]).close(); // throws
    }
  };
  Object.defineProperty(ab, 'resizable', { value: false });
  assert.throws(() => tryAll(ab), refused);
  const desc = hurray.Descriptor.dense('uint8', [1024]).encode();
  assert.throws(() => hurray.Tensor.fromBuffers(desc, [new Uint8Array(ab, 0, 1024)]), refused);
  const saved = Object.getOwnPropertyDescriptor(ArrayBuffer.prototype, 'resizable');
  delete ArrayBuffer.prototype.resizable;
  try {
    assert.throws(() => tryAll(new ArrayBuffer(8192, { maxByteLength: 16384 })), refused);
  } finally {
    Object.defineProperty(ArrayBuffer.prototype, 'resizable', saved);
  }
  const sab = new SharedArrayBuffer(8192, { maxByteLength: 16384 });
  if (sab.growable === true) {
    Object.defineProperty(sab, 'growable', { value: false });
    assert.throws(() => tryAll(sab), refused);
  }
  // A spoofed `buffer` getter on a view does not hide the real buffer either.
  const v = new Uint8Array(new ArrayBuffer(8192, { maxByteLength: 16384 }), 0, 1024);
  Object.defineProperty(v, 'buffer', { value: new ArrayBuffer(1024) });
  assert.throws(() => hurray.Tensor.fromBuffer(v, 'uint8', [1024]), refused);
});

test('integer options are validated, never wrapped or truncated', () => {
  const bad = { code: 'ERR_HURRAY_INVALID_ARGUMENT' };
  const file = path.join(dir, 'opts.hrry');
  for (const a of [4096.5, 2 ** 32 + 8192, 2 ** 32 + 4096, -4096, NaN, Infinity]) {
    assert.throws(() => hurray.FileWriter.create(file, { dataBufferAlignment: a }), { ...bad, message: /dataBufferAlignment/ }, String(a));
  }
  for (const d of [-1, 2 ** 32, 2 ** 32 + 1, 0.5, NaN]) {
    assert.throws(() => new hurray.StreamDecoder({ maxCompositeDepth: d }), { ...bad, message: /maxCompositeDepth/ }, String(d));
    assert.throws(() => new hurray.StreamEncoder({ maxCompositeDepth: d }), { ...bad, message: /maxCompositeDepth/ }, String(d));
    assert.throws(() => new hurray.StreamDecoder({ maxDescriptorBytes: d }), { ...bad, message: /maxDescriptorBytes/ }, String(d));
  }
  new hurray.StreamDecoder({ maxCompositeDepth: 3, maxDescriptorBytes: 4096 }).close();
  const w = hurray.FileWriter.create(file, { dataBufferAlignment: 8192 });
  w.writeTensor('x', hurray.Tensor.fromBuffer(f32(hurray, [1]), 'float32', [1]));
  w.finish();
  w.close();
  const r = hurray.FileReader.open(file);
  assert.equal(r.info.dataBufferAlignment, 8192);
  r.close();
});

const settle = (p, ms = 1000) =>
  Promise.race([
    p.then(
      () => 'resolved',
      (e) => 'rejected',
    ),
    new Promise((r) => setTimeout(() => r('HANG'), ms)),
  ]);

test('write() and end() settle when the Writable is destroyed during an in-flight write', async () => {
  const mk = () => hurray.Tensor.fromBuffer(f32(hurray, [1, 2, 3, 4]), 'float32', [4]);
  {
    const w = new Writable({ highWaterMark: 1 << 30, write() {} }); // never calls back
    const sw = new hurray.StreamWriter(w);
    const p = sw.write(mk());
    setTimeout(() => w.destroy(), 20);
    assert.equal(await settle(p), 'rejected');
    assert.equal(await settle(sw.end()), 'rejected');
  }
  {
    const w = new Writable({ highWaterMark: 1 << 30, write() {} });
    w.on('error', () => {});
    const sw = new hurray.StreamWriter(w);
    const p = sw.write(mk());
    const q = sw.write(mk()); // queued behind the in-flight one
    setTimeout(() => w.destroy(new Error('boom')), 20);
    assert.equal(await settle(p), 'rejected');
    assert.equal(await settle(q), 'rejected');
    assert.equal(await settle(sw.end()), 'rejected');
  }
});

test('the mapping count follows the mapping, not the reader', async () => {
  const { debugLiveMappings } = require('../lib/testing');
  const { collect } = require('./helpers');
  const file = path.join(dir, 'map.hrry');
  const w = hurray.FileWriter.create(file);
  w.writeTensor('x', hurray.Tensor.fromBuffer(f32(hurray, [1, 2]), 'float32', [2]));
  w.finish();
  w.close();
  await collect();
  const base = debugLiveMappings();
  const r = hurray.FileReader.open(file);
  const t = r.tensor('x');
  const it = r.item('x');
  r.close();
  assert.equal(debugLiveMappings(), base + 1, 'tensors taken from a closed reader keep the mapping');
  t.close();
  const member = it.tensor;
  it.close();
  assert.equal(debugLiveMappings(), base + 1, 'a tensor of an item keeps the mapping');
  let view = member.array();
  member.close();
  assert.equal(debugLiveMappings(), base + 1, 'a view keeps the mapping');
  assert.equal(view[1], 2);
  view = null;
  await collect();
  assert.equal(debugLiveMappings(), base);
  // Moved into an item: still counted until the item goes.
  const r2 = hurray.FileReader.open(file);
  const moved = hurray.Item.of(r2.tensor('x'));
  r2.close();
  assert.equal(debugLiveMappings(), base + 1);
  moved.close();
  await collect();
  assert.equal(debugLiveMappings(), base);
});

test('tensors outliving closed readers stop at HURRAY_ERR_LIMIT, not an abort', (t) => {
  let max = Infinity;
  try {
    max = Number(require('node:fs').readFileSync('/proc/sys/vm/max_map_count', 'utf8'));
  } catch {}
  if (!(max <= 300000)) {
    t.skip(`vm.max_map_count is ${max}: no guard here, or too many mappings to make in a test`);
    return;
  }
  const file = path.join(dir, 'many2.hrry');
  const w = hurray.FileWriter.create(file);
  w.writeTensor('x', hurray.Tensor.fromBuffer(f32(hurray, [1]), 'float32', [1]));
  w.finish();
  w.close();
  // The loop never yields: no finalizer runs; the reader is closed every time.
  const out = child(`
    const keep = [];
    try {
      for (let i = 0; i < ${max + 1000}; i++) {
        const r = h.FileReader.open(${JSON.stringify(file)});
        keep.push(r.tensor('x'));
        r.close();
      }
      console.log('no limit');
    } catch (e) {
      console.log(e.code);
    }
    // The process still works (mappings and malloc are left).
    const objs = []; for (let k = 0; k < 1e5; k++) objs.push({ k });
    console.log(keep[0].array()[0]);`);
  assert.equal(out, 'ERR_HURRAY_LIMIT\n1');
});

test('decoded tensors dropped in a synchronous loop stop at a memory budget, not OOM', () => {
  const body = (mode) => `
    const N = 16 << 20;
    const d = new Uint8Array(h.alloc(N)); d.fill(3);
    const bytes = h.encodeStream([h.Tensor.fromBuffer(d, 'uint8', [N])]);
    const { debugLiveDecodedBytes } = require(${pkg} + '/lib/testing');
    let i = 0;
    (async () => {
      try {
        for (; i < 64; i++) {
          const [x] = h.decodeStream(bytes);
          if (${JSON.stringify(mode)} === 'close') x.close();
          if (${JSON.stringify(mode)} === 'yield') { await new Promise(setImmediate); gc(); await new Promise(setImmediate); }
        }
        console.log('done', i);
      } catch (e) {
        console.log(e.code, i, /close\\(\\) tensors or yield to the event loop/.test(e.message));
      }
    })();`;
  const run = (mode) => {
    const code = `const h = require(${pkg});\n${body(mode)}`;
    const r = spawnSync(process.execPath, ['--expose-gc', '-e', code], {
      encoding: 'utf8',
      timeout: 120000,
      env: { ...process.env, HURRAY_NODE_MAX_DECODED_BYTES: String(256 << 20) },
    });
    assert.equal(r.status, 0, r.stderr.slice(-2000));
    return r.stdout.trim();
  };
  // 256 MiB of budget, 16 MiB tensors: refused after about 16 (never 64 = 1 GiB).
  assert.match(run('drop'), /^ERR_HURRAY_LIMIT 1[0-6] true$/);
  assert.equal(run('close'), 'done 64');
  assert.equal(run('yield'), 'done 64');
});
