'use strict';
// The network client (issue 18, docs/node.md "Network"): `hurray.connect(address)`
// resolves with a `Client` whose `get`/`put` return promises and never block the
// event loop (the native NetClient runs each blocking call on the libuv thread pool).
//
// AbortSignal: `get(key, { signal })` / `put(key, value, { signal })`. Aborting
// cancels the transfer in flight (the native call returns promptly and releases what
// it had received), the promise rejects with an `AbortError` (`code` 'ABORT_ERR',
// `cause` the signal's reason), and the client is closed for good: a stream stopped
// midway cannot be reused, so connect again. An abort landing as a call completes is
// decided one way: the promise resolves and the client works, or it rejects with an
// AbortError and the client is closed (a put may then still have been stored).

const native = require('./native');

/** The error an aborted call rejects with, as Node's own APIs make it. */
function abortError(signal, cause) {
  const e = new Error('The operation was aborted', { cause: signal.reason ?? cause });
  e.name = 'AbortError';
  e.code = 'ABORT_ERR';
  return e;
}

/**
 * Runs `start()` (which returns the native call's promise) so that an abort of
 * `signal` cancels `client`, waits for the native call to settle (so whatever it
 * held is released before the promise settles) and rejects with an AbortError.
 * An abort that cancelled the client is always reported, even when the native
 * call had already completed (the cancel closed the client all the same): its
 * result goes to `release` and the promise rejects. So a call resolves only on a
 * client that still works.
 */
async function guarded(client, signal, start, release) {
  if (signal === undefined || signal === null) return start();
  if (signal.aborted) throw abortError(signal);
  let cancelled = false;
  const onAbort = () => {
    cancelled = true;
    client.cancel();
  };
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    const r = await start();
    if (cancelled) {
      if (release) release(r);
      throw abortError(signal);
    }
    return r;
  } catch (e) {
    if (signal.aborted) throw abortError(signal, e);
    throw e;
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}

/** `"host:port"` (IPv6 `"[::1]:port"`) split. */
function splitAddress(address) {
  const bad = () =>
    new native.HurrayError(
      `HURRAY_ERR_INVALID_ARGUMENT: address ${JSON.stringify(address)} is not "host:port" (IPv6: "[::1]:port")`,
      'ERR_HURRAY_INVALID_ARGUMENT',
    );
  if (typeof address !== 'string') throw bad();
  const at = address.lastIndexOf(':');
  if (at <= 0) throw bad();
  let host = address.slice(0, at);
  const portText = address.slice(at + 1);
  if (!/^[0-9]{1,5}$/.test(portText)) throw bad();
  const port = Number(portText);
  if (port > 65535) throw bad();
  if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1);
  if (host === '') throw bad();
  return { host, port };
}

/** One connection to a Hurray server; see `connect`. */
class Client {
  #native;
  #address;

  constructor(nativeClient, address) {
    this.#native = nativeClient;
    this.#address = address;
  }

  /** The address it was made with. */
  get address() {
    return this.#address;
  }

  /** What the server negotiated: protocolVersion, maxMessageSize, capabilityFlags, parallelStreams. */
  get serverInfo() {
    return this.#native.serverInfo;
  }

  /** Whether close() ran or a call was aborted. */
  get closed() {
    return this.#native.closed;
  }

  /**
   * Gets the item under `key`: a `Tensor` for a plain tensor, an `Item` for a
   * composite. Options: `layouts` (names or tags, most preferred first),
   * `alignment` (bytes, default 64), `parallel`, `transcode`, `signal`.
   * Rejects with a HurrayError (`code` ERR_HURRAY_NOT_FOUND, `netCode` 2 for an
   * unknown key) or an AbortError.
   */
  async get(key, options = {}) {
    const { signal, ...rest } = options ?? {};
    const item = await guarded(
      this.#native,
      signal,
      () => this.#native.getAsync(key, rest),
      (it) => it.close(),
    );
    if (item.isComposite) return item;
    const t = item.tensor; // keeps the received memory alive
    item.close();
    return t;
  }

  /**
   * Puts a `Tensor` or an `Item` (composites as composites) under `key`; resolves
   * once the server acknowledged it. Do not change its memory until then.
   * Options: `signal`.
   */
  async put(key, value, options = {}) {
    const { signal } = options ?? {};
    await guarded(this.#native, signal, () => this.#native.putAsync(key, value));
  }

  /** Closes the connection (cancelling a call in flight). Idempotent. */
  close() {
    this.#native.close();
  }

  [Symbol.dispose]() {
    this.close();
  }
}

/**
 * Connects to the Hurray server at `address` ("host:port") and does the
 * handshake. Options: `timeoutMs` (a whole get or put; 0 = none),
 * `connectTimeoutMs` (default 10 000), `ioTimeoutMs` (a stalled read or write,
 * default 60 000), `maxItemBytes`, `signal`.
 */
async function connect(address, options = {}) {
  const { signal, ...rest } = options ?? {};
  const { host, port } = splitAddress(address);
  if (signal && signal.aborted) throw abortError(signal);
  const c = await native.NetClient.connectAsync(host, port, rest);
  if (signal && signal.aborted) {
    c.close();
    throw abortError(signal);
  }
  return new Client(c, address);
}

module.exports = { connect, Client };
