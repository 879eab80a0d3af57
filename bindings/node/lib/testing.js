'use strict';
// Test-only natives (leak accounting, release counters, off-thread destroy, buffer
// addresses, V8's external-memory count). Present only in an addon built with the `test-support` feature, as
// `cargo xtask node build` does; not part of the public API.

const native = require('./native');

const names = [
  'debugLiveObjects',
  'debugReleasesCalled',
  'debugReleasesDone',
  'debugDestroyOnOtherThread',
  'debugBufferAddress',
  'debugLiveMappings',
  'debugLiveDecodedBytes',
  'debugExternalMemory',
];
for (const n of names) {
  if (typeof native[n] !== 'function') {
    throw new Error(`hurray/testing: the addon lacks ${n}; build it with the test-support feature`);
  }
  module.exports[n] = native[n];
}
// The native Tensor.fromBuffer without the JS-side checks of lib/native.js (it does
// not mark the ArrayBuffer untransferable), to test the native detach checks.
module.exports.uncheckedFromBuffer = native.uncheckedFromBuffer;
