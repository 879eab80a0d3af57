'use strict';
// JavaScript idioms over the native classes (docs/node.md "Idioms"):
//
// - `HurrayError`: a class for `instanceof`. The natives throw plain `Error`s whose
//   `code` is `ERR_HURRAY_<CATEGORY>` or an errno name and whose message starts with
//   the C status name; `e instanceof HurrayError` is true for exactly those (and for
//   errors made as HurrayError), so it holds for every path, the static factories
//   included, at no cost per call.
// - `Symbol.dispose` (`using t = ...`) closes; `util.inspect` and `toString` show
//   the dtype and shape; `toJSON` gives a plain summary.
// - Worker messages: a Tensor or Item handed to `postMessage` / `structuredClone`
//   would arrive as `{}` (napi objects carry their state out of reach of the clone
//   algorithm). Each one the package hands out gets an own enumerable accessor whose
//   getter throws a HurrayError saying how to send it instead; the clone algorithm
//   reads it, so the post fails with that error.
// - `FileWriter`'s `*Async` calls queue per writer, in call order.

const util = require('node:util');

const PREFIX = /^HURRAY_ERR_[A-Z0-9_]+:/;
const isError = (e) => e !== null && typeof e === 'object' && Function.prototype[Symbol.hasInstance].call(Error, e);

/**
 * What the package throws for a library or argument error: `code` is an errno name
 * (`ENOENT`, ...) or `ERR_HURRAY_<CATEGORY>`; the message starts with the C status
 * name (`HURRAY_ERR_FORMAT: ...`).
 */
class HurrayError extends Error {
  constructor(message, code, options) {
    super(message, options);
    if (code !== undefined) this.code = code;
  }

  static [Symbol.hasInstance](e) {
    if (!isError(e)) return false;
    if (Function.prototype[Symbol.hasInstance].call(HurrayError, e)) return true;
    return (
      typeof e.code === 'string' &&
      typeof e.message === 'string' &&
      (e.code.startsWith('ERR_HURRAY_') || PREFIX.test(e.message))
    );
  }
}
Object.defineProperty(HurrayError.prototype, 'name', {
  value: 'HurrayError',
  writable: true,
  configurable: true,
});

const CLONE_KEY = 'hurray:notCloneable';

function cloneError(what) {
  return new HurrayError(
    `HURRAY_ERR_NOT_APPLICABLE: a hurray ${what} cannot be posted to a worker or structuredClone'd ` +
      '(it would arrive as an empty object); send hurray.encodeStream([tensor]) and ' +
      'hurray.decodeStream(bytes) on the other side, or send the file path and tensor ' +
      'name and open the file there',
    'ERR_HURRAY_UNSUPPORTED',
  );
}

