'use strict';
// The network client (issue 18): hurray.connect against a real `hurray serve` on
// 127.0.0.1; errors (unknown key: ERR_HURRAY_NOT_FOUND, netCode 2); AbortSignal
// mid-transfer through a stalling proxy (timers keep ticking, live objects back to
// the baseline, the server still serves); the call timeout.

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const net = require('node:net');
const path = require('node:path');
const { spawn } = require('node:child_process');

const hurray = require('..');
const testing = require('../lib/testing');
const { repoRoot, tmpdir, collect } = require('./helpers');

/** The `hurray` CLI: $HURRAY_BIN, else target/{release,debug}/hurray. */
function hurrayBin() {
  if (process.env.HURRAY_BIN) return process.env.HURRAY_BIN;
  for (const p of ['release', 'debug']) {
    const f = path.join(repoRoot, 'target', p, 'hurray');
    if (fs.existsSync(f)) return f;
  }
  return null;
}
const BIN = hurrayBin();
const skip = BIN ? false : 'no hurray CLI (cargo build -p hurray-cli, or set HURRAY_BIN)';

const BIG = 64 << 20; // bytes of the tensor the abort and timeout tests stop midway

/** `hurray serve FILE --listen 127.0.0.1:0`; resolves with { addr, port, stop }. */
function serve(file) {
  return new Promise((resolve, reject) => {
    const p = spawn(BIN, ['serve', file, '--listen', '127.0.0.1:0'], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    p.on('error', reject);
    p.stdout.on('data', (d) => {
      out += d;
      const m = /on (\S+)\n/.exec(out);
      if (m) {
        const addr = m[1];
        resolve({
          addr,
          port: Number(addr.slice(addr.lastIndexOf(':') + 1)),
          stop: () =>
            new Promise((done) => {
              p.on('exit', done);
              p.kill('SIGTERM');
            }),
        });
      }
    });
  });
}

/** Forwards client -> server freely and only the first `allow` bytes of server ->
 *  client, then holds the rest (a transfer stalled midway). */
function stallingProxy(port, allow) {
  const socks = [];
  const state = { forwarded: 0 };
  const server = net.createServer((c) => {
    const s = net.connect(port, '127.0.0.1');
    socks.push(c, s);
    c.on('data', (d) => s.write(d));
    s.on('data', (d) => {
      const room = allow - state.forwarded;
      if (room <= 0) {
        s.pause();
        return;
      }
      const part = d.subarray(0, room);
      state.forwarded += part.length;
      c.write(part);
      if (state.forwarded >= allow) s.pause();
    });
    for (const x of [c, s]) x.on('error', () => {});
    c.on('close', () => s.destroy());
    s.on('close', () => c.destroy());
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({
        addr: `127.0.0.1:${server.address().port}`,
        state,
        close: () =>
          new Promise((done) => {
            for (const x of socks) x.destroy();
            server.close(done);
          }),
      }),
    ),
  );
}

let srv;
const dir = tmpdir();

test.before(async () => {
  if (skip) return;
  const file = path.join(dir, 'served.hrry');
  const w = hurray.FileWriter.create(file, { durable: false });
  const small = new Float32Array(hurray.alloc(12 * 4));
  for (let i = 0; i < 12; i++) small[i] = i;
  const t = hurray.Tensor.fromBuffer(small, 'float32', [3, 4]);
  w.writeTensor('w', t);
  t.close();
  const big = new Uint32Array(hurray.alloc(BIG));
  for (let i = 0; i < big.length; i++) big[i] = i;
  const b = hurray.Tensor.fromBuffer(big, 'uint32', [BIG / 4]);
  w.writeTensor('big', b);
  b.close();
  w.finish();
  w.close();
  srv = await serve(file);
});

test.after(async () => {
  if (srv) await srv.stop();
});

/** Runs `f(client)` on a fresh connection to `addr`, closing it after. */
async function withClient(addr, options, f) {
  const c = await hurray.connect(addr, options);
  try {
    return await f(c);
  } finally {
    c.close();
  }
}

async function healthy() {
  await withClient(srv.addr, {}, async (c) => {
    const t = await c.get('w');
    assert.deepEqual(Array.from(t.array('float32')), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    t.close();
  });
}

test('get returns the stored tensor; serverInfo; put then get', { skip }, async () => {
  await collect();
  const live = testing.debugLiveObjects();
  await withClient(srv.addr, {}, async (c) => {
    const w = await c.get('w', { layouts: ['row_major'] });
    assert.equal(w.dtype, 'float32');
    assert.deepEqual(w.shape, [3, 4]);
    assert.deepEqual(Array.from(w.array('float32')), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    const info = c.serverInfo;
    assert.ok(info.protocolVersion >= 1);
    assert.ok(info.maxMessageSize >= 4096);
    assert.equal(typeof info.parallelStreams, 'boolean');
    const x = new Float64Array(hurray.alloc(4 * 8));
    x.set([1.5, -2, 0.25, 8]);
    const xt = hurray.Tensor.fromBuffer(x, 'float64', [2, 2]);
    const putting = c.put('fresh', xt);
    // The tensor is borrowed until the put settles.
    assert.throws(() => xt.close(), /in use by a pending writeTensorAsync or Client.put/);
    await putting;
    const got = await c.get('fresh');
    assert.deepEqual(Array.from(got.array('float64')), [1.5, -2, 0.25, 8]);
    assert.deepEqual(got.shape, [2, 2]);
    for (const o of [w, xt, got]) o.close();
    assert.equal(c.closed, false);
  });
  await collect();
  assert.equal(testing.debugLiveObjects(), live, 'nothing leaked');
});

test('a 64 MiB get keeps the event loop running and is exact', { skip }, async () => {
  const c = await hurray.connect(srv.addr);
  let ticks = 0;
  const timer = setInterval(() => ticks++, 1);
  const t = await c.get('big', { parallel: true });
  clearInterval(timer);
  const a = t.array('uint32');
  assert.equal(a.length, BIG / 4);
  assert.equal(a[0], 0);
  assert.equal(a[12345], 12345);
  assert.equal(a[a.length - 1], BIG / 4 - 1);
  t.close();
  c.close();
  assert.ok(ticks >= 1, 'the timer ran during the get');
});

test('an unknown key rejects with ERR_HURRAY_NOT_FOUND and netCode 2', { skip }, async () => {
  const c = await hurray.connect(srv.addr);
  await assert.rejects(c.get('no-such-key'), (e) => {
    assert.ok(e instanceof hurray.HurrayError);
    assert.equal(e.code, 'ERR_HURRAY_NOT_FOUND');
    assert.equal(e.netCode, 2);
    assert.match(e.message, /UNKNOWN_TENSOR/);
    return true;
  });
  const b = await c.get('w'); // still usable
  assert.equal(b.shape[0], 3);
  b.close();
  c.close();
});

test('a refused connection rejects with netCode null', { skip }, async () => {
  const s = net.createServer();
  await new Promise((r) => s.listen(0, '127.0.0.1', r));
  const port = s.address().port;
  await new Promise((r) => s.close(r));
  await assert.rejects(hurray.connect(`127.0.0.1:${port}`), (e) => {
    assert.equal(e.code, 'ERR_HURRAY_IO');
    assert.equal(e.netCode, null);
    return true;
  });
  await assert.rejects(hurray.connect('nohost'), /host:port/);
});

test('AbortSignal mid-transfer: AbortError, timers tick, everything released, server healthy', { skip }, async () => {
  await collect();
  const live = testing.debugLiveObjects();
  const proxy = await stallingProxy(srv.port, 4 << 20);
  try {
    const c = await hurray.connect(proxy.addr);
    const ac = new AbortController();
    let ticks = 0;
    const timer = setInterval(() => ticks++, 10);
    setTimeout(() => ac.abort(new Error('user gave up')), 300);
    const t0 = Date.now();
    await assert.rejects(c.get('big', { signal: ac.signal }), (e) => {
      assert.equal(e.name, 'AbortError');
      assert.equal(e.code, 'ABORT_ERR');
      assert.equal(e.cause.message, 'user gave up');
      return true;
    });
    clearInterval(timer);
    const elapsed = Date.now() - t0;
    assert.ok(elapsed < 3000, `the abort took ${elapsed} ms`);
    assert.ok(ticks >= 10, `timers ticked ${ticks} times during the stalled get`);
    assert.ok(proxy.state.forwarded > 0 && proxy.state.forwarded < BIG, 'stopped midway');
    assert.equal(c.closed, true);
    await assert.rejects(c.get('w'), (e) => e.code === 'ERR_HURRAY_STATE');
    // An already aborted signal rejects at once.
    await assert.rejects(c.get('w', { signal: AbortSignal.abort() }), { name: 'AbortError' });
  } finally {
    await proxy.close();
  }
  await collect();
  assert.equal(testing.debugLiveObjects(), live, 'the client and the partial item were released');
  await healthy();
});

test('an abort as a get completes is decided one way: resolved on a working client, or AbortError on a closed one', { skip }, async () => {
  await collect();
  const live = testing.debugLiveObjects();
  let resolved = 0;
  let aborted = 0;
  // One timing sample of the whole get, then aborts swept around its end.
  const c0 = await hurray.connect(srv.addr);
  const t0 = process.hrtime.bigint();
  (await c0.get('big')).close();
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  c0.close();
  for (let i = 0; i < 24; i++) {
    const c = await hurray.connect(srv.addr);
    const ac = new AbortController();
    const at = Math.max(1, Math.round(ms * (0.5 + (i % 12) / 10)));
    const timer = setTimeout(() => ac.abort(), at);
    try {
      const t = await c.get('big', { signal: ac.signal });
      resolved++;
      t.close();
      assert.equal(c.closed, false, `run ${i}: resolved, so the client must work`);
      (await c.get('w')).close();
    } catch (e) {
      assert.equal(e.name, 'AbortError', `run ${i}: ${e}`);
      aborted++;
      assert.equal(c.closed, true, `run ${i}: aborted, so the client is closed`);
    } finally {
      clearTimeout(timer);
      c.close();
    }
  }
  assert.equal(resolved + aborted, 24);
  await collect();
  assert.equal(testing.debugLiveObjects(), live, 'every fetched or aborted item released');
  await healthy();
});

test('the call timeout rejects mid-transfer and releases', { skip }, async () => {
  await collect();
  const live = testing.debugLiveObjects();
  const proxy = await stallingProxy(srv.port, 2 << 20);
  try {
    await withClient(proxy.addr, { timeoutMs: 400 }, async (c) => {
      const t0 = Date.now();
      await assert.rejects(c.get('big'), (e) => {
        assert.equal(e.code, 'ERR_HURRAY_IO');
        assert.match(e.message, /timed out/);
        assert.equal(e.netCode, null);
        return true;
      });
      assert.ok(Date.now() - t0 < 3000);
    });
  } finally {
    await proxy.close();
  }
  await collect();
  assert.equal(testing.debugLiveObjects(), live);
  await healthy();
});
