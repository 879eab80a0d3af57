'use strict';
// Loads the native addon: $HURRAY_NODE_ADDON if set, else hurray.node beside the
// package root (placed there by `cargo xtask node build`).

const path = require('node:path');

const file = process.env.HURRAY_NODE_ADDON || path.join(__dirname, '..', 'hurray.node');
let addon;
try {
  addon = require(file);
} catch (e) {
  const err = new Error(
    `hurray: cannot load the native addon ${file} (${e.message}); ` +
      'an installed package ships it (reinstall the package: npm install hurray); in a ' +
      'checkout of the repository, build it with `cargo xtask node build`',
  );
  err.code = 'ERR_HURRAY_ADDON';
  err.cause = e;
  throw err;
}
module.exports = addon;
const { HurrayError, mark } = require('./idioms').install(addon);
module.exports.HurrayError = HurrayError;

// --- Checks on memory lent to `Tensor.fromBuffer` / `Tensor.fromBuffers` ---------
//
// Both run here, before the native call, with getters captured when this module
// loads (called with the buffer as receiver), so user code cannot spoof them by
// redefining `resizable` on a buffer or deleting it from the prototype.
//
// 1. A resizable ArrayBuffer or growable SharedArrayBuffer is refused: its memory
//    may shrink or move under the tensor.
// 2. The lent ArrayBuffer is marked untransferable (worker_threads
//    .markAsUntransferable): a later postMessage/structuredClone transfer of it
//    copies it (Node 20) or throws (Node 21+) instead of moving its memory away
//    from the tensor, its views, encoder chunks and items (which would read freed
//    memory once the receiving side is collected). The mark is permanent.

const { markAsUntransferable } = require('node:worker_threads');

const getter = (proto, name) => {
  const d = proto && Object.getOwnPropertyDescriptor(proto, name);
  return d && typeof d.get === 'function' ? d.get : null;
};
const typedArrayProto = Object.getPrototypeOf(Uint8Array.prototype);
const taBuffer = getter(typedArrayProto, 'buffer');
const dvBuffer = getter(DataView.prototype, 'buffer');
const abByteLength = getter(ArrayBuffer.prototype, 'byteLength');
const abResizable = getter(ArrayBuffer.prototype, 'resizable');
const sabByteLength = typeof SharedArrayBuffer === 'function' ? getter(SharedArrayBuffer.prototype, 'byteLength') : null;
const sabGrowable = typeof SharedArrayBuffer === 'function' ? getter(SharedArrayBuffer.prototype, 'growable') : null;
// Whether this engine has resizable/growable buffers at all (then the getters must
// be there: a missing one means the check cannot be made, and lent memory is refused).
const abCanResize = typeof ArrayBuffer.prototype.resize === 'function' || abResizable !== null;
const sabCanGrow =
  typeof SharedArrayBuffer === 'function' &&
  (typeof SharedArrayBuffer.prototype.grow === 'function' || sabGrowable !== null);
const taTag = getter(typedArrayProto, Symbol.toStringTag);

function invalid(message) {
  return new HurrayError(`HURRAY_ERR_INVALID_ARGUMENT: ${message}`, 'ERR_HURRAY_INVALID_ARGUMENT');
}

// A bare SharedArrayBuffer (napi sees only views of one) as a byte view of it.
function viewOfShared(v) {
  if (sabByteLength === null || v === null || typeof v !== 'object') return v;
  try {
    Reflect.apply(sabByteLength, v, []);
  } catch {
    return v;
  }
  return new Uint8Array(v);
}

// The ArrayBuffer or SharedArrayBuffer under `v`, read with the original getters;
// null when `v` is none of ArrayBuffer, SharedArrayBuffer, TypedArray, DataView
// (the native call reports that).
function underlying(v) {
  if (v === null || (typeof v !== 'object' && typeof v !== 'function')) return null;
  if (taTag && Reflect.apply(taTag, v, []) !== undefined) return Reflect.apply(taBuffer, v, []);
  try {
    return Reflect.apply(dvBuffer, v, []);
  } catch {}
  return v;
}

// Throws for resizable/growable memory; marks an ArrayBuffer untransferable.
function checkLent(v) {
  const ab = underlying(v);
  if (ab === null) return;
  let isAB = false;
  try {
    Reflect.apply(abByteLength, ab, []);
    isAB = true;
  } catch {}
  if (isAB) {
    if (abCanResize && (abResizable === null || Reflect.apply(abResizable, ab, []))) {
      throw invalid(
        abResizable === null
          ? 'cannot tell whether the ArrayBuffer is resizable (ArrayBuffer.prototype.resizable is missing)'
          : 'a resizable ArrayBuffer cannot back a tensor (its memory may shrink or move); ' +
              'use a fixed-length buffer (hurray.alloc)',
      );
    }
    markAsUntransferable(ab);
    return;
  }
  let isSAB = false;
  try {
    if (sabByteLength) {
      Reflect.apply(sabByteLength, ab, []);
      isSAB = true;
    }
  } catch {}
  if (isSAB && sabCanGrow && (sabGrowable === null || Reflect.apply(sabGrowable, ab, []))) {
    throw invalid(
      sabGrowable === null
        ? 'cannot tell whether the SharedArrayBuffer is growable (SharedArrayBuffer.prototype.growable is missing)'
        : 'a growable SharedArrayBuffer cannot back a tensor (its memory may grow or move); ' +
            'use a fixed-length buffer (hurray.alloc)',
    );
  }
}

const nativeFromBuffer = addon.Tensor.fromBuffer;
const nativeFromBuffers = addon.Tensor.fromBuffers;
// The unchecked natives, for tests of the native checks behind these (lib/testing.js).
// test-support:begin (`cargo xtask dist` leaves these lines out of the npm package)
module.exports.uncheckedFromBuffer = nativeFromBuffer.bind(addon.Tensor);
// test-support:end
function fromBuffer(data, ...rest) {
  data = viewOfShared(data);
  checkLent(data);
  return mark(Reflect.apply(nativeFromBuffer, addon.Tensor, [data, ...rest]));
}
function fromBuffers(descriptor, buffers, ...rest) {
  // A copy, so what is checked is what the native call receives (an element getter
  // cannot answer differently the second time).
  if (Array.isArray(buffers)) {
    buffers = Array.from(buffers, viewOfShared);
    buffers.forEach(checkLent);
  }
  return mark(Reflect.apply(nativeFromBuffers, addon.Tensor, [descriptor, buffers, ...rest]));
}
// As napi-rs defines static methods: not writable, enumerable or configurable.
for (const [name, value] of [['fromBuffer', fromBuffer], ['fromBuffers', fromBuffers]]) {
  Object.defineProperty(addon.Tensor, name, { value, writable: false, enumerable: false, configurable: false });
}