function install(addon) {
  const { Tensor, Item, Descriptor, FileReader, FileWriter, StreamDecoder, StreamEncoder } = addon;

  // The clone algorithm reads only own enumerable string-keyed properties (the set
  // Object.keys lists), so the guard must be one: its value is one shared, frozen
  // sentinel per class whose own enumerable getter throws. Spread, Object.assign and
  // deepStrictEqual copy or compare the sentinel by reference and never call it;
  // structuredClone and postMessage walk into it and throw the HurrayError.
  const sentinel = (what) => {
    const s = {};
    Object.defineProperty(s, CLONE_KEY, {
      enumerable: true,
      configurable: false,
      get: () => {
        throw cloneError(what);
      },
    });
    Object.defineProperty(s, 'toJSON', { value: () => undefined, enumerable: false });
    return Object.freeze(s);
  };
  const guards = new Map([
    [Tensor, { enumerable: true, configurable: false, writable: false, value: sentinel('Tensor') }],
    [Item, { enumerable: true, configurable: false, writable: false, value: sentinel('Item') }],
  ]);
  // Marks a Tensor or Item (or each of an array of them) as not cloneable.
  function mark(v) {
    if (v === null || typeof v !== 'object') return v;
    if (Array.isArray(v)) {
      for (const x of v) mark(x);
      return v;
    }
    for (const [cls, guard] of guards) {
      if (v instanceof cls) {
        if (!Object.prototype.hasOwnProperty.call(v, CLONE_KEY)) Object.defineProperty(v, CLONE_KEY, guard);
        break;
      }
    }
    return v;
  }
  // Wraps the methods and getters `names` of `target` (default: all; configurable
  // ones only) so their results are marked.
  function markResults(target, names) {
    for (const name of names ?? Object.getOwnPropertyNames(target)) {
      if (name === 'constructor' || name === 'prototype' || name === 'length' || name === 'name') continue;
      const d = Object.getOwnPropertyDescriptor(target, name);
      if (!d || !d.configurable) continue;
      if (typeof d.value === 'function') {
        const f = d.value;
        d.value = {
          [name](...args) {
            return mark(Reflect.apply(f, this, args));
          },
        }[name];
      } else if (typeof d.get === 'function') {
        const g = d.get;
        d.get = function () {
          return mark(Reflect.apply(g, this, []));
        };
      } else {
        continue;
      }
      Object.defineProperty(target, name, d);
    }
  }
  // Every call that returns Tensors or Items (not views, names or KV values, which
  // are left unwalked).
  markResults(FileReader.prototype, ['tensor', 'tensors', 'item']);
  for (const cls of [StreamDecoder, Item]) markResults(cls.prototype);
  markResults(Item, ['of', 'composite']);
  markResults(Tensor, ['fromUnpacked']);

  const describe = (t) => {
    if (t.closed) return 'closed';
    return `${t.dtype}[${t.shape.join(', ')}] ${t.layout}`;
  };
  const summary = (t) => (t.closed ? { closed: true } : { dtype: t.dtype, shape: t.shape, layout: t.layout });
  const define = (proto, name, value) =>
    Object.defineProperty(proto, name, { value, writable: true, configurable: true, enumerable: false });

  define(Tensor.prototype, 'toString', function toString() {
    return `Tensor ${describe(this)}`;
  });
  define(Tensor.prototype, 'toJSON', function toJSON() {
    return summary(this);
  });
  define(Descriptor.prototype, 'toString', function toString() {
    return `Descriptor ${this.dtype}[${this.shape.join(', ')}] ${this.layout}`;
  });
  define(Item.prototype, 'toString', function toString() {
    try {
      return this.isComposite ? `Item composite(${this.members.length} members)` : `Item ${describe(this.tensor)}`;
    } catch {
      return 'Item closed';
    }
  });
  for (const cls of [Tensor, Descriptor, Item]) {
    define(cls.prototype, util.inspect.custom, function inspect() {
      try {
        return `${cls.name} <${this.toString().slice(cls.name.length + 1)}>`;
      } catch {
        return `${cls.name} <closed>`;
      }
    });
  }
  for (const cls of [Tensor, Descriptor, Item, FileReader, FileWriter, StreamDecoder, StreamEncoder]) {
    if (typeof cls.prototype.close === 'function' && typeof Symbol.dispose === 'symbol') {
      define(cls.prototype, Symbol.dispose, function dispose() {
        this.close();
      });
    }
  }

  // napi-rs holds a borrow of a tensor (item) while a `writeTensorAsync`
  // (`writeItemAsync`) or a network `Client.put` that was given it runs, and refuses
  // `close()` meanwhile with a generic error: say what is wrong, as the library's
  // state error.
  for (const [cls, what, call] of [
    [Tensor, 'tensor', 'writeTensorAsync or Client.put'],
    [Item, 'item', 'writeItemAsync or Client.put'],
  ]) {
    const native = cls.prototype.close;
    define(cls.prototype, 'close', {
      close(...args) {
        try {
          return Reflect.apply(native, this, args);
        } catch (e) {
          if (isError(e) && /cannot be borrowed/.test(e.message)) {
            throw new HurrayError(
              `HURRAY_ERR_STATE: this ${what} is in use by a pending ${call}; close it after the promise settles`,
              'ERR_HURRAY_STATE',
            );
          }
          throw e;
        }
      },
    }.close);
  }

  // Per-writer queue of the asynchronous calls, so overlapping calls run one after
  // the other in call order (the native side refuses a call while one runs).
  const tails = new WeakMap();
  for (const name of ['writeTensorAsync', 'writeItemAsync', 'finishAsync']) {
    const f = FileWriter.prototype[name];
    define(FileWriter.prototype, name, {
      [name](...args) {
        const prev = tails.get(this);
        let run;
        if (prev === undefined) {
          // Nothing queued: start now (the writer is busy from this call on).
          try {
            run = Promise.resolve(Reflect.apply(f, this, args));
          } catch (e) {
            run = Promise.reject(e);
          }
        } else {
          run = prev.then(() => Reflect.apply(f, this, args));
        }
        const tail = run.then(
          () => {},
          () => {},
        );
        tails.set(this, tail);
        tail.then(() => {
          if (tails.get(this) === tail) tails.delete(this);
        });
        return run;
      },
    }[name]);
  }

  return { HurrayError, mark };
}

module.exports = { HurrayError, install };
