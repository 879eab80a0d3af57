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
      'build it with `cargo xtask node build` from the repository root',
  );
  err.code = 'HURRAY_ERR_ADDON';
  err.cause = e;
  throw err;
}
module.exports = addon;
